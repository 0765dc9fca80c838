"""Faults against the project's OpenAI-compatible server on 127.0.0.1: every sample ends
answered or as an error outcome, errors are never scored as wrong answers and are counted
apart, Retry-After is honoured, hangs and huge replies are bounded, and an unusable cache
stops the run before any call. The numbers of the last run go to docs/reliability.md."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import forkrun
import pytest
from reliability_matrix import record

from pytest_reasoning.registry import task_ids
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


@pytest.mark.e2e
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
    if os.environ.get("REASONING_UPDATE_DOCS"):  # the docs quote the last run, not a guess
        faults = ", ".join(f"{k}: {v}" for k, v in stats["faults"].items())
        line = (f"{stats['total']} requests, {sum(stats['faults'].values())} faults ({faults}), "
                f"{stats['total'] - N} retries, "
                f"{len(answered)} of {N} samples answered after retries, {len(errors)} errors, "
                f"{N - len(rows)} lost, {wall:.1f} s.")  # fmt: skip
        doc = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
        text = doc.read_text()
        a, b = text.index("<!-- fault-matrix -->"), text.index("<!-- /fault-matrix -->")
        doc.write_text(text[: a + len("<!-- fault-matrix -->")] + line + text[b:])


@pytest.mark.e2e
def test_a_hang_past_the_timeout_is_an_error_not_a_wrong_answer(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    with FakeOpenAIServer(fault_rate=1.0, fault_kinds=("hang",)) as server:
        # The server would hold each reply for two minutes; the client's 0.5 s timeout must
        # end every call first (the server sees the client hang up), not the hang.
        server.configure(hang_s=120.0)
        res = tmp_path / "r.jsonl"
        result = _run(pytester, server, "--reasoning-cache", "off", f"--reasoning-results={res}",
                      "--reasoning-timeout", "0.5", "--reasoning-retries", "1", "-k", "D1-s4-00 and not D1-s4-001")  # fmt: skip
        rows = _rows(res)
        # Each hang is recorded by its handler thread once it sees the client gone, which
        # on a loaded machine can be after the run's end: wait until every request the
        # server received has ended its hang (a cap, not a claim).
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            stats = server.stats()
            if stats["total"] and len(stats["hangs"]) >= stats["total"]:
                break
            time.sleep(0.05)
        stats = server.stats()
    assert rows and all(r["error"] and r["correct"] is None for r in rows)
    assert any("imeout" in r["error"] for r in rows)
    # Every request the server got was held until the client's timeout hung up. At load 9 a
    # call's 0.5 s can run out before its request reaches the server (8 of 9 got there in
    # one CI run): an error row all the same, and no request the server saw.
    hangs = stats["hangs"]
    assert 1 <= len(hangs) == stats["total"] <= len(rows), (hangs, stats["total"], len(rows))
    assert all(h["client_left"] for h in hangs), hangs
    assert result.ret == 6  # infrastructure only: the exit status says so


@pytest.mark.e2e
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


@pytest.mark.e2e
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
@pytest.mark.e2e
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

    from pytest_reasoning.gates import read_results

    pytester.makefile(".yaml", k=KILL_SUITE)
    res, cache = tmp_path / "r.jsonl", tmp_path / "cache"
    with FakeOpenAIServer(latency_s=0.05) as server:
        # Paths as --opt=value: pytest takes a separate argument that names an existing path
        # into its rootdir, so the rerun (the cache folder now exists) would have another
        # rootdir, and rows another suite name (docs/running.md).
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "k.yaml",
               "--llm", "openai/oracle", "--llm-api-base", server.url, "-n", workers,
               f"--reasoning-cache={cache}", f"--reasoning-results={res}",
               "--reasoning-concurrency", "2"]  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=pytester.path, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 300  # a cap for a loaded machine, not a speed claim
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
        # A request the killed run had sent may still reach this server after the kill (bytes in
        # a socket buffer, a connection in the listen backlog) and be counted during the rerun.
        # So the rerun talks to a fresh server on the same port (the cache key holds the URL):
        # closing this one resets its backlog, and late arrivals count on the old one.
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    with FakeOpenAIServer(latency_s=0.05, port=port) as rerun_server:
        done = subprocess.run(cmd, cwd=pytester.path, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:]
        assert rerun_server.stats()["total"] == 120 - cached  # only what was missing
    rows = list(read_results(res))
    assert len(rows) == 120 and all(r["correct"] is True for r in rows)


@pytest.mark.e2e
def test_an_unwritable_results_path_stops_the_run_before_any_call(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "taken").write_text("a file, not a folder")
    with FakeOpenAIServer() as server:
        result = _run(pytester, server, "--reasoning-results", "taken/r.jsonl")
        calls = server.stats()["total"]
    assert result.ret == pytest.ExitCode.USAGE_ERROR and calls == 0
    err = [line for line in result.stderr.str().splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith(
        "ERROR: --reasoning-results: cannot write taken/r.jsonl (FileExistsError"
    ), err


def _limited(max_file_bytes: int) -> Callable[[], None]:
    """A child whose files cannot grow past ``max_file_bytes`` (writes fail with EFBIG, as on a
    full disk; SIGXFSZ is ignored so the write fails instead of killing the process)."""

    def limit() -> None:
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    return limit


@pytest.mark.parametrize(
    ("full", "workers"), [("cache", "0"), ("cache", "2"), ("results", "0"), ("results", "2")]
)
@pytest.mark.e2e
def test_a_full_disk_stops_the_run_in_one_line_and_keeps_what_was_saved(
    pytester: pytest.Pytester, tmp_path: Path, full: str, workers: str
) -> None:
    """The cache's WAL (or, with the cache off, the results file) hits the size limit mid-run:
    the run stops with exit status 2 and one line naming the file; it stops asking the model;
    the cache passes its integrity check and a rerun with space asks only for the rest."""
    import sqlite3
    import subprocess
    import sys

    from pytest_reasoning.gates import read_results

    pytester.makefile(".yaml", k=KILL_SUITE)
    res, cache = tmp_path / "r.jsonl", tmp_path / "cache"
    # The cache's WAL grows by a 4 KiB page per answer; a results row is about 1 KiB.
    limit = 100_000 if full == "cache" else 30_000
    with FakeOpenAIServer() as server:
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "k.yaml",
               "--llm", "openai/oracle", "--llm-api-base", server.url, "-n", workers,
               f"--reasoning-cache={cache}" if full == "cache" else "--reasoning-cache=off",
               f"--reasoning-results={res}"]  # fmt: skip
        done = subprocess.run(cmd, cwd=pytester.path, capture_output=True, text=True,
                              preexec_fn=_limited(limit))  # fmt: skip
        asked = server.stats()["total"]
        assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:]
        stops = [line for line in done.stdout.splitlines() if "cannot write the" in line]
        assert len(stops) == 1, done.stdout[-3000:]
        what, named = ("response cache", cache / "responses.sqlite3") if full == "cache" else (
            "results file", res)  # fmt: skip
        assert f"cannot write the {what} {named}" in stops[0]
        assert "Traceback" not in done.stdout + done.stderr
        assert "INTERRUPTED: gates not decided" in done.stdout
        assert asked < 120  # it stopped asking
        kept = len(list(read_results(res)))
        if full == "cache":
            db = sqlite3.connect(cache / "responses.sqlite3")
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            kept = db.execute("SELECT count(*) FROM responses").fetchone()[0]
            db.close()
        assert kept >= 1
        rerun = subprocess.run(cmd, cwd=pytester.path, capture_output=True, text=True)
        assert rerun.returncode == 0, rerun.stdout[-2000:]
        if full == "cache":
            assert server.stats()["total"] - asked == 120 - kept  # only what was not kept
    rows = list(read_results(res))  # a row torn by the full disk is skipped
    assert len(rows) == 120 and all(r["correct"] is True for r in rows)


@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.e2e
def test_a_cache_full_before_the_first_report_still_prints_the_summary(
    pytester: pytest.Pytester, tmp_path: Path, workers: str
) -> None:
    """Prefetched answers fill the cache before the first sample reports (stop 37's CI, where
    the stop came with the first report and the summary was left out): the level that report
    belongs to is still counted, the summary says the run was interrupted and names the level
    as cut short by the stop, not as a selection."""
    import subprocess
    import sys

    from pytest_reasoning.gates import read_results

    pytester.makefile(".yaml", k=KILL_SUITE)
    res, cache = tmp_path / "r.jsonl", tmp_path / "cache"
    with FakeOpenAIServer() as server:
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "k.yaml",
               "--llm", "openai/oracle", "--llm-api-base", server.url, "-n", workers,
               f"--reasoning-cache={cache}", f"--reasoning-results={res}"]  # fmt: skip
        # Room for the cache's first pages and an answer or two, no more.
        done = subprocess.run(cmd, cwd=pytester.path, capture_output=True, text=True,
                              preexec_fn=_limited(40_000))  # fmt: skip
    out = done.stdout
    assert done.returncode == pytest.ExitCode.INTERRUPTED, out[-3000:]
    assert "Traceback" not in out + done.stderr
    assert "INTERRUPTED: gates not decided" in out, out[-3000:]
    rows = len(list(read_results(res)))
    assert rows >= 1 and f"{rows} answers recorded" in out
    assert (
        "level(s) were cut short by the stop, their gates not decided: dyval.arithmetic D1 (" in out
    )
    assert "a selection" not in out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's bookkeeping is left


@pytest.mark.needs_local_model
@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.e2e
def test_ctrl_c_stops_the_servers_flushes_results_and_exits_interrupted(
    pytester: pytest.Pytester, tmp_path: Path, workers: str
) -> None:
    """SIGINT to pytest alone (-n 0), or to its whole process group as a terminal's Ctrl-C
    does (-n 2): exit status 2, the summary says interrupted, the rows written so far are
    whole, and the embedded llama.cpp server is gone."""
    import os
    import signal
    import subprocess
    import sys

    from pytest_reasoning.gates import read_results

    pytester.makefile(".yaml", k=KILL_SUITE)
    res = tmp_path / "r.jsonl"
    with FakeOpenAIServer(latency_s=0.05) as server:
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "k.yaml",
               "--llm", "openai/oracle", "--llm", "local", "--llm-api-base", server.url,
               "-n", workers, f"--reasoning-cache={tmp_path / 'c'}",
               f"--reasoning-results={res}", "--reasoning-concurrency", "2"]  # fmt: skip
        # SIGINT at its default in the child whatever this process inherited (a job started in
        # the background without job control ignores it, and Python then leaves it ignored).
        # faulthandler: SIGABRT prints every thread's stack if the run outlives the cap below.
        proc = subprocess.Popen(cmd, cwd=pytester.path, start_new_session=True, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONFAULTHANDLER": "1"},
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
        deadline = time.monotonic() + 300  # a cap for a loaded machine, not a speed claim
        while time.monotonic() < deadline and not (
            res.exists() and res.read_text().count("\n") >= 10
        ):
            time.sleep(0.05)
        servers = [
            int(p.name)
            for p in Path("/proc").iterdir()
            if p.name.isdigit() and _cmdline(p).startswith(f"{sys.executable}\0-m\0pytest_reasoning.models.local")
            and _session(p) == proc.pid
        ]  # fmt: skip
        assert len(servers) == 1
        if workers == "0":
            os.kill(proc.pid, signal.SIGINT)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=600)  # a cap for a loaded machine, as above
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGABRT)
            out, _ = proc.communicate()
            pytest.fail(f"still running 180 s after SIGINT; its threads:\n{out[-8000:]}")
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out[-2000:]
    assert "INTERRUPTED: gates not decided" in out and "KeyboardInterrupt" in out
    assert not _alive(servers[0])
    rows = list(read_results(res))
    assert len(rows) >= 10 and len(rows) == res.read_text().count("\n")  # none torn


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_text()
    except OSError:
        return ""


def _session(proc: Path) -> int:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[3])
    except (OSError, ValueError, IndexError):
        return -1


@pytest.mark.needs_local_model
@pytest.mark.e2e
def test_the_local_server_exits_when_its_parent_is_killed() -> None:
    """SIGKILL leaves no chance to clean up: the child reads end-of-file on its stdin and
    exits rather than keep the model loaded."""
    import os
    import signal
    import subprocess
    import sys

    code = (
        "from pytest_reasoning.models.local import LocalServer\n"
        "s = LocalServer(); s.start(); print(s.proc.pid, flush=True)\n"
        "import time; time.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert _alive(child)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 600  # a cap, not a speed claim
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


DETERMINISM_SUITE = """\
seed: 11
min_accuracy: 0.5
samples: 6
tasks:
  - {task: dyval.arithmetic, levels: [D1, D3]}
  - {task: dyval.reachability, levels: [D2]}
  - {task: zebra.grid, levels: [3x3]}
  - {task: flenqa.people_in_rooms, levels: [250], params: {padding: similar}}
  - {task: musr.object_placement, levels: [L1]}
