"""Candidate-vs-baseline regression gates: live baseline, stored baseline, the statistics."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from pytest_reasoning.core import Outcome
from pytest_reasoning.gates import GateRule, GateSpec, compare
from pytest_reasoning.gates.paired import PairedTable
from pytest_reasoning.testing.server import FakeOpenAIServer

SUITE = """\
name: up
seed: 1
samples: 20
tasks:
  - task: dyval.arithmetic
    levels:
      D1: {}
      D2: {max_drop: 0.6}
  - task: dyval.boolean_logic
    levels:
      D1: {samples: 10}
      D2: {max_drop: 0.6}
"""


def run(pytester: pytest.Pytester, server: FakeOpenAIServer, *args: str) -> pytest.RunResult:
    pytester.makefile(".yaml", up=SUITE)
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--llm-api-base", server.url, "--reasoning-cache", "off", *args
    )


@pytest.mark.e2e
def test_worse_candidate_fails_the_regression_gates(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    junit = pytester.path / "junit.xml"
    result = run(
        pytester,
        fake_server,
        "--llm",
        "openai/always-true",
        "--llm-baseline",
        "openai/oracle",
        "-n",
        "2",
        f"--junitxml={junit}",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    # Arithmetic: always wrong vs always right on 20 pairs: a regression at D1 and D2.
    result.stdout.fnmatch_lines(
        [
            "*REGRESSION dyval.arithmetic D1: openai/always-true is worse than openai/oracle:"
            " accuracy 0.000 vs 1.000 on 20 paired items*Holm-adjusted p = *",
            "*candidate vs baseline (openai/oracle), paired on identical prompts:*",
        ]
    )
    assert "dyval.arithmetic[D2-vs-baseline]" in out
    # Boolean D2 tolerates a drop of 0.6: half wrong is within it, so that gate passes.
    assert "dyval.boolean_logic[D2-vs-baseline]" not in out.split("short test summary")[1]
    # The baseline is the reference point: its own accuracy is shown, never gated.
    assert "GATE FAILED openai/oracle" not in out
    xml = junit.read_text()
    assert 'name="dyval.arithmetic[D1-vs-baseline]"' in xml
    assert "reasoning.comparison" in xml and "p_holm" in xml


@pytest.mark.e2e
def test_identical_models_show_no_regression(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run(pytester, fake_server, "--llm", "openai/oracle", "--llm-baseline", "reference")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert "REGRESSION" not in result.stdout.str()
    # 20 pairs cannot see a drop of max_drop (0) + 0.05: not "ok" but "under-powered", as the
    # warning says; arithmetic D2 tolerates 0.6, which 20 pairs do see. Boolean D2 tolerates
    # 0.6 too, but its 20 items are 4 problems up to renaming, compared as 4 units: too few.
    result.stdout.fnmatch_lines(
        [
            "*openai/oracle*dyval.arithmetic*D1*20*0/0/20*under-powered*",
            "*openai/oracle*dyval.arithmetic*D2*20*0/0/20* ok",
            "*openai/oracle*dyval.boolean_logic*D2*4*0/0/4*under-powered*",
        ]
    )
    markdown = summary.read_text()
    assert markdown.startswith("## pytest-reasoning\n\nAll gates passed.")
    assert "### Candidate vs baseline (reference)" in markdown
    assert re.search(r"\| openai/oracle +\| dyval\.arithmetic +\| D1 +\| 20 ", markdown)


@pytest.mark.e2e
def test_stored_baseline_and_missing_items(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    stored = pytester.path / "baseline.jsonl"
    first = run(pytester, fake_server, "--llm", "openai/oracle", f"--reasoning-results={stored}")
    assert first.ret == pytest.ExitCode.OK
    calls = fake_server.stats()["requests"]["oracle"]
    # The candidate asks for more samples than the baseline answered (96 vs 20+20+10+20):
    # the other 26 are missing.
    result = run(
        pytester,
        fake_server,
        "--llm",
        "openai/always-true",
        "--reasoning-baseline-results",
        str(stored),
        "--reasoning-samples",
        "24",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*REGRESSION dyval.arithmetic D1*on 20 paired items*",
            "*reasoning: 26 candidate sample(s) have no baseline answer for the same prompt*",
        ]
    )
    # The stored baseline is not called again.
    assert fake_server.stats()["requests"]["oracle"] == calls


@pytest.mark.e2e
def test_stored_baseline_with_several_models_needs_a_choice(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    stored = pytester.path / "two.jsonl"
    row = {"item_id": "x", "task": "t", "level": "D1", "seed": 1, "prompt_sha256": "h",
           "response": "<<<1>>>", "extracted": "1", "gold": "1", "correct": True,
           "failure_mode": None, "error": None, "prompt_tokens": 1, "completion_tokens": 1,
           "latency_s": 0.1}  # fmt: skip
    rows = [{**row, "model": m} for m in ("a", "b")]
    stored.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run(
        pytester, fake_server, "--llm", "reference", "--reasoning-baseline-results", str(stored)
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*holds 2 models (a, b); choose one with --reasoning-baseline-model*"]
    )


@pytest.mark.e2e
def test_one_baseline_only(pytester: pytest.Pytester, fake_server: FakeOpenAIServer) -> None:
    result = run(
        pytester,
        fake_server,
        "--llm",
        "reference",
        "--llm-baseline",
        "reference",
        "--reasoning-baseline-results",
        "x.jsonl",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*give one baseline, not both*"])


def _rows(
    model: str, verdicts: list[bool | None], level: str = "D1"
) -> list[tuple[Outcome, GateSpec]]:
    spec = GateSpec("s", "dyval.arithmetic", level, GateRule(max_drop=0.0, alpha=0.05))
    return [
        (
            Outcome(
                item_id=f"i{level}{k}", model=model, task="dyval.arithmetic", level=level, seed=1,
                prompt_sha256=f"h{level}{k}", response="", extracted=None, gold="1",
                correct=v, failure_mode=None, error=None if v is not None else "boom",
                prompt_tokens=None, completion_tokens=None, latency_s=0.0,
            ),
            spec,
        )
        for k, v in enumerate(verdicts)
    ]  # fmt: skip


def test_compare_pairs_by_prompt_and_leaves_errors_out() -> None:
    cand = _rows("c", [False] * 8 + [True] * 10 + [None, True])
    base = {(o.item_id, o.prompt_sha256): True for o, _ in _rows("b", [True] * 19)}
    (c,) = compare(cand, base, "b")
    assert c.table == PairedTable(10, 8, 0, 0)
    assert (c.errors, c.missing) == (1, 1)  # item 18 errored, item 19 has no baseline
    assert c.regressed and c.p_adjusted == pytest.approx(1 / 256)


def test_holm_runs_across_levels_and_max_drop_is_tolerated() -> None:
    cand = _rows("c", [False] * 3 + [True] * 17, "D1") + _rows("c", [False] * 3 + [True] * 17, "D2")
    base = {(o.item_id, o.prompt_sha256): True for o, _ in cand}
    d1, _ = compare(cand, base, "b")
    assert d1.p_regression == pytest.approx(1 / 8)  # 3 discordant pairs, all against
    assert d1.p_adjusted == pytest.approx(1 / 4) and not d1.regressed
    tolerant = [(o, GateSpec(s.suite, s.entry, s.level, GateRule(max_drop=0.2))) for o, s in cand]
    (t1, _) = compare(tolerant, base, "b")
    assert t1.p_regression == 1.0  # a drop of 0.15 is within max_drop 0.2
    # A larger tolerated drop needs stronger evidence: its p-value is larger.
    p = [
        compare(
            [(o, GateSpec(s.suite, s.entry, s.level, GateRule(max_drop=m))) for o, s in cand],
            base,
            "b",
        )[0].p_regression
        for m in (0.02, 0.05, 0.1)
    ]
    assert p[0] < p[1] < p[2] < 1.0


def test_suite_keys_for_the_regression_gate(tmp_path: Path) -> None:
    from pytest_reasoning.config import load_suite
    from pytest_reasoning.errors import InvalidSuite

    path = tmp_path / "s.yaml"
    path.write_text(
        "max_drop: 0.02\nalpha: 0.01\ntasks:\n  - task: dyval.arithmetic\n"
        "    levels:\n      D1: {max_drop: 0.1}\n      D2: {}\n"
    )
    d1, d2 = load_suite(str(path)).entries[0].levels
    assert (d1.rule.max_drop, d1.rule.alpha, d2.rule.max_drop, d2.rule.alpha) == (
        0.1,
        0.01,
        0.02,
        0.01,
    )
    path.write_text("alpha: 1\ntasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n")
    with pytest.raises(InvalidSuite, match=r"alpha: expected a number in \(0, 1\), got 1"):
        load_suite(str(path))


FLAKY_SUITE = """\
name: flaky
seed: 1
samples: 60
tasks:
  - task: dyval.arithmetic
    levels: [D1]
