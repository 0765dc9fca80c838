"""Sequential gates (``gates.sequential``): curtailment agrees with today's fixed-n rule, the
anytime tests keep their error bounds, the per-answer state machine is the stopping rule the
exact computations use, and a level never asks more than ``n``."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_reasoning.core import Outcome
from pytest_reasoning.gates import GateRule, GateSpec, LevelStats, decide_gates
from pytest_reasoning.gates.paired import PairedTable, mcnemar_regression_p
from pytest_reasoning.gates.sequential import (
    Decision,
    PairedSequence,
    ThresholdSequence,
    expected_calls,
    expected_pair_calls,
)
from pytest_reasoning.gates.signflip import sign_flip
from pytest_reasoning.gates.tails import Critical

THRESHOLDS = st.sampled_from([0.0, 0.2, 0.35, 0.5, 0.6, 0.75, 0.9, 1.0])
CONFIDENCES = st.sampled_from([None, 0.9, 0.95])


def fixed_verdict(answers: list[float], rule: GateRule) -> bool | None:
    """Today's threshold gate on these answers, through the project's own gate code."""
    stats = LevelStats("m", GateSpec("s", "e", "L1", rule), "t")
    for i, a in enumerate(answers):
        stats.add(
            Outcome(f"t[{i}]", "m", "t", "L1", 0, "p", "r", "x", "x", a == 1.0, None, None,
                    None, None, 0.0, score=a if rule.gauge.graded else None)
        )  # fmt: skip
    (gate,) = decide_gates([stats])
    return gate.passed


def feed(seq: ThresholdSequence, answers: list[float]) -> None:
    for a in answers:
        if seq.update(a) is not Decision.CONTINUE:
            break


@settings(max_examples=30, deadline=None)
@given(
    thr=THRESHOLDS,
    conf=CONFIDENCES,
    answers=st.lists(st.booleans(), min_size=1, max_size=40),
    alpha=st.sampled_from([0.05, 0.3]),
)
def test_curtailment_is_the_fixed_n_verdict_whatever_comes_next(
    thr: float, conf: float | None, answers: list[bool], alpha: float
) -> None:
    n = len(answers)
    rule = GateRule(min_accuracy=thr, confidence=conf)
    seq = ThresholdSequence(thr, n, confidence=conf, alpha=alpha)
    feed(seq, [float(a) for a in answers])
    assert seq.decision is not Decision.CONTINUE  # never more than n answers
    assert seq.t <= n and (seq.decision is not Decision.FIXED or seq.t == n)
    if seq.how == "curtailed":
        asked = [float(a) for a in answers[: seq.t]]
        for rest in ([1.0] * (n - seq.t), [0.0] * (n - seq.t), answers[seq.t :]):
            assert fixed_verdict(asked + [float(r) for r in rest], rule) is (
                seq.decision is Decision.PASS
            )


@settings(max_examples=20, deadline=None)
@given(
    thr=st.sampled_from([0.3, 0.5, 0.8]),
    conf=CONFIDENCES,
    answers=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30),
)
def test_curtailment_on_cell_accuracy(thr: float, conf: float | None, answers: list[float]) -> None:
    n = len(answers)
    rule = GateRule(min_accuracy=thr, confidence=conf, metric="cell")
    seq = ThresholdSequence.for_rule(rule, n)
    feed(seq, answers)
    assert seq.t <= n
    if seq.how == "curtailed":
        asked = answers[: seq.t]
        for rest in ([1.0] * (n - seq.t), [0.0] * (n - seq.t)):
            assert fixed_verdict(asked + rest, rule) is (seq.decision is Decision.PASS)


@settings(max_examples=25, deadline=None)
@given(
    thr=st.sampled_from([0.2, 0.5, 0.7, 0.9]),
    conf=CONFIDENCES,
    n=st.integers(2, 80),
    seed=st.integers(0, 2**32 - 1),
    p=st.floats(0.0, 1.0),
)
def test_the_state_machine_stops_on_the_boundaries(
    thr: float, conf: float | None, n: int, seed: int, p: float
) -> None:
    """The per-answer state is the rule ``boundaries`` (and so ``expected_calls``) encode;
    and two states fed the same answers stop at the same answer with the same reason."""
    rng = random.Random(seed)
    answers = [rng.random() < p for _ in range(n)]
    seq, twin = (ThresholdSequence(thr, n, confidence=conf) for _ in range(2))
    if seq.decision is not Decision.CONTINUE:
        return
    fail_at_most, pass_at_least = seq.boundaries()
    feed(seq, [float(a) for a in answers])
    feed(twin, [float(a) for a in answers])
    assert (seq.t, seq.decision, seq.reason) == (twin.t, twin.decision, twin.reason)
    right = 0
    for t, a in enumerate(answers, 1):
        right += a
        if t == n:
            assert (seq.t, seq.decision) == (n, Decision.FIXED)
        elif right >= pass_at_least[t] or right <= fail_at_most[t]:
            want = Decision.PASS if right >= pass_at_least[t] else Decision.FAIL
            assert (seq.t, seq.decision) == (t, want)
            break


@pytest.mark.parametrize("thr,conf", [(0.5, None), (0.7, 0.9), (0.3, None)])
def test_expected_calls_is_exact(thr: float, conf: float | None) -> None:
    """Against every one of the 2^10 answer sequences, weighted by its chance."""
    n, p, alpha = 10, 0.62, 0.3  # a large alpha, so that the anytime test acts at n = 12
    calls = early_pass = early_fail = 0.0
    for answers in itertools.product((0.0, 1.0), repeat=n):
        weight = p ** sum(answers) * (1 - p) ** (n - sum(answers))
        seq = ThresholdSequence(thr, n, confidence=conf, alpha=alpha)
        feed(seq, list(answers))
        calls += weight * seq.t
        early_pass += weight * (seq.decision is Decision.PASS)
        early_fail += weight * (seq.decision is Decision.FAIL)
    got = expected_calls(p, thr, n, confidence=conf, alpha=alpha)
    assert got.calls == pytest.approx(calls, abs=1e-9)
    assert got.early_pass == pytest.approx(early_pass, abs=1e-12)
    assert got.early_fail == pytest.approx(early_fail, abs=1e-12)
    assert got.calls < n  # it does stop early on some sequences


def early_anytime_chances(p: float, thr: float, n: int, conf: float | None) -> tuple[float, float]:
    """Exact chances of an *anytime* (not curtailed) early pass and early fail."""
    seq = ThresholdSequence(thr, n, confidence=conf)
    fail_at_most, pass_at_least = seq.boundaries()
    alive, passed, failed = {0: 1.0}, 0.0, 0.0
    for t in range(1, n):
        nxt: dict[int, float] = {}
        for s, c in alive.items():
            nxt[s] = nxt.get(s, 0.0) + c * (1 - p)
            nxt[s + 1] = nxt.get(s + 1, 0.0) + c * p
        alive = {}
        for s, c in nxt.items():
            if s >= pass_at_least[t]:
                passed += 0.0 if seq.passes(s) else c
            elif s <= fail_at_most[t]:
                failed += c if seq.passes(s + n - t) else 0.0
            else:
                alive[s] = c
    return passed, failed


@pytest.mark.parametrize(
    "thr,n,conf", [(0.6, 100, None), (0.2, 150, None), (0.9, 120, 0.95), (0.5, 60, 0.9)]
)
def test_anytime_verdicts_keep_alpha_at_the_worst_accuracy(
    thr: float, n: int, conf: float | None
) -> None:
    """At an accuracy exactly on the line the fixed-n rule draws (the worst case for both
    sides), each early anytime verdict happens with chance at most alpha (Ville)."""
    line = ThresholdSequence(thr, n, confidence=conf).line
    passed, failed = early_anytime_chances(line, thr, n, conf)
    assert 0.0 < passed <= 0.05 and 0.0 < failed <= 0.05
    below = early_anytime_chances(thr - 0.02, thr, n, conf)[0]
    assert below < passed  # further below the line, passing early is rarer still


def test_false_passes_of_cell_accuracy_stay_below_alpha() -> None:
    """Cell accuracy (values in [0, 1]) just below the threshold: simulated."""
    rng = random.Random(7)
    runs, n, thr, mean = 400, 40, 0.6, 0.58
    early = 0
    for _ in range(runs):
        seq = ThresholdSequence(thr, n, graded=True)
        for _ in range(n):
            if seq.update(rng.betavariate(mean * 4, (1 - mean) * 4)) is not Decision.CONTINUE:
                break
        early += seq.decision is Decision.PASS and seq.how == "anytime"
    assert early / runs <= 0.05


def test_a_clear_model_stops_early_and_says_why() -> None:
    seq = ThresholdSequence(0.6, 100)
    feed(seq, [1.0] * 100)
    assert (seq.decision, seq.how) == (Decision.PASS, "anytime") and seq.t < 15
    assert seq.reason.startswith(f"passed early at {seq.t} of 100 samples: accuracy 1.000")
    low = float(seq.reason.split("lower bound ")[1].split()[0])
    assert 0.6 <= low < 1.0 and seq.reason.endswith(">= min_accuracy 0.6")
    seq.update(False)
    assert seq.extra == 1 and seq.decision is Decision.PASS  # after the verdict: ignored

    wilson = ThresholdSequence(0.6, 100, confidence=0.95)
    feed(wilson, [0.0] * 100)
    assert wilson.decision is Decision.FAIL and wilson.t < 10
    assert (
        "95% anytime upper bound" in wilson.reason and "Wilson lower bound >= 0.6" in wilson.reason
    )

    curtailed = ThresholdSequence(0.5, 10, alpha=0.001)
    feed(curtailed, [1.0] * 10)
    assert (curtailed.t, curtailed.how) == (5, "curtailed")
    assert curtailed.reason.startswith("passed at 5 of 10 samples: 5 right already make")


def test_a_gate_no_answer_can_change_is_settled_before_the_first_call() -> None:
    never = ThresholdSequence(1.0, 50, confidence=0.95)
    assert (never.decision, never.t) == (Decision.FAIL, 0)
    assert "no 50 samples can reach" in never.reason
    always = ThresholdSequence(0.0, 50)
    assert always.decision is Decision.PASS and expected_calls(0.3, 0.0, 50).calls == 0.0


def test_rules_and_bad_input() -> None:
    cell = ThresholdSequence.for_rule(GateRule(min_accuracy=0.5, metric="cell"), 20)
    assert cell.graded and cell.measure == "cell accuracy"
    clustered = ThresholdSequence.for_rule(GateRule(min_accuracy=0.5), 20, repeats=3)
    assert clustered.graded and not clustered.curtail and clustered.unit == "items"
    with pytest.raises(ValueError, match="needs min_accuracy"):
        ThresholdSequence.for_rule(GateRule(), 20)
    with pytest.raises(ValueError, match=r"True or False, got 0\.5"):
        ThresholdSequence(0.5, 10).update(0.5)
    with pytest.raises(ValueError, match=r"value in \[0, 1\], got 1.5"):
        ThresholdSequence(0.5, 10, graded=True).update(1.5)
    with pytest.raises(ValueError, match="n >= 1"):
        ThresholdSequence(0.5, 0)
    with pytest.raises(ValueError, match="alpha"):
        PairedSequence(10, alpha=1.5)
    with pytest.raises(ValueError, match="max_drop"):
        PairedSequence(10, max_drop=1.0)


def feed_pairs(seq: PairedSequence, pairs: list[tuple[bool, bool]]) -> None:
    for cand, base in pairs:
        if seq.update(cand, base) is not Decision.CONTINUE:
            break


PAIRS = st.lists(st.sampled_from([(True, True), (False, True), (True, False), (False, False)]))


def p_value_at_n(pairs: list[tuple[bool, bool]], family: int) -> float:
    """The p-value a level would report had it asked all its pairs without stopping: the
    state's own mixture capital (read from its private part) along the whole sequence."""
    probe = PairedSequence(len(pairs), family=family)
    peak = 0.0
    for t in range(1, len(pairs) + 1):
        table = PairedTable.from_pairs(pairs[:t])
        same = table.both + table.neither
        peak = max(peak, probe._worse.log_capital(table.only_baseline, table.only_candidate, same))
    fixed = mcnemar_regression_p(PairedTable.from_pairs(pairs))
    share = probe.early_share
    return min(1.0, math.exp(-peak) / share, fixed / (1 - share))


