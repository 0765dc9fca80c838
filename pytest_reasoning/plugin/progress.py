"""The live count: while a sample waits for its model (the first answers of a local model
take seconds), the end of pytest's current terminal line shows how the run is going, and is
wiped before pytest writes again. Only on a terminal and not under ``-q``.

Without xdist the waiting item itself shows it (``LiveCount``). Under xdist the workers have
no terminal and the controller only hears of finished tests, so a thread on the controller
shows the time since the last report and the tests done (``Ticker``), wiping it before each
report is written. pytest's own terminal is enough: no progress library is imported.

The count fits the room left on the line, whatever the terminal's width: parts are dropped
whole (the least useful first), never cut. The estimate is smoothed: seconds per answer are an
exponentially weighted mean of the gaps between answers, so one slow answer moves it a little
and the startup's wait not at all after a few answers."""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import duration

if TYPE_CHECKING:
    from ..evaluate import Evaluator

__all__ = ["LIVE", "LiveCount", "Pace", "Ticker", "fitted"]

FIRST_AFTER_S = 1.0  # a quick answer shows nothing
EVERY_S = 0.5
# Weight of the newest gap between answers in the smoothed seconds per answer: the last ten
# or so answers count, so a slower level shows within a few answers without one outlier
# swinging the estimate.
SMOOTHING = 0.2


def fitted(parts: Sequence[tuple[str, int]], room: int, head: str = "") -> str:
    """`` [head: a, b, c]`` from the (text, rank) ``parts`` that fit in ``room`` columns:
    the part of lowest rank goes first, whole, until the rest fits; ``""`` when nothing does.
    ``head``, when it is the first part kept, is written before a colon; empty parts are
    left out."""
    kept = [p for p in parts if p[0]]
    while kept:
        first, rest = (kept[0][0], kept[1:]) if head and kept[0][0] == head else ("", kept)
        body = ", ".join(t for t, _ in rest)
        text = f" [{first}: {body}]" if first and body else f" [{first or body}]"
        if len(text) <= room:
            return text
        kept.remove(min(kept, key=lambda p: p[1]))
    return ""


class Pace:
    """Seconds per answer, smoothed, and what is left: ``6.1 s/answer``, ``ETA 3m05s``."""

    def __init__(self, started: float) -> None:
        self.last = started
        self.answers = 0
        self.per: float | None = None  # smoothed seconds per answer, from the second one

    def answered(self, now: float) -> None:
        gap, self.last = now - self.last, now
        self.answers += 1
        if self.answers == 1:
            return  # the first waited for the start too (LiteLLM's import, the first call alone)
        self.per = gap if self.per is None else (1 - SMOOTHING) * self.per + SMOOTHING * gap

    def rate(self) -> str:
        """Seconds per answer for slow models, answers per second for fast ones."""
        if self.per is None:
            return ""
        if self.per >= 1.0 or self.per <= 0:
            return f"{self.per:.1f} s/answer"
        return f"{1 / self.per:.1f} answers/s"

    def eta(self, left: int, now: float) -> str:
        """The answers ``left`` at the smoothed pace, less the time the next one has already
        taken (it counts down between answers instead of standing still, and jumps no more
        than the pace moves when one comes in)."""
        if self.per is None or left <= 0:
            return ""
        since = now - self.last
        return f"ETA {duration(max(left * self.per - since, (left - 1) * self.per))}"


class LiveCount:
    """``[12s for local: 3/31 answered, 8 pending, 6.1 s/answer, ETA 3m05s]`` after the line
    (on a narrow line ``[12s for local: 3/31 answered, ETA 3m05s]``, then less)."""

    def __init__(self, config: pytest.Config, evaluator: Evaluator, total: int) -> None:
        self.config = config
        self.evaluator = evaluator  # its calls in flight
        self.total = total
        self.done = 0
        self.started = time.monotonic()
        self.pace = Pace(self.started)
        self.writer = config.get_terminal_writer()

    @classmethod
    def wanted(cls, config: pytest.Config) -> bool:
        tr = config.pluginmanager.getplugin("terminalreporter")
        return tr is not None and bool(tr.isatty) and config.get_verbosity() >= 0

    def answered(self) -> None:
        self.done += 1
        self.pace.answered(time.monotonic())

    def wait(self, future: concurrent.futures.Future[Any], model: str) -> None:
        """Block until ``future`` is done, showing the count after the first second."""
        begun = time.monotonic()
        shown = 0
        timeout = FIRST_AFTER_S
        try:
            while not concurrent.futures.wait([future], timeout=timeout).done:
                timeout = EVERY_S
                shown = self._show(self._text(model, time.monotonic() - begun, self._room()), shown)
        finally:
            if shown:
                self._raw("\b" * shown + " " * shown + "\b" * shown)

    def _text(self, model: str, waited: float, room: int) -> str:
        now = time.monotonic()
        head = f"{waited:.0f}s for {model}"
        pending = self.evaluator.in_flight
        return fitted(
            [
                (head, 2),
                (f"{self.done}/{self.total} answered", 5),
                (f"{pending} pending" if pending else "", 0),
                (self.pace.rate(), 1),
                (self.pace.eta(self.total - self.done, now), 4),
            ],
            room,
            head,
        )

    def _room(self) -> int:
        """Columns left on pytest's current line (one kept free: a terminal that wraps at its
        last column would push the cursor onto the next line)."""
        return self.writer.fullwidth - self.writer.width_of_current_line - 1

    def _show(self, text: str, shown: int) -> int:
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


# The run session's live count, where the waiting sample finds it (set on a terminal only).
LIVE = pytest.StashKey[LiveCount]()


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
                head = f"{idle:.0f}s waiting for the {what}"
                room = self.writer.fullwidth - self.writer.width_of_current_line - 1
                text = fitted([(head, 1), (f"{self.done}/{self.total} done", 2)], room, head)
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

