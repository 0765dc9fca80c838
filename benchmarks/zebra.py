"""ZebraLogic generation benchmarks (numbers go in the README and docs/tasks/zebra.md).

1. Puzzles per second at 4x4, 5x5, 6x6 (and larger sizes, for the practical limit), single
   process, through ``make_item`` (the path suites and ``export`` use). Every puzzle's
   uniqueness is proved by the SAT solver; the solver calls per puzzle are reported too.
2. The same reduction with our own propagation solver (``tasks/zebra/solver.py``) as the
   uniqueness oracle instead of python-sat: the measurement behind choosing the library.
3. Side by side with reasoning-gym's zebra generator (``--reasoning-gym-python PY``: a Python
   with ``reasoning-gym`` installed, outside this repo) at the same sizes. Theirs also proves
   uniqueness (pycosat, re-solving the whole CNF from scratch for every candidate removal).

Issue 33: 7x7 and 8x8 are measured by default (8x8 must reach 20 proven puzzles/s), with the
median MiniSat conflicts per size (the difficulty measure items carry); ``--herrings K`` adds
rows with K red herrings (each such puzzle is proved twice more: the herrings keep the gold
grid and admit no other).

Usage: python benchmarks/zebra.py [--count 40] [--reasoning-gym-python PY] [--large] [--herrings 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.tasks.zebra import sat, solver
from pytest_reasoning.tasks.zebra.clues import Clue, true_clues

OUT = Path(__file__).resolve().parent / "out"
ZEBRA = get_task("zebra.grid")

RG_SNIPPET = r"""
import sys, time
from random import Random
from reasoning_gym.logic.contrib.logic_puzzle.generate import generate_puzzle
size, count, budget = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
n, t0 = 0, time.perf_counter()
while n < count and time.perf_counter() - t0 < budget:
    generate_puzzle(Random(1000 + n), size, size)
    n += 1
print(n, time.perf_counter() - t0)
"""


def ours(level: str, count: int, herrings: int = 0) -> dict[str, Any]:
    calls: list[int] = []
    original = sat.Uniqueness.close

    def close(self: sat.Uniqueness) -> None:  # count the reduction's calls per puzzle
        if self.calls > 1:  # not the difficulty measure's or the herring proofs' solvers
            calls.append(self.calls)
        original(self)

    sat.Uniqueness.close = close  # type: ignore[method-assign]
    try:
        params = {"red_herrings": herrings}
        make_item(ZEBRA, level, 0, 0, params)  # imports and caches out of the timing
        calls.clear()
        t0 = time.process_time()
        items = [make_item(ZEBRA, level, 1, i, params) for i in range(count)]
        dt = time.process_time() - t0
    finally:
        sat.Uniqueness.close = original  # type: ignore[method-assign]
    return {
        "level": level,
        "red_herrings": herrings,
        "count": count,
        "cpu_seconds": round(dt, 3),
        "per_cpu_second": round(count / dt, 2),
        "solver_calls_median": statistics.median(calls),
        "clues_median": statistics.median(len(i.problem["clues"]) for i in items),
        "conflicts_median": statistics.median(i.problem["sat_conflicts"] for i in items),
        "conflicts_max": max(i.problem["sat_conflicts"] for i in items),
    }


class PropagationCheck:
    """The reduction's oracle answered by our propagation + search solver instead of SAT."""

    def __init__(self, grid: list[dict[str, str]], pool: Sequence[Clue]) -> None:
        self.features = {f: [row[f] for row in grid] for f in grid[0]}
        self.n, self.pool, self.calls = len(grid), pool, 0

    def unique(self, active: Sequence[int]) -> bool:
        self.calls += 1
        clues = [(c.kind, c.a, c.b, c.house) for c in (self.pool[i] for i in active)]
        return len(solver.count_solutions(solver.Puzzle(self.n, self.features, clues))) == 1


def oracle_comparison(level: str, count: int) -> dict[str, Any]:
    n, m = map(int, level.split("x"))
    out: dict[str, Any] = {"level": level, "count": count}
    for name in ("sat", "propagation"):
        rng = random.Random(7)
        t0 = time.perf_counter()
        for _ in range(count):
            grid = [{f"F{j}": f"v{j}_{h}" for j in range(m)} for h in range(n)]
            for j in range(m):
                col = [r[f"F{j}"] for r in grid]
                rng.shuffle(col)
                for r, v in zip(grid, col, strict=True):
                    r[f"F{j}"] = v
            pool = true_clues(grid)
            order = list(range(len(pool)))
            rng.shuffle(order)
            check: Any = (
                sat.Uniqueness(grid, pool) if name == "sat" else PropagationCheck(grid, pool)
            )
            sat.reduce_clues(check, order)
        out[name] = round(count / (time.perf_counter() - t0), 2)
    return out


def theirs(python: str, size: int, count: int, budget: float) -> dict[str, Any]:
    proc = subprocess.run(
        [python, "-c", RG_SNIPPET, str(size), str(count), str(budget)],
        capture_output=True,
        text=True,
        check=True,
    )
    n, dt = proc.stdout.split()
    return {"level": f"{size}x{size}", "count": int(n), "per_second": round(int(n) / float(dt), 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--reasoning-gym-python")
    ap.add_argument("--large", action="store_true", help="also 10x10")
    ap.add_argument("--herrings", type=int, default=0, help="also rows with K red herrings")
    ap.add_argument("--no-oracle", action="store_true", help="skip the oracle comparison")
    args = ap.parse_args()
    results: dict[str, Any] = {"ours": [], "oracle": [], "reasoning_gym": []}
    levels = ["4x4", "5x5", "6x6", "7x7", "8x8"] + (["10x10"] if args.large else [])
    for k in sorted({0, args.herrings}):
        for level in levels:
            count = args.count if level != "10x10" else max(3, args.count // 8)
            row = ours(level, count, k)
            results["ours"].append(row)
            print("ours", row, flush=True)
    for level in () if args.no_oracle else ("4x4", "5x5", "6x6"):
        row = oracle_comparison(level, max(5, args.count // 4))
        results["oracle"].append(row)
        print("oracle", row, flush=True)
    if args.reasoning_gym_python:
        for size in (4, 5, 6):
            row = theirs(args.reasoning_gym_python, size, args.count, 120.0)
            results["reasoning_gym"].append(row)
            print("reasoning-gym", row, flush=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "zebra.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
