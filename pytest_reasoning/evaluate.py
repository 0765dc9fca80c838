"""Answering items: model resolution, cached concurrent calls on a background event loop,
and scoring into Outcomes. Works without pytest (notebooks, the CLI, other harnesses).

Every reply is cached the moment it arrives, before anything that could fail: paid answers
are never lost."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import sqlite3
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .budget import Meter
from .core import Item, Outcome, Reply
from .errors import ReasoningError, StorageFailed
from .gates.verdicts import STOPPED_BY_ERROR
from .models.base import ChatRequest, ModelClient
from .models.cache import CACHE_FILE, ResponseCache, ResponseStore, new_owner, storage_failure
from .models.endpoints import ModelSpec
from .models.kinds import ClientContext, Model, resolve
from .models.litellm_client import (
    CapabilityCache,
    LiteLLMClient,
    RetryPolicy,
    check_installed_litellm,
)
from .models.router import RouterGroup
from .models.shared_cache import LayeredStore, RedisStore
from .registry import get_task
from .scoring import score_reply
from .tasks import hooks

__all__ = ["EvalConfig", "Evaluator", "score_reply"]

T = TypeVar("T")

# A run waiting for another's answer to the same prompt reads the cache again after 50 ms,
# then doubling up to a second.
_POLL_FIRST_S = 0.05
_POLL_MAX_S = 1.0
_CLAIMED = Reply(content=None, error="claimed by another run")  # a sentinel, never returned


@dataclass
class EvalConfig:
    api_base: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    cache_dir: str | None = ".reasoning_cache"
    # A shared cache on Redis (redis://host:port/db): behind the local cache_dir, or alone
    # when cache_dir is None (see models/shared_cache.py).
    cache_url: str | None = None
    concurrency: int = 8
    timeout_s: float = 120.0
    attempts: int = 5
    local_url: str | None = None  # set once the embedded server runs
    local_identity: str | None = None  # its cache identity (see LocalServer.identity)
    # Aliases of --llm-config (LiteLLM model_list entries): each its own endpoint, key, params.
    # Model groups of --llm-router (models.router.RouterGroup) are here too, by name.
    models: Mapping[str, ModelSpec | RouterGroup] = field(default_factory=dict)
    # Also accept \boxed{…} and "the answer is …" when the strict format is missing.
    lenient: bool = False


_NOT_NEEDED = "not asked: not needed (its sequential level settled)"


def _reference_reply(item: Item) -> str:
    """The task's own solver's reply to ``item`` (the ``reference`` model's client)."""
    return hooks.reference_response(get_task(item.task), item)


def _now(coro: Coroutine[Any, Any, T]) -> T:
    """A client's answer that waits for nothing (the reference's), run to its end here
    rather than on the calls' loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("a client that calls no model waited")


def _unpaid(source: concurrent.futures.Future[Reply]) -> concurrent.futures.Future[Reply]:
    """A second asker's share of one call: its reply, as an answer from the cache (paid
    once, by the first; at concurrency 1 the second would have found it in the cache)."""
    out: concurrent.futures.Future[Reply] = concurrent.futures.Future()

    def copy(fut: concurrent.futures.Future[Reply]) -> None:
        try:
            reply = fut.result()
        except BaseException as exc:  # handed on to the asker as is
            out.set_exception(exc)
            return
        if reply.error is None and not reply.cached:
            reply = dataclasses.replace(reply, cached=True)
        out.set_result(reply)

    source.add_done_callback(copy)
    return out


class Evaluator:
    """Answers ``(item, model)`` pairs; ``prefetch`` them to run calls concurrently.

    A model's first call goes alone: the others wait for it, so a bad key or an unknown model
    costs one call, not a window of them. An error that retrying cannot fix stops the model:
    every later request is answered at once with a ``not_asked`` error naming the cause.
    """

    def __init__(self, config: EvalConfig) -> None:
        self.config = config
        # Opened on first use: a reference-only run touches no cache directory.
        self._cache: ResponseStore | None = None
        self._routers: dict[str, Any] = {}  # --llm-router file → its one LiteLLM Router
        self._clients: dict[str, ModelClient] = {}
        self._models: dict[str, Model] = {}  # each name resolved once (kind, entry, price)
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        self._futures: dict[tuple[str, str], concurrent.futures.Future[Reply]] = {}
        # Identical requests in flight share one call (small levels can repeat a prompt).
        self._inflight: dict[str, concurrent.futures.Future[Reply]] = {}
        # Per request in flight: whether its askers still need it (None: always).
        self._needs: dict[str, list[Callable[[], bool]] | None] = {}
        self._first_calls: dict[str, asyncio.Event] = {}
        # What LiteLLM said each model accepts, kept beside the cache (warm reruns skip it).
        self._capabilities = CapabilityCache(config.cache_dir)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        # The first failed cache read or write (disk full, read-only, damaged): no call is
        # made after it, not even one already prefetched.
        self.storage_error: str | None = None
        # model → the error that stopped it (retrying cannot help; no further calls).
        self.stopped: dict[str, str] = {}
        self._owner = new_owner()  # the name this evaluator's claims go by
        # Asked before every call: why the run makes no more calls (its budget reached), or
        # None. A pytest run points it at the controller's word (plugin/signals.py).
        self.halt: Callable[[], str | None] | None = None
        # Admits each paid call against a run's budget (budget.Meter), or None.
        self.meter: Meter | None = None

    @property
    def cache(self) -> ResponseStore | None:
        if self._cache is None:
            cfg = self.config
            local = ResponseCache(Path(cfg.cache_dir)) if cfg.cache_dir else None
            if cfg.cache_url:
                shared = RedisStore(cfg.cache_url)
                self._cache = LayeredStore(local, shared) if local is not None else shared
            else:
                self._cache = local
        return self._cache

    def verify(self, models: Sequence[str], *, deep: bool = True) -> None:
        """Before any (paid) call, for the ``models`` that call: the installed litellm (from
        its metadata: a compromised release is refused before it is imported), the cache
        folder and file (``deep``: every page read once), a shared cache reached and written.
        Raises ReasoningError (StorageFailed for the cache) in one line: answers that cannot
        be kept would be paid for twice."""
        if not any(self.model(m).calls_model for m in models):
            return
        check_installed_litellm()
        folder = self.config.cache_dir
        try:
            self.cache  # noqa: B018 - opening the cache is the check
        except (OSError, sqlite3.Error) as exc:
            file = Path(folder or ".") / CACHE_FILE
            if isinstance(exc, sqlite3.DatabaseError) and file.is_file():
                raise StorageFailed(storage_failure(file, exc, "read")) from None
            raise StorageFailed(
                f"cannot use {folder} ({type(exc).__name__}: {exc}); give a writable folder, "
                "or 'off' to run without a cache"
            ) from None
        if deep:
            self.verify_cache()

    def unpriced(self, models: Sequence[str]) -> list[str]:
        """The ``models`` whose calls have no price in dollars: neither LiteLLM's bundled map
        nor their ``--llm-config`` entry (``input_cost_per_token`` and
        ``output_cost_per_token``) prices them. ``reference`` and ``local`` cost nothing."""
        return [model for model in models if self.model(model).unpriced()]

    def price(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """What ``model``'s tokens cost by LiteLLM's price map (None: not priced by name); the
        report's prices (``report.build_report``'s ``prices``)."""
        return self.model(model).price(prompt_tokens, completion_tokens)

    def verify_cache(self) -> None:
        """Before any call: a damaged cache file, or a shared cache that cannot be reached or
        written, raises StorageFailed in one line."""
        if self.cache is not None:
            self.cache.verify()

    @property
    def notices(self) -> dict[str, str]:
        """One-line notices of this evaluator's cache, by kind, shown once each: the shared
        cache lost mid-run, an invalid cached answer asked again, a claim waited on."""
        return dict(self._cache.notices) if self._cache is not None else {}

    # -- model resolution --------------------------------------------------------------------
    def model(self, name: str) -> Model:
        """``name`` resolved once, with the run's --llm-config aliases and router groups: its
        kind (capabilities, client factory) and its price (models/kinds.py)."""
        found = self._models.get(name)
        if found is None:
            found = self._models[name] = resolve(name, self.config.models)
        return found

    def _client(self, model: str) -> ModelClient:
        """The model's client, built once by its kind (models/kinds.py)."""
        client = self._clients.get(model)
        if client is not None:
            return client
        cfg = self.config
        client = self._clients[model] = self.model(model).client(
            ClientContext(
                model,
                entry=cfg.models.get(model),
                api_base=cfg.api_base,
                params=cfg.params,
                timeout_s=cfg.timeout_s,
                attempts=cfg.attempts,
                local_url=cfg.local_url,
                local_identity=cfg.local_identity,
                capabilities=self._capabilities,
                routers=self._routers,
                solve=_reference_reply,
            ),
        )
        return client

    def client(self, model: str) -> ModelClient:
        """The client that answers ``model`` (the batch phase sends its requests through it)."""
        return self._client(model)

    def batch_client(self, model: str) -> LiteLLMClient | None:
        """The client the Batch API phase sends ``model``'s requests through, or None when
        its kind has no Batch API (the capability is the kind's: models/kinds.py)."""
        api = self.model(model).api
        return api.batch_client(self._client(model)) if api.batch else None

    def concurrency(self, model: str) -> int:
        """Calls to ``model`` in flight at once in this process: ``--reasoning-concurrency``,
        under the client's own limit (the embedded server's one slot, a config entry's
        ``max_parallel_requests``)."""
        limit = self.config.concurrency
        own = self._client(model).max_concurrency
        if own:
            limit = min(limit, own)
        return max(1, limit)

    def model_id(self, model: str) -> str:
        """How results rows name ``model`` precisely (alias, model string, endpoint)."""
        return self._client(model).model_id

    def request_for(self, item: Item, model: str, repeat: int = 0) -> ChatRequest:
        client = self._client(model)
        return ChatRequest(
            model=client.name,
            messages=tuple((m["role"], m["content"]) for m in item.messages),
            params=client.params_for(item.style, len(item.answer)),
            api_base=client.api_base,
            identity=client.identity,
            repeat=repeat,
            item=item,
        )

    # -- background loop ---------------------------------------------------------------------
    def _run(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=loop.run_forever, daemon=True, name="pytest-reasoning-calls"
                )
                self._thread.start()
                self._loop = loop
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _not_asked(self, model: str) -> Reply:
        return Reply(
            content=None,
            error=f"not asked: {model}{STOPPED_BY_ERROR}: {self.stopped[model]}",
            error_kind="not_asked",
        )

    async def _call(self, model: str, client: ModelClient, request: ChatRequest) -> Reply:
        sem = self._semaphores.get(model)
        if sem is None:
            sem = self._semaphores[model] = asyncio.Semaphore(self.concurrency(model))
        first = self._first_calls.get(model)
        if first is None:  # this call goes alone; the others wait for its outcome
            first = self._first_calls[model] = asyncio.Event()
            leading = True
        else:
            leading = False
            await first.wait()
        try:
            return await self._ask(model, client, request, sem)
        finally:
            if leading:
                first.set()

    async def _ask(
        self, model: str, client: ModelClient, request: ChatRequest, sem: asyncio.Semaphore
    ) -> Reply:
        """One call under the cache's claim: a prompt another run (or worker) is asking is
        waited for, not paid for twice; the reply is kept the moment it arrives."""
        cache = self.cache
        wait = _POLL_FIRST_S
        while True:
            async with sem:
                if self.storage_error is not None:  # a prefetched call that must not go out
                    return self._not_stored()
                if model in self.stopped:  # stopped while this call queued
                    return self._not_asked(model)
                if self.halted():  # the run's budget was reached while this call queued
                    return self._halted_reply()
                if not self._wanted(request.key):  # its level settled while it queued
                    return Reply(content=None, error=_NOT_NEEDED, error_kind="not_asked")
                if cache is None:
                    return await self._send(model, client, request)
                found = await self._claim(cache, request, client)
                if found is None:  # ours to ask
                    try:
                        reply = await self._send(model, client, request)
                    except BaseException:
                        self._store(cache.release, request.key, self._owner)
                        raise
                    # First thing after the answer arrives; the reply is scored and written
                    # to the results even when it cannot be kept here (the run then stops).
                    kept = reply.error is None and reply.content is not None
                    if not (kept and await self._awrite(cache, "put", request, reply)):
                        # another may try
                        await self._awrite(cache, "release", request.key, self._owner)
                    return reply
            if found is not _CLAIMED:
                return found
            # Another run (or worker) is asking this very prompt: wait for its answer.
            await asyncio.sleep(wait)
            wait = min(wait * 2, _POLL_MAX_S)
            try:
                cached = await cache.aget(request)
            except StorageFailed as exc:
                self._fail(str(exc))
                return self._not_stored()
            if cached is not None:
                return cached

    async def _send(self, model: str, client: ModelClient, request: ChatRequest) -> Reply:
        """The call itself, admitted first by the run's budget (``meter``), which counts its
        cost the moment the reply arrives."""
        meter = self.meter
        if meter is None:
            return self._note_stop(model, await client.acomplete(request))
        ticket = await meter.admit(model)
        if ticket.refused is not None:
            return Reply(content=None, error=f"not asked: {ticket.refused}", error_kind="not_asked")
        reply = None
        try:
            reply = self._note_stop(model, await client.acomplete(request))
        finally:
            meter.done(ticket, reply)
        return reply

    def _wanted(self, key: str) -> bool:
        """Whether some asker of the request still needs it (a sequential level that settled
        does not)."""
        needs = self._needs.get(key)
        return needs is None or any(need() for need in needs)

    def _note_stop(self, model: str, reply: Reply) -> Reply:
        """An error retrying cannot fix stops the model: no further calls to it."""
        if reply.error_kind == "stop":
            self.stopped.setdefault(model, reply.error or "stopped")
        return reply

    async def _claim(
        self, cache: ResponseStore, request: ChatRequest, client: ModelClient
    ) -> Reply | None:
        """None when this evaluator now holds the claim and the answer is still missing; the
        answer when it landed meanwhile; ``_CLAIMED`` when another holds the claim; a
        not-asked reply when the cache failed. A store that can be awaited (Redis) is: its
        round trips never hold up the other calls on this loop."""
        ttl = self._claim_ttl_s() + client.free_wait_s
        try:
            if not await cache.aclaim(request.key, self._owner, ttl):
                return _CLAIMED
            # Answered between our miss and our claim? (Without this re-read, concurrent
            # runs pay twice for prompts whose claim was released in between.)
            cached = await cache.aget(request)
            if cached is not None:
                await cache.arelease(request.key, self._owner)
            return cached
        except StorageFailed as exc:
            self._fail(str(exc))
            return self._not_stored()

    async def _awrite(self, cache: ResponseStore, op: str, *args: Any) -> bool:
        """``put`` or ``release``; False (and the run's storage error set) when it failed."""
        try:
            await (cache.aput(*args) if op == "put" else cache.arelease(*args))
        except StorageFailed as exc:
            self._fail(str(exc))
            return False
        return True

    def _claim_ttl_s(self) -> float:
        """How long a claim outlives a holder that stopped answering: the longest a call can
        take (every attempt timing out, the longest backoff between), plus a minute."""
        cfg = self.config
        attempts = max(1, cfg.attempts)
        return cfg.timeout_s * attempts + RetryPolicy().cap_s * (attempts - 1) + 60.0

    def _store(self, write: Any, *args: Any) -> bool:
        try:
            write(*args)
        except StorageFailed as exc:
            self._fail(str(exc))
            return False
        return True

    def _fail(self, message: str) -> None:
        if self.storage_error is None:
            self.storage_error = message

    def halted(self) -> str | None:
        """Why the run makes no more calls (``halt``: the run's budget reached), or None."""
        return self.halt() if self.halt is not None else None

    def _halted_reply(self) -> Reply:
        return Reply(content=None, error=f"not asked: {self.halted()}", error_kind="not_asked")

    def _not_stored(self) -> Reply:
        """A call not made: its answer could not be kept (the cache failed)."""
        return Reply(content=None, error=f"not asked: {self.storage_error}", error_kind="not_asked")

    # -- public API --------------------------------------------------------------------------
    def submit(
        self,
        item: Item,
        model: str,
        repeat: int = 0,
        *,
        needed: Callable[[], bool] | None = None,
    ) -> concurrent.futures.Future[Reply]:
        """Start answering (cache first); the same pair twice shares one future. ``needed``
        is asked just before the call goes out: False answers ``not asked`` instead (the
        sample's sequential level settled while it waited)."""
        key = (item.id, model)
        fut = self._futures.get(key)
        if fut is not None:
            return fut
        if not self.model(model).calls_model:  # the reference: answered at once, uncached
            fut = concurrent.futures.Future()
            fut.set_result(_now(self._client(model).acomplete(self.request_for(item, model))))
        else:
            fut = self._request(model, self.request_for(item, model, repeat), needed)
        self._futures[key] = fut
        return fut

    def _request(
        self, model: str, request: ChatRequest, needed: Callable[[], bool] | None = None
    ) -> concurrent.futures.Future[Reply]:
        """The reply to one request: shared with an identical one in flight (one call, paid
        once: the others get it as from the cache), else from the cache, else one call (none
        once storage failed or the model was stopped)."""
        shared = self._inflight.get(request.key)
        if shared is not None:
            needs = self._needs.get(request.key)
            if needed is None:
                self._needs[request.key] = None
            elif needs is not None:
                needs.append(needed)
            return _unpaid(shared)
        cached = None
        if self.cache is not None:
            try:  # even after a failed write: what is cached stays free
                cached = self.cache.get(request)
            except StorageFailed as exc:  # a damaged cache: one line, then the run stops
                self._fail(str(exc))
        fut: concurrent.futures.Future[Reply]
        if cached is not None:
            fut = concurrent.futures.Future()
            fut.set_result(cached)
        elif self.storage_error is not None:  # an answer we could not keep: do not pay
            fut = concurrent.futures.Future()
            fut.set_result(self._not_stored())
        elif self.halted():
            fut = concurrent.futures.Future()
            fut.set_result(self._halted_reply())
        elif model in self.stopped:
            fut = concurrent.futures.Future()
            fut.set_result(self._not_asked(model))
        else:
            self._needs[request.key] = None if needed is None else [needed]
            fut = self._run(self._call(model, self._client(model), request))
            self._inflight[request.key] = fut
            fut.add_done_callback(self._forget(request.key))
        return fut

    def complete(
        self,
        model: str,
        messages: Sequence[tuple[str, str]],
        *,
        style: str = "cot",
        answer_chars: int = 0,
        repeat: int = 0,
    ) -> concurrent.futures.Future[Reply]:
        """A chat request that is not an item's (the narrator's chapters and its yes/no
        questions), through the same path as answers: the model's client and parameters
        (``style`` picks the token budget), the cache, shared identical calls, the first
        call alone, no further calls after an error retrying cannot fix. ``repeat`` asks for
        another sample of the same messages (its own cache entry)."""
        if not self.model(model).calls_model:
            raise ReasoningError(f"{model!r} is not a language model: it cannot write text")
        client = self._client(model)
        request = ChatRequest(
            model=client.name,
            messages=tuple(messages),
            params=client.params_for(style, answer_chars),
            api_base=client.api_base,
            identity=client.identity,
            repeat=repeat,
        )
        return self._request(model, request)

    def _forget(self, key: str) -> Any:
        def done(_fut: concurrent.futures.Future[Reply]) -> None:
            self._inflight.pop(key, None)
            self._needs.pop(key, None)

        return done

    def prefetch(self, pairs: Iterable[tuple[Item, str] | tuple[Item, str, int]]) -> None:
        """Submit ``(item, model)`` or ``(item, model, repeat)`` in order: calls start in
        the order given (the semaphore is first come, first served)."""
        for pair in pairs:
            self.submit(*pair)

    def answer(self, item: Item, model: str, repeat: int = 0) -> Outcome:
        """Blocking: the scored outcome for one pair (the reply is dropped from memory)."""
        fut = self.submit(item, model, repeat)
        reply = fut.result()
        self._futures.pop((item.id, model), None)
        outcome = score_reply(
            item,
            model,
            reply,
            repeat=repeat,
            model_id=self.model_id(model),
            lenient=self.config.lenient,
        )
        if outcome.failure_mode == "truncated":  # the limit it was cut at: the remedy names it
            client = self._client(model)
            params = client.params_for(item.style, len(item.answer))
            for name in ("max_completion_tokens", "max_tokens"):
                if isinstance(params.get(name), int):
                    extra = {**outcome.extra, "token_limit": [name, params[name]]}
                    if not client.set_by_user(name):
                        extra["token_limit_default"] = True  # ours: the message says so
                    return dataclasses.replace(outcome, extra=extra)
        return outcome

    def pending(self, item_id: str, model: str) -> bool:
        return (item_id, model) in self._futures

    @property
    def in_flight(self) -> int:
        """Model calls under way now (identical requests share one)."""
        return len(self._inflight)

    def close(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None:

            async def _close_all() -> None:
                for c in self._clients.values():
                    await c.aclose()
                if self._cache is not None:
                    await self._cache.aclose()

            with contextlib.suppress(Exception):  # closing is best effort
                asyncio.run_coroutine_threadsafe(_close_all(), loop).result(timeout=5)
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=5)
        if self._cache is not None:
            with contextlib.suppress(StorageFailed):  # claims expire anyway
                self._cache.forget(self._owner)
            self._cache.close()
