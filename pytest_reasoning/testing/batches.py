"""OpenAI's Files and Batch API for the test server (``server.py``): upload a JSONL input file,
create a batch, retrieve it, cancel it, read its output and error files.

A batch runs on a thread of its own: ``validating`` → ``in_progress`` (one line after
another, each answered by the behaviour its model names, as a chat request would be, but not
counted as one) → ``completed``, with an output file and an error file in OpenAI's format.
Faults, through ``POST /control`` or ``FakeOpenAIServer(batch=...)``:

- ``batch_expire_after: N``: the next batch created expires after answering N lines (status
  ``expired``; the lines not run go to its error file as ``batch_expired``);
- ``batch_fail_lines: N``: the next N lines run fail with HTTP 500 (in the error file);
- ``batch_line_s``: seconds per line (slow batches, for polling and progress);
- ``batch_hold: true``: batches stay ``in_progress`` and run no line until it is set false
  (a batch that never completes; a run killed while it waits);
- ``batch_reject: true``: the next batch created fails validation as a whole (status
  ``failed``, OpenAI's "Enqueued token limit reached");
- ``batch_lost_creates: N``: the next N batches are created, then their answer is lost: HTTP
  502 (a gateway that dropped it), or with ``batch_lost_as: "hang"`` no answer until the
  client gives up (at most ``batch_hang_s``, default 30 s; recorded in ``stats()["hangs"]``);
- ``batch_create_fail: N``: the next N creates answer HTTP 502 and create nothing (a gateway
  that failed before the API);
- ``batch_list_fail: N``: the next N ``GET /batches`` (the list) answer HTTP 502;
- ``batches: false``: no Files or Batch API at all (HTTP 404, like a server without one);
- ``batch_text: TEXT``: what a hostile endpoint writes: the ids of the batches created end
  in TEXT, and a rejected batch's message and failed lines' messages are TEXT.

``GET /batches`` lists the batches newest first, with their ``metadata`` (``limit``,
``after``), as OpenAI's list does. ``stats()["batch"]`` counts the files uploaded, the batches
created (with their line counts), the lines run (each a request the endpoint received, billed
or failed), the tokens billed (the usage of the lines answered) and the list calls.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import itertools
import json
import random
import re
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HANG", "BatchDesk", "BatchSettings"]

# (model, prompt, body, bearer, heads, first) → (status, JSON object or bytes, headers)
Answer = Callable[..., tuple[int, Any, dict[str, str]]]
# What the handler sends: status, body, content type.
Response = tuple[int, bytes, str]

_FILES = re.compile(r"/files(?:/([^/]+)(/content)?)?$")
_BATCHES = re.compile(r"/batches(?:/([^/]+)(/cancel)?)?$")
_WINDOW_S = 24 * 3600
# The response that is no response: the handler holds the connection until the client gives up
# (``hang_s``), then answers 502 if it is still there.
HANG: Response = (0, b"", "")


@dataclass
class BatchSettings:
    """The batch faults (see the module's docstring)."""

    enabled: bool = True
    expire_after: int | None = None  # one-shot: the next batch created
    fail_lines: int = 0  # the next N lines run, over all batches
    line_s: float = 0.0
    hold: bool = False
    reject: bool = False  # one-shot: the next batch created
    lost_creates: int = 0  # the next N batches created lose their answer
    lost_as: str = "502"  # or "hang"
    hang_s: float = 30.0
    create_fail: int = 0  # the next N creates answer 502, creating nothing
    list_fail: int = 0  # the next N list calls answer 502
    text: str = ""  # in batch ids and as the messages of rejections and failed lines

    def update(self, cfg: dict[str, Any]) -> None:
        if "batches" in cfg:
            self.enabled = bool(cfg["batches"])
        if "batch_expire_after" in cfg:
            value = cfg["batch_expire_after"]
            self.expire_after = None if value is None else int(value)
        if "batch_fail_lines" in cfg:
            self.fail_lines = int(cfg["batch_fail_lines"])
        if "batch_line_s" in cfg:
            self.line_s = float(cfg["batch_line_s"])
        if "batch_hold" in cfg:
            self.hold = bool(cfg["batch_hold"])
        if "batch_reject" in cfg:
            self.reject = bool(cfg["batch_reject"])
        if "batch_text" in cfg:
            self.text = str(cfg["batch_text"] or "")
        if "batch_lost_creates" in cfg:
            self.lost_creates = int(cfg["batch_lost_creates"])
        if "batch_lost_as" in cfg:
            if cfg["batch_lost_as"] not in ("502", "hang"):
                raise ValueError(f"batch_lost_as: expected '502' or 'hang': {cfg['batch_lost_as']}")
            self.lost_as = str(cfg["batch_lost_as"])
        if "batch_hang_s" in cfg:
            self.hang_s = float(cfg["batch_hang_s"])
        if "batch_create_fail" in cfg:
            self.create_fail = int(cfg["batch_create_fail"])
        if "batch_list_fail" in cfg:
            self.list_fail = int(cfg["batch_list_fail"])


@dataclass
class _Batch:
    obj: dict[str, Any]  # the batch object as the API returns it
    lines: list[dict[str, Any]]
    bearer: str
    expire_after: int | None
    cancel: threading.Event = field(default_factory=threading.Event)


class BatchDesk:
    """The files and batches of one server; thread-safe."""

    def __init__(self, answer: Answer, settings: BatchSettings | None = None, seed: int = 0):
        self.answer = answer
        self.settings = settings or BatchSettings()
        self.files: dict[str, dict[str, Any]] = {}
        self.contents: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}
        self.counts = dict.fromkeys(
            ("files", "created", "lines", "cancelled", "tokens", "listed"), 0
        )
        self.sizes: list[int] = []  # lines of each batch created, in order
        self.seen: set[str] = set()  # prompts asked (flaky-oracle's first attempt)
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # hold released, a batch cancelled
        self.closing = False
        self._ids = itertools.count(1)

    # -- the server's side -------------------------------------------------------------------
    def control(self, cfg: dict[str, Any]) -> None:
        with self.lock:
            self.settings.update(cfg)
            if cfg.get("reset"):
                self.counts = dict.fromkeys(self.counts, 0)
                self.sizes.clear()
            self.changed.notify_all()

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {**self.counts, "sizes": list(self.sizes)}

    def close(self) -> None:
        with self.lock:
            self.closing = True
            self.changed.notify_all()

    def handle(
        self, method: str, path: str, headers: Any, raw: bytes, bearer: str
    ) -> Response | None:
        """The response to a Files or Batch API request; None when ``path`` is neither."""
        path, _, query = path.partition("?")
        path = urllib.parse.unquote(path.rstrip("/"))
        files, batches = _FILES.search(path), _BATCHES.search(path)
        if files is None and batches is None:
            return None
        if not self.settings.enabled:
            return _error(404, f"no such endpoint: {method} {path}")
        try:
            if files is not None:
                return self._files(method, files.group(1), bool(files.group(2)), headers, raw)
            assert batches is not None
            if method == "GET" and batches.group(1) is None:
                return self._list(urllib.parse.parse_qs(query))
            return self._batches(method, batches.group(1), bool(batches.group(2)), raw, bearer)
        except (ValueError, KeyError, TypeError) as exc:
            return _error(400, f"bad request: {exc}")

    # -- /v1/files ---------------------------------------------------------------------------
    def _files(
        self, method: str, file_id: str | None, content: bool, headers: Any, raw: bytes
    ) -> Response:
        if method == "POST" and file_id is None:
            purpose, name, data = _multipart(str(headers.get("Content-Type") or ""), raw)
            return _ok(self._new_file(name, purpose, data))
        with self.lock:
            found = self.files.get(file_id or "")
            data = self.contents.get(file_id or "", b"")
        if method != "GET" or found is None:
            return _error(404, f"no such file: {file_id}")
        if content:
            return 200, data, "application/octet-stream"
        return _ok(found)

    def _new_file(self, name: str, purpose: str, data: bytes) -> dict[str, Any]:
        with self.lock:
            file_id = f"file-{next(self._ids):06d}"
            obj = {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": int(time.time()),
                "filename": name,
                "purpose": purpose,
                "status": "processed",
            }
            self.files[file_id] = obj
            self.contents[file_id] = data
            if purpose == "batch":
                self.counts["files"] += 1
        return obj

    # -- /v1/batches -------------------------------------------------------------------------
    def _batches(
        self, method: str, batch_id: str | None, cancel: bool, raw: bytes, bearer: str
    ) -> Response:
        if method == "POST" and batch_id is None:
            return self._create(json.loads(raw or b"{}"), bearer)
        with self.lock:
            batch = self.batches.get(batch_id or "")
            if batch is None:
                return _error(404, f"no such batch: {batch_id}")
            if method == "POST" and cancel:
                if batch.obj["status"] in ("validating", "in_progress"):
                    batch.obj["status"] = "cancelling"
                    batch.obj["cancelling_at"] = int(time.time())
                    batch.cancel.set()
                    self.counts["cancelled"] += 1
                    self.changed.notify_all()
            elif method != "GET" or cancel:
                return _error(404, f"no such endpoint: {method} batches/{batch_id}")
            return _ok(dict(batch.obj))

    def _create(self, body: dict[str, Any], bearer: str) -> Response:
        with self.lock:
            if self.settings.create_fail > 0:
                self.settings.create_fail -= 1
                return _error(502, "Bad gateway (injected create failure: nothing created)")
        file_id = str(body.get("input_file_id") or "")
        endpoint = str(body.get("endpoint") or "")
        with self.lock:
            data = self.contents.get(file_id)
            purpose = self.files.get(file_id, {}).get("purpose")
        if data is None:
            return _error(400, f"input_file_id: no such file: {file_id}")
        if purpose != "batch":
            return _error(400, f"input_file_id: purpose is {purpose!r}, expected 'batch'")
        if endpoint != "/v1/chat/completions":
            return _error(400, f"endpoint: only /v1/chat/completions here, got {endpoint!r}")
        now = int(time.time())
        obj: dict[str, Any] = {
            "object": "batch",
            "endpoint": endpoint,
            "errors": None,
            "input_file_id": file_id,
            "completion_window": str(body.get("completion_window") or "24h"),
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": now,
            "expires_at": now + _WINDOW_S,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
        }
        lines, problems = _parse_input(data, endpoint)
        with self.lock:
            if self.settings.reject:
                self.settings.reject = False
                message = "Enqueued token limit reached for this model. Try again later."
                problems.append(_problem("token_limit_exceeded", self.settings.text or message))
            obj["id"] = batch_id = f"batch_{next(self._ids):06d}{self.settings.text}"
            batch = _Batch(obj, lines, bearer, self.settings.expire_after)
            self.settings.expire_after = None
            self.batches[batch_id] = batch
            self.counts["created"] += 1
            self.sizes.append(len(lines))
            if problems:
                obj.update(status="failed", failed_at=now)
                obj["errors"] = {"object": "list", "data": problems}
            else:
                obj["request_counts"]["total"] = len(lines)
        if not problems:
            threading.Thread(target=self._run, args=(batch,), daemon=True).start()
        return self._lose(obj) or _ok(dict(obj))

    def _lose(self, obj: dict[str, Any]) -> Response | None:
        """The ``batch_lost_creates`` fault: the batch exists, its answer does not arrive."""
        with self.lock:
            if self.settings.lost_creates <= 0:
                return None
            self.settings.lost_creates -= 1
            if self.settings.lost_as == "hang":  # the handler holds it (server.py)
                return HANG
        return _error(502, f"Bad gateway (batch {obj['id']} was created)")

    def _list(self, query: dict[str, list[str]]) -> Response:
        """``GET /batches``: newest first, ``limit`` of them (default 20, at most 100) after
        the batch ``after``."""
        limit = min(max(int((query.get("limit") or ["20"])[0]), 1), 100)
        after = (query.get("after") or [""])[0]
        with self.lock:
            self.counts["listed"] += 1
            if self.settings.list_fail > 0:
                self.settings.list_fail -= 1
                return _error(502, "Bad gateway (injected list failure)")
            ids = list(reversed(self.batches))
            start = ids.index(after) + 1 if after in ids else 0
            page = [dict(self.batches[i].obj) for i in ids[start : start + limit]]
            more = start + limit < len(ids)
        return _ok(
            {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": more,
            }
        )

    def _run(self, batch: _Batch) -> None:
        """Answer the lines in order until done, expired (its fault) or cancelled."""
        obj = batch.obj
        with self.lock:
            obj.update(status="in_progress", in_progress_at=int(time.time()))
        outputs: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        ending = "completed"
        for n, line in enumerate(batch.lines):
            if batch.expire_after is not None and n >= batch.expire_after:
                ending = "expired"
                break
            if not self._wait_turn(batch):
                ending = "cancelled"
                break
            ok, result = self._answer(line, batch.bearer)
            (outputs if ok else errors).append(result)
            body = result["response"]["body"]
            usage = body.get("usage") if ok and isinstance(body, dict) else None
            with self.lock:
                obj["request_counts"]["completed" if ok else "failed"] += 1
                self.counts["lines"] += 1
                if isinstance(usage, dict):  # what this line bills
                    self.counts["tokens"] += int(usage.get("total_tokens") or 0)
        done = {r["custom_id"] for r in outputs + errors}
        if ending == "expired":
            for line in batch.lines:
                if line["custom_id"] not in done:
                    errors.append(_line_error(line["custom_id"], "batch_expired"))
        with self.lock:
            if outputs:
                obj["output_file_id"] = self._new_file_locked(outputs, obj["id"], "output")
            if errors:
                obj["error_file_id"] = self._new_file_locked(errors, obj["id"], "error")
            obj.update(status=ending, **{f"{ending}_at": int(time.time())})
            obj["finalizing_at"] = obj.get("finalizing_at") or int(time.time())

    def _wait_turn(self, batch: _Batch) -> bool:
        """Wait out the line's latency and any hold; False when the batch was cancelled (or
        the server is closing)."""
        deadline = time.monotonic() + self.settings.line_s
        with self.lock:
            while not (batch.cancel.is_set() or self.closing):
                left = deadline - time.monotonic()
                if left <= 0 and not self.settings.hold:
                    return True
                self.changed.wait(left if left > 0 else None)
        return False

    def _answer(self, line: dict[str, Any], bearer: str) -> tuple[bool, dict[str, Any]]:
        body = line["body"]
        messages = body.get("messages") or []
        prompt = str(messages[-1].get("content", "")) if messages else ""
        model = str(body.get("model", ""))
        with self.lock:
            failing = self.settings.fail_lines > 0
            self.settings.fail_lines -= failing
            said = self.settings.text or "injected batch line failure"
            heads = self.rng.random() < 0.5 if model == "coin" else True
            seen = hashlib.sha256(f"{model}\x00{prompt}".encode()).hexdigest()
            first = seen not in self.seen
            self.seen.add(seen)
        if failing:
            status, payload = 500, {"error": {"message": said}}
        else:
            status, payload, _ = self.answer(
                model, prompt, body, bearer=bearer, heads=heads, first=first
            )
        if isinstance(payload, bytes):  # HTML where JSON belongs: the body is a string
            payload = payload.decode("utf-8", "replace")
        response = {
            "status_code": status,
            "request_id": f"req_{line['custom_id']}",
            "body": payload,
        }
        result = {"id": f"batch_req_{line['custom_id']}", "custom_id": line["custom_id"]}
        return status == 200, {**result, "response": response, "error": None}

    def _new_file_locked(self, rows: list[dict[str, Any]], batch_id: str, kind: str) -> str:
        data = "".join(json.dumps(r) + "\n" for r in rows).encode()
        file_id = f"file-{next(self._ids):06d}"
        self.files[file_id] = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": f"{batch_id}_{kind}.jsonl",
            "purpose": "batch_output",
            "status": "processed",
        }
        self.contents[file_id] = data
        return file_id


