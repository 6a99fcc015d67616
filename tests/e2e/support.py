"""Helpers of the end-to-end suite: the private local control plane, manifests, identities,
the ``policysched run`` process, and waiting on the API with watches (never bare sleeps).
The fixtures that use them are in ``conftest.py``."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
CLUSTER_SH = REPO / "deploy" / "local" / "cluster.sh"
HERE = Path(__file__).resolve().parent

SYSTEM_NAMESPACE = "policysched-system"
SERVICE_ACCOUNT = "policysched"
SCHEDULER_NAME = "policysched"
LEASE_NAME = "policysched"
FIELD_MANAGER = "policysched-e2e"
NODE_COUNT = 3

UP_TIMEOUT = 2400.0  # seconds: a cold `up` builds the binaries (18 min measured on 2 cores)
DOWN_TIMEOUT = 120.0
READY_TIMEOUT = 90.0  # seconds for `policysched run` to list the cluster and load policies
STOP_TIMEOUT = 15.0
FORBIDDEN = re.compile(r"[Ff]orbidden")
LEADER_METRIC = "leader_election_master_status"
TOKEN_SECONDS = 4 * 3600  # the ServiceAccount token outlives any run of the suite

# The RBAC manifests the suite applies with the admin identity (the Deployment is not run:
# no Deployment controller runs, and the scheduler runs as a local process instead).
RBAC_MANIFESTS = ("namespace.yaml", "serviceaccount.yaml", "clusterrole.yaml",
                  "clusterrolebinding.yaml", "role.yaml", "rolebinding.yaml")
POLICY_CONFIGMAPS = "policies-configmap.yaml"
SCHEDULER_CONFIG = "scheduler-config.yaml"


class ClusterError(RuntimeError):
    """The local control plane could not be started (the message is the script's reason)."""


# ------------------------------------------------------------------------------ the cluster


@dataclass
class Cluster:
    """A running private control plane: ``deploy/local/cluster.sh`` with its own
    ``CLUSTER_DIR``; ``api`` is an admin ``ApiClient``."""

    dir: Path
    env: dict[str, str]
    api: Any
    up_seconds: float

    @property
    def kubeconfig(self) -> Path:
        return self.dir / "kubeconfig"

    @property
    def url(self) -> str:
        return self.env["APISERVER_URL"]

    @property
    def ca_cert(self) -> Path:
        return Path(self.env["CA_CERT"])


def script_env(cluster_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["CLUSTER_DIR"] = str(cluster_dir)
    env.pop("KUBECONFIG", None)
    return env


def read_cluster_env(cluster_dir: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in (cluster_dir / "cluster.env").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            values[key] = value.strip("'\"")
    return values


def start_cluster(cluster_dir: Path, nodes: int = NODE_COUNT) -> Cluster:
    """``cluster.sh up --nodes N`` in ``cluster_dir``; raises ``ClusterError`` with the
    script's own reason (the tail of its output) when it fails."""
    from kubernetes import config

    cluster_dir.mkdir(parents=True, exist_ok=True)
    # beside the cluster directory: `up` clears the directory's *.log files when it starts
    log_path = cluster_dir.with_name(cluster_dir.name + "-up.txt")
    started = time.monotonic()
    with log_path.open("w") as log:
        try:
            done = subprocess.run([str(CLUSTER_SH), "up", "--nodes", str(nodes)],
                                  env=script_env(cluster_dir), stdout=log,
                                  stderr=subprocess.STDOUT, timeout=UP_TIMEOUT, check=False)
            returncode = done.returncode
        except subprocess.TimeoutExpired:
            returncode = -1
        except OSError as e:
            raise ClusterError(f"cannot run {CLUSTER_SH}: {e}") from None
    seconds = time.monotonic() - started
    if returncode != 0:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-40:])
        why = (f"timed out after {UP_TIMEOUT:.0f} s" if returncode == -1
               else f"exit status {returncode}")
        raise ClusterError(f"deploy/local/cluster.sh up --nodes {nodes} failed ({why}); "
                           f"its output ({log_path}) ends with:\n{tail}")
    env = read_cluster_env(cluster_dir)
    api = config.new_client_from_config(config_file=str(cluster_dir / "kubeconfig"))
    return Cluster(cluster_dir, env, api, seconds)


def start_private_cluster(cluster_dir: Path, nodes: int = NODE_COUNT,
                          attempts: int = 2) -> tuple[Cluster | None, list[str]]:
    """``start_cluster``, tried again when it fails (a start-up can lose a race for a port
    on a busy machine); the cluster (None if every attempt failed) and the failures."""
    failures: list[str] = []
    for _ in range(attempts):
        try:
            return start_cluster(cluster_dir, nodes), failures
        except ClusterError as e:
            failures.append(str(e))
            stop_cluster(cluster_dir)  # whatever `up` left behind
    return None, failures


def attach_cluster(cluster_dir: Path) -> Cluster:
    """A cluster already running in ``cluster_dir`` (``cluster.sh status`` passes)."""
    from kubernetes import config

    done = subprocess.run([str(CLUSTER_SH), "status"], env=script_env(cluster_dir),
                          capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise ClusterError(f"no cluster running in {cluster_dir}:\n{done.stdout}{done.stderr}")
    api = config.new_client_from_config(config_file=str(cluster_dir / "kubeconfig"))
    return Cluster(cluster_dir, read_cluster_env(cluster_dir), api, 0.0)


def start_controller_manager(cluster: Cluster) -> float:
    """``cluster.sh start-controller-manager`` (the PersistentVolume binder only) unless it
    already runs in the cluster's directory; the seconds it took (0 if it was running).
    ``cluster.sh down`` stops it with the rest."""
    env = script_env(cluster.dir)
    status = subprocess.run([str(CLUSTER_SH), "status"], env=env, capture_output=True,
                            text=True, timeout=60, check=False)
    if re.search(r"^kube-controller-manager\s+running", status.stdout, re.MULTILINE):
        return 0.0
    started = time.monotonic()
    done = subprocess.run([str(CLUSTER_SH), "start-controller-manager"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise ClusterError("deploy/local/cluster.sh start-controller-manager failed "
                           f"(exit status {done.returncode}):\n{done.stdout}{done.stderr}")
    return time.monotonic() - started


def stop_cluster(cluster_dir: Path) -> str:
    """``cluster.sh down`` (stops every process registered in ``cluster_dir``)."""
    done = subprocess.run([str(CLUSTER_SH), "down"], env=script_env(cluster_dir),
                          capture_output=True, text=True, timeout=DOWN_TIMEOUT, check=False)
    return done.stdout + done.stderr


# ------------------------------------------------------------------------------ manifests


def load_manifests(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def apply(api: Any, documents: Iterable[Mapping[str, Any]]) -> None:
    """Server-side apply each document (create or update), as ``kubectl apply
    --server-side --force-conflicts`` would."""
    from kubernetes import dynamic

    client = dynamic.DynamicClient(api)
    for document in documents:
        resource = client.resources.get(api_version=document["apiVersion"],
                                        kind=document["kind"])
        metadata = document["metadata"]
        kwargs: dict[str, Any] = {"name": metadata["name"]}
        if resource.namespaced:
            kwargs["namespace"] = metadata.get("namespace", "default")
        resource.server_side_apply(body=dict(document), field_manager=FIELD_MANAGER,
                                   force_conflicts=True, **kwargs)


def create(api: Any, document: Mapping[str, Any]) -> Any:
    """POST one object as given (status included: a Node's allocatable), through the
    dynamic client (no client-side model validation)."""
    from kubernetes import dynamic

    resource = dynamic.DynamicClient(api).resources.get(api_version=document["apiVersion"],
                                                        kind=document["kind"])
    namespace = document["metadata"].get("namespace") if resource.namespaced else None
    return resource.create(body=dict(document), namespace=namespace)


def apply_files(api: Any, *names: str, directory: Path = DEPLOY) -> None:
    for name in names:
        apply(api, load_manifests(directory / name))


def install(cluster: Cluster) -> None:
    """What a cluster admin applies before the scheduler runs: the namespace, the
    ServiceAccount and RBAC manifests, the policy ConfigMaps, and a minimal PodGroup CRD."""
    apply_files(cluster.api, *RBAC_MANIFESTS, POLICY_CONFIGMAPS)
    apply_files(cluster.api, "podgroup-crd.yaml", directory=HERE)
    wait_for_api(cluster.api, "scheduling.x-k8s.io", "v1alpha1", "podgroups")


def wait_for_api(api: Any, group: str, version: str, resource: str,
                 timeout: float = 30.0) -> None:
    """Until the API server's discovery serves ``resource`` in ``group/version`` (a newly
    created CRD)."""
    from kubernetes import client

    custom: Any = client.CustomObjectsApi(api)
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(Exception):
            served = custom.get_api_resources(group, version)
            if any(r.name == resource for r in served.resources or []):
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"{resource}.{group}/{version} not served after {timeout} s")
        time.sleep(0.2)


# ------------------------------------------------------------------------------ identities


def mint_token(api: Any, namespace: str, service_account: str,
               seconds: int = TOKEN_SECONDS) -> str:
    """A ServiceAccount token from the TokenRequest API
    (POST serviceaccounts/<name>/token)."""
    from kubernetes import client

    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"expirationSeconds": seconds}}
    core: Any = client.CoreV1Api(api)
    answer = core.create_namespaced_service_account_token(
        service_account, namespace, request)
    return str(answer.status.token)


def write_kubeconfig(path: Path, cluster: Cluster, user: str, token: str) -> Path:
    ca = base64.b64encode(cluster.ca_cert.read_bytes()).decode()
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "policysched-e2e",
                      "cluster": {"server": cluster.url, "certificate-authority-data": ca}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": "policysched-e2e", "user": user}}],
        "current-context": user,
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return path


def service_account_kubeconfig(cluster: Cluster) -> Path:
    """A kubeconfig (in the cluster directory) with a token of the policysched
    ServiceAccount, minted through the TokenRequest API."""
    token = mint_token(cluster.api, SYSTEM_NAMESPACE, SERVICE_ACCOUNT)
    return write_kubeconfig(cluster.dir / "policysched-sa.kubeconfig", cluster,
                            f"system:serviceaccount:{SYSTEM_NAMESPACE}:{SERVICE_ACCOUNT}",
                            token)


def client_for(kubeconfig: Path) -> Any:
    from kubernetes import config

    return config.new_client_from_config(config_file=str(kubeconfig))


# ------------------------------------------------------------------------------ the scheduler


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def policysched_command() -> list[str]:
    script = Path(sys.executable).parent / "policysched"
    if script.exists():
        return [str(script)]
    found = shutil.which("policysched")
    if found is None:
        raise AssertionError("the policysched command is not installed (pip install -e .)")
    return [found]


def render_config(path: Path, *, port: int) -> Path:
    """deploy/scheduler-config.yaml for a local process: /healthz, /readyz and /metrics on
    127.0.0.1:port instead of every interface's :10259."""
    configuration = yaml.safe_load((DEPLOY / SCHEDULER_CONFIG).read_text())
    configuration["healthzBindAddress"] = f"127.0.0.1:{port}"
    path.write_text(yaml.safe_dump(configuration, sort_keys=False))
    return path


def http_get(url: str, timeout: float = 5.0) -> tuple[int, str]:
    """(status, body); status 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status), response.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return int(e.code), e.read().decode(errors="replace")
    except (urllib.error.URLError, OSError):
        return 0, ""


@dataclass
class SchedulerProcess:
    """``policysched run`` as a subprocess, its log in a file, its pid registered in the
    cluster directory (so ``cluster.sh down`` stops it too if the suite is interrupted)."""

    name: str
    cluster_dir: Path
    kubeconfig: Path
    config: Path
    port: int
    extra_args: tuple[str, ...] = ()
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    ready_seconds: float | None = None

    @property
    def log_path(self) -> Path:
        return self.cluster_dir / f"{self.name}.log"

    @property
    def pid_path(self) -> Path:
        return self.cluster_dir / f"{self.name}.pid"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [*policysched_command(), "run", "--kubeconfig", str(self.kubeconfig),
                "--config", str(self.config), "--leader-elect", *self.extra_args]

    def start(self) -> SchedulerProcess:
        env = dict(os.environ)
        env.pop("KUBECONFIG", None)
        env["PYTHONUNBUFFERED"] = "1"
        env["POD_NAMESPACE"] = SYSTEM_NAMESPACE  # as deploy/deployment.yaml sets it
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(self.command(), stdout=log,
                                            stderr=subprocess.STDOUT, env=env,
                                            cwd=str(self.cluster_dir),
                                            start_new_session=True)
        self.pid_path.write_text(f"{self.process.pid}\n")
        self.started_at = time.monotonic()
        return self

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def forbidden(self) -> list[str]:
        """Log lines of requests the API server refused (a missing RBAC permission)."""
        return [line for line in self.log_text().splitlines() if FORBIDDEN.search(line)]

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def get(self, path: str) -> tuple[int, str]:
        return http_get(self.url + path)

    def wait(self, what: str, check: Callable[[], bool], timeout: float) -> None:
        """Poll ``check`` (every 0.1 s) until it holds; fail with the log if the process
        exits or the time is up."""
        deadline = time.monotonic() + timeout
        while not check():
            if not self.running:
                raise AssertionError(f"{self.name} exited ({self.returncode()}) while "
                                     f"waiting for {what}; its log ends with:\n"
                                     f"{self.log_tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: timed out after {timeout:.0f} s waiting "
                                     f"for {what}; its log ends with:\n{self.log_tail()}")
            time.sleep(0.1)

    def leading(self, lease: str = f"{SYSTEM_NAMESPACE}/{LEASE_NAME}") -> bool | None:
        """Whether /metrics says this process holds ``lease`` (None: no answer)."""
        status, text = self.get("/metrics")
        if status != 200:
            return None
        return metric_value(text, LEADER_METRIC, {"name": lease}) == 1.0

    def wait_ready(self, lease: str | None = f"{SYSTEM_NAMESPACE}/{LEASE_NAME}",
                   timeout: float = READY_TIMEOUT) -> float:
        """Until the process leads ``lease`` (when given) and /readyz answers 200 (informers
        synced, policies loaded); returns the seconds since the start."""
        def ready() -> bool:
            # leading first: a standby is ready too, a new leader only once synced
            if lease is not None and not self.leading(lease):
                return False
            return self.get("/readyz")[0] == 200

        self.wait(f"leading {lease} and /readyz" if lease else "/readyz", ready, timeout)
        self.ready_seconds = time.monotonic() - self.started_at
        return self.ready_seconds

    def wait_healthy(self, timeout: float = READY_TIMEOUT) -> None:
        self.wait("/healthz", lambda: self.get("/healthz")[0] == 200, timeout)

    def metrics(self) -> str:
        status, text = self.get("/metrics")
        if status != 200:
            raise AssertionError(f"{self.name} /metrics answered {status}: {text[:500]}")
        return text

    def returncode(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> int | None:
        """Signal the process (TERM: graceful, releases the Lease) and reap it; KILL after
        ``timeout`` s."""
        process = self.process
        if process is None:
            return None
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(sig)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                process.wait(10)
        with contextlib.suppress(FileNotFoundError):
            self.pid_path.unlink()
        return process.returncode


# ------------------------------------------------------------------------------ metrics


def metric_value(text: str, name: str, labels: Mapping[str, str] | None = None) -> float | None:
    """The value of one sample of a Prometheus text exposition (None when absent)."""
    wanted = labels or {}
    for line in text.splitlines():
        if not line.startswith(name) or line.startswith("#"):
            continue
        match = re.match(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s+(\S+)", line)
        if match is None or match.group(1) != name:
            continue
        found = dict(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"',
                                match.group(3) or ""))
        if all(found.get(k) == v for k, v in wanted.items()):
            return float(match.group(4))
    return None


def metric_labels(text: str, name: str) -> list[dict[str, str]]:
    """The label sets of every sample of ``name``."""
    found = []
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\}\s+\S+", line)
        if match is not None and match.group(1) == name:
            found.append(dict(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"',
                                         match.group(2))))
    return found


# ------------------------------------------------------------------------------ waiting


def wait_for(list_fn: Callable[..., Any], *args: Any, predicate: Callable[[Any], bool],
             timeout: float, what: str, **kwargs: Any) -> Any:
    """The first object listed by ``list_fn(*args, **kwargs)`` (a client list method) that
    satisfies ``predicate``, now or as a watch reports it; AssertionError after
    ``timeout`` seconds."""
    from kubernetes import watch
    from kubernetes.client.exceptions import ApiException

    deadline = time.monotonic() + timeout
    resource_version: str | None = None
    while True:
        if resource_version is None:
            listing = list_fn(*args, **kwargs)
            for item in listing.items:
                if predicate(item):
                    return item
            resource_version = listing.metadata.resource_version
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        stream = watch.Watch()
        try:
            for event in stream.stream(list_fn, *args, resource_version=resource_version,
                                       timeout_seconds=max(1, int(remaining + 0.999)),
                                       allow_watch_bookmarks=True,
                                       _request_timeout=remaining + 10, **kwargs):
                obj = event["object"]
                if isinstance(obj, dict):  # an ERROR event the client did not raise
                    resource_version = None
                    break
                resource_version = obj.metadata.resource_version or resource_version
                if event["type"] in ("ADDED", "MODIFIED") and predicate(obj):
                    return obj
                if time.monotonic() > deadline:
                    break
        except ApiException as e:
            if e.status != 410:
                raise
            resource_version = None  # expired: list again
        finally:
            stream.stop()


def wait_for_pod(core: Any, namespace: str, name: str, predicate: Callable[[Any], bool],
                 timeout: float, what: str) -> Any:
    return wait_for(core.list_namespaced_pod, namespace, predicate=predicate, timeout=timeout,
                    what=f"pod {namespace}/{name}: {what}",
                    field_selector=f"metadata.name={name}")


def wait_for_deletion(core: Any, namespace: str, name: str, uid: str | None,
                      timeout: float) -> None:
    """Until the pod ``name`` (with ``uid``, when given) no longer exists."""
    from kubernetes import watch

    deadline = time.monotonic() + timeout
    selector = f"metadata.name={name}"
    while True:
        listing = core.list_namespaced_pod(namespace, field_selector=selector)
        if not [p for p in listing.items if uid is None or p.metadata.uid == uid]:
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"pod {namespace}/{name} still exists after {timeout:.0f} s")
        stream = watch.Watch()
        try:
            for event in stream.stream(core.list_namespaced_pod, namespace,
                                       field_selector=selector,
                                       resource_version=listing.metadata.resource_version,
                                       timeout_seconds=max(1, int(remaining + 0.999)),
                                       _request_timeout=remaining + 10):
                obj = event["object"]
                if (event["type"] == "DELETED" and not isinstance(obj, dict)
                        and (uid is None or obj.metadata.uid == uid)):
                    return
        except Exception:  # expired or cut: list again
            pass
        finally:
            stream.stop()


class PodTracker:
    """The pods of one namespace as a watch reports them, kept by a daemon thread that lists
    again after any error, so that it outlives an API server restart. ``wait_until`` checks
    a predicate on the latest state (name → pod) each time it changes."""

    RELIST_PAUSE = 0.2  # seconds between attempts while the API server is away
    WATCH_SECONDS = 30

    def __init__(self, api: Any, namespace: str) -> None:
        from kubernetes import client

        self.core: Any = client.CoreV1Api(api)
        self.namespace = namespace
        self.pods: dict[str, Any] = {}
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"pods-{namespace}",
                                        daemon=True)

    def __enter__(self) -> PodTracker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _update(self, pods: dict[str, Any]) -> None:
        with self._changed:
            self.pods = pods
            self._changed.notify_all()

    def wake(self) -> None:
        """Make ``wait_until`` check its predicate now."""
        with self._changed:
            self._changed.notify_all()

    def _run(self) -> None:
        from kubernetes import watch

        while not self._stop.is_set():
            stream = watch.Watch()
            try:
                listing = self.core.list_namespaced_pod(self.namespace, _request_timeout=30)
                pods = {p.metadata.name: p for p in listing.items}
                self._update(dict(pods))
                for event in stream.stream(
                        self.core.list_namespaced_pod, self.namespace,
                        resource_version=listing.metadata.resource_version,
                        timeout_seconds=self.WATCH_SECONDS,
                        _request_timeout=self.WATCH_SECONDS + 10):
                    obj = event["object"]
                    if self._stop.is_set() or isinstance(obj, dict):  # stopping, or ERROR
                        break
                    if event["type"] == "DELETED":
                        pods.pop(obj.metadata.name, None)
                    else:
                        pods[obj.metadata.name] = obj
                    self._update(dict(pods))
            except Exception:  # the API server is restarting, the watch expired…: list again
                self._stop.wait(self.RELIST_PAUSE)
            finally:
                stream.stop()

    def wait_until(self, predicate: Callable[[dict[str, Any]], bool], timeout: float,
                   what: str) -> dict[str, Any]:
        """The first state (name → pod) that satisfies ``predicate``; AssertionError with
        ``what`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self.pods):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} "
                                         f"in namespace {self.namespace}")
                self._changed.wait(min(remaining, 1.0))
            return self.pods


def is_bound(pod: Any) -> bool:
    return bool(pod.spec.node_name)


def scheduled_condition(pod: Any) -> Any:
    for condition in (pod.status.conditions or []) if pod.status else []:
        if condition.type == "PodScheduled":
            return condition
    return None


def unschedulable_with(text: str) -> Callable[[Any], bool]:
    """A predicate: the pod's PodScheduled condition is False/Unschedulable and its message
    contains ``text``."""
    def check(pod: Any) -> bool:
        condition = scheduled_condition(pod)
        return (condition is not None and condition.status == "False"
                and condition.reason == "Unschedulable" and text in (condition.message or ""))
    return check


ACTIVE_SET = "policysched_active_policy_set_info"
RELOAD_TIMEOUT = 15.0  # seconds for a policy change to become active (the goal is < 1 s)


def active_policy_version(metrics: str) -> str | None:
    """The version of the policy set the scheduler's /metrics says is active."""
    for labels in metric_labels(metrics, ACTIVE_SET):
        if metric_value(metrics, ACTIVE_SET, labels) == 1.0:
            return labels.get("version")
    return None


def wait_for_policy_version(scheduler: SchedulerProcess, check: Callable[[str], bool],
                            what: str) -> str:
    """Poll /metrics until the active policy set's version passes ``check``; that version."""
    found: list[str] = []

    def changed() -> bool:
        version = active_policy_version(scheduler.metrics())
        if version is not None and check(version):
            found.append(version)
            return True
        return False

    scheduler.wait(what, changed, RELOAD_TIMEOUT)
    return found[0]


def wait_for_event(events: Any, namespace: str, predicate: Callable[[Any], bool],
                   timeout: float, what: str) -> Any:
    return wait_for(events.list_namespaced_event, namespace, predicate=predicate,
                    timeout=timeout, what=what)


def policy_rejected_note(api: Any, configmap: str, resource_version: str,
                         namespace: str = SYSTEM_NAMESPACE) -> str:
    """The note of the PolicyRejected Warning Event on ``configmap`` at
    ``resource_version`` (waits for it)."""
    from kubernetes import client

    event = wait_for_event(
        client.EventsV1Api(api), namespace,
        lambda e: (e.reason == "PolicyRejected" and e.regarding.name == configmap
                   and e.regarding.resource_version == resource_version),
        RELOAD_TIMEOUT, f"a PolicyRejected event on ConfigMap {configmap}")
    assert event.type == "Warning"
    return str(event.note or "")


# ------------------------------------------------------------------------------ objects


def pod(name: str, *, scheduler_name: str = SCHEDULER_NAME, cpu: str = "100m",
        memory: str = "128Mi", labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None, priority_class: str | None = None,
        host_port: int | None = None, node_selector: Mapping[str, str] | None = None,
        tolerations: list[dict[str, Any]] | None = None,
        affinity: Mapping[str, Any] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "app", "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if host_port is not None:
        container["ports"] = [{"containerPort": 8080, "hostPort": host_port,
                               "protocol": "TCP"}]
    spec: dict[str, Any] = {"schedulerName": scheduler_name, "containers": [container],
                            "terminationGracePeriodSeconds": 0}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if tolerations:
        spec["tolerations"] = tolerations
    if affinity:
        spec["affinity"] = dict(affinity)
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def node(name: str, *, labels: Mapping[str, str] | None = None, cpu: str = "4",
         memory: str = "32Gi", taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """A KWOK fake node like deploy/local/node-template.json's (kwok keeps it Ready)."""
    template = json.loads((REPO / "deploy" / "local" / "node-template.json").read_text()
                          .replace("${NAME}", name).replace("${ZONE}", "zone-e2e"))
    template["metadata"]["labels"].update(labels or {})
    template["metadata"]["labels"]["type"] = "e2e"  # not one of cluster.sh's type=kwok nodes
    resources = {"cpu": cpu, "memory": memory, "pods": "110"}
    template["status"]["allocatable"] = dict(resources)
    template["status"]["capacity"] = dict(resources)
    if taints:
        template["spec"]["taints"] = taints
    return dict(template)


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"
