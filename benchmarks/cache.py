"""What the hardening of issue 20 costs per call and per run (numbers in docs/reliability.md).

1. The cache's work for one uncached call: before, a miss and a put; now a miss, a claim, a
   second read and a put (the claim lets concurrent runs share answers). Median of 2,000
   distinct prompts on a file in a temporary folder, in microseconds.
2. The integrity check at start-up (``PRAGMA quick_check``) on caches of 1,000, 10,000 and
   50,000 answers (median of 5).
3. Cleaning one reply of 1 MB (``clean_text``: one encode attempt when the text is valid).

Usage: python benchmarks/cache.py
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import timeit
from pathlib import Path

from pytest_reasoning.core import Reply, clean_text
from pytest_reasoning.models.base import ChatRequest
from pytest_reasoning.models.cache import ResponseCache, new_owner

REPLY = Reply(content="Let me think step by step. " * 20 + "<<<42>>>", prompt_tokens=300)


def _requests(n: int, tag: str) -> list[ChatRequest]:
    return [ChatRequest(model="openai/m", messages=(("user", f"{tag} {i}"),)) for i in range(n)]


def per_call_us(n: int = 2000) -> dict[str, float]:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        cache, owner = ResponseCache(tmp), new_owner()
        for name in ("before", "now"):
            costs = []
            for request in _requests(n, name):
                started = time.perf_counter()
                assert cache.get(request) is None
                if name == "now":
                    assert cache.claim(request.key, owner, 600.0)
                    assert cache.get(request) is None
                cache.put(request, REPLY)
                costs.append(time.perf_counter() - started)
            out[name] = round(statistics.median(costs) * 1e6, 1)
        cache.forget(owner)
        cache.close()
    return out


def quick_check_ms() -> dict[int, float]:
    out = {}
    row = json.dumps(REPLY.to_dict())
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(tmp)
        conn, done = cache._connect(), 0
        for target in (1_000, 10_000, 50_000):
            conn.executemany(
                "INSERT INTO responses VALUES (?, 'openai/m', 0, ?)",
                ((f"{i:064x}", row) for i in range(done, target)),
            )
            done = target
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            times = []
            for _ in range(5):
                fresh = ResponseCache(tmp)
                started = time.perf_counter()
                fresh.verify()
                times.append(time.perf_counter() - started)
                fresh.close()
            out[target] = round(statistics.median(times) * 1000, 2)
        cache.close()
    return out


def clean_ms() -> dict[str, float]:
    ascii_text, other = "x" * 1_000_000, "é" * 500_000
    return {
        "ascii_1mb": round(timeit.timeit(lambda: clean_text(ascii_text), number=50) / 50 * 1e3, 3),
        "utf8_1mb": round(timeit.timeit(lambda: clean_text(other), number=50) / 50 * 1e3, 3),
    }


def main() -> None:
    results = {
        "cache_per_uncached_call_us": per_call_us(),
        "quick_check_ms_by_answers": quick_check_ms(),
        "clean_text_ms": clean_ms(),
    }
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    (out / "cache.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
