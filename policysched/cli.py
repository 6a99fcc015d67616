"""The ``policysched`` command line. Each command imports its module when it runs, so
that `--help` and `validate` start without loading the engine or the API client."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

import click

from .cluster.binder import DEFAULT_PARALLEL_BINDS
from .commands.tables import render_table
from .policy import render_json, render_text
from .policy.configmap_manifest import DEPLOY_NAMESPACE

if TYPE_CHECKING:
    from .commands.explain import Explanation
    from .commands.simulate import Simulation
    from .framework.profiles import Engine

EXIT_INVALID = 1
EXIT_BAD_TEST = 2  # test: a test file, or a file it refers to, is invalid


def _version() -> str:
    try:
        return version("policysched")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="policysched")
def main() -> None:
    """A Kubernetes scheduler whose plugins are SchedulingPolicy documents of CEL
    expressions."""


@main.command()
@click.argument(
    "paths", nargs=-1, required=True,
    type=click.Path(exists=True, dir_okay=True, readable=False, path_type=str),
)
@click.option(
    "--output", "-o", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text: one line per error with the source line and a caret; json: "
    '{"valid": bool, "errors": [...]}.',
)
@click.option(
    "--color/--no-color", default=None,
    help="Colour the text output (default: only when writing to a terminal).",
)
@click.option(
    "--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=str),
    help="A SchedulerConfiguration file whose policyLimits apply (default: the built-in "
    "limits); a policy none of its profiles enables is a warning.",
)
@click.option(
    "--strict", is_flag=True,
    help="Count warnings (e.g. a label read without a guard) as errors: exit 1 on any.",
)
def validate(paths: tuple[str, ...], output: str, color: bool | None,
             config_path: str | None, strict: bool) -> None:
    """Check SchedulingPolicy files: YAML, schema, and every CEL expression compiled for
    its extension point.

    PATHS are files or directories (searched recursively for *.yaml and *.yml); files may
    hold several documents and ConfigMaps whose keys hold policies. Warnings point at
    expressions that compile but can fail at run time. Exits 0 when everything is valid, 1
    when there are errors (or, with --strict, warnings).
    """
    from .commands.validate import summary
    from .commands.validate import validate as run_validate
    from .errors import UserError

    try:
        policy_set = run_validate(paths, config_path)
    except UserError as e:
        _fail(str(e))
        return
    if output == "json":
        click.echo(render_json(policy_set.diagnostics,
                               policies=[p.name for p in policy_set.policies],
                               files=list(policy_set.files)))
    elif not policy_set.diagnostics:
        click.echo(summary(policy_set))
    else:
        use_color = True if color is None else color
        click.echo(render_text(policy_set.diagnostics, color=use_color), color=color)
        click.echo(summary(policy_set), err=True)
    if not policy_set.valid or (strict and policy_set.warnings):
        click.get_current_context().exit(EXIT_INVALID)


@main.command()
@click.argument(
    "paths", nargs=-1, required=True,
    type=click.Path(exists=True, dir_okay=True, readable=False, path_type=str),
)
@click.option("--namespace", "-n", default=DEPLOY_NAMESPACE, show_default=True,
              help="The namespace the scheduler watches for policy ConfigMaps.")
@click.option("--name", default=None,
              help="The ConfigMap's name. Default: policysched-policy-<the first policy>.")
def configmap(paths: tuple[str, ...], namespace: str, name: str | None) -> None:
    """Print the ConfigMap that puts policy files live: apply it with
    `policysched configmap my-policy.yaml | kubectl apply -f -`.

    PATHS are SchedulingPolicy files or directories; each file becomes one key, kept
    verbatim (so a PolicyRejected Event's line:col is the file's), and the ConfigMap is
    labelled policysched.io/policy=true, which the deployed scheduler watches. The files
    are validated first: on an error nothing is printed on stdout and the exit code is 1.
    A policy runs where a profile enables it: in the built-in configuration, give it the
    label policysched.io/profile: policysched.
    """
    from .commands.configmap import wrap
    from .errors import UserError

    try:
        wrapped = wrap(paths, namespace, name)
    except UserError as e:
        _fail(str(e))
        return
    if wrapped.policy_set.diagnostics:
        click.echo(render_text(wrapped.policy_set.diagnostics, color=False), err=True)
    if wrapped.manifest is None:
        click.get_current_context().exit(EXIT_INVALID)
        return
    click.echo(wrapped.manifest, nl=False)


# -- offline engine commands ---------------------------------------------------------------

_cluster_option = click.option(
    "--cluster", "cluster_path", required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    help="Multi-document YAML of Nodes, Pods (with spec.nodeName: running there; without: "
    "pending), PodGroups, PriorityClasses, Namespaces, Services, ReplicationControllers, "
    "ReplicaSets and StatefulSets.")
_policies_option = click.option(
    "--policies", "policy_paths", multiple=True,
    type=click.Path(exists=True, path_type=str),
    help="Policy files or directories (repeatable), added to the configuration's "
    "policySources (without --config: the built-in library). They enable nothing by "
    "themselves: see --enable.")
_config_option = click.option(
    "--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=str),
    help="A SchedulerConfiguration file (profiles, weights, params, policySources "
    "relative to it). Default: the built-in configuration.")
_enable_option = click.option(
    "--enable", "enable", multiple=True, metavar="NAME[:WEIGHT]",
    help="Enable a policy in the configuration's first profile, with this score weight "
    "(default 1); repeatable. A policy loaded but enabled by no profile is a warning.")
_html_option = click.option(
    "--html", "html_path", type=click.Path(dir_okay=False, writable=True, path_type=str),
    help="Also write a self-contained HTML report to this file (no network needed to view "
    "it): node heat map, reasons by rule, per-zone utilisation.")
_now_option = click.option(
    "--now", type=float, default=None,
    help="Simulated start, Unix seconds. Default: the latest creationTimestamp in the file.")


def _load_engine(policy_paths: Sequence[str], config_path: str | None, seed: int,
                 enable: Sequence[str]) -> Engine:
    """The engine, its warnings (sources not read offline, policies enabled by no profile)
    printed on stderr. Raises ``UserError``."""
    from .commands.loading import load_offline

    loaded = load_offline(policy_paths, config_path, seed, enable)
    if loaded.warnings:
        click.echo(render_text(loaded.warnings, color=False), err=True)
    return loaded.engine


def _fail(message: str) -> None:
    click.echo(message, err=True)
    click.get_current_context().exit(EXIT_INVALID)


def _write_report(path: str, page: str) -> bool:
    """Write an HTML report; False (the error printed on stderr) when it cannot be."""
    from .commands import messages

    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
    except OSError as e:
        click.echo(f"{path}: {e.strerror}", err=True)
        return False
    click.echo(messages.REPORT_WROTE.format(path=path), err=True)
    return True


@main.command()
@_cluster_option
@_policies_option
@_config_option
@_enable_option
@_now_option
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="table for people; json for tools (stable).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the random choice between equally scored nodes.")
@_html_option
def simulate(cluster_path: str, policy_paths: tuple[str, ...], config_path: str | None,
             enable: tuple[str, ...], now: float | None, output: str, seed: int,
             html_path: str | None) -> None:
    """Schedule the pending pods of a cluster file offline, with a simulated clock, until
    nothing changes, and print where each pod went, when, and why not.

    JSON output: {"pods": [{"namespace", "name", "node", "boundAt", "attempts",
    "message", "nominatedNodeName", "victims", "audits"}]}; boundAt is simulated seconds
    from the start, message the last FailedScheduling text (null once bound),
    nominatedNodeName the pod's at the end (set by preemption), victims the pods its
    preemptions evicted, audits what rules in audit mode would have changed (the latest
    finding of each, per extension point). On a terminal, a long run shows a progress bar
    on stderr (not with -o json). --html also writes the report page: the pods, a heat map
    of the nodes' fill at the end, pods and fill per zone. Exits 0, or 1 on an error.
    """
    from .commands.loading import UserError, load_cluster
    from .commands.progress import SIMULATING, ProgressBar
    from .commands.simulate import simulate as run_simulation

    try:
        engine = _load_engine(policy_paths, config_path, seed, enable)
        objects, start = load_cluster(cluster_path, now)
    except UserError as e:
        _fail(str(e))
        return
    with ProgressBar(SIMULATING, enabled=output != "json") as bar:
        result = run_simulation(objects, engine.frameworks, engine.settings, start,
                                on_progress=bar.on_simulation if bar.enabled else None)
    if output == "json":
        click.echo(json.dumps({"pods": [p.as_json() for p in result.pods]}, indent=2))
    else:
        _print_simulation(result)
    if html_path is not None:
        from .commands import messages
        from .commands.html_report import simulation_page

        title = messages.REPORT_TITLE_SIMULATE.format(cluster=cluster_path)
        if not _write_report(html_path, simulation_page(result, title)):
            click.get_current_context().exit(EXIT_INVALID)


def _print_simulation(result: Simulation) -> None:
    rows: list[tuple[str, ...]] = [("POD", "NODE", "ATTEMPTS", "BOUND AT", "MESSAGE")]
    for pod in result.pods:
        rows.append((f"{pod.namespace}/{pod.name}", pod.node or "<unscheduled>",
                     str(pod.attempts), "-" if pod.bound_at is None else f"{pod.bound_at:g}s",
                     pod.message or ""))
    click.echo(render_table(rows))
    audited = [p for p in result.pods if p.audits]
    if audited:
        click.echo("\naudit findings (rules in audit mode decided nothing):")
    for pod in audited:
        for finding in pod.audits:
            click.echo(f"  {pod.namespace}/{pod.name}: {finding}")
    bound = sum(1 for p in result.pods if p.node)
    click.echo(f"\n{bound}/{len(result.pods)} pods bound in {result.end - result.start:g}s "
               "of simulated time")


@main.command()
@_cluster_option
@click.option("--pod", "pod_key", required=True, metavar="NAMESPACE/NAME",
              help="The pending pod to explain.")
@_policies_option
@_config_option
@_enable_option
@_now_option
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the random choice between equally scored nodes (as simulate).")
@click.option("--attempt", type=click.IntRange(min=1), default=None,
              help="Explain this scheduling attempt of the pod (1-based). Default: the last.")
@click.option("--node", "node_name", default=None,
              help="Show only this node, with every rule's verdict and score.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="Show this many nodes (0: all).")
@click.option("--failed-only", is_flag=True, help="Show only the nodes a filter rejects.")
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="json: every node, whatever the view options.")
@_html_option
def explain(cluster_path: str, pod_key: str, policy_paths: tuple[str, ...],
            config_path: str | None, enable: tuple[str, ...], now: float | None, seed: int,
            attempt: int | None, node_name: str | None, top: int, failed_only: bool,
            output: str, html_path: str | None) -> None:
    """Show, for one pod, why each node passed or failed the filters and how it scored,
    as the cluster was when the simulation (the same run as simulate) scheduled the pod.

    The table has one row per node, the chosen node (*) first, then by score; above it,
    what rules in audit mode would have changed ("audit: policy/rule would have ..."), and
    how many nodes each filter rule rejected and why. The audited rules decide nothing:
    they are not in the table (--node shows their verdicts apart). --html also writes the
    report page (every node, whatever the view options): a heat map of the nodes by
    verdict and score (a click shows a node's every rule), the rejections by rule, the
    best nodes, and fill per zone. Exits 0, or 1 on an error."""
    from .commands.explain import UnknownPod
    from .commands.explain import explain as run_explain
    from .commands.loading import UserError, load_cluster

    if "/" not in pod_key:
        pod_key = f"default/{pod_key}"
    try:
        engine = _load_engine(policy_paths, config_path, seed, enable)
        objects, start = load_cluster(cluster_path, now)
        result = run_explain(objects, engine.frameworks, engine.settings, start, pod_key,
                             attempt)
    except (UserError, UnknownPod) as e:
        _fail(str(e))
        return
    if output == "json":
        click.echo(json.dumps(result.as_json(), indent=2))
    else:
        _print_explanation(result, node_name, top, failed_only)
    if html_path is not None:
        from .commands import messages
        from .commands.html_report import explanation_page

        title = messages.REPORT_TITLE_EXPLAIN.format(pod=result.pod, cluster=cluster_path)
        if not _write_report(html_path, explanation_page(result, title)):
            click.get_current_context().exit(EXIT_INVALID)


def _print_explanation(result: Explanation, node_name: str | None, top: int,
                       failed_only: bool) -> None:
    moment = (f"attempt {result.attempt} of {result.attempts} at {result.at:g}s"
              if result.attempt else f"never attempted; the cluster at {result.at:g}s")
    click.echo(f"pod {result.pod} (profile {result.profile}), {moment}\n"
               f"preEnqueue: {result.pre_enqueue}\npreFilter: {result.pre_filter}")
    click.echo(f"chosen: {result.chosen}" if result.chosen else f"unschedulable: {result.message}")
    for finding in result.audits:
        click.echo(finding)
    if node_name is not None:
        _explain_node(result, node_name)
        return
    rejections = result.rejections()
    if rejections:
        click.echo("filter rejections:")
    for rule, count, reasons in rejections:
        because = "; ".join(f"{reason} ({n})" if len(reasons) > 1 else reason
                            for reason, n in reasons[:EXPLAIN_REASONS])
        if len(reasons) > EXPLAIN_REASONS:
            because += f"; {len(reasons) - EXPLAIN_REASONS} other reasons"
        click.echo(f"  rule {rule} rejected {count} node{'s' * (count != 1)}: {because}")
    nodes = [n for n in result.ordered() if not failed_only or not n.feasible]
    shown = nodes if top == 0 else nodes[:top]
    rows: list[tuple[str, ...]] = [("", "NODE", "VERDICT", "TOTAL", "RANK")]
    for node in shown:
        failure = node.failure
        rows.append(("*" if node.node == result.chosen else "", node.node,
                     "pass" if failure is None else f"{failure[0]}: {failure[1]}",
                     "-" if node.total is None else str(node.total),
                     "-" if node.rank is None else str(node.rank)))
    if shown:
        click.echo(render_table(rows))
    if len(nodes) > len(shown):
        click.echo(f"{len(nodes) - len(shown)} more nodes (--top 0 shows all; "
                   "--node NAME shows one in full)")


EXPLAIN_REASONS = 3  # reasons shown per filter rule in explain's summary


def _explain_node(result: Explanation, name: str) -> None:
    node = next((n for n in result.nodes if n.node == name), None)
    if node is None:
        _fail(f"no node {name} in the cluster at that moment")
        return
    rank = "" if node.rank is None else f", rank {node.rank}"
    click.echo(f"node {name}{' (chosen)' if name == result.chosen else ''}: "
               f"{'feasible' if node.feasible else 'rejected'}"
               f", total {'-' if node.total is None else node.total}{rank}")
    rows: list[tuple[str, ...]] = [("RULE", "POINT", "RESULT")]
    rows += [(rule, "filter", verdict) for rule, verdict in node.filters.items()]
    rows += [(rule, "score", _score_cell(score)) for rule, score in node.scores.items()]
    rows += [(rule, "filter (audit)", verdict)
             for rule, verdict in node.audit_filters.items()]
    rows += [(rule, "score (audit)", _score_cell(score))
             for rule, score in node.audit_scores.items()]
    rows += [(name, "aggregate", _aggregate_cell(values, result.aggregates.get(name, {})))
             for name, values in node.aggregates.items()]
    click.echo(render_table(rows))
    if node.scores or node.audit_scores:
        click.echo("scores are raw/normalised/weighted")


def _aggregate_cell(on_node: Mapping[str, int], pod: Mapping[str, Any]) -> str:
    return (f"{on_node['count']} in the node's domain, {on_node['onNode']} on the node "
            f"(minimum {pod.get('minimum')}, {pod.get('domains')} domains, "
            f"total {pod.get('total')})")


def _score_cell(score: tuple[float, float, int]) -> str:
    raw, normalised, weighted = score
    return f"{raw:g}/{normalised:g}/{weighted}"


@main.command(name="test")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=str))
@click.option("--output", "-o", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: per file and case, its status and failures "
              "(stable).")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=str),
              help="Also write a JUnit XML report to this file.")
@click.option("-k", "select", metavar="TEXT",
              help="Run only the cases whose name contains TEXT.")
def run_tests(paths: tuple[str, ...], output: str, junit_path: str | None,
              select: str | None) -> None:
    """Run PolicyTest files (docs/testing.md): a cluster, policies and the expected
    placement and message of each pod. PATHS are files or directories (searched
    recursively for *.yaml and *.yml; documents of other kinds are skipped).

    Exits 0 when every case passes, 1 when an expectation fails, 2 when a test file (or a
    file it refers to) is invalid. On a terminal, a long run shows a progress bar by file
    on stderr (not with -o json) and prints its report when it ends."""
    from .commands.policy_tests import Status, find_test_files, run_file
    from .commands.progress import TESTING, ProgressBar
    from .commands.test_reports import FileReport, as_json, as_junit, summary, text_lines

    files = list(find_test_files(list(paths)))
    reports: list[FileReport] = []
    with ProgressBar(TESTING, enabled=output != "json") as bar:
        for done, path in enumerate(files):
            bar.update(done, len(files), str(path))
            cases = run_file(path, select)
            if cases:  # files of other documents (clusters, policies) are not reported
                reports.append(FileReport(str(path), cases))
            if not bar.enabled and output == "text":  # a live bar would overwrite lines
                for line in text_lines(cases):
                    click.echo(line)
    results = [r for report in reports for r in report.cases]
    if not results:
        click.echo(NO_TEST_CASE + (f" whose name contains {select!r}" if select else ""),
                   err=True)
        click.get_current_context().exit(EXIT_BAD_TEST)
    if output == "json":
        click.echo(as_json(reports))
    else:
        if bar.enabled:
            for line in text_lines(results):
                click.echo(line)
        click.echo(f"\n{summary(results)}")
    if junit_path is not None:
        try:
            with open(junit_path, "wb") as f:
                f.write(as_junit(reports))
        except OSError as e:
            click.echo(f"{junit_path}: {e.strerror}", err=True)
            click.get_current_context().exit(EXIT_BAD_TEST)
    statuses = {r.status for r in results}
    if Status.ERROR in statuses:
        click.get_current_context().exit(EXIT_BAD_TEST)
    if Status.FAILED in statuses:
        click.get_current_context().exit(EXIT_INVALID)


NO_TEST_CASE = "no test case found"


EXIT_DIFFERENT = 1  # diff: the two sides differ
EXIT_DIFF_ERROR = 2  # diff: bad input


@main.command(name="diff")
@_cluster_option
@click.option(
    "--policies", "policy_paths", multiple=True, type=click.Path(exists=True, path_type=str),
    help="The policies of side A, then of side B: each a file or directory added to its "
    "side's configuration's policySources, as simulate's --policies. Given once: side A "
    "without them, side B with them (with --config twice: both sides with them).")
@click.option(
    "--config", "config_paths", multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    help="The SchedulerConfiguration of side A, then of side B; given once, both sides "
    "use it. Default: the built-in configuration.")
@_enable_option
@_now_option
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the random choice between equally scored nodes (both sides).")
@click.option("--output", "-o", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="text for people; json for tools (stable).")
@_html_option
def diff_command(cluster_path: str, policy_paths: tuple[str, ...],
                 config_paths: tuple[str, ...], enable: tuple[str, ...], now: float | None,
                 seed: int, output: str, html_path: str | None) -> None:
    """Simulate a cluster file with two policy sets (or two configurations) and report
    what differs: pending pods placed on other nodes, pods unschedulable on one side only
    (with that side's FailedScheduling message, as simulate prints it), pods unschedulable
    on both for other reasons, pods evicted by one side's preemptions only; and, for each
    side, the cluster at the end: cpu and memory fill of the nodes (min, p50, p90, max) and
    pods per zone (topology.kubernetes.io/zone) with their spread.

    Side A is the first --policies / --config, side B the second; a single --policies
    compares the configuration without it (A) and with it (B); --enable, --now and --seed
    apply to both. Exits 0 when the sides are identical, 1 when they differ, 2 on
    an error (like diff(1)). JSON output: {"sides": {"a", "b"}, "identical",
    "placedDifferently", "unschedulableOnlyA", "unschedulableOnlyB", "otherReasons",
    "evictedOnlyA", "evictedOnlyB", "utilisation": {"a", "b"}}. On a terminal, long runs
    show a progress bar per side on stderr (not with -o json). --html also writes the
    report page: both sides, the differences, and a heat map of each side's nodes (fill
    at the end) with pods and fill per zone; a report that cannot be written exits 2.
    """
    from .commands.diff import compare, render_text
    from .commands.loading import UserError, load_cluster
    from .commands.progress import SIMULATING, ProgressBar

    context = click.get_current_context()
    try:
        sides = _diff_sides(policy_paths, config_paths)
        engines = [_load_engine(p, c, seed, enable) for p, c in sides]
        objects, start = load_cluster(cluster_path, now)
    except UserError as e:
        click.echo(str(e), err=True)
        context.exit(EXIT_DIFF_ERROR)
        return
    bars: list[ProgressBar] = []

    def progress(side: str) -> Any:  # one bar per side, the previous one gone
        for bar in bars:
            bar.close()
        bars.append(ProgressBar(f"{SIMULATING} {side.upper()}", enabled=output != "json"))
        return bars[-1].on_simulation if bars[-1].enabled else None

    try:
        result = compare(objects, engines[0], engines[1], start, progress)
    finally:
        for bar in bars:
            bar.close()
    labels = [_side_label(p, c) for p, c in sides]
    if output == "json":
        report = {"sides": {"a": labels[0], "b": labels[1]}, **result.as_json()}
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(render_text(result, labels[0], labels[1]))
    if html_path is not None:
        from .commands import messages
        from .commands.html_report import comparison_page

        title = messages.REPORT_TITLE_DIFF.format(cluster=cluster_path)
        if not _write_report(html_path, comparison_page(result, labels[0], labels[1], title)):
            context.exit(EXIT_DIFF_ERROR)
    context.exit(0 if result.identical else EXIT_DIFFERENT)


def _diff_sides(policy_paths: Sequence[str], config_paths: Sequence[str]
                ) -> list[tuple[tuple[str, ...], str | None]]:
    """Each side's (policies, configuration). Raises ``UserError``."""
    from .commands import messages
    from .errors import UserError

    for option, given in (("policies", policy_paths), ("config", config_paths)):
        if len(given) > 2:
            raise UserError(messages.DIFF_TOO_MANY.format(option=option, count=len(given)))
    if not policy_paths and len(config_paths) != 2:
        raise UserError(messages.DIFF_NEEDS_TWO)
    configs = list(config_paths) if len(config_paths) == 2 else [
        config_paths[0] if config_paths else None] * 2
    if len(policy_paths) == 2:
        policies: list[tuple[str, ...]] = [(policy_paths[0],), (policy_paths[1],)]
    elif len(config_paths) == 2:  # the same policies on both sides
        policies = [tuple(policy_paths)] * 2
    else:  # what adding them changes
        policies = [(), tuple(policy_paths)]
    return list(zip(policies, configs, strict=True))


def _side_label(policies: Sequence[str], config: str | None) -> str:
    parts = ([f"--config {config}"] if config else []) + [f"--policies {p}" for p in policies]
    return " ".join(parts) or "the built-in configuration"


@main.command()
@click.option("--kubeconfig", type=click.Path(exists=True, dir_okay=False, path_type=str),
              help="Kubeconfig file. Default: the in-cluster configuration, else $KUBECONFIG "
              "(as run).")
@click.option("--context", "kube_context", default=None, metavar="NAME",
              help="The kubeconfig context to use. Default: its current context.")
@click.option("--output", "-o", "output_path", default="-", show_default=True,
              type=click.Path(dir_okay=False, writable=True, allow_dash=True, path_type=str),
              help="The cluster file to write (-: stdout).")
@click.option("--anonymise", "--anonymize", "anonymise", is_flag=True,
              help="Replace names, namespaces, label keys and values (and images) by "
              "tokens, consistently, so that the cluster schedules as the original: "
              "selectors, affinity terms, spread constraints, taints and tolerations are "
              "rewritten with the same mapping. Keys of Kubernetes' own domains "
              "(kubernetes.io/hostname, topology.kubernetes.io/zone...) keep their names, "
              "not their values; annotations are dropped, but for those of kept keys.")
@click.option("--keep-key", "keep_keys", multiple=True, metavar="KEY",
              help="With --anonymise: keep this label or annotation key's name (one your "
              "policies read, e.g. delay); repeatable.")
@click.option("--page-size", type=click.IntRange(min=1), default=500,  # kube.LIST_PAGE_SIZE
              show_default=True,
              help="Objects per list request (limit/continue).")
def snapshot(kubeconfig: str | None, kube_context: str | None, output_path: str,
             anonymise: bool, keep_keys: tuple[str, ...], page_size: int) -> None:
    """Write a live cluster as a cluster file that simulate, explain, diff and policy
    tests read: Nodes, Pods (bound and pending), Namespaces, PriorityClasses, PodGroups
    (when the CRD is installed), PodDisruptionBudgets, and the Services,
    ReplicationControllers, ReplicaSets and StatefulSets that spreading reads — only the
    fields scheduling reads, sorted by kind, namespace and name.

    Progress goes to stderr. Exits 0 when the file is written, 1 on an error (the cluster
    cannot be reached or listed, the file cannot be written)."""
    from .cluster.snapshot import ListProgress
    from .commands import messages
    from .commands.snapshot import take_snapshot
    from .errors import UserError

    def progress(step: ListProgress) -> None:
        if step.done:
            click.echo(messages.SNAPSHOT_LISTED.format(kind=step.kind, count=step.count),
                       err=True)
        else:  # a page, more to come
            click.echo(messages.SNAPSHOT_LISTING.format(kind=step.kind, count=step.count),
                       err=True)

    try:
        written = take_snapshot(kubeconfig, kube_context, anonymise=anonymise,
                                keep_keys=keep_keys, page_size=page_size,
                                on_progress=progress)
    except UserError as e:
        _fail(str(e))
        return
    try:
        with click.open_file(output_path, "w", encoding="utf-8") as f:
            f.write(written.text)
    except OSError as e:
        _fail(f"{output_path}: {e.strerror}")
        return
    click.echo(messages.SNAPSHOT_WROTE.format(
        path="stdout" if output_path == "-" else output_path, nodes=written.counts.get("Node", 0),
        pods=written.counts.get("Pod", 0), pending=written.pending), err=True)


# -- the scheduler on a real cluster ---------------------------------------------------------


@main.command(name="run")
@click.option("--kubeconfig", type=click.Path(exists=True, dir_okay=False, path_type=str),
              help="Kubeconfig file. Default: the in-cluster configuration, else $KUBECONFIG.")
@_config_option
@_policies_option
@click.option("--leader-elect/--no-leader-elect", "leader_elect", default=None,
              help="Elect a leader on a Lease (only the leader schedules). Default: the "
              "configuration's leaderElection.leaderElect, else off.")
@click.option("-v", "--v", "verbosity", type=click.IntRange(min=0), default=0,
              show_default=True,
              help="Log verbosity: 0 lifecycle, warnings and errors (a rule's error on a pod "
              "included; each pod's outcome is in its Events, as with kube-scheduler); "
              "1-3 also each binding and unschedulable attempt, and engine debug; 4+ also "
              "every HTTP request.")
@click.option("--qps", "--kube-api-qps", "qps", type=float, default=None,
              help="Client-side rate limit of API requests per second, shared by watches, "
              "binds and status patches (0: unlimited). Default: the configuration's "
              "clientConnection.qps, else 50 (kube-scheduler's default).")
@click.option("--burst", "--kube-api-burst", "burst", type=click.IntRange(min=1),
              default=None, help="Requests allowed above --qps in a burst. Default: the "
              "configuration's clientConnection.burst, else 100 (kube-scheduler's default).")
@click.option("--parallel-binds", type=click.IntRange(min=1), default=DEFAULT_PARALLEL_BINDS,
              show_default=True, help="Binds in flight at once. Binding runs beside "
              "scheduling, as kube-scheduler's binding goroutines (their requests "
              "multiplexed on one connection); when this many are in flight, scheduling "
              "waits for one to end.")
@click.option("--namespace", default=None,
              help="Only schedule pods of this namespace (nodes are always cluster-wide).")
@click.option("--shadow", is_flag=True,
              help="Shadow mode: bind nothing and write nothing to the cluster; judge the "
              "pods another scheduler binds (see --shadow-scheduler-name) against what this "
              "policy set would have decided, on /shadow, in "
              "policysched_shadow_decisions_total and in --shadow-report. No leader "
              "election (a shadow takes no Lease).")
@click.option("--shadow-scheduler-name", "shadow_names", multiple=True, metavar="NAME",
              help="With --shadow: judge the pods whose spec.schedulerName is NAME "
              "(repeatable). Default: default-scheduler (kube-scheduler's).")
@click.option("--shadow-profile", default=None, metavar="NAME",
              help="With --shadow: the profile (schedulerName of the configuration) that "
              "decides the judged pods. Default: the configuration's first profile.")
@click.option("--shadow-report", type=click.Path(dir_okay=False, path_type=str),
              default=None, metavar="PATH",
              help="With --shadow: append one JSON line per judged pod to PATH.")
def run_scheduler(kubeconfig: str | None, config_path: str | None,
                  policy_paths: tuple[str, ...], leader_elect: bool | None, verbosity: int,
                  qps: float | None, burst: int | None, parallel_binds: int,
                  namespace: str | None, shadow: bool, shadow_names: tuple[str, ...],
                  shadow_profile: str | None, shadow_report: str | None) -> None:
    """Schedule a cluster's pods whose spec.schedulerName is one of the profiles (with no
    --config: the built-in configuration, profile "policysched"), until SIGTERM/SIGINT.
    With --shadow, judge another scheduler's decisions instead (docs/shadow.md)."""
    from .commands import messages
    from .errors import UserError
    from .framework.shadow import shadow_settings
    from .service.main import configure_logging, leader_elect_default, run
    from .service.shadow import ShadowOptions

    configure_logging(verbosity)
    try:
        options = None
        if shadow:
            options = ShadowOptions(shadow_settings(shadow_names, shadow_profile),
                                    shadow_report)
            leader_elect = bool(leader_elect)  # not the configuration's: a shadow leads alone
        elif shadow_names or shadow_profile or shadow_report:
            raise UserError(messages.SHADOW_OPTIONS_ALONE)
        if leader_elect is None:
            leader_elect = leader_elect_default(config_path)
        code = run(kubeconfig, config_path, policy_paths, leader_elect, qps=qps, burst=burst,
                   parallel_binds=parallel_binds, namespace=namespace, shadow=options)
    except UserError as e:
        _fail(str(e))
        return
    click.get_current_context().exit(code)
