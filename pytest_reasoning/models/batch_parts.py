"""The batch phase's vocabulary (``batch.py``): a model's job and its result, the progress
line, the ways a batch fails, and how an output line says why it has no answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import ReasoningError, duration
from .base import ChatRequest, error_text
from .litellm_client import LiteLLMClient

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "BatchFailed",
    "BatchJob",
    "BatchProgress",
    "BatchResult",
    "BatchTimedOut",
    "BatchUnsupported",
    "chunks",
    "http_status",
    "line_failure",
    "response_of",
    "why_failed",
]

# OpenAI's limits per batch: 50,000 requests and a 200 MB input file.
MAX_LINES = 50_000
MAX_BYTES = 190 * 2**20


class BatchUnsupported(ReasoningError):
    """The model's provider or endpoint has no Batch API, or refuses to run this batch (a
    bad key, a rejected input file): nothing was paid, the setup needs a fix."""


class BatchFailed(ReasoningError):
    """A batch call still failed after retries, or a recorded batch cannot be read back."""


class BatchTimedOut(ReasoningError):
    """A batch had not ended when the run's wait ran out; it stays recorded."""


@dataclass
class BatchJob:
    """One model's requests to answer in batches, and the client that knows its endpoint."""

    label: str  # how the run names the model (--llm)
    client: LiteLLMClient
    requests: list[ChatRequest]


@dataclass
class BatchResult:
    """What the batch phase did for one model."""

    label: str
    asked: int  # requests that had no cached answer
    answered: int = 0  # answers written to the cache (for this run's requests)
    submitted: list[str] = field(default_factory=list)  # batch ids submitted by this run
    picked_up: list[str] = field(default_factory=list)  # recorded batches collected
    left: dict[str, str] = field(default_factory=dict)  # request key → why it has no answer
    refused: int = 0  # requests not submitted: the budget could not pay for them


@dataclass
class BatchProgress:
    """Where the batches stand, for a progress line (read from another thread)."""

    asked: int = 0  # requests without a cached answer when the phase began
    kept: int = 0  # answers written to the cache so far
    started: float = field(default_factory=time.monotonic)
    # batch id → (status, lines done, lines failed) of the batches not yet collected
    running: dict[str, tuple[str, int, int]] = field(default_factory=dict)

    def update(self, batch_id: str, status: str, done: int, failed: int) -> None:
        self.running = {**self.running, batch_id: (status, done, failed)}

    def collected(self, batch_id: str, kept: int) -> None:
        self.running = {k: v for k, v in self.running.items() if k != batch_id}
        self.kept += kept

    def line(self) -> str:
        """``batch_abc in_progress: 12/40 answered, 1 failed, 1m05s``."""
        running = dict(self.running)
        elapsed = duration(time.monotonic() - self.started)
        done = self.kept + sum(d for _, d, _ in running.values())
        failed = sum(f for _, _, f in running.values())
        statuses = "/".join(sorted({s for s, _, _ in running.values()}))
        which = next(iter(running)) if len(running) == 1 else f"{len(running)} batches"
        state = f"{which} {statuses}" if running else "submitting"
        text = f"{state}: {min(done, self.asked)}/{self.asked} answered"
        return text + (f", {failed} failed" if failed else "") + f", {elapsed}"


def response_of(row: dict[str, Any]) -> tuple[int | None, Any]:
    response = row.get("response")
    if not isinstance(response, dict):
        return None, None
    status = response.get("status_code")
    return (status if isinstance(status, int) else None), response.get("body")


def line_failure(row: dict[str, Any]) -> tuple[str, bool]:
    """Why a line has no answer, and whether another batch could answer it (expired,
    5xx, 429: yes; a request the endpoint refused: no)."""
    status, body = response_of(row)
    error = row.get("error") if isinstance(row.get("error"), dict) else None
    if error is None and isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
    message = str((error or {}).get("message") or (error or {}).get("code") or "no answer")
    code = str((error or {}).get("code") or "")
    retry = status is None or status >= 500 or status == 429 or code == "batch_expired"
    where = f"HTTP {status}: " if status is not None else (f"{code}: " if code else "")
    return error_text(f"{where}{message}", 200), retry


def http_status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def why_failed(exc: BaseException) -> str:
    http = f"HTTP {http_status(exc)}: " if http_status(exc) is not None else ""
    return f"{http}{error_text(str(exc), 200)}"


def chunks(
    requests: list[ChatRequest], lines: list[str]
) -> Iterator[tuple[list[ChatRequest], bytes]]:
    """The requests in input files within the provider's limits (lines and bytes)."""
    start, size = 0, 0
    for n, line in enumerate(lines):
        length = len(line.encode())
        if n > start and (n - start == MAX_LINES or size + length > MAX_BYTES):
            yield requests[start:n], "".join(lines[start:n]).encode()
            start, size = n, 0
        size += length
    if lines:
        yield requests[start:], "".join(lines[start:]).encode()
