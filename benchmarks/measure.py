"""Running one benchmark command and measuring it: wall time, CPU time and peak RSS of the
process tree (``os.wait4``), and when its output first showed a result.

The machine the benchmarks ran on so far is shared and loaded: CPU seconds are the number to
compare, wall seconds come with the load average (``load()``), and every table says so.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Measured:
    rc: int
    wall_s: float
    cpu_s: float  # user + system of the process and every child it waited for
    max_rss_mb: float  # the largest resident set of any one process in the tree
    started: float  # time.monotonic() just before the process was started
    out: str = ""
    err: str = ""
    # time.monotonic() of the first output line (stdout) that ``first_result`` accepted.
    first_result_at: float | None = None
    # time.monotonic() of each stdout line's arrival, when asked for (PYTHONUNBUFFERED helps).
    line_times: list[tuple[float, str]] = field(default_factory=list)

    @property
    def tail(self) -> str:
        return (self.out + self.err)[-2000:]


def run(
    cmd: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    first_result: Callable[[str], bool] | None = None,
    keep_line_times: bool = False,
) -> Measured:
    """Run ``cmd`` to the end; stdout is read as it comes so the first result line can be
    timed (the child should write unbuffered: ``PYTHONUNBUFFERED=1``)."""
    started = time.monotonic()
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    got: Measured = Measured(0, 0.0, 0.0, 0.0, started)
    out: list[bytes] = []
    err: list[bytes] = []

    def read_out() -> None:
        assert proc.stdout is not None
        pending = b""
        while chunk := proc.stdout.read1(65536):
            now = time.monotonic()
            out.append(chunk)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            # A partial line counts too: pytest -q writes its dots without a newline.
            for line in [*lines, pending]:
                text = line.decode("utf-8", "replace")
                if keep_line_times and line is not pending:
                    got.line_times.append((now, text))
                if got.first_result_at is None and first_result is not None and first_result(text):
                    got.first_result_at = now

    def read_err() -> None:
        assert proc.stderr is not None
        while chunk := proc.stderr.read1(65536):
            err.append(chunk)

    threads = [threading.Thread(target=read_out), threading.Thread(target=read_err)]
    for t in threads:
        t.start()
    _, status, usage = os.wait4(proc.pid, 0)
    got.wall_s = time.perf_counter() - start
    for t in threads:
        t.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    got.rc = proc.returncode
    got.cpu_s = usage.ru_utime + usage.ru_stime
    got.max_rss_mb = usage.ru_maxrss / 1024
    got.out = b"".join(out).decode("utf-8", "replace")
    got.err = b"".join(err).decode("utf-8", "replace")
    return got


def load() -> float:
    """The 1-minute load average (the machine's business while a number was taken)."""
    return os.getloadavg()[0]


def cores() -> int:
    return len(os.sched_getaffinity(0))
