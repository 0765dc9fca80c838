"""The verdict ledger: it tallies every outcome and keeps slim answers for pairing, decides a
live run and a merge alike (a merge lacking part of a level or of a Holm family is "not
decided"), keeps suites apart, and counts answers no verdict needs."""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from results_rows import (
    PROP_SUITE,
    _gate,
    _row,
    _suite_rows_base,
    _write,
    random_outcomes,
    truncated_outcomes,
)

from pytest_reasoning.cli import main
from pytest_reasoning.core import Outcome
from pytest_reasoning.errors import ReasoningError
from pytest_reasoning.gates import (
    GateRule,
    GateSpec,
    Ledger,
    ResultStore,
    baseline_answers,
    compare,
    load_results,
)
from pytest_reasoning.gates.verdicts import Verdict, comparison_name, gate_name
from pytest_reasoning.merge import merge
from pytest_reasoning.report import summary_reads
from pytest_reasoning.report.tables import levels_table
from pytest_reasoning.testing.server import FakeOpenAIServer


def _outcome(model: str, task: str, index: int, repeat: int, correct: bool | None) -> Outcome:
    error = "HTTP 500" if correct is None else None
    return Outcome(
        f"{task}[D1-s1-{index:03d}]", model, task, "D1", 1, f"h{index}",
        None if error else "<<<x>>>", None if error else ("1" if correct else str(index)),
        "1", correct, None if correct is not False else "wrong_value", error, 10, 2, 0.1,
        repeat=repeat, repeats=3,
    )  # fmt: skip


def _outcomes() -> list[tuple[Outcome, GateSpec]]:
    rule = GateRule(min_accuracy=0.5)
    out = []
    for task in ("dyval.arithmetic", "flenqa.monorel"):
        spec = GateSpec("s.yaml", task, "D1", rule)
        for i in range(30):
            for repeat in range(3):
                # The baseline is right; the candidate is wrong on a third of the items, and
                # some calls fail (every call of an item: no verdict, left out of the pairs).
                base = i % 10 != 7 or None
                cand = None if (i * 3 + repeat) % 13 == 0 else (i % 3 != 0 or repeat == 2)
                out.append((_outcome("base", task, i, repeat, base if base else None), spec))
                out.append((_outcome("cand", task, i, repeat, cand), spec))
    return out


def _comparisons(answers: Any) -> list[dict[str, Any]]:
    base = baseline_answers(a for a, _ in answers if a.model == "base")
    return [
        c.to_dict() for c in compare([p for p in answers if p[0].model != "base"], base, "base")
    ]


def test_slim_pairs_compare_like_whole_outcomes() -> None:
    """The ledger keeps a slim answer per sample for the comparison (not the row): it
    compares exactly like the whole outcomes."""
    ledger = Ledger(hint="-", baseline="base")
    for outcome, spec in _outcomes():
        ledger.add(outcome, spec)
    assert len(ledger.pairs) == 360
    expected = _comparisons(_outcomes())
    assert any(c["regressed"] for c in expected) and all(c["errors"] for c in expected)
    assert _comparisons(ledger.pairs) == expected
    # One spec object per level, not one per sample.
    assert len({id(s) for _, s in ledger.pairs}) == 2
    assert Ledger(hint="-").add(*_outcomes()[0]) and Ledger(hint="-").pairs == []


def test_keep_selects_what_the_summary_reads() -> None:
    store = ResultStore(keep=lambda o: summary_reads(o.task, o.error, o.correct, step=False))
    stepped = ResultStore(keep=lambda o: summary_reads(o.task, o.error, o.correct, step=True))
    for outcome, _ in _outcomes():
        store.add(outcome)
        stepped.add(outcome)
    assert store.count == stepped.count == 360
    assert {o.task for o in store.outcomes} == {"flenqa.monorel"}
    assert len(store.outcomes) == 180
    # The step summary also lists wrong and errored samples, of every task.
    dyval = [o for o in stepped.outcomes if o.task == "dyval.arithmetic"]
    assert dyval and all(o.error is not None or not o.correct for o in dyval)
    wrong = [
        o for o, _ in _outcomes() if o.task == "dyval.arithmetic" and (o.error or not o.correct)
    ]
    assert dyval == wrong


@pytest.fixture
def suite_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "prop.yaml").write_text(PROP_SUITE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


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
    (suite_dir / "prop.yaml").write_text(PROP_SUITE.replace("samples: 6", "samples: 8"))
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
        (Path(folder) / "prop.yaml").write_text(PROP_SUITE)
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



def test_two_suites_gating_one_level_keep_their_rows_and_thresholds() -> None:
    ledger = Ledger(hint="-")
    outcomes = list(truncated_outcomes("dyval.arithmetic", "D1", 2))
    for suite, threshold in (("a.yaml", 0.0), ("b.yaml", 0.4)):
        spec = GateSpec(suite, "dyval.arithmetic", "D1", GateRule(min_accuracy=threshold))
        for o in outcomes:
            ledger.add(o, spec)
    table = levels_table(ledger.levels.values())
    assert table.headers[:3] == ("model", "suite", "task")
    assert [(r[1], r[8]) for r in table.rows] == [("a.yaml", "0"), ("b.yaml", "0.4")]


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

    (suite_dir / "copy.yaml").write_text(PROP_SUITE)
    rows = [_row(b, "m", True) for b in _suite_rows_base(str(suite_dir))]
    _write(suite_dir / "r.jsonl", rows + [{**r, "suite": "copy.yaml"} for r in rows])
    assert len(load_results(suite_dir / "r.jsonl").rows) == 2 * len(rows)
    code, out, _ = _gate(["prop.yaml", "copy.yaml", "--results", "r.jsonl"], capsys)
    assert code == 0 and "6 passed" in out and "NOT DECIDED" not in out
    assert out.startswith(f"reasoning gate: {2 * len(rows)} rows from 1 results file(s)")



def test_an_item_of_a_problem_already_fed_is_counted_but_not_fed() -> None:
    """Issue 41: 40 items of 4 problems (up to renaming), all right. Only each problem's first
    item is fed to the test (the others are not independent evidence) and curtailment is off
    from the first repeat on: four answers settle nothing, so the level runs to its end and
    the fixed-n rule decides; 40 items of 40 problems pass early at the 8th."""
    spec = GateSpec("s.yaml", "t", "D1", GateRule(min_accuracy=0.6, sequential=True))
    messages = []
    for problems in (4, 40):
        ledger = Ledger(hint="-")
        ledger.plan("m", spec, "t", 40, gate_id="s.yaml::t[D1-gate]")
        verdicts = []
        for i, o in enumerate(random_outcomes("m", 1.0, 40, 3)):
            o = Outcome.from_dict({**o.to_dict(), "problem": f"p{i % problems}"})
            verdicts += ledger.add(o, spec, i)[0]
        verdicts += ledger.finish()
        assert [v.outcome for v in verdicts] == ["passed"]
        messages.append(verdicts[0].message)
        (stats,) = ledger.levels.values()
        if problems == 4:
            assert (stats.n, stats.distinct) == (40, 4)
    # 40 right answers on 4 problems: the interval counts 4 clusters, so the pass is marked
    assert "accuracy 1.000 (40/40) >= min_accuracy 0.6, but its 95% interval" in messages[0]
    assert "passed early at 8 of 40 samples" in messages[1]
