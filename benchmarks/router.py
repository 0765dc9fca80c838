"""LiteLLM Router overhead per call (issue 22): CPU time of this process per call through
``--llm-router`` (``RouterClient`` → ``Router.acompletion``) against the plain LiteLLM path
(``LiteLLMClient`` → ``litellm.acompletion``), both against the loopback server in its own
process (its CPU is not counted). CPU time, not wall: the shared machine's load moves wall
time by more than the difference measured. Modes alternate within each round; medians.

    python benchmarks/router.py [--calls 400] [--rounds 5] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loopback import Loopback

from pytest_reasoning.models.base import ChatRequest
from pytest_reasoning.models.litellm_client import LiteLLMClient, RetryPolicy
from pytest_reasoning.models.router import (
    RouterClient,
    RouterHandle,
    parse_router_config,
)

PARAMS = {"temperature": 0, "max_tokens": 16}


def _clients(url: str) -> dict[str, Any]:
    def router(settings: dict[str, Any], rpm: int | None) -> RouterClient:
        extra = {"rpm": rpm} if rpm else {}
        data = {
            "model_list": [
                {
                    "model_name": "g",
                    "litellm_params": {"model": "openai/bench", "api_base": u, **extra},
                }
                for u in (url, url.replace("127.0.0.1", "localhost"))
            ],
            "router_settings": settings,
        }
        group = parse_router_config(data, "bench.yaml")["g"]
        return RouterClient(group, RouterHandle(group.file), retry=RetryPolicy(attempts=1))

    return {
        "plain LiteLLM": LiteLLMClient(
            "openai/bench", api_base=url, api_key="EMPTY", retry=RetryPolicy(attempts=1)
        ),
        "Router, 2 deployments": router({}, None),
        "Router, 2 deployments, rpm enforced": router(
            {"optional_pre_call_checks": ["enforce_model_rate_limits"]}, 1_000_000
        ),
    }


async def _batch(client: Any, tag: str, calls: int, concurrency: int) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        request = ChatRequest(
            model=client.name,
            messages=(("user", f"{tag} {n}"),),
            params=PARAMS,
            api_base=client.api_base,
        )
        async with sem:
            reply = await client.acomplete(request)
        if reply.error is not None:
            raise SystemExit(f"{tag}: {reply.error}")

    start = time.process_time()
    await asyncio.gather(*(one(n) for n in range(calls)))
    return (time.process_time() - start) / calls


async def main_async(args: argparse.Namespace, url: str) -> dict[str, list[float]]:
    clients = _clients(url)
    for name, client in clients.items():  # warm up: imports, HTTP clients, the Router
        await _batch(client, f"warm {name}", 40, args.concurrency)
    per_call: dict[str, list[float]] = {name: [] for name in clients}
    order = list(clients)
    for r in range(args.rounds):
        for name in order if r % 2 == 0 else reversed(order):
            per_call[name].append(
                await _batch(clients[name], f"r{r} {name}", args.calls, args.concurrency)
            )
    return per_call


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.01)
    args = ap.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    load = Path("/proc/loadavg").read_text().split()[:3]
    with Loopback(latency=args.latency) as server:
        per_call = asyncio.run(main_async(args, server.url))
    base = per_call["plain LiteLLM"]
    end = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load average {' '.join(load)} at start, {' '.join(end)} at end; {args.rounds} "
          f"rounds × {args.calls} calls, concurrency {args.concurrency}; CPU ms per call "
          "(median; overhead: median of the per-round differences to plain LiteLLM, the "
          "modes of a round ran back to back; all rounds)")  # fmt: skip
    for name, values in per_call.items():
        med = statistics.median(values)
        rounds = ", ".join(f"{v * 1000:.2f}" for v in values)
        diff = statistics.median(v - b for v, b in zip(values, base, strict=True))
        delta = "" if name == "plain LiteLLM" else f"  ({diff * 1000:+.2f} ms)"
        print(f"  {name:38s} {med * 1000:6.2f}{delta}   [{rounds}]")


if __name__ == "__main__":
    main()
