"""Where the wall time of a pytest-reasoning run goes: when the first model request reaches the
server, when the first result is printed, when the last reply leaves, when the summary is
printed and when the process has exited; plus the CPU seconds of the whole run.

    python benchmarks/startup.py [--count 1000] [--rounds 5] [--cache] [--python OTHER]

Against the async loopback server (``loopback.py``, 50 ms, concurrency 16); times are seconds
after the command started (``time.monotonic`` on both sides), medians over the rounds, with the
load average. ``--cache`` runs a cold then a warm rerun against a fresh response cache
(the warm one makes no request: its first printed result is the number that matters).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import measure
from loopback import Loopback

# pytest -q prints one character per result: a line of them (the first may still be partial).
RESULT_LINE = re.compile(r"^[.WIFsEx]+(\s+\[\s*\d+%\])?$")


PYTHON = sys.executable


def pytest_cmd(suite: Path, url: str, concurrency: int, cache: str, extra: list[str]) -> list[str]:
    return [
        PYTHON, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider",
        "--llm", "openai/bench", "--llm-api-base", url, "--reasoning-cache", cache,
        "--reasoning-concurrency", str(concurrency), *extra,
    ]  # fmt: skip


def one(
    server: Loopback, cmd: list[str], cwd: Path, env: dict[str, str]
) -> dict[str, float | None]:
    server.reset()
    got = measure.run(
        cmd,
        cwd=cwd,
        env=env,
        first_result=lambda t: bool(RESULT_LINE.match(t)),
        keep_line_times=True,
    )
    if got.rc not in (0, 1):
        raise SystemExit(f"pytest failed ({got.rc}):\n{got.tail}")
    stats = server.stats()
    summary = next((t for t, line in got.line_times if "reasoning summary" in line), None)
    last_line = got.line_times[-1][0] if got.line_times else None

    def at(t: float | None) -> float | None:
        return None if t is None else t - got.started

    return {
        "first_request": at(stats["first_at"]),
        "first_result": at(got.first_result_at),
        "last_reply": at(stats["last_at"]),
        "summary": at(summary),
        "last_line": at(last_line),
        "exit": got.wall_s,
        "exit_after_last_line": None if last_line is None else got.started + got.wall_s - last_line,
        "requests": stats["requests"],
        "cpu": got.cpu_s,
        "rss_mb": got.max_rss_mb,
    }


def median(rows: list[dict[str, float | None]], key: str) -> float | None:
    values = [r[key] for r in rows if r[key] is not None]
    return statistics.median(values) if values else None  # type: ignore[type-var]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cache", action="store_true", help="cold then warm, with a response cache")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--python", default=sys.executable, help="the interpreter to run pytest")
    ap.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    args = ap.parse_args()
    global PYTHON
    PYTHON = args.python
    runs: dict[str, list[dict[str, Any]]] = {}
    load = [measure.load()]
    with tempfile.TemporaryDirectory() as tmp, Loopback(args.latency) as server:
        work = Path(tmp)
        suite = work / "bench.yaml"
        suite.write_text(
            f"samples: {args.count}\nseed: 1\n"
            "tasks:\n  - task: dyval.arithmetic\n    levels: [D2]\n"
        )
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "OPENAI_API_KEY": "x"}
        for r in range(args.rounds):
            if args.cache:
                cache = str(work / f"cache{r}")
                runs.setdefault("cold (fresh cache)", []).append(
                    one(
                        server,
                        pytest_cmd(suite, server.url, args.concurrency, cache, args.extra),
                        work,
                        env,
                    )
                )
                runs.setdefault("warm rerun", []).append(
                    one(
                        server,
                        pytest_cmd(suite, server.url, args.concurrency, cache, args.extra),
                        work,
                        env,
                    )
                )
            else:
                runs.setdefault("cache off", []).append(
                    one(
                        server,
                        pytest_cmd(suite, server.url, args.concurrency, "off", args.extra),
                        work,
                        env,
                    )
                )
            load.append(measure.load())
            print(f"round {r + 1}: " + json.dumps({k: v[-1] for k, v in runs.items()}), flush=True)
    keys = [
        "first_request",
        "first_result",
        "last_reply",
        "summary",
        "exit",
        "exit_after_last_line",
        "cpu",
        "rss_mb",
    ]
    print()
    print(
        f"pytest-reasoning, {args.count} DyVal D2 samples, {args.latency * 1000:g} ms, "
        f"concurrency {args.concurrency}; seconds after the start, medians of {args.rounds}; "
        f"{measure.cores()} cores, load average {min(load):.1f}-{max(load):.1f}"
    )
    print()
    print("| run | " + " | ".join(k.replace("_", " ") for k in keys) + " |")
    print("|---|" + "---|" * len(keys))
    table = {}
    for name, rows in runs.items():
        table[name] = {k: median(rows, k) for k in keys}
        cells = ["-" if v is None else f"{v:.2f}" for v in table[name].values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"load": load, "runs": runs, "medians": table}, indent=2)
        )


if __name__ == "__main__":
    main()