"""

# A conftest that reorders the collected items with a seed, as pytest-randomly would (we do
# not make every user of the project install it to test this).
SHUFFLE = """\
import os, random
def pytest_collection_modifyitems(items):
    seed = os.environ.get("SHUFFLE_SEED")
    if seed:
        random.Random(int(seed)).shuffle(items)
"""


@pytest.mark.e2e
def test_same_rows_and_verdicts_whatever_the_workers_order_and_hash_seed(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """Every row (all fields but latency) and every gate verdict are identical across
    -n 0 / 2 / 4, two shuffled test orders (without workers and with four) and
    PYTHONHASHSEED values; the item order really differs between the shuffled runs."""
    import os
    import subprocess
    import sys

    pytester.makefile(".yaml", d=DETERMINISM_SUITE)
    pytester.makeconftest(SHUFFLE)
    runs = {
        "n0": (["-n", "0"], {"PYTHONHASHSEED": "0"}),
        "n2": (["-n", "2"], {"PYTHONHASHSEED": "1"}),
        "shuffled-a": (["-n", "0"], {"SHUFFLE_SEED": "1", "PYTHONHASHSEED": "7"}),
        # -n 4 shuffled as well: every worker process costs seconds of start-up
        "shuffled-b-n4": (["-n", "4"], {"SHUFFLE_SEED": "2", "PYTHONHASHSEED": "random"}),
    }
    seen: dict[str, tuple[list[tuple[Any, ...]], list[str]]] = {}
    orders: dict[str, list[str]] = {}
    with FakeOpenAIServer(latency_s=0.01) as server:
        for name, (args, env) in runs.items():
            res = tmp_path / f"{name}.jsonl"
            cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "d.yaml",
                   "--llm", "openai/oracle", "--llm", "openai/shallow:2", "--llm-api-base",
                   server.url, "--reasoning-cache", "off", f"--reasoning-results={res}",
                   *args]  # fmt: skip
            done = subprocess.run(cmd, cwd=pytester.path, capture_output=True, text=True,
                                  env={**os.environ, **env})  # fmt: skip
            assert done.returncode in (0, 1), done.stdout[-3000:]
            rows = sorted(
                tuple(json.dumps(r[k], sort_keys=True) for k in r if k != "latency_s")
                for r in _rows(res)
            )
            verdicts = sorted(
                line.split()[0] + " " + line.split()[1]
                for line in done.stdout.splitlines()
                if "-gate" in line and ("PASSED" in line or "FAILED" in line)
                and line.startswith("d.yaml::")
            )  # fmt: skip
            seen[name] = (rows, verdicts)
            orders[name] = [
                line.split()[0] for line in done.stdout.splitlines()
                if line.startswith("d.yaml::") and "-gate" not in line
            ]  # fmt: skip
    first = seen["n0"]
    assert len(first[0]) == 2 * 6 * 6 and len(first[1]) == 2 * 6  # rows; gate verdicts
    for name, got in seen.items():
        assert got == first, name
    assert orders["n0"] != orders["shuffled-a"]  # the shuffle did reorder the items


def _pytest(cwd: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    return forkrun.run(cmd, cwd=cwd, **kwargs)


def _rows_utf8(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _file_limit(max_bytes: int) -> Any:
    def limit() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    return limit


@pytest.mark.e2e
def test_a_full_disk_under_xdist_loses_at_most_the_calls_in_flight(tmp_path: Path) -> None:
    """Before (-n 2): 68 answered, 18 kept — the prefetched calls still went out after the
    first failed write. Now every call first claims its prompt in the cache (a write), and no
    call starts after a failed write: what is lost is at most the calls in flight, here
    2 per worker."""
    (tmp_path / "k.yaml").write_text(KILL_SUITE)
    cache = tmp_path / "cache"
    with FakeOpenAIServer(latency_s=0.02) as server:
        done = _pytest(tmp_path, "k.yaml", "--llm", "openai/oracle", "--llm-api-base", server.url,
                       "-n", "2", "--reasoning-concurrency", "2", "--reasoning-cache", str(cache),
                       preexec_fn=_file_limit(60_000))  # fmt: skip
        asked = server.stats()["total"]
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:]
    stops = [line for line in done.stdout.splitlines() if "stopped asking the model" in line]
    assert len(stops) == 1 and "Traceback" not in done.stdout + done.stderr
    db = sqlite3.connect(cache / "responses.sqlite3")
    kept = db.execute("SELECT count(*) FROM responses").fetchone()[0]
    db.close()
    assert kept >= 1 and asked - kept <= 2 * 2, (asked, kept)
    record(
        "disk-xdist",
        f"`-n 2`, 2 calls in flight per worker, the cache's files capped at 60 kB: {asked} "
        f"answered, {kept} kept, {asked - kept} lost (bound: 4)",
    )


@pytest.mark.e2e
def test_a_full_disk_counts_only_the_rows_really_written(tmp_path: Path) -> None:
    """Before: the summary claimed rows ('12 answers recorded') the results file did not
    hold, and a row refused by the full disk reached it later from the write buffer."""
    (tmp_path / "k.yaml").write_text(KILL_SUITE)
    res = tmp_path / "r.jsonl"
    with FakeOpenAIServer() as server:
        done = _pytest(tmp_path, "k.yaml", "--llm", "openai/oracle", "--llm-api-base", server.url,
                       "--reasoning-cache", "off", f"--reasoning-results={res}",
                       preexec_fn=_file_limit(20_000))  # fmt: skip
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:]
    (said,) = re.findall(r"gates not decided: .*?; (\d+) answers recorded", done.stdout)
    text = res.read_text()
    assert text.endswith("\n") and int(said) == text.count("\n") == len(_rows_utf8(res))
    record(
        "disk-count",
        f"results file capped at 20 kB: the summary says {said} answers recorded and "
        f"the file holds exactly {said} whole rows ({len(text):,} bytes, no torn row)",
    )


_GYM = [t for t in task_ids() if t.startswith("gym.")]
