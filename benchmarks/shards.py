"""Gate-aware shards against one run (issue 22; numbers in the README and docs/ci.md).

The example suites run once whole and once as N shards (``--reasoning-shard K/N``) against
the loopback test server (a model that is right only up to a size, so gates both pass and
fail), without a response cache; then ``pytest-reasoning gate`` decides the shards' results
files. Checked, or the benchmark fails: the union of the shards' rows is the whole run's rows
(no sample twice, none missing), and every verdict (JUnit test case and outcome) and the exit
status after ``gate`` are the whole run's. Printed: samples, calls and wall time per shard, the
merge's time.

Usage: python benchmarks/shards.py [--shards 4] [--samples 2] [--model shallow:3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from pytest_reasoning.gates.rows import row_key
from pytest_reasoning.testing.server import FakeOpenAIServer

SUITES = Path(__file__).resolve().parent.parent / "example_suites"


def verdicts(junit: Path) -> dict[str, str]:
    """Gate, comparison and infrastructure test cases: name -> outcome."""
    out = {}
    for case in ET.parse(junit).iter("testcase"):
        name = case.get("name", "")
        if "-gate" in name or "-vs-baseline" in name or name == "infrastructure":
            found = [c.tag for c in case if c.tag in ("failure", "skipped", "error")]
            out[f"{case.get('classname')}.{name}"] = found[0] if found else "passed"
    return out


def rows(path: Path) -> Counter[str]:
    with open(path, encoding="utf-8") as fh:
        return Counter(repr(row_key(json.loads(line))) for line in fh if line.strip())


def pytest_run(tmp: Path, args: list[str]) -> tuple[int, float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
         "-q", *args],
        cwd=tmp, capture_output=True, text=True,
    )  # fmt: skip
    return proc.returncode, time.perf_counter() - start, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument(
        "--samples", type=int, default=2, help="per level (--reasoning-samples); 0: the suites'"
    )
    ap.add_argument("--model", default="shallow:3", help="a test server behaviour")
    args = ap.parse_args()
    problems: list[str] = []
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        suites = sorted(str(p) for p in SUITES.glob("*.yaml"))
        samples = ["--reasoning-samples", str(args.samples)] if args.samples else []
        common = [*suites, "--llm", f"openai/{args.model}", "--llm-api-base", server.url,
                  "--reasoning-cache", "off", *samples,
                  "--rootdir", str(SUITES.parent)]  # fmt: skip
        load = os.getloadavg()[0]
        status, whole_s, _ = pytest_run(
            tmp, [*common, "--reasoning-results=all.jsonl", "--junitxml=all.xml"]
        )
        whole_calls = sum(server.stats()["requests"].values())
        expected = rows(tmp / "all.jsonl")
        print(f"whole run: {sum(expected.values())} samples, {whole_s:.1f} s, exit {status}")
        shard_rows: Counter[str] = Counter()
        files = []
        for k in range(1, args.shards + 1):
            before = sum(server.stats()["requests"].values())
            code, seconds, out = pytest_run(
                tmp, [*common, f"--reasoning-shard={k}/{args.shards}",
                      f"--reasoning-results=shard-{k}.jsonl"]
            )  # fmt: skip
            calls = sum(server.stats()["requests"].values()) - before
            found = rows(tmp / f"shard-{k}.jsonl")
            shard_rows += found
            files.append(str(tmp / f"shard-{k}.jsonl"))
            line = next((x for x in out.splitlines() if x.startswith("reasoning: shard")), "")
            print(f"shard {k}/{args.shards}: {sum(found.values())} samples, {calls} calls, "
                  f"{seconds:.1f} s, exit {code}  ({line.partition(': ')[2]})")  # fmt: skip
        shard_calls = sum(server.stats()["requests"].values()) - whole_calls
        start = time.perf_counter()
        gate = subprocess.run(
            [sys.executable, "-m", "pytest_reasoning.cli", "gate", *suites, "--results", *files,
             *samples, "--junitxml", str(tmp / "gate.xml"), "-q"],
            cwd=SUITES.parent, capture_output=True, text=True,
        )  # fmt: skip
        gate_s = time.perf_counter() - start
        mine, theirs = verdicts(tmp / "gate.xml"), verdicts(tmp / "all.xml")
        outcomes = Counter(theirs.values())
        print(f"gate: {len(mine)} verdicts, {gate_s:.1f} s, exit {gate.returncode}; whole run: "
              f"{dict(outcomes)}")  # fmt: skip
        if shard_rows != expected:
            problems.append(f"rows differ: {sum((shard_rows - expected).values())} extra, "
                            f"{sum((expected - shard_rows).values())} missing")  # fmt: skip
        # Informative only: identical prompts in flight together share one call, so the
        # count of calls depends on timing (it is at most the samples either way).
        print(f"calls: {whole_calls} whole, {shard_calls} in the shards together")
        if mine != theirs:
            diff = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
            problems.append(f"{len(diff)} verdicts differ, e.g. {diff[:3]}")
        if gate.returncode != status:
            problems.append(f"exit status: gate {gate.returncode}, whole run {status}")
        print(f"load average {load:.1f} at the start, {os.cpu_count()} CPUs")
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print("union of shard rows = the whole run's rows; verdicts and exit status "
              "identical after gate")  # fmt: skip
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
