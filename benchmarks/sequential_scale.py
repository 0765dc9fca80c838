"""Sequential comparisons at scale (issue 44, item 6): CPU seconds to feed ``n`` pairs to
:class:`PairedSequence` (equal models: as many wins as losses, so the level runs to its end and
its curtailment is checked at every pair) and to compute its p-value, against the fixed-n
comparison (``compare``) of the same pairs; ``--before DIR`` runs the same in a checkout of
older code, in a subprocess, for a before/after table.

Usage: nice -n 10 python benchmarks/sequential_scale.py [--n 2000,10000,20000]
       [--before DIR] [--limit 300]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time
from pytest_reasoning.core import Outcome
from pytest_reasoning.gates import GateRule, GateSpec, compare
from pytest_reasoning.gates.sequential import Decision, PairedSequence

n = int(sys.argv[1])
pattern = [(True, True), (True, False), (False, True), (False, False), (True, True)]
pairs = [pattern[i % 5] for i in range(n)]
start = time.process_time()
seq = PairedSequence(n)
for cand, base in pairs:
    if seq.update(cand, base) is not Decision.CONTINUE:
        break
fed = time.process_time() - start
start = time.process_time()
p = seq.p_value()
p_time = time.process_time() - start
spec = GateSpec("s", "e", "D1", GateRule())
rows = [
    (Outcome(f"e[{i}]", "c", "t", "D1", 1, f"p{i}", "", "x", "x", cand, None, None, None,
             None, 0.0), spec)
    for i, (cand, _) in enumerate(pairs)
]
base = {(f"e[{i}]", r.prompt_sha256): b for i, ((r, _), (_, b)) in enumerate(zip(rows, pairs))}
start = time.process_time()
(c,) = compare(rows, base, "b")
fixed = time.process_time() - start
print(json.dumps({"n": n, "t": seq.t, "decision": seq.decision.value, "how": seq.how,
                  "fed_s": fed, "p_s": p_time, "p": p, "fixed_s": fixed,
                  "fixed_p": c.p_regression}))
"""


def measure(root: str, n: int, limit: float) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": root, "PYTHONHASHSEED": "0"}
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(n)],
            env=env,
            cwd=root,  # "-c" puts the working directory first on sys.path
            capture_output=True,
            text=True,
            timeout=limit,
            check=True,
        ).stdout
    except subprocess.TimeoutExpired:
        return {"n": n, "timeout": limit}
    return dict(json.loads(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="2000,10000,20000")
    parser.add_argument("--before", help="a checkout of the code before, to compare with")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds per measurement")
    args = parser.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print("| n | code | pairs fed (s) | p-value (s) | verdict | fixed-n compare (s) |")
    print("|---|---|---|---|---|---|")
    for n in (int(x) for x in args.n.split(",")):
        for label, root in (("before", args.before), ("now", here)):
            if root is None:
                continue
            got = measure(root, n, args.limit)
            if "timeout" in got:
                print(f"| {n:,} | {label} | > {args.limit:.0f} (stopped) | | | |")
                continue
            print(
                f"| {n:,} | {label} | {got['fed_s']:.2f} | {got['p_s']:.2f} | "
                f"{got['decision']} at {got['t']:,} ({got['how']}) | {got['fixed_s']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
