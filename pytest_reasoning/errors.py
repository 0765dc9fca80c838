"""Exceptions with one-line messages: users see the message, never a traceback."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = [
    "CallBudgetExceeded",
    "InvalidArgument",
    "InvalidDataset",
    "InvalidSuite",
    "ModelCallFailed",
    "ReasoningError",
    "StorageFailed",
    "TestStopped",
    "UnknownLevel",
    "UnknownTask",
    "clip",
    "did_you_mean",
    "duration",
    "inert_json",
    "printable",
    "quote",
]

MAX_QUOTE = 200  # characters of a user's value an error message quotes


def clip(text: str, limit: int = MAX_QUOTE) -> str:
    """``text`` cut to ``limit`` characters with a marker saying how much was left out, so a
    hostile value (a 300 MB string, an alias bomb's repr) cannot make an error line huge."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def quote(value: object, limit: int = MAX_QUOTE) -> str:
    """A user's value as an error message quotes it: its repr, clipped (a fuzzed 5,000-digit
    style once made a 5,105-character "one line")."""
    return clip(repr(value), limit)


# Characters that act on a terminal or on the order text is shown in, rather than show: C0
# controls (an ANSI escape clears the screen and paints "all gates PASSED"), DEL, C1 controls
# (0x9b is a one-byte CSI), Unicode's bidirectional controls (U+202E reverses what follows:
# an answer that reads as another), and the line and paragraph separators. Server, model and
# provider text passes through :func:`printable` before a terminal line, a summary or a page.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)
_KEPT_IN_LINE = "\t"  # harmless: kept as it is
_KEPT_IN_TEXT = "\t\n\r\u2028\u2029"  # line breaks, in a page (viewer.js's shown() alike)


def _symbol(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the control pictures: \x1b is ␛, \n is ␊
    if code == 0x7F:
        return "\u2421"  # ␡
    if code <= 0x9F:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def printable(text: str, *, one_line: bool = True) -> str:
    """``text`` with every control and bidirectional-control character shown as a visible
    symbol instead of acting: C0 controls as their control pictures (``\\x1b`` → ``␛``), C1
    controls as ``\\x9b``, bidi controls and line separators as ``\\u202e``. ``one_line``
    (a terminal line, a table cell, an error message) shows line breaks too (``␊``), so one
    value cannot start a line of its own; a text for a page (a reply) keeps them. Tabs stay.
    Idempotent, and text with nothing to show is returned as is (one regex scan)."""
    if _UNSAFE.search(text) is None:
        return text
    kept = _KEPT_IN_LINE if one_line else _KEPT_IN_TEXT
    return _UNSAFE.sub(lambda m: m.group() if m.group() in kept else _symbol(m.group()), text)


# What JSON text may still hold raw (json.dumps escapes C0 controls, ensure_ascii=False keeps
# the rest): outside strings it holds none of these, so escaping them keeps the same value.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def inert_json(text: str) -> str:
    """A JSON text (``json.dumps(..., ensure_ascii=False)``) with the characters
    :func:`printable` shows written as ``\\uXXXX`` escapes: the same JSON value, but a JUnit
    file or a log that shows the text raw shows no bidi reordering or C1 control."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h01m``: an elapsed time or an estimate in a progress line."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def did_you_mean(word: object, choices: Iterable[object]) -> str:
    """`` (did you mean 'x'?)`` for the closest choices (difflib), or ``""``: typos like
    ``dyval.reachabilty`` or ``min_acuracy`` name their fix."""
    import difflib

    options = [str(c) for c in choices]
    folded = {o.lower(): o for o in options}
    # Case first (``d1`` → ``D1``: too short for difflib's ratio), then spelling.
    close = [folded[str(word).lower()]] if str(word).lower() in folded else []
    close = close or difflib.get_close_matches(str(word), options, n=2, cutoff=0.7)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


class ReasoningError(Exception):
    """Base class; ``str(exc)`` is a complete one-line explanation."""


class InvalidArgument(ReasoningError, ValueError):
    """A knob, option or argument has an impossible value (the message names it)."""


class UnknownTask(ReasoningError, KeyError):
    """No task is registered under this id."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnknownLevel(ReasoningError, ValueError):
    """The task has no such level."""


class InvalidSuite(ReasoningError):
    """A suite file is malformed: ``file: key.path: what was expected``. A suite with several
    mistakes raises one InvalidSuite holding them all (``problems``), one line each."""

    def __init__(self, path: str, key: str, message: str) -> None:
        self.path = path
        self.key = key
        self.message = message
        where = f"{path}: {key}: " if key else f"{path}: "
        self.line = f"{where}{message}"
        self.problems: tuple[InvalidSuite, ...] = (self,)
        super().__init__(self.line)

    @classmethod
    def several(cls, problems: Sequence[InvalidSuite]) -> InvalidSuite:
        """One exception for every problem found (the first names the file and key)."""
        if len(problems) == 1:
            return problems[0]
        first = problems[0]
        exc = cls(first.path, first.key, first.message)
        exc.problems = tuple(problems)
        exc.args = ("\n".join(p.line for p in problems),)
        return exc


class InvalidDataset(ReasoningError):
    """A dataset file (items as JSON lines) is malformed: ``file:line: field: expected``."""

    def __init__(self, path: str, line: int | None, field: str, message: str) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.message = message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


class TestStopped(BaseException):
    """Ends a test that uses the ``llm`` fixture at once; ``str(exc)`` is one line.

    A BaseException, as pytest's own outcomes are: Hypothesis shrinks every ``Exception`` a
    test raises, and neither a spent budget nor a failed call says anything about the
    generated problem, so shrinking one would only ask more calls (a fuzz test against a
    failing endpoint made 111 calls instead of 1). pytest reports it as the test's failure."""

    __test__ = False  # a class named Test*: not a test class for pytest to collect


class CallBudgetExceeded(TestStopped):
    """A test asked the ``llm`` fixture for more model calls than ``--reasoning-max-calls``."""


class ModelCallFailed(TestStopped):
    """A model call failed after its retries (infrastructure, not a wrong answer)."""


class StorageFailed(ReasoningError):
    """The response cache or the results file could not be written (disk full, read-only,
    removed): the run stops calling models, since answers it cannot keep would be lost."""
