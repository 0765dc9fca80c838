"""Answers at batch prices: a model's uncached chat requests go to the provider's Batch API
(one JSONL file uploaded, one batch created, polled until it ends), and every answer in its
output file is checked like a live reply and written to the response cache at once. The run
that follows then answers every item from the cache.

Resumable: each submitted batch is recorded before it is polled, one JSON file per batch in
``<cache folder>/batches/`` (its id, model, endpoint and the requests it covers; never a
key), written atomically and removed once its answers are in the cache. A rerun of the same
command picks a recorded batch up instead of submitting again; a batch that expired or
failed in part is followed by one holding only the requests still missing (at most
``MAX_ROUNDS`` submissions per model and run). Lines that failed for a reason resubmitting
cannot fix (HTTP 4xx) are left to the run, which asks them live like any other.

LiteLLM's files and batches functions (``acreate_file``, ``acreate_batch``,
``aretrieve_batch``, ``afile_content``) do the HTTP, reached through the client module's
checked import (``import_litellm``); litellm is not imported here. Providers: OpenAI and any
OpenAI-compatible endpoint (``openai/…`` with an ``api_base``), Azure OpenAI and a LiteLLM
proxy (``BATCH_PROVIDERS``): the ones whose batch input is OpenAI's chat request as is.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import os
import random
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ..core import Reply
from ..errors import ReasoningError, clip, duration
from ..files import BadJSON, InputRefused, loads_bounded, read_input, write_output
from .base import ChatRequest, error_text, normalise_api_base
from .cache import ResponseStore
from .litellm_client import LiteLLMClient, classify_error, import_litellm, reply_from

__all__ = [
    "BATCH_PROVIDERS",
    "MAX_ROUNDS",
    "BatchFailed",
    "BatchJob",
    "BatchLedger",
    "BatchProgress",
    "BatchRecord",
    "BatchResult",
    "BatchTimedOut",
    "BatchUnsupported",
    "run_batches",
]

BATCH_PROVIDERS = ("openai", "azure", "litellm_proxy")
MAX_ROUNDS = 3  # submissions per model and run: the first, then two for what is missing
ENDPOINT = "/v1/chat/completions"
FOLDER = "batches"  # in the cache folder
# OpenAI's limits per batch: 50,000 requests and a 200 MB input file.
MAX_LINES = 50_000
MAX_BYTES = 190 * 2**20
MAX_RECORD_BYTES = 1 << 30  # a record larger than this is not one we wrote
POLL_FIRST_S = 0.2  # then x1.5 per poll, up to POLL_MAX_S
POLL_MAX_S = 30.0
_TERMINAL = ("completed", "expired", "cancelled", "failed")
# aretrieve_batch otherwise reads a finished batch's output file once more to log its cost.
_QUIET = {"litellm_metadata": {"batch_ignore_default_logging": True}}


class BatchUnsupported(ReasoningError):
    """The model's provider or endpoint has no Batch API, or refuses to run this batch (a
    bad key, a rejected input file): nothing was paid, the setup needs a fix."""


class BatchFailed(ReasoningError):
    """A batch call still failed after retries, or a recorded batch cannot be read back."""


class BatchTimedOut(ReasoningError):
    """A batch had not ended when the run's wait ran out; it stays recorded."""


