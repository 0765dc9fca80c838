"""The narrator (``pytest-reasoning narrate``): MuSR chapters written by a model over real HTTP
(the project's test server acting as a narrator), validated, retried with the failure named
or dropped; the cache replays a run byte for byte; gold answers survive narration."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_reasoning.cli import main
from pytest_reasoning.core import Item
from pytest_reasoning.datasets import read_dataset
from pytest_reasoning.evaluate import EvalConfig, Evaluator
from pytest_reasoning.narrate import (
    NarrateOptions,
    Narration,
    assemble,
    inspect,
    narrate_items,
    planner_for,
)
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.musr import solver
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer

MUSR = ("musr.murder_mystery", "musr.object_placement", "musr.team_allocation")
SOLVERS = {
    "musr.murder_mystery": solver.solve_murder,
    "musr.object_placement": solver.solve_placement,
    "musr.team_allocation": solver.solve_teams,
}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def _evaluator(srv: FakeOpenAIServer, cache: Path | None = None) -> Evaluator:
    return Evaluator(EvalConfig(api_base=srv.url, cache_dir=str(cache) if cache else None))


def _narrate(srv: FakeOpenAIServer, model: str, items: list[Item], **kw: Any) -> Narration:
    evaluator = _evaluator(srv)
    summary = Narration()
    try:
        results = list(narrate_items(items, evaluator, NarrateOptions(f"openai/{model}", **kw)))
    finally:
        evaluator.close()
    for r in results:
        summary.add(r)
    summary.results = results  # type: ignore[attr-defined]
    return summary


def _items(task_id: str, count: int = 2, level: str = "L1") -> list[Item]:
    return [make_item(get_task(task_id), level, 7, i) for i in range(count)]


# -- the validators on the template's own chapters ---------------------------------------------
# The validators cost most of it (every fact's entities against every chapter): the inner loop
# reads 2 problems a level, the e2e twin 6.
@pytest.mark.parametrize("count", [2, pytest.param(6, marks=pytest.mark.e2e)])
@pytest.mark.parametrize("task_id", MUSR)
def test_template_chapters_pass_every_deterministic_validator(task_id: str, count: int) -> None:
    """The plan is the template story cut at its chapter spans: put back together it is the
    same story, and each template chapter passes the narrator's validators (none of them
    rejects what the task itself writes)."""
    task = get_task(task_id)
    for level in task.levels:
        for index in range(count):
            item = make_item(task, level, 11, index)
            plan = planner_for(task_id).plan(item)
            story, spans = item.problem["story"], item.problem["chapters"]
            texts = [story[slice(*spans[c.name])] for c in plan.chapters]
            assert assemble(plan, texts) == (story, spans)
            for chapter, text in zip(plan.chapters, texts, strict=True):
                if chapter.fixed:
                    continue
                verdict = inspect(text, chapter, plan)
                assert verdict.deterministic_ok, (item.id, chapter.name, verdict.to_dict())


def _plan_and_chapter(task_id: str, n: int = 0) -> tuple[Any, Any, str]:
    item = make_item(get_task(task_id), "L1", 3, 0)
    plan = planner_for(task_id).plan(item)
    chapter = [c for c in plan.chapters if not c.fixed][n]
    return plan, chapter, " ".join(f"{f}." for f in chapter.facts)


def test_each_validator_rejects_what_it_names() -> None:
    plan, chapter, good = _plan_and_chapter("musr.murder_mystery")
    assert inspect(good, chapter, plan).deterministic_ok
    suspect = chapter.name
    leak = inspect(good + f" That gave {suspect} a motive.", chapter, plan)
    assert leak.failures() == ["leak"] and leak.leaks == ["it says 'motive'"]
    gold = chapter.conclusions[0]
    stated = inspect(good + f" {gold}.", chapter, plan)
    assert any(x.startswith("it states") for x in stated.leaks)
    stranger = inspect(good + " Later, Zebulon Quimby came by with Sarah.", chapter, plan)
    assert stranger.strangers == ["Zebulon", "Quimby", "Sarah"]
    weapon = make_item(get_task("musr.murder_mystery"), "L1", 3, 0).problem["weapon"]
    assert chapter.outside and chapter.outside[0] in weapon  # never in a suspect's facts
    outside = inspect(good + f" A {chapter.outside[0]} lay on the table.", chapter, plan)
    assert outside.failures() == ["outside"]
    first = chapter.facts[0]
    missing = inspect(good.replace(suspect, "someone"), chapter, plan)
    assert "entities" in missing.failures() and missing.facts[0].fact == first
    assert suspect in missing.facts[0].missing
    assert inspect("", chapter, plan).failures()[0] == "empty"
    assert "cut" in inspect(good, chapter, plan, cut=True).failures()


def test_placement_chapter_keeps_to_its_move() -> None:
    plan, chapter, good = _plan_and_chapter("musr.object_placement")
    assert inspect(good, chapter, plan).deterministic_ok
    assert chapter.outside, "a move's chapter may not name the other items and places"
    other = inspect(good + f" Someone glanced at {chapter.outside[0]}.", chapter, plan)
    assert other.outside == [chapter.outside[0]]
    saw = inspect(good + " Everyone saw it happen.", chapter, plan)
    assert saw.leaks == ["it says 'saw'"]


def test_times_and_names_match_in_any_spelling() -> None:
    plan, chapter, good = _plan_and_chapter("musr.murder_mystery")
    spelled = re.sub(r"(\d) ([ap])m\b", r"\1\2.m.", good)
    assert spelled != good
    assert not any(f.missing for f in inspect(spelled, chapter, plan).facts)


# -- over HTTP: accepted, retried, dropped ------------------------------------------------------
# One story in the inner loop (the command's tests below narrate two at once), two e2e.
@pytest.mark.parametrize("count", [1, pytest.param(2, marks=pytest.mark.e2e)])
@pytest.mark.parametrize("task_id", MUSR)
def test_a_narrator_that_states_every_fact_is_accepted(
    server: FakeOpenAIServer, task_id: str, count: int
) -> None:
    items = _items(task_id, count)
    summary = _narrate(server, "narrator", items)
    dropped = sum(summary.dropped.values())
    assert (summary.kept, summary.kept_first_try, dropped) == (count, count, 0)
    facts = sum(len(c.facts) for item in items for c in planner_for(task_id).plan(item).chapters)
    assert summary.questions == facts  # one yes/no question per fact, the paper's check
    for item, result in zip(items, summary.results, strict=True):  # type: ignore[attr-defined]
        row = result.row
        problem = row["problem"]
        # The symbolic answer is unchanged: Φ over the exported facts, written apart.
        assert SOLVERS[task_id](problem) == problem["answer_index"] == item.problem["answer_index"]
        assert row["id"] == item.id and row["answer"] == hooks.export_answer(get_task(task_id),
            item.answer
        )
        kept = {k: v for k, v in problem.items() if k not in ("story", "chapters")}
        assert kept == {k: v for k, v in item.problem.items() if k not in ("story", "chapters")}
        assert problem["story"] != item.problem["story"]
        assert row["prompt"] == item.prompt.replace(item.problem["story"], problem["story"])
        narration = row["narration"]
        assert narration["narrator"]["model"] == "openai/narrator"
        assert narration["template_prompt_sha256"] == item.prompt_sha256
        for chapter in narration["chapters"]:
            assert [a["passed"] for a in chapter["attempts"]] == [True]
            assert len(chapter["attempts"][0]["prompt_sha256"]) == 64


@pytest.mark.parametrize("count", [1, pytest.param(2, marks=pytest.mark.e2e)])
def test_a_missed_fact_is_named_in_the_retry_and_then_stated(
    server: FakeOpenAIServer, count: int
) -> None:
    summary = _narrate(server, "narrator-miss", _items("musr.murder_mystery", count))
    assert (summary.kept, summary.kept_first_try) == (count, 0)
    # Every chapter's first draft (two chapters a story), caught by the judge.
    assert summary.failed == {"judge": 2 * count}
    for result in summary.results:  # type: ignore[attr-defined]
        for chapter in result.row["narration"]["chapters"]:
            first, second = chapter["attempts"]
            assert first["failed"] == ["judge"] and not second["failed"]
            assert first["facts_stated"] == first["facts"] - 1
            assert first["not_stated"][0]["judge"] == "no"


@pytest.mark.parametrize(
    ("model", "validator"), [("narrator-leak", "leak"), ("narrator-stranger", "stranger")]
)
def test_a_chapter_that_cannot_pass_drops_its_problem(
    server: FakeOpenAIServer, model: str, validator: str
) -> None:
    before = server.stats()["requests"].get(model, 0)
    summary = _narrate(server, model, _items("musr.team_allocation"), attempts=3)
    assert summary.kept == 0 and summary.dropped == {validator: 2}
    assert summary.attempts == 6 and summary.questions == 0  # no question for a rejected draft
    for result in summary.results:  # type: ignore[attr-defined]
        assert result.row is None and result.chapter == result.item.problem["people"][0]
    # Three real calls per story: a retry is its own sample, never the rejected one replayed.
    assert server.stats()["requests"][model] - before == 6


# -- the command: cache replay, errors ----------------------------------------------------------
# Each story costs about 45 HTTP requests (chapters, retries, a judge question per fact),
# ~12 ms of CPU each through LiteLLM: tests narrate as few stories as their point needs.
def _cli(
    server: FakeOpenAIServer, tmp_path: Path, out: str, *more: str, count: int = 3
) -> list[str]:
    return [
        "narrate", "musr.object_placement", "--level", "L1", "--count", str(count), "--seed", "2",
        "--llm", "openai/narrator-miss", "--llm-api-base", server.url,
        "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / out), *more,
    ]  # fmt: skip


def test_second_run_makes_no_call_and_writes_the_same_bytes(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_cli(server, tmp_path, "a.jsonl", count=2)) == 0
    first = capsys.readouterr()
    calls = server.stats()["total"]
    assert main(_cli(server, tmp_path, "b.jsonl", count=2)) == 0
    second = capsys.readouterr()
    assert server.stats()["total"] == calls  # zero HTTP requests
    a, b = (tmp_path / "a.jsonl").read_bytes(), (tmp_path / "b.jsonl").read_bytes()
    assert a == b and a.count(b"\n") == 2
    assert "0 from the cache" in first.out and ", 0 made now" in second.out
    assert "narrate: 2/2 musr.object_placement[L1-s2-001] kept (3 retries)" in second.err
    assert "narrated 2 problems: 2 kept (0 without a retry), 0 dropped" in second.out
    assert "fact recall: the model's yes/no check said a fact is not stated: 6" in second.out
    items = read_dataset(tmp_path / "a.jsonl").items
    assert [i.id for i in items] == [f"musr.object_placement[L1-s2-00{k}]" for k in range(2)]


def test_narrate_shares_a_runs_redis_cache(
    server: FakeOpenAIServer,
    redis_server: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``narrate`` takes a run's cache options (``runs.RunConfig``): a shared Redis cache
    alone (``--cache-local off``), so a second narration in another folder asks nothing."""
    import redis

    redis.Redis.from_url(redis_server.url).flushdb()
    shared = ["--cache", redis_server.url, "--cache-local", "off"]
    first = _cli(server, tmp_path, "a.jsonl", count=1)
    first[first.index("--cache") : first.index("--cache") + 2] = shared
    assert main(first) == 0
    capsys.readouterr()
    calls = server.stats()["total"]
    assert calls > 0
    other = tmp_path / "elsewhere"
    other.mkdir()
    second = [a.replace(str(tmp_path / "a.jsonl"), str(other / "b.jsonl")) for a in first]
    assert main(second) == 0
    assert server.stats()["total"] == calls  # every answer from Redis: zero HTTP requests
    assert ", 0 made now" in capsys.readouterr().out
    assert not (tmp_path / "cache").exists()  # no local layer
    assert (tmp_path / "a.jsonl").read_bytes() == (other / "b.jsonl").read_bytes()


