"""The fault suite (issue 9, item 5): faults injected while the scheduler binds a burst of
pods on the real control plane, and the invariants checked after each one.

One private cluster (``cluster.sh up --nodes 20``) and ``policysched run`` as deployed: its
ServiceAccount, leader election (a 4 s Lease, so that a dead leader is replaced quickly),
policies from the ConfigMaps of deploy/, plus the policy ``fault-poison`` (harmless until
fault d). The faults, one test each, in this order:

a. ``kill -9`` of the scheduler mid-burst, three times, each time restarted;
b. two replicas, the leader killed mid-burst: the standby takes over;
c. kube-apiserver restarted mid-burst (``cluster.sh restart-apiserver``), with SIGTERM then
   SIGKILL; the scheduler logs a warning per change of a client's state (connection lost,
   then Forbidden or 503 while the new server starts), none per retry, request or pod;
d. a poison policy hot-reloaded: a score rule whose value is NaN or ±Inf, a filter rule that
   fails, each only for pods of one label; then mended;
e. poison nodes added: allocatable memory 8Ei (2^63 bytes, one past int64), odd labels and
   taints, no status at all.

After each fault, over every pod and node of the cluster (``Census``):

* every pod that fits is bound (each burst is waited for, with a bounded timeout);
* no node is over-committed: the requests of its pods ≤ its allocatable, per resource
  (exact arithmetic, whatever the quantities);
* no pod is bound twice: its Scheduled Events (at most one) name the node it is bound to; a
  bound pod's PodScheduled condition is True (no failure written after the binding); no bind
  was refused because the pod was already bound (counted; only an API server that dies
  between committing a binding and answering can cause one);
* no pod is lost: every pod of the scheduler is bound or has PodScheduled=False saying why;
* the scheduler logged no traceback, and scheduling went on for the pods no fault touched
  (d, e: the unaffected burst's time is printed beside an undisturbed burst's).
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from policysched.cluster import kube_messages as km

from . import support
from .conftest import figure

pytestmark = pytest.mark.e2e

NODES = 20
BURST = 200  # pods of one burst: 10m cpu and 16Mi each, so that every one fits
KILL_ROUNDS = 3
FAULT_AT = 0.25  # a fault strikes once this share of the burst is bound
BIND_TIMEOUT = 90.0  # seconds for a burst to be bound once its fault is over
EXPLAIN_TIMEOUT = 30.0  # seconds for a poisoned pod to get its PodScheduled=False
QPS = 500  # the scheduler's client rate (kube-scheduler's default 50 would pace the suite)
LEASE = {"leaseDurationSeconds": 4, "renewDeadlineSeconds": 3, "retryPeriodSeconds": 1}
CREATE_WORKERS = 8
# per API server restart, one per change of state: connection lost, then 403, 503, 404 while
# the new server starts (authorizer, storage, CRDs not ready), and some slack
MAX_WARNINGS_PER_CLIENT = 5

POISON_POLICY = "fault-poison"
POISON_CONFIGMAP = "policysched-policy-fault-poison"
POISON_LABEL = "policysched.io/poison"
POISON_FILTER_RULE = "poison-filter"
POISON_SCORE_RULE = "poison-score"
POISON_VALUES = {"NaN": POISON_SCORE_RULE, "Inf": POISON_SCORE_RULE,
                 "minus-Inf": POISON_SCORE_RULE, "error": POISON_FILTER_RULE}  # label → rule
POISON_PODS_PER_VALUE = 5
HARMLESS = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: fault-poison
spec:
  filter:
  - name: poison-filter
    expression: "true"
  score:
  - name: poison-score
    expression: "1.0"
    normalize: max
"""
# The label's value is read at run time: nothing here can be folded or rejected at load.
POISONED = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: fault-poison
spec:
  filter:
  - name: poison-filter
    expression: >-
      pod.labels[?'policysched.io/poison'].orValue('') != 'error' ||
      int(pod.labels['policysched.io/poison']) > 0
  score:
  - name: poison-score
    expression: >-
      cel.bind(value, pod.labels[?'policysched.io/poison'].orValue(''),
        value in ['NaN', 'Inf'] ? double(value) :
        value == 'minus-Inf' ? -double(value.substring(6)) : 1.0)
    normalize: max