@settings(max_examples=30, deadline=None)
@given(
    pairs=PAIRS.filter(lambda p: len(p) >= 1),
    bias=st.sampled_from([(False, True), (True, False)]),
    family=st.sampled_from([1, 3]),
)
def test_paired_curtailment_and_p_values_agree_with_the_completions(
    pairs: list[tuple[bool, bool]], bias: tuple[bool, bool], family: int
) -> None:
    """A settled comparison's verdict holds for the completion that fights it hardest where
    it was curtailed, and the p-value it reports is never below the one any completion would
    give at n (so it stays valid wherever the level stopped)."""
    pairs = pairs + [bias] * 20  # a lopsided tail, so that verdicts do happen
    n = len(pairs)
    seq = PairedSequence(n, family=family)
    feed_pairs(seq, pairs)
    assert seq.t <= n and seq.decision is not Decision.CONTINUE
    asked, left, level = pairs[: seq.t], n - seq.t, seq.alpha / family
    if seq.decision is Decision.FAIL:
        assert seq.p_value() < level  # Holm rejects it whatever the other levels say
    for_candidate, for_baseline = [(True, False)] * left, [(False, True)] * left
    for rest in (for_candidate, for_baseline, pairs[seq.t :]):
        assert seq.p_value() >= p_value_at_n(asked + rest, family) - 1e-12
    if seq.how == "curtailed" and seq.decision is Decision.FAIL:
        assert p_value_at_n(asked + for_candidate, family) < level
    if seq.how == "curtailed" and seq.decision is Decision.PASS:
        assert p_value_at_n(asked + for_baseline, family) >= seq.alpha


