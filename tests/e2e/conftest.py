"""End-to-end tests against a real local control plane (``deploy/local/cluster.sh``).

Session fixtures, in the order they build on each other:

* ``cluster`` — a *private* cluster: ``CLUSTER_DIR=<tmp> cluster.sh up --nodes 3`` (the
  binaries are cached in ~/.cache/policysched; a cold cache builds them first). When it
  cannot start, every test that needs it FAILS with the script's reason: never skipped.
  ``cluster.sh down`` at the end. Other engineers' clusters (other CLUSTER_DIRs) are never
  touched.
* ``installed`` — with the admin identity: deploy/namespace.yaml, the ServiceAccount and
  RBAC manifests, the policy ConfigMaps (deploy/policies-configmap.yaml) and a minimal
  PodGroup CRD (tests/e2e/podgroup-crd.yaml).
* ``sa_kubeconfig`` — a kubeconfig with a token of the policysched ServiceAccount, minted
  through the TokenRequest API.
* ``scheduler`` — ``policysched run --kubeconfig <sa-kubeconfig> --config <deploy config>
  --leader-elect`` as a subprocess with that identity, ready (/readyz 200). A missing
  permission shows as a failing scenario or as a Forbidden in its log (checked when it
  stops); an excessive one in test_rbac.py.

Function fixtures: ``namespace`` (one per scenario; its pods are force-deleted after),
``make_node`` (extra KWOK nodes, deleted after), ``make_priority_class``.

``controller_manager`` (session, on demand) — ``cluster.sh start-controller-manager``: the
PersistentVolume binder completes PVC↔PV bindings for the volume tests.

Figures (cluster start, scheduler start, reload latency, total e2e time) are printed in the
terminal summary.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from . import support

FIGURES: dict[str, str] = {}  # name → value, printed in the terminal summary
_SESSION: dict[str, float] = {}


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("e2e") is not None:
        _SESSION.setdefault("e2e_started", time.monotonic())


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "teardown" and "e2e" in report.keywords:
        _SESSION["e2e_ended"] = time.monotonic()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if "e2e_started" in _SESSION:
        end = _SESSION.get("e2e_ended", time.monotonic())
        FIGURES["e2e suite duration (every e2e module, their clusters included)"] = \
            f"{end - _SESSION['e2e_started']:.1f} s"
    if "cluster_started" in _SESSION:
        end = _SESSION.get("cluster_stopped", time.monotonic())
        FIGURES["this suite's private cluster: up → down"] = \
            f"{end - _SESSION['cluster_started']:.1f} s"
    if not FIGURES:
        return
    terminalreporter.section("policysched e2e figures")
    for name, value in FIGURES.items():
        terminalreporter.write_line(f"{name}: {value}")


def figure(name: str, value: str) -> None:
    """Record a figure for the terminal summary (and print it, for ``-s``)."""
    FIGURES[name] = value
    print(f"\n{name}: {value}")


# ------------------------------------------------------------------------------ session


REUSE_ENV = "POLICYSCHED_E2E_CLUSTER_DIR"


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[support.Cluster]:
    """A private cluster, started and stopped here. For development only,
    ``POLICYSCHED_E2E_CLUSTER_DIR=<dir>`` reuses a cluster already running there (started
    with ``CLUSTER_DIR=<dir> deploy/local/cluster.sh up``) and leaves it running."""
    reuse = os.environ.get(REUSE_ENV)
    _SESSION["cluster_started"] = time.monotonic()
    if reuse:
        try:
            attached = support.attach_cluster(Path(reuse))
        except support.ClusterError as e:
            failure = f"{REUSE_ENV}: {e}"
        else:
            failure = ""
        if failure:
            pytest.fail(failure, pytrace=False)
        figure("cluster", f"reused {reuse}")
        yield attached
        attached.api.close()
        return
    cluster_dir = tmp_path_factory.mktemp("cluster", numbered=True)
    running, failures = support.start_private_cluster(cluster_dir)
    if running is None:  # a failure, never a skip: the suite cannot run without its cluster
        pytest.fail("\n\n".join(failures), pytrace=False)
    if failures:
        figure("cluster up: first attempt failed", failures[0].splitlines()[0])
    figure("cluster up (3 nodes)", f"{running.up_seconds:.1f} s  [{cluster_dir}]")
    try:
        yield running
    finally:
        running.api.close()
        support.stop_cluster(cluster_dir)
        _SESSION["cluster_stopped"] = time.monotonic()


@pytest.fixture(scope="session")
def controller_manager(cluster: support.Cluster) -> support.Cluster:
    """The cluster with kube-controller-manager running its PersistentVolume binder
    (started on first use: `up` does not, to keep the suite's start fast)."""
    try:
        seconds = support.start_controller_manager(cluster)
    except support.ClusterError as e:
        pytest.fail(str(e), pytrace=False)
    if seconds:
        figure("kube-controller-manager: start → /healthz 200", f"{seconds:.1f} s")
    return cluster


@pytest.fixture(scope="session")
def admin_api(cluster: support.Cluster) -> Any:
    return cluster.api


@pytest.fixture(scope="session")
def installed(cluster: support.Cluster) -> support.Cluster:
    """The deploy manifests a cluster admin applies before the scheduler runs."""
    support.install(cluster)
    return cluster


@pytest.fixture(scope="session")
def sa_kubeconfig(installed: support.Cluster) -> Path:
    return support.service_account_kubeconfig(installed)


@pytest.fixture(scope="session")
def sa_api(sa_kubeconfig: Path) -> Iterator[Any]:
    """An API client with the ServiceAccount's identity."""
    api = support.client_for(sa_kubeconfig)
    try:
        yield api
    finally:
        api.close()


@pytest.fixture(scope="session")
def scheduler(installed: support.Cluster,
              sa_kubeconfig: Path) -> Iterator[support.SchedulerProcess]:
    """``policysched run`` with the ServiceAccount's identity, serving profile
    ``policysched`` (the deploy configuration, /healthz etc. on a free loopback port)."""
    port = support.free_port()
    config = support.render_config(installed.dir / "scheduler-config.yaml", port=port)
    process = support.SchedulerProcess("policysched", installed.dir, sa_kubeconfig, config,
                                       port).start()
    try:
        seconds = process.wait_ready()
        figure("policysched run: start → /readyz 200", f"{seconds:.1f} s")
        yield process
    finally:
        process.stop()
    forbidden = process.forbidden()
    assert not forbidden, ("the scheduler was refused requests (missing RBAC?):\n"
                           + "\n".join(forbidden[:20]))


# ------------------------------------------------------------------------------ per test


@pytest.fixture
def namespace(admin_api: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace for one scenario. Afterwards its pods (and PodGroups) are deleted
    at once (there is no namespace controller to do it), so that they hold no node."""
    from kubernetes import client

    core: Any = client.CoreV1Api(admin_api)
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")
    slug = slug.removeprefix("test-")[:40].strip("-")
    name = support.unique(f"e2e-{slug}")
    core.create_namespace({"metadata": {"name": name, "labels": {"policysched.io/e2e": "true"}}})
    try:
        yield name
    finally:
        with contextlib.suppress(Exception):
            core.delete_collection_namespaced_pod(name, grace_period_seconds=0)
        with contextlib.suppress(Exception):
            client.CustomObjectsApi(admin_api).delete_collection_namespaced_custom_object(
                "scheduling.x-k8s.io", "v1alpha1", name, "podgroups")
        with contextlib.suppress(Exception):
            core.delete_namespace(name)


@pytest.fixture
def make_node(admin_api: Any) -> Iterator[Callable[..., str]]:
    """Create an extra KWOK node for one test (``support.node`` arguments); deleted after
    with the pods bound to it."""
    from kubernetes import client

    core: Any = client.CoreV1Api(admin_api)
    created: list[str] = []

    def make(name: str, **kwargs: Any) -> str:
        support.create(admin_api, support.node(name, **kwargs))
        created.append(name)
        return name

    try:
        yield make
    finally:
        for name in created:
            with contextlib.suppress(Exception):
                for item in core.list_pod_for_all_namespaces(
                        field_selector=f"spec.nodeName={name}").items:
                    core.delete_namespaced_pod(item.metadata.name, item.metadata.namespace,
                                               grace_period_seconds=0)
            with contextlib.suppress(Exception):
                core.delete_node(name)


@pytest.fixture
def make_priority_class(admin_api: Any) -> Iterator[Callable[[str, int], str]]:
    from kubernetes import client

    scheduling: Any = client.SchedulingV1Api(admin_api)
    created: list[str] = []

    def make(name: str, value: int) -> str:
        support.create(admin_api, {"apiVersion": "scheduling.k8s.io/v1",
                                   "kind": "PriorityClass", "metadata": {"name": name},
                                   "value": value})
        created.append(name)
        return name

    try:
        yield make
    finally:
        for name in created:
            with contextlib.suppress(Exception):
                scheduling.delete_priority_class(name)
