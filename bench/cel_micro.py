"""Micro-benchmark: one CEL evaluation, our compiled closures vs cel-python's CompiledRunner.

A program, not a test: ``make bench-cel`` (or ``python bench/cel_micro.py``) prints a table of
microseconds per evaluation on scheduling-style expressions and the ratio. Both sides
evaluate the same expression on the same pod/node data in the same process, one after the
other, best of several repeats, so the ratio is meaningful on a noisy machine.
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from collections.abc import Callable
from typing import Any

import celpy

from policysched.cel import compile_expression
from policysched.policy.variables import FILTER, environment

POD: dict[str, Any] = {
    "name": "web-7d4b9c-x2x9q",
    "namespace": "default",
    "creationTimestamp": 1_700_000_000,
    "annotations": {"delay": "15"},
    "labels": {"app": "web", "tier": "frontend"},
    "requests": {"cpu": 100, "memory": 524_288_000},
    "tolerations": [
        {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    ],
}
NODE: dict[str, Any] = {
    "name": "worker-17",
    "unschedulable": False,
    "labels": {
        "topology.kubernetes.io/zone": "zone-a",
        "kubernetes.io/hostname": "worker-17",
        "node-role.kubernetes.io/worker": "",
    },
    "taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}],
    "allocatable": {"cpu": 4000, "memory": 34_359_738_368, "pods": 110},
    "requested": {"cpu": 1200, "memory": 8_589_934_592, "pods": 12},
    "free": {"cpu": 2800, "memory": 25_769_803_776, "pods": 98},
}
NOW = 1_700_000_020

EXPRESSIONS: list[tuple[str, str]] = [
    ("delay (the contract's example)", "now - pod.creationTimestamp >= int(pod.annotations.delay)"),
    ("not cordoned", "!node.unschedulable"),
    ("zone score", "node.labels['topology.kubernetes.io/zone'] == 'zone-a' ? 100 : 0"),
    ("resources fit", "pod.requests.cpu <= node.free.cpu && "
                      "pod.requests.memory <= node.free.memory"),
    ("least allocated",
     "(node.allocatable.cpu - node.requested.cpu) * 100 / node.allocatable.cpu"),
    ("taints tolerated",
     "node.taints.all(t, t.effect == 'PreferNoSchedule' || pod.tolerations.exists(tol, "
     "tol.key == t.key && tol.effect == t.effect))"),
    ("label functions",
     "node.name.startsWith('worker-') && node.labels.exists(k, k.endsWith('/worker'))"),
    ("string size", "size(pod.name) < 63 && pod.namespace in ['default', 'prod']"),
]

# The environment of a filter rule: the checker knows the types of pod and node fields,
# which lets the compiler pick typed closures (as it does for real policies).
ENV = environment(FILTER)


def per_call_us(fn: Callable[[], Any], min_time: float) -> float:
    """Best-of-5 microseconds per call, each repeat running about ``min_time`` seconds."""
    number = 1
    while timeit.timeit(fn, number=number) < min_time / 10:
        number *= 2
    return min(timeit.repeat(fn, number=number * 10, repeat=5)) / (number * 10) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=0.05,
                        help="seconds per timing repeat (default 0.05)")
    args = parser.parse_args()

    ours_act = {"now": NOW, "pod": POD, "node": NODE}
    ref_env = celpy.Environment(runner_class=celpy.CompiledRunner)
    ref_act = {"now": celpy.celtypes.IntType(NOW), "pod": celpy.json_to_cel(POD),
               "node": celpy.json_to_cel(NODE)}

    rows = []
    for label, text in EXPRESSIONS:
        ours = compile_expression(text, ENV)
        ref = ref_env.program(ref_env.compile(text))
        ours_value, ref_value = ours.evaluate(ours_act), ref.evaluate(ref_act)
        if ours_value != ref_value:
            raise SystemExit(f"{label}: results differ: ours {ours_value!r}, "
                             f"cel-python {ref_value!r}")
        ref_us = per_call_us(lambda r=ref: r.evaluate(ref_act), args.min_time)
        ours_us = per_call_us(lambda o=ours: o.evaluate(ours_act), args.min_time)
        rows.append((label, ref_us, ours_us, ref_us / ours_us))

    print(f"{'expression':<20} {'cel-python µs':>14} {'ours µs':>9} {'speed-up':>9}")
    print("-" * 55)
    for label, ref_us, ours_us, ratio in rows:
        print(f"{label:<20} {ref_us:>14.1f} {ours_us:>9.2f} {ratio:>8.0f}x")
    print("-" * 55)
    geo = statistics.geometric_mean(r[3] for r in rows)
    print(f"{'geometric mean':<20} {'':>14} {'':>9} {geo:>8.0f}x")
    print(f"cel micro-benchmark speedup vs cel-python (geometric mean): {geo:.0f}x")


if __name__ == "__main__":
    main()
