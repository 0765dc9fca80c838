"""Robustness analysis benchmark at the paper's ANLI scale (1,200 items × 14 models).

1. The simplex step alone: 100,000 weight vectors uniform on the simplex, weighted accuracies,
   accuracy and rank ranges, pairwise win probabilities (the issue's goal: under 10 s here).
2. The whole analysis (1,000 permutations on up to 50,000 item pairs, clustering with 20
   permuted clusterings, the reweighting schemes, the growth curves, the simplex).
Each in a child process, so its peak RSS (ru_maxrss from os.wait4) is its own.

Usage: python benchmarks/robustness.py [--items 1200] [--models 14]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"

CHILD = r"""
import json, sys, time
import numpy as np
from pytest_reasoning.robustness import ScoreMatrix, analyze, simplex
n, k, what = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
skill = rng.uniform(0.4, 0.9, k)
difficulty = rng.normal(0, 1, n)
q = (rng.random((n, k)) < 1 / (1 + np.exp(-(3 * skill - 1.5 - difficulty[:, None])))).astype(float)
t0 = time.perf_counter()
if what == "simplex":
    simplex(q, 100_000, np.random.default_rng(1))
else:
    m = ScoreMatrix([str(i) for i in range(n)], [f"m{j}" for j in range(k)], q, [("t", "l")] * n)
    analyze(m, permutations=1000, samples=100_000, seed=1)
print(json.dumps({"seconds": round(time.perf_counter() - t0, 2)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=1200)
    ap.add_argument("--models", type=int, default=14)
    args = ap.parse_args()
    rows = []
    for what in ("simplex", "analysis"):
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(args.items), str(args.models), what],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, _, usage = os.wait4(proc.pid, 0)
        row = {
            "what": what,
            "items": args.items,
            "models": args.models,
            **json.loads(out),
            "wall_s_with_imports": round(time.perf_counter() - t0, 2),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        }
        rows.append(row)
        print(row, flush=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "robustness.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