def test_paired_false_regressions_stay_below_alpha() -> None:
    """Equal models (half the discordant pairs each way): simulated."""
    rng = random.Random(11)
    runs, n = 500, 60
    rejected = early = 0
    for _ in range(runs):
        seq = PairedSequence(n)
        while seq.decision is Decision.CONTINUE:
            u = rng.random()
            seq.update(u >= 0.25, u < 0.25 or u >= 0.5)
        rejected += seq.p_value() < seq.alpha
        early += seq.decision is Decision.FAIL
    assert rejected / runs <= 0.05 and early / runs <= 0.05


def test_paired_clear_cases_settle_early() -> None:
    worse = PairedSequence(200)
    feed_pairs(worse, [(False, True), (True, True), (True, True)] * 100)
    assert (worse.decision, worse.how) == (Decision.FAIL, "anytime") and worse.t < 100
    assert worse.reason.startswith(f"regression settled early at {worse.t} of 200 paired items")
    better = PairedSequence(200)
    feed_pairs(better, [(True, False), (True, True), (True, True)] * 100)
    assert better.decision is Decision.PASS and better.t < 100
    assert "not worse than the baseline" in better.reason
    assert better.p_value() == 1.0
    same = PairedSequence(30)
    feed_pairs(same, [(True, True)] * 30)
    assert same.decision is Decision.FIXED or same.how == "curtailed"


