"""The live count: while a sample waits for its model (the first answers of a local model
take seconds), the end of pytest's current terminal line shows how the run is going, and is
wiped before pytest writes again. Only on a terminal, not under ``-q``, and only in the
process that runs the items and owns the terminal (not under xdist, whose workers have none).

pytest's own terminal reporter is enough here: no progress library is imported on a run."""

from __future__ import annotations

import concurrent.futures
import contextlib
import time
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .state import RunState

__all__ = ["LiveCount"]

FIRST_AFTER_S = 1.0  # a quick answer shows nothing
EVERY_S = 0.5


class LiveCount:
    """``[12s for local: 3/31 answered, 8 pending, 0.4/s, ETA 1m05s]`` after the line."""

    def __init__(self, config: pytest.Config, state: RunState, total: int) -> None:
        self.config = config
        self.state = state
        self.total = total
        self.done = 0
        self.started = time.monotonic()
        self.writer = config.get_terminal_writer()

    @classmethod
    def wanted(cls, config: pytest.Config) -> bool:
        tr = config.pluginmanager.getplugin("terminalreporter")
        return tr is not None and bool(tr.isatty) and config.get_verbosity() >= 0

    def answered(self) -> None:
        self.done += 1

    def wait(self, future: concurrent.futures.Future[Any], model: str) -> None:
        """Block until ``future`` is done, showing the count after the first second."""
        begun = time.monotonic()
        shown = 0
        timeout = FIRST_AFTER_S
        try:
            while not concurrent.futures.wait([future], timeout=timeout).done:
                timeout = EVERY_S
                shown = self._show(self._text(model, time.monotonic() - begun), shown)
        finally:
            if shown:
                self._raw("\b" * shown + " " * shown + "\b" * shown)

    def _text(self, model: str, waited: float) -> str:
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 and self.done else 0.0
        parts = [f"{waited:.0f}s for {model}: {self.done}/{self.total} answered"]
        evaluator = self.state.evaluator
        if evaluator.in_flight:
            parts.append(f"{evaluator.in_flight} pending")
        if rate:
            left = (self.total - self.done) / rate
            parts.append(f"{rate:.1f}/s, ETA {_duration(left)}")
        return " [" + ", ".join(parts) + "]"

    def _show(self, text: str, shown: int) -> int:
        room = self.writer.fullwidth - self.writer.width_of_current_line - 1
        text = text[: max(0, room)]
        # Back over the last count, write the new one, blank what is left of a longer one.
        pad = max(0, shown - len(text))
        self._raw("\b" * shown + text + " " * pad + "\b" * pad)
        return len(text)

    def _raw(self, text: str) -> None:
        """Straight to the terminal, around pytest's output capture and its line tracking
        (the count is gone before pytest writes again)."""
        if not text:
            return
        capman = self.config.pluginmanager.getplugin("capturemanager")
        with capman.global_and_fixture_disabled() if capman else contextlib.nullcontext():
            import sys

            sys.stdout.write(text)
            sys.stdout.flush()


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
