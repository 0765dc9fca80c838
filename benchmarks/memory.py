"""Peak memory of a pytest-reasoning run against the reference model, by the number of items:
what one more item costs (issue 24's target: at most 2 KB).

    python benchmarks/memory.py [--counts 1000 10000 100000] [--results] [--trace]
                                [--python /path/to/other/venv/bin/python]

Each run is ``pytest SUITE -q --llm reference`` in its own process (cache off, one DyVal D2
arithmetic entry of N samples); peak RSS from ``wait4``, growth per item between successive
counts. pytest's own floor is measured the same way: N plain parametrized tests that do nothing
(pytest keeps every item and three reports per test; the plugin's share is the difference).
``--python`` runs another checkout's interpreter (e.g. main's venv: before/after).
``--results`` also writes a results file (the rows go to disk, not to memory); ``--trace``
runs once more at the largest count under tracemalloc and prints the allocation sites still
holding the most memory when pytest unconfigures (where the growth lives).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
from pathlib import Path

import measure

HERE = Path(__file__).resolve().parent

# Loaded with -p from this folder under --trace: the top allocation sites at the very end.
TRACE_PLUGIN = """
import tracemalloc

def pytest_unconfigure(config):
    snap = tracemalloc.take_snapshot()
    stats = snap.statistics("lineno")
    total = sum(s.size for s in stats)
    print(f"\\ntracemalloc: {total / 1e6:.1f} MB held at unconfigure; top sites:")
    for s in stats[:25]:
        frame = s.traceback[0]
        print(f"{s.size / 1e6:8.2f} MB {s.count:8d} {frame.filename}:{frame.lineno}")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--counts", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--results", action="store_true", help="also write a results file")
    ap.add_argument("--trace", action="store_true", help="where the memory is, at the end")
    ap.add_argument("--python", default=sys.executable, help="the interpreter to run pytest")
    ap.add_argument("--no-floor", action="store_true", help="skip pytest's own floor")
    ap.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        rows: list[tuple[int, float, float, float, float]] = []

        def cmd(count: int) -> list[str]:
            suite = work / f"mem{count}.yaml"
            suite.write_text(
                f"samples: {count}\nseed: 1\ntasks:\n  - task: dyval.arithmetic\n    levels: [D2]\n"
            )
            extra = ["--reasoning-results", str(work / f"r{count}.jsonl")] if args.results else []
            return [
                args.python, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider",
                "-p", "no:randomly", "--llm", "reference", "--reasoning-cache", "off",
                *extra, *args.extra,
            ]  # fmt: skip

        for count in args.counts:
            before = measure.load()
            got = measure.run(cmd(count), cwd=work, env=env)
            if got.rc not in (0, 1):
                raise SystemExit(f"pytest failed ({got.rc}) at {count}:\n{got.tail}")
            rows.append((count, got.max_rss_mb, got.wall_s, got.cpu_s, before))
            print(
                f"{count:7d} items: peak RSS {got.max_rss_mb:7.1f} MB, wall {got.wall_s:6.1f} s, "
                f"CPU {got.cpu_s:6.1f} s (load average {before:.2f})",
                flush=True,
            )
        floor: list[tuple[int, float, float, float, float]] = []
        for count in [] if args.no_floor else args.counts:
            plain = work / f"test_plain{count}.py"
            plain.write_text(
                f"import pytest\n\n@pytest.mark.parametrize('i', range({count}))\n"
                "def test_plain(i):\n    pass\n"
            )
            before = measure.load()
            got = measure.run(
                [args.python, "-m", "pytest", str(plain), "-q", "-p", "no:cacheprovider",
                 "-p", "no:randomly"],
                cwd=work,
                env=env,
            )  # fmt: skip
            floor.append((count, got.max_rss_mb, got.wall_s, got.cpu_s, before))
            print(
                f"{count:7d} plain pytest tests: peak RSS {got.max_rss_mb:7.1f} MB "
                f"(load average {before:.2f})",
                flush=True,
            )
        print()
        for what, series in (("items", rows), ("plain tests", floor)):
            for (n0, m0, *_), (n1, m1, *_) in itertools.pairwise(series):
                growth = (m1 - m0) * 1024 * 1024 / (n1 - n0)
                print(f"{n0} -> {n1} {what}: {growth:.0f} bytes per item")
        print(f"{measure.cores()} cores, load average now {measure.load():.2f}")
        if args.trace:
            (work / "memtrace.py").write_text(TRACE_PLUGIN)
            env = {**env, "PYTHONTRACEMALLOC": "1", "PYTHONPATH": str(work)}
            got = measure.run([*cmd(args.counts[-1]), "-p", "memtrace"], cwd=work, env=env)
            print(got.out[got.out.find("tracemalloc:") :])


if __name__ == "__main__":
    main()
