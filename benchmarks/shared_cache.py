"""Four concurrent runs of one suite sharing a Redis cache (issue 22): calls made must equal
the distinct prompts, exactly, whoever makes them. Each run is its own pytest process with its
own local cache (as four CI machines), all naming one redis-server on 127.0.0.1; the model is
the test server's ``oracle`` on 127.0.0.1 with a fixed latency, which records every prompt it
is asked (SHA-256 prefixes). For comparison, the same four runs with local caches only.

    python benchmarks/shared_cache.py [--runs 4] [--samples 125] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pytest_reasoning.testing.redis_server import RedisServer
from pytest_reasoning.testing.server import FakeOpenAIServer

SUITE = """\
seed: 11
samples: {samples}
tasks:
  - {{task: dyval.arithmetic, levels: [D1, D2, D3, D4]}}
"""


def _runs(
    folder: Path, server: FakeOpenAIServer, caches: list[list[str]], concurrency: int
) -> tuple[list[float], list[int]]:
    """Start one pytest per cache argument list at once; the wall of each (its own end, read
    by a thread per run) and how many of its answers came from a cache (``-v`` marks them
    ``PASSED (cached)``)."""
    procs, started = [], time.perf_counter()
    for cache in caches:
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
               "-v", "suite.yaml", "--llm", "openai/oracle", "--llm-api-base", server.url,
               "--reasoning-concurrency", str(concurrency), *cache]  # fmt: skip
        procs.append(subprocess.Popen(cmd, cwd=folder, stdout=subprocess.PIPE, text=True))
    outs: list[str] = [""] * len(procs)
    walls: list[float] = [0.0] * len(procs)

    def wait(n: int) -> None:
        outs[n] = procs[n].communicate()[0]
        walls[n] = time.perf_counter() - started

    with ThreadPoolExecutor(len(procs)) as pool:
        list(pool.map(wait, range(len(procs))))
    for proc, out in zip(procs, outs, strict=True):
        if proc.returncode != 0:
            raise SystemExit(f"a run failed ({proc.returncode}):\n{out[-3000:]}")
    return walls, [out.count("(cached)") for out in outs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--samples", type=int, default=125, help="per level; four levels")
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load average at start {' '.join(load)}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "suite.yaml").write_text(SUITE.format(samples=args.samples))
        items = 4 * args.samples
        with RedisServer() as redis_server:
            for label, shared in (("shared Redis cache", True), ("local caches only", False)):
                with FakeOpenAIServer(latency_s=args.latency) as server:
                    caches = [
                        [
                            "--reasoning-cache",
                            redis_server.url,
                            "--reasoning-cache-local",
                            f"{label[:5]}{n}",
                        ]
                        if shared
                        else ["--reasoning-cache", f"{label[:5]}{n}"]
                        for n in range(args.runs)
                    ]
                    walls, cached = _runs(folder, server, caches, args.concurrency)
                    stats = server.stats()
                calls, distinct = stats["total"], len(set(stats["order"]))
                print(
                    f"{label}: {args.runs} runs × {items} items at once: {calls} calls for "
                    f"{distinct} distinct prompts (calls − prompts = {calls - distinct}); "
                    f"answers taken from the cache per run {cached}; wall per run "
                    f"{', '.join(f'{w:.1f}' for w in walls)} s"
                )
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load average at end {' '.join(load)}")


if __name__ == "__main__":
    main()
