"""Paired comparison statistics (exact McNemar, Newcombe's interval, Holm, sample size), the
``plan`` command and ``--reasoning-seed auto``."""

from __future__ import annotations

import math
import random

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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--drop", "0.9", "--baseline-accuracy", "0.85"], "--drop, --baseline-accuracy: need"),
        (["--drop", "0.05", "--baseline-accuracy", "0.85", "--power", "2"], "--power, --alpha"),
        (["--drop", "0.05", "--baseline-accuracy", "0.85", "--levels", "0"], "--levels"),
    ],
)
def test_plan_bad_arguments(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", *args]) == 2
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
