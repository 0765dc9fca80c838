"""Look at the HTML report as a person would, in headless Chromium (the DevTools protocol,
``pytest_reasoning.testing.browser``): render it, take a screenshot, check that every plot
decoded and the console stayed clean; at scale, measure the page's size and how fast it paints.

Default: the report of a real run (the quick suite against the project's fake server: a model
that fails deeper arithmetic, compared with the reference), screenshot to ``docs/report.png``.
``--results`` builds it from results files instead.

``--samples N``: N synthetic samples (the five example suites' items, more seeds as needed,
two models: a candidate and a baseline whose replies are the tasks' own worked solutions,
some wrong, truncated, thinking in ``<think>`` tags, cached or failed), scored by the
evaluator's own ``score_reply``, gated and compared as a run would, then the report: build
time, page and data sizes, and in Chromium the time to the viewer's first table, to filter,
to search, to open one sample (a level at a time, past the page's inline budget).

Needs Debian's ``chromium`` (``apt-get install chromium``).

Usage: python benchmarks/report_browser.py [--results R.jsonl ...] [--screenshot PATH]
       python benchmarks/report_browser.py --samples 10000 [--screenshot docs/report-10k.png]
       python benchmarks/report_browser.py --samples 100000 --repeats 10
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SUITES = ["dyval", "zebra", "flenqa", "musr", "quick"]
READY = "document.documentElement.dataset.viewer === 'ready'"
ROWS = "document.querySelectorAll('#pr-samples tbody tr').length"


def rendered_after(n: int) -> str:
    return f"Number(document.documentElement.dataset.rendered) > {n}"


def render(index: Path, screenshot: Path | None, *, height: int = 2200) -> dict[str, Any]:
    """Open ``index`` in headless Chromium: plots decoded, problems, timings, screenshot."""
    from pytest_reasoning.testing.browser import Browser

    with Browser(height=height) as browser:
        page = browser.open("about:blank")
        page.send("Performance.enable", {"timeDomain": "threadTicks"})
        started = time.perf_counter()
        page.goto(index.resolve().as_uri(), ready=READY, timeout=120)
        opened = time.perf_counter() - started
        metrics = {m["name"]: m["value"] for m in page.send("Performance.getMetrics")["metrics"]}
        page.wait_for("document.readyState === 'complete'", 120)
        found: dict[str, Any] = page.evaluate(
            "({images: document.images.length,"
            " broken: [...document.images].filter(i => !i.naturalWidth).length,"
            " ready: performance.getEntriesByName('pr-ready')[0].startTime,"
            " fcp: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime,"
            " status: document.getElementById('pr-status').textContent})"
        )
        found["open_s"] = opened
        # The page's main thread until the viewer was ready (CPU time: what load cannot add).
        found["main_cpu_s"] = metrics["TaskDuration"]
        if screenshot is not None:
            page.screenshot(str(screenshot), full=False)
        found["problems"] = page.problems()
        found["requests"] = [u for u in page.requests() if not u.startswith(("file:", "data:"))]
    return found


def screenshot_samples(index: Path, shot: Path) -> None:
    """The viewer as a person triaging uses it: the candidate's wrong answers, one open."""
    from pytest_reasoning.testing.browser import Browser

    with Browser(width=1280, height=1300) as browser:
        page = browser.open(index.resolve().as_uri(), ready=READY, timeout=120)
        n = int(page.evaluate("document.documentElement.dataset.rendered"))
        page.choose("#pr-f-model", "openai/candidate")
        page.wait_for(rendered_after(n))
        n += 1
        page.choose("#pr-f-outcome", "wrong")
        page.wait_for(rendered_after(n))
        n += 1
        page.click("#pr-samples tbody tr:nth-child(3) a")
        page.wait_for(rendered_after(n) + " && !document.getElementById('pr-detail').hidden")
        page.evaluate("document.getElementById('samples').scrollIntoView()")
        page.screenshot(str(shot), full=False)


