"""Benchmarks for the foundation (numbers go in the README's table).

1. Plugin import cost on an unrelated pytest run (-X importtime, median of 7).
2. 1000 samples against the fake server with 50 ms latency at --reasoning-concurrency 16:
   wall time vs the ideal (requests × 0.05 s / 16) plus start-up.
3. The warm-cache rerun of the same 1000 samples: requests made and per-item overhead.

Usage: python benchmarks/run.py [--samples 1000] [--latency 0.05] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_reasoning.testing.server import FakeOpenAIServer


def import_cost_ms(repeats: int = 7) -> float:
    costs = []
    for _ in range(repeats):
        proc = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                "import pytest; import pytest_reasoning.plugin.hooks",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        total = 0
        for line in proc.stderr.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[2].strip().startswith("pytest_reasoning"):
                total += int(parts[0].split(":")[1])  # self time, microseconds
        costs.append(total / 1000)
    return statistics.median(costs)


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0,):
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}")
    return wall


def litellm_import_s() -> float:
    code = (
        "import os,time; os.environ['LITELLM_LOCAL_MODEL_COST_MAP']='True'; "
        "t=time.perf_counter(); import litellm; print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    results: dict[str, float | int] = {"import_cost_ms": round(import_cost_ms(), 2)}
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=args.latency) as srv:
        root = Path(tmp)
        (root / "bench.yaml").write_text(
            f"samples: {args.samples}\ntasks:\n  - task: dyval.arithmetic\n    levels: [D4]\n"
        )
        base = [
            sys.executable,
            "-m",
            "pytest",
            "bench.yaml",
            "-q",
            "-p",
            "no:cacheprovider",
            "--llm",
            "openai/oracle",
            "--llm-api-base",
            srv.url,
            "--reasoning-concurrency",
            str(args.concurrency),
            "--reasoning-cache",
            str(root / "cache"),
        ]
        startup = timed([*base, "--collect-only"], root)
        lit = litellm_import_s()
        cold = timed(base, root)
        requests = srv.stats()["total"]
        warm = timed(base, root)
        warm_requests = srv.stats()["total"] - requests
        # The same load split over two xdist workers (8 concurrent calls each, 16 in all).
        xdist = [*base, "-n", "2", "--reasoning-cache", "off"]
        xdist[xdist.index("--reasoning-concurrency") + 1] = str(args.concurrency // 2)
        cold_n2 = timed(xdist, root)
    ideal = requests * args.latency / args.concurrency
    results.update(
        {
            "samples": args.samples,
            "requests_cold": requests,
            "startup_s": round(startup, 3),
            "litellm_import_s": round(lit, 3),
            "cold_wall_s": round(cold, 3),
            "ideal_s": round(ideal, 3),
            "ratio_to_ideal_excl_startup": round((cold - startup - lit) / ideal, 3),
            "cold_wall_n2_s": round(cold_n2, 3),
            "warm_wall_s": round(warm, 3),
            "warm_requests": warm_requests,
            "warm_overhead_ms_per_item": round((warm - startup) / args.samples * 1000, 3),
        }
    )
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