"""

LOG_LEVEL = re.compile(r"^\S+ \S+ ([DIWEC]) ")  # run.configure_logging's klog-like lines
CONNECTION_LINE = re.compile(  # cluster/connection.py's warnings: "<client>: <state>: <why>"
    r"\] (.+?): (" + "|".join(re.escape(t.removeprefix("%s: ").split(": %s")[0]) for t in (
        km.LOG_CONNECTION_LOST, km.LOG_REQUESTS_FAILING)) + "): ")
SCHEDULED_NOTE = re.compile(r"^Successfully assigned (\S+)/(\S+) to (\S+)$")
ALREADY_ASSIGNED = "already assigned"  # the API server's refusal of a second binding


# ------------------------------------------------------------------------------ census


def _quantity(value: Any) -> Decimal:
    from kubernetes.utils import parse_quantity

    return Decimal(parse_quantity(str(value)))


def pod_requests(pod: Any) -> dict[str, Decimal]:
    """The pod's effective requests (kube's: containers summed, the largest init container
    if larger, plus overhead) for cpu and memory, and 1 pod."""
    def of(containers: Any) -> list[dict[str, Decimal]]:
        return [{r: _quantity(v) for r, v in ((c.resources and c.resources.requests) or {}
                                             ).items()} for c in containers or []]

    total: defaultdict[str, Decimal] = defaultdict(Decimal)
    for requests in of(pod.spec.containers):
        for resource, value in requests.items():
            total[resource] += value
    for requests in of(pod.spec.init_containers):
        for resource, value in requests.items():
            total[resource] = max(total[resource], value)
    for resource, value in (pod.spec.overhead or {}).items():
        total[resource] += _quantity(value)
    return {"cpu": total["cpu"], "memory": total["memory"], "pods": Decimal(1)}


@dataclass
class Census:
    """The invariants over the whole cluster at one moment (see the module docstring)."""

    pods: int = 0  # pods of our scheduler
    bound: int = 0
    explained: dict[str, str] = field(default_factory=dict)  # pending pod → its condition
    lost: list[str] = field(default_factory=list)  # pending with no reason given
    overcommitted: list[str] = field(default_factory=list)
    failed_after_bind: list[str] = field(default_factory=list)  # bound, PodScheduled≠True
    misreported: list[str] = field(default_factory=list)  # Scheduled on another node
    scheduled_twice: list[str] = field(default_factory=list)
    refused_rebinds: int = 0  # FailedScheduling: the pod was already assigned

    def broken(self, *, rebinds_allowed: bool = False) -> list[str]:
        """Every invariant that does not hold, as text (empty: all hold)."""
        problems = [f"{what}: {items[:10]}" for what, items in (
            ("pods lost (pending, no reason given)", self.lost),
            ("nodes over-committed", self.overcommitted),
            ("bound pods whose PodScheduled is not True", self.failed_after_bind),
            ("Scheduled events naming another node", self.misreported),
            ("pods with more than one Scheduled event", self.scheduled_twice)) if items]
        if self.refused_rebinds and not rebinds_allowed:
            problems.append(f"{self.refused_rebinds} binds refused: pod already assigned")
        return problems


def take_census(api: Any, namespaces: list[str]) -> Census:
    """Every pod and node of the cluster; the events of ``namespaces``."""
    from kubernetes import client

    core: Any = client.CoreV1Api(api)
    events: Any = client.EventsV1Api(api)
    census = Census()
    used: defaultdict[str, defaultdict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    pods = core.list_pod_for_all_namespaces().items
    by_uid = {p.metadata.uid: p for p in pods}
    for pod in pods:
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        ours = pod.spec.scheduler_name == support.SCHEDULER_NAME
        condition = support.scheduled_condition(pod)
        if pod.spec.node_name:
            if (pod.status.phase or "") not in ("Succeeded", "Failed"):
                for resource, value in pod_requests(pod).items():
                    used[pod.spec.node_name][resource] += value
            if ours:
                census.bound += 1
                if condition is None or condition.status != "True":
                    census.failed_after_bind.append(
                        key if condition is None else f"{key} ({condition.reason}: "
                        f"{condition.message}, at {condition.last_transition_time})")
        elif ours:
            if (condition is not None and condition.status == "False"
                    and condition.message):
                census.explained[key] = condition.message
            else:
                census.lost.append(key)
        census.pods += ours
    for node in core.list_node().items:
        allocatable = (node.status and node.status.allocatable) or {}
        for resource, value in sorted(used.get(node.metadata.name, {}).items()):
            limit = _quantity(allocatable[resource]) if resource in allocatable else Decimal(0)
            if value > limit:
                census.overcommitted.append(f"{node.metadata.name}: {resource} {value} > "
                                            f"{limit}")
    scheduled: Counter[str] = Counter()
    for namespace in namespaces:
        for event in events.list_namespaced_event(namespace).items:
            count = 1 if event.series is None else int(event.series.count)
            pod = by_uid.get(event.regarding.uid)
            if event.reason == "Scheduled":
                scheduled[event.regarding.uid] += count
                match = SCHEDULED_NOTE.match(event.note or "")
                if pod is not None and (match is None or match.group(3) != pod.spec.node_name):
                    census.misreported.append(f"{namespace}/{event.regarding.name}: "
                                              f"{event.note!r}, bound to {pod.spec.node_name}")
            elif event.reason == "FailedScheduling" and ALREADY_ASSIGNED in (event.note or ""):
                census.refused_rebinds += count
    census.scheduled_twice = [f"{by_uid[uid].metadata.namespace}/{by_uid[uid].metadata.name}"
                              for uid, n in scheduled.items() if n > 1 and uid in by_uid]
    return census


# ------------------------------------------------------------------------------ the harness


def _create_pods(core: Any, namespace: str, bodies: list[dict[str, Any]],
                 stop: threading.Event) -> int:
    """Create the pods, ``CREATE_WORKERS`` at a time, retrying each through API outages
    until ``stop`` is set; returns how many exist. An invalid pod raises ``ApiException``."""
    from kubernetes.client.exceptions import ApiException

    def create(body: dict[str, Any]) -> bool:
        while not stop.is_set():
            try:
                core.create_namespaced_pod(namespace, body, _request_timeout=10)
                return True
            except ApiException as e:
                if e.status == 409:  # created by an attempt whose answer was lost
                    return True
                if e.status in (400, 422):  # invalid: retrying cannot help
                    raise
            except Exception:  # the API server is away
                pass
            stop.wait(0.2)
        return False

    with ThreadPoolExecutor(CREATE_WORKERS) as pool:
        return sum(pool.map(create, bodies))


class Burst:
    """Pods created by a background thread while a ``PodTracker`` follows the namespace."""

    def __init__(self, api: Any, namespace: str, bodies: list[dict[str, Any]]) -> None:
        from kubernetes import client

        self.core: Any = client.CoreV1Api(api)
        self.namespace = namespace
        self.bodies = bodies
        self.names = {b["metadata"]["name"] for b in bodies}
        self.tracker = support.PodTracker(api, namespace)
        self.created = 0
        self.error: Exception | None = None  # why creating the pods failed
        self.started = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._create, daemon=True)

    def _create(self) -> None:
        try:
            self.created = _create_pods(self.core, self.namespace, self.bodies, self._stop)
        except Exception as e:
            self.error = e
            self.tracker.wake()

    def __enter__(self) -> Burst:
        self.tracker.__enter__()
        self.started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:  # a failure: stop creating
            self._stop.set()
        self._thread.join(BIND_TIMEOUT)
        self._stop.set()
        self.tracker.__exit__()

    def bound(self, pods: Mapping[str, Any], names: set[str] | None = None) -> int:
        wanted = self.names if names is None else names
        return sum(1 for n in wanted if n in pods and pods[n].spec.node_name)

    def wait_bound(self, share: float, timeout: float = BIND_TIMEOUT,
                   names: set[str] | None = None) -> float:
        """Until ``share`` of ``names`` (default: every pod of the burst) are bound; the
        seconds since the burst began."""
        wanted = self.names if names is None else names
        need = max(1, int(share * len(wanted)))

        def done(pods: Mapping[str, Any]) -> bool:
            if self.error is not None:
                raise AssertionError(f"creating the pods failed: {self.error}")
            return self.bound(pods, wanted) >= need

        try:
            self.tracker.wait_until(done, timeout, f"{need} of {len(wanted)} pods bound")
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.summary()}") from None
        return time.monotonic() - self.started

    def summary(self) -> str:
        """How many pods exist and are bound; the pending pods' distinct reasons."""
        pods = dict(self.tracker.pods)
        reasons = Counter((c.message or "")[:400] for p in pods.values()
                          if not p.spec.node_name and (c := support.scheduled_condition(p)))
        return (f"{len(pods)} of {len(self.names)} pods exist, {self.bound(pods)} bound; "
                f"the pending pods' PodScheduled messages: {reasons.most_common(3)}")

    def all_bound(self, timeout: float = BIND_TIMEOUT) -> float:
        return self.wait_bound(1.0, timeout)


