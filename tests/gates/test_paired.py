"""Paired comparison statistics (exact McNemar, Newcombe's interval, Holm, sample size), the
``plan`` command and ``--reasoning-seed auto``."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from pytest_reasoning.cli import main
from pytest_reasoning.gates.paired import (
    PairedTable,
    holm,
    mcnemar_exact,
    mcnemar_regression_p,
    paired_difference_interval,
    samples_to_detect_drop,
)
from pytest_reasoning.gates.sequential import Decision, PairedSequence
from pytest_reasoning.gates.signflip import (
    betting_test,
    item_tests,
    mean_difference_interval,
    sign_flip,
)


def test_table_from_pairs() -> None:
    pairs = [(True, True)] * 5 + [(False, True)] * 3 + [(True, False)] * 1 + [(False, False)] * 2
    t = PairedTable.from_pairs(pairs)
    assert (t.both, t.only_baseline, t.only_candidate, t.neither, t.n) == (5, 3, 1, 2, 11)
    assert t.candidate_accuracy == pytest.approx(6 / 11)
    assert t.baseline_accuracy == pytest.approx(8 / 11)
    assert t.difference == pytest.approx(-2 / 11)


def test_exact_mcnemar_by_hand() -> None:
    # 1 vs 9 discordant pairs: 2 · P(X >= 9 | n = 10, 1/2) = 2 · 11/1024.
    t = PairedTable(50, 9, 1, 40)
    assert mcnemar_exact(t) == pytest.approx(22 / 1024)
    assert mcnemar_regression_p(t) == pytest.approx(11 / 1024)
    assert mcnemar_regression_p(PairedTable(50, 1, 9, 40)) == pytest.approx(1 - 1 / 1024)
    assert mcnemar_exact(PairedTable(10, 0, 0, 3)) == 1.0


def test_exact_mcnemar_is_the_sum_of_binomial_coefficients() -> None:
    """Summed term by term from the nearer end (issue 44: math.comb per term made 20,000
    pairs take seconds), the p-value is still the float of the exact sum."""
    rng = random.Random(5)
    cases = [(b, n) for n in range(13) for b in range(n + 1)]
    cases += [(rng.randint(0, n), n) for n in (97, 400, 1500) for _ in range(4)]
    for b, n in cases:
        exact = sum(math.comb(n, i) for i in range(b, n + 1)) / (1 << n)
        assert mcnemar_regression_p(PairedTable(0, b, n - b, 0)) == exact


def test_holm_by_hand() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]
    assert holm([]) == []


def test_newcombe_interval_covers_the_true_difference() -> None:
    # Monte Carlo coverage of the 95% interval: correlated pairs, accuracies near 0.85.
    rng = random.Random(7)
    hits, runs = 0, 2000
    p_both, p_only_b, p_only_c = 0.75, 0.10, 0.05  # true difference -0.05
    for _ in range(runs):
        pairs = []
        for _ in range(120):
            u = rng.random()
            if u < p_both:
                pairs.append((True, True))
            elif u < p_both + p_only_b:
                pairs.append((False, True))
            elif u < p_both + p_only_b + p_only_c:
                pairs.append((True, False))
            else:
                pairs.append((False, False))
        low, high = paired_difference_interval(PairedTable.from_pairs(pairs), 0.95)
        hits += low <= -0.05 <= high
    assert 0.93 <= hits / runs <= 0.98


def test_interval_contains_the_estimate_and_is_bounded() -> None:
    for t in (PairedTable(0, 0, 0, 10), PairedTable(10, 0, 0, 0), PairedTable(3, 4, 1, 2)):
        low, high = paired_difference_interval(t)
        assert -1 <= low <= t.difference <= high <= 1


def test_sample_size_by_hand_and_by_simulation() -> None:
    n = samples_to_detect_drop(0.85, 0.05, power=0.8, alpha=0.05)
    psi = 0.85 * 0.2 + 0.8 * 0.15
    z_a, z_b = 1.6448536269514722, 0.8416212335729143
    expected = (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - 0.0025)) ** 2 / 0.0025
    assert n == math.ceil(expected) == 716
    # Simulated power of the one-sided exact McNemar test at that size, independent errors.
    rng = random.Random(3)
    detected, runs = 0, 300
    for _ in range(runs):
        pairs = [(rng.random() < 0.80, rng.random() < 0.85) for _ in range(n)]
        detected += mcnemar_regression_p(PairedTable.from_pairs(pairs)) <= 0.05
    assert 0.72 <= detected / runs <= 0.88


# A drop of 0.1 (199 samples) rather than 0.05 (716): the sequential simulation the command
# also runs costs CPU in proportion to n (6 s at 716, 1.5 s at 199, 0.4 s at a drop of 0.2 and
# 59 samples, the inner loop's); sample_size is checked by hand above.
@pytest.mark.parametrize(
    ("drop", "n", "candidate"),
    [("0.2", 59, "0.65"), pytest.param("0.1", 199, "0.75", marks=pytest.mark.e2e)],
)
def test_plan_command(
    capsys: pytest.CaptureFixture[str], drop: str, n: int, candidate: str
) -> None:
    args = ["plan", "--drop", drop, "--power", "0.8", "--baseline-accuracy", "0.85"]
    assert main([*args, "--levels", "4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"{n} samples per level detect a drop from 0.85 to {candidate} with power 0.8"
    )
    assert "when Holm's correction spans 4 levels" in out


def test_plan_is_bounded_in_time(capsys: pytest.CaptureFixture[str]) -> None:
    """Past what plan computes quickly it says so, instead of running for minutes: no
    simulation for a comparison of 63,926 items, no exact sum for a gate of 100,000."""
    assert main(["plan", "--drop", "0.005", "--baseline-accuracy", "0.85"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("63926 samples per level detect a drop")
    assert "sequential: not simulated above 3000 paired items" in out
    gate = ["plan", "--accuracy", "0.6", "--min-accuracy", "0.6", "--samples", "100000"]
    assert main(gate) == 0
    assert "fixed-n asks 100000; sequential: not computed above 10000 samples" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--drop", "0.9", "--baseline-accuracy", "0.85"], "--drop, --baseline-accuracy: need"),
        (["--drop", "0.05", "--baseline-accuracy", "0.85", "--power", "2"], "--power, --alpha"),
        (["--drop", "0.05", "--baseline-accuracy", "0.85", "--levels", "0"], "--levels"),
        # Issue 44: a MemoryError traceback, and a command that ran past 60 s.
        (["--drop", "1e-9", "--baseline-accuracy", "0.85"], "--drop 1e-09: detecting it needs"),
        (
            ["--accuracy", "0.6", "--min-accuracy", "0.6", "--samples", "1000000"],
            "--samples: must be in 1..100000",
        ),
        (["--accuracy", "1.5", "--min-accuracy", "0.6", "--samples", "10"], "--accuracy: must"),
    ],
)
def test_plan_bad_arguments(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", *args]) == 4
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


SUITE = """\
seed: 1
samples: 2
tasks:
  - task: dyval.arithmetic
    levels: [D1]