@dataclass(frozen=True)
class BatchRecord:
    """A submitted batch not yet collected: enough to collect it from any later run."""

    id: str
    model: str  # the LiteLLM model string (ChatRequest.model)
    endpoint: str  # the endpoint identity (as in cache keys); "" for the provider's own
    provider: str
    submitted_at: float
    requests: tuple[ChatRequest, ...]

    @property
    def keys(self) -> set[str]:
        return {r.key for r in self.requests}

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "id": self.id,
            "model": self.model,
            "endpoint": self.endpoint,
            "provider": self.provider,
            "submitted_at": self.submitted_at,
            "requests": [
                {
                    "key": r.key,
                    "model": r.model,
                    "messages": [list(m) for m in r.messages],
                    "params": r.params,
                    # Normalised as in the key: a URL's user:password never reaches the disk.
                    "api_base": normalise_api_base(r.api_base) or None,
                    "identity": r.identity,
                    "repeat": r.repeat,
                }
                for r in self.requests
            ],
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> BatchRecord:
        """Check every field (a damaged record must not be half-read); ReasoningError names
        the file and the key."""

        def bad(key: str, expected: str) -> ReasoningError:
            return ReasoningError(
                f"{where}: {key}: expected {expected}; a batch record this program did not "
                "write: delete it (its batch will not be collected)"
            )

        if not isinstance(data, dict) or data.get("version") != 1:
            raise bad("version", "1")
        text: dict[str, str] = {}
        for key in ("id", "model", "endpoint", "provider"):
            value = data.get(key)
            if not isinstance(value, str):
                raise bad(key, "a string")
            text[key] = value
        submitted = data.get("submitted_at")
        if not isinstance(submitted, int | float):
            raise bad("submitted_at", "a number")
        rows = data.get("requests")
        if not isinstance(rows, list) or not rows:
            raise bad("requests", "a list of requests")
        requests = []
        for n, row in enumerate(rows):
            try:
                request = ChatRequest(
                    model=str(row["model"]),
                    messages=tuple((str(r), str(c)) for r, c in row["messages"]),
                    params=dict(row["params"]),
                    api_base=row["api_base"],
                    identity=row["identity"],
                    repeat=int(row["repeat"]),
                )
            except (KeyError, TypeError, ValueError):
                raise bad(f"requests[{n}]", "a request (model, messages, params, …)") from None
            if request.key != row.get("key"):
                raise bad(f"requests[{n}].key", "the key of its request")
            requests.append(request)
        return cls(
            text["id"],
            text["model"],
            text["endpoint"],
            text["provider"],
            submitted,
            tuple(requests),
        )


