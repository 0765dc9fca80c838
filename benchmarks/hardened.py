"""What issue 31's hardening costs a normal run (numbers in docs/benchmarks.md).

Whole paths, run as a user runs them, the code before and after alternating round by round
(the machine is shared: single runs vary; the CPU seconds of each command, user + system,
vary much less with the load than its wall time):

1. ``cold``: a suite of N samples against the project's server (latency 10 ms, concurrency
   16), cache empty: every answer is asked, claimed, stored.
2. ``warm``: the same run again: every answer is read from the cache (now: checked as strictly
   as a live reply).
3. ``export``: ``pytest-reasoning export`` of M items to a file (now: through the one writer,
   a temporary file renamed at the end).

And, in this process, the cost of reading one cached answer: the old decoding (``json.loads``
and ``Reply.from_dict``, as the caches did before) against ``cache.read_stored``, for a short
reply and a 100,000-character one (median of 2,000).

Usage: python benchmarks/hardened.py --before /path/to/a/checkout/of/the/old/code
       [--samples 1000] [--items 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_reasoning.testing.server import FakeOpenAIServer


def _timed(cmd: list[str], cwd: Path, tree: str | None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of the command's process."""
    env = dict(os.environ)
    if tree:  # the old package first on the path (its plugin entry point resolves there too)
        env["PYTHONPATH"] = tree
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return took, cpu


def whole_paths(before: str, samples: int, items: int, rounds: int) -> dict[str, dict[str, Any]]:
    paths = ("cold", "warm", "export", "cold_cpu", "warm_cpu", "export_cpu")
    times: dict[str, dict[str, list[float]]] = {
        side: {p: [] for p in paths} for side in ("before", "now")
    }

    def note(side: str, path: str, measured: tuple[float, float]) -> None:
        times[side][path].append(measured[0])
        times[side][f"{path}_cpu"].append(measured[1])

    with FakeOpenAIServer(latency_s=0.01) as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bench.yaml").write_text(
            f"samples: {samples}\ntasks:\n  - task: dyval.arithmetic\n    levels: [D3]\n"
        )
        for n in range(rounds):
            order = ("before", "now") if n % 2 == 0 else ("now", "before")
            for side in order:
                tree = before if side == "before" else None
                cache = root / f"cache-{side}-{n}"
                run = [sys.executable, "-m", "pytest", "bench.yaml", "-q", "-p",
                       "no:cacheprovider", "--llm", "openai/oracle", "--llm-api-base",
                       server.url, "--reasoning-concurrency", "16", "--reasoning-cache",
                       str(cache)]  # fmt: skip
                note(side, "cold", _timed(run, root, tree))
                note(side, "warm", _timed(run, root, tree))
                export = [sys.executable, "-m", "pytest_reasoning.cli", "export",
                          "dyval.arithmetic", "--level", "D2", "--count", str(items),
                          "-o", str(root / f"items-{side}.jsonl")]  # fmt: skip
                note(side, "export", _timed(export, root, tree))
    # Medians and minima (on a shared machine the least disturbed run is the fairest), and
    # every run, round by round.
    return {
        side: {
            **{k: round(statistics.median(v), 3) for k, v in found.items()},
            **{f"{k}_min": round(min(v), 3) for k, v in found.items()},
            **{f"{k}_all": [round(x, 2) for x in v] for k, v in found.items()},
        }
        for side, found in times.items()
    }


def read_us(repeats: int = 2000) -> dict[str, float]:
    from pytest_reasoning.core import Reply
    from pytest_reasoning.models.cache import read_stored

    def old(raw: str) -> Reply:
        data = json.loads(raw)
        data["cached"] = True
        return Reply.from_dict(data)

    out = {}
    for name, content in (("short", "Let me think. " * 20 + "<<<42>>>"), ("100k", "x" * 100_000)):
        reply = Reply(content, None, 300, 80, 0.4, finish_reason="stop")
        raw = json.dumps(reply.to_dict())
        for label, read in (("before", old), ("now", read_stored)):
            costs = []
            for _ in range(repeats):
                started = time.perf_counter()
                read(raw)
                costs.append(time.perf_counter() - started)
            out[f"{name}_{label}_us"] = round(statistics.median(costs) * 1e6, 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="a checkout of the code before issue 31")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--items", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    results = {
        "samples": args.samples,
        "items": args.items,
        "rounds": args.rounds,
        "load_before": os.getloadavg()[0],
        "paths_s": whole_paths(args.before, args.samples, args.items, args.rounds),
        "read_one_cached_answer": read_us(),
        "load_after": os.getloadavg()[0],
    }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
