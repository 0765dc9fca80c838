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
import re
import select
import socket
import struct
import threading
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..tasks import hooks
from .batches import HANG, BatchDesk, BatchSettings

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

BEHAVIOURS = {
    "oracle": "the correct answer, found by the tasks' independent solvers from the prompt "
    "(MuSR stories get <<<N/A>>>: their answers need commonsense the prompt leaves out)",
    "flaky-oracle": "like oracle, but the first request for each prompt fails with HTTP 500",
    "always-true": "<<<True>>> whatever the question",
    "echo": "the prompt, verbatim",
    "shallow:N": "like oracle on arithmetic DAGs of depth <= N and zebra grids of <= N houses, "
    "wrong beyond (a model whose difficulty frontier is known)",
    "constant:TEXT": "TEXT, verbatim",
    "fail-500": "HTTP 500 every time",
    "fail-429": "HTTP 429 with Retry-After: 0 every time",
    "garbage": "HTTP 200 with an HTML body",
    "empty": "HTTP 200 with empty content",
    # Reasoning models and their providers' habits (issue 19).
    "o1, o3, o3-mini, o4-mini, gpt-5*": "like OpenAI's reasoning models: HTTP 400 for a "
    "temperature other than 1 and for max_tokens (they take max_completion_tokens), else "
    "the oracle's answer with reasoning tokens in usage",
    "think": "the oracle's answer after a <think>…</think> block that mentions a wrong "
    "<<<…>>> answer (DeepSeek-R1, Qwen3 without a reasoning parser)",
    "think-noopen": "as think, without the opening tag (R1's chat template opens the block "
    "in the prompt)",
    "think-unclosed": "an unclosed <think> block that mentions the right <<<…>>> answer, "
    "finish_reason stop",
    "truncated": "the oracle's answer, then more text, cut off: finish_reason length",
    "loop": "one line repeated until cut off, finish_reason length (a small model decoding "
    "greedily: SmolLM2-135M's 'The answer is 1.' until its token limit)",
    "reasoning-content": "the oracle's answer, its reasoning in message.reasoning_content "
    "(vLLM's reasoning parser, DeepSeek's API; the server's `reasoning` text when set), "
    "reasoning tokens in usage",
    "boxed": "the oracle's answer as \\boxed{…} (strict extraction finds nothing)",
    "bad-key": "HTTP 401 whose message echoes the request's key after 200 characters",
    "refuse:TEXT": "HTTP 400 whose error message is TEXT percent-decoded (%1B is an escape): "
    "a hostile endpoint's error body",
    "coin": "the oracle's answer or <<<N/A>>>, at random (the server's seeded RNG): a model "
    "sampled at temperature 1, for repeats",
    "right:K/N": "the oracle's answer to the first K of every N requests for a prompt, "
    "<<<N/A>>> to the rest: with repeats N, every item right on K of them (a model that "
    "lost consistency, whatever the order the repeats arrive in)",
    # Hostile replies (docs/reliability.md): text a careless or malicious endpoint could send.
    "surrogate": 'like oracle, followed by a lone surrogate (the valid JSON string "\\ud800"), '
    "which no UTF-8 file, XML report or xdist channel can carry as is",
    "long:N": "like oracle, after N characters of padding (a long but allowed reply)",
    "hostile:K:PATH": "answer K of hostile_answers(PATH): Python code (for eval, for sympy's "
    "parse_expr, inside a list literal, ...) that would write PATH if a scorer ran it, in "
    "<answer> tags and in <<<...>>>",
    # A narrator for `pytest-reasoning narrate` (issue 23): canned chapters from the facts
    # its prompt lists, and honest answers to the fact-recall questions.
    "narrator": "each chapter states every fact its prompt lists, one sentence each; a "
    "fact-recall question is answered yes exactly when one sentence of the chapter holds "
    "every content word of the fact",
    "narrator-miss": "as narrator, but a chapter's first draft leaves its last fact out (the "
    "retry, which names the failure, states it)",
    "narrator-leak": "as narrator, but every draft also uses the first banned word its prompt "
    "lists",
    "narrator-stranger": "as narrator, but every draft also names a stranger (Zebulon Quimby)",
}
_NARRATORS = ("narrator", "narrator-miss", "narrator-leak", "narrator-stranger")
# OpenAI's reasoning models, by name (what LiteLLM sends for openai/o3-mini or openai/gpt-5).
_OPENAI_REASONING = re.compile(r"^(o[1-9](-mini|-pro)?|gpt-5.*)$")
_DELIMITED = re.compile(r"<<<(.*?)>>>", re.DOTALL)
_REASONING_TOKENS = 64
_REASONING_KINDS = (
    "think",
    "think-noopen",
    "think-unclosed",
    "truncated",
    "reasoning-content",
    "boxed",
)

