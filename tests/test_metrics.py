"""Gate metrics as objects (``gates.metrics``): the registry, each metric's item value, and a
level's verdict under each, through the ledger."""

from __future__ import annotations

import pytest

from pytest_reasoning.core import Outcome
from pytest_reasoning.gates import GateRule, GateSpec, Ledger, metric
from pytest_reasoning.gates.metrics import (
    SPELLINGS,
    Accuracy,
    CellAccuracy,
    PassAll,
    PassAny,
    sample_credit,
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
