"""What a run says it spent against what the endpoint received (issue 39).

Each configuration runs ``pytest`` on an example suite against the project's test server
(loopback, it counts the chat requests it receives), with a fresh response cache and the
default concurrency (8) unless the configuration says otherwise, and reports: the samples the
sequential levels needed (from the summary), the calls the spend line reports, the requests
the server received, and the spend line itself. A configuration is run once (the counts do
not depend on timing: a sequential level asks no further than the fewest answers that could
settle it, and every request is accounted for).

Usage: nice -n 10 python benchmarks/accounting.py [--only NAME,...] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_reasoning.testing.server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
SUITES = ROOT / "example_suites"

# name → (model, suite, thresholds (None: the suite's own), extra pytest arguments)
RUNS: dict[str, tuple[str, str, str | None, tuple[str, ...]]] = {
    "dyval-fixed": ("oracle", "dyval.yaml", None, ()),
    "dyval-fixed-n2": ("oracle", "dyval.yaml", None, ("-n", "2")),
    "dyval-seq": ("oracle", "dyval.yaml", None, ("--reasoning-sequential",)),
    "dyval-seq-n2": ("oracle", "dyval.yaml", None, ("--reasoning-sequential", "-n", "2")),
    "dyval-seq-r3": (
        "oracle", "dyval.yaml", None, ("--reasoning-sequential", "--reasoning-repeats", "3"),
    ),
    "dyval-seq-r3-n2": (
        "oracle", "dyval.yaml", None,
        ("--reasoning-sequential", "--reasoning-repeats", "3", "-n", "2"),
    ),
    "flenqa-fixed": ("always-true", "flenqa.yaml", "0.1", ()),
    "flenqa-0.1-seq": ("always-true", "flenqa.yaml", "0.1", ("--reasoning-sequential",)),
    "flenqa-0.9-seq": ("always-true", "flenqa.yaml", "0.9", ("--reasoning-sequential",)),
    "flenqa-0.1-seq-n2": (
        "always-true", "flenqa.yaml", "0.1", ("--reasoning-sequential", "-n", "2"),
    ),
    "flenqa-0.9-seq-n2": (
        "always-true", "flenqa.yaml", "0.9", ("--reasoning-sequential", "-n", "2"),
    ),
    "budget-1500": ("oracle", "budget", None, ("--reasoning-budget", "tokens=1500")),
    "budget-1500-n2": ("oracle", "budget", None, ("--reasoning-budget", "tokens=1500", "-n", "2")),
}  # fmt: skip

# DyVal arithmetic D1/D2, 100 samples each (about 80 tokens a call), for the budget runs.
BUDGET_SUITE = """\
seed: 3
samples: 100
tasks:
  - task: dyval.arithmetic
    levels:
      D1: {min_accuracy: 0.5}
      D2: {min_accuracy: 0.5}
"""


def run(name: str, folder: Path) -> dict[str, str]:
    model, suite, threshold, extra = RUNS[name]
    if suite == "budget":
        path = folder / "budget.yaml"
        path.write_text(BUDGET_SUITE)
    else:
        text = (SUITES / suite).read_text()
        if threshold is not None:
            text = re.sub(r"min_accuracy: [0-9.]+", f"min_accuracy: {threshold}", text)
        path = folder / f"{name}.yaml"
        path.write_text(text)
    with FakeOpenAIServer() as server:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
             "-q", str(path), "--llm", f"openai/{model}", "--llm-api-base", server.url,
             "--reasoning-cache", str(folder / f"cache-{name}"), *extra],
            capture_output=True, text=True, cwd=folder, check=False,
        )  # fmt: skip
        wall = time.monotonic() - started
        received = server.stats()["total"]
    out = done.stdout
    spend = re.search(r"reasoning: (spent .*)", out)
    calls = re.search(r"on (\d+) call\(s\)", out)
    needed = re.search(r"settled early: ([\d,]+) of ([\d,]+) samples needed", out)
    samples = re.search(r"reasoning: ([\d,]+) samples", out)
    return {
        "run": name,
        "settings": " ".join(("concurrency 8", *extra)),
        "model": model,
        "samples": samples.group(1) if samples else "?",
        "needed": needed.group(1) if needed else "-",
        "calls reported": calls.group(1) if calls else "0",
        "requests received": str(received),
        "spend line": spend.group(1) if spend else "(none)",
        "exit": str(done.returncode),
        "wall s": f"{wall:.0f}",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--only", default="", help="comma-separated run names")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(RUNS)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            row = run(name, Path(tmp))
            rows.append(row)
            print(row, flush=True)
    head = list(rows[0])
    table = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    table += ["| " + " | ".join(r[h] for h in head) + " |" for r in rows]
    text = "\n".join(table) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