def test_price_as_prices_the_runs_tokens(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _cli(server, tmp_path, "p.jsonl", "--price-as", "gpt-4o-mini", count=1)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "cost: not priced (openai/narrator-miss" in out and "; as gpt-4o-mini: $0.0" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dyval.arithmetic", "--level", "D1", "--llm", "x"], "no narrator plan for "
         "dyval.arithmetic; narratable tasks: musr.murder_mystery, musr.object_placement, "
         "musr.team_allocation"),
        (["musr.murder_mystery", "--level", "L9", "--llm", "x"], "unknown level 'L9'"),
        (["musr.murder_mystery", "--level", "L1", "--llm", "reference"], "--llm: 'reference' "
         "writes no text; name a language model"),
        (["musr.murder_mystery", "--level", "L1", "--llm", "x", "--attempts", "0"],
         "--attempts and --stories-at-once: must be >= 1"),
        (["musr.murder_mystery", "--level", "L1", "--llm", "x", "--price-as", "nope/nope"],
         "--price-as nope/nope: not in LiteLLM's price map"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["narrate", *args, "--out", str(tmp_path / "o.jsonl")]) == 4
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not (tmp_path / "o.jsonl").exists()


def test_a_model_that_cannot_answer_stops_the_run_with_its_cause(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _cli(server, tmp_path, "x.jsonl")
    args[args.index("openai/narrator-miss")] = "openai/bad-key"
    assert main(args) == 6  # infrastructure, as a pytest run
    err = capsys.readouterr().err
    assert "--llm openai/bad-key: AuthenticationError" in err and "infrastructure" in err
    assert not (tmp_path / "x.jsonl").exists() and not list(tmp_path.glob(".*.tmp"))


def test_no_story_kept_writes_nothing_and_fails_in_one_line(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every story dropped (each draft leaks a banned word): the command used to exit 0 with
    an empty file in place of the old one; now one line, exit 1, the old file untouched."""
    (tmp_path / "keep.jsonl").write_text("an older, good file\n")
    args = _cli(server, tmp_path, "keep.jsonl", "--attempts", "1")
    args[args.index("openai/narrator-miss")] = "openai/narrator-leak"
    assert main(args) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("pytest-reasoning: error: narrate: no story was kept (narrated 3")
    assert "nothing written to" in err[-1]
    assert (tmp_path / "keep.jsonl").read_text() == "an older, good file\n"


# -- narrated files are items: the shortcut rules run on them ----------------------------------
@pytest.mark.parametrize("count", [1, pytest.param(3, marks=pytest.mark.e2e)])
def test_narrated_items_feed_the_shortcut_rules(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], count: int
) -> None:
    """What ``pytest-reasoning audit`` needs: items read back from the file, each rule and
    each choice's text computed on the narrated story (one story inner, three e2e)."""
    args = _cli(server, tmp_path, "s.jsonl", count=count)
    args[args.index("musr.object_placement")] = "musr.murder_mystery"
    assert main(args) == 0
    task = get_task("musr.murder_mystery")
    items = read_dataset(tmp_path / "s.jsonl").items
    assert len(items) == count
    for item in items:
        texts = hooks.choice_texts(task, item)
        assert set(texts) == set(item.problem["choices"])
        assert all(t and t in item.problem["story"] for t in texts.values())
        for rule in hooks.shortcuts(task):
            assert rule.guess(item) in item.problem["choices"]


# -- the embedded model, end to end -------------------------------------------------------------
@pytest.mark.e2e
@pytest.mark.needs_local_model
def test_the_embedded_model_narrates_end_to_end(tmp_path: Path) -> None:
    """Two stories with SmolLM2 through the CLI (quality irrelevant: the path must work)."""
    out = tmp_path / "local.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", "narrate", "musr.team_allocation",
         "--level", "L1", "--count", "2", "--llm", "local", "--attempts", "1",
         "--llm-param", "max_tokens=96", "--cache", str(tmp_path / "cache"), "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert "narrate: 2/2 musr.team_allocation[L1-s1-001]" in run.stderr, run.stderr
    if run.returncode == 1:  # a 135M model at 96 tokens a chapter may keep nothing: it says so
        assert "error: narrate: no story was kept (narrated 2 problems: 0 kept" in run.stderr
        assert not out.exists()  # no empty file passed off as a dataset
        return
    assert run.returncode == 0, run.stderr
    assert "narrated 2 problems:" in run.stdout and "cost: not priced (local" in run.stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows
    for row in rows:  # whatever it kept reads back, narrated by the GGUF it names
        assert row["narration"]["narrator"]["model_id"].startswith("local=")
    assert len(read_dataset(out).items) == len(rows)


# -- a property: any honest chapter passes -----------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_FILLER = ("The afternoon dragged on.", "It had started to rain.", "Nobody said much for a while.",
           "A kettle whistled somewhere.", "The light was fading outside.")  # fmt: skip


# A sweep (many generated items or examples): CI runs it, the inner loop does not.
@pytest.mark.e2e
@settings(max_examples=60, deadline=None)
@given(
    task_id=st.sampled_from(MUSR),
    index=st.integers(0, 40),
    order=st.randoms(use_true_random=False),
    filler=st.lists(st.sampled_from(_FILLER), max_size=4),
)
def test_any_chapter_that_states_its_facts_passes(
    task_id: str, index: int, order: Any, filler: list[str]
) -> None:
    """Its facts in any order, with everyday sentences between them, in one paragraph or
    several: the deterministic validators accept it (they judge content, not layout)."""
    item = make_item(get_task(task_id), "L2", 5, index)
    plan = planner_for(task_id).plan(item)
    for chapter in plan.chapters:
        if chapter.fixed:
            continue
        said = [f"{f.rstrip('.')}." for f in chapter.facts] + filler
        order.shuffle(said)
        text = "\n\n".join(" ".join(said[i : i + 3]) for i in range(0, len(said), 3))
        verdict = inspect(text, chapter, plan)
        assert verdict.deterministic_ok, (item.id, chapter.name, verdict.to_dict())


def test_llm_config_aliases_name_the_narrator_and_the_judge(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "models.yaml"
    config.write_text(
        "model_list:\n"
        f"  - model_name: writer\n    litellm_params:\n      model: openai/narrator-miss\n"
        f"      api_base: {server.url}\n"
        f"  - model_name: checker\n    litellm_params:\n      model: openai/narrator\n"
        f"      api_base: {server.url}\n"
    )
    before = server.stats()["requests"]
    args = [
        "narrate", "musr.team_allocation", "--level", "L1", "--count", "1",
        "--llm-config", str(config), "--llm", "writer", "--judge", "checker",
        "--cache", "off", "--out", str(tmp_path / "t.jsonl"),
    ]  # fmt: skip
    assert main(args) == 0
    after = server.stats()["requests"]
    asked = {m: after.get(m, 0) - before.get(m, 0) for m in ("narrator-miss", "narrator")}
    assert asked == {"narrator-miss": 6, "narrator": 36}  # 3 chapters x 2 drafts; 6+6 facts x 3
    narration = json.loads((tmp_path / "t.jsonl").read_text())["narration"]
    assert narration["narrator"]["model_id"] == f"writer=openai/narrator-miss@{server.url}"
    assert narration["judge"]["model_id"] == f"checker=openai/narrator@{server.url}"
    assert "0 from the cache" in capsys.readouterr().out
