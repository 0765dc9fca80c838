"""Faults against the project's OpenAI-compatible server on 127.0.0.1: every sample ends
answered or as an error outcome, errors are never scored as wrong answers and are counted
apart, Retry-After is honoured, hangs and huge replies are bounded, and an unusable cache
stops the run before any call. The numbers of the last run go to docs/reliability.md."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_reasoning.testing.server import ALL_FAULTS, FakeOpenAIServer

SUITE = """\
seed: 4
samples: 40
tasks:
  - {task: dyval.arithmetic, levels: [D1, D2]}
  - {task: zebra.grid, levels: [2x3]}
  - {task: flenqa.ruletaker, levels: [250]}
"""
N = 160  # about 230 requests, so each of the eight fault kinds is all but sure to occur


def _run(pytester: pytest.Pytester, server: FakeOpenAIServer, *args: str) -> pytest.RunResult:
    pytester.makefile(".yaml", s=SUITE)
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--llm", "openai/oracle", "--llm-api-base", server.url, *args
    )


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_thirty_percent_faults_of_every_fast_kind(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    kinds = tuple(k for k in ALL_FAULTS if k not in ("hang", "huge"))
    with FakeOpenAIServer(fault_rate=0.3, fault_kinds=kinds, seed=7) as server:
        res = tmp_path / "r.jsonl"
        started = time.monotonic()
        result = _run(pytester, server, "--reasoning-cache", "off", f"--reasoning-results={res}",
                      "--reasoning-retries", "6", "--reasoning-max-errors", str(N))  # fmt: skip
        wall = time.monotonic() - started
        stats = server.stats()
    rows = _rows(res)
    assert len(rows) == N and len({r["item_id"] for r in rows}) == N
    answered = [r for r in rows if r["error"] is None]
    errors = [r for r in rows if r["error"] is not None]
    assert all(r["correct"] is True for r in answered)  # the oracle: never a wrong answer
    assert all(r["correct"] is None and r["failure_mode"] is None for r in errors)
    assert len(answered) >= N - 2, [r["error"] for r in errors]  # 6 attempts at 30%: recover
    assert set(stats["faults"]) == set(kinds), stats["faults"]  # every kind was injected
    # Retry-After: 1 was honoured: some retry of a prompt waited a full second.
    assert max(stats["gaps"]) >= 0.95, stats
    out = result.stdout.str()
    assert "WRONG" not in out and " W " not in out
    Path(pytester.path / "fault_matrix.json").write_text(
        json.dumps({"faults": stats["faults"], "requests": stats["total"], "samples": N,
                    "answered": len(answered), "errors": len(errors), "wall_s": round(wall, 1)})
    )  # fmt: skip


def test_a_hang_past_the_timeout_is_an_error_not_a_wrong_answer(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    with FakeOpenAIServer(fault_rate=1.0, fault_kinds=("hang",)) as server:
        server.configure(hang_s=3.0)
        res = tmp_path / "r.jsonl"
        started = time.monotonic()
        result = _run(pytester, server, "--reasoning-cache", "off", f"--reasoning-results={res}",
                      "--reasoning-timeout", "0.5", "--reasoning-retries", "1", "-k", "D1-s4-00 and not D1-s4-001")  # fmt: skip
        wall = time.monotonic() - started
    rows = _rows(res)
    assert rows and all(r["error"] and r["correct"] is None for r in rows)
    assert any("imeout" in r["error"] for r in rows)
    assert wall < 30  # bounded by the timeout, not by the hang
    assert result.ret == 6  # infrastructure only: the exit status says so


def test_a_ten_megabyte_reply_is_bounded_and_recorded_as_an_error(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    with FakeOpenAIServer(fault_rate=1.0, fault_kinds=("huge",)) as server:
        res = tmp_path / "r.jsonl"
        _run(pytester, server, "--reasoning-cache", str(tmp_path / "c"), f"--reasoning-results={res}",
             "--reasoning-retries", "3", "-k", "D1-s4-000")  # fmt: skip
        calls = server.stats()["total"]
    (row,) = _rows(res)
    assert row["error"].startswith("response too large: 10,000,000 characters")
    assert row["response"] is None and row["correct"] is None
    assert calls == 1  # not retried
    assert res.stat().st_size < 10_000  # nothing of it in the results file


def test_an_unusable_cache_stops_the_run_before_any_call(pytester: pytest.Pytester) -> None:
    (pytester.path / "taken").write_text("a file, not a folder")
    with FakeOpenAIServer() as server:
        result = _run(pytester, server, "--reasoning-cache", "taken")
        calls = server.stats()["total"]
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert calls == 0
    err = [line for line in result.stderr.str().splitlines() if line.strip()]
    assert err == [
        f"ERROR: --reasoning-cache: cannot use {pytester.path / 'taken'} (FileExistsError: "
        f"[Errno 17] File exists: '{pytester.path / 'taken'}'); give a writable folder, or "
        "'off' to run without a cache"
    ]


def test_servers_bind_to_loopback_on_an_ephemeral_port() -> None:
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        assert a.url.startswith("http://127.0.0.1:") and b.url.startswith("http://127.0.0.1:")
        assert a.url != b.url


KILL_SUITE = """\
seed: 9
samples: 60
tasks:
  - {task: dyval.arithmetic, levels: [D1, D2]}
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_run_killed_halfway_loses_nothing_and_the_rerun_asks_only_for_the_rest(
    pytester: pytest.Pytester, tmp_path: Path, workers: str
) -> None:
    """SIGKILL to the whole process group (pytest and its xdist workers) once some rows are
    written: the cache stays sound, the rerun calls the endpoint only for prompts not cached,
    and the results file reads as one row per item (a torn last row is skipped)."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys

    from pytest_reasoning.results import read_results

    pytester.makefile(".yaml", k=KILL_SUITE)
    res, cache = tmp_path / "r.jsonl", tmp_path / "cache"
    with FakeOpenAIServer(latency_s=0.05) as server:
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "k.yaml",
               "--llm", "openai/oracle", "--llm-api-base", server.url, "-n", workers,
               "--reasoning-cache", str(cache), f"--reasoning-results={res}",
               "--reasoning-concurrency", "2"]  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=pytester.path, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if res.exists() and res.read_text().count("\n") >= 30:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        db = sqlite3.connect(cache / "responses.sqlite3")
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        cached = db.execute("SELECT count(*) FROM responses").fetchone()[0]
        db.close()
        assert 30 <= cached < 120  # killed halfway, with every answer received so far cached
        before = server.stats()["total"]
        done = subprocess.run(cmd, cwd=pytester.path, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:]
        assert server.stats()["total"] - before == 120 - cached  # only what was missing
    rows = list(read_results(res))
    assert len(rows) == 120 and all(r["correct"] is True for r in rows)
