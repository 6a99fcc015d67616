"""The oracle: scenarios run on the real kube-scheduler (``control_plane``), decision by
decision.

Per scenario: the initial objects are created (Namespaces; PriorityClasses; a RuntimeClass
per ``runtimeClassName`` of its pods, with their overhead; PodDisruptionBudgets, whose
status the oracle writes itself, no disruption controller running; storage — classes,
drivers, volumes and claims, pre-bound pairs bound by kube-controller-manager's PV binder
(``oracle_storage``); Nodes, annotated for KWOK so that terminating pods are removed;
CSINodes; bound pods, each given its start time once KWOK has made it ready), then a
barrier: a throw-away pod pinned to the last node through the
scheduler, which proves the scheduler's informers have seen every node and pod before it
(informer events are ordered per resource), deleted before going on. The pending pods are
created one at a time, under kube's profile name; for each the oracle records the bound
node, or the first FailedScheduling event's message, the node preemption nominated and the
victims it deleted (a watch sees every state of the pod, even a failure that a preemptor's
binding follows within milliseconds; a nominated pod is waited for until bound, up to
``DECIDE_TIMEOUT``), and the claims its binding bound; a pod whose claim waits for a
provisioner (none runs) is decided when kube-scheduler writes the claim's selected node;
a bound pod is given its start time
(``scenario.pending_start``) before the next pod is created, and a pod left unbound is
deleted, so that later decisions see only bound pods.

Start times: KWOK's pod-ready stage writes ``status.startTime`` (the time it ran) on a pod
without ``status.podIP``, overwriting a time written before it — and sometimes runs twice, a
few milliseconds apart. So the oracle waits for the podIP, writes the pod's start time,
and writes it again until the API server has held it for ``SETTLE`` seconds; after the
barrier it checks that the API server still holds each bound pod's.

Afterwards the scenario's pods, PodDisruptionBudgets, Nodes, PriorityClasses,
RuntimeClasses and storage objects are deleted (Namespaces cannot be, without a
controller: names are unique). kube's per-node final scores are read from its log at the end.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import re
import time
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from tests.e2e import support

from .control_plane import KUBE_SCHEDULER_NAME, ControlPlane, OracleError
from .oracle_storage import StorageOracle, storage_path, waits_for_provisioning
from .outcome import Outcome
from .scenario import (
    NAMESPACE,
    NODE,
    PDB,
    POD,
    PRIORITY_CLASS,
    Object,
    Scenario,
    pending_start,
    pod_key,
    started,
)

DECIDE_TIMEOUT = 30.0  # seconds for a pod to be bound or reported unschedulable (without
# a nomination: a preemptor is waited for until bound)
EVENT_TIMEOUT = 10.0  # seconds for its FailedScheduling event to appear
DELETE_TIMEOUT = 30.0
BARRIER_TIMEOUT = 30.0
ATTEMPTS = 3  # runs of a scenario in which a preemptor's outcome raced (see Oracle.run)
STUCK = "nominated, victims deleted, but not bound after {timeout:.0f} s"
ELSEWHERE = ("nominated to {nominated}, bound to {node}: retried before its cache saw every "
             "victim deleted")
READY_TIMEOUT = 10.0  # seconds for KWOK to make a bound pod ready and leave it so
SETTLE = 0.1  # seconds a start time must stay as written (KWOK's second pod-ready patch)
POLL = 0.03  # seconds between polls of a pod
KWOK_ANNOTATION = {"kwok.x-k8s.io/node": "fake"}
# the barrier pod's class: it must not preempt a bound pod of negative priority
BARRIER_CLASS: Object = {"apiVersion": "scheduling.k8s.io/v1", "kind": PRIORITY_CLASS,
                         "metadata": {"name": "parity-barrier"}, "value": 0,
                         "preemptionPolicy": "Never"}
FINAL_SCORE = re.compile(r'"Calculated node\'s final score for pod" pod="([^"]+)" '
                         r'node="([^"]+)" score=(-?\d+)')
PLUGIN_SCORE = re.compile(r'"Plugin scored node for pod" pod="([^"]+)" plugin="([^"]+)" '
                          r'node="([^"]+)" score=(-?\d+)')
NODE_COUNT = re.compile(r"^0/(\d+) nodes are available")


def _kapi() -> Any:
    """deploy/local/kapi.py (stdlib only, not a package): its ``Api`` client."""
    path = support.REPO / "deploy" / "local" / "kapi.py"
    spec = importlib.util.spec_from_file_location("kapi", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Rest:
    """JSON over the admin identity: (status, body) calls and ones that must succeed."""

    def __init__(self, plane: ControlPlane) -> None:
        env = plane.cluster.env
        self.api = _kapi().Api(env["APISERVER_URL"], env["ADMIN_TOKEN"], env["CA_CERT"])

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, obj = self.api.call(method, path, body)
        return int(status), obj

    def must(self, method: str, path: str, body: Any = None,
             ok: tuple[int, ...] = (200, 201)) -> Any:
        status, obj = self.call(method, path, body)
        if status not in ok:
            message = obj.get("message", obj) if isinstance(obj, dict) else obj
            raise OracleError(f"{method} {path}: HTTP {status}: {message}")
        return obj

    def watch_pod(self, namespace: str, name: str, resource_version: str,
                  done: Callable[[list[_PodState]], bool], timeout: float
                  ) -> list[_PodState]:
        """Every state of the pod from ``resource_version`` on, as a watch reports it (no
        state is missed, however briefly it lasts), until ``done(states)`` or ``timeout``
        seconds have passed."""
        query = urllib.parse.urlencode({
            "watch": "1", "fieldSelector": f"metadata.name={name}",
            "resourceVersion": resource_version,
            "timeoutSeconds": str(max(1, int(timeout + 0.999)))})
        conn = http.client.HTTPSConnection(self.api.host, self.api.port, context=self.api.ctx,
                                           timeout=timeout + 5)
        states: list[_PodState] = []
        deadline = time.monotonic() + timeout
        try:
            conn.request("GET", f"/api/v1/namespaces/{namespace}/pods?{query}",
                         headers={"Authorization": "Bearer " + self.api.token})
            response = conn.getresponse()
            if response.status != 200:
                raise OracleError(f"watch of pod {namespace}/{name}: HTTP {response.status}")
            while time.monotonic() < deadline:
                line = response.readline()
                if not line:
                    break
                event = json.loads(line)
                if event.get("type") not in ("ADDED", "MODIFIED"):
                    continue
                states.append(_PodState(event["object"]))
                if done(states):
                    return states
        except (OSError, http.client.HTTPException, ValueError) as e:
            raise OracleError(f"watch of pod {namespace}/{name} failed: {e}") from None
        finally:
            conn.close()
        return states


def _path(obj: Object) -> str:
    """The collection path of an object's kind (and namespace)."""
    kind = obj["kind"]
    ns = obj["metadata"].get("namespace") or "default"
    storage = storage_path(obj)
    if storage is not None:
        return storage
    return {
        NAMESPACE: "/api/v1/namespaces",
        PRIORITY_CLASS: "/apis/scheduling.k8s.io/v1/priorityclasses",
        "RuntimeClass": "/apis/node.k8s.io/v1/runtimeclasses",
        PDB: f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
        NODE: "/api/v1/nodes",
        POD: f"/api/v1/namespaces/{ns}/pods",
    }[kind]


