"""LiteLLM's calls from helper processes (``--reasoning-call-processes N``, issue 24): the same
rows as calls from the pytest process's own thread, LiteLLM never imported there, the window
of calls in flight kept, a bad key still stops at once, and a child that dies is one line,
not a hang. Over real HTTP to the project's test server."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from pytest_reasoning.models.call_process import ProcessClient
from pytest_reasoning.testing.server import FakeOpenAIServer

SUITE = """\
samples: 12
seed: 5
tasks:
  - task: dyval.arithmetic
    levels: [D1, D2]
"""

# Written by the run itself: whether the pytest process imported litellm, and the children's
# process ids (so a test can stop one).
PROBE = """\
import os, signal, sys
from pathlib import Path

KILL_AFTER = int(os.environ.get("KILL_CHILD_AFTER", "0"))
seen = []

def pytest_runtest_logreport(report):
    if report.when != "call":
        return
    seen.append(report.nodeid)
    if KILL_AFTER and len(seen) == KILL_AFTER:
        from pytest_reasoning.models import call_process
        for child in call_process._POOL:
            os.kill(child._proc.pid, signal.SIGKILL)

def pytest_unconfigure(config):
    Path("imported.txt").write_text(str("litellm" in sys.modules))
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def oracle(server: FakeOpenAIServer, processes: int, concurrency: int) -> tuple[str, ...]:
    """A cache-less run of the server's oracle through ``processes`` call processes."""
    return (
        "--llm", "openai/oracle", "--llm-api-base", server.url, "--reasoning-cache", "off",
        "--reasoning-call-processes", str(processes), "--reasoning-concurrency", str(concurrency),
    )  # fmt: skip


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def essence(found: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    keep = ("test_id", "model", "level", "correct", "failure_mode", "response", "prompt_tokens")
    return sorted(tuple(r.get(k) for k in keep) for r in found)


def test_no_key_crosses_the_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "team-0123456789abcdefghijklmnopq"
    monkeypatch.setenv("TEAM_CREDS", secret)
    client = ProcessClient("openai/m", api_key_env="TEAM_CREDS", api_base="http://127.0.0.1:9")
    sent = pickle.dumps(client._spec)
    assert secret.encode() not in sent and b"TEAM_CREDS" in sent


def test_the_number_of_processes_is_bounded(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", s=SUITE)
    result = run(pytester, "--llm", "openai/oracle", "--reasoning-call-processes", "65")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--reasoning-call-processes*65*"])
    assert "Traceback" not in result.stderr.str()


@pytest.mark.e2e
def test_rows_match_the_in_process_calls_and_litellm_stays_out(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(".yaml", s=SUITE)
    pytester.makeconftest(PROBE)
    base = ("--llm", "openai/oracle", "--llm", "openai/shallow:2")
    common = (*base, "--llm-api-base", fake_server.url, "--reasoning-cache", "off")
    fake_server.configure(latency_s=0.02)
    inline = run(pytester, *common, "--reasoning-results=a.jsonl")
    assert inline.ret == pytest.ExitCode.OK, inline.stdout.str()
    assert (pytester.path / "imported.txt").read_text() == "True"
    before = fake_server.stats()["requests"]
    fake_server.configure(peak=0)
    apart_args = (
        *base,
        "--llm-api-base",
        fake_server.url,
        "--reasoning-cache",
        str(pytester.path / "cache"),
        "--reasoning-call-processes",
        "2",
        "--reasoning-concurrency",
        "3",
    )
    apart = run(pytester, *apart_args, "--reasoning-results=b.jsonl")
    assert apart.ret == pytest.ExitCode.OK, apart.stdout.str()
    assert (pytester.path / "imported.txt").read_text() == "False"
    a, b = rows(pytester.path / "a.jsonl"), rows(pytester.path / "b.jsonl")
    assert len(b) == 48 and essence(a) == essence(b)
    stats = fake_server.stats()
    # One call per sample, never more than the window in flight.
    assert {m: stats["requests"][m] - before[m] for m in before} == {
        "oracle": 24,
        "shallow:2": 24,
    }
    # The window is per model (3 each); this process hands the children four times that.
    assert 2 <= stats["peak_in_flight"] <= 2 * 3
    # A warm rerun asks nothing: every answer comes from the cache this process keeps.
    warm = run(pytester, *apart_args, "--reasoning-results=c.jsonl")
    assert warm.ret == pytest.ExitCode.OK, warm.stdout.str()
    assert fake_server.stats()["total"] == stats["total"]
    c = rows(pytester.path / "c.jsonl")
    assert essence(c) == essence(a)
    warm.stdout.fnmatch_lines(["openai/oracle * 24 * 0 * 24 * 0 *"])


@pytest.mark.e2e
def test_a_bad_key_stops_after_one_call(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Longer than an error line: the child must redact it (by the name the configuration
    # gives it) before it cuts the message, or a prefix would survive.
    secret = "team-0123456789abcdefghijklmnopq" * 10
    monkeypatch.setenv("TEAM_CREDS", secret)
    pytester.makefile(
        ".yaml",
        s=SUITE,
        models=(
            "model_list:\n  - model_name: bad\n    litellm_params:\n      model: openai/bad-key\n"
            f"      api_base: {fake_server.url}\n      api_key: os.environ/TEAM_CREDS\n"
        ),
    )
    result = run(
        pytester,
        "--llm-config",
        "models.yaml",
        "--llm",
        "bad",
        "--reasoning-call-processes",
        "2",
        "--reasoning-results=r.jsonl",
    )
    assert result.ret == 6, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*reasoning: bad stopped (infrastructure, not the model): AuthenticationError: *"]
    )
    assert fake_server.stats()["requests"]["bad-key"] == 1
    found = rows(pytester.path / "r.jsonl")
    assert sum(r.get("error_kind") == "not_asked" for r in found) == len(found) - 1
    text = result.stdout.str() + result.stderr.str() + (pytester.path / "r.jsonl").read_text()
    assert secret[:8] not in text and secret[-8:] not in text


@pytest.mark.e2e
def test_a_child_that_dies_is_one_line_and_no_hang(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makefile(".yaml", s=SUITE)
    pytester.makeconftest(PROBE)
    monkeypatch.setenv("KILL_CHILD_AFTER", "3")
    fake_server.configure(latency_s=0.05)
    result = run(pytester, *oracle(fake_server, 1, 2), "--reasoning-results=r.jsonl")
    assert result.ret == 6, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*errors of openai/oracle (*):",
         "*x the call process stopped (it closed the connection; killed by signal 9) (no further "
         "calls)"]
    )  # fmt: skip
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    found = rows(pytester.path / "r.jsonl")
    assert len(found) == 24
    assert sum(r["correct"] is True for r in found) >= 3  # the answers before it died
    # Each answered once at most; nothing was asked after the stop.
    assert fake_server.stats()["requests"]["oracle"] <= 3 + 2 * 4


@pytest.mark.e2e
def test_a_window_smaller_than_the_pool_is_kept(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(".yaml", s=SUITE)
    fake_server.configure(latency_s=0.03)
    result = run(pytester, *oracle(fake_server, 3, 1))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    stats = fake_server.stats()
    assert stats["requests"]["oracle"] == 24 and stats["peak_in_flight"] == 1