def interact(index: Path, paged: bool) -> dict[str, Any]:
    """Seconds to narrow to one level (paged: load it), to show its wrong answers, to search
    its texts, to open one sample."""
    from pytest_reasoning.testing.browser import Browser

    out: dict[str, Any] = {}
    with Browser(height=1400) as browser:
        page = browser.open(index.resolve().as_uri(), ready=READY, timeout=120)

        def timed(name: str, action: Any, until: str = "true") -> None:
            n = int(page.evaluate("document.documentElement.dataset.rendered"))
            t = time.perf_counter()
            action()
            page.wait_for(f"{rendered_after(n)} && ({until})", timeout=120)
            out[name] = time.perf_counter() - t

        if paged:  # the level picker: open its first level
            timed("level_s", lambda: page.click("#pr-samples tbody tr:first-child a"))
        else:
            levels = page.evaluate(
                "[...document.getElementById('pr-f-level').options].map(o => o.value)"
            )
            timed("level_s", lambda: page.choose("#pr-f-level", levels[1]), ROWS + " > 0")
        out["level"] = page.evaluate("document.getElementById('pr-status').textContent")
        timed("wrong_s", lambda: page.choose("#pr-f-outcome", "wrong"))
        timed("search_s", lambda: page.type("#pr-f-q", "the"))
        timed("open_sample_s", lambda: page.click("#pr-samples tbody tr a"),
              "!document.getElementById('pr-detail').hidden")  # fmt: skip
        out["problems"] = page.problems()
    return out