FAULT_KINDS = ("429", "500", "503", "html", "empty", "truncated")
# Opt-in, slower kinds: a reset connection, a 429 asking for a 1 s wait, a reply that hangs
# for ``hang_s`` (past a client's timeout), and a 10 MB reply.
EXTRA_FAULTS = ("reset", "429-wait", "hang", "huge")
ALL_FAULTS = FAULT_KINDS + EXTRA_FAULTS


def hostile_answers(path: str) -> list[str]:
    """Answers that are code writing ``path`` (with an API key, as the attack in issue 44):
    for ``eval``, inside a list literal (what ``binary_matrix`` evaluates), through ``exec``
    of a string, through a lambda, and through sympy's namespace (``parse_expr`` resolves
    ``Symbol`` there; its attributes lead to ``__import__``)."""
    p = repr(path)
    key = "__import__('os').environ.get('OPENAI_API_KEY', 'no key')"
    return [
        f"__import__('pathlib').Path({p}).write_text({key})",
        f"[[__import__('pathlib').Path({p}).write_text('x')]]",
        f"exec(\"open({p}, 'w').write('x')\")",
        f"(lambda: open({p}, 'w').write('x'))()",
        f"Symbol('x').__class__.__init__.__globals__['__builtins__']['open']({p}, 'w')",
    ]


def oracle_answer(prompt: str) -> str:
    """Solve a prompt of any task whose family can answer from the text alone; ``<<<N/A>>>``
    when none can. The registry says which task a prompt belongs to (the ``locate`` hook)."""
    return shallow_answer(prompt, None)


def shallow_answer(prompt: str, limit: int | None) -> str:
    """Right up to a size (the ``text_answer`` hook's ``max_size``): arithmetic DAGs of depth
    <= limit, zebra grids of <= limit houses; other tasks as the oracle."""
    from ..registry import task_for_prompt

    task = task_for_prompt(prompt)
    answer = hooks.text_answer(task, prompt, max_size=limit) if task is not None else None
    return "<<<N/A>>>" if answer is None else answer


def narrator_reply(behaviour: str, prompt: str) -> str:
    """A narrator's reply to a chapter prompt or a fact-recall question (``narrator*``)."""
    from ..narrate.prompts import BANNED_MARK, FACTS_MARK, JUDGE_MARK, REJECTED_MARK

    if prompt.startswith(JUDGE_MARK):
        fact = prompt.split("\nFact: ", 1)[1].split("\n", 1)[0]
        chapter = prompt.split("\n<<<\n", 1)[1].rsplit("\n>>>", 1)[0].lower()
        words = [w for w in re.findall(r"[a-z0-9']+", fact.lower()) if len(w) > 3]
        said = re.split(r"(?<=[.!?])\s+", chapter)
        return "Yes." if any(all(w in s for w in words) for s in said) else "No."
    lines = prompt.split("\n")
    start = lines.index(FACTS_MARK) + 1 if FACTS_MARK in lines else len(lines)
    facts = []
    for line in lines[start:]:
        if not line.startswith("- "):
            break
        facts.append(line[2:].rstrip("."))
    if behaviour == "narrator-miss" and REJECTED_MARK not in prompt:
        facts = facts[:-1]
    told = [f"{f}." for f in facts] + ["The afternoon went on quietly."]
    if behaviour == "narrator-leak":
        banned = next((ln for ln in lines if ln.startswith(BANNED_MARK)), "")
        word = banned.removeprefix(BANNED_MARK).split(",")[0].strip() or "answer"
        told.append(f"Everyone kept coming back to the {word}.")
    elif behaviour == "narrator-stranger":
        told.append("Zebulon Quimby dropped by for a while.")
    return " ".join(told)


def drifted(prompt: str, share: float) -> bool:
    """Whether the server's ``drift`` setting changes the oracle's answer to ``prompt``: the
    prompts whose SHA-256 falls in the first ``share`` of its range (the same prompts every
    run: a model name that now serves another model, for ``--reasoning-drift``)."""
    if share <= 0:
        return False
    return int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) < share * 2**32


# What a chat request gets: (HTTP status, a JSON object or raw HTML bytes, extra headers).
ChatReply = tuple[int, Any, dict[str, str]]