def runtime_classes(scenario: Scenario) -> list[Object]:
    """A RuntimeClass per ``runtimeClassName`` of the scenario's pods, with the pod's
    overhead (the RuntimeClass admission plugin refuses a pod whose overhead its class does
    not define)."""
    found: dict[str, Object] = {}
    for pod in (*scenario.bound_pods, *scenario.pending):
        spec = pod["spec"]
        name = spec.get("runtimeClassName")
        if name and name not in found:
            rc: Object = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                          "metadata": {"name": name}, "handler": "runc"}
            if spec.get("overhead"):
                rc["overhead"] = {"podFixed": spec["overhead"]}
            found[name] = rc
    return list(found.values())


def _for_kube(obj: Object) -> Object:
    """The object as the oracle creates it: nodes KWOK-managed, pending pods under kube's
    profile name, no status (but a node's)."""
    out = json.loads(json.dumps(obj))
    if out["kind"] == NODE:
        out["metadata"].setdefault("annotations", {}).update(KWOK_ANNOTATION)
    elif out["kind"] == POD:
        out.pop("status", None)
        if not out["spec"].get("nodeName"):
            out["spec"]["schedulerName"] = KUBE_SCHEDULER_NAME
    elif out["kind"] == PDB:
        out.pop("status", None)
    return out


