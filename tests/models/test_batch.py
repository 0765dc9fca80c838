"""Batch prices (``--reasoning-batch``, models/batch.py): LiteLLM's files and batches functions
over real HTTP to the project's server, whose Files and Batch API can expire a batch, fail
lines, hold a batch, lose a create's answer, fail its list, or be missing. Every answer lands
in the cache and the run asks no chat request; a batch that ended short is followed by one
holding only what is missing; a killed or timed-out run picks its batch up again instead of
paying twice; a create whose answer was lost is looked up, never made twice; what the batches
billed is the run's spend, and a budget is never given a batch it cannot pay for."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import PLAIN
from pytest_reasoning.budget import Budget, Spend
from pytest_reasoning.errors import ReasoningError
from pytest_reasoning.evaluate import EvalConfig, Evaluator
from pytest_reasoning.models.base import ChatRequest, normalise_api_base
from pytest_reasoning.models.batch import (
    FOLDER,
    MAX_ROUNDS,
    BatchFailed,
    BatchJob,
    BatchLedger,
    BatchProgress,
    BatchPurse,
    BatchRecord,
    BatchResult,
    BatchTimedOut,
    BatchUnsupported,
    run_batches,
)
from pytest_reasoning.models.litellm_client import LiteLLMClient
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer

N = 6  # requests per phase in the in-process tests: small, every fault still shows


@pytest.fixture
def evaluator(tmp_path: Path, fake_server: FakeOpenAIServer) -> Iterator[Evaluator]:
    ev = Evaluator(EvalConfig(api_base=fake_server.url, cache_dir=str(tmp_path / "cache")))
    yield ev
    ev.close()


def _items(n: int = N) -> list:  # type: ignore[type-arg]
    return [make_item(get_task("dyval.arithmetic"), "D1", 3, i) for i in range(n)]


def _phase(
    ev: Evaluator,
    model: str = "openai/oracle",
    wait_s: float = 60.0,
    n: int = N,
    purse: BatchPurse | None = None,
) -> tuple[BatchResult, list[ChatRequest]]:
    client = ev.client(model)
    assert isinstance(client, LiteLLMClient)
    requests = list({r.key: r for r in (ev.request_for(i, model) for i in _items(n))}.values())
    assert ev.cache is not None
    ledger = BatchLedger(Path(ev.config.cache_dir or "") / FOLDER)
    job = BatchJob(model, client, requests)
    [result] = asyncio.run(run_batches([job], ev.cache, ledger, wait_s=wait_s, purse=purse))
    return result, requests


def _all_cached(ev: Evaluator, server: FakeOpenAIServer) -> None:
    """Every item answers from the cache, correctly (the oracle), with no chat request."""
    for item in _items():
        outcome = ev.answer(item, "openai/oracle")
        assert outcome.cached and outcome.correct, outcome
    assert server.stats()["total"] == 0


def test_a_batch_answers_every_request_into_the_cache(
    evaluator: Evaluator, fake_server: FakeOpenAIServer
) -> None:
    result, requests = _phase(evaluator)
    assert (result.asked, result.answered, result.left) == (len(requests), len(requests), {})
    assert len(result.submitted) == 1 and not result.picked_up
    assert fake_server.stats()["batch"]["sizes"] == [len(requests)]
    _all_cached(evaluator, fake_server)
    assert not list((Path(evaluator.config.cache_dir or "") / FOLDER).glob("*.json"))


@pytest.mark.parametrize(
    "fault", [{"batch_expire_after": N - 2}, {"batch_fail_lines": 2}], ids=["expired", "failed"]
)
def test_a_short_batch_is_followed_by_one_of_the_missing_requests_only(
    evaluator: Evaluator, fake_server: FakeOpenAIServer, fault: dict[str, int]
) -> None:
    fake_server.control(**fault)
    result, requests = _phase(evaluator)
    # The first batch answered all but two (expired before them, or failed); the second
    # held exactly those two.
    assert fake_server.stats()["batch"]["sizes"] == [len(requests), 2]
    assert result.answered == len(requests) and not result.left
    _all_cached(evaluator, fake_server)


def test_lines_another_batch_cannot_fix_are_left_to_the_run(
    evaluator: Evaluator, fake_server: FakeOpenAIServer
) -> None:
    result, requests = _phase(evaluator, model="openai/bad-key")
    assert fake_server.stats()["batch"]["sizes"] == [len(requests)]  # 401: not resubmitted
    assert result.answered == 0 and len(result.left) == len(requests)
    assert all(why.startswith("HTTP 401: Incorrect API key") for why in result.left.values())


def test_replies_are_checked_like_live_ones(
    evaluator: Evaluator, fake_server: FakeOpenAIServer
) -> None:
    """An empty reply is malformed (retried, in another batch: at most MAX_ROUNDS); a reply
    over the size cap is refused once. Neither reaches the cache."""
    result, requests = _phase(evaluator, model="openai/empty", n=2)
    assert fake_server.stats()["batch"]["sizes"] == [len(requests)] * MAX_ROUNDS
    assert set(result.left.values()) == {"endpoint returned an empty completion"}
    fake_server.control(reset=True)
    result, requests = _phase(evaluator, model="openai/long:1000001", n=2)
    assert fake_server.stats()["batch"]["sizes"] == [len(requests)]
    assert all(why.startswith("response too large") for why in result.left.values())
    assert evaluator.cache is not None
    assert all(evaluator.cache.get(r) is None for r in requests)


def test_a_run_that_stopped_waiting_picks_its_batch_up(
    evaluator: Evaluator, fake_server: FakeOpenAIServer
) -> None:
    fake_server.control(batch_hold=True)
    with pytest.raises(BatchTimedOut, match=r"still in_progress .*rerun the same command"):
        _phase(evaluator, wait_s=0.3)
    records = BatchLedger(Path(evaluator.config.cache_dir or "") / FOLDER).records()
    assert len(records) == 1  # kept, with the requests it covers
    fake_server.control(batch_hold=False)
    result, requests = _phase(evaluator)
    assert result.picked_up == [records[0].id] and not result.submitted
    assert records[0].keys == {r.key for r in requests}
    assert fake_server.stats()["batch"]["created"] == 1
    _all_cached(evaluator, fake_server)


def test_an_endpoint_without_a_batch_api_is_one_line(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.control(batches=False)
        ev = Evaluator(EvalConfig(api_base=server.url, cache_dir=str(tmp_path)))
        try:
            with pytest.raises(BatchUnsupported) as info:
                _phase(ev)
        finally:
            ev.close()
        assert server.stats()["total"] == 0
    assert str(info.value) == (
        f"--reasoning-batch: openai/oracle at {server.url} has no batch API (POST /files: "
        "HTTP 404); run without --reasoning-batch"
    )


def test_a_rejected_batch_and_a_lost_one_are_one_line_each(
    evaluator: Evaluator, fake_server: FakeOpenAIServer
) -> None:
    fake_server.control(batch_reject=True)
    with pytest.raises(BatchUnsupported) as info:
        _phase(evaluator)
    assert str(info.value) == (
        f"--reasoning-batch: openai/oracle at {fake_server.url}: batch batch_000002 was "
        "rejected: Enqueued token limit reached for this model. Try again later."
    )
    ledger = BatchLedger(Path(evaluator.config.cache_dir or "") / FOLDER)
    assert not ledger.records()  # nothing ran: nothing to pick up
    # A recorded batch the endpoint does not know (another account's key, a reset server).
    requests = [evaluator.request_for(i, "openai/oracle") for i in _items(2)]
    where = normalise_api_base(fake_server.url)
    gone = BatchRecord("batch_gone", "openai/oracle", where, "openai", 0.0, tuple(requests))
    ledger.add(gone)
    with pytest.raises(BatchFailed) as lost:
        _phase(evaluator)
    assert str(lost.value).endswith(
        f"batch batch_gone is unknown there (HTTP 404); delete {ledger.path(gone)} to "
        "submit its requests again"
    )
    assert fake_server.stats()["total"] == 0 and fake_server.stats()["batch"]["created"] == 1


def test_a_damaged_record_is_refused_in_one_line(tmp_path: Path) -> None:
    ledger = BatchLedger(tmp_path)
    (tmp_path / "batch_1.json").write_text(json.dumps({"version": 1, "id": 7}))
    with pytest.raises(ReasoningError) as info:
        ledger.records()
    assert str(info.value).startswith(f"{tmp_path / 'batch_1.json'}: id: expected a string;")
    (tmp_path / "batch_1.json").write_text("{")
    with pytest.raises(ReasoningError, match=r"unreadable batch record .*delete it"):
        ledger.records()


def test_the_progress_line() -> None:
    progress = BatchProgress(asked=40)
    assert progress.line().startswith("submitting: 0/40 answered, ")
    progress.update("batch_1", "in_progress", 12, 1)
    assert progress.line().startswith("batch_1 in_progress: 12/40 answered, 1 failed, ")
    progress.collected("batch_1", 30)
    progress.update("batch_2", "validating", 0, 0)
    assert progress.line().startswith("batch_2 validating: 30/40 answered, ")


# -- creating a batch once -----------------------------------------------------------------------
@pytest.mark.parametrize("lost_as", ["502", "hang"])
def test_a_create_whose_answer_is_lost_is_looked_up_not_made_again(
    tmp_path: Path, fake_server: FakeOpenAIServer, lost_as: str
) -> None:
    """The endpoint creates each batch, then its answer is lost (a gateway's 502, or none
    until the client's timeout): the batch is found in the list by our tag, not created
    again (before: one batch per attempt, five in all, none recorded)."""
    fake_server.control(batch_lost_creates=5, batch_lost_as=lost_as)
    ev = Evaluator(EvalConfig(api_base=fake_server.url, cache_dir=str(tmp_path), timeout_s=2))
    try:
        result, requests = _phase(ev)
        stats = fake_server.stats()["batch"]
        assert (stats["files"], stats["created"], stats["sizes"]) == (1, 1, [len(requests)])
        assert stats["listed"] == 1 and result.submitted == ["batch_000002"]
        assert result.answered == len(requests) and not result.left
        if lost_as == "hang":  # the client gave up on the create: the timeout, not a reply
            assert [h["client_left"] for h in fake_server.stats()["hangs"]] == [True]
        _all_cached(ev, fake_server)
    finally:
        ev.close()
    assert not list((tmp_path / FOLDER).glob("*.json"))


def test_a_lost_create_the_list_cannot_show_is_picked_up_by_the_rerun(
    tmp_path: Path, fake_server: FakeOpenAIServer
) -> None:
    """The create's answer is lost and the list cannot be read: nothing is created again,
    the run stops with its record kept; the rerun finds the batch by its tag and collects
    it: one upload, one batch, across both runs."""
    fake_server.control(batch_lost_creates=1, batch_list_fail=100)
    ev = Evaluator(EvalConfig(api_base=fake_server.url, cache_dir=str(tmp_path), attempts=2))
    try:
        with pytest.raises(BatchFailed) as info:
            _phase(ev)
        [record] = BatchLedger(tmp_path / FOLDER).records()
        assert not record.id and record.tag and record.file_id  # recorded before the create
        text, path = str(info.value), BatchLedger(tmp_path / FOLDER).path(record)
        assert text.startswith(
            f"--reasoning-batch: openai/oracle at {fake_server.url}: POST /batches got no "
            "answer (HTTP 502: "
        )
        assert (
            f"and whether it made the batch tagged {record.tag} cannot be looked up (GET "
            "/batches failed (HTTP 502: "
        ) in text
        assert text.endswith(
            f"it stays recorded in {path}: rerun the same command to look again (delete that "
            "file only if you know no batch was made: one would then be paid twice)"
        )
        fake_server.control(batch_list_fail=0)
        result, requests = _phase(ev)
        assert result.picked_up == ["batch_000002"] and not result.submitted
        stats = fake_server.stats()["batch"]
        assert (stats["files"], stats["created"], stats["sizes"]) == (1, 1, [len(requests)])
        _all_cached(ev, fake_server)
    finally:
        ev.close()


def test_a_create_that_made_nothing_is_made_once_more_after_the_list_shows_none(
    tmp_path: Path, fake_server: FakeOpenAIServer
) -> None:
    """A 502 from a gateway before the API made no batch: the list shows none with our tag,
    so the create is tried again, from the same upload. When the list cannot be read the run
    stops; its rerun looks, finds none, and creates the batch from the recorded file."""
    fake_server.control(batch_create_fail=1)
    ev = Evaluator(EvalConfig(api_base=fake_server.url, cache_dir=str(tmp_path), attempts=2))
    try:
        result, requests = _phase(ev, n=2)
        stats = fake_server.stats()["batch"]
        assert (stats["files"], stats["created"], stats["listed"]) == (1, 1, 1)
        assert result.answered == len(requests) and len(result.submitted) == 1
        fake_server.control(reset=True, batch_create_fail=1, batch_list_fail=100)
        with pytest.raises(BatchFailed, match=r"got no answer .* cannot be looked up"):
            _phase(ev)
        fake_server.control(batch_list_fail=0)
        result, requests = _phase(ev)
        stats = fake_server.stats()["batch"]
        assert (stats["files"], stats["created"]) == (1, 1)  # no second upload
        assert len(result.picked_up) == 1 and not result.submitted
        assert result.answered == len(requests)
    finally:
        ev.close()


# -- the bill and the budget ---------------------------------------------------------------------
def test_what_a_batch_billed_is_the_spend(
    evaluator: Evaluator, fake_server: FakeOpenAIServer
) -> None:
    """Each line the endpoint ran is a call, answered or failed (two fail with HTTP 500 and
    are asked again), with the tokens its usage reports."""
    fake_server.control(batch_fail_lines=2)
    purse = BatchPurse()
    result, requests = _phase(evaluator, purse=purse)
    stats = fake_server.stats()["batch"]
    assert stats["lines"] == len(requests) + 2 and result.answered == len(requests)
    assert purse.spend.calls == {"openai/oracle": stats["lines"]}
    assert purse.spend.total_tokens == stats["tokens"] > 0
    assert purse.spend.line() == f"spent {stats['tokens']:,} tokens on {stats['lines']} call(s)"


def test_a_budget_submits_nothing_it_cannot_pay_for(
    evaluator: Evaluator, fake_server: FakeOpenAIServer
) -> None:
    """usd=0.001 and gpt-5-mini, whose requests allow thousands of output tokens: no
    request fits at its most, so nothing is uploaded or created (before: the batch ran and
    cost $0.375)."""
    purse = BatchPurse(Budget(usd=0.001), Spend())
    result, requests = _phase(evaluator, model="openai/gpt-5-mini", purse=purse)
    stats = fake_server.stats()["batch"]
    assert (stats["files"], stats["created"], stats["lines"]) == (0, 0, 0)
    assert result.refused == len(requests) and result.answered == 0 and not result.left
    assert not purse.spend.calls
    refusal = purse.refusal()
    assert refusal is not None and refusal.startswith(
        f"the budget usd=0.001 was reached: {len(requests)} batch request(s) not submitted, "
        "which could cost up to $"
    )


def test_a_tight_budget_is_never_overrun(tmp_path: Path, fake_server: FakeOpenAIServer) -> None:
    """tokens=2500 with max_tokens=1000: a batch holds only what the rest of the budget
    pays for at the most each request allows; once a batch is billed (far below that), the
    next round takes what now fits. What the endpoint billed stays within the budget."""
    ev = Evaluator(
        EvalConfig(api_base=fake_server.url, cache_dir=str(tmp_path), params={"max_tokens": 1000})
    )
    try:
        purse = BatchPurse(Budget(tokens=2500), Spend())
        result, requests = _phase(ev, purse=purse)
    finally:
        ev.close()
    stats = fake_server.stats()["batch"]
    assert len(stats["sizes"]) == MAX_ROUNDS and sum(stats["sizes"]) < len(requests)
    assert 0 < stats["tokens"] == purse.spend.total_tokens <= 2500
    assert result.answered == sum(stats["sizes"])
    assert result.refused == len(requests) - result.answered and not purse.held


def test_a_budget_needs_a_bound_on_what_a_request_costs(
    evaluator: Evaluator, fake_server: FakeOpenAIServer
) -> None:
    """An unknown model with no max_tokens could bill any number of tokens: under a budget
    that is one line, before anything is uploaded."""
    # A name no other test gives a Router: LiteLLM's Router registers its deployments' model
    # info process-wide, so after a router test `openai/oracle` would be a known model.
    with pytest.raises(BatchUnsupported, match=r"nothing bounds these requests' output"):
        _phase(evaluator, "openai/oracle-unbounded", purse=BatchPurse(Budget(tokens=1e6), Spend()))
    assert fake_server.stats()["batch"]["files"] == 0


# -- the plugin ----------------------------------------------------------------------------------
def _args(server: FakeOpenAIServer, *more: str, model: str = "openai/oracle") -> tuple[str, ...]:
    return ("-p", "no:cacheprovider", "-p", "no:randomly", "--llm", model,
            "--llm-api-base", server.url, "--reasoning-batch", *more)  # fmt: skip


@pytest.mark.e2e
def test_a_batch_run_asks_no_chat_request_and_a_rerun_nothing(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    results = mini_suite.path / "r.jsonl"
    first = mini_suite.runpytest_subprocess(*_args(fake_server, f"--reasoning-results={results}"))
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    first.stdout.fnmatch_lines(
        [
            "reasoning: batch: 8 requests without a cached answer, to the Batch API",
            "reasoning: batch: openai/oracle: 8/8 answered (batch_* submitted)",
            "*10 passed*",
        ]
    )
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rows) == 8 and all(r["correct"] for r in rows)
    stats = fake_server.stats()
    assert stats["total"] == 0 and stats["batch"]["created"] == 1
    # What the endpoint billed: its lines are the calls, their usage the tokens.
    assert stats["batch"]["lines"] == 8
    first.stdout.fnmatch_lines([f"reasoning: spent {stats['batch']['tokens']:,} tokens on 8 call(s)"])
    again = mini_suite.runpytest_subprocess(*_args(fake_server))
    assert again.ret == pytest.ExitCode.OK
    again.stdout.fnmatch_lines(["*every answer is in the cache, nothing to submit*"])
    assert "reasoning: spent" not in again.stdout.str()  # the cache is free
    stats = fake_server.stats()
    assert stats["total"] == 0 and stats["batch"]["created"] == 1


@pytest.mark.e2e
def test_a_run_that_ran_out_of_wait_or_was_killed_resumes_its_batch(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    fake_server.control(batch_hold=True)
    waited = mini_suite.runpytest_subprocess(*_args(fake_server, "--reasoning-batch-wait", "1"))
    assert waited.ret == pytest.ExitCode.INTERRUPTED
    kept = "it is kept in *batches: rerun the same command to pick it up"
    waited.stdout.fnmatch_lines(
        [f"*--reasoning-batch: openai/oracle at * batch_* is still in_progress (*); {kept}*"]
    )
    # Killed outright while it waits (the record was written before the first poll).
    folder = mini_suite.path / ".reasoning_cache" / FOLDER
    killed = subprocess.Popen(
        [sys.executable, "-m", "pytest", *_args(fake_server)],
        cwd=mini_suite.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 600  # a cap against a hang, not a speed claim
        while killed.poll() is None and fake_server.stats()["batch"]["created"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
    assert len(list(folder.glob("*.json"))) == 1
    fake_server.control(batch_hold=False)
    resumed = mini_suite.runpytest_subprocess(*_args(fake_server))
    assert resumed.ret == pytest.ExitCode.OK, resumed.stdout.str()
    stats = fake_server.stats()
    # The run that collects a batch counts what it billed.
    resumed.stdout.fnmatch_lines(
        [
            "*openai/oracle: 8/8 answered (batch_* picked up)*",
            f"reasoning: spent {stats['batch']['tokens']:,} tokens on 8 call(s)",
        ]
    )
    assert stats["batch"]["created"] == 1 and stats["total"] == 0  # no second submission
    assert not list(folder.glob("*.json"))


@pytest.mark.e2e
def test_a_batch_run_under_a_budget_submits_only_what_it_can_pay_for(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    """usd=0.001 cannot pay for one gpt-5-mini request at its most: nothing is uploaded,
    the run stops with the live run's budget lines, every sample not asked, exit 2 (before:
    the batch ran, $0.375, exit 0, no spend line). A budget that can pay submits it all and
    prints what the endpoint billed."""
    model = "openai/gpt-5-mini"
    tight = mini_suite.runpytest_subprocess(
        *_args(fake_server, "--reasoning-budget", "usd=0.001", model=model)
    )
    out = tight.stdout.str()
    assert tight.ret == pytest.ExitCode.INTERRUPTED, out
    reason = (
        "the budget usd=0.001 was reached: 8 batch request(s) not submitted, which could cost "
        "up to $* more (at batch prices, with all the output each allows)"
    )
    tight.stdout.fnmatch_lines(
        [
            "reasoning: batch: openai/gpt-5-mini: 0/8 answered; 8 not submitted (the budget "
            "cannot pay for them)",
            f"reasoning: {reason}: no more calls; what was paid is kept, the rest is not asked",
            f"reasoning: STOPPED: {reason}; levels cut short are not decided*",
        ]
    )
    assert "reasoning: spent" not in out  # nothing was
    stats = fake_server.stats()
    assert stats["total"] == 0 and stats["batch"]["files"] == stats["batch"]["lines"] == 0
    paid = mini_suite.runpytest_subprocess(
        *_args(fake_server, "--reasoning-budget", "usd=1", model=model)
    )
    assert paid.ret == pytest.ExitCode.OK, paid.stdout.str()
    stats = fake_server.stats()
    assert stats["total"] == 0 and stats["batch"]["lines"] == 8
    paid.stdout.fnmatch_lines(
        [f"reasoning: spent $0.0* and {stats['batch']['tokens']:,} tokens on 8 call(s) (*% of usd=1)"]
    )


@pytest.mark.e2e
def test_a_lost_create_makes_one_batch_across_the_run_and_its_rerun(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    """The create answers 502 after making the batch, and the list cannot be read: the run
    stops (exit 2) with the batch recorded by its tag; the rerun finds it and collects it.
    One upload and one batch in all (before: 5 batches, none recorded, and a 6th)."""
    fake_server.control(batch_lost_creates=1, batch_list_fail=100)
    lost = mini_suite.runpytest_subprocess(*_args(fake_server, "--reasoning-retries", "2"))
    assert lost.ret == pytest.ExitCode.INTERRUPTED, lost.stdout.str()
    lost.stdout.fnmatch_lines(
        ["*POST /batches got no answer (HTTP 502: *), and whether it made the batch tagged * "
         "cannot be looked up (*); it stays recorded in *: rerun the same command to look "
         "again*"]
    )  # fmt: skip
    fake_server.control(batch_list_fail=0)
    again = mini_suite.runpytest_subprocess(*_args(fake_server))
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()
    again.stdout.fnmatch_lines(["*openai/oracle: 8/8 answered (batch_000002 picked up)*"])
    stats = fake_server.stats()
    assert (stats["batch"]["files"], stats["batch"]["created"], stats["total"]) == (1, 1, 0)
    assert not list((mini_suite.path / ".reasoning_cache" / FOLDER).glob("*.json"))


@pytest.mark.e2e
def test_an_endpoint_without_a_batch_api_stops_the_run_in_one_line(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    fake_server.control(batches=False)
    result = mini_suite.runpytest_subprocess(*_args(fake_server))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*openai/oracle at * has no batch API (POST /files: HTTP 404)*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert fake_server.stats()["total"] == 0


@pytest.mark.parametrize(
    ("more", "line"),
    [
        (("--reasoning-cache", "off"), "--reasoning-batch: needs a cache folder *'off' keeps none"),
        (("-n", "2"), "--reasoning-batch: not with -n/--dist *"),
        (("--llm", "local"), "--reasoning-batch: local is the embedded server, which has no *"),
    ],
    ids=["cache-off", "xdist", "local"],
)
def test_what_batch_mode_refuses(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer, more: tuple[str, ...], line: str
) -> None:
    result = mini_suite.runpytest(*_args(fake_server, *more), PLAIN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {line}"])
    assert fake_server.stats()["batch"]["files"] == 0


def test_collect_only_submits_nothing(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    result = mini_suite.runpytest(*_args(fake_server, "--collect-only", "-q"), PLAIN)
    assert result.ret == pytest.ExitCode.OK
    assert fake_server.stats()["batch"] == {
        "files": 0, "created": 0, "lines": 0, "cancelled": 0, "tokens": 0, "listed": 0,
        "sizes": [],
    }  # fmt: skip


def test_no_key_is_written_beside_the_cache(
    evaluator: Evaluator, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-batch-secret-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    fake_server.control(batch_hold=True)
    with pytest.raises(BatchTimedOut):
        _phase(evaluator, wait_s=0.3)  # the record of a batch in flight, on disk
    folder = Path(evaluator.config.cache_dir or "")
    assert list((folder / FOLDER).glob("*.json"))
    fake_server.control(batch_hold=False)
    _phase(evaluator)
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert files and not any(secret.encode() in p.read_bytes() for p in files)


@pytest.mark.e2e
def test_sequential_levels_are_left_to_the_run(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    """A batch cannot stop early: the samples of a sequential level are asked live, in
    order, and the batch holds the other levels' only."""
    pytester.makefile(
        ".yaml",
        mixed="""\
seed: 1
samples: 4
tasks:
  - {task: dyval.arithmetic, levels: [D1], min_accuracy: 0.5}
  - {task: dyval.boolean_logic, levels: [D1], min_accuracy: 0.5, sequential: true}
""",
    )
    result = pytester.runpytest_subprocess(*_args(fake_server))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "reasoning: batch: 4 samples of sequential levels are asked live, in order (a batch "
            "cannot stop early)",
            "reasoning: batch: openai/oracle: 4/4 answered (batch_* submitted)",
        ]
    )
    stats = fake_server.stats()
    assert stats["batch"]["sizes"] == [4] and 0 < stats["total"] <= 4


def test_the_ini_keys(mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer) -> None:
    bad = mini_suite.runpytest("--llm", "reference", "--reasoning-batch-wait", "nan", PLAIN)
    bad.stderr.fnmatch_lines(["ERROR: --reasoning-batch-wait: expected a positive number *"])
    mini_suite.makeini(
        "[pytest]\nreasoning_batch = true\nreasoning_batch_wait = 60\nreasoning_cache = off\n"
    )
    result = mini_suite.runpytest(
        "--llm", "openai/oracle", "--llm-api-base", fake_server.url, PLAIN
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --reasoning-batch: needs a cache folder *"])
