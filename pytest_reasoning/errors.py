"""Exceptions with one-line messages: users see the message, never a traceback."""

from __future__ import annotations

__all__ = [
    "CallBudgetExceeded",
    "InvalidArgument",
    "InvalidDataset",
    "InvalidSuite",
    "ModelCallFailed",
    "ReasoningError",
    "StorageFailed",
    "UnknownLevel",
    "UnknownTask",
]


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
    """A suite file is malformed: ``file: key.path: what was expected``."""

    def __init__(self, path: str, key: str, message: str) -> None:
        self.path = path
        self.key = key
        self.message = message
        where = f"{path}: {key}: " if key else f"{path}: "
        super().__init__(f"{where}{message}")


class InvalidDataset(ReasoningError):
    """A dataset file (items as JSON lines) is malformed: ``file:line: field: expected``."""

    def __init__(self, path: str, line: int | None, field: str, message: str) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.message = message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


class CallBudgetExceeded(ReasoningError):
    """A test asked the ``llm`` fixture for more model calls than ``--reasoning-max-calls``."""


class ModelCallFailed(ReasoningError):
    """A model call failed after its retries (infrastructure, not a wrong answer)."""


class StorageFailed(ReasoningError):
    """The response cache or the results file could not be written (disk full, read-only,
    removed): the run stops calling models, since answers it cannot keep would be lost."""
