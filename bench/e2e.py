"""End-to-end benchmark: policysched and the reference kube-scheduler, side by side.

A program, not a test: ``make bench-e2e`` (or ``python bench/e2e.py --nodes 1000 5000
--pods 2000 --workloads basic pod-anti-affinity topology-spread --repeat 5``). For each node
count it
starts a private control plane with ``deploy/local/cluster.sh`` in a temporary
``CLUSTER_DIR`` (etcd, kube-apiserver, KWOK; the nodes are scheduler_perf's: 4 CPU / 32 Gi /
110 pods, kept Ready by KWOK), and on it runs each workload in turn — scheduler_perf's
SchedulingBasic, SchedulingPodAntiAffinity and TopologySpreading by default, with the pod
templates, node zones and init pods of ``bench/workloads.py`` (its docstring has the table):

1. the nodes' ``topology.kubernetes.io/zone`` labels are set as the workload wants
   (round-robin: zone-a/b/c, or moon-1/2/3 for topology-spread; only nodes whose label
   differs are patched, so the default order relabels once);
2. the workload's init pods are created already bound (``spec.nodeName``, pod i on node
   i mod N, in the init namespace: namespace-1, or sched-0 for anti-affinity) and the
   benchmark waits until KWOK reports them Running, so neither scheduler's window pays for
   that churn;
3. ``policysched run`` (the built-in configuration and policies, profile ``policysched``,
   the admin kubeconfig — a benchmark needs no ServiceAccount) schedules the measured pods
   (``--pods``; anti-affinity: at most one per node free of init pods) in the measured
   namespace (namespace-2, or sched-1);
4. it is stopped, its pods are deleted, and the reference kube-scheduler built from the same
   Kubernetes release (``cluster.sh start-scheduler``, default profile) schedules the same
   pods, same names, same namespace, same init pods;
5. steps 3-4 are repeated ``--repeat`` times (default 5: the machine is noisy), which
   scheduler goes first alternating (policysched, kube-scheduler, kube-scheduler,
   policysched, …), the measured pods deleted after every run;
6. both namespaces are emptied for the next workload.

Both get the same client QPS/burst (``--qps``/``--burst``, scheduler_perf-like 5000/5000:
``policysched run --qps/--burst`` and the kube-scheduler's ``clientConnection``).

Measured like scheduler_perf: the pods are created from a thread pool with keep-alive
connections while the scheduler runs; a watch of the namespace records when each pod's
``spec.nodeName`` is first seen set. Reported: throughput (bound pods over the window first
create → last bind, and per-second samples with scheduler_perf's SchedulingThroughput
percentiles), create→bind latency p50/p99 (from the moment the create request was sent), the
scheduler's peak RSS (``VmHWM``), and the CPU seconds each process used during the window
(the scheduler's CPU per pod is the efficiency figure that does not depend on how busy the
control plane is; "other processes" is the rest of the machine), and policysched's CPU per
thread (``/proc/<pid>/task/<tid>/stat`` and ``comm``: policysched names its OS threads,
policysched/threads.py) in groups: MainThread (the scheduling loop), informer-<resource>,
http-multiplex (the thread multiplexing the binds), binder-* (every thread of a bind that
waits for volumes), event-recorder, others. With several runs, the tables show
each figure's median over the runs with its min-max, and the ratios are those of the
medians. A run that does not finish
in ``--timeout`` seconds (or makes no progress for ``--stall`` seconds) is cut and reports
how many pods were bound. After each run the final pod → node map (init and measured pods)
is checked (``workloads.placement_violations``): no node over its allocatable CPU, memory or
pods, every DoNotSchedule spread constraint within its maxSkew, no required anti-affinity
broken — the "constraints held" column.

KWOK runs without node leases (``KWOK_NODE_LEASE_SECONDS=0``): with leases, kwok v0.7.0
renews one Lease per node every 10 s *and* heartbeats node status every 20-25 s — about one
core of apiserver/etcd/kwok work at 1000 idle nodes, more than this 2-core machine has at 5000.
Without, node status is refreshed every ~10 min, so nodes stay Ready at no cost and the
schedulers see no node churn, as with scheduler_perf's static nodes.

The output ends with one line per metric, node count and workload (ratios of the medians):
``e2e throughput ratio policysched/kube-scheduler @N nodes: R`` for basic,
``e2e throughput ratio policysched/kube-scheduler <workload> @N nodes: R`` for the others,
then the same for ``cpu per pod``, ``p99 latency`` and ``peak rss``.
For reuse: ``run(nodes, pods, workloads=..., repeat=...)`` (``pods``: one count, or one per
workload), ``format_table(results)``, ``ratio_lines(results)``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import hashlib
import http.client
import json
import math
import os
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import yaml
from workloads import WORKLOADS, ZONE, PodTemplate, Workload, placement_violations  # bench/

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.e2e import support  # noqa: E402  (the e2e suite's cluster.sh helpers)

CLUSTER_SH = support.CLUSTER_SH
POLICIES = REPO / "policies"
BUILTIN_CONFIG = POLICIES / "scheduler-config.yaml"

POLICYSCHED = "policysched"
KUBE_SCHEDULER = "kube-scheduler"
SCHEDULER_NAMES = {POLICYSCHED: "policysched", KUBE_SCHEDULER: "default-scheduler"}
MACHINE = "machine"  # cpu_snapshot's key for the whole machine's busy CPU seconds
OTHERS = "other processes"  # the machine's busy CPU not used by any process above

DEFAULT_NODES = (1000, 5000)
DEFAULT_PODS = 2000
# the default order relabels the nodes' zones once (topology-spread's moon-1/2/3 last)
DEFAULT_WORKLOADS = ("basic", "pod-anti-affinity", "topology-spread")
DEFAULT_QPS = 5000.0
DEFAULT_BURST = 5000
DEFAULT_WORKERS = 32  # pod-creating threads (one keep-alive connection each)
DEFAULT_TIMEOUT = 600.0  # seconds per scheduler run
DEFAULT_STALL = 120.0  # seconds without a new binding (all pods created) → cut the run
DEFAULT_REPEAT = 5  # runs of each scheduler per workload: 3 took 19 min for 1,000 + 5,000 nodes

BUILD_TIMEOUT = 3600.0  # a cold build: ~18 min measured on 2 cores
UP_ATTEMPTS = 2  # a start-up can lose a race for a port on a busy machine: one retry
READY_TIMEOUT = 600.0  # seconds for a scheduler to list the cluster and report ready
STOP_TIMEOUT = 20.0
DELETE_TIMEOUT = 300.0
INIT_RUNNING_TIMEOUT = 120.0  # + 1 s per 20 init pods: KWOK marking them Running
MERGE_PATCH = "application/merge-patch+json"
PROGRESS_EVERY = 10.0  # seconds between progress lines on stderr
# Rough memory need of a cluster (etcd, apiserver, kwok, one scheduler, this program), with
# a margin: peaks measured at 5000 nodes were kube-apiserver 830, etcd 120, kwok 150,
# policysched 270-690 MiB. Only used to refuse a node count up front.
MEMORY_BASE_MIB = 1024
MEMORY_PER_NODE_MIB = 0.6

_T0 = time.monotonic()


def home_relative(path: str) -> str:
    """``path`` with the home directory written ``~`` (reports name no machine's paths)."""
    home = str(Path.home())
    return "~" + path[len(home):] if path.startswith(home + os.sep) else path


def progress(message: str) -> None:
    """A progress line on stderr (the results go to stdout)."""
    print(f"[e2e {time.monotonic() - _T0:7.1f}s] {message}", file=sys.stderr, flush=True)


class BenchError(RuntimeError):
    """A step of the benchmark failed; the message says which and why."""


# ------------------------------------------------------------------------------ results


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile (scheduler_perf's: sorted[ceil(n·p/100) - 1]); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(len(ordered) * p / 100) - 1)]


@dataclass
class SchedulerResult:
    """One scheduler scheduling ``pods`` pods of ``workload`` on ``nodes`` nodes."""

    scheduler: str  # POLICYSCHED or KUBE_SCHEDULER
    workload: str
    nodes: int
    pods: int
    created: int = 0
    bound: int = 0
    note: str = ""  # why the run was cut, or another caveat
    ready_seconds: float = 0.0  # scheduler start → ready (informers synced)
    create_seconds: float = 0.0  # first create sent → last create answered
    create_ms: list[float] = field(default_factory=list, repr=False)  # per pod, client side
    window_seconds: float = 0.0  # first create sent → last bind seen
    samples: list[float] = field(default_factory=list)  # pods/s, one per full second
    latencies: list[float] = field(default_factory=list, repr=False)  # create → bind, s
    peak_rss_mib: float | None = None
    cpu_seconds: dict[str, float] = field(default_factory=dict)  # process → CPU s in window
    wall_seconds: float = 0.0  # this scheduler's whole turn: start, measure, stop
    qps: float = 0.0
    burst: int = 0
    load_average: float = 0.0  # 1-minute load average at the end of the window
    code: str = ""  # which code ran: a digest of the policysched sources, or the binary
    violations: list[str] | None = None  # placement_violations of the end state (None: unchecked)
    repetition: int = 0  # which run of this scheduler on this workload (0, 1, …)
    threads: dict[str, float] = field(default_factory=dict)  # thread group → CPU s in window

    @property
    def complete(self) -> bool:
        return self.bound == self.pods

    @property
    def constraints_held(self) -> str:
        """yes / no (the final placement checked), - (not checked)."""
        return "-" if self.violations is None else "no" if self.violations else "yes"

    @property
    def throughput(self) -> float:
        """Average pods/s over the window (first create → last bind)."""
        return self.bound / self.window_seconds if self.window_seconds > 0 else 0.0

    @property
    def create_rate(self) -> float:
        return self.created / self.create_seconds if self.create_seconds > 0 else 0.0

    def sample(self, p: float) -> float | None:
        return percentile(self.samples, p)

    def latency(self, p: float) -> float | None:
        return percentile(self.latencies, p)

    def create_latency_ms(self, p: float) -> float | None:
        return percentile(self.create_ms, p)

    @property
    def cpu_ms_per_pod(self) -> float | None:
        """The scheduler's own CPU time per bound pod (independent of how busy the control
        plane is: the efficiency figure on a small machine)."""
        seconds = self.cpu_seconds.get(self.scheduler)
        return seconds * 1e3 / self.bound if seconds is not None and self.bound else None

    def thread_ms_per_pod(self, group: str) -> float | None:
        """CPU ms per bound pod of one of ``THREAD_GROUPS`` (policysched only)."""
        seconds = self.threads.get(group)
        return seconds * 1e3 / self.bound if seconds is not None and self.bound else None


METRICS: dict[str, Callable[[SchedulerResult], float | None]] = {
    "throughput": lambda r: r.throughput,
    "sample p50": lambda r: r.sample(50),
    "sample p90": lambda r: r.sample(90),
    "sample p99": lambda r: r.sample(99),
    "p50": lambda r: r.latency(50),
    "p99": lambda r: r.latency(99),
    "rss": lambda r: r.peak_rss_mib,
    "cpu": lambda r: r.cpu_ms_per_pod,
    "creates": lambda r: r.create_rate,
}
"""What the tables show per run, by name; over repetitions: the median and min-max."""


@dataclass(frozen=True)
class Spread:
    """One metric over the repetitions of a scheduler's runs."""

    median: float
    low: float
    high: float
    count: int

    @classmethod
    def of(cls, values: Sequence[float | None]) -> Spread | None:
        known = [v for v in values if v is not None]
        if not known:
            return None
        return cls(statistics.median(known), min(known), max(known), len(known))


@dataclass
class WorkloadResult:
    """Both schedulers on one workload, taking turns on the same cluster, ``repeat`` runs
    each."""

    workload: str
    nodes: int
    pods: int  # measured pods per scheduler (capped for anti-affinity)
    init_pods: int
    runs: list[SchedulerResult] = field(default_factory=list)
    problem: str = ""  # why it could not be measured (completely)
    setup_seconds: float = 0.0  # node labels, init pods created and Running
    setup_note: str = ""
    wall_seconds: float = 0.0
    repeat: int = 1  # runs of each scheduler

    def results(self, scheduler: str) -> list[SchedulerResult]:
        return [r for r in self.runs if r.scheduler == scheduler]

    def spread(self, scheduler: str, metric: str) -> Spread | None:
        """A ``METRICS`` entry over ``scheduler``'s runs."""
        return Spread.of([METRICS[metric](r) for r in self.results(scheduler)])

    def ratio(self, metric: str) -> float | None:
        """policysched / kube-scheduler of the medians of a ``METRICS`` entry (e.g.
        ``throughput``, ``p99``, ``rss``, ``cpu``: scheduler CPU ms per pod)."""
        mine, ref = self.spread(POLICYSCHED, metric), self.spread(KUBE_SCHEDULER, metric)
        if mine is None or ref is None or ref.median == 0:
            return None
        return mine.median / ref.median

    @property
    def measured(self) -> bool:
        """Both schedulers ran every repetition and bound every pod each time."""
        return (not self.problem and all(len(self.results(s)) == self.repeat
                                         for s in (POLICYSCHED, KUBE_SCHEDULER))
                and all(r.complete for r in self.runs))


@dataclass
class NodeCountResult:
    """Every workload at one node count, on one private cluster."""

    nodes: int
    workloads: list[WorkloadResult] = field(default_factory=list)
    problem: str = ""  # why this node count could not be measured (completely)
    kube_version: str = ""  # the apiserver's /version gitVersion
    versions: str = ""  # the cluster's pinned versions (cluster.env)
    cluster_up_seconds: float = 0.0
    control_plane_rss_mib: dict[str, float] = field(default_factory=dict)  # peak (VmHWM)
    wall_seconds: float = 0.0


# ------------------------------------------------------------------------------ the API


class Api:
    """A minimal Kubernetes API client: http.client, one keep-alive TLS connection per
    thread, bearer token (the admin identity of cluster.sh's cluster.env)."""

    def __init__(self, url: str, token: str, ca_file: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 443
        self.token = token
        self.context = ssl.create_default_context(cafile=ca_file)
        self.local = threading.local()

    def connection(self, timeout: float = 60.0) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                           timeout=timeout)

    def headers(self, body: bytes | None,
                content_type: str = "application/json") -> dict[str, str]:
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        return headers

    def call(self, method: str, path: str, body: Any = None,
             content_type: str = "application/json") -> tuple[int, Any]:
        """(status, decoded JSON body); retried on a broken connection."""
        data = None if body is None else (body if isinstance(body, bytes)
                                          else json.dumps(body).encode())
        for attempt in range(3):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = self.connection()
            try:
                conn.request(method, path, body=data, headers=self.headers(data, content_type))
                response = conn.getresponse()
                raw = response.read()
                return response.status, (json.loads(raw) if raw else {})
            except (http.client.HTTPException, OSError):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                time.sleep(0.2)
        raise AssertionError("unreachable")

    def list(self, path: str, query: str = "") -> list[dict[str, Any]]:
        """Every item of a collection, in pages of 1000."""
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            page = self.must("GET", f"{path}?limit=1000{'&' + query if query else ''}"
                             f"{'&continue=' + urllib.parse.quote(token) if token else ''}")
            items += page.get("items", [])
            token = page.get("metadata", {}).get("continue", "")
            if not token:
                return items

    def must(self, method: str, path: str, body: Any = None,
             ok: tuple[int, ...] = (200, 201), content_type: str = "application/json") -> Any:
        status, obj = self.call(method, path, body, content_type)
        if status not in ok:
            message = obj.get("message", obj) if isinstance(obj, dict) else obj
            raise BenchError(f"{method} {path}: HTTP {status}: {message}")
        return obj


# ------------------------------------------------------------------------------ processes


def proc_status_kib(pid: int, key: str) -> int | None:
    """A ``kB`` field of /proc/<pid>/status (VmHWM, VmRSS); None once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def proc_cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process (all its threads), from /proc/<pid>/stat."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


MAIN_THREAD = "MainThread"  # the thread whose tid is the pid (its comm is the process's name)
BINDERS = "binder-*"  # policysched's bind threads, together (binds that wait for volumes)
MULTIPLEXER = "http-multiplex"  # the thread that carries out every plain bind
OTHER_THREADS = "others"  # every other live thread (health server, reload, leader, …)
UNATTRIBUTED = "unattributed"  # the process's CPU beyond its live threads' in the window
MINOR_THREAD_MS = 0.01  # a thread group under this CPU ms per pod is counted in "others"


@dataclass(frozen=True)
class ThreadTimes:
    """The CPU seconds of a process and of each of its live threads, read together."""

    process: float | None
    threads: dict[int, tuple[str, float]]  # tid → (OS thread name, utime + stime)


def thread_cpu_seconds(pid: int) -> ThreadTimes:
    """The CPU time of ``pid`` and of each of its live threads (/proc/<pid>/task/<tid>/comm
    and stat; policysched names its threads, see policysched/threads.py)."""
    threads: dict[int, tuple[str, float]] = {}
    times = ThreadTimes(proc_cpu_seconds(pid), threads)
    tick = os.sysconf("SC_CLK_TCK")
    try:
        tids = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        return times
    for tid in tids:
        task = Path(f"/proc/{pid}/task/{tid}")
        try:
            comm = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            threads[tid] = (comm, (int(fields[11]) + int(fields[12])) / tick)
        except (OSError, ValueError, IndexError):
            continue  # the thread ended meanwhile
    return times


def thread_group(pid: int, tid: int, comm: str) -> str:
    """The per-thread table's row of one thread: MainThread, binder-* (all bind threads),
    http-multiplex (the binds' multiplexer), informer-<resource> (one each; a long name is
    cut to 15 bytes), event-recorder, others."""
    if tid == pid:
        return MAIN_THREAD
    if comm.startswith("binder-"):
        return BINDERS
    if (comm.startswith("informer-") or comm == "event-recorder"
            or comm == MULTIPLEXER):
        return comm
    return OTHER_THREADS


def thread_cpu_by_group(pid: int, before: ThreadTimes, after: ThreadTimes) -> dict[str, float]:
    """CPU seconds of each thread group between two ``thread_cpu_seconds``; a thread born
    in between counts from 0, and what the process used beyond its live threads is
    ``UNATTRIBUTED``: threads that ended in between, and the kernel's per-thread figures
    being cut to whole clock ticks (up to one tick per thread: ~0.15 s for 16 binders)."""
    groups: dict[str, float] = {}
    for tid, (comm, seconds) in after.threads.items():
        used = seconds - (before.threads[tid][1] if tid in before.threads else 0.0)
        group = thread_group(pid, tid, comm)
        groups[group] = groups.get(group, 0.0) + max(0.0, used)
    if after.process is not None and before.process is not None:
        gone = after.process - before.process - sum(groups.values())
        if gone > 0:
            groups[UNATTRIBUTED] = gone
    return groups


def self_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent busy since boot (every core; /proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def is_cluster_process(pid: int, cluster_dir: Path) -> bool:
    """Whether ``pid`` is alive and one of this cluster's processes (its command line
    mentions the cluster directory, as cluster.sh's pid_of checks)."""
    try:
        return str(cluster_dir) in Path(f"/proc/{pid}/cmdline").read_bytes().decode(
            errors="replace")
    except OSError:
        return False


def http_status(url: str, token: str | None = None, timeout: float = 5.0) -> int:
    """The status of a GET (0 when nothing answers); TLS is not verified (loopback,
    self-signed serving certificates of the schedulers)."""
    parts = urllib.parse.urlsplit(url)
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(parts.hostname or "127.0.0.1", parts.port,
                                           timeout=timeout,
                                           context=ssl._create_unverified_context())
    else:
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port,
                                          timeout=timeout)
    try:
        conn.request("GET", parts.path or "/",
                     headers={"Authorization": f"Bearer {token}"} if token else {})
        response = conn.getresponse()
        response.read()
        return int(response.status)
    except (http.client.HTTPException, OSError):
        return 0
    finally:
        conn.close()


# ------------------------------------------------------------------------------ the cluster


@dataclass
class Cluster:
    """A private control plane of cluster.sh in ``dir``."""

    dir: Path
    env: dict[str, str]
    api: Api
    up_seconds: float

    def pid(self, name: str) -> int | None:
        """The pid of a process cluster.sh registered (etcd, kube-apiserver, kwok, …)."""
        try:
            pid = int((self.dir / f"{name}.pid").read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if is_cluster_process(pid, self.dir) else None


def script_env(cluster_dir: Path) -> dict[str, str]:
    """The e2e suite's environment of cluster.sh, without node leases."""
    env = support.script_env(cluster_dir)
    # No node leases: KWOK v0.7.0 then heartbeats node status every ~10 min (instead of
    # every 20-25 s plus a lease update every 10 s per node), so idle nodes cost nothing
    # and the schedulers see no node churn — as scheduler_perf's static nodes.
    env["KWOK_NODE_LEASE_SECONDS"] = "0"
    return env


def memory_problem(nodes: int) -> str:
    """Why this machine cannot hold ``nodes`` KWOK nodes plus a scheduler ("" if it can)."""
    available = proc_meminfo_mib("MemAvailable")
    needed = MEMORY_BASE_MIB + MEMORY_PER_NODE_MIB * nodes
    if available is not None and available < needed:
        return (f"this machine cannot hold {nodes} KWOK nodes: about {needed:.0f} MiB of "
                f"memory needed (etcd, kube-apiserver, kwok, a scheduler), "
                f"{available:.0f} MiB available")
    return ""


def proc_meminfo_mib(key: str) -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def build_binaries() -> None:
    """``cluster.sh build``: instant when ~/.cache/policysched holds the binaries, about
    18 min on 2 cores when it is cold (its step lines go to stderr)."""
    progress("cluster.sh build (cached binaries: instant)")
    try:
        done = subprocess.run([str(CLUSTER_SH), "build"], stdout=sys.stderr, stderr=sys.stderr,
                              timeout=BUILD_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise BenchError(f"cluster.sh build took more than {BUILD_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        raise BenchError(f"cluster.sh build failed (exit {done.returncode}), see above")


def cluster_up(cluster_dir: Path, nodes: int) -> Cluster:
    """``cluster.sh up --nodes N`` (its output in ``<dir>-up.log``); one retry."""
    failures: list[str] = []
    for attempt in range(UP_ATTEMPTS):
        cluster_dir.mkdir(parents=True, exist_ok=True)
        log_path = cluster_dir.with_name(cluster_dir.name + "-up.log")
        progress(f"cluster.sh up --nodes {nodes} (CLUSTER_DIR={cluster_dir})")
        started = time.monotonic()
        with log_path.open("w") as log:
            try:
                done = subprocess.run([str(CLUSTER_SH), "up", "--nodes", str(nodes)],
                                      env=script_env(cluster_dir), stdout=log,
                                      stderr=subprocess.STDOUT,
                                      timeout=600 + nodes / 5, check=False)
                code = done.returncode
            except subprocess.TimeoutExpired:
                code = -1
        seconds = time.monotonic() - started
        if code == 0:
            env = support.read_cluster_env(cluster_dir)
            progress(f"cluster up in {seconds:.1f} s")
            return Cluster(cluster_dir, env, Api(env["APISERVER_URL"], env["ADMIN_TOKEN"],
                                                 env["CA_CERT"]), seconds)
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-15:])
        failures.append(f"attempt {attempt + 1}: {'timed out' if code == -1 else f'exit {code}'}"
                        f" after {seconds:.0f} s; {log_path} ends with:\n{tail}")
        progress(f"cluster.sh up failed ({failures[-1].splitlines()[0]})")
        cluster_down(cluster_dir)
    raise BenchError(f"could not bring up a cluster with {nodes} KWOK nodes:\n"
                     + "\n".join(failures))


def cluster_down(cluster_dir: Path) -> None:
    """``cluster.sh down``: stops every process registered in ``cluster_dir``."""
    if not (cluster_dir / "cluster.env").exists():
        return
    progress(f"cluster.sh down ({cluster_dir})")
    subprocess.run([str(CLUSTER_SH), "down"], env=script_env(cluster_dir),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180,
                   check=False)


def kwok_nodes(api: Api) -> list[dict[str, Any]]:
    """cluster.sh's KWOK nodes in the order it created them (kwok-node-0, -1, …)."""
    items = api.list("/api/v1/nodes", "labelSelector=type%3Dkwok")
    return sorted(items, key=lambda n: (len(n["metadata"]["name"]), n["metadata"]["name"]))


def ready_nodes(api: Api) -> int:
    items = kwok_nodes(api)
    return sum(1 for node in items for c in node.get("status", {}).get("conditions", [])
               if c.get("type") == "Ready" and c.get("status") == "True"
               and not node.get("spec", {}).get("taints"))


# ------------------------------------------------------------------------------ schedulers


@dataclass
class RunningScheduler:
    """A scheduler process under test: its pid (for VmHWM) and how to stop it."""

    name: str
    pid: int
    cluster: Cluster
    ready_seconds: float
    log_path: Path
    process: subprocess.Popen[bytes] | None = None  # policysched (our child)
    code: str = ""  # SchedulerResult.code

    def alive(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        return is_cluster_process(self.pid, self.cluster.dir)

    def stop(self) -> None:
        """TERM, KILL after STOP_TIMEOUT s; only a pid this cluster registered."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(10)
        elif is_cluster_process(self.pid, self.cluster.dir):
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + STOP_TIMEOUT
            while is_cluster_process(self.pid, self.cluster.dir) and time.monotonic() < deadline:
                time.sleep(0.1)
            if is_cluster_process(self.pid, self.cluster.dir):
                os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(FileNotFoundError):
            (self.cluster.dir / f"{self.name}.pid").unlink()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def wait_ready(scheduler: RunningScheduler, url: str, started: float,
               token: str | None = None) -> None:
    deadline = started + READY_TIMEOUT
    while http_status(url, token) != 200:
        if not scheduler.alive():
            raise BenchError(f"{scheduler.name} exited before it was ready; its log "
                             f"({scheduler.log_path}) ends with:\n{scheduler.log_tail()}")
        if time.monotonic() > deadline:
            raise BenchError(f"{scheduler.name} not ready after {READY_TIMEOUT:.0f} s "
                             f"({url}); its log ends with:\n{scheduler.log_tail()}")
        time.sleep(0.2)
    scheduler.ready_seconds = time.monotonic() - started


def source_digest() -> str:
    """A digest of the policysched package and the built-in policies as they are now: the
    editable install runs the working tree, so this says which code a run measured."""
    digest = hashlib.sha256()
    files = sorted([*(REPO / "policysched").rglob("*.py"), *POLICIES.rglob("*.yaml")])
    for path in files:
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return f"sources sha256 {digest.hexdigest()[:12]} ({len(files)} files)"


def start_policysched(cluster: Cluster, qps: float, burst: int) -> RunningScheduler:
    """``policysched run`` with the built-in configuration and policies (profile
    ``policysched``), the admin kubeconfig, no leader election, /readyz on a free loopback
    port; ready once its informers are synced and the policies loaded."""
    port = support.free_port()
    configuration = yaml.safe_load(BUILTIN_CONFIG.read_text())
    configuration["policySources"] = {"directories": [str(POLICIES)]}
    configuration["healthzBindAddress"] = f"127.0.0.1:{port}"
    config_path = cluster.dir / "policysched-config.yaml"
    config_path.write_text(yaml.safe_dump(configuration, sort_keys=False))
    command = [*support.policysched_command(), "run",
               "--kubeconfig", str(cluster.dir / "kubeconfig"),
               "--config", str(config_path), "--no-leader-elect",
               "--qps", str(qps), "--burst", str(burst)]
    env = dict(os.environ)
    env.pop("KUBECONFIG", None)
    env["PYTHONUNBUFFERED"] = "1"
    log_path = cluster.dir / "policysched.log"
    code = source_digest()
    progress(f"start policysched run (qps {qps:g}, burst {burst}; {code})")
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   cwd=str(cluster.dir), start_new_session=True)
    # registered like cluster.sh's daemons, so `cluster.sh down` stops it if we die
    (cluster.dir / "policysched.pid").write_text(f"{process.pid}\n")
    scheduler = RunningScheduler("policysched", process.pid, cluster, 0.0, log_path, process,
                                 code)
    try:
        wait_ready(scheduler, f"http://127.0.0.1:{port}/readyz", started)
    except BaseException:
        scheduler.stop()
        raise
    progress(f"policysched ready in {scheduler.ready_seconds:.1f} s (pid {process.pid})")
    return scheduler


def start_kube_scheduler(cluster: Cluster, qps: float, burst: int) -> RunningScheduler:
    """``cluster.sh start-scheduler`` with a KubeSchedulerConfiguration of our own (the
    default profile, ``clientConnection`` qps/burst as policysched's), passed as a second
    ``--config`` (the last one wins); ready when its /readyz (informers synced) is 200."""
    config_path = cluster.dir / "bench-kube-scheduler-config.yaml"
    config_path.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(cluster.dir / "kubeconfig"),
                             "qps": qps, "burst": burst},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": SCHEDULER_NAMES[KUBE_SCHEDULER]}],
    }, sort_keys=False))
    progress(f"cluster.sh start-scheduler (qps {qps:g}, burst {burst})")
    started = time.monotonic()
    done = subprocess.run([str(CLUSTER_SH), "start-scheduler", "--config", str(config_path)],
                          env=script_env(cluster.dir), capture_output=True, text=True,
                          timeout=120, check=False)
    cluster.env.update(support.read_cluster_env(cluster.dir))  # its port may be a new one
    pid = cluster.pid("kube-scheduler")
    if pid is None:
        raise BenchError(f"cluster.sh start-scheduler failed (exit {done.returncode}):\n"
                         f"{done.stderr[-2000:]}")
    scheduler = RunningScheduler("kube-scheduler", pid, cluster, 0.0,
                                 cluster.dir / "kube-scheduler.log",
                                 code=f"{cluster.env['KUBE_VERSION']} "
                                      f"({home_relative(cluster.env['KUBE_SCHEDULER_BIN'])})")
    try:
        port = cluster.env["SCHEDULER_PORT"]
        wait_ready(scheduler, f"https://127.0.0.1:{port}/readyz", started)
        configz = kube_scheduler_configz(cluster)
        # (/configz serialises the internal type: ClientConnection.QPS / .Burst)
        connection = configz.get("ClientConnection") or configz.get("clientConnection") or {}
        effective = (float(connection.get("QPS", connection.get("qps", -1))),
                     int(connection.get("Burst", connection.get("burst", -1))))
        if effective != (qps, burst):
            raise BenchError(f"kube-scheduler runs with clientConnection {connection}, "
                             f"not qps {qps:g} / burst {burst} (/configz)")
    except BaseException:
        scheduler.stop()
        raise
    progress(f"kube-scheduler ready in {scheduler.ready_seconds:.1f} s (pid {pid})")
    return scheduler


def kube_scheduler_configz(cluster: Cluster) -> dict[str, Any]:
    """The running kube-scheduler's effective configuration (its /configz)."""
    conn = http.client.HTTPSConnection("127.0.0.1", int(cluster.env["SCHEDULER_PORT"]),
                                       timeout=10, context=ssl._create_unverified_context())
    try:
        conn.request("GET", "/configz",
                     headers={"Authorization": f"Bearer {cluster.env['ADMIN_TOKEN']}"})
        body = json.loads(conn.getresponse().read() or b"{}")
    except (http.client.HTTPException, OSError, ValueError):
        return {}
    finally:
        conn.close()
    return dict(body.get("componentconfig", {})) if isinstance(body, dict) else {}


# ------------------------------------------------------------------------------ measuring


class BindWatcher:
    """Watches the pods of one namespace and records the moment (``time.perf_counter``)
    each pod's ``spec.nodeName`` is first seen set."""

    def __init__(self, api: Api, namespace: str) -> None:
        self.api = api
        self.namespace = namespace
        self.bound: dict[str, float] = {}
        self.relisted = 0  # bindings only seen by a relist (their time is less exact)
        self.resource_version = ""
        self.stopping = threading.Event()
        self.conn: http.client.HTTPSConnection | None = None
        self.thread = threading.Thread(target=self._run, name="bind-watcher", daemon=True)
        self.error: str = ""

    def start(self) -> BindWatcher:
        self._list()
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        conn = self.conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(10)

    def _list(self) -> None:
        listing = self.api.must("GET", f"/api/v1/namespaces/{self.namespace}/pods")
        now = time.perf_counter()
        for pod in listing.get("items", []):
            name = pod["metadata"]["name"]
            if pod.get("spec", {}).get("nodeName") and name not in self.bound:
                self.bound[name] = now
                self.relisted += 1
        self.resource_version = listing["metadata"]["resourceVersion"]

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                self._watch()
            except (http.client.HTTPException, OSError, ValueError) as e:
                if self.stopping.is_set():
                    return
                self.error = f"{type(e).__name__}: {e}"
                time.sleep(0.2)
            except _Expired:
                try:
                    self._list()
                except (BenchError, http.client.HTTPException, OSError) as e:
                    self.error = str(e)
                    time.sleep(0.5)

    def _watch(self) -> None:
        query = urllib.parse.urlencode({"watch": "1", "allowWatchBookmarks": "true",
                                        "resourceVersion": self.resource_version,
                                        "timeoutSeconds": "3600"})
        conn = self.conn = self.api.connection(timeout=3700)
        try:
            conn.request("GET", f"/api/v1/namespaces/{self.namespace}/pods?{query}",
                         headers=self.api.headers(None))
            response = conn.getresponse()
            if response.status == 410:
                raise _Expired()
            if response.status != 200:
                raise OSError(f"watch: HTTP {response.status}: {response.read()[:300]!r}")
            while not self.stopping.is_set():
                line = response.readline()
                if not line:
                    return  # the server closed the watch: resume from resource_version
                now = time.perf_counter()
                event = json.loads(line)
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    if obj.get("code") == 410:
                        raise _Expired()
                    raise OSError(f"watch error: {obj.get('message')}")
                metadata = obj.get("metadata", {})
                self.resource_version = metadata.get("resourceVersion") or \
                    self.resource_version
                if event.get("type") in ("ADDED", "MODIFIED") \
                        and obj.get("spec", {}).get("nodeName") \
                        and metadata.get("name") not in self.bound:
                    self.bound[metadata["name"]] = now
        finally:
            conn.close()
            self.conn = None


class _Expired(Exception):
    """The watch's resourceVersion is too old (410 Gone): list again."""


def pod_body(template: PodTemplate, name: str, namespace: str, scheduler_name: str,
             node: str | None = None) -> bytes:
    """The create request of a bench/workloads.py ``template``'s pod for ``scheduler_name``,
    deleted at once (grace period 0)."""
    pod = template(name, namespace, node)
    pod["metadata"].pop("creationTimestamp", None)  # the apiserver's to set
    pod["spec"]["schedulerName"] = scheduler_name
    pod["spec"]["terminationGracePeriodSeconds"] = 0
    return json.dumps(pod).encode()


@dataclass
class Creator:
    """Creates ``count`` pods from a thread pool (one keep-alive connection per thread),
    recording when each create request was sent and answered (``time.perf_counter``).
    ``body(i, name)`` is the request body of pod ``i``."""

    api: Api
    namespace: str
    count: int
    workers: int
    body: Callable[[int, str], bytes]
    prefix: str = "pod"
    sent: list[float] = field(default_factory=list)
    answered: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None
    cancelled: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.sent = [math.nan] * self.count
        self.answered = [math.nan] * self.count

    def name(self, i: int) -> str:
        return f"{self.prefix}-{i:06d}"

    def start(self) -> Creator:
        self.thread = threading.Thread(target=self._run, name="pod-creator", daemon=True)
        self.thread.start()
        return self

    def done(self) -> bool:
        return self.thread is not None and not self.thread.is_alive()

    @property
    def created(self) -> int:
        return sum(1 for t in self.answered if not math.isnan(t))

    def _run(self) -> None:
        path = f"/api/v1/namespaces/{self.namespace}/pods"

        def one(i: int) -> None:
            if self.cancelled.is_set():
                return
            body = self.body(i, self.name(i))
            self.sent[i] = time.perf_counter()
            try:
                status, obj = self.api.call("POST", path, body)
            except (http.client.HTTPException, OSError) as e:
                self.errors.append(f"{self.name(i)}: {e}")
                return
            if status in (201, 409):  # 409: a retried create that had gone through
                self.answered[i] = time.perf_counter()
            else:
                self.errors.append(f"{self.name(i)}: HTTP {status}: "
                                   f"{obj.get('message', '') if isinstance(obj, dict) else ''}")

        with concurrent.futures.ThreadPoolExecutor(self.workers, "create") as pool:
            list(pool.map(one, range(self.count)))


def throughput_samples(t0: float, bound_at: Sequence[float]) -> list[float]:
    """scheduler_perf's SchedulingThroughput samples: the pods bound in each second since
    ``t0``, from the first second in which any pod is bound, skipping that first sample
    (an outlier: sampling and creation start independently), up to the last full second
    before the last binding."""
    if not bound_at:
        return []
    last = max(bound_at)
    ticks = int((last - t0) // 1.0)
    counts = [0] * (ticks + 1)  # counts[k]: bound at or before t0 + k
    for t in bound_at:
        k = max(0, math.ceil(t - t0))
        if k <= ticks:
            counts[k] += 1
    for k in range(1, ticks + 1):
        counts[k] += counts[k - 1]
    samples: list[float] = []
    started = False
    for k in range(1, ticks + 1):
        if counts[k] == 0:
            continue
        if not started:
            started = True
            continue
        samples.append(float(counts[k] - counts[k - 1]))
    return samples


def cpu_snapshot(cluster: Cluster, scheduler: RunningScheduler) -> dict[str, float]:
    """CPU seconds so far of each process taking part (this program as ``bench client``)."""
    snapshot: dict[str, float] = {}
    pids = {name: cluster.pid(name) for name in ("kube-apiserver", "etcd", "kwok")}
    pids[scheduler.name] = scheduler.pid
    for name, pid in pids.items():
        seconds = proc_cpu_seconds(pid) if pid is not None else None
        if seconds is not None:
            snapshot[name] = seconds
    snapshot["bench client"] = self_cpu_seconds()
    snapshot[MACHINE] = machine_busy_seconds()
    return snapshot


def control_plane_rss(cluster: Cluster) -> dict[str, float]:
    """Peak RSS (VmHWM, MiB) so far of etcd, kube-apiserver and kwok."""
    peaks: dict[str, float] = {}
    for name in ("kube-apiserver", "etcd", "kwok"):
        pid = cluster.pid(name)
        kib = proc_status_kib(pid, "VmHWM") if pid is not None else None
        if kib is not None:
            peaks[name] = kib / 1024
    return peaks


# ------------------------------------------------------------------------------ workload set-up


def ensure_namespace(api: Api, name: str) -> None:
    api.must("POST", "/api/v1/namespaces",
             {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
             ok=(201, 409))


def label_nodes(api: Api, workload: Workload, workers: int) -> list[dict[str, Any]]:
    """Give node i the zone ``workload.zone(i)`` (patching only the nodes whose zone
    differs); returns the nodes, in order, as they are now."""
    nodes = kwok_nodes(api)
    stale = [i for i, node in enumerate(nodes)
             if (node["metadata"].get("labels") or {}).get(ZONE) != workload.zone(i)]

    def patch(i: int) -> None:
        name = nodes[i]["metadata"]["name"]
        nodes[i] = api.must("PATCH", f"/api/v1/nodes/{name}",
                            {"metadata": {"labels": {ZONE: workload.zone(i)}}},
                            content_type=MERGE_PATCH)

    if stale:
        progress(f"{workload.name}: labelling {len(stale)} nodes {ZONE}="
                 f"{'/'.join(workload.zones)}")
        with concurrent.futures.ThreadPoolExecutor(workers, "label") as pool:
            list(pool.map(patch, stale))
    return nodes


def create_init_pods(api: Api, workload: Workload, nodes: Sequence[dict[str, Any]],
                     workers: int, count: int) -> str:
    """``count`` init pods of the workload, bound round-robin (pod i on node i mod N) by
    ``spec.nodeName``; waits until KWOK reports them Running. Returns a caveat ("" if
    none)."""
    if count == 0:
        return ""
    names = [node["metadata"]["name"] for node in nodes]
    namespace = workload.init_namespace
    progress(f"{workload.name}: creating {count} init pods in {namespace}")
    creator = Creator(api, namespace, count, workers, lambda i, name: pod_body(
        workload.init_pod, name, namespace, SCHEDULER_NAMES[KUBE_SCHEDULER],
        names[i % len(names)]), prefix="init").start()
    assert creator.thread is not None
    creator.thread.join(PROGRESS_EVERY)
    while creator.thread.is_alive():
        progress(f"{workload.name}: {creator.created}/{count} init pods created")
        creator.thread.join(PROGRESS_EVERY)
    if creator.errors:
        raise BenchError(f"{len(creator.errors)} of {count} init pods of {workload.name} "
                         f"could not be created (first: {creator.errors[0]})")
    deadline = time.monotonic() + INIT_RUNNING_TIMEOUT + count / 20
    path = f"/api/v1/namespaces/{namespace}/pods"
    not_running = "fieldSelector=status.phase%21%3DRunning"
    while api.must("GET", f"{path}?limit=1&{not_running}").get("items"):
        if time.monotonic() > deadline:
            left = len(api.list(path, not_running))
            return (f"{left} of {count} init pods not yet Running when the first scheduler "
                    f"started (KWOK still updating them)")
        time.sleep(1.0)
    return ""


def workload_pods(api: Api, workload: Workload) -> list[dict[str, Any]]:
    """The workload's init and measured pods, as they are now."""
    return [pod for namespace in dict.fromkeys((workload.init_namespace,
                                                workload.measured_namespace))
            for pod in api.list(f"/api/v1/namespaces/{namespace}/pods")]


def delete_pods(api: Api, namespace: str) -> None:
    """Force-delete a namespace's pods and wait until they are gone (there is no namespace
    controller), so that the next scheduler starts on empty nodes."""
    path = f"/api/v1/namespaces/{namespace}/pods"
    api.must("DELETE", path + "?gracePeriodSeconds=0",
             {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
    deadline = time.monotonic() + DELETE_TIMEOUT
    while True:
        left = len(api.must("GET", path + "?limit=500").get("items", []))
        if left == 0:
            return
        if time.monotonic() > deadline:
            raise BenchError(f"{left} pods of {namespace} still present "
                             f"{DELETE_TIMEOUT:.0f} s after deleting them")
        time.sleep(0.5)


def measure(cluster: Cluster, scheduler: RunningScheduler, workload: Workload, nodes: int,
            pods: int, *, workers: int, timeout: float, stall: float) -> SchedulerResult:
    """Create ``pods`` measured pods of ``workload`` for ``scheduler`` in the workload's
    (empty) measured namespace and time their bindings."""
    label = f"{scheduler.name} {workload.name}"
    result = SchedulerResult(scheduler.name, workload.name, nodes, pods,
                             ready_seconds=scheduler.ready_seconds, code=scheduler.code)
    namespace = workload.measured_namespace
    watcher = BindWatcher(cluster.api, namespace).start()
    cpu_before = cpu_snapshot(cluster, scheduler)
    threads_before = thread_cpu_seconds(scheduler.pid) if scheduler.process else None
    hwm = proc_status_kib(scheduler.pid, "VmHWM") or 0
    progress(f"{label} @{nodes} nodes: creating {pods} pods in {namespace} "
             f"({workers} threads)")
    scheduler_name = SCHEDULER_NAMES[scheduler.name]
    creator = Creator(cluster.api, namespace, pods, workers, lambda i, name: pod_body(
        workload.measured_pod, name, namespace, scheduler_name)).start()
    started = time.monotonic()
    last_progress, last_count, last_change = started, 0, started
    while True:
        time.sleep(0.25 if time.monotonic() - started < 2 else 1.0)
        now = time.monotonic()
        hwm = max(hwm, proc_status_kib(scheduler.pid, "VmHWM") or 0)
        count = len(watcher.bound)
        if count != last_count:
            last_count, last_change = count, now
        if count >= pods:
            break
        if not scheduler.alive():
            result.note = f"{label} exited during the run; its log ends with:\n" \
                          f"{scheduler.log_tail(10)}"
            break
        if now - started > timeout:
            result.note = f"cut after {timeout:.0f} s (--timeout)"
            break
        if creator.done() and now - last_change > stall:
            result.note = f"cut: no binding for {stall:.0f} s (--stall)"
            break
        if creator.done() and creator.created == 0:
            result.note = "no pod could be created: " + "; ".join(creator.errors[:3])
            break
        if now - last_progress >= PROGRESS_EVERY:
            last_progress = now
            progress(f"{label} @{nodes} nodes: {creator.created}/{pods} created, "
                     f"{count} bound, {count / (now - started):.1f} pods/s so far")
    cpu_after = cpu_snapshot(cluster, scheduler)
    threads_after = thread_cpu_seconds(scheduler.pid) if scheduler.process else None
    watcher.stop()
    creator.cancelled.set()
    if creator.thread is not None:
        creator.thread.join(60)
    hwm = max(hwm, proc_status_kib(scheduler.pid, "VmHWM") or 0)

    sent = [t for t in creator.sent if not math.isnan(t)]
    answered = [t for t in creator.answered if not math.isnan(t)]
    t0 = min(sent) if sent else time.perf_counter()
    bound = dict(watcher.bound)
    index = {creator.name(i): i for i in range(pods)}
    result.created = len(answered)
    result.bound = len(bound)
    result.create_seconds = (max(answered) - t0) if answered else 0.0
    result.create_ms = [(a - s) * 1e3 for s, a in zip(creator.sent, creator.answered,
                                                      strict=True)
                        if not (math.isnan(s) or math.isnan(a))]
    result.window_seconds = (max(bound.values()) - t0) if bound else 0.0
    result.samples = throughput_samples(t0, list(bound.values()))
    result.latencies = [max(0.0, t - creator.sent[index[name]])
                        for name, t in bound.items() if name in index]
    result.peak_rss_mib = hwm / 1024 if hwm else None
    result.cpu_seconds = {name: cpu_after[name] - cpu_before[name]
                          for name in cpu_after if name in cpu_before and name != MACHINE}
    result.cpu_seconds[OTHERS] = max(0.0, cpu_after[MACHINE] - cpu_before[MACHINE]
                                     - sum(result.cpu_seconds.values()))
    if threads_before is not None and threads_after is not None:  # policysched: named threads
        result.threads = thread_cpu_by_group(scheduler.pid, threads_before, threads_after)
    result.load_average = os.getloadavg()[0]
    notes = [result.note] if result.note else []
    if creator.errors:
        notes.append(f"{len(creator.errors)} creates failed (first: {creator.errors[0]})")
    if watcher.relisted:
        notes.append(f"{watcher.relisted} bindings seen by a relist (watch expired)")
    result.note = "; ".join(notes)
    progress(f"{label} @{nodes} nodes: {result.bound}/{pods} bound in "
             f"{result.window_seconds:.1f} s → {result.throughput:.1f} pods/s "
             f"(creates: {result.create_rate:.0f} pods/s)"
             + (f" — {result.note}" if result.note else ""))
    return result


# ------------------------------------------------------------------------------ the run


def run(nodes: Sequence[int], pods: int | Mapping[str, int] = DEFAULT_PODS, *,
        workloads: Sequence[str] = DEFAULT_WORKLOADS, qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST, workers: int = DEFAULT_WORKERS,
        timeout: float = DEFAULT_TIMEOUT, stall: float = DEFAULT_STALL,
        repeat: int = DEFAULT_REPEAT, bound_pods: int | None = None,
        keep: bool = False) -> list[NodeCountResult]:
    """For each node count: a private cluster, on which each workload's pods (``pods``: per
    workload, or the same count for all) are scheduled by policysched then kube-scheduler,
    the cluster stopped (``repeat`` runs of each scheduler per workload, alternating).
    What cannot be measured gets a ``problem`` instead of runs. The
    cluster directories are temporary (kept with ``keep``: their logs). ``bound_pods``: that
    many init pods for every workload (a scale point: the cluster's bound pods), instead of
    scheduler_perf's."""
    unknown = [name for name in workloads if name not in WORKLOADS]
    if unknown:
        raise BenchError(f"unknown workload {', '.join(unknown)} (one of "
                         f"{', '.join(WORKLOADS)})")
    one_per_node = [name for name in workloads if WORKLOADS[name].one_per_node]
    if bound_pods is not None and one_per_node:
        raise BenchError(f"--bound-pods: not for {', '.join(one_per_node)} (one pod per node)")
    counts = {name: pods if isinstance(pods, int) else pods.get(name, DEFAULT_PODS)
              for name in workloads}
    build_binaries()
    base = Path(tempfile.mkdtemp(prefix="policysched-bench-e2e-"))
    results: list[NodeCountResult] = []
    try:
        for count in nodes:
            results.append(run_node_count(base / f"nodes-{count}", count, counts, qps=qps,
                                          burst=burst, workers=workers, timeout=timeout,
                                          stall=stall, repeat=repeat,
                                          bound_pods=bound_pods))
    finally:
        if keep:
            progress(f"cluster directories (logs) kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return results


def run_node_count(cluster_dir: Path, nodes: int, pods: Mapping[str, int], *, qps: float,
                   burst: int, workers: int, timeout: float, stall: float,
                   repeat: int = 1, bound_pods: int | None = None) -> NodeCountResult:
    """Every workload (``pods``: measured pods per workload, in order) on one fresh cluster
    of ``nodes`` KWOK nodes (``bound_pods``: that many init pods instead of the
    workload's)."""
    started = time.monotonic()
    outcome = NodeCountResult(nodes, [
        WorkloadResult(name, nodes, WORKLOADS[name].measured_pods(nodes, count),
                       WORKLOADS[name].init_pods(nodes) if bound_pods is None else bound_pods,
                       repeat=repeat)
        for name, count in pods.items()])
    problem = memory_problem(nodes)
    if problem:
        outcome.problem = problem
        progress(problem)
        return outcome
    cluster: Cluster | None = None
    try:
        cluster = cluster_up(cluster_dir, nodes)
        outcome.cluster_up_seconds = cluster.up_seconds
        outcome.kube_version = str(cluster.api.must("GET", "/version").get("gitVersion", ""))
        outcome.versions = (f"kube-apiserver and kube-scheduler {cluster.env['KUBE_VERSION']}, "
                            f"etcd {cluster.env['ETCD_VERSION']}, "
                            f"kwok {cluster.env['KWOK_VERSION']}")
        for position, result in enumerate(outcome.workloads):
            run_workload(cluster, result, qps=qps, burst=burst, workers=workers,
                         timeout=timeout, stall=stall,
                         clean_up=position < len(outcome.workloads) - 1)
        outcome.control_plane_rss_mib = control_plane_rss(cluster)
    except BenchError as e:
        outcome.problem = str(e)
        progress(f"@{nodes} nodes: {e}")
    finally:
        if cluster is not None or (cluster_dir / "cluster.env").exists():
            cluster_down(cluster_dir)
        outcome.wall_seconds = time.monotonic() - started
    return outcome


SCHEDULERS = ((POLICYSCHED, start_policysched), (KUBE_SCHEDULER, start_kube_scheduler))
Turn = tuple[int, str, Callable[[Cluster, float, int], RunningScheduler]]


def turn_order(repeat: int) -> list[Turn]:
    """(repetition, scheduler, its start) for each turn: the schedulers alternate, and
    which goes first alternates too (ABBA…), so that neither always runs on a cluster
    that just deleted the other's pods, nor always first or last."""
    turns: list[Turn] = []
    for repetition in range(repeat):
        order = SCHEDULERS if repetition % 2 == 0 else SCHEDULERS[::-1]
        turns += [(repetition, label, start) for label, start in order]
    return turns


def run_workload(cluster: Cluster, outcome: WorkloadResult, *, qps: float, burst: int,
                 workers: int, timeout: float, stall: float, clean_up: bool) -> None:
    """One workload on ``cluster``: nodes labelled, init pods bound, then each scheduler
    schedules the same measured pods (its pods deleted before the next one starts; one
    that fails does not keep the other from running); with ``clean_up``, the workload's
    pods are deleted at the end. Fills ``outcome``; a problem of this workload is recorded
    there, a failed clean-up raises (the cluster is then in no state for the next one)."""
    started = time.monotonic()
    workload = WORKLOADS[outcome.workload]
    problems: list[str] = []
    try:
        for namespace in (workload.init_namespace, workload.measured_namespace):
            ensure_namespace(cluster.api, namespace)
        node_objects = label_nodes(cluster.api, workload, workers)
        outcome.setup_note = create_init_pods(cluster.api, workload, node_objects, workers,
                                              outcome.init_pods)
        outcome.setup_seconds = time.monotonic() - started
        turns = turn_order(outcome.repeat)
        for position, (repetition, label, start) in enumerate(turns):
            turn = time.monotonic()
            result: SchedulerResult | None = None
            try:
                result = run_scheduler(cluster, start, workload, outcome.nodes, outcome.pods,
                                       node_objects, qps=qps, burst=burst, workers=workers,
                                       timeout=timeout, stall=stall)
            except BenchError as e:
                problems.append(f"{label} (run {repetition + 1}): {e}")
                progress(f"{label} {workload.name} @{outcome.nodes} nodes: {e}")
            if position < len(turns) - 1:  # the next turn starts on the init pods alone
                progress(f"deleting the {label} pods")
                delete_pods(cluster.api, workload.measured_namespace)
            if result is not None:
                result.repetition = repetition
                result.wall_seconds = time.monotonic() - turn
                outcome.runs.append(result)
    except BenchError as e:
        problems.append(str(e))
        progress(f"{workload.name} @{outcome.nodes} nodes: {e}")
    outcome.problem = "; ".join(problems)
    if clean_up:
        progress(f"deleting the {workload.name} pods")
        for namespace in (workload.measured_namespace, workload.init_namespace):
            delete_pods(cluster.api, namespace)
    outcome.wall_seconds = time.monotonic() - started


def run_scheduler(cluster: Cluster, start: Callable[[Cluster, float, int], RunningScheduler],
                  workload: Workload, nodes: int, pods: int,
                  node_objects: Sequence[dict[str, Any]], *, qps: float, burst: int,
                  workers: int, timeout: float, stall: float) -> SchedulerResult:
    """One scheduler started, measured on ``workload``'s pods, stopped; then the final
    placement checked."""
    ready = ready_nodes(cluster.api)
    if ready < nodes:
        raise BenchError(f"only {ready}/{nodes} KWOK nodes are Ready and untainted: this "
                         f"machine cannot keep {nodes} fake nodes (see "
                         f"{cluster.dir}/kwok.log)")
    scheduler = start(cluster, qps, burst)
    try:
        result = measure(cluster, scheduler, workload, nodes, pods, workers=workers,
                         timeout=timeout, stall=stall)
    finally:
        stopping = time.monotonic()
        scheduler.stop()
        progress(f"stopped {scheduler.name} ({time.monotonic() - stopping:.1f} s)")
    result.qps, result.burst = qps, burst
    result.violations = placement_violations(workload_pods(cluster.api, workload), node_objects)
    if result.violations:
        progress(f"{scheduler.name} {workload.name}: constraints broken: "
                 + "; ".join(result.violations))
    return result


# ------------------------------------------------------------------------------ report


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _spread(spread: Spread | None, digits: int = 1) -> str:
    """The median, and the min-max when there were several runs."""
    if spread is None:
        return "-"
    text = f"{spread.median:.{digits}f}"
    if spread.count > 1:
        text += f" ({spread.low:.{digits}f}-{spread.high:.{digits}f})"
    return text


def format_table(results: Sequence[NodeCountResult]) -> str:
    """One markdown table per node count (per workload: policysched, kube-scheduler —
    the median of their runs and its min-max —, the ratio of the medians), policysched's
    CPU per thread, then the versions, the CPU each process used and any caveat."""
    out: list[str] = []
    for outcome in results:
        sizes = ", ".join(f"{w.workload} {w.pods} pods (+{w.init_pods} init)"
                          for w in outcome.workloads)
        repeat = max((w.repeat for w in outcome.workloads), default=1)
        out.append(f"### e2e: {outcome.nodes} nodes — {sizes}"
                   + (f"; {repeat} runs each" if repeat > 1 else ""))
        out.append("")
        if outcome.kube_version:
            out.append(f"Kubernetes {outcome.kube_version} (kube-apiserver /version); "
                       f"{outcome.versions}.")
            out.append("")
        measured = [w for w in outcome.workloads if w.runs]
        if outcome.problem:
            out.append(f"Not measured{' completely' if measured else ''}: {outcome.problem}")
            out.append("")
        for w in outcome.workloads:
            if w.problem:
                out.append(f"{w.workload} not measured{' completely' if w.runs else ''}: "
                           f"{w.problem}")
                out.append("")
        if not measured:
            continue
        if repeat > 1:
            out.append(f"Each figure is the median of the {repeat} runs, (min-max) after it; "
                       "the ratios are those of the medians.")
            out.append("")
        out.append("| workload | scheduler | bound | throughput avg (pods/s) | per-second p50 / "
                   "p90 / p99 (pods/s, medians) | create→bind p50 (s) | create→bind p99 (s) "
                   "| peak RSS (MiB) | scheduler CPU (ms/pod) | pod creates (pods/s) "
                   "| constraints held |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for w in measured:
            for scheduler in (POLICYSCHED, KUBE_SCHEDULER):
                runs = w.results(scheduler)
                if not runs:
                    continue
                held = {r.constraints_held for r in runs}
                samples = " / ".join(_num(s.median if s else None, 0) for s in
                                     (w.spread(scheduler, f"sample p{p}") for p in (50, 90, 99)))
                out.append(
                    f"| {w.workload} | {scheduler} | {_bound(runs)} "
                    f"| {_spread(w.spread(scheduler, 'throughput'))} | {samples} "
                    f"| {_spread(w.spread(scheduler, 'p50'), 2)} "
                    f"| {_spread(w.spread(scheduler, 'p99'), 2)} "
                    f"| {_spread(w.spread(scheduler, 'rss'), 0)} "
                    f"| {_spread(w.spread(scheduler, 'cpu'), 2)} "
                    f"| {_num(s.median if (s := w.spread(scheduler, 'creates')) else None, 0)} "
                    f"| {'no' if 'no' in held else '-' if held == {'-'} else 'yes'} |")
            if w.results(POLICYSCHED) and w.results(KUBE_SCHEDULER):
                out.append(f"| {w.workload} | ratio policysched/kube-scheduler | "
                           f"| {_ratio(w.ratio('throughput'))} | "
                           f"| {_ratio(w.ratio('p50'))} | {_ratio(w.ratio('p99'))} "
                           f"| {_ratio(w.ratio('rss'))} | {_ratio(w.ratio('cpu'))} | | |")
        out.append("")
        out += thread_table(measured)
        for w in measured:
            out.append(_workload_notes(w))
            for r in w.runs:
                out.append(_run_notes(r))
        peaks = ", ".join(f"{name} {mib:.0f}" for name, mib in
                          outcome.control_plane_rss_mib.items())
        out.append(f"- cluster up {outcome.cluster_up_seconds:.0f} s (KWOK nodes without node "
                   f"leases); control plane peak RSS (MiB): {peaks or '-'}; this node count "
                   f"took {outcome.wall_seconds:.0f} s in all")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _bound(runs: Sequence[SchedulerResult]) -> str:
    """bound/pods of a run, or the lowest and highest of several."""
    counts = sorted({r.bound for r in runs})
    bound = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    return f"{bound}/{runs[0].pods}"


def thread_order(group: str) -> tuple[int, str]:
    order = {MAIN_THREAD: 0, MULTIPLEXER: 2, BINDERS: 2, "event-recorder": 3, OTHER_THREADS: 4,
             UNATTRIBUTED: 5}
    return order.get(group, 1), group  # the informers (1) by resource


def _group_ms(r: SchedulerResult, group: str, shown: Sequence[str]) -> float:
    """CPU ms per pod of a row of the thread table (others: every group not shown)."""
    if group != OTHER_THREADS:
        return r.thread_ms_per_pod(group) or 0.0
    return sum(r.thread_ms_per_pod(g) or 0.0 for g in r.threads
               if g == OTHER_THREADS or g not in shown)


def thread_table(measured: Sequence[WorkloadResult]) -> list[str]:
    """policysched's CPU ms per bound pod by thread group (median over its runs, and its
    share of the process's), one column per workload; [] when none was read."""
    workloads = [w for w in measured if any(r.threads for r in w.results(POLICYSCHED))]
    if not workloads:
        return []
    runs = [r for w in workloads for r in w.results(POLICYSCHED)]
    seen = {group for r in runs for group in r.threads}

    def shown(group: str) -> bool:
        return group in (MAIN_THREAD, MULTIPLEXER, BINDERS) or any(
            (r.thread_ms_per_pod(group) or 0.0) >= MINOR_THREAD_MS for r in runs)

    groups = sorted({g for g in seen if shown(g)} | {OTHER_THREADS}, key=thread_order)
    out = ["policysched's CPU by thread (/proc/<pid>/task/*: ms per bound pod, median over "
           "its runs, and share of its CPU; http-multiplex carries every bind, binder-* "
           "is every thread of a bind that waits for its volumes; "
           "unattributed: the process's CPU beyond its live threads', i.e. threads that "
           "ended and the kernel's per-thread figures cut to whole clock ticks; others: the "
           f"unnamed threads and every group under {MINOR_THREAD_MS} ms/pod in every run):",
           "",
           "| thread | " + " | ".join(w.workload for w in workloads) + " |",
           "|---|" + "---|" * len(workloads)]
    for group in [*groups, "total"]:
        cells = []
        for w in workloads:
            mine = w.results(POLICYSCHED)
            total = Spread.of([r.cpu_ms_per_pod for r in mine])
            if group == "total":
                cells.append(_spread(total, 2))
                continue
            value = Spread.of([_group_ms(r, group, groups) for r in mine])
            share = (f" ({100 * value.median / total.median:.0f}%)"
                     if value and total and total.median else "")
            cells.append(f"{_num(value.median if value else None, 2)}{share}")
        out.append(f"| {group} | " + " | ".join(cells) + " |")
    out.append("")
    return out


def _workload_notes(w: WorkloadResult) -> str:
    """The set-up of one workload below the table: init pods, node zones, time."""
    workload = WORKLOADS[w.workload]
    text = (f"- {w.workload} (scheduler_perf {workload.kube}): {w.init_pods} init pods bound "
            f"round-robin in {workload.init_namespace}, measured pods in "
            f"{workload.measured_namespace}; node zones {'/'.join(workload.zones)}; set-up "
            f"(labels, init pods Running) {w.setup_seconds:.0f} s; the workload took "
            f"{w.wall_seconds:.0f} s")
    if w.setup_note:
        text += f"; NOTE: {w.setup_note}"
    return text


def _run_notes(r: SchedulerResult) -> str:
    """The details of one run below the table: window, creates, CPU by process, any
    constraint the final placement breaks."""
    cpu = ", ".join(f"{name} {seconds:.1f}" for name, seconds in
                    sorted(r.cpu_seconds.items(), key=lambda kv: -kv[1]) if seconds >= 0.05)
    busy = sum(r.cpu_seconds.values()) / r.window_seconds if r.window_seconds > 0 else 0.0
    text = (f"  - {r.scheduler} run {r.repetition + 1}: window {r.window_seconds:.1f} s "
            f"({len(r.samples)} per-second samples); creates took {r.create_seconds:.1f} s "
            f"(per request p50 {_num(r.create_latency_ms(50), 0)} ms, "
            f"p99 {_num(r.create_latency_ms(99), 0)} ms);"
            f" CPU seconds in the window: {cpu} (≈{busy:.2f} of {os.cpu_count()} cores busy; "
            f"load average {r.load_average:.1f}); ready {r.ready_seconds:.1f} s after start; "
            f"turn {r.wall_seconds:.0f} s; client qps {r.qps:g} / burst {r.burst}; "
            f"code: {r.code}")
    if r.scheduler == KUBE_SCHEDULER and r.create_rate > 0 \
            and r.throughput >= 0.9 * r.create_rate:
        text += ("; it kept up with the pod creates, so its throughput here is bounded by "
                 "the creation rate (the control plane), not by the scheduler")
    if r.violations:
        text += "; CONSTRAINTS BROKEN: " + "; ".join(r.violations)
    if r.note:
        text += f"; NOTE: {r.note}"
    return text


RATIO_LINES = (("throughput", "throughput"), ("cpu", "cpu per pod"), ("p99", "p99 latency"),
               ("rss", "peak rss"))
"""The summary lines' metrics (``METRICS`` name, name in the line), throughput first."""


def ratio_lines(results: Sequence[NodeCountResult]) -> list[str]:
    """One line per metric of ``RATIO_LINES``, node count and workload, the ratio of the
    medians (``n/a`` when it could not be measured):
    ``e2e <metric> ratio policysched/kube-scheduler[ <workload>] @N nodes: R``; basic's
    lines name no workload (as when it was the only one)."""
    lines = []
    for metric, name in RATIO_LINES:
        for outcome in results:
            for w in outcome.workloads:
                ratio = w.ratio(metric)
                value = f"{ratio:.2f}" if ratio is not None else "n/a"
                workload = "" if w.workload == "basic" else f" {w.workload}"
                lines.append(f"e2e {name} ratio policysched/kube-scheduler{workload} "
                             f"@{outcome.nodes} nodes: {value}")
    return lines


def machine() -> str:
    memory = proc_meminfo_mib("MemTotal")
    load = os.getloadavg()
    return (f"{os.cpu_count()} cores, {_num(memory and memory / 1024, 1)} GiB memory, "
            f"load average {load[0]:.2f} at the start (a shared machine: the schedulers share "
            f"the cores with etcd, kube-apiserver, kwok and this client)")


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=list(DEFAULT_NODES),
                        help="node counts, one private cluster each (default: 1000 5000)")
    parser.add_argument("--pods", type=int, default=DEFAULT_PODS,
                        help="measured pods per scheduler run and workload (default "
                             f"{DEFAULT_PODS}; anti-affinity: at most one per node free of "
                             "init pods)")
    parser.add_argument("--workloads", nargs="+", default=list(DEFAULT_WORKLOADS),
                        choices=list(WORKLOADS),
                        help="bench/workloads.py's workloads, in this order on each cluster "
                             f"(default: {' '.join(DEFAULT_WORKLOADS)})")
    parser.add_argument("--qps", type=float, default=DEFAULT_QPS,
                        help="client QPS of both schedulers (default 5000)")
    parser.add_argument("--burst", type=int, default=DEFAULT_BURST,
                        help="client burst of both schedulers (default 5000)")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                        help=f"pod-creating threads (default {DEFAULT_WORKERS})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds per scheduler run (default {DEFAULT_TIMEOUT:.0f})")
    parser.add_argument("--stall", type=float, default=DEFAULT_STALL,
                        help="cut a run after this many seconds without a binding "
                             f"(default {DEFAULT_STALL:.0f})")
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT,
                        help="runs of each scheduler per workload, taking turns; the tables "
                             f"show the median and min-max (default {DEFAULT_REPEAT})")
    parser.add_argument("--bound-pods", type=int, default=None,
                        help="a scale point: this many init pods (bound round-robin before "
                             "the measured ones) for every workload instead of scheduler_perf's "
                             "(not for pod-anti-affinity)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary cluster directories (logs)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    started = time.monotonic()
    print(f"policysched e2e benchmark: nodes {' '.join(map(str, args.nodes))}, "
          f"workloads {' '.join(args.workloads)}, {args.pods} pods per scheduler and "
          f"workload, {args.repeat} runs each; {machine()}", flush=True)
    print("policysched run: built-in configuration and policies (profile policysched), "
          "admin kubeconfig, no leader election; kube-scheduler: default profile; "
          f"both with client qps {args.qps:g} / burst {args.burst}\n", flush=True)
    try:
        results = run(args.nodes, args.pods, workloads=args.workloads, qps=args.qps,
                      burst=args.burst, workers=args.workers, timeout=args.timeout,
                      stall=args.stall, repeat=args.repeat, bound_pods=args.bound_pods,
                      keep=args.keep)
    except KeyboardInterrupt:
        progress("interrupted (clusters stopped)")
        return 130
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(format_table(results))
    print(f"total wall time: {time.monotonic() - started:.0f} s\n")
    for line in ratio_lines(results):
        print(line)
    measured = all(not r.problem and all(w.measured for w in r.workloads) for r in results)
    return 0 if measured else 1


if __name__ == "__main__":
    sys.exit(main())
