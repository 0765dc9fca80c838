"""A pass's interval: marked when it reaches below the floor or the test was curtailed, and
counted over problems, live and merged alike."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from results_rows import PROP_SUITE, _gate, _write

from pytest_reasoning.config import addresses, load_suite
from pytest_reasoning.core import Outcome, Reply
from pytest_reasoning.evaluate import score_reply
from pytest_reasoning.gates import RESULT_FIELDS, GateRule, GateSpec, Ledger
from pytest_reasoning.merge import merge
from pytest_reasoning.registry import problem_key
from pytest_reasoning.report import RunSummary, summary_lines
from pytest_reasoning.report.summary import closing_lines
from pytest_reasoning.report.tables import levels_table
from pytest_reasoning.stats import wilson_interval


@pytest.fixture
def suite_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "prop.yaml").write_text(PROP_SUITE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


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
