"""A small OpenAI-compatible HTTP server for tests and benchmarks, loopback only.

The model name picks the behaviour (see ``BEHAVIOURS``); server-wide latency, random faults
(seeded), ``drift`` (the oracle's answers to a share of prompts changed, ``drifted``) and
``reasoning`` (the text ``reasoning-content`` sends) can be set at start or changed through
``POST /control``. ``GET /stats`` counts
requests, so a test can prove that a warm rerun made zero HTTP requests.

It also speaks OpenAI's Files and Batch API (``batches.py``, with its own faults): a batch's
lines are answered by the same behaviours, but they are not chat requests and are counted
apart, in ``stats()["batch"]``.

Run standalone: ``python -m pytest_reasoning.testing.server --port 8765 --latency 0.05``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import select
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .batches import HANG, BatchDesk, BatchSettings
from .replies import (
    BEHAVIOURS,
    chat_reply,
    completion,
    drifted,
    hostile_answers,
    narrator_reply,
    oracle_answer,
)

__all__ = [
    "ALL_FAULTS",
    "BEHAVIOURS",
    "EXTRA_FAULTS",
    "FAULT_KINDS",
    "FakeOpenAIServer",
    "drifted",
    "hostile_answers",
    "key_digest",
    "narrator_reply",
    "oracle_answer",
]

FAULT_KINDS = ("429", "500", "503", "html", "empty", "truncated")
# Opt-in, slower kinds: a reset connection, a 429 asking for a 1 s wait, a reply that hangs
# for ``hang_s`` (past a client's timeout), and a 10 MB reply.
EXTRA_FAULTS = ("reset", "429-wait", "hang", "huge")
ALL_FAULTS = FAULT_KINDS + EXTRA_FAULTS


@dataclass
class _State:
    latency_s: float = 0.0
    fault_rate: float = 0.0
    fault_kinds: tuple[str, ...] = FAULT_KINDS
    rng: random.Random = field(default_factory=random.Random)
    requests: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    seen: set[str] = field(default_factory=set)
    asked: Counter[str] = field(default_factory=Counter)  # requests per (model, prompt)
    hang_s: float = 3.0
    drift: float = 0.0  # share of prompts whose oracle answer changed (``drifted``)
    reasoning: str | None = None  # what ``reasoning-content`` sends as reasoning_content
    last_at: dict[str, float] = field(default_factory=dict)  # per prompt: last request time
    gaps: list[float] = field(default_factory=list)  # seconds between a prompt's requests
    hangs: list[dict[str, Any]] = field(default_factory=list)  # per "hang" fault: client_left
    # Per model, the SHA-256 prefixes of the bearer keys it was sent (never the keys).
    keys: dict[str, set[str]] = field(default_factory=dict)
    # The prompts in the order they arrived (SHA-256 prefixes), to check answer order.
    order: list[str] = field(default_factory=list)
    first_at: float | None = None  # time.monotonic() of the first chat request
    active: int = 0  # chat requests being answered now (counted through the latency)
    peak: int = 0  # the most at once since the last reset
    lock: threading.Lock = field(default_factory=threading.Lock)
    # The Files and Batch API (testing/batches.py): its lines answer through chat_reply.
    desk: BatchDesk = field(default_factory=lambda: BatchDesk(chat_reply))


def _stats(st: _State) -> dict[str, Any]:
    with st.lock:
        return {
            "requests": dict(st.requests),
            "total": sum(st.requests.values()),
            "faults": dict(st.faults),
            "gaps": [round(g, 3) for g in st.gaps],
            "hangs": list(st.hangs),
            "keys": {m: sorted(k) for m, k in st.keys.items()},
            "order": list(st.order),
            "peak_in_flight": st.peak,
            "batch": st.desk.stats(),
        }


def key_digest(key: str) -> str:
    """How ``stats()["keys"]`` names a key: the first 12 hex digits of its SHA-256."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes: with Nagle's algorithm and the client's
    # delayed ACK, every keep-alive reply waited ~40 ms (the server topped out near 165
    # requests/s at 50 ms latency and measured itself, not the client).
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(
        self,
        status: int,
        body: bytes,
        ctype: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def _batch_api(self, method: str, raw: bytes = b"") -> bool:
        """A Files or Batch API request, answered; False for any other path."""
        bearer = str(self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        desk = self.server.state.desk
        found = desk.handle(method, self.path, self.headers, raw, bearer)
        if found is None:
            return False
        if found == HANG:  # a lost answer: held until the client gives up
            if not self._client_left_within(desk.settings.hang_s):
                self._json(502, {"error": {"message": "Bad gateway (an answer held back)"}})
            return True
        status, body, ctype = found
        self._send(status, body, ctype)
        return True

    def do_GET(self) -> None:
        st = self.server.state
        if self._batch_api("GET"):
            return
        if self.path.rstrip("/") == "/stats":
            self._json(200, _stats(st))
        elif self.path.rstrip("/").endswith("/models"):
            self._json(
                200,
                {
                    "object": "list",
                    "data": [{"id": name, "object": "model"} for name in BEHAVIOURS],
                },
            )
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        st = self.server.state
        if self.path.rstrip("/") == "/control":
            cfg = json.loads(raw or b"{}")
            with st.lock:
                for name in ("latency_s", "fault_rate", "hang_s", "drift"):
                    if name in cfg:
                        setattr(st, name, float(cfg[name]))
                if "fault_kinds" in cfg:
                    st.fault_kinds = tuple(cfg["fault_kinds"])
                if "reasoning" in cfg:
                    st.reasoning = None if cfg["reasoning"] is None else str(cfg["reasoning"])
                if cfg.get("reset"):
                    st.requests.clear()
                    st.faults.clear()
                    st.seen.clear()
                    st.asked.clear()
                    st.gaps.clear()
                    st.last_at.clear()
                    st.hangs.clear()
                    st.keys.clear()
                    st.order.clear()
                    st.peak = 0
            st.desk.control(cfg)
            self._json(200, {"ok": True})
            return
        if self._batch_api("POST", raw):
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": "not found"}})
            return
        body = json.loads(raw or b"{}")
        model = str(body.get("model", ""))
        messages = body.get("messages") or []
        prompt = str(messages[-1].get("content", "")) if messages else ""
        bearer = str(self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        with st.lock:
            st.requests[model] += 1
            if bearer:
                st.keys.setdefault(model, set()).add(key_digest(bearer))
            st.order.append(key_digest(prompt))
            if st.first_at is None:
                st.first_at = time.monotonic()
            heads = st.rng.random() < 0.5 if model == "coin" else True
            fault = st.rng.choice(st.fault_kinds) if st.rng.random() < st.fault_rate else None
            if fault:
                st.faults[fault] += 1
            key = hashlib.sha256(f"{model}\x00{prompt}".encode()).hexdigest()
            first_time = key not in st.seen
            st.seen.add(key)
            asked = st.asked[key]
            st.asked[key] += 1
            now = time.monotonic()
            if key in st.last_at:
                st.gaps.append(now - st.last_at[key])
            st.last_at[key] = now
            latency, drift, reasoning = st.latency_s, st.drift, st.reasoning
            st.active += 1
            st.peak = max(st.peak, st.active)
        try:
            if latency:
                time.sleep(latency)
        finally:
            with st.lock:
                st.active -= 1
        if fault and self._fault(fault):
            return
        self._reply(
            *chat_reply(
                model,
                prompt,
                body,
                bearer=bearer,
                heads=heads,
                first=first_time,
                asked=asked,
                drift=drift,
                reasoning=reasoning,
            )
        )

    def _reply(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        if isinstance(payload, bytes):  # not JSON: the "garbage" behaviour's HTML page
            self._send(status, payload, "text/html", headers)
        else:
            self._json(status, payload, headers)

    def _fault(self, kind: str) -> bool:
        if kind == "429":
            self._json(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"})
        elif kind in ("500", "503"):
            self._json(int(kind), {"error": {"message": f"injected {kind}"}})
        elif kind == "html":
            self._send(200, b"<html>oops</html>", "text/html")
        elif kind == "empty":
            self._json(200, completion("fault", "", ""))
        elif kind == "truncated":
            self._send(200, b'{"id": "x", "choices": [{"mess')
        elif kind == "429-wait":
            self._json(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})
        elif kind == "reset":  # RST instead of a reply: linger 0, then close
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
        elif kind == "hang":
            if self._client_left_within(self.server.state.hang_s):
                return True
            self._json(200, completion("fault", "", "late"))
        elif kind == "huge":
            self._json(200, completion("fault", "", "x" * 10_000_000))
        else:
            return False
        return True

    def _client_left_within(self, seconds: float) -> bool:
        """Hold the reply for ``seconds``, watching the connection: True as soon as the client
        closes it (its own timeout fired). Each hang is recorded in ``stats()["hangs"]``, so a
        test checks the client's timeout, not the wall clock."""
        st = self.server.state
        started = time.monotonic()
        left = False
        while not left and time.monotonic() - started < seconds:
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable:
                try:
                    left = not self.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    left = True
        with st.lock:
            st.hangs.append({"client_left": left, "held_s": round(time.monotonic() - started, 3)})
        if left:
            self.close_connection = True
        return left


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State


class FakeOpenAIServer:
    """Start on 127.0.0.1 (ephemeral port by default) in a background thread."""

    def __init__(
        self,
        *,
        port: int = 0,
        latency_s: float = 0.0,
        fault_rate: float = 0.0,
        fault_kinds: tuple[str, ...] = FAULT_KINDS,
        seed: int = 0,
        batch: BatchSettings | None = None,
        drift: float = 0.0,
    ) -> None:
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.state = _State(
            latency_s=latency_s,
            fault_rate=fault_rate,
            fault_kinds=fault_kinds,
            drift=drift,
            rng=random.Random(seed),
            desk=BatchDesk(chat_reply, batch, seed),
        )
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def stats(self) -> dict[str, Any]:
        """Requests per model, faults injected per kind, and the seconds between successive
        requests for the same prompt (retries: how long the client waited)."""
        return _stats(self._server.state)

    @property
    def first_request_at(self) -> float | None:
        """``time.monotonic()`` when the first chat request arrived (benchmarks time from it)."""
        return self._server.state.first_at

    def configure(self, **cfg: Any) -> None:
        st = self._server.state
        with st.lock:
            for k, v in cfg.items():
                setattr(st, k, v)

    def control(self, **cfg: Any) -> None:
        """What ``POST /control`` does (the batch faults too: see ``testing/batches.py``)."""
        st = self._server.state
        st.desk.control(cfg)
        self.configure(**{k: v for k, v in cfg.items() if hasattr(st, k)})

    def close(self) -> None:
        self._server.state.desk.close()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--fault-rate", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--drift", type=float, default=0.0, help="share of prompts whose oracle answer changed"
    )
    ap.add_argument("--batch-line-s", type=float, default=0.0, help="seconds per batch line")
    ap.add_argument("--no-batches", action="store_true", help="no Files or Batch API (404)")
    args = ap.parse_args()
    srv = FakeOpenAIServer(
        port=args.port,
        latency_s=args.latency,
        fault_rate=args.fault_rate,
        seed=args.seed,
        batch=BatchSettings(enabled=not args.no_batches, line_s=args.batch_line_s),
        drift=args.drift,
    )
    print(f"listening on {srv.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        srv.close()


if __name__ == "__main__":
    main()
