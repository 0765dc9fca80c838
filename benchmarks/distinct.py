"""Distinct problems per level of each built-in task's test split (docs/tasks/splits.md).

Distinct problems up to renaming (:meth:`Task.identity`, the canonical form) among the first
N test items of seed 1 (DyVal's batches keep problems distinct, ``unique``, until a bounded
search finds no new one: then the count is about what the split holds; the other families
draw independently). Where some repeat, the size M of a uniformly drawn space that gives that
many distinct problems in N draws, ``M (1 - (1 - 1/M)^N)``, is printed as a rough estimate
(a lower bound for DyVal, whose batches avoid repeats).

``--markdown`` prints the table of docs/tasks/splits.md instead (between its DISTINCT TABLE
markers), ``--write`` puts it there.

Usage: python benchmarks/distinct.py [--count 1000] [--others 300] [--markdown | --write] [TASK ...]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from pytest_reasoning.core import canonical_json
from pytest_reasoning.registry import get_task, task_ids
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.sampler import make_item, sampler

PAGE = Path(__file__).resolve().parent.parent / "docs" / "tasks" / "splits.md"
BEGIN, END = "<!-- BEGIN DISTINCT TABLE -->", "<!-- END DISTINCT TABLE -->"


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


def count(tid: str, level: str, n: int) -> int:
    task = get_task(tid)
    items = (make_item(task, level, 1, i) for i in range(n))
    return len({canonical_json(dict(task.identity(i.problem))) for i in items})


def cell(tid: str, level: str, got: int, n: int) -> str:
    """One level in the docs table: bold where it repeats, with the estimate of what the
    split holds for independent draws (a ``unique`` batch's count is that already)."""
    if got >= n:
        return f"{level}: {got}"
    if sampler(get_task(tid)).repeated(level, 1, 0) is not None:
        return f"{level}: **{got}**"
    return f"{level}: **{got}** (~{estimate(got, n):,.0f})"


def markdown(rows: dict[str, list[tuple[str, int, int]]]) -> str:
    out = [
        "| task | distinct problems (up to renaming) among 200 test items, per level |",
        "|---|---|",
    ]
    for tid, levels in rows.items():
        if all(got >= n for _, got, n in levels):
            n = levels[0][2]
            names = ", ".join(lv for lv, _, _ in levels)
            out.append(f"| `{tid}` | {n} at every level ({names}) |")
        else:
            out.append(f"| `{tid}` | " + ", ".join(cell(tid, *lv) for lv in levels) + " |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", nargs="*")
    ap.add_argument("--count", type=int, default=1000, help="items of unique-batch tasks")
    ap.add_argument("--others", type=int, default=300, help="items of the other tasks")
    ap.add_argument("--markdown", action="store_true", help="print the docs table")
    ap.add_argument("--write", action="store_true", help="write the docs table into its page")
    args = ap.parse_args()
    table = args.markdown or args.write
    if not table:
        print("| task | level | items drawn | distinct (test split) | estimate |")
        print("|---|---|---|---|---|")
    rows: dict[str, list[tuple[str, int, int]]] = {}
    for tid in args.tasks or [t for t in task_ids() if not hooks.is_pack(get_task(t))]:
        task = get_task(tid)
        for level in task.levels:
            unique = sampler(task).repeated(level, 1, 0) is not None
            n = args.count if unique else args.others
            got = count(tid, level, n)
            rows.setdefault(tid, []).append((level, got, n))
            if not table:
                guess = f"> {n:,}" if got >= n else f"~{estimate(got, n):,.0f}"
                print(f"| {tid} | {level} | {n:,} | {got:,} | {guess} |", flush=True)
            else:
                print(f"{tid} {level}: {got} of {n}", file=sys.stderr, flush=True)
    if args.markdown:
        print(markdown(rows))
    if args.write:
        text = PAGE.read_text()
        new = f"{BEGIN}\n{markdown(rows)}\n{END}"
        PAGE.write_text(re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: new, text,
                               flags=re.S))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
