"""Frontier models on the first try (issue 19): calls made and seconds to the first printed
cause, against the project's OpenAI-compatible test server on 127.0.0.1.

Scenarios, each a real ``pytest example_suites/quick.yaml`` run in a subprocess:

- ``bad-key``: a key the server refuses (HTTP 401 echoing it): requests made, seconds from
  the start of the run to the first line that prints the cause, total wall, exit status, and
  whether any part of the key reached the output;
- ``bad-key -n 2``: the same under two xdist workers;
- ``o3-mini`` and ``gpt-5-mini``: the server refuses temperature != 1 and max_tokens like
  OpenAI: requests made and items answered.

``--source DIR`` runs the plugin from another source tree (e.g. ``git archive`` of an older
commit) to compare before and after. Usage::

    python benchmarks/fail_fast.py [--source DIR] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_reasoning.testing.server import FakeOpenAIServer

SUITE = Path(__file__).resolve().parents[1] / "example_suites" / "quick.yaml"
KEY = "sk-bench-0123456789abcdefghijklmnopqrstu"
CAUSE = ("stopped (infrastructure, not the model)", "AuthenticationError", "Incorrect API key")


def run(model: str, source: str | None, *extra: str) -> dict[str, object]:
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        res = Path(tmp) / "r.jsonl"
        cmd = [
            sys.executable, "-m", "pytest", str(SUITE), "-p", "no:cacheprovider",
            "-p", "no:randomly", "--llm", model, "--llm-api-base", server.url,
            "--reasoning-cache", "off", f"--reasoning-results={res}", "--rootdir", tmp, *extra,
        ]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": KEY}
        if source:
            env["PYTHONPATH"] = source
        started = time.monotonic()
        first_cause = None
        proc = subprocess.Popen(
            cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert proc.stdout is not None
        output = []
        for line in proc.stdout:
            output.append(line)
            if first_cause is None and any(c in line for c in CAUSE):
                first_cause = time.monotonic()
        status = proc.wait()
        ended = time.monotonic()
        asked = server.first_request_at
        text = "".join(output)
        rows = [json.loads(x) for x in res.read_text().splitlines()] if res.exists() else []
        return {
            "requests": server.stats()["total"],
            # From the start of the run, and from the first request (start-up, collection and
            # importing litellm excluded).
            "first_cause_s": None if first_cause is None else round(first_cause - started, 2),
            "cause_after_request_s": (
                None if first_cause is None or asked is None else round(first_cause - asked, 2)
            ),
            "wall_s": round(ended - started, 2),
            "exit": status,
            "answered": sum(r["error"] is None for r in rows),
            "rows": len(rows),
            "key_leaked": KEY[8:20] in text or KEY[-12:] in text,
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--source", help="run the plugin from this source tree (PYTHONPATH)")
    ap.add_argument("--runs", type=int, default=3, help="runs per scenario (median shown)")
    args = ap.parse_args()
    scenarios = [
        ("bad-key", "openai/bad-key", ()),
        ("bad-key -n 2", "openai/bad-key", ("-n", "2")),
        ("o3-mini", "openai/o3-mini", ()),
        ("gpt-5-mini", "openai/gpt-5-mini", ()),
    ]
    with open("/proc/loadavg") as fh:
        print(f"load average before: {fh.read().split()[:3]}")
    for name, model, extra in scenarios:
        results = [run(model, args.source, *extra) for _ in range(args.runs)]
        first = [r["first_cause_s"] for r in results if r["first_cause_s"] is not None]
        after = [
            r["cause_after_request_s"] for r in results if r["cause_after_request_s"] is not None
        ]
        summary = {
            "requests": sorted({r["requests"] for r in results}),
            "first_cause_s (median)": statistics.median(first) if first else None,
            "cause_after_first_request_s (median)": statistics.median(after) if after else None,
            "wall_s (median)": statistics.median(float(str(r["wall_s"])) for r in results),
            "exit": sorted({r["exit"] for r in results}),
            "answered/rows": sorted({f"{r['answered']}/{r['rows']}" for r in results}),
            "key_leaked": any(r["key_leaked"] for r in results),
        }
        print(f"{name}: {json.dumps(summary)}")
    with open("/proc/loadavg") as fh:
        print(f"load average after: {fh.read().split()[:3]}")


if __name__ == "__main__":
    main()
