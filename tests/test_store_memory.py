"""Memory stays flat (issue 24): the ledger tallies every outcome and keeps slim answers for
pairing, the results store keeps whole outcomes only where asked; comparisons come out the
same."""

from __future__ import annotations

from typing import Any

from pytest_reasoning.core import Outcome
from pytest_reasoning.gates import (
    GateRule,
    GateSpec,
    Ledger,
    ResultStore,
    baseline_answers,
    compare,
)
from pytest_reasoning.report import summary_reads


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
