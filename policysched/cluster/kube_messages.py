"""Every user-visible text of the Kubernetes API backend (``policysched.cluster.kube``) and
of the run loop (``policysched.service.loop``): errors raised to the engine, log lines, and the
Event vocabulary kube-scheduler uses.

Templates use ``str.format`` fields; log lines use ``%`` fields (logging's lazy style).
"""

from __future__ import annotations

# --- the Event vocabulary (events.k8s.io/v1), as kube-scheduler writes it ---------------
REPORTING_CONTROLLER = "policysched"
REPORTING_INSTANCE = "{controller}-{hostname}"
EVENT_ACTIONS = {  # reason -> action (kube-scheduler: Eventf(pod, nil, type, reason, action))
    "Scheduled": "Binding",
    "FailedScheduling": "Scheduling",
    "Preempted": "Preempting",
}
DEFAULT_EVENT_ACTION = "Scheduling"
NOTE_TRUNCATED_SUFFIX = " ..."  # kube-scheduler's truncateMessage

# --- errors raised to the engine ----------------------------------------------------------
API_STATUS = "HTTP {status}"
API_UNREACHABLE = "the API server is unreachable: {reason}"
CLIENT_STOPPED = "the backend is closed: request not sent"

# --- the connection to the API server: one line per change (cluster/connection.py) --------
LOG_ANSWER_CRASHED = "the answer to %s %s could not be handled"
LOG_MULTIPLEXER_CRASHED = "the HTTP multiplexer failed; the exchanges it was running are ended"
LOG_CONNECTION_LOST = "%s: lost connection to the API server: %s; retrying"
LOG_REQUESTS_FAILING = "%s: requests to the API server failing: %s; retrying"
LOG_STILL_FAILING = "%s: still failing: %s"
LOG_RECONNECTED = "%s: reconnected to the API server after %.1fs (%d attempts failed)"
LOG_RECOVERED = "%s: requests succeed again after %.1fs (%d attempts failed)"
CONNECTION_INFORMER = "{resource} informer"
CONNECTION_DISCOVERY = "PodGroup API discovery"
CONNECTION_EVENTS = "event writer"
CONNECTION_POD_WRITES = "pod writes (bindings, status)"
CONNECTION_LEASE = "lease {lease}"
CONNECTION_CONFIGMAPS = "ConfigMap watch {source}"

# --- informers ----------------------------------------------------------------------------
LOG_LISTED = "%s: listed %d objects at resourceVersion %s (%d changes)"
LOG_WATCH_EXPIRED = "%s: watch from resourceVersion %s expired (410 Gone); relisting"
LOG_PODGROUPS_ABSENT = ("PodGroup API scheduling.x-k8s.io/v1alpha1 is not served: "
                        "no PodGroup informer")
LOG_PODGROUPS_PRESENT = "PodGroup API scheduling.x-k8s.io/v1alpha1 is served: watching podgroups"
LOG_INFORMER_CRASHED = "%s informer failed unexpectedly; restarting"
LOG_BAD_WATCH_LINE = "%s: skipping an undecodable watch line: %s"

# --- writes -----------------------------------------------------------------------------
LOG_EVENT_FAILED = "event %s %s about pod %s not recorded: %s"
LOG_EVENTS_DROPPED = "event queue full: dropped %d events so far"
LOG_CONDITION_FAILED = "pod %s: PodScheduled condition not updated: %s"
LOG_CONDITION_ON_BOUND = "pod %s: bound to %s meanwhile: its failure is not written"
LOG_NOMINATION_FAILED = "pod %s: nominatedNodeName not updated: %s"

# --- the run loop -----------------------------------------------------------------------
LOG_BOUND = "bound %s to %s (attempt %d, %.0f ms in queue)"
LOG_FAILED = "cannot schedule %s (attempt %d, %s): %s"
LOG_STARTING = "starting: profiles %s; connecting to %s"
LOG_WAITING_SYNC = "waiting for the informers to list nodes, pods and podgroups"
LOG_SYNCED = "informers synced in %.2fs: %d nodes, %d pods"
LOG_LEADING = "leading: building a fresh cache from the API"
LOG_NOT_LEADING = "not leading: scheduling stopped, cache dropped"
LOG_PROFILES_SWAPPED = "policy set swapped: profiles %s"
LOG_CYCLE_ERROR = "scheduling loop error (recovered %d in-flight pods)"
LOG_RECOVERY_FAILED = "could not requeue the in-flight pods after a scheduling loop error"
LOG_BIND_DRAIN_FAILED = "finishing the binds in flight failed"
LOG_STOPPING = "stopping (%s)"
LOG_STOPPED = "stopped"
LOG_OBSERVER_FAILED = "observer %r failed"
LOG_TEARDOWN_FAILED = "extension teardown %r failed"
NO_KUBECONFIG = ("no cluster configuration: give --kubeconfig, run in a pod (in-cluster "
                 "config), or set $KUBECONFIG")
BAD_KUBECONFIG = "cannot load kubeconfig {path}: {reason}"
