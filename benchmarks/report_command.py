"""``pytest-reasoning report`` on a large results file, as a user runs it: the command's CPU
time (the process tree's, ``os.wait4``), wall time and peak RSS, the page's size, and in
headless Chromium how soon the viewer is ready; then where the command's CPU goes, stage by
stage (the same functions, timed one at a time in this process).

The results file: N synthetic samples (``report_browser.synthetic_rows``: the five example
suites' items, a candidate and a baseline, replies scored by the evaluator's own
``score_reply``), written as ``Outcome.to_dict`` rows, the results file's own format; or
``--results FILE`` (kept with ``--write FILE`` to reuse: generating 10,000 takes minutes).

Usage: python benchmarks/report_command.py [--samples 10000] [--write r.jsonl | --results r.jsonl]
       [--stages [--plots-only]]   (the stages only: no command, no Chromium; up to the plots)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import run
from report_browser import render, synthetic_rows

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "openai/baseline"


def write_results(n: int, path: Path) -> None:
    """The results file and the prompts beside it, as a run writes them (its ResultStore)."""
    from pytest_reasoning.gates import ResultStore

    prompts: dict[str, str] = {}
    outcomes, _ = synthetic_rows(n, prompts=prompts)
    store = ResultStore(path)
    for o in outcomes:
        store.add(o)
        store.add_prompt(o.prompt_sha256, prompts[o.prompt_sha256])
    store.close()


def stages(results: Path, out: Path, plots_only: bool = False) -> dict[str, float]:
    """CPU seconds of each stage of ``report_command`` (reading, comparing, plots, prompts
    read from the file beside the results or generated again, the viewer's data, its blobs);
    ``plots_only``: up to the plots (the stages they need, then the plots, matplotlib's import
    included)."""
    from pytest_reasoning.cli.results import _read_report_rows
    from pytest_reasoning.core import Outcome
    from pytest_reasoning.gates import GateSpec, compare, item_scores
    from pytest_reasoning.gates.store import read_prompts
    from pytest_reasoning.report import html
    from pytest_reasoning.report.cells import Cell, cells
    from pytest_reasoning.report.plots import plots
    from pytest_reasoning.report.samples import sample_data
    from pytest_reasoning.report.viewer import viewer_parts

    took: dict[str, float] = {}

    def timed(name: str, f: Any) -> Any:
        t = time.process_time()
        value = f()
        took[name] = time.process_time() - t
        return value

    rows = timed("read the file", lambda: _read_report_rows([str(results)]))

    def comparisons() -> Any:
        outcomes = [Outcome.from_dict(r) for r in rows]
        base = item_scores(o for o in outcomes if o.model == BASELINE)
        pairs = (
            (o, GateSpec(o.suite or "", o.entry or o.task, o.level))
            for o in outcomes
            if o.model != BASELINE
        )
        return compare(pairs, base, BASELINE)

    cmp = timed("compare (--baseline)", comparisons)
    by_key = timed(
        "levels", lambda: {(c.model, c.suite, c.entry, c.level): Cell(c.stats)
                           for c in cells(rows).values()}
    )  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    timed("plots", lambda: plots(by_key, rows, cmp, str(out)))
    if plots_only:
        return took
    # The prompts filed beside the results (a run writes them); any missing are generated.
    rebuilt = timed("prompts", lambda: html._prompts(rows, read_prompts(str(results))))
    data = timed(
        "samples' data",
        lambda: sample_data(rows, cmp, prompt=lambda r: rebuilt.get(str(r.get("prompt_sha256"))),
                            cost={}),
    )  # fmt: skip
    timed("blobs (JSON, DEFLATE)", lambda: viewer_parts(data, str(out)))
    return took


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--results", help="an existing results file (else generated)")
    ap.add_argument("--write", help="keep the generated results file here")
    ap.add_argument("--rounds", type=int, default=3, help="opens of the page in Chromium")
    ap.add_argument("--stages", action="store_true", help="time the stages only")
    ap.add_argument("--plots-only", action="store_true", help="with --stages: up to the plots")
    args = ap.parse_args()
    if args.stages and args.results:
        with tempfile.TemporaryDirectory() as tmp:
            print(f"where the CPU goes (load average {os.getloadavg()[0]:.1f}):")
            took = stages(Path(args.results), Path(tmp) / "stages", args.plots_only)
            for name, cpu in took.items():
                print(f"  {name:24s} {cpu:6.2f} s")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(args.results or args.write or Path(tmp) / "results.jsonl")
        if not args.results:
            t = time.perf_counter()
            write_results(args.samples, results)
            print(f"generated {results} in {time.perf_counter() - t:.0f} s")
        with open(results, encoding="utf-8") as fh:
            n = sum(1 for _ in fh)
        out = Path(tmp) / "report"
        cmd = [sys.executable, "-m", "pytest_reasoning.cli", "report", str(results),
               "--baseline", BASELINE, "--out", str(out)]  # fmt: skip
        got = run(cmd, env={**os.environ, "PYTHONHASHSEED": "0"})
        if got.rc:
            print(got.tail)
            return 1
        page = (out / "index.html").stat().st_size / 1e6
        data = list((out / "data").glob("*.js")) if (out / "data").is_dir() else []
        load = os.getloadavg()[0]
        seen = [render(out / "index.html", None, height=1400) for _ in range(args.rounds)]
        ready = sorted(s["ready"] for s in seen)
        busy = sorted(s["main_cpu_s"] for s in seen)
        print(f"pytest-reasoning report: {n:,} samples; {got.cpu_s:.1f} s CPU, {got.wall_s:.1f} s "
              f"wall, peak RSS {got.max_rss_mb:.0f} MB; load average {load:.1f}")  # fmt: skip
        print(f"index.html {page:.1f} MB" + (f", {len(data)} data files" if data else ", inline"))
        print(f"chromium, {args.rounds} opens: viewer ready {ready[len(ready) // 2]:.0f} ms "
              f"(max {ready[-1]:.0f}) after navigation; main thread until ready "
              f"{busy[len(busy) // 2]:.2f} s CPU")  # fmt: skip
        problems = [p for s in seen for p in s["problems"]]
        off = [u for s in seen for u in s["requests"]]
        print(f"problems {problems}, requests off the page's files {off}")
        print("where the CPU goes (in this process, one stage at a time):")
        for name, cpu in stages(results, Path(tmp) / "stages").items():
            print(f"  {name:24s} {cpu:6.2f} s")
    return 0 if not problems and not off else 1


if __name__ == "__main__":
    raise SystemExit(main())
