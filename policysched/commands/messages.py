"""User-visible texts of the offline commands ``snapshot`` and ``diff``, and of the HTML
reports.

Templates use ``str.format`` fields.
"""

from __future__ import annotations

# --- snapshot ------------------------------------------------------------------------------
SNAPSHOT_NAME = "<snapshot>"
SNAPSHOT_FAILED = "cannot read the cluster at {host}: {reason}"
SNAPSHOT_UNREADABLE = ("the snapshot is not a valid cluster file (a bug; please report it): "
                       "{problems}")
SNAPSHOT_SOURCE = " of {host}"
SNAPSHOT_HEADER = (
    "# policysched snapshot{source} at {at}: {nodes} nodes, {pods} pods ({pending} pending)\n"
    "# simulate starts at the latest creationTimestamp; --now {now} starts at the snapshot\n")
SNAPSHOT_LISTING = "{kind}: {count} listed..."
SNAPSHOT_LISTED = "{kind}: {count}"
SNAPSHOT_WROTE = "wrote {path}: {nodes} nodes, {pods} pods ({pending} pending)"

# --- diff ----------------------------------------------------------------------------------
DIFF_NEEDS_TWO = ("diff compares two sides: give --policies twice (A, then B), --config twice, "
                  "or --policies once (A: without it, B: with it)")
DIFF_TOO_MANY = "--{option} given {count} times: diff compares two sides (A, then B)"
DIFF_IDENTICAL = "identical: every pending pod ends the same on both sides"
DIFF_DIFFERENT = "different: {counts}"
DIFF_COUNT_MOVED = "placed differently"
DIFF_COUNT_ONLY_A = "unschedulable only with A"
DIFF_COUNT_ONLY_B = "unschedulable only with B"
DIFF_COUNT_REASONS = "unschedulable on both for other reasons"
DIFF_COUNT_EVICTED = "evicted on one side only"
DIFF_MOVED = "placed differently ({count}):"
DIFF_ONLY_A = "unschedulable only with A ({count}):"
DIFF_ONLY_B = "unschedulable only with B ({count}):"
DIFF_REASONS = "unschedulable on both, for other reasons ({count}):"
DIFF_EVICTED_A = "evicted only by A's preemptions ({count}):"
DIFF_EVICTED_B = "evicted only by B's preemptions ({count}):"
DIFF_UTILISATION = "UTILISATION AT THE END"
DIFF_BOUND = "pending pods bound"
DIFF_FILL = "{resource} fill min p50 p90 max"
DIFF_ZONE = "pods in zone {zone} (placed)"
DIFF_ZONE_CELL = "{pods} ({placed})"
DIFF_ZONE_SPREAD = "zone spread (max - min pods)"

# --- run --shadow ---------------------------------------------------------------------------
SHADOW_OPTIONS_ALONE = ("--shadow-scheduler-name, --shadow-profile and --shadow-report "
                        "apply to --shadow: add --shadow")

# --- HTML reports (--html) -----------------------------------------------------------------
REPORT_WROTE = "wrote {path}"
REPORT_TITLE_SIMULATE = "policysched simulate {cluster}"
REPORT_TITLE_EXPLAIN = "policysched explain {pod} ({cluster})"
REPORT_TITLE_DIFF = "policysched diff {cluster}"