@dataclass
class Faults:
    """The module's cluster, its scheduler process(es) and the running totals."""

    cluster: support.Cluster
    kubeconfig: Path  # the ServiceAccount's
    scheduler: support.SchedulerProcess | None = None
    processes: list[support.SchedulerProcess] = field(default_factory=list)
    log_marks: dict[str, int] = field(default_factory=dict)
    namespaces: list[str] = field(default_factory=list)
    totals: Counter[str] = field(default_factory=Counter)
    baseline: float | None = None  # seconds for an undisturbed burst of BURST pods
    refused_before: int = 0  # refused rebinds the census counted at the last check

    @property
    def api(self) -> Any:
        return self.cluster.api

    def start_scheduler(self, name: str | None = None,
                        lead: bool = True) -> support.SchedulerProcess:
        """A new ``policysched run``; waits until it leads and is ready (``lead``), else
        until it is healthy."""
        name = name or f"policysched-{len(self.processes)}"
        port = support.free_port()
        config = support.render_config(self.cluster.dir / f"{name}.yaml", port=port)
        configuration = yaml.safe_load(config.read_text())
        configuration["leaderElection"].update(LEASE)
        for profile in configuration["profiles"]:
            if profile["schedulerName"] == support.SCHEDULER_NAME:
                profile["policies"]["enabled"].append({"name": POISON_POLICY})
        config.write_text(yaml.safe_dump(configuration, sort_keys=False))
        process = support.SchedulerProcess(
            name, self.cluster.dir, self.kubeconfig, config, port,
            extra_args=("--qps", str(QPS), "--burst", str(QPS))).start()
        self.processes.append(process)
        if lead:
            process.wait_ready()
            self.scheduler = process
        else:
            process.wait_healthy()
        return process

    def leader(self) -> support.SchedulerProcess:
        if self.scheduler is None or not self.scheduler.running:
            self.start_scheduler()
        assert self.scheduler is not None
        return self.scheduler

    def namespace(self, name: str) -> str:
        from kubernetes import client

        core: Any = client.CoreV1Api(self.api)
        namespace = support.unique(f"faults-{name}")
        core.create_namespace({"metadata": {"name": namespace}})
        self.namespaces.append(namespace)
        return namespace

    def burst(self, namespace: str, count: int = BURST, prefix: str = "p",
              labels: Callable[[int], Mapping[str, str] | None] = lambda i: None) -> Burst:
        bodies = [support.pod(f"{prefix}-{i}", cpu="10m", memory="16Mi", labels=labels(i))
                  for i in range(count)]
        self.totals["pods created"] += count
        return Burst(self.api, namespace, bodies)

    def lease_holder(self) -> str | None:
        from kubernetes import client

        lease = client.CoordinationV1Api(self.api).read_namespaced_lease(
            support.LEASE_NAME, support.SYSTEM_NAMESPACE)
        return (lease.spec.holder_identity if lease.spec is not None else None) or None

    def mark_logs(self) -> None:
        self.log_marks = {p.name: len(p.log_text()) for p in self.processes}

    def new_log(self, process: support.SchedulerProcess) -> str:
        return process.log_text()[self.log_marks.get(process.name, 0):]

    def check(self, fault: str, *, rebinds_allowed: bool = False) -> Census:
        """The census after a fault: every invariant holds, no scheduler logged a
        traceback since ``mark_logs``; the totals and a figure are recorded. The events of
        every namespace so far are read again, so refused rebinds count only the new ones:
        one an earlier fault was allowed must not fail this one."""
        census = take_census(self.api, self.namespaces)
        census.refused_rebinds, self.refused_before = (
            census.refused_rebinds - self.refused_before, census.refused_rebinds)
        tracebacks = [f"{p.name}: {self.new_log(p)[:3000]}" for p in self.processes
                      if "Traceback (most recent call last)" in self.new_log(p)]
        self.totals.update({"faults": 1, "lost": len(census.lost),
                            "over-committed": len(census.overcommitted),
                            "scheduled twice": len(census.scheduled_twice),
                            "refused rebinds": census.refused_rebinds})
        figure(f"faults: {fault}", f"{census.pods} pods of the scheduler in the cluster, "
               f"{census.bound} bound, {len(census.explained)} pending with a reason, "
               f"lost {len(census.lost)}, over-committed nodes {len(census.overcommitted)}, "
               f"scheduled twice {len(census.scheduled_twice)}, binds refused as already "
               f"assigned {census.refused_rebinds}")
        problems = census.broken(rebinds_allowed=rebinds_allowed)
        assert not problems, f"after {fault}:\n" + "\n".join(problems)
        assert not tracebacks, "a scheduler logged a traceback:\n" + "\n".join(tracebacks)
        return census

    def clean(self, namespace: str) -> None:
        """Delete the namespace's pods at once, so the next fault starts on empty nodes."""
        from kubernetes import client

        core: Any = client.CoreV1Api(self.api)
        with contextlib.suppress(Exception):
            core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)

    def cluster_sh(self, *args: str, timeout: float = 180) -> str:
        done = subprocess.run([str(support.CLUSTER_SH), *args],
                              env=support.script_env(self.cluster.dir), capture_output=True,
                              text=True, timeout=timeout, check=False)
        assert done.returncode == 0, f"cluster.sh {' '.join(args)}: {done.stderr[-3000:]}"
        return done.stderr


