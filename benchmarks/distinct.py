"""Distinct problems per level of each built-in task's test split (docs/tasks/splits.md).

Distinct identities (:meth:`Task.identity`) among the first N test items of seed 1 (DyVal's
batches keep problems distinct, ``unique``, until a bounded search finds no new one; the other
families draw independently). Where some repeat, the size M of a uniformly drawn space that
gives that many distinct problems in N draws, ``M (1 - (1 - 1/M)^N)``, is printed as a rough
estimate (a lower bound for DyVal, whose batches avoid repeats).

Usage: python benchmarks/distinct.py [--count 1000] [--others 300] [TASK ...]
"""

from __future__ import annotations

import argparse
import sys

from pytest_reasoning.core import canonical_json
from pytest_reasoning.registry import get_task, task_ids


def estimate(distinct: int, draws: int) -> float:
    """M with M (1 - (1 - 1/M)^draws) = distinct (bisection; distinct < draws)."""
    low, high = float(distinct), 1e12
    for _ in range(200):
        mid = (low + high) / 2
        if mid * (1 - (1 - 1 / mid) ** draws) < distinct:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", nargs="*")
    ap.add_argument("--count", type=int, default=1000, help="items of unique-batch tasks")
    ap.add_argument("--others", type=int, default=300, help="items of the other tasks")
    args = ap.parse_args()
    print("| task | level | items drawn | distinct (test split) | estimate |")
    print("|---|---|---|---|---|")
    for tid in args.tasks or [t for t in task_ids() if not get_task(t).pack]:
        task = get_task(tid)
        for level in task.levels:
            unique = task.repeated(level, 1, 0) is not None
            n = args.count if unique else args.others
            items = (task.make_item(level, 1, i) for i in range(n))
            got = len({canonical_json(dict(task.identity(i.problem))) for i in items})
            guess = f"> {n:,}" if got >= n else f"~{estimate(got, n):,.0f}"
            print(f"| {tid} | {level} | {n:,} | {got:,} | {guess} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