"""


@pytest.mark.e2e
@pytest.mark.parametrize("sequential", [False, True])
def test_a_candidate_that_lost_consistency_over_repeats_is_a_regression(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, sequential: bool
) -> None:
    """Issue 39: right on 2 of 3 repeats of every item (accuracy 0.667) against a baseline
    right on all 60, the majority votes agree and the comparison read "candidate 1.000,
    baseline 1.000, McNemar p 1", exit 0. The gate measures mean accuracy, so the comparison
    tests per-item mean differences: a REGRESSION, fixed-n and sequential alike."""
    pytester.makefile(".yaml", flaky=FLAKY_SUITE)
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--llm-api-base", fake_server.url, "--reasoning-cache", "off",
        "--llm", "openai/right:2/3", "--llm-baseline", "openai/oracle",
        "--reasoning-repeats", "3", f"--junitxml={junit}",
        *(["--reasoning-sequential"] if sequential else []),
    )  # fmt: skip
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    result.stdout.fnmatch_lines(
        [
            "*REGRESSION dyval.arithmetic D1: openai/right:2/3 is worse than openai/oracle: "
            "per-item mean accuracy 0.667 vs 1.000 over repeats on * paired items (candidate "
            "worse on *, better on 0); difference -0.333 *, exact sign-flip test on per-item "
            "mean differences, Holm-adjusted p = * < alpha 0.05*",
            "*items worse/better/same*p (two-sided)*",
            "openai/right:2/3*dyval.arithmetic*D1*/0/0*0.667*1.000*-0.333*sign-flip*REGRESSION",
        ]
    )
    props = json.loads(
        re.search(r'name="reasoning.comparison" value="([^"]*)"', junit.read_text())
        .group(1)  # type: ignore[union-attr]
        .replace("&quot;", '"')
    )
    assert props["test"] == "sign-flip" and props["items_worse"] > 0
    assert props["candidate_accuracy"] == pytest.approx(2 / 3) and props["regressed"]
    if sequential:
        assert "regression settled early at" in out


def _repeated(model: str, rights: list[int], repeats: int = 3) -> list[tuple[Outcome, GateSpec]]:
    """Item k answered ``repeats`` times, right on the first ``rights[k]`` of them."""
    spec = GateSpec("s", "dyval.arithmetic", "D1", GateRule())
    return [
        (
            Outcome(
                item_id=f"x[D1-s1-{k:03d}" + (f"-r{r}]" if repeats > 1 else "]"), model=model, task="dyval.arithmetic", level="D1", seed=1,
                prompt_sha256=f"h{k}", response="", extracted=str(r < right), gold="True",
                correct=r < right, failure_mode=None, error=None, prompt_tokens=None,
                completion_tokens=None, latency_s=0.0, repeat=r, repeats=repeats,
            ),
            spec,
        )
        for k, right in enumerate(rights)
        for r in range(repeats)
    ]  # fmt: skip


def test_comparisons_over_repeats_test_per_item_mean_differences() -> None:
    from pytest_reasoning.gates import item_scores
    from pytest_reasoning.report.tables import comparisons_table

    base = item_scores(o for o, _ in _repeated("b", [3] * 20))
    (flaky,) = compare(_repeated("c", [2] * 20), base, "b")
    # The majority votes agree on every item; the means do not.
    assert flaky.table == PairedTable(20, 0, 0, 0)
    assert flaky.means is not None and (flaky.means.worse, flaky.means.tied) == (20, 0)
    assert flaky.candidate_accuracy == pytest.approx(2 / 3) and flaky.baseline_accuracy == 1.0
    assert flaky.p_regression == pytest.approx(2.0**-20) and flaky.regressed  # all 20 worse
    assert flaky.test == "sign-flip" and "exact sign-flip test" in flaky.reason()
    # Mixed: worse by 1/3 on 6 items, better by 2/3 on 2, the same on 12: S = -2 + 4/3 < 0.
    (mixed,) = compare(_repeated("c", [2] * 6 + [3] * 12 + [3] * 2), item_scores(
        o for o, _ in _repeated("b", [3] * 6 + [3] * 12 + [1] * 2)
    ), "b")  # fmt: skip
    # Of the 2**8 sign flips of (1/3 x 6, 2/3 x 2), those with a sum <= -2/3: by hand.
    low = sum(
        math.comb(6, k) * math.comb(2, j)
        for k in range(7)
        for j in range(3)
        if (6 - 2 * k) + 2 * (2 - 2 * j) <= -2
    )
    assert mixed.p_regression == pytest.approx(low / 256) and not mixed.regressed
    table = comparisons_table([flaky, mixed])
    assert table.headers[4] == "items worse/better/same" and table.rows[0][4] == "20/0/0"
    assert table.rows[1][4] == "6/2/12" and table.rows[0][8].endswith(" sign-flip")
    # One sample per item on both sides: McNemar, and the table as it always was.
    (plain,) = compare(_repeated("c", [0] * 3 + [1] * 17, 1), item_scores(
        o for o, _ in _repeated("b", [1] * 20, 1)
    ), "b")  # fmt: skip
    assert plain.means is None and plain.test == "McNemar"
    assert plain.p_regression == pytest.approx(1 / 8)
    assert comparisons_table([plain]).headers[4] == "both/only base/only cand/neither"
    assert "p_mcnemar" in plain.to_dict() and "test" not in plain.to_dict()
    # A stored baseline asked once per item against a candidate asked 3 times: the
    # differences are skewed even between equal models, so the betting test decides.
    (unmatched,) = compare(_repeated("c", [2] * 20), item_scores(
        o for o, _ in _repeated("b", [1] * 20, 1)
    ), "b")  # fmt: skip
    assert unmatched.means is not None and unmatched.test == "betting"
    assert unmatched.regressed and "betting test on per-item mean differences" in (
        unmatched.reason()
    )


def test_baseline_pairs_items_over_repeats_by_their_means() -> None:
    from pytest_reasoning.gates import GateRule, GateSpec, baseline_answers, compare

    spec = GateSpec("s", "e", "D1", GateRule())

    def sample(model: str, item: int, repeat: int, correct: bool) -> Outcome:
        return Outcome(
            f"e[D1-s1-{item:03d}-r{repeat}]", model, "t", "D1", 1, f"p{item}", "", str(correct),
            "True", correct, None, None, None, None, 0.0, repeat=repeat, repeats=3,
        )  # fmt: skip

    # The candidate is right on items 0-5 in 2 of 3 samples, wrong on 6-9; the baseline
    # (asked once) is right everywhere: 10 items, not 3 x 10 samples. The majority votes
    # (the table) disagree on 4 items; the per-item means, which the test compares, on all
    # 10 (issue 39: majority votes hid lost consistency).
    cand = [sample("c", i, r, i < 6 and r != 2) for i in range(10) for r in range(3)]
    base = baseline_answers([sample("b", i, 0, True) for i in range(10)])
    assert len(base) == 10 and all(base.values())
    (c,) = compare([(o, spec) for o in cand], base, "b")
    assert (c.table.n, c.table.both, c.table.only_baseline) == (10, 6, 4)
    assert c.means is not None and (c.means.worse, c.means.tied) == (10, 0)
    assert c.candidate_accuracy == pytest.approx(0.4) and c.baseline_accuracy == 1.0
