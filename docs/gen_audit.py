"""Regenerate the per-level results table of docs/audit.md from an audit's JSON.

The table lists, per task x level, the strongest baseline (rule or learner) and the strongest
generic learner (bag of words, surface features or counts, numbers rule) with their accuracy
next to chance, majority and the bound, and for zebra the best share of right cells next to
its per-cell chance and bound. The JSON is what ``pytest-reasoning audit --json`` writes, so
the table can be rebuilt without auditing again.

Usage:
    pytest-reasoning audit --jobs 2 --json > audit.json   # 200 test / 600 training problems
    python docs/gen_audit.py audit.json [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DOC = Path(__file__).with_name("audit.md")
BEGIN, END = "<!-- BEGIN GENERATED AUDIT TABLE -->", "<!-- END GENERATED AUDIT TABLE -->"
LEARNERS = ("bow", "surface", "numbers")


def _best(rows: list[dict[str, Any]], key: str = "accuracy") -> dict[str, Any] | None:
    """The first of the highest (the audit's own tie rule)."""
    found = [r for r in rows if r.get(key) is not None]
    return max(found, key=lambda r: r[key]) if found else None


def table(audits: list[dict[str, Any]]) -> str:
    out = [
        "| task | level | problems (test / train) | chance | majority | bound "
        "| strongest baseline | accuracy | strongest learner | accuracy | cells: chance, bound "
        "→ best | |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for a in audits:
        best = _best(a["baselines"])
        if best is None:
            continue
        learner = _best([b for b in a["baselines"] if b["kind"] in LEARNERS])
        cells = ""
        if a.get("partial_chance") is not None:
            top = _best(a["baselines"], "partial")
            if top is not None:
                cells = (f"{a['partial_chance']:.3f}, {a['partial_bound']:.3f} → "
                         f"{top['name']} {top['partial']:.3f}")  # fmt: skip
        over = best["accuracy"] > a["bound"] or (
            a.get("partial_bound") is not None
            and any((b.get("partial") or 0) > a["partial_bound"] for b in a["baselines"])
        )
        out.append(
            "| "
            + " | ".join(
                [
                    f"`{a['task']}`",
                    a["level"],
                    f"{a['count']} / {a['train_count']}",
                    f"{a['chance']:.3f}",
                    f"{a['majority']:.3f}",
                    f"{a['bound']:.3f}",
                    best["name"],
                    f"{best['accuracy']:.3f}",
                    learner["name"] if learner else "—",
                    f"{learner['accuracy']:.3f}" if learner else "—",
                    cells,
                    "over" if over else "",
                ]
            )
            + " |"
        )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="the output of pytest-reasoning audit --json")
    ap.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    args = ap.parse_args()
    audits = json.loads(Path(args.json).read_text())
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{table(audits)}\n{END}{tail}"
    if args.check:
        if new != text:
            print(f"{DOC} is out of date: python docs/gen_audit.py {args.json}", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