def _configmap(text: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": POISON_CONFIGMAP, "namespace": support.SYSTEM_NAMESPACE,
                         "labels": {"policysched.io/policy": "true"}},
            "data": {f"{POISON_POLICY}.yaml": text}}


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Faults]:
    started = time.monotonic()
    cluster_dir = tmp_path_factory.mktemp("faults-cluster", numbered=True)
    cluster, failures = support.start_private_cluster(cluster_dir, NODES)
    if cluster is None:
        pytest.fail("\n\n".join(failures), pytrace=False)
    figure(f"faults: cluster up ({NODES} nodes)", f"{cluster.up_seconds:.1f} s")
    harness = Faults(cluster, Path())
    try:
        support.install(cluster)
        support.apply(cluster.api, [_configmap(HARMLESS)])
        harness.kubeconfig = support.service_account_kubeconfig(cluster)
        harness.start_scheduler()
        yield harness
    finally:
        for process in harness.processes:
            process.stop()
        cluster.api.close()
        support.stop_cluster(cluster_dir)
        totals = harness.totals
        figure("faults: totals", f"{totals['faults']} checks after faults, "
               f"{totals['pods created']} pods created, lost {totals['lost']}, "
               f"over-committed {totals['over-committed']}, scheduled twice "
               f"{totals['scheduled twice']}, binds refused as already assigned "
               f"{totals['refused rebinds']}; {time.monotonic() - started:.0f} s with the "
               "cluster")


