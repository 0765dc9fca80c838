"""``export --workers N`` against the sequential export (issue 22; numbers in the README).

``pytest-reasoning export dyval.arithmetic --level D4 --count N`` to a file, with 1 worker and
with W, each run in a fresh process, alternating, median wall time of R runs; the SHA-256 of
every output must be the same, or the benchmark fails. The load average is printed with the
numbers (the machine may be shared), and the CPU time of all the export's processes: on an idle
machine with W cores the wall time of W workers approaches their CPU time divided by W.

Usage: python benchmarks/export_workers.py [--count 100000] [--workers 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def cpu() -> float:
    """CPU seconds (user + system) of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(count: int, workers: int, out: str, task: str, level: str) -> tuple[float, float, str]:
    argv = [sys.executable, "-m", "pytest_reasoning.cli", "export", task, "--level", level,
            "--count", str(count), "--workers", str(workers), "-q", "-o", out]  # fmt: skip
    start, used = time.perf_counter(), cpu()
    subprocess.run(argv, check=True)
    seconds, used = time.perf_counter() - start, cpu() - used
    digest = hashlib.sha256()
    with open(out, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return seconds, used, digest.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--task", default="dyval.arithmetic")
    ap.add_argument("--level", default="D4")
    args = ap.parse_args()
    times: dict[int, list[float]] = {1: [], args.workers: []}
    cpus: dict[int, list[float]] = {1: [], args.workers: []}
    digests: set[str] = set()
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "items.jsonl")
        for r in range(args.repeats):
            order = (1, args.workers) if r % 2 == 0 else (args.workers, 1)
            for workers in order:
                loads.append(os.getloadavg()[0])
                seconds, used, digest = run(args.count, workers, out, args.task, args.level)
                times[workers].append(seconds)
                cpus[workers].append(used)
                digests.add(digest)
                print(f"run {r + 1}, {workers} worker(s): {seconds:.2f} s wall, {used:.2f} s CPU, "
                      f"sha256 {digest[:16]}")  # fmt: skip
        size = os.path.getsize(out)
    if len(digests) != 1:
        print(f"FAIL: {len(digests)} different outputs")
        return 1
    one, many = statistics.median(times[1]), statistics.median(times[args.workers])
    print(
        f"\n{args.task} {args.level}, {args.count} items ({size / 1e6:.0f} MB), "
        f"{os.cpu_count()} CPUs, load average {min(loads):.1f}-{max(loads):.1f} at the starts"
    )
    print(
        f"| workers | median wall (s) of {args.repeats} | items/s | median CPU (s), all processes |"
    )
    print("|---|---|---|---|")
    for workers, t in ((1, one), (args.workers, many)):
        used = statistics.median(cpus[workers])
        print(f"| {workers} | {t:.1f} | {args.count / t:,.0f} | {used:.1f} |")
    print(f"speed-up {one / many:.2f}x; the same bytes (sha256 {next(iter(digests))[:16]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