def test_paired_max_drop_needs_the_fixed_p_value_at_n() -> None:
    seq = PairedSequence(4, max_drop=0.1)
    feed_pairs(seq, [(True, True)] * 4)
    assert seq.decision is Decision.FIXED and not seq.curtail
    with pytest.raises(ValueError, match="fixed_p"):
        seq.p_value()
    keep = 1 - seq.early_share  # the fixed-n part's share of alpha
    assert seq.p_value(0.9) == pytest.approx(0.9 / keep)
    assert seq.p_value(0.009) == pytest.approx(0.009 / keep)


def test_expected_pair_calls_is_seeded() -> None:
    one = expected_pair_calls(0.7, 0.9, 40, runs=20)
    assert one == expected_pair_calls(0.7, 0.9, 40, runs=20)
    assert 0 < one.calls <= 40 and one.early_pass > 0.5
    with pytest.raises(ValueError, match="discordance"):
        expected_pair_calls(0.5, 0.9, 40, discordance=0.1)
    # No discordant pair can come any more: "no regression possible" before the last pair.
    same = expected_pair_calls(0.8, 0.8, 10, runs=5, discordance=0.0)
    assert same.calls < 10 and same.early_pass == 1.0


def critical_by_sum(pairs: int, share: float, level: float) -> int:
    """The fewest regression pairs whose exact McNemar p-value, over 1 − share, is below
    level, by bisection on :func:`mcnemar_regression_p` (an oracle independent of the walk)."""

    def rejects(k: int) -> bool:
        p = mcnemar_regression_p(PairedTable(0, k, pairs - k, 0)) if k <= pairs else 0.0
        return not p / (1.0 - share) >= level

    low, high = 0, pairs + 1  # rejects(pairs + 1)
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if rejects(mid) else (mid + 1, high)
    return low