"""


@pytest.mark.e2e
def test_seed_auto_is_printed_and_replayable(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", s=SUITE)
    args = ("--llm", "reference", "--collect-only")
    verbose = pytester.runpytest_subprocess(*args, "--reasoning-seed", "auto:v1.2.3", "-n", "2")
    header = [ln for ln in verbose.stdout.lines if "auto from 'v1.2.3'" in ln]
    assert header, verbose.stdout.str()
    auto = pytester.runpytest_subprocess(*args, "-q", "--reasoning-seed", "auto:v1.2.3")
    seed = header[0].split("--reasoning-seed ")[1].rstrip(")")
    replay = pytester.runpytest_subprocess(
        "--llm", "reference", "--reasoning-seed", seed, "--collect-only", "-q"
    )
    ids = sorted(ln for ln in auto.stdout.lines if "::" in ln)
    assert ids and ids == sorted(ln for ln in replay.stdout.lines if "::" in ln)
    assert f"-s{seed}-000" in ids[0]
    other = pytester.runpytest_subprocess(
        "--llm", "reference", "--reasoning-seed", "auto:v1.2.4", "--collect-only", "-q"
    )
    assert sorted(ln for ln in other.stdout.lines if "::" in ln) != ids


@pytest.mark.e2e
def test_seed_must_be_int_or_auto(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", s=SUITE)
    result = pytester.runpytest_subprocess("--llm", "reference", "--reasoning-seed", "soon")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--reasoning-seed: expected an integer, 'auto' or 'auto:TEXT'*"])


def test_sign_flip_on_zero_one_differences_is_exact_mcnemar() -> None:
    for b, c in itertools.product(range(9), range(9)):
        diffs = [Fraction(-1)] * b + [Fraction(1)] * c + [Fraction(0)] * 4
        test = sign_flip(diffs)
        table = PairedTable(4, b, c, 0)
        assert test.p_lower == pytest.approx(mcnemar_regression_p(table), rel=1e-12)
        assert test.p_two_sided == pytest.approx(mcnemar_exact(table), rel=1e-12)


def test_sign_flip_counts_every_sign_assignment() -> None:
    """Against all 2**n sign assignments of per-item mean differences (3 and 2 repeats)."""
    rng = random.Random(8)
    for _ in range(60):
        n = rng.randint(1, 9)
        diffs = [Fraction(rng.randint(-3, 3), rng.choice([2, 3])) for _ in range(n)]
        total = sum(diffs)
        sums = [
            sum(sign * abs(d) for sign, d in zip(signs, diffs, strict=True))
            for signs in itertools.product((1, -1), repeat=n)
        ]
        test = sign_flip(diffs)
        assert test.exact and test.method == "sign-flip"
        assert test.p_lower == pytest.approx(sum(s <= total for s in sums) / 2**n)
        assert test.p_upper == pytest.approx(sum(s >= total for s in sums) / 2**n)


def test_sign_flip_normal_approximation_keeps_its_bound() -> None:
    """Past the exact budget: the normal approximation, within its Berry–Esseen bound of
    the exact value (and in fact far closer)."""
    rng = random.Random(9)
    diffs = [Fraction(rng.choice([-2, -1, 0, 0, 1, 1, 2]), 3) for _ in range(300)]
    exact, approx = sign_flip(diffs), sign_flip(diffs, work=0)
    assert exact.exact and approx.method == "sign-flip normal" and 0 < approx.error < 0.2
    assert abs(exact.p_lower - approx.p_lower) <= approx.error
    assert abs(exact.p_lower - approx.p_lower) < 0.01


def test_betting_and_the_interval_over_repeats() -> None:
    flaky = [Fraction(-1, 3)] * 20  # right on 2 of 3 repeats, against always right
    assert betting_test(flaky).p_lower < 0.05 < betting_test(flaky[:3]).p_lower
    assert betting_test(flaky).p_upper == 1.0
    # Worse by 1/3 is within a tolerated drop of 0.4, beyond one of 0.1.
    assert item_tests(flaky, matched=True, max_drop=0.4)[1].p_lower == 1.0
    assert item_tests(flaky * 2, matched=True, max_drop=0.1)[1].p_lower < 0.05
    low, high = mean_difference_interval(flaky)
    assert low < -1 / 3 < high < 0 and mean_difference_interval([]) == (-1.0, 1.0)


def _item_means(
    rng: random.Random, n: int, repeats: tuple[int, int], accuracies: list[float]
) -> list[tuple[Fraction, Fraction]]:
    """n items, each with an accuracy drawn from ``accuracies``, answered by two equal
    models ``repeats`` (candidate, baseline) times: their per-item means."""
    out = []
    for _ in range(n):
        p = rng.choice(accuracies)
        right = [sum(rng.random() < p for _ in range(r)) for r in repeats]
        out.append((Fraction(right[0], repeats[0]), Fraction(right[1], repeats[1])))
    return out


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("repeats", "accuracies"),
    [((3, 3), [0.5]), ((3, 3), [0.1, 0.5, 0.9, 0.99]), ((3, 3), [0.97]), ((3, 1), [0.97]),
     ((1, 3), [0.9]), ((5, 5), [0.8])],
)  # fmt: skip
def test_comparisons_over_repeats_keep_alpha_between_equal_models(
    repeats: tuple[int, int], accuracies: list[float]
) -> None:
    """The false regression rate at alpha 0.05 between equal models, simulated (1,000 runs
    of 40 items; its standard error is 0.7 points): fixed n (sign flips where the repeats
    match, the betting test where they do not: 3 against 1 at 0.97 was 8.6% with sign
    flips) and the sequential gate's p-value wherever it stopped. Measured: 2.7-3.3% with
    sign flips, 0-0.4% betting; sequential 0-5.6% of 250 runs (docs/upgrades.md)."""
    rng = random.Random(12)
    runs, n = 1000, 40
    fixed = sequential = 0
    for run in range(runs):
        means = _item_means(rng, n, repeats, accuracies)
        diffs = [c - b for c, b in means]
        matched = repeats[0] == repeats[1]
        fixed += item_tests(diffs, matched=matched, max_drop=0.0)[1].p_lower < 0.05
        if run % 4 == 0:  # the sequential gate on every fourth draw (it costs more)
            seq = PairedSequence(n, graded=True)
            for c, b in means:
                if seq.update(c, b, matched=matched) is not Decision.CONTINUE:
                    break
            sequential += seq.p_value() < 0.05
    assert fixed / runs <= 0.05 + 0.015
    assert sequential / (runs / 4) <= 0.05 + 0.03


def test_items_of_one_problem_are_one_pair() -> None:
    """Issue 41: items that ask the same problem up to renaming are not independent pairs:
    each side's majority over them is one pair of McNemar's table."""
    from pytest_reasoning.core import Outcome
    from pytest_reasoning.gates import GateRule, GateSpec, baseline_answers, compare

    spec = GateSpec("s", "e", "D1", GateRule())

    def sample(model: str, item: int, correct: bool, problem: str | None) -> Outcome:
        return Outcome(
            f"e[D1-s1-{item:03d}]", model, "t", "D1", 1, f"p{item}", "", str(correct), "True",
            correct, None, None, None, None, 0.0, problem=problem,
        )  # fmt: skip

    # Items 0-5 are one problem (the candidate misses it, the baseline does not), 6-9 four
    # others both get right: 5 pairs, 1 discordant, not 10 pairs with 6 discordant.
    def problem(i: int) -> str:
        return "shared" if i < 6 else f"own{i}"

    cand = [sample("c", i, i >= 6, problem(i)) for i in range(10)]
    base = baseline_answers([sample("b", i, True, problem(i)) for i in range(10)])
    (c,) = compare([(o, spec) for o in cand], base, "b")
    assert (c.table.n, c.table.both, c.table.only_baseline) == (5, 4, 1)
    # Rows without the field (older results files) pair item by item, as before.
    old = [sample("c", i, i >= 6, None) for i in range(10)]
    (c,) = compare([(o, spec) for o in old], base, "b")
    assert (c.table.n, c.table.only_baseline) == (10, 6)
