"""The backstop while a reasoning-gym scorer reads a model's answer: no code, no hang.

The readers of :mod:`.readers` keep every audited scorer from evaluating text; this module
holds for the ones nobody audited (a new reasoning-gym release, a path the audit missed).
One audit hook (``sys.addaudithook``, installed on first use, never removable) acts only
on the thread inside :func:`untrusted`, and only outside imports (a module a scorer imports
late is the installed package's code, not the answer). There it refuses running or compiling
code (``exec``, ``compile``; our own readers' ``ast.parse`` and sympy's template code
generator excepted), processes, signals,
sockets and network clients, ``ctypes``, unpickling, opening a file for writing and
changing the file system or the environment. A refusal raises :class:`Refused` inside the
scorer and is recorded, so even a scorer that swallows every exception scores the answer
0 as ``unsafe_answer``.

The block also runs under a CPU-time limit (``ITIMER_VIRTUAL``, on the main thread, where
pytest scores): sympy can spend minutes on ten characters (``float(E**E**E**E**E)``), and
an answer that outlasts the limit scores 0 as ``scorer_timeout``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["Overran", "Refused", "Watch", "reading", "untrusted"]


class Refused(BaseException):
    """An audited action a scorer attempted on a model's answer (not an ``Exception``, so
    ``except Exception`` in a scorer does not carry on past it)."""


class Overran(BaseException):
    """The scorer ran past its CPU-time limit."""


@dataclass
class Watch:
    """What happened in one :func:`untrusted` block."""

    refused: str | None = None  # the first refused event, e.g. "exec of <string>"
    overran: bool = False


class _State(threading.local):
    watch: Watch | None = None
    reading: int = 0


_STATE = _State()
_INSTALLED = False
_INSTALL_LOCK = threading.Lock()

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_REFUSED = frozenset({
    "exec", "compile", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty", "os.kill", "os.killpg", "os.startfile", "os.putenv", "os.unsetenv",
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.chdir",
    "os.link", "os.symlink", "os.truncate", "os.utime", "os.setxattr", "os.removexattr",
    "os.chflags", "os.lchflags", "os.lchmod", "subprocess.Popen", "pty.spawn",
    "pickle.find_class", "marshal.load", "marshal.loads", "sys.addaudithook", "sys.settrace",
    "sys.setprofile", "code.__new__", "function.__new__", "sqlite3.connect", "webbrowser.open",
    "urllib.Request", "signal.pthread_kill",
})  # fmt: skip
_REFUSED_FAMILIES = (
    "socket.", "ctypes.", "shutil.", "http.client.", "ftplib.", "smtplib.", "imaplib.",
    "poplib.", "nntplib.", "telnetlib.", "_winapi.", "winreg.", "msvcrt.",
)  # fmt: skip


# Code generators that compile their own templates, never text they were given: sympy's
# polynomial rings build monomial arithmetic for their number of generators (an int).
_GENERATORS = (("sympy.polys.monomials", "MonomialOps", "_build"),)


def _generated() -> bool:
    """Whether the code comes from one of ``_GENERATORS`` (its caller's code object is
    theirs; looked up only when a refusal is about to happen)."""
    code = sys._getframe(2).f_code
    for module_name, owner, function in _GENERATORS:
        module = sys.modules.get(module_name)
        found = getattr(getattr(module, owner, None), function, None)
        if getattr(found, "__code__", None) is code:
            return True
    return False


def _importing() -> bool:
    """Whether an import runs on this thread (its module's code is the package's, not the
    answer's: a scorer's first use of a sympy submodule compiles and runs it)."""
    frame: Any = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


def _writes(args: tuple[Any, ...]) -> bool:
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else 0
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    watch = _STATE.watch
    if watch is None:
        return
    if event == "open":
        if not _writes(args):
            return
    elif event not in _REFUSED and not event.startswith(_REFUSED_FAMILIES):
        return
    if event == "compile" and _STATE.reading:
        return
    if _importing() or (event in ("exec", "compile") and _generated()):
        return
    what = event
    if event == "exec" and args:
        what = f"exec of {getattr(args[0], 'co_filename', '?')}"
    elif event == "open" and args:
        what = f"open {str(args[0])[:80]!r} for writing"
    if watch.refused is None:
        watch.refused = what
    raise Refused(what)


def _install() -> None:
    global _INSTALLED
    with _INSTALL_LOCK:
        if not _INSTALLED:
            sys.addaudithook(_hook)
            _INSTALLED = True


@contextmanager
def reading() -> Iterator[None]:
    """Our own readers parse (``ast.parse`` raises the ``compile`` event): allowed."""
    _STATE.reading += 1
    try:
        yield
    finally:
        _STATE.reading -= 1


def _overrun(signum: int, frame: Any) -> None:
    watch = _STATE.watch
    if watch is not None:
        watch.overran = True
        raise Overran("the scorer ran past its CPU-time limit")


@contextmanager
def untrusted(cpu_seconds: float) -> Iterator[Watch]:
    """Run the block (a scorer reading a model's answer) under the audit hook and, on the
    main thread, a limit of ``cpu_seconds`` of CPU time. :class:`Refused` and
    :class:`Overran` raised inside are the caller's to catch; the returned :class:`Watch`
    says what happened either way."""
    _install()
    watch = Watch()
    timed = threading.current_thread() is threading.main_thread() and hasattr(
        signal, "setitimer"
    )
    if timed:
        old_handler = signal.signal(signal.SIGVTALRM, _overrun)
        old_timer = signal.setitimer(signal.ITIMER_VIRTUAL, cpu_seconds)
    outer, _STATE.watch = _STATE.watch, watch
    try:
        yield watch
    finally:
        # The limit may strike here too: retry until the watch is gone (the handler then
        # raises no more) and the timer stopped, so the guard never outlives the block.
        while True:
            try:
                _STATE.watch = outer
                if timed:
                    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
                break
            except Overran:
                continue
        if timed:
            signal.setitimer(signal.ITIMER_VIRTUAL, *old_timer)
            signal.signal(signal.SIGVTALRM, old_handler)
