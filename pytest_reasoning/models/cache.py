"""The on-disk response cache: SQLite in WAL mode, one row per request, safe across
processes (xdist workers, concurrent runs) and atomic per entry, so a killed run loses nothing
it was paid for.

Concurrent runs sharing one cache do not pay twice for a prompt: before calling, a run
*claims* the prompt (a row marked in flight, with an expiry); another run that wants the same
prompt waits for the answer instead of calling. A claim whose holder died is taken over (at
once for a dead process on this machine, else when it expires). :class:`ResponseStore` is the
interface the evaluator uses, so another backend (Redis: ``SET NX PX``) can implement the same.

We do not use LiteLLM's cache: its key ignores ``api_base``, it skips requests with more than
four messages, and a hit crashes without fastapi installed.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Protocol

from ..core import Reply
from ..errors import StorageFailed
from .base import ChatRequest

__all__ = ["CACHE_FILE", "ResponseCache", "ResponseStore", "new_owner", "storage_failure"]

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

    - ``get(request)``: the stored reply, or None.
    - ``put(request, reply)``: store a successful reply (errors are never stored).
    - ``claim(key, owner, ttl_s)``: take the claim on a prompt if nobody holds it, its expiry
      has passed, or its holder is known to be dead; True when ``owner`` holds it now. The
      caller then reads again (the answer may have landed between its miss and its claim) and
      calls the model only if it is still missing; a caller that loses waits, reading the
      answer again now and then, and claims again if it is still missing (the holder failed
      or died). ``ttl_s`` must cover the longest call (timeout × attempts plus backoff): a
      holder never renews. Redis: ``SET claim:KEY OWNER NX PX ttl``, then GET the answer.
    - ``release(key, owner)``: drop ``owner``'s claim (its call failed: another may try).
    - ``forget(owner)``: drop every claim ``owner`` still holds, and any expired one (a run
      ends). A claim on an answered prompt is harmless meanwhile, since readers look for the
      answer first; Redis lets them expire and needs no more.
    - ``close()``.

    Every method raises :class:`~pytest_reasoning.errors.StorageFailed` (one line naming the
    store and what to do) for a store it cannot read or write.
    """

    location: str  # how messages name the store

    def get(self, request: ChatRequest) -> Reply | None: ...

    def put(self, request: ChatRequest, reply: Reply) -> None: ...

    def claim(self, key: str, owner: str, ttl_s: float) -> bool: ...

    def release(self, key: str, owner: str) -> None: ...

    def forget(self, owner: str) -> None: ...

    def close(self) -> None: ...


_HOST = socket.gethostname()
# The integrity check at start-up costs about 1 ms per 1,000 cached answers (47 ms for
# 50,000 on the project's machine); past this budget it is abandoned rather than slow a run.
VERIFY_BUDGET_S = 1.0


def _proc(pid: int) -> tuple[str, str] | None:
    """A process's state and start time in clock ticks (Linux ``/proc``: a reused pid is not
    mistaken for the holder, a zombie is dead); None where ``/proc`` cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), fields[19].decode()
    except (OSError, IndexError):
        return None


def _start_time(pid: int) -> str:
    found = _proc(pid)
    return found[1] if found else ""


def new_owner() -> str:
    """A claim holder's name: ``host/pid/start/nonce`` (one per evaluator)."""
    pid = os.getpid()
    return f"{_HOST}/{pid}/{_start_time(pid)}/{uuid.uuid4().hex[:8]}"


def _dead(owner: str) -> bool:
    """True only when ``owner`` is certainly a process of this machine that has ended."""
    host, pid_text, start = [*owner.split("/"), "", "", ""][:3]
    if host != _HOST or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # someone else's process: alive
        pass
    found = _proc(pid)
    if found is None:
        return False
    state, started = found
    return state in ("Z", "X") or (bool(start) and started != start)


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
        self.directory.mkdir(parents=True, exist_ok=True)
        self._connect()  # fail early (and clearly) on an unwritable directory

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
            data = json.loads(row[0])
            data["cached"] = True
            return Reply.from_dict(data)
        except (ValueError, TypeError, KeyError):  # a row no version wrote: ask again
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
            row = conn.execute("SELECT owner FROM claims WHERE key = ?", (key,)).fetchone()
            if row is None or not _dead(row[0]):
                return False
            # Its holder died (killed mid-call): take the claim over unless another did first.
            return bool(
                conn.execute(
                    "UPDATE claims SET owner = ?, expires = ? WHERE key = ? AND owner = ?",
                    (owner, now + ttl_s, key, row[0]),
                ).rowcount
            )
        except (sqlite3.Error, OSError) as exc:
            raise self.failure(exc) from None

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

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