@dataclass
class _PodState:
    """A pending pod as the oracle last saw it."""

    obj: Object

    @property
    def node(self) -> str | None:
        return self.obj["spec"].get("nodeName") or None

    @property
    def failed(self) -> bool:
        for condition in self.obj.get("status", {}).get("conditions", []) or []:
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                return True
        return False

    @property
    def nominated(self) -> str | None:
        return self.obj.get("status", {}).get("nominatedNodeName") or None


class Oracle:
    """Runs scenarios on one control plane, one after another."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.rest = Rest(plane)
        self.storage = StorageOracle(self.rest)
        self.rest.must("POST", _path(BARRIER_CLASS), BARRIER_CLASS, ok=(201, 409))

    # -- one scenario ----------------------------------------------------------------------

    def run(self, scenario: Scenario) -> list[Outcome]:
        """kube's outcome of each pending pod of ``scenario``; the cluster is left as it was
        (but for the scenario's Namespaces). Two outcomes of a preemptor depend on timing in
        kube-scheduler, each seen about once in a few hundred preemptions: nominated but not
        bound within ``DECIDE_TIMEOUT`` (stuck in its unschedulable queue until the 5-minute
        flush), and bound to another node than its nomination (retried when its cache had
        seen some victims deleted but not all: another node, freed by those, won while the
        nominated one was still full). Either runs the scenario again, up to ``ATTEMPTS``
        times, then such a decision is noted (not compared)."""
        for _ in range(ATTEMPTS):
            outcomes = self._run_once(scenario)
            raced = {o.pod: note for o in outcomes if (note := _raced(o))}
            if not raced:
                return outcomes
        return [replace(o, note=raced[o.pod]) if o.pod in raced else o for o in outcomes]

    def _run_once(self, scenario: Scenario) -> list[Outcome]:
        if not self.plane.scheduler_alive():
            raise OracleError("kube-scheduler is not running; its log ends with:\n"
                              + self.plane.log_tail())
        log_start = self._log_size()
        try:
            self._create_initial(scenario)
            self._barrier(scenario)
            self._check_start_times(scenario)
            outcomes = [self._decide(scenario, pod, i) for i, pod in enumerate(scenario.pending)]
        finally:
            self._reset(scenario)
        scores, plugin_scores = self._scores(log_start)
        return [replace(o, scores=scores.get(o.pod, {}), plugin_scores=plugin_scores.get(o.pod, {}))
                if o.node and not o.note else o for o in outcomes]

    def _create_initial(self, scenario: Scenario) -> None:
        for obj in [*scenario.of_kind(NAMESPACE), *scenario.of_kind(PRIORITY_CLASS),
                    *runtime_classes(scenario)]:
            self.rest.must("POST", _path(obj), _for_kube(obj), ok=(201, 409))
        for pdb in scenario.of_kind(PDB):
            created = self.rest.must("POST", _path(pdb), _for_kube(pdb))
            created["status"] = pdb.get("status", {})
            name = pdb["metadata"]["name"]
            self.rest.must("PUT", f"{_path(pdb)}/{name}/status", created)
        self.storage.create(scenario)
        for obj in scenario.nodes:
            self.rest.must("POST", _path(obj), _for_kube(obj))
        self.storage.create_csi_nodes(scenario)
        for obj in scenario.bound_pods:
            self.rest.must("POST", _path(obj), _for_kube(obj))
        self._start_times(_initial_start_times(scenario))

    def _start_times(self, wanted: dict[str, str]) -> None:
        """Write each pod's start time (``wanted``: namespace/name → time) once KWOK has
        made it ready, again until the API server has held them all for ``SETTLE`` s."""
        deadline = time.monotonic() + READY_TIMEOUT
        while wrong := self._wrong_start_times(wanted):
            if time.monotonic() > deadline:
                raise OracleError(f"start times not kept after {READY_TIMEOUT:.0f} s: {wrong}")
            for key in wrong:
                self._start(key, wanted[key], deadline)
            time.sleep(SETTLE)

    def _start(self, key: str, when: str, deadline: float) -> None:
        """Write ``when`` as the bound pod's ``status.startTime`` once KWOK has made it
        ready (given it a podIP)."""
        namespace, name = key.split("/", 1)
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
        while True:
            pod = self.rest.must("GET", path)
            if pod.get("status", {}).get("podIP"):
                pod["status"]["startTime"] = when
                status, body = self.rest.call("PUT", f"{path}/status", pod)
                if status == 200:
                    return
                if status != 409:  # 409: changed meanwhile, read again
                    raise OracleError(f"PUT {path}/status: HTTP {status}: {body}")
            if time.monotonic() > deadline:
                raise OracleError(f"pod {key}: not made ready by KWOK after "
                                  f"{READY_TIMEOUT:.0f} s")
            time.sleep(POLL)

    def _wrong_start_times(self, wanted: dict[str, str]) -> dict[str, str | None]:
        """The pods of ``wanted`` whose start time the API server holds is another (→ it)."""
        held: dict[str, str | None] = {}
        for namespace in sorted({key.split("/", 1)[0] for key in wanted}):
            for pod in self.rest.must("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]:
                held[f"{namespace}/{pod['metadata']['name']}"] = pod["status"].get("startTime")
        return {k: held.get(k) for k, when in wanted.items() if held.get(k) != when}

    def _check_start_times(self, scenario: Scenario) -> None:
        """The API server still holds each bound pod's start time (after the barrier)."""
        wrong = self._wrong_start_times(_initial_start_times(scenario))
        if wrong:
            raise OracleError(f"start times changed after the barrier: {wrong}")

    def _barrier(self, scenario: Scenario) -> None:
        """A pod through the scheduler pinned to the last node: bound there, or reported
        unschedulable on all the scenario's nodes, it proves the scheduler has seen every
        object created before it. Deleted before the first pending pod; it never preempts
        (``BARRIER_CLASS``)."""
        nodes = scenario.nodes
        last = nodes[-1]["metadata"]["name"]
        namespace = scenario.of_kind(NAMESPACE)[0]["metadata"]["name"]
        deadline = time.monotonic() + BARRIER_TIMEOUT
        for attempt in range(1000):
            name = f"{scenario.id}-barrier-{attempt}"
            pod: Object = {
                "apiVersion": "v1", "kind": POD,
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"schedulerName": KUBE_SCHEDULER_NAME, "terminationGracePeriodSeconds": 0,
                         "priorityClassName": BARRIER_CLASS["metadata"]["name"],
                         "tolerations": [{"operator": "Exists"}],
                         "affinity": {"nodeAffinity": {
                             "requiredDuringSchedulingIgnoredDuringExecution": {
                                 "nodeSelectorTerms": [{"matchFields": [
                                     {"key": "metadata.name", "operator": "In",
                                      "values": [last]}]}]}}},
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}
            self.rest.must("POST", _path(pod), pod)
            state = self._wait_pod(namespace, name, lambda s: s.node is not None or s.failed,
                                   max(1.0, deadline - time.monotonic()), "the barrier pod")
            seen = state.node is not None
            if not seen:
                message = state.obj["status"]["conditions"]
                text = next((c.get("message", "") for c in message
                             if c.get("type") == "PodScheduled"), "")
                count = NODE_COUNT.match(text)
                seen = count is not None and int(count.group(1)) >= len(nodes)
            self._delete_pod(namespace, name)
            if seen:
                return
            if time.monotonic() > deadline:
                raise OracleError(f"scenario {scenario.id}: kube-scheduler did not see the "
                                  f"scenario's {len(nodes)} nodes within {BARRIER_TIMEOUT} s")

    def _decide(self, scenario: Scenario, pending: Object, index: int) -> Outcome:
        key = pod_key(pending)
        namespace, name = key.split("/", 1)
        before = self._scenario_pods(scenario)
        status, created = self.rest.call("POST", _path(pending), _for_kube(pending))
        if status != 201:
            message = created.get("message", created) if isinstance(created, dict) else created
            return Outcome(key, note=f"refused by the API server: {message}")
        uid, version = created["metadata"]["uid"], created["metadata"]["resourceVersion"]

        def decided(states: list[_PodState]) -> bool:
            last = states[-1]  # a nominated pod: until bound
            return last.node is not None or (last.failed and not last.nominated)

        if waits_for_provisioning(scenario, pending):
            states, selected = self._wait_provisioning(scenario, pending, decided)
            if selected and not any(s.node for s in states):
                self._delete_pod(namespace, name)
                failed = any(s.failed for s in states)
                return Outcome(key, next(iter(selected.values())),
                               self._first_failure(namespace, name, uid) if failed else None,
                               selected=selected, waiting=True)
        else:
            states = self.rest.watch_pod(namespace, name, version, decided, DECIDE_TIMEOUT)
        if not any(s.node or s.failed for s in states):
            self._delete_pod(namespace, name)
            return Outcome(key, note=f"neither bound nor reported unschedulable after "
                                     f"{DECIDE_TIMEOUT:.0f} s")
        node = states[-1].node if states else None
        failed = any(s.failed for s in states)
        nominated = next((s.nominated for s in states if s.nominated), None)
        message = self._first_failure(namespace, name, uid) if failed else None
        victims: tuple[str, ...] = ()
        if nominated:
            time.sleep(0.3)  # the last victims' deletions
            victims = tuple(sorted(before - self._scenario_pods(scenario, running=True)))
        if node is None:
            self._delete_pod(namespace, name)
            return Outcome(key, node, message, nominated, victims)
        bindings = self.storage.bindings(scenario, pending)
        self._start_times({key: pending_start(index)})
        return Outcome(key, node, message, nominated, victims, start_time=pending_start(index),
                       bindings=bindings)

    def _wait_provisioning(self, scenario: Scenario, pending: Object,
                           decided: Callable[[list[_PodState]], bool]
                           ) -> tuple[list[_PodState], dict[str, str]]:
        """The pod's states, polled until ``decided`` or until kube-scheduler selected a
        node for one of its claims (the claim → node), within ``DECIDE_TIMEOUT``."""
        namespace, name = pod_key(pending).split("/", 1)
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
        states: list[_PodState] = []
        deadline = time.monotonic() + DECIDE_TIMEOUT
        while time.monotonic() < deadline:
            states.append(_PodState(self.rest.must("GET", path)))
            selected = self.storage.selected(scenario, pending)
            if selected or decided(states):
                return states, selected
            time.sleep(POLL * 3)
        return states, {}

    # -- reading the cluster ---------------------------------------------------------------

    def _wait_pod(self, namespace: str, name: str, done: Callable[[_PodState], bool],
                  timeout: float, what: str) -> _PodState:
        deadline = time.monotonic() + timeout
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
        while True:
            state = _PodState(self.rest.must("GET", path))
            if done(state):
                return state
            if time.monotonic() > deadline:
                raise OracleError(f"pod {namespace}/{name}: no {what} after {timeout:.0f} s")
            time.sleep(POLL)

    def _first_failure(self, namespace: str, name: str, uid: str) -> str | None:
        """The message of the pod's first FailedScheduling event (events are emitted
        asynchronously: waited for)."""
        selector = urllib.parse.quote(
            f"involvedObject.uid={uid},reason=FailedScheduling", safe="=,")
        deadline = time.monotonic() + EVENT_TIMEOUT
        while True:
            events = self.rest.must(
                "GET", f"/api/v1/namespaces/{namespace}/events?fieldSelector={selector}")
            items = events.get("items", [])
            if items:
                def when(e: Object) -> str:
                    return str(e.get("eventTime") or e.get("firstTimestamp") or "")
                return str(min(items, key=when).get("message", ""))
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)

    def _scenario_pods(self, scenario: Scenario, running: bool = False) -> set[str]:
        """The scenario's pods that exist (``running``: and are not terminating)."""
        found = set()
        for ns in scenario.of_kind(NAMESPACE):
            name = ns["metadata"]["name"]
            for pod in self.rest.must("GET", f"/api/v1/namespaces/{name}/pods")["items"]:
                if running and pod["metadata"].get("deletionTimestamp"):
                    continue
                found.add(f"{name}/{pod['metadata']['name']}")
        return found

    def _log_size(self) -> int:
        try:
            return self.plane.scheduler_log.stat().st_size
        except OSError:
            return 0

    def _scores(self, start: int) -> tuple[dict[str, dict[str, int]],
                                           dict[str, dict[str, dict[str, int]]]]:
        """Per pod, the final scores of its last scored attempt (node → total) and their
        parts (node → plugin → weighted score), from kube's log since ``start``. An attempt
        logs every plugin score, then one total per scored node: a node scored again
        starts a new attempt."""
        totals: dict[str, dict[str, int]] = {}
        parts: dict[str, dict[str, dict[str, int]]] = {}
        with self.plane.scheduler_log.open("rb") as log:
            log.seek(start)
            text = log.read().decode(errors="replace")
        for line in text.splitlines():
            part = PLUGIN_SCORE.search(line)
            if part is not None:
                pod, plugin, node, score = part.groups()
                nodes = parts.setdefault(pod, {})
                if plugin in nodes.get(node, {}):
                    nodes.clear()
                nodes.setdefault(node, {})[plugin] = int(score)
                continue
            total = FINAL_SCORE.search(line)
            if total is not None:
                pod, node, score = total.groups()
                current = totals.setdefault(pod, {})
                if node in current:
                    current.clear()
                current[node] = int(score)
        return totals, parts

    # -- clean-up --------------------------------------------------------------------------

    def _delete_pod(self, namespace: str, name: str) -> None:
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
        self.rest.call("DELETE", path, {"gracePeriodSeconds": 0})
        deadline = time.monotonic() + DELETE_TIMEOUT
        while self.rest.call("GET", path)[0] != 404:
            if time.monotonic() > deadline:
                raise OracleError(f"pod {namespace}/{name} not deleted after {DELETE_TIMEOUT} s")
            time.sleep(POLL)

    def _reset(self, scenario: Scenario) -> None:
        """Delete what the scenario created, pods first (and wait for them)."""
        namespaces = [ns["metadata"]["name"] for ns in scenario.of_kind(NAMESPACE)]
        for ns in namespaces:
            self.rest.call("DELETE", f"/api/v1/namespaces/{ns}/pods", {"gracePeriodSeconds": 0})
        deadline = time.monotonic() + DELETE_TIMEOUT
        while self._scenario_pods(scenario):
            if time.monotonic() > deadline:
                raise OracleError(f"scenario {scenario.id}: pods not deleted after "
                                  f"{DELETE_TIMEOUT} s")
            time.sleep(0.05)
        doomed: Iterable[Object] = [*scenario.of_kind(PDB), *scenario.nodes,
                                    *scenario.of_kind(PRIORITY_CLASS), *runtime_classes(scenario)]
        for obj in doomed:
            self.rest.call("DELETE", f"{_path(obj)}/{obj['metadata']['name']}")
        self.storage.delete(scenario)


def _raced(outcome: Outcome) -> str:
    """Why a preemptor's outcome is one of kube-scheduler's races ("" when it is not)."""
    if outcome.note or not outcome.nominated:
        return ""
    if outcome.node is None:
        return STUCK.format(timeout=DECIDE_TIMEOUT)
    if outcome.node != outcome.nominated:
        return ELSEWHERE.format(nominated=outcome.nominated, node=outcome.node)
    return ""


def _initial_start_times(scenario: Scenario) -> dict[str, str]:
    return {pod_key(p): started(p)["status"]["startTime"] for p in scenario.bound_pods}


def run_scenarios(plane: ControlPlane, scenarios: Iterable[Scenario],
                  on_done: Callable[[Scenario, list[Outcome] | None, str], None]) -> None:
    """Each scenario on ``plane``; ``on_done(scenario, outcomes, error)`` after each (no
    outcomes and the reason when the scenario could not be run)."""
    oracle = Oracle(plane)
    for scenario in scenarios:
        try:
            outcomes = oracle.run(scenario)
        except OracleError as e:
            on_done(scenario, None, str(e))
            if not plane.scheduler_alive():
                raise
            continue
        on_done(scenario, outcomes, "")

