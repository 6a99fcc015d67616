"""Every user-visible text of the engine: event reasons, condition reasons, status texts.

The FailedScheduling message has kube-scheduler's exact form (FitError.Error() in
pkg/scheduler/framework/types.go): ``0/5 nodes are available: 2 node(s) had untolerated
taint(s), 3 Insufficient cpu.`` — counts per reason, sorted as strings; the preFilter message
alone when preFilter rejected the pod; the preemption message appended.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

# Events (reason field) and PodScheduled condition reasons, as kube-scheduler writes them.
EVENT_SCHEDULED = "Scheduled"
EVENT_FAILED_SCHEDULING = "FailedScheduling"
EVENT_PREEMPTED = "Preempted"
EVENT_POLICY_AUDIT = "PolicyAudit"  # what an audited rule would have done (ours)
AUDIT_ACTION = "Audit{point}"  # its action: AuditFilter, AuditScore...
AUDIT_FINDINGS_JOINED = "; "  # several findings at one point, in one event
CONDITION_UNSCHEDULABLE = "Unschedulable"
CONDITION_SCHEDULER_ERROR = "SchedulerError"

SCHEDULED = "Successfully assigned {pod} to {node}"
PREEMPTED = "Preempted by pod {uid} on node {node}"
NO_NODES = "no nodes available to schedule pods"
NO_NODE_AVAILABLE = "0/{total} nodes are available:"
PREEMPTION_PREFIX = "preemption:"
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
PREEMPTION_NO_VICTIMS = "No preemption victims found for incoming pod"
PREEMPTION_TERMINATING_VICTIM = "not eligible due to a terminating pod on the nominated node."
PREEMPTION_NO_VICTIM_FOUND = 'expected at least one victim pod on node "{node}"'
PREEMPTED_CONDITION = "{scheduler}: preempting to accommodate a higher priority pod"
PREEMPTED_WAITING = "preempted"
# kube-scheduler's words for preFilter's node names (RunPreFilterPlugins, findNodesThatFitPod)
PRE_FILTER_NO_NODE = "node(s) didn't satisfy plugin {plugin}"
PRE_FILTER_NO_NODE_TOGETHER = "node(s) didn't satisfy plugin(s) {plugins} simultaneously"
PRE_FILTER_EXCLUDED = "node(s) didn't satisfy plugin(s) {plugins}"

# Audit findings (framework/audit.py): "audit: policy/rule would have ..."
AUDIT_FINDING = "audit: {rule} {message}"
AUDIT_ERROR = "would have failed with an Error: {error}"
AUDIT_GATED = "would have kept the pod out of the active queue: {message}"
AUDIT_REJECTED = "would have rejected the pod: {message}"
AUDIT_DENIED = "would have rejected the pod at permit: {message}"
AUDIT_WAITED = "would have held the pod at permit on {node} for up to {timeout}"
AUDIT_ALL_NODES = (
    "would have rejected every feasible node ({total}): {reasons}; "
    "the pod would have been unschedulable"
)
AUDIT_SOME_NODES = "would have rejected {count} of {total} feasible nodes: {reasons}{chosen}"
AUDIT_CHOSEN_AMONG = "; the chosen node {node} among them"
AUDIT_SCORE = (
    "would have changed the score by {delta:+d} on the chosen node {node} "
    "({low:+d} to {high:+d} on the {total} scored nodes)"
)
AUDIT_SAME_CHOICE = "; the choice would stay"
AUDIT_OTHER_CHOICE = "; {node} would have been chosen instead ({score} > {chosen})"

FILTER_DEFAULT_REASON = "node(s) didn't satisfy policy {rule}"
RULE_REJECTED = "rejected by {rule}"
EVALUATION_ERROR = "policy {policy} rule {rule}: {field} `{text}`: {error}"
WRONG_RESULT = "must evaluate to {expected}, got {got}"
# kube-scheduler's words (framework runtime, RunScorePlugins), with the node
SCORE_OUT_OF_RANGE = "returns an invalid score {score} on node {node}, it should in the range " \
                     "of [{low}, {high}] after normalizing"
SCORE_NOT_FINITE = "returns an invalid score {score} on node {node}, it should be a finite number"
SKIP_DELETING = "skip schedule deleting pod: {pod}"
PROFILE_UNKNOWN = "pod {pod} names schedulerName {name}, which no profile serves"
# kube-scheduler's words (framework runtime, waitingPod's timer), the plugin a policy/rule
PERMIT_TIMEOUT = "rejected due to timeout after waiting {duration} at plugin {plugin}"
# scheduler-plugins' Coscheduling Unreserve: a gang's other waiting members
PERMIT_GANG_REJECTED = "rejection in Unreserve"
RESERVE_LIMIT = "counter {counter} would reach {value:g}, over its limit {limit:g}"
BIND_FAILED = "binding rejected: {reason}"
NO_VOLUME_CACHE = "volume bindings cannot be assumed here: no scheduler cache"
MATCH_ERROR = "policy {policy}: {field} `{text}`: {error}"
BIND_TARGET_UNKNOWN = "policy {policy} rule {rule}: {field} `{text}` chose node {node}, " \
                      "which is not in the cluster"
BIND_TARGET_REJECTED = "policy {policy} rule {rule} chose node {node}, which does not fit " \
                       "the pod: {reason}"
INTERNAL_ERROR = "internal error at {point}: {error}"
SCHEDULING_LOOP = "the scheduling loop"

# Log lines (%-style arguments).
LOG_RULE_WARNING = "%s (ignored: it decides nothing about the pod)"
LOG_INTERNAL_ERROR = "internal error scheduling pod %s at %s; the pod is requeued"
LOG_EVENT_FAILED = "internal error applying a %s %s event; the event is skipped"
LOG_ROLL_BACK_FAILED = "internal error rolling back the attempt of pod %s"
LOG_REPORT_FAILED = "internal error reporting the failure of pod %s"
LOG_OBSERVER_FAILED = "internal error in the on_internal_error hook"
LOG_AUDIT_FAILED = ("internal error auditing pod %s at %s: the audited rules are skipped "
                    "for this attempt; the pod's scheduling goes on")
LOG_AUDIT_OBSERVER_FAILED = "internal error in the on_audit hook"
LOG_ATTEMPT_OBSERVER_FAILED = "internal error in the on_attempt_end hook"
LOG_EVICTION_FAILED = "preemption: evicting pod %s for pod %s failed: %s"
LOG_VECTORISED_FALLBACK = "rule %s: the vectorised evaluation failed; its closure evaluates " \
                          "every node instead"


def fit_error(total: int, reasons: Iterable[str], pre_filter_message: str = "",
              post_filter_message: str = "") -> str:
    """kube-scheduler's FitError text.

    ``reasons`` holds one entry per node and reason (a node with two reasons gives two
    entries); ignored when ``pre_filter_message`` is set, as in kube-scheduler.
    """
    text = NO_NODE_AVAILABLE.format(total=total)
    if pre_filter_message:
        text += f" {pre_filter_message}."
    else:
        counts = Counter(reasons)
        histogram = sorted(f"{n} {reason}" for reason, n in counts.items())
        if histogram:
            text += f" {', '.join(histogram)}."
    if post_filter_message:
        text += f" {post_filter_message}"
    return text


def go_duration(seconds: float) -> str:
    """``seconds`` (>= 0) as Go prints a time.Duration: ``3s``, ``1m0s``, ``1h2m3s``."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:g}s"
    if hours or minutes:
        text = f"{int(minutes)}m{text}"
    if hours:
        text = f"{int(hours)}h{text}"
    return text

# --- aggregates ----------------------------------------------------------------------------
AGGREGATE_FAILED = "aggregate {name} of policy {policy}: {error}"
AGGREGATE_UNKNOWN_NODE = "node {node} is not a node of this scheduling cycle"
AGGREGATE_GROUP_BY = "groupBy must be a node label key (a string), got {value!r}"
AGGREGATE_WEIGHT = "the weight of a weighted term must be an int, got {value!r}"
AGGREGATE_NOT_SCORING = "scoredDomains() is known only in preScore and score rules"
ACTIVATION_GONE = ("a policy's variables or aggregates were read after the activation "
                   "holding them was freed (an engine bug)")

# --- the shadow scheduler (framework/shadow.py) ---------------------------------------------
SHADOW_WRITE = ("{call}: a shadow scheduler writes nothing to the cluster (an engine bug: "
                "the shadow attempted a write)")
SHADOW_NO_PROFILE = "the shadow's profile {profile} is not in the policy set (profiles: {names})"
LOG_SHADOW_NO_PROFILE = "shadow: %s; no pod is judged until a policy set has it"