@pytest.fixture
def fault(faults: Faults) -> Iterator[Faults]:
    """Each test starts with a leading scheduler and marks the logs it checks."""
    faults.leader()
    faults.mark_logs()
    yield faults


# ------------------------------------------------------------------------------ the faults


def test_undisturbed_burst(fault: Faults) -> None:
    """The reference for 'normal speed': a burst with no fault."""
    namespace = fault.namespace("baseline")
    with fault.burst(namespace) as burst:
        fault.baseline = burst.all_bound()
    figure(f"faults: an undisturbed burst of {BURST} pods, all bound",
           f"{fault.baseline:.1f} s")
    fault.check("no fault")
    fault.clean(namespace)


def test_kill_9_mid_burst(fault: Faults) -> None:
    for round in range(KILL_ROUNDS):
        namespace = fault.namespace(f"kill-{round}")
        victim = fault.leader()
        with fault.burst(namespace) as burst:
            burst.wait_bound(FAULT_AT)
            victim.stop(signal.SIGKILL)
            at_kill = burst.bound(burst.tracker.pods)
            assert at_kill < BURST, "the burst was bound before the kill: make it larger"
            killed = time.monotonic()
            fault.start_scheduler()
            total = burst.all_bound()
        figure(f"faults: a. kill -9 #{round + 1} with {at_kill}/{BURST} bound → all bound",
               f"{time.monotonic() - killed:.1f} s after the kill ({total:.1f} s in all)")
        fault.check(f"a. kill -9 #{round + 1}")
        fault.clean(namespace)


