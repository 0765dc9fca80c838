"""``pytest-reasoning``: the command line (``export`` …). Every command exits as a pytest run
does (usage errors: one line and status 4; Ctrl-C: 2); nothing here imports pytest. One module per
family of commands; ``parser`` builds every command's arguments, ``common`` holds what they
share."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import ReasoningError, StorageFailed
from .common import EXIT_INTERRUPTED, EXIT_USAGE, CommandFailed, _detach_stdout, _error
from .explore import audit_command, frontier_command, plan_command, tasks_command
from .export import export_command, export_items, export_parallel
from .narrate import narrate_command
from .parser import build_parser
from .results import gate_command, report_command, robustness_command

__all__ = ["build_parser", "export_items", "export_parallel", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # a bare ``pytest-reasoning``: what it can do
        parser.print_help()
        return 0
    try:
        with _terminate_cleanly():
            code = _command(args)
        sys.stdout.flush()  # a full disk behind `>` shows here, not as a traceback at exit
        return code
    except KeyboardInterrupt:
        return _error("interrupted", EXIT_INTERRUPTED)
    except CommandFailed as exc:
        return _error(str(exc), exc.status)
    except StorageFailed as exc:  # the cache, mid-way (a damaged one at start is usage)
        return _error(str(exc), EXIT_INTERRUPTED)
    except ReasoningError as exc:  # a bad argument, value or file
        return _error(str(exc), EXIT_USAGE)
    except BrokenPipeError:  # `| head` is fine
        _detach_stdout()
        return 0
    except OSError as exc:  # what the commands write: stdout or a file they were given
        _detach_stdout()  # an output that cannot be written is usage, as a pytest run's report
        where = exc.filename or "the standard output"
        return _error(f"cannot write {where}: {exc.strerror or exc}", EXIT_USAGE)


@contextlib.contextmanager
def _terminate_cleanly() -> Iterator[None]:
    """SIGTERM (a CI job cancelled, ``timeout``) unwinds like Ctrl-C, so the commands'
    ``finally`` blocks remove their half-written ``.tmp`` and part files; Python's default
    would end the process on the spot and leave them."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread
        return

    def stop(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _command(args: argparse.Namespace) -> int:
    if args.command == "plan":
        return plan_command(args)
    if args.command == "frontier":
        return frontier_command(args)
    if args.command == "robustness":
        return robustness_command(args)
    if args.command == "report":
        return report_command(args)
    if args.command == "audit":
        return audit_command(args)
    if args.command == "gate":
        return gate_command(args)
    if args.command == "narrate":
        return narrate_command(args)
    if args.command == "tasks":
        return tasks_command(args)
    return export_command(args)