def _parse_input(data: bytes, endpoint: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The input file's lines, and what is wrong with them (OpenAI's validation errors)."""
    lines: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    ids: set[str] = set()
    models: set[str] = set()
    for n, text in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
            custom_id, body = str(line["custom_id"]), line["body"]
            if line.get("url") != endpoint or line.get("method") != "POST":
                raise ValueError(f"expected POST {endpoint}")
            if not isinstance(body, dict):
                raise ValueError("body: expected an object")
        except (ValueError, KeyError, TypeError) as exc:
            problems.append(_problem("invalid_request", f"line {n}: {exc}", n))
            continue
        if custom_id in ids:
            problems.append(_problem("duplicate_custom_id", f"duplicate {custom_id}", n))
        ids.add(custom_id)
        models.add(str(body.get("model")))
        lines.append(line)
    if len(models) > 1:
        problems.append(_problem("mixed_models", f"one model per batch, got {sorted(models)}"))
    if not lines and not problems:
        problems.append(_problem("empty_file", "the input file has no requests"))
    return lines, problems


def _problem(code: str, message: str, line: int | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "param": None, "line": line}


def _line_error(custom_id: str, code: str) -> dict[str, Any]:
    message = "This request could not be executed before the completion window expired."
    return {
        "id": f"batch_req_{custom_id}",
        "custom_id": custom_id,
        "response": None,
        "error": {"code": code, "message": message},
    }


def _multipart(content_type: str, raw: bytes) -> tuple[str, str, bytes]:
    """(purpose, file name, file bytes) of a multipart/form-data upload."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
    purpose, name, data = "", "upload.jsonl", b""
    for part in message.iter_parts() if message.is_multipart() else ():
        field_name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):
            continue
        if field_name == "purpose":
            purpose = payload.decode().strip()
        elif field_name == "file":
            name = str(part.get_filename() or name)
            data = payload
    if not data:
        raise ValueError("file: expected a multipart upload with a 'file' part")
    return purpose, name, data


def _ok(obj: dict[str, Any]) -> Response:
    return 200, json.dumps(obj).encode(), "application/json"


def _error(status: int, message: str) -> Response:
    body = {"error": {"message": message, "type": "invalid_request_error"}}
    return status, json.dumps(body).encode(), "application/json"
