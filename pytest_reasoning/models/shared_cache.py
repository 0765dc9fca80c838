"""The shared response cache on Redis (``--reasoning-cache redis://host:port/db``), so that
parallel CI jobs on different machines never pay twice for one prompt.

Two :class:`~pytest_reasoning.models.cache.ResponseStore` backends:

- :class:`RedisStore`: answers under ``pytest-reasoning:1:answer:KEY`` (the same request key as
  the SQLite cache, a SHA-256; the value holds what a SQLite row holds: the model string, when,
  and the reply), claims under ``pytest-reasoning:1:claim:KEY`` (``SET NX PX``: the holder's
  name, with an expiry). Sync methods use redis-py's client, and the ``a…`` methods its asyncio
  client, which the evaluator awaits on its own event loop (a round trip to a remote Redis
  never blocks the other calls in flight).
- :class:`LayeredStore`: the local SQLite cache first, Redis behind it. An answer found only in
  Redis is copied into the local layer; a new answer is written to both; claims are taken in
  Redis (they must be seen by every machine). If Redis fails mid-run, the store says so once
  (:attr:`LayeredStore.lost`) and goes on with the local layer alone (its own claims included):
  answers are still kept, only no longer shared.

Every value read is checked as the SQLite cache checks its rows (``cache.read_stored``): a
value no run of ours wrote (wrong types, NaN, larger than a reply can be, a key of another
Redis type) is a miss, named once, asked again and overwritten; in a shared Redis one bad key
never breaks a job.

No API key ever reaches Redis: the request key is a hash, replies are stored as the SQLite
cache stores them, and the Redis password comes from the environment
(``REASONING_REDIS_PASSWORD``), never from the URL (nor its query: ``?password=`` is refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ..core import Reply
from ..errors import InvalidArgument, StorageFailed
from ..files import process_gone
from .base import ChatRequest, error_text
from .cache import MAX_CLAIM_TTL_S, InvalidStored, ResponseCache, StoreNotices, read_stored

if TYPE_CHECKING:
    import redis
    import redis.asyncio

__all__ = [
    "PASSWORD_ENV",
    "PREFIX",
    "LayeredStore",
    "RedisStore",
    "check_redis_url",
    "is_redis_url",
    "shown_url",
]

PREFIX = "pytest-reasoning:1:"
PASSWORD_ENV = "REASONING_REDIS_PASSWORD"
_SCHEMES = ("redis", "rediss", "unix")
# A blip is retried once at once; an outage is reported within seconds, not minutes.
CONNECT_TIMEOUT_S = 3.0
SOCKET_TIMEOUT_S = 10.0

# Compare-and-delete / compare-and-swap: a claim is only ever dropped or taken over by name.
_RELEASE = (
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
)
_TAKEOVER = (
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0"
)
# A lost claim's holder and milliseconds left, in one round trip; a claim with no expiry (set
# by hand, or by anything but a run of ours) or a longer one than any run takes is given the
# caller's, so that every claim ends.
_HOLDER = (
    "local h = redis.call('GET', KEYS[1]) if not h then return nil end "
    "local t = redis.call('PTTL', KEYS[1]) "
    "if t < 0 or t > tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) "
    "t = tonumber(ARGV[1]) end return {h, t}"
)
_MAX_CLAIM_TTL_MS = int(MAX_CLAIM_TTL_S * 1000)


def is_redis_url(value: str) -> bool:
    return value.split("://", 1)[0].lower() in _SCHEMES and "://" in value


def shown_url(url: str) -> str:
    """The URL as messages show it: no password, whatever was given."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = (f"{parts.username}@" if parts.username else "") + host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def check_redis_url(url: str) -> str:
    """A ``redis://``, ``rediss://`` (TLS) or ``unix://`` URL, checked: a host (or a socket
    path), a database number, no password (``REASONING_REDIS_PASSWORD`` holds it). Returns it
    as given; InvalidArgument (one line) otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidArgument(f"{shown_url_safe(url)}: not a Redis URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES:
        raise InvalidArgument(f"{url}: expected redis://HOST:PORT/DB, rediss://… or unix://PATH")
    query = {k.lower() for k, _ in parse_qsl(parts.query, keep_blank_values=True)}
    if parts.password or "password" in query:
        raise InvalidArgument(
            f"{shown_url(url)}: keep the password out of the URL (it would show in logs and "
            f"process lists): set {PASSWORD_ENV} instead"
        )
    if scheme == "unix":
        if not parts.path:
            raise InvalidArgument(f"{url}: expected unix:///path/to/redis.sock")
        return url
    if not parts.hostname:
        raise InvalidArgument(f"{shown_url(url)}: expected a host, as in redis://HOST:PORT/DB")
    db = parts.path.strip("/")
    if db and not db.isdigit():
        raise InvalidArgument(f"{shown_url(url)}: the database is a number (/0, /1, …), got {db!r}")
    if port == 0:
        raise InvalidArgument(f"{shown_url(url)}: port 0 is not a port")
    return url


def shown_url_safe(url: str) -> str:
    try:
        return shown_url(url)
    except ValueError:
        return "the Redis URL"


def _cause(exc: BaseException) -> str:
    text = error_text(str(exc) or type(exc).__name__, limit=200)
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


class RedisStore:
    """Answers and claims in Redis (see the module's docstring); every failure to reach or
    use Redis raises :class:`~pytest_reasoning.errors.StorageFailed` in one line."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.location = shown_url(url)
        self._sync: redis.Redis | None = None
        self._async: redis.asyncio.Redis | None = None
        self._async_loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._held: set[str] = set()  # claims taken by this store (dropped by forget)
        self._notices = StoreNotices(self.location)

    @property
    def notices(self) -> dict[str, str]:
        return self._notices.as_dict()

    # -- clients -------------------------------------------------------------------------------
    def _options(self) -> dict[str, Any]:
        return dict(
            password=os.environ.get(PASSWORD_ENV) or None,
            socket_connect_timeout=CONNECT_TIMEOUT_S,
            socket_timeout=SOCKET_TIMEOUT_S,
            health_check_interval=30,
        )

    def _client(self) -> redis.Redis:
        with self._lock:
            if self._sync is None:
                import redis
                from redis.backoff import NoBackoff
                from redis.retry import Retry

                self._sync = redis.Redis.from_url(
                    self.url, retry=Retry(NoBackoff(), 1), **self._options()
                )
            return self._sync

    def _aclient(self) -> redis.asyncio.Redis:
        """The asyncio client of the running loop (redis-py binds its connections to one)."""
        loop = asyncio.get_running_loop()
        if self._async is None or self._async_loop is not loop:
            import redis.asyncio
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff

            self._async = redis.asyncio.Redis.from_url(
                self.url, retry=Retry(NoBackoff(), 1), **self._options()
            )
            self._async_loop = loop
        return self._async

    def failure(self, exc: BaseException, doing: str = "reach") -> StorageFailed:
        return StorageFailed(f"cannot {doing} the shared cache {self.location}: {_cause(exc)}")

    def _errors(self) -> tuple[type[BaseException], ...]:
        import redis

        return (redis.RedisError, OSError)

    # -- what a key holds ------------------------------------------------------------------------
    @staticmethod
    def answer_key(key: str) -> str:
        return f"{PREFIX}answer:{key}"

    @staticmethod
    def claim_key(key: str) -> str:
        return f"{PREFIX}claim:{key}"

    @staticmethod
    def _encode(request: ChatRequest, reply: Reply) -> str | None:
        if reply.error is not None or reply.content is None:
            return None  # failures are retried next run, never replayed
        data = reply.to_dict()
        data.pop("cached", None)
        return json.dumps({"model": request.model, "created": time.time(), "reply": data})

    def _decode(self, key: str, raw: bytes | str | None) -> Reply | None:
        if raw is None:
            return None
        try:
            return read_stored(raw, field="reply")
        except InvalidStored as exc:  # a miss: asked again, and the value overwritten
            self._notices.invalid_answer(key, str(exc))
            return None

    def _wrong_type(self, key: str, exc: BaseException) -> bool:
        """A key of another Redis type under an answer's name (GET refuses it): invalid, not
        a failure of Redis."""
        if "WRONGTYPE" not in str(exc):
            return False
        self._notices.invalid_answer(key, "not a string value (WRONGTYPE)")
        return True

    # -- the ResponseStore interface (sync) --------------------------------------------------
    def verify(self) -> None:
        """Reached and written before any call: a shared cache that cannot be would have the
        run pay for prompts other jobs are asking (mid-run, a lost Redis is different: the
        run goes on with its local cache, docs/models.md)."""
        try:
            self.ping()
        except StorageFailed as exc:
            raise StorageFailed(
                f"{exc} (start Redis or fix the URL; a folder, or 'off', runs without sharing "
                "answers)"
            ) from None

    def ping(self) -> None:
        """Reach Redis and write to it (a read-only replica would accept reads only)."""
        try:
            client = self._client()
            client.set(f"{PREFIX}ping", "1", px=60_000)
        except self._errors() as exc:
            raise self.failure(exc) from None

    def get(self, request: ChatRequest) -> Reply | None:
        try:
            raw = self._client().get(self.answer_key(request.key))
        except self._errors() as exc:
            if self._wrong_type(request.key, exc):
                return None
            raise self.failure(exc, "read") from None
        return self._decode(request.key, raw)

    def put(self, request: ChatRequest, reply: Reply) -> None:
        value = self._encode(request, reply)
        if value is None:
            return
        try:
            self._client().set(self.answer_key(request.key), value)
        except self._errors() as exc:
            raise self.failure(exc, "write") from None

    @staticmethod
    def _ttl_ms(ttl_s: float) -> int:
        return max(1, int(min(ttl_s, MAX_CLAIM_TTL_S) * 1000))

    def claim(self, key: str, owner: str, ttl_s: float) -> bool:
        name, ttl_ms = self.claim_key(key), self._ttl_ms(ttl_s)
        try:
            client = self._client()
            if client.set(name, owner, nx=True, px=ttl_ms):
                self._held.add(key)
                return True
            found = client.eval(_HOLDER, 1, name, ttl_ms, _MAX_CLAIM_TTL_MS)
            won = self._settle(found, owner)
            if won is None:  # its holder died on this machine: take over, by name
                won = bool(client.eval(_TAKEOVER, 1, name, found[0], owner, ttl_ms))
        except self._errors() as exc:
            raise self.failure(exc, "write") from None
        if won:
            self._held.add(key)
        return won

    def _settle(self, found: Any, owner: str) -> bool | None:
        """From the holder script's answer: True: ours already; False: another's (named in
        the notices), or expired in between (the caller reads again, then claims again);
        None: its holder is dead (take it over)."""
        if not found:
            return False
        holder, left_ms = found
        text = holder.decode(errors="replace") if isinstance(holder, bytes) else str(holder)
        if text == owner:
            return True
        if process_gone(text):
            return None
        self._notices.waiting(text, int(left_ms) / 1000)
        return False

    def holder(self, key: str) -> tuple[str, float] | None:
        try:
            pipe = self._client().pipeline(transaction=False)
            pipe.get(self.claim_key(key))
            pipe.pttl(self.claim_key(key))
            holder, left_ms = pipe.execute()
        except self._errors() as exc:
            raise self.failure(exc, "read") from None
        if holder is None:
            return None
        text = holder.decode(errors="replace") if isinstance(holder, bytes) else str(holder)
        return text, (left_ms / 1000 if left_ms >= 0 else float("inf"))

    def release(self, key: str, owner: str) -> None:
        self._held.discard(key)
        try:
            self._client().eval(_RELEASE, 1, self.claim_key(key), owner)
        except self._errors() as exc:
            raise self.failure(exc, "write") from None

    def forget(self, owner: str) -> None:
        """Drop the claims this store still holds (answered prompts: harmless, but tidy)."""
        held, self._held = list(self._held), set()
        if not held:
            return
        try:
            pipe = self._client().pipeline(transaction=False)
            for key in held:
                pipe.eval(_RELEASE, 1, self.claim_key(key), owner)
            pipe.execute()
        except self._errors() as exc:
            raise self.failure(exc, "write") from None

    def close(self) -> None:
        client, self._sync = self._sync, None
        if client is not None:
            client.close()

    # -- the same, awaited on the evaluator's loop ---------------------------------------------
    async def aget(self, request: ChatRequest) -> Reply | None:
        try:
            raw = await self._aclient().get(self.answer_key(request.key))
        except self._errors() as exc:
            if self._wrong_type(request.key, exc):
                return None
            raise self.failure(exc, "read") from None
        return self._decode(request.key, raw)

    async def aput(self, request: ChatRequest, reply: Reply) -> None:
        value = self._encode(request, reply)
        if value is None:
            return
        try:
            await self._aclient().set(self.answer_key(request.key), value)
        except self._errors() as exc:
            raise self.failure(exc, "write") from None

    async def aclaim(self, key: str, owner: str, ttl_s: float) -> bool:
        name, ttl_ms = self.claim_key(key), self._ttl_ms(ttl_s)
        try:
            client = self._aclient()
            if await client.set(name, owner, nx=True, px=ttl_ms):
                self._held.add(key)
                return True
            ask: Any = client.eval(_HOLDER, 1, name, ttl_ms, _MAX_CLAIM_TTL_MS)
            found = await ask
            won = self._settle(found, owner)
            if won is None:
                script: Any = client.eval(_TAKEOVER, 1, name, found[0], owner, ttl_ms)
                won = bool(await script)
        except self._errors() as exc:
            raise self.failure(exc, "write") from None
        if won:
            self._held.add(key)
        return won

    async def arelease(self, key: str, owner: str) -> None:
        self._held.discard(key)
        try:
            script: Any = self._aclient().eval(_RELEASE, 1, self.claim_key(key), owner)
            await script
        except self._errors() as exc:
            raise self.failure(exc, "write") from None

    async def aclose(self) -> None:
        client, self._async = self._async, None
        self._async_loop = None
        if client is not None:
            await client.aclose()


class LayeredStore:
    """The local SQLite cache first, the shared Redis store behind it (see the module's
    docstring). A failure of the local layer raises as it always did (the run stops); a
    failure of Redis drops it for the rest of the run, once, and records why in :attr:`lost`."""

    def __init__(self, local: ResponseCache, shared: RedisStore) -> None:
        self.local = local
        self.shared: RedisStore | None = shared
        self.location = f"{local.location} + {shared.location}"
        self.lost: str | None = None  # why Redis was dropped mid-run, once
        self.from_shared = 0  # answers found only in Redis (copied into the local layer)
        self._redis = shared  # its notices outlive its loss

    @property
    def notices(self) -> dict[str, str]:
        """Both layers' notices (the local layer's first), and why Redis was lost."""
        found = {**self._redis.notices, **self.local.notices}
        if self.lost:
            found["shared-cache"] = self.lost
        return found

    def holder(self, key: str) -> tuple[str, float] | None:
        if self.shared is not None:
            try:
                return self.shared.holder(key)
            except StorageFailed as exc:
                self._lose(exc)
        return self.local.holder(key)

    def _lose(self, exc: StorageFailed) -> None:
        shared, self.shared = self.shared, None
        if shared is not None and self.lost is None:
            self.lost = (
                f"{str(exc).rstrip('.')}; continuing on the local cache {self.local.location} "
                "alone (answers are kept, no longer shared: other jobs may pay for the same "
                "prompts)"
            )
            with contextlib.suppress(Exception):
                shared.close()

    def _found(self, request: ChatRequest, reply: Reply | None) -> Reply | None:
        if reply is not None:
            self.from_shared += 1
            self.local.put(request, reply)  # the next run here needs no Redis for it
        return reply

    # -- sync -------------------------------------------------------------------------------
    def get(self, request: ChatRequest) -> Reply | None:
        found = self.local.get(request)
        if found is not None or self.shared is None:
            return found
        try:
            found = self.shared.get(request)
        except StorageFailed as exc:
            self._lose(exc)
            return None
        return self._found(request, found)

    def put(self, request: ChatRequest, reply: Reply) -> None:
        self.local.put(request, reply)
        if self.shared is not None:
            try:
                self.shared.put(request, reply)
            except StorageFailed as exc:
                self._lose(exc)

    def claim(self, key: str, owner: str, ttl_s: float) -> bool:
        if self.shared is not None:
            try:
                return self.shared.claim(key, owner, ttl_s)
            except StorageFailed as exc:
                self._lose(exc)
        return self.local.claim(key, owner, ttl_s)

    def release(self, key: str, owner: str) -> None:
        if self.shared is not None:
            try:
                self.shared.release(key, owner)
            except StorageFailed as exc:
                self._lose(exc)
        self.local.release(key, owner)

    def forget(self, owner: str) -> None:
        self.local.forget(owner)
        if self.shared is not None:
            try:
                self.shared.forget(owner)
            except StorageFailed as exc:
                self._lose(exc)

    def verify(self) -> None:
        self.local.verify()
        if self.shared is not None:
            self.shared.verify()

    def close(self) -> None:
        self.local.close()
        if self.shared is not None:
            self.shared.close()

    # -- async ------------------------------------------------------------------------------
    async def aget(self, request: ChatRequest) -> Reply | None:
        found = self.local.get(request)
        if found is not None or self.shared is None:
            return found
        try:
            found = await self.shared.aget(request)
        except StorageFailed as exc:
            self._lose(exc)
            return None
        return self._found(request, found)

    async def aput(self, request: ChatRequest, reply: Reply) -> None:
        self.local.put(request, reply)
        if self.shared is not None:
            try:
                await self.shared.aput(request, reply)
            except StorageFailed as exc:
                self._lose(exc)

    async def aclaim(self, key: str, owner: str, ttl_s: float) -> bool:
        if self.shared is not None:
            try:
                return await self.shared.aclaim(key, owner, ttl_s)
            except StorageFailed as exc:
                self._lose(exc)
        return self.local.claim(key, owner, ttl_s)

    async def arelease(self, key: str, owner: str) -> None:
        if self.shared is not None:
            try:
                await self.shared.arelease(key, owner)
            except StorageFailed as exc:
                self._lose(exc)
        self.local.release(key, owner)

    async def aclose(self) -> None:
        if self.shared is not None:
            await self.shared.aclose()
