"""Headless Chromium driven over the DevTools protocol, for the report's browser tests and
benchmark: no driver, no library. Chromium runs with ``--remote-debugging-pipe`` and speaks
NUL-terminated JSON on its fds 3 (commands in) and 4 (replies and events out).

    with Browser() as browser:
        page = browser.open("file:///…/index.html", ready="document.documentElement.dataset.viewer")
        page.select("#pr-f-outcome", "wrong")
        page.evaluate("document.querySelectorAll('#pr-samples tbody tr').length")

Debian's ``chromium`` (``apt-get install chromium``); :func:`find_chromium` is None where it
is not installed (tests skip with that reason). Every wait has a deadline.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Browser", "BrowserError", "Page", "find_chromium"]

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
)


class BrowserError(RuntimeError):
    """Chromium did not start, died, answered with an error, or a wait ran out."""


def find_chromium() -> str | None:
    """The Chromium executable on PATH (or ``$CHROMIUM``), None where there is none."""
    named = os.environ.get("CHROMIUM")
    if named:
        return shutil.which(named)
    return shutil.which("chromium") or shutil.which("chromium-browser")


_TRAMPOLINE = (
    "import os, sys; r, w = int(sys.argv[1]), int(sys.argv[2]); os.dup2(r, 3); os.dup2(w, 4);"
    " os.close(r); os.close(w); os.execv(sys.argv[3], sys.argv[3:])"
)


def _above_4(fd: int) -> int:
    """``fd`` moved above 4, so putting the pipes on fds 3 and 4 cannot close one of them."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class Browser:
    """One headless Chromium with a fresh profile, ended (and its profile removed) on exit."""

    def __init__(
        self, executable: str | None = None, *, width: int = 1280, height: int = 900
    ) -> None:
        found = executable or find_chromium()
        if found is None:
            raise BrowserError("chromium not found: apt-get install chromium")
        self.size = (width, height)
        self._profile = tempfile.mkdtemp(prefix="pr-chromium-")
        to_child, self._in = os.pipe()  # we write commands; Chromium reads its fd 3
        self._out, from_child = os.pipe()  # Chromium writes its fd 4; we read
        to_child, from_child = _above_4(to_child), _above_4(from_child)
        args = [*FLAGS, f"--user-data-dir={self._profile}", f"--window-size={width},{height}"]
        # A trampoline puts the pipes on fds 3 and 4 (subprocess cannot choose fd numbers,
        # dash's redirections stop at fd 9), then becomes Chromium.
        command = [sys.executable, "-c", _TRAMPOLINE, str(to_child), str(from_child), found]
        self.proc = subprocess.Popen(
            [*command, *args, "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(to_child, from_child),
        )
        os.close(to_child)
        os.close(from_child)
        self._next = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._replies: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._closed = False
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        try:
            self.send("Browser.getVersion", timeout=30)
        except BrowserError as exc:
            self.close()
            raise BrowserError(f"chromium did not start: {exc}") from None

    # -- the pipe ------------------------------------------------------------------------------
    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                data = os.read(self._out, 1 << 20)
            except OSError:
                data = b""
            if not data:
                with self._cond:
                    self._closed = True
                    self._cond.notify_all()
                return
            buffer += data
            *messages, buffer = buffer.split(b"\0")
            with self._cond:
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        self._replies[message["id"]] = message
                    else:
                        self.events.append(message)
                self._cond.notify_all()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)
            del self._stderr[:-40]

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        timeout: float = 60,
    ) -> dict[str, Any]:
        with self._lock:
            self._next += 1
            ident = self._next
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        try:
            os.write(self._in, json.dumps(message).encode() + b"\0")
        except OSError as exc:
            raise BrowserError(f"{method}: chromium is gone ({exc}){self._tail()}") from None
        deadline = time.monotonic() + timeout
        with self._cond:
            while ident not in self._replies:
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    why = "chromium exited" if self._closed else f"no answer in {timeout:g} s"
                    raise BrowserError(f"{method}: {why}{self._tail()}")
                self._cond.wait(left)
            reply = self._replies.pop(ident)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def wait_event(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = 60
    ) -> dict[str, Any]:
        """The first event (past or coming) that ``match`` accepts; it is consumed."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for k, event in enumerate(self.events):
                    if match(event):
                        return self.events.pop(k)
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise BrowserError(f"no such event in {timeout:g} s{self._tail()}")
                self._cond.wait(left)

    def _tail(self) -> str:
        lines = b"".join(self._stderr[-5:]).decode(errors="replace").strip()
        return f"; chromium said: {lines}" if lines else ""

    # -- pages ---------------------------------------------------------------------------------
    def open(self, url: str, *, ready: str | None = None, timeout: float = 60) -> Page:
        """A new tab showing ``url``, once loaded (with ``ready``: once that JavaScript
        expression is truthy)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.send(f"{domain}.enable")
        w, h = self.size
        page.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": False},
        )
        page.goto(url, ready=ready, timeout=timeout)
        return page

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._in, self._out):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    """One tab: navigate, run JavaScript, click, type, choose, and what went wrong in it
    (uncaught exceptions, console errors, dialogs, requests outside the page's files)."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def send(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session, **kw)

    def goto(self, url: str, *, ready: str | None = None, timeout: float = 60) -> None:
        """Navigate; return once the page has loaded, or with ``ready`` once that expression
        is truthy (which may be before the load event: a page's script can be ready first)."""
        self.send("Page.navigate", {"url": url})
        if ready:
            self.wait_for(ready, timeout)
            return
        self.browser.wait_event(
            lambda e: e.get("sessionId") == self.session and e["method"] == "Page.loadEventFired",
            timeout,
        )

    def evaluate(self, expression: str, *, timeout: float = 60) -> Any:
        """The value of a JavaScript expression (promises awaited), as JSON brings it back."""
        reply = self.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            timeout=timeout,
        )
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"{expression[:80]}: {text}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> Any:
        """The expression's value once truthy; until then an error counts as not yet (a page
        still loading has no document element)."""
        deadline = time.monotonic() + timeout
        last = ""
        while True:
            try:
                value = self.evaluate(expression)
            except BrowserError as exc:
                value, last = None, f" (last: {exc})"
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"still false after {timeout:g} s: {expression}{last}")
            time.sleep(0.05)

    def _center(self, selector: str) -> tuple[float, float]:
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        if not box:
            raise BrowserError(f"no element {selector}")
        return float(box[0]), float(box[1])

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element."""
        x, y = self._center(selector)
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            )

    def type(self, selector: str, text: str) -> None:
        """Focus the element and type ``text`` as keyboard input would."""
        self.click(selector)
        self.send("Input.insertText", {"text": text})

    def choose(self, selector: str, value: str) -> None:
        """Choose an option of a ``<select>`` as a person does: the value changes and the
        page gets its input and change events (a headless popup cannot be clicked)."""
        found = self.evaluate(
            f"(() => {{ const s = document.querySelector({json.dumps(selector)});"
            f" if (!s || ![...s.options].some(o => o.value === {json.dumps(value)})) return false;"
            f" s.focus(); s.value = {json.dumps(value)};"
            " s.dispatchEvent(new Event('input', {bubbles: true}));"
            " s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()"
        )
        if not found:
            raise BrowserError(f"{selector}: no option {value!r}")

    def screenshot(self, path: str, *, full: bool = True) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": size["height"],
                "scale": 1,
            }
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))

    # -- what went wrong ---------------------------------------------------------------------
    def _mine(self, method: str) -> list[dict[str, Any]]:
        with self.browser._lock:
            return [
                e["params"]
                for e in self.browser.events
                if e.get("sessionId") == self.session and e["method"] == method
            ]

    def problems(self) -> list[str]:
        """Uncaught exceptions, console errors and dialogs (alert, confirm) so far."""
        out = []
        for p in self._mine("Runtime.exceptionThrown"):
            d = p["exceptionDetails"]
            out.append("exception: " + (d.get("exception", {}).get("description") or d["text"]))
        for p in self._mine("Runtime.consoleAPICalled"):
            if p["type"] in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value")) for a in p["args"]))
        for p in self._mine("Log.entryAdded"):
            if p["entry"]["level"] == "error":
                out.append("log: " + p["entry"]["text"])
        for p in self._mine("Page.javascriptDialogOpening"):
            out.append(f"dialog: {p['type']} {p['message']!r}")
        return out

    def requests(self) -> list[str]:
        """Every URL the page asked for."""
        return [p["request"]["url"] for p in self._mine("Network.requestWillBeSent")]