def synthetic_rows(
    n: int, repeats: int = 1, seed: int = 1, prompts: dict[str, str] | None = None
) -> tuple[list[Any], list[Any]]:
    """(outcomes, gate specs) of ``n`` samples: half a candidate's, half a baseline's, each
    item asked ``repeats`` times; ``prompts`` gets their prompts by hash."""
    from pytest_reasoning.config import addresses, load_suite
    from pytest_reasoning.core import Reply
    from pytest_reasoning.evaluate import score_reply
    from pytest_reasoning.registry import get_task

    wanted = n // (2 * repeats)
    items: list[tuple[Any, Any]] = []
    made: dict[tuple[Any, ...], Any] = {}  # repeats share their item: generate it once
    round_ = 0
    while len(items) < wanted * repeats:
        for name in SUITES:
            path = ROOT / "example_suites" / f"{name}.yaml"
            spec = load_suite(
                path, seed=seed + round_, repeats=repeats, display=f"example_suites/{name}.yaml"
            )
            for a in addresses(spec):
                key = (name, a.entry.id, a.level.level, a.seed, a.index)
                if key not in made:
                    made[key] = a.make_item()
                items.append((a, dataclasses.replace(made[key], id=a.sample_id)))
                if len(items) >= wanted * repeats:
                    break
            if len(items) >= wanted * repeats:
                break
        round_ += 1
    outcomes, specs = [], []
    for a, item in items:
        if prompts is not None:
            prompts[item.prompt_sha256] = item.prompt
        task = get_task(item.task)
        worked = task.explain(item.problem, item.answer)
        for model, skill in (("openai/candidate", 0.7), ("openai/baseline", 0.85)):
            rng = random.Random(f"{model}\0{item.id}\0{a.suite}")
            roll = rng.random()
            finish, error, content = "stop", None, worked
            if roll < 0.02:
                content, error = None, "HTTP 429: rate limited (after 3 attempts)"
            elif roll < 0.06:
                content, finish = worked[: len(worked) // 3], "length"
            elif roll > skill:
                cut = worked.rfind(item.answer)
                content = worked[:cut] + "0" + worked[cut + len(item.answer) :] if cut >= 0 else "0"
            if content is not None and rng.random() < 0.1:
                content = f"<think>{worked}\nLet me check each step again.</think>\n{content}"
            tokens = (len(item.prompt) // 4, len(content or "") // 4)
            reply = Reply(
                content=content,
                error=error,
                error_kind="transient" if error else None,
                prompt_tokens=tokens[0],
                completion_tokens=tokens[1],
                latency_s=rng.uniform(0.2, 8.0),
                cached=rng.random() < 0.2,
                finish_reason=None if error else finish,
                cost_usd=(tokens[0] * 0.15 + tokens[1] * 0.6) / 1e6,
            )
            o = score_reply(item, model, reply, repeat=a.repeat)
            outcomes.append(
                dataclasses.replace(o, suite=a.suite, entry=a.entry.id, repeats=a.level.repeats)
            )
            specs.append(a.gate)
    return outcomes, specs


def scale(args: argparse.Namespace) -> int:
    from pytest_reasoning.gates import Ledger, baseline_answers, compare, decide_gates
    from pytest_reasoning.report import build_report

    t = time.perf_counter()
    outcomes, specs = synthetic_rows(args.samples, args.repeats)
    made = time.perf_counter() - t
    ledger = Ledger(hint="-")
    for o, s in zip(outcomes, specs, strict=True):
        ledger.add(o, s)
    base = baseline_answers(o for o in outcomes if o.model == "openai/baseline")
    pairs = [(o, s) for o, s in zip(outcomes, specs, strict=True) if o.model != "openai/baseline"]
    comparisons = compare(pairs, base, "openai/baseline")
    levels = list(ledger.levels.values())
    gates = decide_gates(levels)
    rows = [o.to_dict() for o in outcomes]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.keep or tmp) / "report"
        t, cpu = time.perf_counter(), time.process_time()
        build_report(rows, str(out), levels=levels, gates=gates, comparisons=comparisons)
        built, built_cpu = time.perf_counter() - t, time.process_time() - cpu
        page_mb = (out / "index.html").stat().st_size / 1e6
        data = sorted((out / "data").glob("*.js"))
        data_mb = sum(p.stat().st_size for p in data) / 1e6
        seen = [render(out / "index.html", None, height=1400) for _ in range(args.rounds)]
        if args.screenshot:
            screenshot_samples(out / "index.html", Path(args.screenshot))
        acted = interact(out / "index.html", paged=bool(data))
    load = os.getloadavg()[0]
    fcp = sorted(s["fcp"] for s in seen)
    ready = sorted(s["ready"] for s in seen)
    cpu = sorted(s["main_cpu_s"] for s in seen)
    print(f"samples: {len(rows):,} ({len(rows) // (2 * args.repeats):,} items x {args.repeats} "
          f"repeat(s) x 2 models; generated and scored in {made:.0f} s)")  # fmt: skip
    print(f"build_report: {built:.1f} s ({built_cpu:.1f} s CPU); index.html {page_mb:.1f} MB; "
          f"data files: {len(data)}, {data_mb:.1f} MB")  # fmt: skip
    print(f"chromium, {args.rounds} opens: first contentful paint {fcp[len(fcp) // 2]:.0f} ms "
          f"(max {fcp[-1]:.0f}), viewer ready {ready[len(ready) // 2]:.0f} ms (max "
          f"{ready[-1]:.0f}) after navigation; main thread busy until ready "
          f"{cpu[len(cpu) // 2]:.2f} s (CPU); load average {load:.1f}")  # fmt: skip
    print(f"  first view: {seen[0]['status']}")
    print(f"  {acted['level']}")
    print("  " + ", ".join(f"{k} {acted[k]:.2f}" for k in
                           ("level_s", "wrong_s", "search_s", "open_sample_s")))  # fmt: skip
    broken = sum(s["broken"] for s in seen)
    problems = [p for s in seen for p in s["problems"]] + acted["problems"]
    off = [u for s in seen for u in s["requests"]]
    print(f"  images {seen[0]['images']}, broken {broken}, problems {problems}, requests off "
          f"the page's files {off}")  # fmt: skip
    return 0 if not broken and not problems and not off else 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", nargs="*")
    ap.add_argument("--screenshot")
    ap.add_argument("--samples", type=int, help="synthetic samples: measure the page at scale")
    ap.add_argument("--repeats", type=int, default=1, help="samples per item (with --samples)")
    ap.add_argument("--rounds", type=int, default=3, help="opens of the page to time")
    ap.add_argument("--keep", help="build the report in this folder (kept)")
    args = ap.parse_args()
    if args.samples:
        return scale(args)
    shot = Path(args.screenshot or ROOT / "docs" / "report.png")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report"
        if args.results:
            cmd = [sys.executable, "-m", "pytest_reasoning.cli", "report", *args.results]
            subprocess.run([*cmd, "--out", str(out)], check=True)
        else:
            from pytest_reasoning.testing.server import FakeOpenAIServer

            with FakeOpenAIServer() as server:
                subprocess.run(
                    [sys.executable, "-m", "pytest", str(ROOT / "example_suites" / "quick.yaml"),
                     "--llm", "openai/shallow:1", "--llm-baseline", "reference",
                     "--llm-api-base", server.url, "--reasoning-cache", "off",
                     f"--reasoning-report={out}", "-p", "no:cacheprovider", "-q"],
                    cwd=tmp, capture_output=True, text=True,
                    env={**os.environ, "PYTHONHASHSEED": "0"},
                )  # fmt: skip
        seen = render(out / "index.html", shot)
    print(f"images: {seen['images']}, broken: {seen['broken']}, "
          f"console errors: {len(seen['problems'])}, screenshot: {shot}")  # fmt: skip
    for line in seen["problems"]:
        print(line)
    ok = seen["images"] >= 3 and seen["broken"] == 0 and not seen["problems"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
