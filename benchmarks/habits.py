"""What issue 21's additions cost (numbers in docs/running.md).

1. The plugin's import cost on an unrelated pytest run (-X importtime, self time of
   ``pytest_reasoning.*``, median of 7); with ``--against DIR``, also for the tree in DIR
   (e.g. a checkout of main) to compare.
2. tqdm's import (cumulative, median of 7): paid by ``export`` / ``frontier`` only when they
   show a bar (stderr on a terminal), never by the plugin.
3. ``export`` of N D4 arithmetic items to /dev/null: without a bar (``-q``) and with one
   (stderr on a pseudo-terminal), wall time, median of 3.

Usage: python benchmarks/habits.py [--count 100000] [--against /path/to/main]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import statistics
import struct
import subprocess
import sys
import termios
import time


def importtime(code: str, prefix: str, env: dict[str, str], *, cumulative: bool) -> float:
    """Milliseconds spent importing modules named ``prefix*`` (self or cumulative time)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    total = 0
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3:
            continue
        name = parts[2].strip()
        if cumulative and name == prefix:
            return int(parts[1]) / 1000
        if not cumulative and name.startswith(prefix):
            total += int(parts[0].split(":")[1])
    return total / 1000


def median(fn: object, repeats: int) -> float:
    return statistics.median(fn() for _ in range(repeats))  # type: ignore[operator]


def export_wall(count: int, *, bar: bool) -> float:
    argv = [sys.executable, "-m", "pytest_reasoning.cli", "export", "dyval.arithmetic",
            "--level", "D4", "--count", str(count)]  # fmt: skip
    start = time.perf_counter()
    if not bar:
        subprocess.run([*argv, "-q"], stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    while True:
        try:
            if not os.read(master, 65536):
                break
        except OSError:
            break
    proc.wait()
    os.close(master)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--against", help="another source tree (PYTHONPATH) to compare imports")
    args = ap.parse_args()
    with open("/proc/loadavg") as fh:
        print(f"load average: {fh.read().split()[0]}")
    code = "import pytest; import pytest_reasoning.plugin.hooks"
    env = dict(os.environ)
    mine = median(lambda: importtime(code, "pytest_reasoning", env, cumulative=False), 7)
    print(f"plugin import, self time of pytest_reasoning.*: {mine:.1f} ms (median of 7)")
    if args.against:
        other = {**env, "PYTHONPATH": args.against}
        theirs = median(lambda: importtime(code, "pytest_reasoning", other, cumulative=False), 7)
        print(f"  the same for {args.against}: {theirs:.1f} ms")
    tqdm = median(lambda: importtime("import tqdm", "tqdm", env, cumulative=True), 7)
    print(f"import tqdm (cumulative): {tqdm:.1f} ms (median of 7)")
    quiet = median(lambda: export_wall(args.count, bar=False), 3)
    shown = median(lambda: export_wall(args.count, bar=True), 3)
    print(
        f"export {args.count} D4 arithmetic items: {quiet:.1f} s without a bar, "
        f"{shown:.1f} s with one ({(shown / quiet - 1) * 100:+.1f}%) (medians of 3)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
