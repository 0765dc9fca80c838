"""The shortcut audit over every task x level: wall time, and the table of docs/audit.md.

Runs ``pytest_reasoning.audit.audit`` on every registered task and level (200 test items per
level by default, training seed = seed + 1), prints the wall time and the load average, writes
``benchmarks/out/audit.json`` and prints the Markdown table of the best shortcut per task x
level next to chance. ``--before FILE`` (a JSON written by this script or by
``pytest-reasoning audit --json`` on an older tree) adds a "before" column.

Usage: python benchmarks/audit.py [--count 200] [--jobs 2] [--before FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from pytest_reasoning.audit import audit

OUT = Path(__file__).resolve().parent / "out"


def _best(row: dict[str, Any]) -> tuple[str, float]:
    best = max(row["baselines"], key=lambda b: b["accuracy"])
    return best["name"], best["accuracy"]


def table(after: list[dict[str, Any]], before: list[dict[str, Any]] | None) -> str:
    old = {(r["task"], r["level"]): r for r in before or []}
    head = "| task | level | chance | best shortcut | accuracy | vs chance |"
    rule = "|---|---|---|---|---|---|"
    if before is not None:
        head = (
            "| task | level | chance | before: best shortcut | accuracy "
            "| after: best shortcut | accuracy | vs chance |"
        )
        rule = "|---|---|---|---|---|---|---|---|"
    lines = [head, rule]
    for r in after:
        name, acc = _best(r)
        cells = [f"`{r['task']}`", r["level"], f"{r['chance']:.3f}"]
        if before is not None:
            prev = old.get((r["task"], r["level"]))
            if prev is None:
                cells += ["—", "—"]
            else:
                pname, pacc = _best(prev)
                cells += [pname, f"{pacc:.3f}"]
        cells += [name, f"{acc:.3f}", f"{acc - r['chance']:+.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--before", help="an earlier audit JSON for the 'before' column")
    args = ap.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    t0 = time.perf_counter()
    results = [a.to_dict() for a in audit(count=args.count, seed=args.seed, jobs=args.jobs)]
    wall = time.perf_counter() - t0
    OUT.mkdir(exist_ok=True)
    (OUT / "audit.json").write_text(json.dumps(results, indent=1) + "\n")
    before = json.loads(Path(args.before).read_text()) if args.before else None
    print(table(results, before))
    print(
        f"\n{len(results)} task x level audits, {args.count} items per seed, {args.jobs} "
        f"processes: {wall:.0f} s wall (load average before: {' '.join(load)})"
    )


if __name__ == "__main__":
    main()
