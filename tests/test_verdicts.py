"""Sound verdicts (issue 29): rows read from files are type-checked, one verdict ledger decides
a live run and a merge alike (a merge that lacks part of a level or of a Holm family says "not
decided", never a weaker verdict), failure modes reach the summary, every figure uses the
gate's denominator, suites stay apart, and outputs that were not written fail the command."""

from __future__ import annotations

import json
import math
import random
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_reasoning.cli import main
from pytest_reasoning.config import addresses, load_suite
from pytest_reasoning.core import Outcome, Reply
from pytest_reasoning.errors import ReasoningError
from pytest_reasoning.evaluate import EvalConfig, Evaluator, score_reply
from pytest_reasoning.gates import RESULT_FIELDS, GateRule, GateSpec, Ledger, load_results
from pytest_reasoning.gates.verdicts import Verdict, comparison_name, gate_name
from pytest_reasoning.merge import merge
from pytest_reasoning.registry import get_task, problem_key
from pytest_reasoning.report import RunSummary, summary_lines
from pytest_reasoning.report.summary import closing_lines
from pytest_reasoning.report.tables import breakdowns, levels_table
from pytest_reasoning.stats import wilson_interval
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer

SUITE = """\
name: prop
seed: 3
samples: 6
tasks:
  - task: dyval.boolean_logic
    levels:
      D1: {min_accuracy: 0.5}
      D2: {min_accuracy: 0.6}
  - task: dyval.arithmetic
    levels:
      D1: {min_accuracy: 0.5}
"""


_BASES: dict[str, tuple[tuple[Any, ...], ...]] = {}


def _suite_rows_base(folder: str) -> tuple[tuple[Any, ...], ...]:
    """(address fields, prompt hash, gold) of every sample of the folder's prop.yaml, the items
    built once per suite text: the rows do not depend on the folder (each Hypothesis example
    has a folder of its own)."""
    path = Path(folder) / "prop.yaml"
    text = path.read_text()
    if text not in _BASES:
        out = []
        for a in addresses(load_suite(path, display="prop.yaml")):
            item = a.make_item()
            out.append((a.sample_id, a.entry.id, a.entry.task, a.level.level, a.seed,
                        item.prompt_sha256, item.answer))  # fmt: skip
        _BASES[text] = tuple(out)
    return _BASES[text]


def _row(base: tuple[Any, ...], model: str, verdict: bool | None) -> dict[str, Any]:
    """A row as a run writes it: the gold answer when right, an unreadable one when wrong (a
    merge re-scores every row, and refuses one whose verdict is not its response's)."""
    sample_id, entry, task, level, seed, sha, gold = base
    said = None if verdict is None else gold if verdict else "x"
    outcome = Outcome(
        sample_id, model, task, level, seed, sha, None if said is None else f"<<<{said}>>>",
        said, gold, verdict, None if verdict in (True, None) else "format",
        "HTTP 500" if verdict is None else None, 10, 2, 0.1,
        suite="prop.yaml", entry=entry, error_kind="transient" if verdict is None else None,
    )  # fmt: skip
    row = outcome.to_dict()
    return {k: row[k] for k in RESULT_FIELDS}


def _write(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture
def suite_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "prop.yaml").write_text(SUITE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _gate(args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["gate", *args])
    out, err = capsys.readouterr()
    return code, out, err


# -- 1. a verdict read from a file type-checks what it reads -----------------------------------
@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("correct", "false", "correct: expected true or false (error is null), got \"false\""),
        ("correct", math.nan, "correct: expected true or false (error is null), got NaN"),
        ("score", math.nan, "score: expected a number from 0 to 1, or null, got NaN"),
        ("latency_s", "fast", "latency_s: expected a number of seconds >= 0"),
        ("error_kind", "gremlins", "error_kind: expected one of stop, request, transient"),
        ("repeat", 3, "repeat: expected below repeats (1), got 3"),
        ("item_id", 7, "item_id: expected text, got 7"),
        ("not_needed", "yes", "not_needed: expected true or false, got \"yes\""),
        ("reasoning_text", ["think"], 'reasoning_text: expected text or null, got ["think"]'),
    ],
)
def test_a_row_of_the_wrong_type_stops_the_gate_in_one_line(
    suite_dir: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any, expected: str
) -> None:
    """``"correct": "false"`` used to count as correct (every gate passed, exit 0)."""
    rows = [_row(b, "m", False) for b in _suite_rows_base(str(suite_dir))]
    rows[4][field] = value
    _write(suite_dir / "r.jsonl", rows)
    code, out, err = _gate(["prop.yaml", "--results", "r.jsonl"], capsys)
    assert code == 4
    assert err.startswith("pytest-reasoning: error: r.jsonl:5: " + expected), err
    assert err.count("\n") == 1 and "PASSED" not in out and "FAILED" not in out