@pytest.mark.parametrize("exact_up_to", [0, 4096])
@pytest.mark.parametrize(("share", "level"), [(0.05, 0.05), (0.05, 0.05 / 3), (0.5, 1e-6)])
def test_critical_counts_are_walked_with_the_pairs(
    exact_up_to: int, share: float, level: float
) -> None:
    """Curtailment's critical counts follow the pairs by O(1) Pascal steps per answer (exact
    integers up to ``exact_up_to`` pairs, floats with a guard band above) and are the counts
    the exact McNemar p-value gives. Before (issue 44) every answer summed 2**pairs afresh."""
    rng = random.Random(7)
    walk = Critical(share, level, exact_up_to=exact_up_to)
    pairs, calls, checked = 1200, 0, set()
    while pairs >= 0:
        got = walk(pairs)
        calls += 1
        if pairs < 30 or pairs % 61 == 0:
            assert got == critical_by_sum(pairs, share, level), pairs
            checked.add(pairs)
        if rng.random() < 0.7:
            pairs -= 1
    assert len(checked) > 40
    # From the top once (at most the pairs above the critical count), then a step or two per
    # answer: counted, not timed.
    assert walk.steps <= 1200 + 3 * calls
    assert walk.redone <= 2


def test_a_sequential_comparison_of_20000_pairs_stays_linear() -> None:
    """Issue 44: 10,000 pairs took 59 s and 20,000 did not finish in 300 s. The walk's steps
    are counted (a regression to summing afresh would also make this test visibly slow)."""
    n = 20_000
    seq = PairedSequence(n)
    # As many wins as losses: no early evidence either way, so the level runs to its end.
    pairs = [(True, True), (True, False), (False, True), (False, False), (True, True)] * 4000
    feed_pairs(seq, pairs)
    assert seq.decision is Decision.PASS and seq.t > 19_000
    for walk in (seq._fail_at, seq._pass_at):
        assert walk.steps <= n + 3 * seq.t and walk.redone <= 2
    # The verdict is the fixed-n one: no regression on all 20,000 pairs.
    assert mcnemar_regression_p(PairedTable.from_pairs(pairs)) >= seq.alpha


@settings(max_examples=40, deadline=None)
@given(
    asked=st.lists(st.integers(-3, 3), min_size=0, max_size=12),
    rest=st.lists(st.integers(-3, 3), min_size=1, max_size=8),
)
def test_graded_p_value_takes_the_completion_that_favours_the_candidate(
    asked: list[int], rest: list[int]
) -> None:
    """Over repeats a comparison stopped early reports the sign-flip p-value of the items
    asked plus the rest all favouring the candidate (+1): never below the p-value any
    completion would give at n, so it stays valid wherever the level stopped."""
    done = [Fraction(d, 3) for d in asked]
    worst = sign_flip(done + [Fraction(1)] * len(rest)).p_lower
    assert worst >= sign_flip(done + [Fraction(d, 3) for d in rest]).p_lower - 1e-12


def test_a_flaky_candidate_over_repeats_settles_early_as_a_regression() -> None:
    seq = PairedSequence(60, graded=True)
    assert not seq.curtail  # the sign-flip test is no function of counts
    for _ in range(60):
        if seq.update(Fraction(2, 3), Fraction(1)) is not Decision.CONTINUE:
            break
    assert (seq.decision, seq.how) == (Decision.FAIL, "anytime") and seq.t < 60
    assert seq.reason.startswith(
        f"regression settled early at {seq.t} of 60 paired items (candidate worse on {seq.t}, "
        "better on 0)"
    )
    assert seq.p_value() < seq.alpha
    same = PairedSequence(30, graded=True)
    for _ in range(30):
        same.update(Fraction(2, 3), Fraction(2, 3))
    assert same.decision is Decision.FIXED and same.p_value() == 1.0
