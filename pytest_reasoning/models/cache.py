"""The on-disk response cache: SQLite in WAL mode, one row per request, safe across
processes (xdist workers, concurrent runs) and atomic per entry, so a killed run loses nothing
it was paid for.

Concurrent runs sharing one cache do not pay twice for a prompt: before calling, a run
*claims* the prompt (a row marked in flight, with an expiry); another run that wants the same
prompt waits for the answer instead of calling. A claim whose holder died is taken over (at
once for a dead process on this machine, else when it expires); a claim with no expiry we
could have written is given one. :class:`ResponseStore` is the interface the evaluator uses,
so another backend (Redis: ``SET NX PX``) can implement the same.

Every answer read is checked as strictly as a live reply (:func:`read_stored`): one that no
version of ours wrote (a wrong type, NaN, an oversized text) is a miss, named once in
:attr:`ResponseCache.notices`, asked again and overwritten; never fatal.

We do not use LiteLLM's cache: its key ignores ``api_base``, it skips requests with more than
four messages, and a hit crashes without fastapi installed.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Protocol

from ..core import Reply
from ..errors import StorageFailed, clip, quote
from ..files import process_gone, process_name
from .base import MAX_RESPONSE_CHARS, MAX_STORED_REASONING_CHARS, ChatRequest

__all__ = [
    "CACHE_FILE",
    "MAX_CLAIM_TTL_S",
    "MAX_STORED_CHARS",
    "InvalidStored",
    "ResponseCache",
    "ResponseStore",
    "StoreNotices",
    "check_stored",
    "holder_text",
    "new_owner",
    "read_stored",
    "storage_failure",
]

CACHE_FILE = "responses.sqlite3"  # in the cache folder

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    reply TEXT NOT NULL
)
""",
    # Prompts being asked right now, by whom (see new_owner) and until when at most. One
    # b-tree (no rowid): a claim costs one page write.
    """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL
) WITHOUT ROWID
""",
)


class ResponseStore(Protocol):
    """What the evaluator needs from a response cache; a backend implements these six.

    - ``get(request)``: the stored reply, or None (also for a stored value that is not a
      valid answer: checked by :func:`read_stored`, named once in ``notices``).
    - ``put(request, reply)``: store a successful reply (errors are never stored).
    - ``claim(key, owner, ttl_s)``: take the claim on a prompt if nobody holds it, its expiry
      has passed, or its holder is known to be dead; True when ``owner`` holds it now. The
      caller then reads again (the answer may have landed between its miss and its claim) and
      calls the model only if it is still missing; a caller that loses waits, reading the
      answer again now and then, and claims again if it is still missing (the holder failed
      or died). ``ttl_s`` must cover the longest call (timeout × attempts plus backoff): a
      holder never renews; it is cut to MAX_CLAIM_TTL_S, and a claim found without a
      valid expiry (none, not a number, later than that) is given ``ttl_s`` from now, so
      every claim ends. A claim lost to a live holder is named in ``notices`` (whose, how
      long). Redis: ``SET claim:KEY OWNER NX PX ttl``, then GET the answer.
    - ``holder(key)``: who holds the claim and for how many more seconds, or None.
    - ``release(key, owner)``: drop ``owner``'s claim (its call failed: another may try).
    - ``forget(owner)``: drop every claim ``owner`` still holds, and any expired one (a run
      ends). A claim on an answered prompt is harmless meanwhile, since readers look for the
      answer first; Redis lets them expire and needs no more.
    - ``close()``; ``notices``: one-line texts by kind, for the run's summary.
    - ``verify()``: before any call, that the store can be read and written (SQLite: every
      page read once; Redis: reached and written).
    - ``aget``, ``aput``, ``aclaim``, ``arelease``, ``aclose``: the same, awaited on the
      evaluator's event loop (Redis's round trips never hold up other calls; SQLite's local
      reads and writes just run).

    Every method raises :class:`~pytest_reasoning.errors.StorageFailed` (one line naming the
    store and what to do) for a store it cannot read or write.
    """

    location: str  # how messages name the store

    def get(self, request: ChatRequest) -> Reply | None: ...

    def put(self, request: ChatRequest, reply: Reply) -> None: ...

    def claim(self, key: str, owner: str, ttl_s: float) -> bool: ...

    def release(self, key: str, owner: str) -> None: ...

    def forget(self, owner: str) -> None: ...

    def holder(self, key: str) -> tuple[str, float] | None: ...

    def close(self) -> None: ...

    def verify(self) -> None: ...

    @property
    def notices(self) -> dict[str, str]: ...

    async def aget(self, request: ChatRequest) -> Reply | None: ...

    async def aput(self, request: ChatRequest, reply: Reply) -> None: ...

    async def aclaim(self, key: str, owner: str, ttl_s: float) -> bool: ...

    async def arelease(self, key: str, owner: str) -> None: ...

    async def aclose(self) -> None: ...


