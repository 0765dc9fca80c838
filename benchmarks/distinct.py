"""Distinct problems per level of each built-in task's test split (docs/tasks/splits.md).

For a task with ``unique`` batches (DyVal) the batch's own repeat count is read: item k is the
k-th distinct problem until the split runs out, so ``N - repeated(N)`` distinct problems among N
items is exact when below N. For the others, distinct identities (:meth:`Task.identity`)
among N items; where some repeat, the size M of a uniformly drawn space that gives that many
distinct problems in N draws, ``M (1 - (1 - 1/M)^N)``, is printed as the estimate.

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
            repeated = task.repeated(level, 1, 0)
            if repeated is not None:
                n = args.count
                got = n - (task.repeated(level, 1, n) or 0)
            else:
                n = args.others
                items = (task.make_item(level, 1, i) for i in range(n))
                got = len({canonical_json(dict(task.identity(i.problem))) for i in items})
            if got >= n:
                guess = f"> {n:,}"
            elif repeated is not None:
                guess = f"{got:,} (exhausted)"
            else:
                guess = f"~{estimate(got, n):,.0f}"
            print(f"| {tid} | {level} | {n:,} | {got:,} | {guess} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