def chat_reply(
    model: str,
    prompt: str,
    body: dict[str, Any],
    *,
    bearer: str = "",
    heads: bool = True,
    first: bool = False,
    asked: int = 0,
    drift: float = 0.0,
    reasoning: str | None = None,
) -> ChatReply:
    """The behaviour ``model`` names (``BEHAVIOURS``), answering ``prompt``: shared by the
    chat endpoint and the batch runner (``testing/batches.py``). ``heads`` is the coin's
    toss; ``first`` says this prompt was never asked before (``flaky-oracle``); ``asked``,
    how many times it was asked before (``right:K/N``); ``drift``, the server's share of
    prompts whose oracle answer changed (:func:`drifted`); ``reasoning``, the text
    ``reasoning-content`` sends (None: a line of its own)."""
    if model == "fail-500":
        return 500, {"error": {"message": "injected failure", "type": "server_error"}}, {}
    if model == "fail-429":
        return 429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"}
    if model == "garbage":
        return 200, b"<html><body>Bad gateway</body></html>", {}
    if model == "flaky-oracle" and first:
        return 500, {"error": {"message": "flaky first attempt"}}, {}
    if model == "bad-key":
        message = (
            "Incorrect API key provided. You can find your API key in your account settings; "
            "keys are rotated every 90 days and a revoked key stops working at once. Check the "
            f"environment of the process that sent this request. You passed: {bearer}."
        )
        error = {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}
        return 401, {"error": error}, {}
    if model.startswith("refuse:"):
        message = urllib.parse.unquote(model.split(":", 1)[1])
        return 400, {"error": {"message": message, "type": "invalid_request_error"}}, {}
    if _OPENAI_REASONING.match(model):
        return _reasoning_model(model, prompt, body)
    if model in _REASONING_KINDS:
        return 200, _reasoning_habit(model, prompt, reasoning), {}
    if model in ("oracle", "flaky-oracle"):
        content = "<<<N/A>>>" if drifted(prompt, drift) else oracle_answer(prompt)
    elif model.startswith("shallow:"):
        content = shallow_answer(prompt, int(model.split(":", 1)[1]))
    elif model == "always-true":
        content = "<<<True>>>"
    elif model == "coin":
        content = oracle_answer(prompt) if heads else "<<<N/A>>>"
    elif model.startswith("right:"):
        k, _, every = model.split(":", 1)[1].partition("/")
        content = oracle_answer(prompt) if asked % int(every) < int(k) else "<<<N/A>>>"
    elif model == "echo":
        content = prompt
    elif model in _NARRATORS:
        content = narrator_reply(model, prompt)
    elif model.startswith("constant:"):
        content = model.split(":", 1)[1]
    elif model == "empty":
        content = ""
    elif model == "loop":
        return 200, completion(model, prompt, "The answer is 1.\n\n" * 16, "length"), {}
    elif model == "surrogate":
        content = oracle_answer(prompt) + " \ud800"
    elif model.startswith("hostile:"):
        index, path = model.split(":", 2)[1:]
        answer = hostile_answers(path)[int(index)]
        content = f"<answer>{answer}</answer> <<<{answer}>>>"
    elif model.startswith("long:"):
        content = "x" * int(model.split(":", 1)[1]) + " " + oracle_answer(prompt)
    else:
        return 404, {"error": {"message": f"unknown model {model}"}}, {}
    return 200, completion(model, prompt, content), {}


def _reasoning_model(model: str, prompt: str, body: dict[str, Any]) -> ChatReply:
    """OpenAI's o-series and gpt-5: what they refuse, and reasoning tokens in usage."""
    if body.get("temperature", 1) != 1:
        return _bad_request(
            "temperature",
            f"Unsupported value: 'temperature' does not support {body['temperature']} with "
            "this model. Only the default (1) value is supported.",
        )
    if "max_tokens" in body:
        return _bad_request(
            "max_tokens",
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
        )
    return 200, completion(model, prompt, oracle_answer(prompt), reasoning_tokens=128), {}


def _bad_request(param: str, message: str) -> ChatReply:
    error = {"message": message, "type": "invalid_request_error", "param": param}
    return 400, {"error": {**error, "code": "unsupported_parameter"}}, {}


def _reasoning_habit(model: str, prompt: str, reasoning: str | None) -> dict[str, Any]:
    right = oracle_answer(prompt)
    if model == "think":
        content = f"<think>A first guess: <<<-1>>>. No, work it out.</think>\n\n{right}"
    elif model == "think-noopen":
        content = f"A first guess: <<<-1>>>. No, work it out.</think>\n\n{right}"
    elif model == "think-unclosed":
        content = f"<think>Working it out, I would say {right} but let me check again"
    elif model == "truncated":
        return completion(model, prompt, f"{right} And to double-check, ", "length")
    elif model == "reasoning-content":
        return completion(
            model,
            prompt,
            right,
            reasoning="Worked out step by step." if reasoning is None else reasoning,
            reasoning_tokens=_REASONING_TOKENS,
        )
    else:  # boxed
        inner = _DELIMITED.findall(right)
        content = f"So the result is \\boxed{{{inner[-1] if inner else right}}}."
    return completion(model, prompt, content)


def completion(
    model: str,
    prompt: str,
    content: str,
    finish_reason: str = "stop",
    *,
    reasoning: str | None = None,
    reasoning_tokens: int | None = None,
) -> dict[str, Any]:
    """A chat.completion object (usage counted in words, like a tokenizer would roughly)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    tokens = len(content.split()) + (reasoning_tokens or 0)
    usage: dict[str, Any] = {
        "prompt_tokens": len(prompt.split()),
        "completion_tokens": tokens,
        "total_tokens": len(prompt.split()) + tokens,
    }
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
        "usage": usage,
    }


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