# The integrity check at start-up costs about 1 ms per 1,000 cached answers (47 ms for
# 50,000 on the project's machine); past this budget it is abandoned rather than slow a run.
VERIFY_BUDGET_S = 1.0
# No claim lasts longer: a claim stored with a later expiry, none (Redis) or one that is not a
# number was not written by a run of ours that is still asking, and is given ours.
MAX_CLAIM_TTL_S = 86_400.0
# The longest stored form of a valid answer: MAX_RESPONSE_CHARS characters of reply and a
# clipped reasoning, each escaped at worst as a surrogate pair (12 bytes), and the other
# fields. Longer is refused unparsed.
MAX_STORED_CHARS = 12 * (MAX_RESPONSE_CHARS + MAX_STORED_REASONING_CHARS) + 65_536
_COUNTS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "reasoning_chars")


def new_owner() -> str:
    """A claim holder's name: ``host/pid/start/nonce`` (one per evaluator)."""
    return f"{process_name()}/{uuid.uuid4().hex[:8]}"


class InvalidStored(ValueError):
    """A stored answer that no version of ours wrote (wrong types, NaN, oversized, not JSON):
    ``str(exc)`` says what is wrong, in one line."""


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def check_stored(data: Any) -> Reply:
    """A stored reply (the JSON object a cache holds), checked as strictly as a live reply:
    text content within MAX_RESPONSE_CHARS, no error, whole token counts, finite non-negative
    numbers, a short finish reason, reasoning text no longer than a clipped one. Raises
    InvalidStored naming the field."""
    if not isinstance(data, dict):
        raise InvalidStored(f"expected a JSON object, got {_type(data)}")
    content = data.get("content")
    if not isinstance(content, str):
        raise InvalidStored(f"content: expected text, got {_type(content)}")
    if len(content) > MAX_RESPONSE_CHARS:
        raise InvalidStored(
            f"content: {len(content):,} characters (a reply is at most {MAX_RESPONSE_CHARS:,})"
        )
    if data.get("error") is not None or data.get("error_kind") is not None:
        raise InvalidStored("error: a failed call is never stored")
    for name in _COUNTS:
        value = data.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**53
        ):
            shown = quote(value, 40)
            raise InvalidStored(f"{name}: expected a whole number >= 0, got {shown}")
    numbers: dict[str, float | None] = {}
    for name, default in (("latency_s", 0.0), ("cost_usd", None)):
        value = data.get(name, default)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            shown = quote(value, 40)
            raise InvalidStored(f"{name}: expected a finite number >= 0, got {shown}")
        numbers[name] = None if value is None else float(value)
    finish = data.get("finish_reason")
    if finish is not None and (not isinstance(finish, str) or len(finish) > 100):
        raise InvalidStored(f"finish_reason: expected a short text, got {quote(finish, 40)}")
    reasoning = data.get("reasoning_text")
    if reasoning is not None and not isinstance(reasoning, str):
        raise InvalidStored(f"reasoning_text: expected text, got {_type(reasoning)}")
    if reasoning is not None and len(reasoning) > MAX_STORED_REASONING_CHARS:
        raise InvalidStored(
            f"reasoning_text: {len(reasoning):,} characters (a clipped reasoning is at most "
            f"{MAX_STORED_REASONING_CHARS:,})"
        )
    return Reply(
        content=content,
        prompt_tokens=data.get("prompt_tokens"),
        completion_tokens=data.get("completion_tokens"),
        latency_s=numbers["latency_s"] or 0.0,
        cached=True,
        finish_reason=finish,
        reasoning_tokens=data.get("reasoning_tokens"),
        reasoning_chars=data.get("reasoning_chars"),
        cost_usd=numbers["cost_usd"],
        reasoning_text=reasoning,
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def read_stored(raw: str | bytes, *, field: str | None = None) -> Reply:
    """A stored answer from its text (the reply object, or the object holding it under
    ``field``): bounded in size before parsing, then :func:`check_stored`."""
    if len(raw) > MAX_STORED_CHARS:
        raise InvalidStored(
            f"{len(raw):,} characters stored (a reply is at most {MAX_RESPONSE_CHARS:,})"
        )
    try:
        # Plain json.loads (no depth walk): check_stored accepts only a flat object, and the
        # scanner's own RecursionError is caught here.
        data = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise InvalidStored("not JSON we read: nested too deep") from None
    except ValueError as exc:  # JSONDecodeError, NaN, 5,000 digits, bytes in no encoding
        raise InvalidStored(f"not JSON: {clip(str(exc), 120)}") from None
    if field is not None:
        if not isinstance(data, dict) or field not in data:
            raise InvalidStored(f"expected a JSON object with {field!r}, got {_type(data)}")
        data = data[field]
    return check_stored(data)


def _in(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, s = divmod(seconds, 60)
    return f"{minutes}m{s:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


def holder_text(owner: str) -> str:
    """A claim holder as people read it: ``pid 4242 on build-7``."""
    host, pid, *_ = [*owner.split("/"), "", ""]
    return f"pid {pid} on {host}" if pid.isdigit() else quote(owner, 80)


class StoreNotices:
    """What a store names once, for the run's summary: the first invalid answer it met (then
    asked again and overwritten) and the first claim of another run it waited on."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.invalid = 0  # invalid answers read (each a miss)
        self._lock = threading.Lock()
        self._texts: dict[str, str] = {}

    def invalid_answer(self, key: str, reason: str) -> None:
        with self._lock:
            self.invalid += 1
            self._texts.setdefault(
                "cache-invalid",
                f"the response cache {self.location} held an answer no run of ours writes "
                f"(key {key[:12]}…: {clip(reason, 160)}): treated as missing, asked again and "
                "overwritten (any others alike)",
            )

    def waiting(self, owner: str, left_s: float) -> None:
        with self._lock:
            self._texts.setdefault(
                "cache-claim",
                f"waiting for answers another run is asking (a prompt claimed by "
                f"{holder_text(owner)} in {self.location}, expiring in {_in(left_s)}): "
                "taken over when the claim expires",
            )

    def as_dict(self) -> dict[str, str]:
        with self._lock:
            return dict(self._texts)


def _damaged(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc)
    return name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or (
        "malformed" in text or "not a database" in text
    )


def storage_failure(
    path: Path, exc: BaseException, doing: str = "write", *, damaged: bool = False
) -> StorageFailed:
    """The one-line error for a failed read or write of the cache file ``path``: a damaged
    file says how to move it aside (its answers stay recoverable); anything else names the
    file and the cause."""
    if damaged or _damaged(exc):
        # The folder, not the file: a stale -wal beside a new file would be replayed into it.
        d, moved = path.parent, f"{path.parent}.damaged"
        return StorageFailed(
            f"the response cache {path} is damaged ({exc}): move its folder aside (mv {d} "
            f"{moved}) and rerun; its readable answers can be salvaged into the new cache "
            "(docs/reliability.md)"
        )
    return StorageFailed(
        f"cannot {doing} the response cache {path}: {exc} (what it holds is intact: "
        "free space or fix the path, then rerun)"
    )


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch the file to WAL once (the mode is stored in the file). Asked first, because
    setting it takes an exclusive lock that SQLite may refuse at once ("database is locked",
    without waiting out the busy timeout) while another connection (a thread, an xdist
    worker, a concurrent run) opens the same fresh file; such a refusal is retried."""
    for attempt in range(200):
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 199:
                raise
            time.sleep(0.05)


class ResponseCache:
    """Get/put successful replies by request key, and claims on prompts in flight (see
    :class:`ResponseStore`). One connection per thread."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.path = self.directory / CACHE_FILE
        self.location = str(self.path)
        self._local = threading.local()
        self._notices = StoreNotices(self.location)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._connect()  # fail early (and clearly) on an unwritable directory

    @property
    def notices(self) -> dict[str, str]:
        return self._notices.as_dict()

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            _use_wal(conn)
            # NORMAL keeps WAL durable across a process kill (only an OS crash could lose
            # the last commits), at a fraction of FULL's fsync cost.
            conn.execute("PRAGMA synchronous=NORMAL")
            for table in _SCHEMA:
                conn.execute(table)
            self._local.conn = conn
        return conn

    def failure(self, exc: BaseException, doing: str = "write") -> StorageFailed:
        return storage_failure(self.path, exc, doing)

    def verify(self, budget_s: float = VERIFY_BUDGET_S) -> None:
        """``PRAGMA quick_check`` (every page read once, no index cross-check): a cache whose
        pages were overwritten is refused before any call, not found out item by item. A
        check that outgrows ``budget_s`` is abandoned (a read that meets damage later still
        stops the run in one line)."""
        conn = self._connect()
        deadline = time.monotonic() + budget_s
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        except sqlite3.OperationalError as exc:
            if str(exc) == "interrupted":
                return
            raise self.failure(exc, "read") from None
        except (sqlite3.Error, OSError) as exc:
            raise self.failure(exc, "read") from None
        finally:
            conn.set_progress_handler(None, 0)
        if rows != [("ok",)]:
            found = sqlite3.DatabaseError(f"quick_check: {rows[0][0]}")
            raise storage_failure(self.path, found, "read", damaged=True)

    def get(self, request: ChatRequest) -> Reply | None:
        try:
            row = (
                self._connect()
                .execute("SELECT reply FROM responses WHERE key = ?", (request.key,))
                .fetchone()
            )
        except (sqlite3.Error, OSError) as exc:
            raise self.failure(exc, "read") from None
        if row is None:
            return None
        try:
            if not isinstance(row[0], str | bytes):
                raise InvalidStored(f"expected JSON text, got {_type(row[0])}")
            return read_stored(row[0])
        except InvalidStored as exc:  # a miss: asked again, and the row overwritten
            self._notices.invalid_answer(request.key, str(exc))
            return None

    def put(self, request: ChatRequest, reply: Reply) -> None:
        if reply.error is not None or reply.content is None:
            return  # failures are retried next run, never replayed
        data = reply.to_dict()
        data.pop("cached", None)
        try:
            self._connect().execute(
                "INSERT OR REPLACE INTO responses (key, model, created, reply) VALUES (?, ?, ?, ?)",
                (request.key, request.model, time.time(), json.dumps(data)),
            )
        except (sqlite3.Error, OSError) as exc:
            raise self.failure(exc) from None

    def claim(self, key: str, owner: str, ttl_s: float) -> bool:
        conn = self._connect()
        now = time.time()
        ttl_s = min(ttl_s, MAX_CLAIM_TTL_S)
        try:
            # One statement, atomic: free, expired or already ours → ours.
            won = conn.execute(
                "INSERT INTO claims (key, owner, expires) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, "
                "expires = excluded.expires WHERE claims.expires < ? OR claims.owner = ?",
                (key, owner, now + ttl_s, now, owner),
            ).rowcount
            if won:
                return True
            row = conn.execute("SELECT owner, expires FROM claims WHERE key = ?", (key,)).fetchone()
            if row is None:
                return False
            holder, expires = str(row[0]), row[1]
            if process_gone(holder):
                # Its holder died (killed mid-call): take the claim over unless another did.
                return bool(
                    conn.execute(
                        "UPDATE claims SET owner = ?, expires = ? WHERE key = ? AND owner = ?",
                        (owner, now + ttl_s, key, row[0]),
                    ).rowcount
                )
            if not isinstance(expires, int | float) or not expires <= now + MAX_CLAIM_TTL_S:
                # No run of ours claims for longer (nor stores text, NULL or infinity there):
                # the claim gets our expiry, and ends.
                expires = now + ttl_s
                conn.execute(
                    "UPDATE claims SET expires = ? WHERE key = ? AND owner = ?",
                    (expires, key, row[0]),
                )
            self._notices.waiting(holder, expires - now)
            return False
        except (sqlite3.Error, OSError) as exc:
            raise self.failure(exc) from None

    def holder(self, key: str) -> tuple[str, float] | None:
        try:
            row = (
                self._connect()
                .execute("SELECT owner, expires FROM claims WHERE key = ?", (key,))
                .fetchone()
            )
        except (sqlite3.Error, OSError) as exc:
            raise self.failure(exc, "read") from None
        if row is None:
            return None
        left = row[1] - time.time() if isinstance(row[1], int | float) else math.inf
        return str(row[0]), left

    def release(self, key: str, owner: str) -> None:
        try:
            self._connect().execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, owner))
        except (sqlite3.Error, OSError) as exc:
            raise self.failure(exc) from None

    def forget(self, owner: str) -> None:
        try:
            self._connect().execute(
                "DELETE FROM claims WHERE owner = ? OR expires < ?", (owner, time.time())
            )
        except (sqlite3.Error, OSError) as exc:
            raise self.failure(exc) from None

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    # The awaited forms (ResponseStore): local SQLite reads and writes take microseconds.
    async def aget(self, request: ChatRequest) -> Reply | None:
        return self.get(request)

    async def aput(self, request: ChatRequest, reply: Reply) -> None:
        self.put(request, reply)

    async def aclaim(self, key: str, owner: str, ttl_s: float) -> bool:
        return self.claim(key, owner, ttl_s)

    async def arelease(self, key: str, owner: str) -> None:
        self.release(key, owner)

    async def aclose(self) -> None:
        """Nothing to close on the loop: ``close`` closes every thread's connection."""

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
