"""Caps on a test's block for a loaded machine, not speed claims: a hang fails after a
time (SIGALRM), an allocation past a limit is a MemoryError."""

from __future__ import annotations

import contextlib
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def bounded(seconds: int = 30, extra_bytes: int = 1 << 30) -> Iterator[None]:
    """A hang fails after ``seconds`` (SIGALRM: a cap for a loaded machine, not a speed
    claim) and an allocation past ``extra_bytes`` more address space is a MemoryError
    (RLIMIT_AS's soft limit, restored after) — where the platform allows."""
    import resource

    def hung(*_: object) -> None:
        raise TimeoutError(f"a case ran past {seconds} s")

    old_limit = resource.getrlimit(resource.RLIMIT_AS)
    try:
        status = Path("/proc/self/status").read_text()
        size = int(re.search(r"VmSize:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]
    except (OSError, AttributeError):
        size = None
    main_thread = threading.current_thread() is threading.main_thread() and hasattr(
        signal, "setitimer"
    )
    if main_thread:
        previous = signal.signal(signal.SIGALRM, hung)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    if size is not None:
        soft = size + extra_bytes
        hard = old_limit[1]
        resource.setrlimit(resource.RLIMIT_AS, (soft if hard < 0 else min(soft, hard), hard))
    try:
        yield
    finally:
        if size is not None:
            resource.setrlimit(resource.RLIMIT_AS, old_limit)
        if main_thread:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def within(seconds: float = 300.0) -> Iterator[None]:
    """A hang fails the test after ``seconds`` (SIGALRM), instead of hanging the suite: a cap
    for a loaded machine (what is guarded takes well under a second), not a speed claim."""

    def hung(*_: object) -> None:
        raise TimeoutError(f"still running after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
