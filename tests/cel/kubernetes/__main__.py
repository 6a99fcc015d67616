"""``make cel-differential``: generated expressions through our CEL and Kubernetes', the
per-area table on stdout, and with ``--report`` the section "Kubernetes CEL differential"
of docs/conformance.md.

    python -m tests.cel.kubernetes --expressions 20000 --seed 1 [--report docs/conformance.md]
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

from . import reference
from .differential import Tally, run
from .generator import generate

SECTION = "## Kubernetes CEL differential"
BATCH = 2000  # cases per cel-reference run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.cel.kubernetes",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--expressions", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--examples", type=int, default=3, help="examples per difference")
    parser.add_argument("--report", type=Path, help="write the table into this Markdown file")
    args = parser.parse_args(argv)
    try:
        program = reference.binary()
    except reference.ReferenceUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    cases = generate(args.seed, args.expressions)
    tally = Tally(examples_per_kind=args.examples)
    for start in range(0, len(cases), BATCH):
        tally.add(run(cases[start:start + BATCH], program))
    print(tally.table())
    print()
    print(tally.summary())
    if args.report:
        write_report(args.report, tally, args.seed)
    return 0


def write_report(path: Path, tally: Tally, seed: int) -> None:
    """Replace (or append) the differential's section of ``path``."""
    total = sum(tally.total.values())
    intro = textwrap.fill(
        f"`make cel-differential` compares {total:,} generated expressions (seed {seed}, "
        "`tests/cel/kubernetes/generator.py`) between our CEL and cel-go with Kubernetes "
        "1.34's CEL environment (`deploy/local/kube/cmd/cel-reference`: "
        "`k8s.io/apiserver/pkg/cel/environment`, compatibility version 1.34, strict cost). "
        "Two results agree when they are the same value of the same type, or both "
        "compile-time rejections, or both runtime errors (messages are not compared). "
        "A program Kubernetes cannot instantiate (constant folding fails, e.g. "
        "`int(double('inf'))`) counts as a compile-time rejection: admission rejects such a "
        "policy when it is written. Lists built by iterating a map are sorted by the "
        "generator (Go's map order is random, so Kubernetes' own result varies). "
        "`tests/cel/test_kubernetes.py` runs a bounded sample in `make test` and the "
        "examples of the Kubernetes CEL documentation "
        "(`tests/cel/kubernetes/examples.yaml`).", width=95, break_long_words=False,
        break_on_hyphens=False)
    body = "\n".join([
        SECTION,
        "",
        intro,
        "",
        tally.summary() + ".",
        "",
        tally.table(),
        "",
    ])
    text = path.read_text() if path.exists() else ""
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: body + "\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + body
    path.write_text(text.rstrip("\n") + "\n")


if __name__ == "__main__":
    sys.exit(main())
