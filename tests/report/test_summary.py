"""The summary: truncation and its remedy, whose token limit it was, and family breakdowns
that count what the gate counted."""

from __future__ import annotations

from pathlib import Path

from results_rows import truncated_outcomes

from pytest_reasoning.core import Outcome, Reply
from pytest_reasoning.evaluate import EvalConfig, Evaluator, score_reply
from pytest_reasoning.gates import GateRule, GateSpec, Ledger
from pytest_reasoning.gates.verdicts import Verdict
from pytest_reasoning.registry import get_task
from pytest_reasoning.report import RunSummary, summary_lines
from pytest_reasoning.report.tables import breakdowns, levels_table
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer


def test_truncation_is_in_the_summary_and_the_failed_gate_names_the_remedy() -> None:
    ledger = Ledger(hint="-")
    spec = GateSpec("s.yaml", "dyval.arithmetic", "D1", GateRule(min_accuracy=0.5))
    ledger.plan("gpt-5", spec, "dyval.arithmetic", 6, gate_id="s.yaml::dyval.arithmetic[D1-gate]")
    decided: list[Verdict] = []
    for outcome in truncated_outcomes("dyval.arithmetic", "D1", 6):
        decided += ledger.add(outcome, spec)[0]
    assert [v.outcome for v in decided] == ["failed"]
    assert decided[0].message.endswith(
        "; 6 of 6 cut off at the token limit (max_completion_tokens 1024): raise it with "
        "--llm-param max_completion_tokens=N"
    )
    run = RunSummary(levels=list(ledger.levels.values()), gates=ledger.gates)
    text = [line.text for line in summary_lines(run)]
    assert text[0].index("unanswered") == text[2].index("1.00 ")  # the column's value
    assert text[0].index("failure modes") == text[2].index("truncated 6")
    assert any("6 of 6 cut off at the token limit" in t for t in text)
    # The report's Levels table gives the same reason as the terminal and JUnit.
    reasons = [row[-1] for row in levels_table(run.levels, run.gates, reasons=True).rows]
    assert reasons == [decided[0].message.partition(": ")[2]]


def _gate_message(content: str, default: bool) -> str:
    ledger = Ledger(hint="-")
    spec = GateSpec("s.yaml", "dyval.arithmetic", "D1", GateRule(min_accuracy=0.5))
    ledger.plan("local", spec, "dyval.arithmetic", 5, gate_id="s.yaml::dyval.arithmetic[D1-gate]")
    decided: list[Verdict] = []
    for index in range(5):
        item = make_item(get_task("dyval.arithmetic"), "D1", 1, index)
        outcome = score_reply(item, "local", Reply(content=content, finish_reason="length"))
        limit = {"token_limit": ["max_tokens", 256]} | ({"token_limit_default": True} if default else {})
        row = {**outcome.to_dict(), "extra": {**outcome.extra, **limit}}
        decided += ledger.add(Outcome.from_dict(row), spec)[0]
    assert [v.outcome for v in decided] == ["failed"]
    return decided[0].message


def test_a_failed_gate_says_when_the_token_limit_was_ours_and_when_the_model_looped() -> None:
    """A first run on the embedded model: the limit it was cut at is pytest-reasoning's
    default, not the user's; and a reply that repeats itself would not end at any limit."""
    cut = _gate_message("First, 3 + 4 = 7. Then 7 * 2 = 14. Then 14 - 5 = 9, and 9 / 3 = 3. So", True)
    assert cut.endswith(
        "; 5 of 5 cut off at the token limit (max_tokens 256, pytest-reasoning's default): "
        "raise it with --llm-param max_tokens=N"
    )
    looped = _gate_message("The answer is 1.\n\n" * 30, True)
    assert looped.endswith(
        "; 5 of 5 cut off at the token limit (max_tokens 256, pytest-reasoning's default), 5 of "
        "them repeating themselves in a loop that a higher limit would not end"
    )
    given = _gate_message("The answer is 1.\n\n" * 30, False)  # --llm-param max_tokens=256
    assert "(max_tokens 256), 5 of them repeating themselves" in given


def test_a_truncated_reply_records_its_limit_as_ours_only_when_the_user_set_none(
    tmp_path: Path, fake_server: FakeOpenAIServer
) -> None:
    """Over HTTP, a reply cut off at ``--llm-param max_tokens=64`` records that limit and not
    as our default; the client, not the evaluator's look at its class, says whose a parameter
    is (without the user's parameter, it is not theirs)."""
    item = make_item(get_task("dyval.arithmetic"), "D1", 1, 0)
    for params, default in (({"max_tokens": 64}, False), ({}, True)):
        ev = Evaluator(EvalConfig(api_base=fake_server.url, cache_dir=None, params=params))
        try:
            assert ev.client("openai/loop").set_by_user("max_tokens") is not default
            if default:
                continue  # openai/loop is unknown to LiteLLM: we set it no limit to cut at
            outcome = ev.answer(item, "openai/loop")
        finally:
            ev.close()
        assert outcome.failure_mode == "truncated"
        assert outcome.extra["token_limit"] == ["max_tokens", 64]
        assert "token_limit_default" not in outcome.extra


def test_flenqa_length_table_counts_truncated_samples_like_the_gate() -> None:
    """6 of 12 samples truncated: the table used to drop them (0.50 where the gate said
    0.25)."""
    task = get_task("flenqa.monorel")
    rows = []
    for index in range(6):
        item = make_item(task, "250", 1, index)
        rows.append(score_reply(item, "m", Reply(content=f"<<<{task.solve(item)}>>>")).to_dict())
    for index in range(6):
        item = make_item(task, "250", 1, 6 + index)
        reply = Reply(content="Let me think", finish_reason="length")
        rows.append(score_reply(item, "m", reply).to_dict())
    (table,) = breakdowns(rows)  # the family's own table: FLenQA by length
    assert table.title == "accuracy by input length (FLenQA)"
    assert table.rows[0][4] == "0.50 (12)"
    assert table.chart is not None and table.chart.panels[0].lines[0][1] == (0.5,)
    ledger = Ledger(hint="-")
    spec = GateSpec("s.yaml", "flenqa.monorel", "250")
    for r in rows:
        ledger.add(Outcome.from_dict(r), spec)
    (stats,) = ledger.levels.values()
    assert stats.n == 12 and stats.accuracy == 0.5


def test_zebra_buckets_break_down_by_size_every_answered_row_counted() -> None:
    """A bucket level holds several sizes: ZebraLogic's own breakdown reads each row's size
    (from the scorer's facts, or from the item's knobs for a truncated reply)."""
    task = get_task("zebra.grid")
    rows = []
    for index in range(4):  # Small: 2x2, 2x3, 2x4, 2x5 in turn
        item = make_item(task, "Small", 1, index)
        reply = Reply(content=hooks.reference_response(task, item))
        if index == 1:
            reply = Reply(content="Let me", finish_reason="length")
        rows.append(score_reply(item, "m", reply).to_dict())
    (table,) = breakdowns(rows)
    assert table.title == "accuracy by puzzle size (ZebraLogic)"
    assert [(r[1], r[2], r[3]) for r in table.rows] == [
        ("2x2", "1", "1.00"), ("2x3", "1", "0.00"), ("2x4", "1", "1.00"), ("2x5", "1", "1.00"),
    ]  # fmt: skip
