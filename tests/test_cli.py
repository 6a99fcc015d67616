"""The command line through click's CliRunner: ``validate``'s exit codes, text and JSON
output; ``run``'s options."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from policysched.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "policy" / "fixtures"
CONTRACT = [ROOT / "policies" / "delay.yaml", ROOT / "policies" / "node-name.yaml"]


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


def test_valid_policies_exit_0_with_a_summary() -> None:
    result = run("validate", *map(str, CONTRACT))
    assert result.exit_code == 0, result.output
    assert result.stdout == "2 policies valid (2 files)\n"


def test_invalid_policy_exits_1_with_headline_source_line_and_caret() -> None:
    path = FIXTURES / "cel-syntax.yaml"
    result = run("validate", str(path))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines == [
        f"{path}:8:66: syntax/unbalanced: expression: syntax error: "
        "unexpected end of expression, expected ')'",
        "      expression: \"node.labels['zone'] == 'a' && (pod.priority > 10\"",
        "  " + " " * 65 + "^",
    ]
    assert result.stderr == "1 error in 1 file\n"


def test_json_output_shape() -> None:
    path = FIXTURES / "cel-wrong-point.yaml"
    result = run("validate", "--output", "json", str(path))
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["valid"] is False
    first = document["errors"][0]
    assert {k: first[k] for k in ("path", "line", "column", "policy", "rule")} == {
        "path": str(path), "line": 9, "column": 29, "policy": "wrong-point", "rule": "uses-node",
    }
    assert first["message"].startswith("retryAfter: reference error: 'node' is not available")
    for error in document["errors"]:
        assert {"path", "line", "column", "policy", "rule", "message"} <= set(error)


def test_json_output_when_valid() -> None:
    result = run("validate", "-o", "json", *map(str, CONTRACT))
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert (document["valid"], document["errors"]) == (True, [])


def test_nonexistent_path_is_a_usage_error() -> None:
    result = run("validate", "/nonexistent/policies")
    assert result.exit_code == 2
    assert "'/nonexistent/policies' does not exist" in result.output
    assert "Traceback" not in result.output


def test_paths_are_required() -> None:
    assert run("validate").exit_code == 2


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert result.stdout == f"policysched, version {version('policysched')}\n"


def test_colour_only_when_asked_or_on_a_terminal() -> None:
    path = str(FIXTURES / "cel-type.yaml")
    assert "\x1b[" not in run("validate", path).stdout  # CliRunner is not a terminal
    assert "\x1b[" in run("validate", "--color", path).stdout
    assert "\x1b[" not in run("validate", "--no-color", path).stdout


def test_no_traceback_for_any_fixture() -> None:
    result = run("validate", str(FIXTURES))
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert result.stderr.endswith(" in 16 files, 1 warning\n")


def test_binary_and_odd_files_are_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "bin.yaml").write_bytes(b"\x00\x01\x02\xff")
    (tmp_path / "ctrl.yaml").write_text("a: \x07\n", encoding="utf-8")
    (tmp_path / "scalar.yaml").write_text("42\n", encoding="utf-8")
    result = run("validate", str(tmp_path))
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)
    assert result.stdout.count(str(tmp_path)) == 3


def test_validate_applies_the_policy_limits_of_a_configuration(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: policysched.io/v1alpha1\nkind: SchedulerConfiguration\n"
                      "policyLimits: {maxExpressionLength: 20}\n")
    delay = str(CONTRACT[0])
    assert run("validate", delay).exit_code == 0
    result = run("validate", "--config", str(config), delay)
    assert result.exit_code == 1
    assert result.stdout.startswith(
        f"{delay}:17:10: delay: match: expression too long: 26 characters, more than 20 "
        "(policyLimits.maxExpressionLength in the SchedulerConfiguration)\n")
    # an invalid configuration is reported, not used
    config.write_text("apiVersion: policysched.io/v1alpha1\nkind: SchedulerConfiguration\n"
                      "policyLimits: {maxBytes: 0}\n")
    result = run("validate", "--config", str(config), delay)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(f'{config}:3:26: field "maxBytes" must be at least 1, not 0')


def test_run_passes_the_api_client_options(monkeypatch: Any) -> None:
    import policysched.service.main as run_module

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(run_module, "configure_logging", lambda verbosity: None)
    monkeypatch.setattr(run_module, "run", lambda *args, **kwargs: calls.append(kwargs) or 0)
    assert run("run", "--no-leader-elect").exit_code == 0
    assert (calls[0]["qps"], calls[0]["burst"], calls[0]["parallel_binds"]) == (None, None, 256)
    assert run("run", "--no-leader-elect", "--kube-api-qps", "20", "--burst", "40",
               "--parallel-binds", "4").exit_code == 0
    assert (calls[1]["qps"], calls[1]["burst"], calls[1]["parallel_binds"]) == (20.0, 40, 4)
    assert run("run", "--parallel-binds", "0").exit_code == 2
    help_text = "".join(run("run", "--help").stdout.split())  # wherever lines wrap
    assert "--parallel-bindsINTEGERRANGE" in help_text and "[default:256" in help_text
    assert "else50(kube-scheduler'sdefault)" in help_text
    assert "else100(kube-scheduler'sdefault)" in help_text


def test_configmap_prints_a_watched_configmap_of_valid_policies(tmp_path: Path) -> None:
    import yaml

    result = run("configmap", str(CONTRACT[0]), str(CONTRACT[1]), "-n", "team-a")
    assert result.exit_code == 0, result.output
    document = yaml.safe_load(result.stdout)
    assert document["metadata"] == {"name": "policysched-policy-delay", "namespace": "team-a",
                                    "labels": {"policysched.io/policy": "true"}}
    assert document["data"] == {p.name: p.read_text() for p in CONTRACT}


def test_configmap_of_an_invalid_policy_prints_the_errors_and_no_manifest(
        tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONTRACT[0].read_text().replace("int(pod.annotations.delay)", "nw", 1))
    result = run("configmap", str(bad))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"{bad}:" in result.stderr and "undeclared reference to 'nw'" in result.stderr


def test_configmap_refuses_what_is_not_a_policy_file(tmp_path: Path) -> None:
    result = run("configmap", str(ROOT / "policies" / "scheduler-config.yaml"))
    assert result.exit_code == 1
    assert "holds a SchedulerConfiguration, not only SchedulingPolicy documents" in \
        result.stderr
    twin = tmp_path / "delay.yaml"
    twin.write_text(CONTRACT[0].read_text().replace("name: delay", "name: delay2", 1))
    result = run("configmap", str(CONTRACT[0]), str(twin))
    assert result.exit_code == 1 and "another file is also named delay.yaml" in result.stderr


def test_run_shadow_passes_its_options_and_takes_no_lease(monkeypatch: Any) -> None:
    import policysched.service.main as run_module

    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(run_module, "configure_logging", lambda verbosity: None)
    monkeypatch.setattr(run_module, "run",
                        lambda *args, **kwargs: calls.append((args, kwargs)) or 0)
    assert run("run", "--shadow", "--shadow-report", "r.jsonl").exit_code == 0
    args, kwargs = calls[0]
    assert args[3] is False  # leader_elect, whatever the configuration says
    options = kwargs["shadow"]
    assert (options.settings.scheduler_names, options.settings.profile,
            options.report_path) == (("default-scheduler",), None, "r.jsonl")
    assert run("run", "--shadow", "--shadow-scheduler-name", "a", "--shadow-scheduler-name",
               "b", "--shadow-profile", "p").exit_code == 0
    assert calls[1][1]["shadow"].settings.scheduler_names == ("a", "b")
    result = run("run", "--shadow-report", "r.jsonl")
    assert result.exit_code == 1
    assert "apply to --shadow: add --shadow" in result.stderr
