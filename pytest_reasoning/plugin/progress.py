"""The live count: while a sample waits for its model (the first answers of a local model
take seconds), the end of pytest's current terminal line shows how the run is going, and is
wiped before pytest writes again. Only on a terminal and not under ``-q``.

Without xdist the waiting item itself shows it (``LiveCount``). Under xdist the workers have
no terminal and the controller only hears of finished tests, so a thread on the controller
shows the time since the last report and the tests done (``Ticker``), wiping it before each
report is written. pytest's own terminal is enough: no progress library is imported."""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import duration

if TYPE_CHECKING:
    from .state import RunState

__all__ = ["LiveCount", "Ticker"]

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
            parts.append(f"{rate:.1f}/s, ETA {duration(left)}")
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


class Ticker:
    """The controller's count under xdist: ``[14s since the last answer: 3/37 done]``."""

    def __init__(self, config: pytest.Config, total: int) -> None:
        self.config = config
        self.total = total
        self.done = 0
        self.writer = config.get_terminal_writer()
        self.lock = threading.Lock()
        self.last = time.monotonic()
        self.shown = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="reasoning-ticker")

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.event()

    def event(self, finished: bool = False) -> None:
        """A report is about to be written: wipe the count first."""
        with self.lock:
            self.done += finished
            self.last = time.monotonic()
            if self.shown:
                _write("\b" * self.shown + " " * self.shown + "\b" * self.shown)
                self.shown = 0

    def _run(self) -> None:
        while not self.stopped.wait(EVERY_S):
            with self.lock:
                idle = time.monotonic() - self.last
                if idle < FIRST_AFTER_S or self.stopped.is_set():
                    continue
                what = "answer" if self.done else "first answer"
                text = f" [{idle:.0f}s waiting for the {what}: {self.done}/{self.total} done]"
                room = self.writer.fullwidth - self.writer.width_of_current_line - 1
                text = text[: max(0, room)]
                pad = max(0, self.shown - len(text))
                _write("\b" * self.shown + text + " " * pad + "\b" * pad)
                self.shown = len(text)

    # -- hooks: every report passes here first (tryfirst) --------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self) -> None:
        self.event()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self) -> None:
        self.event()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logfinish(self) -> None:
        self.event(finished=True)


def _write(text: str) -> None:
    """Straight to the terminal (the xdist controller runs no test: nothing is captured)."""
    import sys

    sys.stdout.write(text)
    sys.stdout.flush()