def test_leader_kill_with_two_replicas(fault: Faults) -> None:
    from kubernetes import client

    leader = fault.leader()
    standby = fault.start_scheduler("policysched-standby", lead=False)
    assert standby.leading() is False
    before = fault.lease_holder()
    namespace = fault.namespace("leader-kill")
    with fault.burst(namespace) as burst:
        burst.wait_bound(FAULT_AT)
        leader.stop(signal.SIGKILL)
        at_kill = burst.bound(burst.tracker.pods)
        assert at_kill < BURST, "the burst was bound before the kill: make it larger"
        killed = time.monotonic()
        burst.all_bound()
    took_over = time.monotonic() - killed
    standby.wait_ready()
    fault.scheduler = standby
    after = fault.lease_holder()
    assert after is not None and after != before
    figure(f"faults: b. leader killed with {at_kill}/{BURST} bound → the standby bound the "
           f"rest (Lease {LEASE['leaseDurationSeconds']} s)", f"{took_over:.1f} s")
    census = fault.check("b. leader kill, 2 replicas")
    assert census.bound >= BURST
    events: Any = client.EventsV1Api(fault.api)

    def binders() -> Counter[str]:
        """Scheduled Events by reportingInstance (the replica's identity)."""
        return Counter(e.reporting_instance for e in events.list_namespaced_event(
            namespace).items if e.reason == "Scheduled")

    standby.wait("the new leader's Scheduled events", lambda: binders()[after] > 0, 15)
    assert set(binders()) <= {before, after}, binders()  # only the Lease holders bound pods
    fault.clean(namespace)


@pytest.mark.parametrize("sig", ["TERM", "KILL"])
def test_apiserver_restart_mid_burst(fault: Faults, sig: str) -> None:
    scheduler = fault.leader()
    namespace = fault.namespace(f"apiserver-{sig.lower()}")
    with fault.burst(namespace) as burst:
        burst.wait_bound(FAULT_AT)
        at_restart = burst.bound(burst.tracker.pods)
        restarted = time.monotonic()
        said = fault.cluster_sh("restart-apiserver", "--signal", sig)
        down = time.monotonic() - restarted
        if "still running" in said:  # its graceful stop did not end: cluster.sh killed it
            figure(f"faults: c. kube-apiserver SIG{sig} did not stop in time",
                   " | ".join(said.strip().splitlines()[-12:]))
        assert at_restart < BURST, "the burst was bound before the restart: make it larger"
        burst.all_bound()
    figure(f"faults: c. kube-apiserver SIG{sig} with {at_restart}/{BURST} bound → all bound",
           f"{time.monotonic() - restarted:.1f} s after the signal (the restart took "
           f"{down:.1f} s)")
    assert scheduler.running, f"the scheduler exited:\n{scheduler.log_tail()}"
    fault.check(f"c. kube-apiserver restart (SIG{sig})", rebinds_allowed=True)
    lines = fault.new_log(scheduler).splitlines()
    warnings = [line for line in lines if (m := LOG_LEVEL.match(line)) and m.group(1) in "WEC"]
    per_client = Counter(m.group(1) for line in warnings
                         if (m := CONNECTION_LINE.search(line)) is not None)
    figure(f"faults: c. scheduler log during the SIG{sig} restart",
           f"{len(lines)} lines, {len(warnings)} warnings or errors: {dict(per_client)}")
    # one line per change of a client's state, none per retry, request or pod
    others = [line for line in warnings if not CONNECTION_LINE.search(line)]
    assert not others, "\n".join(others)
    assert max(per_client.values(), default=0) <= MAX_WARNINGS_PER_CLIENT, \
        "\n".join(warnings)
    fault.clean(namespace)


def _reloads(process: support.SchedulerProcess, result: str) -> float:
    return support.metric_value(process.metrics(), "policysched_policy_reloads_total",
                                {"result": result}) or 0.0


def _hot_reload(fault: Faults, text: str) -> None:
    """Replace the fault-poison ConfigMap; wait until the scheduler activated it."""
    scheduler = fault.leader()
    successes, failures = _reloads(scheduler, "success"), _reloads(scheduler, "failure")
    support.apply(fault.api, [_configmap(text)])
    scheduler.wait("the fault-poison ConfigMap reloaded",
                   lambda: _reloads(scheduler, "success") > successes
                   or _reloads(scheduler, "failure") > failures, 30)
    assert _reloads(scheduler, "failure") == failures, (
        f"the policy was rejected at reload:\n{scheduler.log_tail()}")