@pytest.mark.parametrize("kind", ["deep", "fifo", "error-and-verdict"])
def test_hostile_results_files_are_one_line(
    suite_dir: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    import os

    path = suite_dir / "r.jsonl"
    if kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
        expected = "r.jsonl:1: nested too deeply"
    elif kind == "fifo":
        os.mkfifo(path)
        expected = "r.jsonl: not a regular file"
    else:
        row = _row(_suite_rows_base(str(suite_dir))[0], "m", None)
        row["correct"] = True  # an error with a verdict: which one counts?
        _write(path, [row])
        expected = "r.jsonl:1: correct: expected null"
    code, _, err = _gate(["prop.yaml", "--results", "r.jsonl"], capsys)
    assert code == 4 and expected in err and err.count("\n") == 1


def test_a_byte_order_mark_before_row_1_is_no_part_of_it(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A results file saved by a Windows editor starts with a BOM: row 1 was read as a torn
    line and dropped (its level not decided); it counts like the others."""
    rows = [_row(b, "m", True) for b in _suite_rows_base(str(suite_dir))]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    (suite_dir / "r.jsonl").write_bytes(b"\xef\xbb\xbf" + text.encode())
    code, out, _ = _gate(["prop.yaml", "--results", "r.jsonl"], capsys)
    assert code == 0 and "no whole row" not in out, out
    assert f"{len(rows)} rows from 1 results file(s)" in out


def test_gate_names_a_budget_as_why_samples_were_not_asked(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows of a run that reached its budget: before, gate said "an error above stopped calls"
    (there was none) and "a shard that did not run" (it ran)."""
    rows = [_row(b, "m", True) for b in _suite_rows_base(str(suite_dir))]
    why = "the budget usd=0.01 was reached ($0.0102 spent)"
    for row in rows[3:6]:  # boolean D1's last three
        row.update(response=None, extracted=None, correct=None, failure_mode=None,
                   error=f"not asked: {why}", error_kind="not_asked")  # fmt: skip
    _write(suite_dir / "r.jsonl", rows)
    code, out, _ = _gate(["prop.yaml", "--results", "r.jsonl"], capsys)
    assert code == 6 and "an error above" not in out and "shard" not in out, out
    assert f"not decided (3 of 6 samples): a gate is decided only on its whole level (3 not asked: {why})" in out
    assert f"1 level(s) lack 3 sample(s) in the results files (3 not asked: {why})" in out
    assert f"  3x not asked: {why}" in out


def test_torn_lines_are_skipped_counted_and_leave_their_level_undecided(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [_row(b, "m", True) for b in _suite_rows_base(str(suite_dir))]
    text = "".join(json.dumps(r) + "\n" for r in rows[1:]) + json.dumps(rows[0])[:40]
    (suite_dir / "r.jsonl").write_text(text)
    code, out, _ = _gate(["prop.yaml", "--results", "r.jsonl"], capsys)
    assert "1 line(s) are no whole row" in out and "line 18" in out
    assert "dyval.boolean_logic[D1-gate] NOT DECIDED - dyval.boolean_logic[D1-gate]: not decided (5 of 6 samples)" in out
    assert code == 6  # a level lacks a sample: infrastructure, not the model


def test_a_sample_whose_last_row_is_not_needed_counts_in_no_verdict(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 39: a row marked not needed (paid for, asked ahead of a sequential level's stop)
    is a sample's row like any other — the last row of a sample wins — and a sample whose
    last row is one is left out of every verdict."""
    rows = [_row(b, "m", True) for b in _suite_rows_base(str(suite_dir))]
    marked = {**rows[0], "not_needed": True}
    _write(suite_dir / "r.jsonl", [*rows, marked])
    found = load_results(suite_dir / "r.jsonl")
    assert found.not_needed == [marked] and len(found.rows) == len(rows) - 1
    code, out, _ = _gate(["prop.yaml", "--results", "r.jsonl"], capsys)
    assert "dyval.boolean_logic[D1-gate]: not decided (5 of 6 samples)" in out
    assert code == 6
    _write(suite_dir / "r.jsonl", [marked, *rows])  # answered again later: counted
    assert not load_results(suite_dir / "r.jsonl").not_needed
    assert _gate(["prop.yaml", "--results", "r.jsonl"], capsys)[0] == 0


# -- 2. one ledger: a missing shard never decides on a weaker family ----------------------------
def _holm_rows(folder: str) -> list[dict[str, Any]]:
    """The candidate loses the 8 items of boolean D1 the baseline gets right (one-sided exact
    McNemar p = 0.0039; Holm over the 3 levels: 0.0117); the other levels are ties."""
    rows = []
    for b in _suite_rows_base(folder):
        level = (b[1], b[3])
        lose = level == ("dyval.boolean_logic", "D1")
        rows.append(_row(b, "base", True))
        rows.append(_row(b, "cand", not lose))
    return rows


def test_a_merge_without_a_shard_leaves_the_holm_family_undecided(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (suite_dir / "prop.yaml").write_text(SUITE.replace("samples: 6", "samples: 8"))
    rows = _holm_rows(str(suite_dir))
    boolean_d1 = [r for r in rows if r["item_id"].startswith("dyval.boolean_logic[D1")]
    _write(suite_dir / "shard1.jsonl", boolean_d1)
    _write(suite_dir / "shard2.jsonl", [r for r in rows if r not in boolean_d1])
    args = ["prop.yaml", "--llm-baseline", "base", "--results"]
    code, out, _ = _gate([*args, "shard1.jsonl", "shard2.jsonl"], capsys)
    assert "dyval.boolean_logic[D1-vs-baseline] FAILED" in out and code == 1
    assert "Holm-adjusted p = 0.0117" in out
    # Shard 2 lost: the old merge decided boolean D1 alone (p 0.0039, a weaker correction).
    code, out, _ = _gate([*args, "shard1.jsonl"], capsys)
    assert "dyval.boolean_logic[D1-vs-baseline] NOT DECIDED" in out
    assert "Holm's correction spans the 3 compared level(s) of cand, and 2 of them are not whole" in out
    assert "vs-baseline] FAILED" not in out and "REGRESSION" not in out
    assert "D1-gate-cand] FAILED" in out and code == 1  # its own level is whole: decided


def _live(
    rows: Sequence[dict[str, Any]], sizes: dict[tuple[str, str, str], int], baseline: str | None,
    models: Sequence[str], order: random.Random,
) -> dict[str, Verdict]:
    """The verdicts of a pytest run: the ledger fed report by report as the controller feeds
    it (each sample's payload plans its level), in an xdist-like shuffled order."""
    ledger = Ledger(hint="-", baseline=baseline)
    candidates = [m for m in models if m != baseline]
    shuffled = list(rows)
    order.shuffle(shuffled)
    out: dict[str, Verdict] = {}
    for row in shuffled:
        model, entry, level = row["model"], row["entry"], row["level"]
        rule = GateRule(min_accuracy=0.6 if (entry, level) == ("dyval.boolean_logic", "D2") else 0.5)
        spec = GateSpec("prop.yaml", entry, level, rule)
        gate = comparison = None
        if model in candidates:
            gate = "prop.yaml::" + gate_name(entry, level, model, len(models) > 1)
            if baseline:
                comparison = "prop.yaml::" + comparison_name(entry, level, model, False)
        ledger.plan(model, spec, row["task"], sizes[(model, entry, level)], gate_id=gate,
                    comparison_id=comparison)  # fmt: skip
        for v in ledger.add(Outcome.from_dict(row), spec)[0]:
            out[v.nodeid] = v
    for v in ledger.finish():
        out[v.nodeid] = v
    out.pop("reasoning::infrastructure", None)  # the error budget: compared apart
    return out


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    shards=st.integers(1, 4),
    lost=st.sets(st.integers(0, 3), max_size=2),
    baseline=st.booleans(),
)
def test_merged_verdicts_are_the_live_ones_or_not_decided(
    seed: int, shards: int, lost: set[int], baseline: bool
) -> None:
    """Random answers split into random shards, some lost: every verdict the merge gives is
    the live run's, or "not decided"."""
    rng = random.Random(seed)
    models = ["cand", "base"] if baseline else ["cand"]
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "prop.yaml").write_text(SUITE)
        bases = _suite_rows_base(folder)
        p_right = {m: rng.random() for m in models}
        rows = [
            _row(b, m, None if rng.random() < 0.05 else rng.random() < p_right[m])
            for m in models
            for b in bases
        ]
        sizes: dict[tuple[str, str, str], int] = {}
        for r in rows:
            key = (r["model"], r["entry"], r["level"])
            sizes[key] = sizes.get(key, 0) + 1
        live = _live(rows, sizes, "base" if baseline else None, models, rng)
        # Shards hold whole levels (as --reasoning-shard assigns them); some are lost.
        where = {key: rng.randrange(shards) for key in sizes}
        files = []
        for k in range(shards):
            mine = [r for r in rows if where[(r["model"], r["entry"], r["level"])] == k]
            if k in lost or not mine:
                continue
            path = Path(folder) / f"shard{k}.jsonl"
            _write(path, mine)
            files.append(str(path))
        if not files:
            return
        try:
            merged = merge(
                [str(Path(folder) / "prop.yaml")], files, baseline="base" if baseline else None
            )
        except ReasoningError as exc:  # every baseline shard lost: refused, nothing decided
            assert "--llm-baseline: 'base' has no rows" in str(exc)
            return
    verdicts = {v.nodeid: v for v in merged.verdicts if v.kind != "infrastructure"}
    assert set(verdicts) <= set(live) | {"reasoning::infrastructure"}
    for nodeid, v in verdicts.items():
        if v.outcome == "skipped":
            assert "not decided" in v.message
            continue
        assert (v.outcome, v.message) == (live[nodeid].outcome, live[nodeid].message)
    if not lost and len(files) == len({where[k] for k in where}):
        assert {n: (v.outcome, v.message) for n, v in verdicts.items()} == {
            n: (v.outcome, v.message) for n, v in live.items() if n in verdicts
        }
        assert len(verdicts) == len(live)


# -- 3. and 4. truncation where people look; FLenQA's table on the gate's denominator ----------
def _truncated(task: str, level: str, count: int) -> Iterator[Outcome]:
    for index in range(count):
        item = make_item(get_task(task), level, 1, index)
        reply = Reply(content="Let me think step by step about", finish_reason="length")
        outcome = score_reply(item, "gpt-5", reply)
        yield Outcome.from_dict(
            {**outcome.to_dict(), "extra": {**outcome.extra, "token_limit": ["max_completion_tokens", 1024]}}
        )


def test_truncation_is_in_the_summary_and_the_failed_gate_names_the_remedy() -> None:
    ledger = Ledger(hint="-")
    spec = GateSpec("s.yaml", "dyval.arithmetic", "D1", GateRule(min_accuracy=0.5))
    ledger.plan("gpt-5", spec, "dyval.arithmetic", 6, gate_id="s.yaml::dyval.arithmetic[D1-gate]")
    decided: list[Verdict] = []
    for outcome in _truncated("dyval.arithmetic", "D1", 6):
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


# -- 5. two suites with the same task and level stay apart --------------------------------------
def test_two_suites_gating_one_level_keep_their_rows_and_thresholds() -> None:
    ledger = Ledger(hint="-")
    outcomes = list(_truncated("dyval.arithmetic", "D1", 2))
    for suite, threshold in (("a.yaml", 0.0), ("b.yaml", 0.4)):
        spec = GateSpec(suite, "dyval.arithmetic", "D1", GateRule(min_accuracy=threshold))
        for o in outcomes:
            ledger.add(o, spec)
    table = levels_table(ledger.levels.values())
    assert table.headers[:3] == ("model", "suite", "task")
    assert [(r[1], r[8]) for r in table.rows] == [("a.yaml", "0"), ("b.yaml", "0.4")]


# -- 8. outputs that were not produced fail the command -----------------------------------------
def test_outputs_that_cannot_be_written_fail_the_gate(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(suite_dir / "r.jsonl", [_row(b, "m", True) for b in _suite_rows_base(str(suite_dir))])
    base = ["prop.yaml", "--results", "r.jsonl"]
    code, out, err = _gate([*base, "--junitxml", "/dev/full"], capsys)
    assert code == 4 and "--junitxml: cannot write /dev/full" in err
    assert "JUnit XML /dev/full" not in out
    (suite_dir / "file").write_text("")
    code, _, err = _gate([*base, "--report", "file/sub"], capsys)
    assert code == 4 and "--report: cannot create file/sub" in err
    code, out, _ = _gate(base, capsys)
    assert code == 0 and "3 passed" in out


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


def test_a_failed_gate_links_to_its_samples_in_the_report(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [_row(b, "m", b[3] != "D2") for b in _suite_rows_base(str(suite_dir))]
    _write(suite_dir / "r.jsonl", rows)
    code, out, _ = _gate(["prop.yaml", "--results", "r.jsonl", "--report", "rep"], capsys)
    assert code == 1
    (failed,) = [line for line in out.splitlines() if " FAILED - " in line]
    link = (suite_dir / "rep" / "index.html").resolve().as_uri()
    assert "D2-gate] FAILED" in failed
    assert failed.endswith(
        f"; samples: {link}#model=m&suite=prop.yaml&task=dyval.boolean_logic&level=D2"
        "&outcome=not-correct"
    )
    assert (suite_dir / "rep" / "index.html").is_file()


def test_links_use_the_address_the_report_is_published_at(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--reasoning-report-url``: the terminal's and JUnit's links open the published page,
    with the same view after ``#`` as a file:// link."""
    import xml.etree.ElementTree as ET

    rows = [_row(b, "m", b[3] != "D2") for b in _suite_rows_base(str(suite_dir))]
    _write(suite_dir / "r.jsonl", rows)
    url = "https://org.github.io/repo/"
    view = "#model=m&suite=prop.yaml&task=dyval.boolean_logic&level=D2&outcome=not-correct"
    base = ["prop.yaml", "--results", "r.jsonl", "--junitxml", "j.xml"]
    code, out, _ = _gate([*base, "--report", "rep", "--reasoning-report-url", url], capsys)
    assert code == 1
    (failed,) = [line for line in out.splitlines() if " FAILED - " in line]
    assert failed.endswith(f"; samples: {url}{view}") and "file://" not in out
    (message,) = [f.get("message", "") for f in ET.parse("j.xml").iter("failure")]
    assert message.endswith(f"; samples: {url}{view}")
    # Without a --report here (the report is built and published by another step).
    code, out, _ = _gate([*base, "--reasoning-report-url", url], capsys)
    assert code == 1 and f"; samples: {url}{view}" in out
    code, out, err = _gate([*base, "--reasoning-report-url", "report/"], capsys)
    assert code == 4 and not out
    assert err.strip() == (
        "pytest-reasoning: error: --reasoning-report-url: expected an http(s) URL such as "
        "https://ORG.github.io/REPO/, got 'report/'"
    )


# -- issue 39: a merge counts the rows the live run counted, and only rows it can check -------
def _junit_verdicts(path: Path) -> dict[str, str]:
    """The verdict test cases of a JUnit file (gates and the error budget): name -> outcome."""
    import xml.etree.ElementTree as ET

    out = {}
    for case in ET.parse(path).iter("testcase"):
        name = case.get("name", "")
        if "-gate" in name or name == "infrastructure":
            found = [c.tag for c in case if c.tag in ("failure", "skipped", "error")]
            out[f"{case.get('classname')}.{name}"] = found[0] if found else "passed"
    return out


SHARED = """\
name: {name}
seed: 7
samples: 3
tasks:
  - task: dyval.boolean_logic
    levels:
      D1: {{min_accuracy: {floor}}}
  - task: zebra.grid
    metric: cell
    levels:
      2x2: {{min_accuracy: {floor}}}
"""


@pytest.mark.e2e
def test_a_merge_of_a_runs_own_file_decides_what_the_run_decided(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two suites that ask the same items (one task, level and seed) used to share their rows'
    keys: the merge of the run's own file kept one suite's rows ("not decided (0 of 3)", exit
    6) where the run decided both. The models answer in every shape a scorer reads (thinking
    tags, a cut-off reply, separate reasoning, a boxed answer read leniently, wrong answers):
    re-scored, every row is its own verdict, so nothing is refused."""
    from pytest_reasoning.testing.server import FakeOpenAIServer

    pytester.makefile(".yaml", a=SHARED.format(name="a", floor=0.3))
    pytester.makefile(".yaml", b=SHARED.format(name="b", floor=0.9))
    models = ["always-true", "think", "truncated", "reasoning-content", "boxed", "shallow:1"]
    with FakeOpenAIServer() as server:
        run = pytester.runpytest_subprocess(
            "a.yaml", "b.yaml", "-p", "no:cacheprovider", "-p", "no:randomly",
            *(f"--llm=openai/{m}" for m in models), f"--llm-api-base={server.url}",
            "--reasoning-cache=off", "--reasoning-lenient", "--reasoning-results=r.jsonl",
            "--junitxml=run.xml",
        )  # fmt: skip
    rows = [json.loads(line) for line in (pytester.path / "r.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * 2 * 3 * len(models)  # suites x levels x samples x models
    assert {r["suite"] for r in rows} == {"a.yaml", "b.yaml"}
    assert any(str(r["extraction"]).startswith("lenient") for r in rows)
    assert any(r["failure_mode"] == "truncated" for r in rows)
    live = _junit_verdicts(pytester.path / "run.xml")
    assert len(live) == 2 * 2 * len(models) and set(live.values()) == {"passed", "failure"}
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(pytester.path)
        code = main(["gate", "a.yaml", "b.yaml", "--results", "r.jsonl", "--junitxml=gate.xml"])
    out = capsys.readouterr().out
    assert "NOT DECIDED" not in out and "note" not in out
    assert _junit_verdicts(pytester.path / "gate.xml") == live
    assert code == run.ret == 1


def test_rows_of_two_suites_that_ask_the_same_items_are_kept_apart(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_reasoning.gates import load_results

    (suite_dir / "copy.yaml").write_text(SUITE)
    rows = [_row(b, "m", True) for b in _suite_rows_base(str(suite_dir))]
    _write(suite_dir / "r.jsonl", rows + [{**r, "suite": "copy.yaml"} for r in rows])
    assert len(load_results(suite_dir / "r.jsonl").rows) == 2 * len(rows)
    code, out, _ = _gate(["prop.yaml", "copy.yaml", "--results", "r.jsonl"], capsys)
    assert code == 0 and "6 passed" in out and "NOT DECIDED" not in out
    assert out.startswith(f"reasoning gate: {2 * len(rows)} rows from 1 results file(s)")


def test_rows_of_another_prompt_are_refused_unless_a_later_row_answers_the_sample(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows of an older generator were gated as current: a FAIL became a PASS."""
    rows = [_row(b, "m", True) for b in _suite_rows_base(str(suite_dir))]
    old = [{**r, "prompt_sha256": "0" * 64} for r in rows[:3]]
    _write(suite_dir / "new.jsonl", rows)
    _write(suite_dir / "old.jsonl", old)
    code, out, err = _gate(["prop.yaml", "--results", "new.jsonl", "old.jsonl"], capsys)
    assert code == 4 and "PASSED" not in out
    assert err == (
        "pytest-reasoning: error: old.jsonl: 3 row(s) answer a prompt their suite does not "
        "generate today (written by another version of the generator, or with other knobs): "
        "refused; rerun those samples with this version\n"
    )
    # A rerun with this version answered those samples again, after them: they are history.
    code, out, err = _gate(["prop.yaml", "--results", "old.jsonl", "new.jsonl"], capsys)
    assert code == 0 and "3 passed" in out and not err
    assert "3 row(s) answer another prompt of a sample a later row answers" in out


def test_a_row_whose_verdict_is_not_its_responses_is_refused_by_file_and_line(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [_row(b, "m", False) for b in _suite_rows_base(str(suite_dir))]
    rows[1]["correct"] = True  # the answer read is "x"; the gold is True or False
    for row in rows[10:]:  # arithmetic: "correct", and the extracted answer made the gold's
        row.update(correct=True, extracted=row["gold"])
    _write(suite_dir / "r.jsonl", rows)
    code, out, err = _gate(["prop.yaml", "--results", "r.jsonl"], capsys)
    assert code == 4 and "PASSED" not in out and "FAILED" not in out
    lines = err.splitlines()
    assert lines[0] == (
        "pytest-reasoning: error: r.jsonl:2: correct is true, but the task's scorer reads the "
        f"answer 'x' in its response, wrong against the suite's gold {rows[1]['gold']!r}: "
        "refused (an edited row, or another scorer's)"
    )
    assert [line.split()[2] for line in lines[1:5]] == [f"r.jsonl:{n}:" for n in (11, 12, 13, 14)]
    assert lines[5] == (
        "pytest-reasoning: error: r.jsonl: 4 more row(s) whose verdict is not their "
        "response's: refused"
    )
    assert len(lines) == 6  # SHOWN rows named per file, the rest counted


def test_rows_that_answer_one_sample_differently_are_named_with_the_row_kept(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bases = _suite_rows_base(str(suite_dir))
    first = [_row(b, "m", None if k == 0 else False) for k, b in enumerate(bases)]
    again = [_row(b, "m", True) for b in bases]
    _write(suite_dir / "one.jsonl", first[:3] + first)  # a rerun appends identical rows
    _write(suite_dir / "two.jsonl", again[:2])  # the same samples, answered right
    code, out, _ = _gate(["prop.yaml", "--results", "one.jsonl", "two.jsonl"], capsys)
    (note,) = [line for line in out.splitlines() if "otherwise than a row" in line]
    item, gold = bases[1][0], bases[1][6]
    assert note.endswith(
        "1 row(s) answer their sample otherwise than a row given after them (a rerun without "
        f"the response cache, or overlapping shards), the later row kept: m {item}: "
        f"one.jsonl:5 ('x', wrong) and two.jsonl:2 ({gold!r}, right), two.jsonl:2 kept"
    )  # item 0's failed call, retried: no conflict; the rerun's identical rows: none either
    assert "1 row(s) answer a sample another file answers too" in out
    assert code == 1  # every boolean D1 sample but two is wrong: its gate fails


def test_the_merge_checks_rows_alike_in_worker_processes(suite_dir: Path) -> None:
    """A large merge generates its items over worker processes: the same refusals."""
    from pytest_reasoning.merge import _read
    from pytest_reasoning.recheck import RefusedRows, recheck

    rows = [_row(b, "m", False) for b in _suite_rows_base(str(suite_dir))]
    rows[0]["prompt_sha256"] = "0" * 64
    rows[7]["correct"] = True
    _write(suite_dir / "r.jsonl", rows)
    spec = load_suite(suite_dir / "prop.yaml", display="prop.yaml")
    where = {a.sample_id: a for a in addresses(spec)}
    read = [(row, origin, where[row["item_id"]]) for row, origin in _read(["r.jsonl"], None)]
    found = []
    for workers in (1, 2):
        with pytest.raises(RefusedRows) as refused:
            recheck(read, workers=workers)
        found.append(refused.value.problems)
    assert found[0] == found[1] and len(found[0]) == 2
    assert found[0][0].startswith("r.jsonl: 1 row(s) answer a prompt")
    assert found[0][1].startswith("r.jsonl:8: correct is true, but")


# -- issue 39.5: a pass that is not significant is marked ------------------------------------
def _answers(model: str, spec: GateSpec, right: Sequence[bool]) -> Iterator[Outcome]:
    for index, ok in enumerate(right):
        yield Outcome(
            f"{spec.entry}[{spec.level}-s1-{index:03d}]", model, spec.entry, spec.level, 1,
            f"p{index}", "", str(ok), "True", ok, None if ok else "wrong_label", None, None,
            None, 0.0,
        )  # fmt: skip


def test_a_pass_whose_interval_reaches_below_the_floor_is_marked() -> None:
    """Without ``confidence`` a model exactly at min_accuracy passes about half the time:
    the pass stands (the semantics are kept) but reads PASS*, with the footnote, in the
    summary, the step summary, the report's table and the JUnit property."""
    from pytest_reasoning.gates.threshold import MARGINAL_NOTE
    from pytest_reasoning.gates.verdicts import gate_properties
    from pytest_reasoning.report import markdown_summary

    ledger = Ledger(hint="-")
    cases = {  # level: (rule, answers right)
        "D1": (GateRule(min_accuracy=0.5), [True, False] * 10),  # 0.50 at 0.5: PASS*
        "D2": (GateRule(min_accuracy=0.5), [True] * 20),  # clear: PASS
        "D3": (GateRule(min_accuracy=0.5, confidence=0.95), [True, False] * 10),  # FAIL
    }
    for level, (rule, right) in cases.items():
        spec = GateSpec("s.yaml", "dyval.boolean_logic", level, rule)
        vid = f"s.yaml::dyval.boolean_logic[{level}-gate]"
        ledger.plan("m", spec, "dyval.boolean_logic", len(right), gate_id=vid)
        for outcome in _answers("m", spec, right):
            ledger.add(outcome, spec)
    by_level = {g.stats.spec.level: g for g in ledger.gates}
    weak, clear, strict = by_level["D1"], by_level["D2"], by_level["D3"]
    assert (weak.passed, weak.marginal) == (True, True)
    assert weak.reason.endswith("but its 95% interval reaches 0.299: not significant (PASS*)")
    assert (clear.passed, clear.marginal) == (True, False)
    assert (strict.passed, strict.marginal) == (False, False)
    assert gate_properties(weak)["marginal"] is True
    assert gate_properties(clear)["marginal"] is False
    run = RunSummary(levels=list(ledger.levels.values()), gates=ledger.gates)
    text = [line.text for line in summary_lines(run)]
    assert [row[8] for row in levels_table(run.levels, run.gates).rows] == ["PASS*", "PASS", "FAIL"]
    assert text[5] == f"* {MARGINAL_NOTE}"
    md = markdown_summary(run)
    assert "| PASS\\*" in md and "\\* PASS\\*: the measure reaches min_accuracy" in md
    # Without a marked pass, no footnote.
    plain = RunSummary(levels=[clear.stats], gates=[clear])
    assert not any(MARGINAL_NOTE in line.text for line in summary_lines(plain))


def test_a_curtailed_sequential_pass_is_marked_an_anytime_one_is_not() -> None:
    """A sequential level that passed by curtailment is the fixed-n rule's pass and is
    marked the same way; one the anytime test passed has shown significance."""
    rule = GateRule(min_accuracy=0.5, sequential=True)
    ledger = Ledger(hint="-")
    for level, right in (("D1", [True, True, True]), ("D2", [True] * 20)):
        spec = GateSpec("s.yaml", "dyval.boolean_logic", level, rule)
        vid = f"s.yaml::dyval.boolean_logic[{level}-gate]"
        ledger.plan("m", spec, "dyval.boolean_logic", 6 if level == "D1" else 200, gate_id=vid)
        for position, outcome in enumerate(_answers("m", spec, right)):
            ledger.add(outcome, spec, position)
    by_level = {g.stats.spec.level: g for g in ledger.gates}
    # D1: 3 of 6 right already make 0.5 at 6, whatever the rest (curtailed); [0.44, 1.00].
    assert by_level["D1"].passed and by_level["D1"].marginal
    assert by_level["D2"].passed and not by_level["D2"].marginal
    assert "anytime" in by_level["D2"].reason


MARGINAL_SUITE = """\
name: marginal
seed: 1
samples: 20
tasks:
  - task: dyval.boolean_logic          # two balanced classes: always True is right on 10
    levels:
      D2: {min_accuracy: 0.5}
      D3: {min_accuracy: 0.5, confidence: 0.9}
"""


@pytest.mark.e2e
def test_a_run_and_its_merge_mark_a_pass_that_is_not_significant(
    pytester: pytest.Pytester,
    fake_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 39.5, through a run and ``pytest-reasoning gate`` on its results: accuracy 0.500
    at min_accuracy 0.5 passes (as before) but reads PASS* with the footnote, in JUnit
    (``marginal``), the step summary and the merge's verdict line; with ``confidence`` the
    same answers fail."""
    pytester.makefile(".yaml", s=MARGINAL_SUITE)
    step = pytester.path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--llm-api-base", fake_server.url, "--reasoning-cache", "off",
        "--llm", "openai/always-true", "--reasoning-results", "r.jsonl", "--junitxml", "j.xml",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # D3, with confidence
    result.stdout.fnmatch_lines(
        [
            # D2's 20 items are 4 problems up to renaming: the interval counts problems
            "openai/always-true*D2*20*10*0.500*[[]0.15, 0.85[]]*0.5 *PASS[*] *",
            "openai/always-true*D3*20*10*0.500*0.5 @0.9*FAIL*",
            "[*] PASS[*]: the measure reaches min_accuracy but its 95% interval reaches below it*",
        ]
    )
    assert '&quot;marginal&quot;: true' in (pytester.path / "j.xml").read_text()
    assert "| PASS\\* " in step.read_text()
    monkeypatch.chdir(pytester.path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    capsys.readouterr()
    code, out, _ = _gate(["s.yaml", "--results", "r.jsonl"], capsys)
    assert code == 1
    assert (
        "s.yaml::dyval.boolean_logic[D2-gate] PASSED* (not significant: its 95% interval "
        "reaches below min_accuracy)"
    ) in out.splitlines()
    assert "PASS*" in out and "* PASS*: the measure reaches min_accuracy" in out


# -- issue 41: samples of one problem (up to renaming) are one cluster -------------------------
ISO_SUITE = """\
name: iso
seed: 1
samples: 60
tasks:
  - task: dyval.deductive_logic
    levels:
      D3: {min_accuracy: 0.3, confidence: 0.95, params: {unique: false}}
"""


def test_deductive_d3_intervals_count_problems_live_and_merged(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """60 raw draws of deductive D3 ask far fewer problems up to renaming; a model that gets
    a problem right or wrong whatever its names is as informative as one answer per problem:
    the gate's interval is clustered by problem (its n_eff the number of problems), the same
    live and from the results file, and the summary says the level repeats."""
    (suite_dir / "iso.yaml").write_text(ISO_SUITE)
    spec_rows = []
    for a in addresses(load_suite(suite_dir / "iso.yaml", display="iso.yaml")):
        item = a.make_item()
        key = problem_key(item)
        assert key is not None
        right = int(key, 16) % 3 != 0  # by problem, whatever its names
        reply = Reply(content=f"<<<{item.answer if right else 'False'}>>>")
        outcome = score_reply(item, "m", reply)
        spec_rows.append((Outcome.from_dict({**outcome.to_dict(), "suite": "iso.yaml",
                                             "entry": a.entry.id}), a.gate))  # fmt: skip
    ledger = Ledger(hint="-")
    spec = spec_rows[0][1]
    ledger.plan("m", spec, "dyval.deductive_logic", 60, gate_id="iso.yaml::gate")
    live = [v for o, s in spec_rows for v in ledger.add(o, s)[0]]
    (stats,) = ledger.levels.values()
    assert stats.items == 60 and stats.distinct < 40
    lo, _ = stats.interval(0.95)
    assert lo < wilson_interval(stats.correct, 60, 0.95)[0]  # wider than 60 independent ones
    assert lo <= wilson_interval(round(stats.distinct * stats.correct / 60), stats.distinct)[0] + 0.05
    (verdict,) = live
    assert f"Wilson, clustered by {stats.distinct} problems," in verdict.message, verdict.message
    results = suite_dir / "rows.jsonl"
    _write(results, [{k: o.to_dict()[k] for k in RESULT_FIELDS} for o, _ in spec_rows])
    merged = merge(["iso.yaml"], [str(results)])
    (gate,) = [v for v in merged.verdicts if v.kind == "gate"]
    assert gate.message.split(": ", 1)[1] == verdict.message.split(": ", 1)[1]
    closing = [line.text for line in closing_lines(RunSummary(levels=[stats]))]
    assert closing == [
        f"reasoning: dyval.deductive_logic D3 (m): {60 - stats.distinct} of 60 items repeat an "
        "earlier problem (up to renaming); the level's test split has fewer distinct problems "
        f"than items (docs/tasks/splits.md), so its interval counts its {stats.distinct} problems"
    ]
