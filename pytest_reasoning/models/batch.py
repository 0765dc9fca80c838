"""Answers at batch prices: a model's uncached chat requests go to the provider's Batch API
(one JSONL file uploaded, one batch created, polled until it ends), and every answer in its
output file is checked like a live reply and written to the response cache at once. The run
that follows then answers every item from the cache.

Resumable: each batch is recorded (``batch_ledger.py``) before it is created, under a tag of
ours that the create sends as the batch's metadata, and forgotten once its answers are in the
cache. A rerun of the same command picks a recorded batch up instead of submitting again; a
batch that expired or failed in part is followed by one holding only the requests still
missing (at most ``MAX_ROUNDS`` submissions per model and run). Lines that failed for a
reason resubmitting cannot fix (HTTP 4xx) are left to the run, which asks them live.

Created once: a create is never retried blindly. One whose answer is lost (a timeout, a 5xx)
may have made the batch all the same, so the provider's list of batches is searched for the
tag before any new try (here, or by the rerun of a run that stopped).

Billed as reported: each line the endpoint ran is a call, its usage the tokens billed, priced
at batch rates; ``BatchPurse`` adds them to the run's spend. Under ``--reasoning-budget`` a
batch holds only the requests, in order, that the budget can pay for at their most (prompt
tokens counted offline, plus the most output each allows); the rest is not submitted.

LiteLLM's files and batches functions (``acreate_file``, ``acreate_batch``, ``alist_batches``,
``aretrieve_batch``, ``afile_content``) do the HTTP, reached through the client module's
checked import (``import_litellm``); litellm is not imported here. Providers: OpenAI and any
OpenAI-compatible endpoint (``openai/…`` with an ``api_base``), Azure OpenAI and a LiteLLM
proxy (``BATCH_PROVIDERS``): the ones whose batch input is OpenAI's chat request as is.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import inspect
import json
import random
import time
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from ..core import Reply
from ..errors import ReasoningError
from ..files import loads_bounded
from .base import ChatRequest, error_text, normalise_api_base
from .batch_budget import BatchPurse, Bill, batch_price, most_tokens, usage_of
from .batch_ledger import TAG_KEY, BatchLedger, BatchRecord, new_tag
from .batch_parts import (
    BatchFailed,
    BatchJob,
    BatchProgress,
    BatchResult,
    BatchTimedOut,
    BatchUnsupported,
    chunks,
    http_status,
    line_failure,
    response_of,
    why_failed,
)
from .cache import ResponseStore
from .litellm_client import (
    asks_no_reasoning,
    classify_error,
    import_litellm,
    reply_from,
)

__all__ = [
    "BATCH_PROVIDERS",
    "MAX_ROUNDS",
    "BatchFailed",
    "BatchJob",
    "BatchLedger",
    "BatchProgress",
    "BatchPurse",
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
POLL_FIRST_S = 0.2  # then x1.5 per poll, up to POLL_MAX_S
POLL_MAX_S = 30.0
# A lost create is looked for in the list (newest first) down to batches made this long
# before its record (clocks disagree), at most LIST_PAGES pages of LIST_LIMIT.
LIST_SKEW_S = 3600.0
LIST_PAGES = 10
LIST_LIMIT = 100
_TERMINAL = ("completed", "expired", "cancelled", "failed")
# aretrieve_batch otherwise reads a finished batch's output file once more to log its cost.
_QUIET = {"litellm_metadata": {"batch_ignore_default_logging": True}}


async def run_batches(
    jobs: Sequence[BatchJob],
    store: ResponseStore,
    ledger: BatchLedger,
    *,
    wait_s: float,
    progress: BatchProgress | None = None,
    purse: BatchPurse | None = None,
) -> list[BatchResult]:
    """Answer every job's requests through its provider's Batch API (the models at once),
    writing each answer to ``store`` as its batch's output is read, and each batch's bill to
    ``purse`` (whose budget bounds what is submitted). Raises BatchUnsupported, BatchFailed,
    BatchTimedOut (``wait_s`` passed; the batch stays recorded) or the store's
    StorageFailed, each one line."""
    deadline = time.monotonic() + wait_s
    progress = progress or BatchProgress()
    progress.asked = sum(len({r.key for r in job.requests}) for job in jobs)
    purse = purse if purse is not None else BatchPurse()
    lib = import_litellm()
    runners = [_Runner(lib, job, store, ledger, progress, deadline, purse) for job in jobs]
    if purse.budget:  # every estimate before anything is submitted: a refusal pays nothing
        for runner in runners:
            for request in runner.job.requests:
                runner.most(request)
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
        purse: BatchPurse,
    ) -> None:
        self.lib, self.job, self.store, self.ledger = lib, job, store, ledger
        self.progress, self.deadline, self.purse = progress, deadline, purse
        self.rng = random.Random()  # retry jitter only
        client = job.client
        self.model = client.name
        self.endpoint = client.identity or normalise_api_base(client.api_base)
        base = normalise_api_base(client.api_base)  # no user:password in a message
        self.where = f"{job.label} at {base}" if base else job.label
        self.accepted: set[str] | None = None  # what get_optional_params takes by name
        self.unsent: set[str] = set()  # and what never goes into a body as is
        self.bounds: dict[str, tuple[int, float]] = {}  # request key → its most (the budget)
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
        refused: set[str] = set()  # not submitted: the budget cannot pay for them
        rounds = 0
        while need.keys() - given_up.keys():
            mine = self._recorded(need)
            fresh = not mine
            if mine:  # already submitted: held at their most, when that is known
                self.purse.hold([r for m in mine for r in m.requests], self._most_known)
            elif rounds == MAX_ROUNDS:
                break
            else:
                rounds += 1
                pending = [r for k, r in need.items() if k not in given_up]
                taken = self.purse.take(self.job.label, pending, self.most)
                refused = {r.key for r in pending[len(taken) :]}
                if not taken:
                    break
                mine = await self._submit(taken)
                result.submitted += [r.id for r in mine]
            for batch_id, answered, failed in await asyncio.gather(
                *(self._settle(r) for r in mine)
            ):
                if batch_id is not None and not fresh:
                    result.picked_up.append(batch_id)
                result.answered += len(answered & need.keys())
                for key in answered:
                    need.pop(key, None)
                for key, (reason, retry) in failed.items():
                    if key in need:
                        why[key] = reason
                        if not retry:
                            given_up[key] = reason
        result.refused = len(refused & need.keys())
        result.left = {key: why.get(key, "not answered") for key in need if key not in refused}
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

    # -- the budget --------------------------------------------------------------------------
    def most(self, request: ChatRequest) -> tuple[int, float]:
        """The most ``request`` can cost in a batch, in tokens and dollars: its prompt's
        tokens (counted offline) and all the output it allows (``max_tokens`` or
        ``max_completion_tokens``, else the model's limit in LiteLLM's map), at batch
        prices. BatchUnsupported when nothing bounds it."""
        found = self.bounds.get(request.key)
        if found is not None:
            return found
        tokens = most_tokens(self.lib, self.name, request, self.job.client.caps.max_output_tokens)
        if tokens is None:
            raise BatchUnsupported(
                f"--reasoning-batch: {self.where}: under --reasoning-budget a batch is "
                "submitted only for what the budget can pay for, and nothing bounds these "
                "requests' output (no max_tokens; LiteLLM's map does not know the model): "
                "give one (--llm-param max_tokens=N) or run without --reasoning-batch"
            )
        prompt, limit = tokens
        usd = 0.0
        if self.purse.budget.usd is not None:
            price = self._price(request, prompt, limit)
            if price is None:
                raise BatchUnsupported(
                    f"--reasoning-batch: {self.where}: --reasoning-budget {self.purse.budget}: "
                    "the model has no batch price (not in LiteLLM's price map): give its "
                    "--llm-config entry input_cost_per_token and output_cost_per_token, or "
                    "budget tokens=N"
                )
            usd = price
        found = self.bounds[request.key] = (prompt + limit, usd)
        return found

    def _most_known(self, request: ChatRequest) -> tuple[int, float]:
        try:
            return self.most(request)
        except BatchUnsupported:  # a batch of an earlier run, whose requests set no bound
            return 0, 0.0

    def _price(self, request: ChatRequest, prompt: int, completion: int) -> float | None:
        return batch_price(self.lib, self.name, self.provider, request, prompt, completion)

    # -- calls -------------------------------------------------------------------------------
    async def _attempt(self, name: str, **kwargs: Any) -> Any:
        client = self.job.client
        return await getattr(self.lib, name)(
            custom_llm_provider=self.provider,
            timeout=client.timeout_s,
            max_retries=0,
            **client.connection(),
            **kwargs,
        )

    async def _call(
        self, name: str, what: str, *, record: BatchRecord | None = None, **kwargs: Any
    ) -> Any:
        """One call of the batch API that is safe to repeat (an upload, a read: never a
        create), retried like a chat request (the client's policy); BatchUnsupported for an
        endpoint without one, BatchFailed for other refusals."""
        attempt = 0
        while True:
            try:
                return await self._attempt(name, **kwargs)
            except asyncio.CancelledError:
                raise
            except ReasoningError:  # a key's environment variable is missing
                raise
            except Exception as exc:
                attempt += 1
                refused = self._refused(what, exc) if name == "acreate_file" else None
                if refused is not None:
                    raise refused from None
                if name == "aretrieve_batch" and http_status(exc) == 404 and record is not None:
                    raise BatchFailed(
                        f"--reasoning-batch: {self.where}: batch {record.id} is unknown there "
                        f"(HTTP 404); delete {self.ledger.path(record)} to submit its requests "
                        "again"
                    ) from None
                kind = classify_error(exc, answered_before=True)
                if kind != "transient" or attempt >= self.job.client.retry.attempts:
                    raise BatchFailed(
                        f"--reasoning-batch: {self.where}: {what} failed ({why_failed(exc)})"
                    ) from None
                await asyncio.sleep(self.job.client.retry.delay(attempt - 1, None, self.rng))

    def _refused(self, what: str, exc: Exception) -> BatchUnsupported | None:
        """A create refused outright, so nothing was made or paid (no batch API, a bad key,
        a rejected file); None when it may have been made (a timeout, a 5xx)."""
        if http_status(exc) in (404, 405):
            return BatchUnsupported(
                f"--reasoning-batch: {self.where} has no batch API ({what}: HTTP "
                f"{http_status(exc)}); run without --reasoning-batch"
            )
        if classify_error(exc, answered_before=True) == "transient":
            return None
        why = why_failed(exc)
        return BatchUnsupported(f"--reasoning-batch: {self.where}: {what} failed ({why})")

    def line(self, request: ChatRequest) -> dict[str, Any]:
        """A request as a line of the batch input: the body LiteLLM would send live."""
        get_optional_params = self.lib.utils.get_optional_params
        if self.accepted is None:
            named = inspect.signature(get_optional_params).parameters
            self.accepted = set(named) - {"model", "kwargs"}
            # LiteLLM's own parameters (an entry's prices) are never sent, live or here.
            self.unsent = self.accepted | set(self.lib.all_litellm_params)
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
        body.update({k: v for k, v in request.params.items() if k not in self.unsent})
        body.update(mapped)
        body.update(extra)
        return {"custom_id": request.key, "method": "POST", "url": ENDPOINT, "body": body}

    # -- submitting --------------------------------------------------------------------------
    async def _submit(self, requests: list[ChatRequest]) -> list[BatchRecord]:
        """The requests in as few batches as the provider's limits allow, each recorded."""
        lines = [json.dumps(self.line(r)) + "\n" for r in requests]
        records = []
        for chunk, text in chunks(requests, lines):
            tag = new_tag()
            upload = await self._call(
                "acreate_file",
                "POST /files",
                file=(f"pytest-reasoning-{tag}.jsonl", text),
                purpose="batch",
            )
            record = BatchRecord(
                "", self.model, self.endpoint, self.provider, time.time(), tuple(chunk),
                tag=tag, file_id=str(upload.id),
            )  # fmt: skip
            self.ledger.add(record)  # before the create: whatever happens, its tag finds it
            created = await self._create(record)
            assert created is not None  # a fresh record's create is never dropped
            records.append(created)
        return records

    async def _create(self, record: BatchRecord, *, resumed: bool = False) -> BatchRecord | None:
        """Create ``record``'s batch, once. A create whose answer is lost (a timeout, a 5xx,
        a dropped connection) may have made the batch all the same: the provider's list is
        searched for its tag before any new try, never created blindly. A create refused
        outright (HTTP 4xx) made nothing: the record is forgotten and BatchUnsupported
        raised, or for a ``resumed`` record (its input file may be gone) None, and its
        requests are submitted afresh."""
        retry = self.job.client.retry
        attempt = 0
        while True:
            try:
                batch = await self._attempt(
                    "acreate_batch",
                    completion_window="24h",
                    endpoint=ENDPOINT,
                    input_file_id=record.file_id,
                    metadata={"source": "pytest-reasoning", TAG_KEY: record.tag},
                )
                break
            except asyncio.CancelledError:
                raise
            except ReasoningError:  # a key's environment variable is missing: nothing sent
                raise
            except Exception as exc:
                attempt += 1
                refused = self._refused("POST /batches", exc)
                if refused is not None:
                    self.ledger.remove(record)
                    if resumed:
                        return None
                    raise refused from None
                lost = f"POST /batches got no answer ({why_failed(exc)})"
                # The backoff first: a batch the endpoint is still making shows in the list.
                await asyncio.sleep(retry.delay(attempt - 1, None, self.rng))
                found = await self._find(record, lost)
                if found is not None:
                    batch = found
                    break
                if attempt >= retry.attempts:
                    raise BatchFailed(
                        f"--reasoning-batch: {self.where}: {lost} {attempt} time(s), and no "
                        f"batch carries its tag; it stays recorded in "
                        f"{self.ledger.path(record)}: rerun the same command (it looks the "
                        "batch up again before creating one)"
                    ) from None
        record = dataclasses.replace(record, id=str(batch.id))
        self.ledger.add(record)
        self.progress.update(record.id, str(batch.status), 0, 0)
        return record

    async def _find(self, record: BatchRecord, context: str) -> Any | None:
        """The batch that carries ``record``'s tag in the provider's list (newest first); None
        when the list shows none down to batches older than the record. BatchFailed when the
        list cannot be read: then nobody knows, and nothing is created."""
        after: str | None = None
        for _ in range(LIST_PAGES):
            try:
                page = await self._call(
                    "alist_batches", "GET /batches", limit=LIST_LIMIT, after=after
                )
            except BatchFailed as exc:
                why = str(exc).removeprefix(f"--reasoning-batch: {self.where}: ")
                raise BatchFailed(self._unknown(record, context, why)) from None
            rows = list(getattr(page, "data", None) or [])
            for batch in rows:
                metadata = getattr(batch, "metadata", None)
                if isinstance(metadata, Mapping) and metadata.get(TAG_KEY) == record.tag:
                    return batch
            oldest = getattr(rows[-1], "created_at", None) if rows else None
            if not rows or not getattr(page, "has_more", False):
                return None
            if isinstance(oldest, int | float) and oldest < record.submitted_at - LIST_SKEW_S:
                return None
            after = str(rows[-1].id)
        why = f"more than {LIST_PAGES * LIST_LIMIT} batches are newer than it"
        raise BatchFailed(self._unknown(record, context, why))

    def _unknown(self, record: BatchRecord, context: str, why: str) -> str:
        return (
            f"--reasoning-batch: {self.where}: {context}, and whether it made "
            f"{record.name} cannot be looked up ({why}); it stays recorded in "
            f"{self.ledger.path(record)}: rerun the same command to look again (delete that "
            "file only if you know no batch was made: one would then be paid twice)"
        )

    async def _resolve(self, record: BatchRecord) -> BatchRecord | None:
        """A record whose create never answered (a run that stopped): its batch if the list
        has it, else created now from its input file (None: submit its requests afresh)."""
        found = await self._find(record, f"{record.name} was recorded without an answer")
        if found is None:
            return await self._create(record, resumed=True)
        record = dataclasses.replace(record, id=str(found.id))
        self.ledger.add(record)
        return record

    # -- collecting --------------------------------------------------------------------------
    async def _settle(
        self, record: BatchRecord
    ) -> tuple[str | None, set[str], dict[str, tuple[str, bool]]]:
        """Wait for a batch to end, keep its answers and its bill, forget its record: its id
        (None when there was none to collect), what it answered, what failed and why."""
        if not record.id:
            resolved = await self._resolve(record)
            if resolved is None:
                return None, set(), {}
            record = resolved
        batch = await self._wait(record)
        if batch.status == "failed":
            self.ledger.remove(record)  # rejected as a whole: nothing was run or paid
            self.purse.bill(self.job.label, record.keys, 0, 0, None)
            errors = getattr(getattr(batch, "errors", None), "data", None) or []
            why = "; ".join(str(getattr(e, "message", e)) for e in errors[:3]) or "no reason"
            raise BatchUnsupported(
                f"--reasoning-batch: {self.where}: batch {record.id} was rejected: "
                f"{error_text(why, 200)}"
            )
        answered, failed = await self._collect(record, batch)
        self.ledger.remove(record)
        self.progress.collected(record.id, len(answered))
        return record.id, answered, failed

    async def _wait(self, record: BatchRecord) -> Any:
        delay = POLL_FIRST_S
        while True:
            batch = await self._call(
                "aretrieve_batch", "GET /batches", record=record, batch_id=record.id, **_QUIET
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

    async def _rows(self, file_id: str | None) -> list[dict[str, Any]]:
        if not file_id:
            return []
        found = await self._call("afile_content", "GET /files/content", file_id=file_id)
        text = bytes(found.content).decode("utf-8", "replace")
        rows = []
        for line in text.splitlines():
            with contextlib.suppress(ValueError):  # BadJSON too: deep JSON is not a row
                row = loads_bounded(line)
                if isinstance(row, dict) and isinstance(row.get("custom_id"), str):
                    rows.append(row)
        return rows

    async def _collect(
        self, record: BatchRecord, batch: Any
    ) -> tuple[set[str], dict[str, tuple[str, bool]]]:
        """Every answer of the output file into the cache, the moment it is read; the rest
        with why and whether another batch could answer it. Every line the endpoint ran is
        billed to the purse: a call, with the tokens its usage reports, at batch prices."""
        requests = {r.key: r for r in record.requests}
        answered: set[str] = set()
        failed: dict[str, tuple[str, bool]] = {}
        outputs = await self._rows(getattr(batch, "output_file_id", None))
        errors = await self._rows(getattr(batch, "error_file_id", None))
        bill = Bill()
        for row in outputs + errors:
            request = requests.get(row["custom_id"])
            if request is not None:
                price = functools.partial(self._price, request)
                bill.add(request.key, *response_of(row), price)
        for row in outputs:
            request = requests.get(row["custom_id"])
            if request is None:
                continue
            status, body = response_of(row)
            if status != 200 or not isinstance(body, dict):
                failed[request.key] = line_failure(row)
                continue
            reply = self._reply(request, body)
            if reply.error is not None or reply.content is None:
                failed[request.key] = (reply.error or "no content", reply.error_kind != "request")
                continue
            self.store.put(request, reply)
            answered.add(request.key)
        self.purse.bill(self.job.label, record.keys, bill.calls, bill.tokens, bill.usd)
        for row in errors:
            key = row["custom_id"]
            if key in requests and key not in answered:
                failed[key] = line_failure(row)
        for key in requests.keys() - answered - failed.keys():
            failed[key] = (f"batch {record.id} ended {batch.status} without it", True)
        return answered, failed

    def _reply(self, request: ChatRequest, body: dict[str, Any]) -> Reply:
        """A batch line's completion, checked like a live reply, priced at batch rates."""
        try:
            resp = self.lib.ModelResponse(**body)
            reply = reply_from(
                resp,
                0.0,
                keep_reasoning=not asks_no_reasoning(request.params),
                reasoning_fields=self.job.client.kind.reasoning_fields,
            )
        except Exception as exc:
            kind = classify_error(exc, answered_before=True)
            why = error_text(str(exc)) if isinstance(exc, RuntimeError) else "malformed reply"
            return Reply(content=None, error=why, error_kind=kind)
        tokens = usage_of(body)
        cost = self._price(request, *tokens) if tokens is not None else None
        return dataclasses.replace(reply, cost_usd=cost) if cost is not None else reply