def test_poison_policy_hot_reloaded(fault: Faults) -> None:
    """Only the pods a rule fails for are affected: each gets PodScheduled=False naming
    the policy and the rule; every other pod binds as usual; once the policy is mended,
    the poisoned pods bind too (none was lost)."""
    namespace = fault.namespace("poison-policy")
    values = [v for v in POISON_VALUES for _ in range(POISON_PODS_PER_VALUE)]
    poisoned = {f"p-{i}": value for i, value in enumerate(values)}
    count = BURST + len(poisoned)
    _hot_reload(fault, POISONED)
    try:
        # the poisoned pods are created first: they are in the queue all along
        with fault.burst(namespace, count, labels=lambda i: {POISON_LABEL: values[i]}
                         if i < len(values) else None) as burst:
            unaffected = burst.names - set(poisoned)
            seconds = burst.wait_bound(1.0, names=unaffected)

            def explained(pods: Mapping[str, Any]) -> bool:
                return all(_names_rule(pods.get(name), POISON_VALUES[value])
                           for name, value in poisoned.items())

            pods = burst.tracker.wait_until(explained, EXPLAIN_TIMEOUT,
                                            "every poisoned pod's PodScheduled=False naming "
                                            f"{POISON_POLICY} and its rule")
            assert burst.bound(pods, set(poisoned)) == 0
        figure(f"faults: d. poison policy active: {BURST} unaffected pods bound",
               f"{seconds:.1f} s (undisturbed: {_baseline(fault)})")
        example = {v: (support.scheduled_condition(pods[n]).message or "")[:150]
                   for n, v in reversed(poisoned.items())}
        figure("faults: d. a poisoned pod's PodScheduled message", repr(example))
        census = fault.check("d. poison policy hot-reloaded")
        assert set(census.explained) >= {f"{namespace}/{n}" for n in poisoned}
    finally:
        _hot_reload(fault, HARMLESS)
    with support.PodTracker(fault.api, namespace) as tracker:
        tracker.wait_until(lambda pods: all(n in pods and pods[n].spec.node_name
                                            for n in poisoned),
                           BIND_TIMEOUT, "the poisoned pods bound once the policy is mended")
    fault.check("d. poison policy mended")
    fault.clean(namespace)


def _names_rule(pod: Any, rule: str) -> bool:
    condition = None if pod is None else support.scheduled_condition(pod)
    message = (condition.message or "") if condition is not None else ""
    return (condition is not None and condition.status == "False"
            and POISON_POLICY in message and rule in message)


def _baseline(fault: Faults) -> str:
    return "not measured" if fault.baseline is None else f"{fault.baseline:.1f} s"


def poison_nodes() -> list[dict[str, Any]]:
    """Nodes the API server accepts that an engine may trip on: allocatable memory 8Ei
    (2^63 bytes, served as int64's maximum); odd labels and taints; no status at all (not
    a KWOK node: KWOK would fill in its allocatable), where nothing fits."""
    huge = support.node("fault-huge-memory", memory="8Ei")
    odd = support.node("fault-odd-labels", labels={
        "policysched.io/empty": "", "a.b-c.example/x_y.z": "v" * 63,
        "policysched.io/number": "0x1F"}, taints=[
        {"key": "policysched.io/odd", "effect": "PreferNoSchedule"},
        {"key": "policysched.io/gone", "value": "", "effect": "NoExecute"}])
    bare = support.node("fault-no-status")
    del bare["status"], bare["metadata"]["annotations"]
    return [huge, odd, bare]


def test_poison_nodes_added(fault: Faults) -> None:
    from kubernetes import client

    core: Any = client.CoreV1Api(fault.api)
    nodes = poison_nodes()
    namespace = fault.namespace("poison-nodes")
    try:
        for node in nodes:
            support.create(fault.api, node)
        with fault.burst(namespace) as burst:
            seconds = burst.all_bound()
        figure(f"faults: e. poison nodes added: {BURST} pods bound",
               f"{seconds:.1f} s (undisturbed: {_baseline(fault)})")
        placed = Counter(p.spec.node_name for p in core.list_namespaced_pod(namespace).items)
        figure("faults: e. pods on the poison nodes",
               repr({n["metadata"]["name"]: placed[n["metadata"]["name"]] for n in nodes}))
        fault.check("e. poison nodes added")
    finally:
        fault.clean(namespace)
        for node in nodes:
            with contextlib.suppress(Exception):
                core.delete_node(node["metadata"]["name"])