class BatchLedger:
    """The recorded batches, one JSON file each in ``folder`` (``<cache>/batches``): a file
    is written whole (temporary file, fsync, rename) and never changed, so concurrent runs
    never see half a record."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def path(self, batch_id: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", batch_id)[:200]
        return self.folder / f"{safe}.json"

    def records(self) -> list[BatchRecord]:
        """Every recorded batch, oldest first; ReasoningError (one line) for a damaged one."""
        found = []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else ():
            try:  # a regular file under the cap, bounded JSON (files.py)
                data = loads_bounded(read_input(path, MAX_RECORD_BYTES, what="a batch record"))
            except (InputRefused, BadJSON) as exc:
                why = exc.reason if isinstance(exc, InputRefused) else str(exc)
                raise ReasoningError(
                    f"{path}: unreadable batch record ({clip(why, 120)}): delete it "
                    "(its batch will not be collected)"
                ) from None
            found.append(BatchRecord.from_json(data, str(path)))
        return sorted(found, key=lambda r: r.submitted_at)

    def add(self, record: BatchRecord) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with write_output(self.path(record.id), durable=True) as fh:  # the one writer
            json.dump(record.to_json(), fh)

    def remove(self, record: BatchRecord) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(record.id).unlink()


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


async def run_batches(
    jobs: Sequence[BatchJob],
    store: ResponseStore,
    ledger: BatchLedger,
    *,
    wait_s: float,
    progress: BatchProgress | None = None,
) -> list[BatchResult]:
    """Answer every job's requests through its provider's Batch API (the models at once),
    writing each answer to ``store`` as its batch's output is read. Raises BatchUnsupported,
    BatchFailed, BatchTimedOut (``wait_s`` passed; the batch stays recorded) or the store's
    StorageFailed, each one line."""
    deadline = time.monotonic() + wait_s
    progress = progress or BatchProgress()
    progress.asked = sum(len({r.key for r in job.requests}) for job in jobs)
    lib = import_litellm()
    runners = [_Runner(lib, job, store, ledger, progress, deadline) for job in jobs]
    return list(await asyncio.gather(*(r.run() for r in runners)))


class _Runner:
    """One model's batches: submit, pick up, poll, collect."""

    def __init__(
        self,
        lib: ModuleType,
        job: BatchJob,
        store: ResponseStore,
        ledger: BatchLedger,
        progress: BatchProgress,
        deadline: float,
    ) -> None:
        self.lib, self.job, self.store, self.ledger = lib, job, store, ledger
        self.progress, self.deadline = progress, deadline
        self.rng = random.Random()  # retry jitter only
        client = job.client
        self.model = client.name
        self.endpoint = client.identity or normalise_api_base(client.api_base)
        base = normalise_api_base(client.api_base)  # no user:password in a message
        self.where = f"{job.label} at {base}" if base else job.label
        self.accepted: set[str] | None = None  # what get_optional_params takes by name
        try:
            self.name, self.provider, _, _ = lib.get_llm_provider(
                client.name, api_base=client.api_base
            )
        except Exception as exc:
            raise BatchUnsupported(
                f"--reasoning-batch: {self.where}: {error_text(str(exc))}"
            ) from None
        if self.provider not in BATCH_PROVIDERS:
            raise BatchUnsupported(
                f"--reasoning-batch: {self.where}: LiteLLM has no batch support for provider "
                f"{self.provider!r} here (batches go to {', '.join(BATCH_PROVIDERS)}); run "
                "without --reasoning-batch"
            )

    async def run(self) -> BatchResult:
        need = {r.key: r for r in self.job.requests}
        result = BatchResult(self.job.label, asked=len(need))
        given_up: dict[str, str] = {}  # failed for a reason another batch cannot fix
        why: dict[str, str] = {}  # the last reason a request was not answered
        rounds = 0
        while need.keys() - given_up.keys():
            mine = self._recorded(need)
            if mine:
                result.picked_up += [r.id for r in mine if r.id not in result.submitted]
            elif rounds == MAX_ROUNDS:
                break
            else:
                rounds += 1
                mine = await self._submit([r for k, r in need.items() if k not in given_up])
                result.submitted += [r.id for r in mine]
            for answered, failed in await asyncio.gather(*(self._settle(r) for r in mine)):
                result.answered += len(answered & need.keys())
                for key in answered:
                    need.pop(key, None)
                for key, (reason, retry) in failed.items():
                    if key in need:
                        why[key] = reason
                        if not retry:
                            given_up[key] = reason
        result.left = {key: why.get(key, "not answered") for key in need}
        return result

    def _recorded(self, need: dict[str, ChatRequest]) -> list[BatchRecord]:
        """This model's recorded batches that cover requests still needed. A record whose
        answers are all in the cache (a run killed before it forgot it) is forgotten."""
        mine = []
        for record in self.ledger.records():
            if (record.model, record.endpoint) != (self.model, self.endpoint):
                continue
            if record.keys & need.keys():
                mine.append(record)
            elif all(self.store.get(r) is not None for r in record.requests):
                self.ledger.remove(record)
        return mine

    # -- calls -------------------------------------------------------------------------------
    async def _call(self, name: str, what: str, **kwargs: Any) -> Any:
        """One call of the batch API, retried like a chat request (the client's policy);
        BatchUnsupported for an endpoint without one, BatchFailed for other refusals."""
        client = self.job.client
        attempt = 0
        while True:
            try:
                return await getattr(self.lib, name)(
                    custom_llm_provider=self.provider,
                    timeout=client.timeout_s,
                    max_retries=0,
                    **client.connection(),
                    **kwargs,
                )
            except asyncio.CancelledError:
                raise
            except ReasoningError:  # a key's environment variable is missing
                raise
            except Exception as exc:
                attempt += 1
                status = getattr(exc, "status_code", None)
                creating = name in ("acreate_file", "acreate_batch")
                if creating and status in (404, 405):
                    raise BatchUnsupported(
                        f"--reasoning-batch: {self.where} has no batch API ({what}: HTTP "
                        f"{status}); run without --reasoning-batch"
                    ) from None
                if name == "aretrieve_batch" and status == 404:
                    path = self.ledger.path(str(kwargs.get("batch_id")))
                    raise BatchFailed(
                        f"--reasoning-batch: {self.where}: batch {kwargs.get('batch_id')} is "
                        f"unknown there (HTTP 404); delete {path} to submit its requests again"
                    ) from None
                kind = classify_error(exc, answered_before=True)
                if kind != "transient" or attempt >= client.retry.attempts:
                    http = f"HTTP {status}: " if isinstance(status, int) else ""
                    text = f"{what} failed ({http}{error_text(str(exc), 200)})"
                    if creating and kind != "transient":  # refused before anything ran
                        raise BatchUnsupported(f"--reasoning-batch: {self.where}: {text}") from None
                    raise BatchFailed(f"--reasoning-batch: {self.where}: {text}") from None
                await asyncio.sleep(client.retry.delay(attempt - 1, None, self.rng))

    def line(self, request: ChatRequest) -> dict[str, Any]:
        """A request as a line of the batch input: the body LiteLLM would send live."""
        get_optional_params = self.lib.utils.get_optional_params
        if self.accepted is None:
            named = inspect.signature(get_optional_params).parameters
            self.accepted = set(named) - {"model", "kwargs"}
        accepted = self.accepted
        given = {k: v for k, v in request.params.items() if k in accepted}
        try:
            mapped = get_optional_params(
                model=self.name, custom_llm_provider=self.provider, **given
            )
        except Exception as exc:  # a parameter the model refuses: live calls would fail alike
            raise BatchUnsupported(
                f"--reasoning-batch: {self.where}: {error_text(str(exc))}"
            ) from None
        mapped.pop("stream", None)
        extra = mapped.pop("extra_body", None) or {}
        body: dict[str, Any] = {
            "model": self.name,
            "messages": [{"role": r, "content": c} for r, c in request.messages],
        }
        body.update({k: v for k, v in request.params.items() if k not in accepted})
        body.update(mapped)
        body.update(extra)
        return {"custom_id": request.key, "method": "POST", "url": ENDPOINT, "body": body}

    async def _submit(self, requests: list[ChatRequest]) -> list[BatchRecord]:
        """The requests in as few batches as the provider's limits allow, each recorded."""
        lines = [json.dumps(self.line(r)) + "\n" for r in requests]
        return [await self._submit_one(chunk, text) for chunk, text in _chunks(requests, lines)]

    async def _submit_one(self, requests: list[ChatRequest], data: bytes) -> BatchRecord:
        upload = await self._call(
            "acreate_file", "POST /files", file=("pytest-reasoning.jsonl", data), purpose="batch"
        )
        batch = await self._call(
            "acreate_batch",
            "POST /batches",
            completion_window="24h",
            endpoint=ENDPOINT,
            input_file_id=upload.id,
            metadata={"source": "pytest-reasoning"},
        )
        record = BatchRecord(
            str(batch.id), self.model, self.endpoint, self.provider, time.time(), tuple(requests)
        )
        self.ledger.add(record)  # before anything else: a killed run finds it
        self.progress.update(record.id, str(batch.status), 0, 0)
        return record

    async def _settle(self, record: BatchRecord) -> tuple[set[str], dict[str, tuple[str, bool]]]:
        """Wait for a batch to end, keep its answers, forget its record."""
        batch = await self._wait(record)
        if batch.status == "failed":
            self.ledger.remove(record)  # rejected as a whole: nothing was run or paid
            errors = getattr(getattr(batch, "errors", None), "data", None) or []
            why = "; ".join(str(getattr(e, "message", e)) for e in errors[:3]) or "no reason"
            raise BatchUnsupported(
                f"--reasoning-batch: {self.where}: batch {record.id} was rejected: "
                f"{error_text(why, 200)}"
            )
        answered, failed = await self._collect(record, batch)
        self.ledger.remove(record)
        self.progress.collected(record.id, len(answered))
        return answered, failed

    async def _wait(self, record: BatchRecord) -> Any:
        delay = POLL_FIRST_S
        while True:
            batch = await self._call(
                "aretrieve_batch", "GET /batches", batch_id=record.id, **_QUIET
            )
            counts = getattr(batch, "request_counts", None)
            self.progress.update(
                record.id,
                str(batch.status),
                int(getattr(counts, "completed", 0) or 0),
                int(getattr(counts, "failed", 0) or 0),
            )
            if batch.status in _TERMINAL:
                return batch
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise BatchTimedOut(
                    f"--reasoning-batch: {self.where}: batch {record.id} is still "
                    f"{batch.status} ({self.progress.line()}); it is kept in "
                    f"{self.ledger.folder}: rerun the same command to pick it up"
                )
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 1.5, POLL_MAX_S)

    async def _rows(self, file_id: str | None) -> Iterator[dict[str, Any]]:
        if not file_id:
            return iter(())
        found = await self._call("afile_content", "GET /files/content", file_id=file_id)
        text = bytes(found.content).decode("utf-8", "replace")
        rows = []
        for line in text.splitlines():
            with contextlib.suppress(ValueError):  # BadJSON too: deep JSON is not a row
                row = loads_bounded(line)
                if isinstance(row, dict) and isinstance(row.get("custom_id"), str):
                    rows.append(row)
        return iter(rows)

    async def _collect(
        self, record: BatchRecord, batch: Any
    ) -> tuple[set[str], dict[str, tuple[str, bool]]]:
        """Every answer of the output file into the cache, the moment it is read; the rest
        with why and whether another batch could answer it."""
        requests = {r.key: r for r in record.requests}
        answered: set[str] = set()
        failed: dict[str, tuple[str, bool]] = {}
        for row in await self._rows(getattr(batch, "output_file_id", None)):
            request = requests.get(row["custom_id"])
            if request is None:
                continue
            status, body = _response(row)
            if status != 200 or not isinstance(body, dict):
                failed[request.key] = _line_failure(row)
                continue
            reply = self._reply(request, body)
            if reply.error is not None or reply.content is None:
                failed[request.key] = (reply.error or "no content", reply.error_kind != "request")
                continue
            self.store.put(request, reply)
            answered.add(request.key)
        for row in await self._rows(getattr(batch, "error_file_id", None)):
            key = row["custom_id"]
            if key in requests and key not in answered:
                failed[key] = _line_failure(row)
        for key in requests.keys() - answered - failed.keys():
            failed[key] = (f"batch {record.id} ended {batch.status} without it", True)
        return answered, failed

    def _reply(self, request: ChatRequest, body: dict[str, Any]) -> Reply:
        """A batch line's completion, checked like a live reply, priced at batch rates."""
        try:
            resp = self.lib.ModelResponse(**body)
            reply = reply_from(resp, 0.0)
        except Exception as exc:
            kind = classify_error(exc, answered_before=True)
            why = error_text(str(exc)) if isinstance(exc, RuntimeError) else "malformed reply"
            return Reply(content=None, error=why, error_kind=kind)
        with contextlib.suppress(Exception):  # unpriced models (custom endpoints)
            prompt, completion = self.lib.cost_calculator.batch_cost_calculator(
                usage=resp.usage, model=self.name, custom_llm_provider=self.provider
            )
            if prompt + completion > 0:
                reply = dataclasses.replace(reply, cost_usd=float(prompt + completion))
        return reply


def _response(row: dict[str, Any]) -> tuple[int | None, Any]:
    response = row.get("response")
    if not isinstance(response, dict):
        return None, None
    status = response.get("status_code")
    return (status if isinstance(status, int) else None), response.get("body")


def _line_failure(row: dict[str, Any]) -> tuple[str, bool]:
    """Why a line has no answer, and whether another batch could answer it (expired,
    5xx, 429: yes; a request the endpoint refused: no)."""
    status, body = _response(row)
    error = row.get("error") if isinstance(row.get("error"), dict) else None
    if error is None and isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
    message = str((error or {}).get("message") or (error or {}).get("code") or "no answer")
    code = str((error or {}).get("code") or "")
    retry = status is None or status >= 500 or status == 429 or code == "batch_expired"
    where = f"HTTP {status}: " if status is not None else (f"{code}: " if code else "")
    return error_text(f"{where}{message}", 200), retry


def _chunks(
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

