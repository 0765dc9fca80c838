"""The on-disk response cache: SQLite in WAL mode, one row per request, safe across
processes (xdist workers) and atomic per entry, so a killed run loses nothing it was paid for.

We do not use LiteLLM's cache: its key ignores ``api_base``, it skips requests with more than
four messages, and a hit crashes without fastapi installed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path

from ..core import Reply
from .base import ChatRequest

__all__ = ["ResponseCache"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    reply TEXT NOT NULL
)
"""


class ResponseCache:
    """Get/put successful replies by request key. One connection per thread."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.path = self.directory / "responses.sqlite3"
        self._local = threading.local()
        self.directory.mkdir(parents=True, exist_ok=True)
        self._connect()  # fail early (and clearly) on an unwritable directory

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL keeps WAL durable across a process kill (only an OS crash could lose
            # the last commits), at a fraction of FULL's fsync cost.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
            self._local.conn = conn
        return conn

    def get(self, request: ChatRequest) -> Reply | None:
        row = (
            self._connect()
            .execute("SELECT reply FROM responses WHERE key = ?", (request.key,))
            .fetchone()
        )
        if row is None:
            return None
        data = json.loads(row[0])
        data["cached"] = True
        return Reply.from_dict(data)

    def put(self, request: ChatRequest, reply: Reply) -> None:
        if reply.error is not None or reply.content is None:
            return  # failures are retried next run, never replayed
        data = reply.to_dict()
        data.pop("cached", None)
        self._connect().execute(
            "INSERT OR REPLACE INTO responses (key, model, created, reply) VALUES (?, ?, ?, ?)",
            (request.key, request.model, time.time(), json.dumps(data)),
        )

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
