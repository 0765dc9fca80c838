"""An async OpenAI-compatible loopback server for benchmarks: every chat completion answers
after a fixed latency, with no per-request work beyond JSON. It runs in its own process (so it
never shares a core's event loop with the harness measured) and keeps the server-side span of
the calls (first request in, last reply out).

    python benchmarks/loopback.py --latency 0.05      # prints its URL, serves until killed

``GET /stats`` → requests, span, the first request's time (``time.monotonic``, comparable
across processes on Linux), the most requests in flight at once and the distinct prompts seen;
``POST /reset`` clears them. ``ceiling()`` measures what
the server itself reaches with a bare aiohttp client, so a benchmark can print its own limit
before blaming a harness.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

REPLY = "<<<1>>>"


def serve(port: int, latency: float) -> None:
    from aiohttp import web

    stats: dict[str, Any] = {
        "requests": 0,
        "first": None,
        "last": None,
        "active": 0,
        "peak": 0,
        "unexpected": 0,
    }
    prompts: set[str] = set()
    expected: set[str] = set()  # the prompts a harness was given (POST /reset may set them)

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        now = time.monotonic()
        if stats["first"] is None:
            stats["first"] = now
        stats["requests"] += 1
        stats["active"] += 1
        stats["peak"] = max(stats["peak"], stats["active"])
        messages = body.get("messages") or [{}]
        prompt = _text(messages[-1].get("content", ""))
        prompts.add(prompt)
        if expected and prompt not in expected:
            stats["unexpected"] += 1
        try:
            await asyncio.sleep(latency)
        finally:
            stats["active"] -= 1
        reply = {
            "id": "chatcmpl-loopback",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "bench"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": REPLY},
                }
            ],
            "usage": {
                "prompt_tokens": len(prompt.split()),
                "completion_tokens": 1,
                "total_tokens": len(prompt.split()) + 1,
            },
        }
        stats["last"] = time.monotonic()
        return web.json_response(reply)

    async def get_stats(_: web.Request) -> web.Response:
        span = None if stats["first"] is None else stats["last"] - stats["first"]
        return web.json_response(
            {
                "requests": stats["requests"],
                "span_s": span,
                # time.monotonic() is the system-wide CLOCK_MONOTONIC on Linux: a harness's
                # start time taken in another process compares with it.
                "first_at": stats["first"],
                "last_at": stats["last"],
                "peak_in_flight": stats["peak"],
                "distinct_prompts": len(prompts),
                "unexpected_prompts": stats["unexpected"],
            }
        )

    async def reset(request: web.Request) -> web.Response:
        given = await request.json() if request.can_read_body else {}
        stats.update(requests=0, first=None, last=None, active=0, peak=0, unexpected=0)
        prompts.clear()
        expected.clear()
        expected.update(given.get("expected") or ())
        return web.json_response({"ok": True})

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "bench", "object": "model"}]})

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_post("/chat/completions", completions)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/stats", get_stats)
    app.router.add_post("/reset", reset)

    async def main() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
        await site.start()
        bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(f"http://127.0.0.1:{bound}/v1", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def _text(content: Any) -> str:
    """A message's text, whether a string or a list of parts (``{"type": "text", ...}``)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


@dataclass
class Loopback:
    """The server in a child process; ``url`` ends in ``/v1``."""

    latency: float = 0.05
    proc: subprocess.Popen[str] | None = None
    url: str = ""

    def __enter__(self) -> Loopback:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--latency", str(self.latency)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"loopback server did not start: {self.url!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")

    def stats(self) -> dict[str, Any]:
        import urllib.request

        with urllib.request.urlopen(self.root + "/stats") as r:
            data: dict[str, Any] = json.load(r)
            return data

    def reset(self, expected: list[str] | None = None) -> None:
        """Clear the stats; ``expected``: the prompts the next harness was given (requests
        carrying any other last message are counted as ``unexpected_prompts``)."""
        import urllib.request

        body = json.dumps({"expected": expected or []}).encode()
        req = urllib.request.Request(self.root + "/reset", data=body, method="POST")
        with urllib.request.urlopen(req):
            pass


async def _drive(url: str, prompts: list[str], concurrency: int) -> float:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    conn = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=conn) as session:

        async def one(p: str) -> None:
            async with sem:
                body = {"model": "bench", "messages": [{"role": "user", "content": p}]}
                async with session.post(url + "/chat/completions", json=body) as r:
                    await r.json()

        start = time.perf_counter()
        await asyncio.gather(*(one(p) for p in prompts))
        return time.perf_counter() - start


def ceiling(server: Loopback, prompts: list[str], concurrency: int) -> float:
    """Wall seconds of a bare aiohttp client driving the server: the best any harness can do."""
    return asyncio.run(_drive(server.url, prompts, concurrency))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.05)
    args = ap.parse_args()
    serve(args.port, args.latency)
