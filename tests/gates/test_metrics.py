"""Gate metrics: the registry of `Metric` objects (accuracy, cell, pass@k, pass^k), each
metric's item value and verdict through the ledger; pass@k, pass^k, majority vote and
clustered intervals computed and gated in a run."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_reasoning.core import Outcome
from pytest_reasoning.gates import GateRule, GateSpec, Ledger, LevelStats, decide_gates, metric
from pytest_reasoning.gates.clustered import (
    clustered_interval,
    design_effect,
    majority_correct,
    pass_at_k,
    pass_hat_k,
)
from pytest_reasoning.gates.metrics import (
    SPELLINGS,
    Accuracy,
    CellAccuracy,
    PassAll,
    PassAny,
    sample_credit,
)
from pytest_reasoning.stats import wilson_interval
from pytest_reasoning.testing.server import FakeOpenAIServer


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_clustered_interval_lies_between_items_and_samples() -> None:
    # 20 items x 5 repeats; items are either always right or always wrong: samples of an item
    # carry no more information than the item, so n_eff is the number of items.
    agree = [[1.0] * 5 if i % 2 else [0.0] * 5 for i in range(20)]
    assert design_effect(agree) == pytest.approx(5.0)
    assert clustered_interval(agree) == pytest.approx(wilson_interval(10, 20))
    # Right at random within every item: as informative as 100 independent samples.
    mixed = [[1.0, 0.0, 1.0, 0.0, float(i % 2)] for i in range(20)]
    assert design_effect(mixed) == pytest.approx(1.0)
    hits = sum(map(sum, mixed))
    assert clustered_interval(mixed) == pytest.approx(wilson_interval(hits, 100))
    assert design_effect([[1.0] * 5] * 3) == 5.0  # all right: no spread to learn from


def test_pass_at_k_and_majority_vote() -> None:
    assert pass_at_k(5, 0, 5) == 0.0 and pass_at_k(5, 1, 5) == 1.0
    assert pass_at_k(5, 1, 1) == pytest.approx(0.2)
    assert pass_at_k(10, 3, 2) == pytest.approx(1 - 21 / 45)
    assert majority_correct([("7", True), ("3", False), ("7", True)])
    assert not majority_correct([("3", False), ("7", True)])  # a tie: the first answer given
    assert not majority_correct([(None, False), (None, False), ("7", True)])


def test_pass_hat_k_is_every_one_of_k_samples_right() -> None:
    """pass^k (Yao et al. 2024): C(c, k) / C(n, k), unbiased; 1 - it is not pass@k."""
    assert pass_hat_k(5, 5, 5) == 1.0 and pass_hat_k(5, 4, 5) == 0.0
    assert pass_hat_k(5, 3, 1) == pytest.approx(0.6)  # pass^1 is the accuracy
    assert pass_hat_k(10, 7, 3) == pytest.approx(35 / 120)
    assert pass_hat_k(3, 2, 3) == 0.0 and pass_at_k(3, 2, 3) == 1.0
    with pytest.raises(ValueError, match="pass\\^k needs 0 < k <= n"):
        pass_hat_k(2, 1, 3)
    # A level gated on pass^3: three items right 3/3, 2/3 and 1/3 of the time.
    spec = GateSpec("s.yaml", "t", "L", GateRule(min_accuracy=0.3, metric="pass^3"))
    stats = LevelStats("m", spec, "t")
    for item, right in enumerate((3, 2, 1)):
        for r in range(3):
            stats.add(
                Outcome(f"t[L-{item}-r{r}]", "m", "t", "L", 1, "p", "x", "x", "x",
                        r < right, None, None, None, None, 0.0, repeat=r, repeats=3)
            )  # fmt: skip
    assert stats.pass_all() == pytest.approx(1 / 3) and stats.pass_at() == 1.0
    assert stats.measure == pytest.approx(1 / 3)
    (result,) = decide_gates([stats])
    assert result.passed and result.reason.startswith(
        "pass^3 0.333 (1.0/3 items) >= min_accuracy 0.3"
    )
    assert stats.interval() == pytest.approx(wilson_interval(1.0, 3))  # over items


def test_a_level_whose_every_sample_failed_is_not_a_failed_gate() -> None:
    from pytest_reasoning.gates import GateRule, GateSpec, LevelStats, decide_gates

    stats = LevelStats("m", GateSpec("s", "e", "D1", GateRule(min_accuracy=0.5)), "t")
    failed = Outcome(
        "i",
        "m",
        "t",
        "D1",
        1,
        "p",
        None,
        None,
        "1",
        None,
        None,
        "HTTP 401",
        None,
        None,
        0.0,
        error_kind="stop",
    )
    stats.add(failed)
    (gate,) = decide_gates([stats])
    assert gate.passed is None and "infrastructure" in gate.reason


@pytest.mark.e2e
@pytest.mark.parametrize("sequential", [False, True])
def test_pass_hat_k_gates_a_model_right_on_2_of_3_repeats(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, sequential: bool
) -> None:
    """Model right:2/3 answers every item right 2 times in 3: pass@3 passes, pass^3 fails
    (fixed n, and sequential: a level settled by the anytime test on per-item values)."""
    pytester.makefile(
        ".yaml",
        s="samples: 10\nrepeats: 3\n"
        + f"sequential: {str(sequential).lower()}\n"
        + "tasks:\n"
        + "  - task: dyval.reachability\n"
        + "    levels: {D2: {min_accuracy: 0.5, metric: pass@3}, D3: {min_accuracy: 0.5, metric: pass^k}}\n",
    )
    args = ("--llm", "openai/right:2/3", "--llm-api-base", fake_server.url, "--reasoning-cache", "off")
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines_random(
        [
            "*GATE FAILED openai/right:2/3 dyval.reachability D3: *pass^k 0.000 (0.0*< min_accuracy 0.5*",
            "FAILED s.yaml::dyval.reachability?D3-gate? - *",
        ]
    )
    assert "D2-gate" not in "\n".join(ln for ln in result.outlines if ln.startswith("FAILED"))


@pytest.mark.e2e
@pytest.mark.fresh_process  # asserts that a warm rerun never imports litellm
def test_repeats_give_k_cached_samples_per_item_and_pass_at_k(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(
        ".yaml",
        s="samples: 4\nrepeats: 5\ntasks:\n  - {task: dyval.arithmetic, levels: {D1: {min_accuracy: 0.1, confidence: 0.9}}}\n",
    )
    res = pytester.path / "r.jsonl"
    args = ("--llm", "openai/coin", "--llm-api-base", fake_server.url, f"--reasoning-results={res}")
    first = run(pytester, *args)
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    first.stdout.fnmatch_lines(["*k*pass@k*majority*", "openai/coin*D1*20*5*"])
    got = rows(res)
    assert sorted(r["item_id"][-4:] for r in got) == sorted(
        f"-r{k}]" for k in range(5) for _ in range(4)
    )
    db = pytester.path / ".reasoning_cache" / "responses.sqlite3"
    assert sqlite3.connect(db).execute("select count(*) from responses").fetchone()[0] == 20
    assert fake_server.stats()["total"] == 20  # identical requests, five answers each
    # A warm rerun replays all five, asks nothing, and does not even import litellm (what
    # each model accepts was kept beside the cache).
    pytester.makeconftest(
        "import sys\n"
        "def pytest_unconfigure(config):\n"
        "    open('imported.txt', 'w').write(str('litellm' in sys.modules))\n"
    )
    again = run(pytester, *args)
    assert again.ret == pytest.ExitCode.OK and fake_server.stats()["total"] == 20
    assert (pytester.path / "imported.txt").read_text() == "False"
    # --reasoning-repeats overrides the suite's.
    listed = pytester.runpytest("--llm", "reference", "--reasoning-repeats", "2", "--co", "-q")
    listed.stdout.fnmatch_lines(
        ["s.yaml::dyval.arithmetic[[]D1-s1-000-r1[]]", "9 tests collected*"]
    )

def test_the_registry_reads_every_suite_spelling_and_nothing_else() -> None:
    assert SPELLINGS == ("accuracy", "puzzle", "cell", "pass@K", "pass^K")
    assert metric("accuracy") == metric("puzzle") == Accuracy()
    assert metric("cell") == CellAccuracy()
    assert metric("pass@3") == PassAny("pass@3", "pass@3", k=3)
    assert metric("pass^k") == PassAll("pass^k", "pass^k", k=None)
    for bad in ("pass^0", "pass^three", "pass^", "Pass^3", "cells", "", None, 3, ["cell"]):
        assert metric(bad) is None, bad


def test_what_each_metric_needs_of_the_task_and_the_repeats() -> None:
    needs = {
        name: (m.needs_credit, m.needs_repeats, m.per_item, m.graded, m.label)
        for name in ("accuracy", "cell", "pass@3", "pass^k")
        if (m := metric(name)) is not None
    }
    assert needs == {
        "accuracy": (False, None, False, False, "accuracy"),
        "cell": (True, None, False, True, "cell accuracy"),
        "pass@3": (False, 3, True, False, "pass@3"),
        "pass^k": (False, None, True, False, "pass^k"),
    }


def test_an_items_value_under_each_metric() -> None:
    """One item, three samples: right (credit 1), right, wrong with credit 0.5."""
    samples = [(True, 1.0), (True, 1.0), (False, 0.5)]
    values = {
        name: m.item_value(samples, 3)
        for name in ("accuracy", "cell", "pass@3", "pass^3", "pass@1", "pass^2", "pass^k")
        if (m := metric(name)) is not None
    }
    assert values == pytest.approx(
        {
            "accuracy": 2 / 3,
            "cell": 2.5 / 3,
            "pass@3": 1.0,  # one of the three is right
            "pass^3": 0.0,  # not every one is
            "pass@1": 2 / 3,
            "pass^2": 1 / 3,  # C(2, 2) / C(3, 2)
            "pass^k": 0.0,  # k: the level's repeats (3)
        }
    )
    # An item with fewer answered samples than K counts with all it has.
    assert PassAll("pass^3", k=3).item_value([(True, 1.0), (True, 1.0)], 3) == 1.0


def test_a_samples_credit_is_its_score_or_its_verdict() -> None:
    assert (sample_credit(True, None), sample_credit(False, None)) == (1.0, 0.0)
    assert sample_credit(False, 0.25) == 0.25


def _outcome(index: int, repeat: int, correct: bool) -> Outcome:
    item = f"dyval.reachability[D1-s1-{index:03d}-r{repeat}]"
    return Outcome(
        item, "m", "dyval.reachability", "D1", 1, "p", "r", "yes", "yes", correct, None, None,
        None, None, 0.0, repeat=repeat, repeats=3,
    )  # fmt: skip


@pytest.mark.parametrize("sequential", [False, True])
def test_pass_hat_k_and_pass_at_k_decide_opposite_verdicts_on_the_same_answers(
    sequential: bool,
) -> None:
    """Four items, each right on 2 of its 3 repeats: pass@3 passes, pass^3 fails, and a plain
    accuracy gate sees 2/3; fixed-n and sequential (the ledger's in-order feeding)."""
    verdicts = {}
    for name in ("pass@3", "pass^3", "accuracy"):
        rule = GateRule(min_accuracy=0.5, metric=name, sequential=sequential)
        spec = GateSpec("s.yaml", "dyval.reachability", "D1", rule)
        ledger = Ledger(hint="-")
        ledger.plan("m", spec, "dyval.reachability", 12, gate_id="gate", repeats=3)
        decided = []
        for position, (i, r) in enumerate((i, r) for i in range(4) for r in range(3)):
            found, _ = ledger.add(_outcome(i, r, r != 2), spec, position)
            decided += found
        decided += ledger.finish()
        (verdict,) = [v for v in decided if v.nodeid == "gate"]
        verdicts[name] = (verdict.outcome, ledger.gates[0].stats.measure)
    assert verdicts["pass@3"] == ("passed", 1.0)
    assert verdicts["pass^3"][0] == "failed" and verdicts["pass^3"][1] == 0.0
    assert verdicts["accuracy"] == ("passed", pytest.approx(2 / 3))
