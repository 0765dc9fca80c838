"""Regenerate the per-dataset table of docs/tasks/gym.md and docs/tasks/gym-checks.json.

For every registered ``gym.*`` task: the shortcut audit at its first level (``--count``
items per seed) and the perturbation check (:mod:`pytest_reasoning.tasks.gym.checks`) at its
first and last level; then every dataset the manifest excludes, with the reason.

Usage: python docs/gen_gym.py [--count 20] [--seeds 3] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
from pathlib import Path
from typing import Any

from pytest_reasoning.audit import audit_level
from pytest_reasoning.registry import get_task, task_ids
from pytest_reasoning.tasks.base import resolve_params
from pytest_reasoning.tasks.gym.build import MANIFEST
from pytest_reasoning.tasks.gym.checks import accepted_perturbations

DOC = Path(__file__).with_name("tasks") / "gym.md"
CHECKS = Path(__file__).with_name("tasks") / "gym-checks.json"
BEGIN, END = "<!-- BEGIN GENERATED TABLE -->", "<!-- END GENERATED TABLE -->"
MARGIN = 0.10  # a shortcut this far above chance is flagged


def check(args: tuple[str, int, int]) -> dict[str, Any]:
    tid, count, seeds = args
    task = get_task(tid)
    first, last = task.levels[0], task.levels[-1]
    row: dict[str, Any] = {"task": tid, "levels": len(task.levels)}
    try:
        a = audit_level(tid, first, count=count, seed=1, train_count=count)
        best = a.best
        row["audit"] = {
            "level": first,
            "chance": round(a.chance, 3),
            "best": best.name if best else None,
            "accuracy": round(best.accuracy, 3) if best else None,
            "excess": round(a.excess, 3),
        }
    except Exception as exc:  # recorded in the table, not hidden
        row["audit"] = {"error": f"{type(exc).__name__}: {exc}"[:160]}
    accepted = tried = 0
    example = None
    for level in dict.fromkeys((first, last)):
        params = resolve_params(task, level)
        a_, t_, e_ = accepted_perturbations(task.dataset, params, range(1, seeds + 1))  # type: ignore[attr-defined]
        accepted, tried, example = accepted + a_, tried + t_, example or e_
    row["perturbation"] = {"accepted": accepted, "tried": tried, "example": example}
    print(tid, row["audit"], row["perturbation"], flush=True)
    return row


def table(rows: list[dict[str, Any]], excluded: dict[str, str]) -> str:
    out = [
        "| task | levels | audit at L0: chance → best shortcut | verifier vs perturbed gold "
        "| status |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        a, p = r["audit"], r["perturbation"]
        if "error" in a:
            audit, flag_a = f"failed: {a['error']}", True
        else:
            audit = f"{a['chance']:.2f} → {a['best']} {a['accuracy']:.2f}"
            flag_a = a["excess"] > MARGIN
        flag_p = p["accepted"] > 0
        verifier = f"rejects {p['tried'] - p['accepted']}/{p['tried']}"
        if not p["tried"]:
            verifier = "not checked: its answers hold no letter or digit"
        if flag_p:
            verifier += f" (accepts `{p['example']}`)".replace("|", "\\|")
        marks = [m for m, on in (("shortcut", flag_a), ("lenient verifier", flag_p)) if on]
        status = "**" + ", ".join(marks) + "**" if marks else "ok"
        out.append(f"| `{r['task']}` | {r['levels']} | {audit} | {verifier} | {status} |")
    for name, why in sorted(excluded.items()):
        out.append(f"| `gym.{name}` | – | – | – | **not registered**: {why} |".replace("|", "|"))
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--table-only", action="store_true", help="rewrite the table from the JSON")
    args = ap.parse_args()
    tids = [t for t in task_ids() if t.startswith("gym.")]
    work = [(t, args.count, args.seeds) for t in tids]
    if args.table_only:
        rows = json.loads(CHECKS.read_text(encoding="utf-8"))
    elif args.jobs > 1:
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            rows = pool.map(check, work)
    else:
        rows = [check(w) for w in work]
    excluded = json.loads(MANIFEST.read_text(encoding="utf-8"))["excluded"]
    CHECKS.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    text = DOC.read_text(encoding="utf-8")
    body = f"{BEGIN}\n{table(rows, excluded)}\n{END}"
    DOC.write_text(re.sub(f"{BEGIN}.*?{END}", lambda _: body, text, flags=re.S), encoding="utf-8")


if __name__ == "__main__":
    main()
