"""``python -m tests.parity --decisions N [--seed S] [--cases-only] [--report docs/parity.md]``:
compare policysched with the real kube-scheduler on the hand-written cases and generated
scenarios, print the per-feature table and which plugins' scores differ, save each differing
decision (and each whose scores differ) as a cluster file under .parity/failures/, and
optionally write the report. Cache misses start a private control plane
(``deploy/local/cluster.sh``) for the oracle; kube's outcomes are added to
tests/parity/kube-results.json.

Exit status: 0 when every decision agrees, 1 when some differ, 2 when the oracle failed.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from .control_plane import OracleError
from .known_differences import KNOWN_FILE, write_known
from .report import (
    FAILURES,
    by_kind,
    markdown,
    save_failures,
    table_rows,
    text_table,
)
from .run import run, scenarios, stderr


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.parity", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=1000,
                        help="at least this many decisions: the cases, then generated "
                             "scenarios (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--cases-only", action="store_true",
                        help="only the hand-written cases of tests/parity/cases/")
    parser.add_argument("--report", type=Path, help="write the markdown report here")
    parser.add_argument("--cluster-dir", type=Path,
                        help="the oracle's CLUSTER_DIR (default: a temporary directory)")
    parser.add_argument("--prune-cache", action="store_true",
                        help="drop the cached outcomes of scenarios this run does not use")
    parser.add_argument("--write-known", action="store_true",
                        help=f"rewrite {KNOWN_FILE.name} from this run's differences "
                             "(keeping the reasons of the ones already listed)")
    args = parser.parse_args(argv)
    chosen = scenarios(args.decisions, args.seed, args.cases_only)
    stderr(f"{len(chosen)} scenarios, {sum(len(s.pending) for s in chosen)} decisions")
    try:
        result = run(chosen, cluster_dir=args.cluster_dir, prune=args.prune_cache)
    except OracleError as e:
        stderr(f"the oracle failed: {e}")
        return 2
    comparisons = result.comparisons
    print(text_table(table_rows(comparisons)))
    print()
    for kind, members in by_kind(comparisons).items():
        print(f"{len(members):5d}  {kind}")
    differing_scores = Counter(p for c in comparisons if c.scores_differ
                               for p in c.plugins_scored_differently)
    if differing_scores:
        print("\ndecisions whose scores differ, by plugin: " + ", ".join(
            f"{plugin} {n}" for plugin, n in differing_scores.most_common()))
    written = save_failures(comparisons)
    if written:
        print(f"\n{written} decisions that differ (or whose scores do) saved as cluster "
              f"files in {FAILURES}/")
    if args.report:
        command = "python -m tests.parity " + shlex.join(argv if argv is not None
                                                         else sys.argv[1:])
        args.report.write_text(markdown(result, command) + "\n")
        print(f"report written to {args.report}")
    if args.write_known:
        write_known(comparisons)
        print(f"{KNOWN_FILE.name} rewritten")
    if result.oracle_errors:
        return 2
    return 1 if any(c.differences for c in comparisons) else 0


if __name__ == "__main__":
    sys.exit(main())
