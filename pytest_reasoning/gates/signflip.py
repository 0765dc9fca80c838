"""Tests of per-item mean differences, for comparisons over repeats (pure stdlib).

With repeats, each side's answer to an item is its mean over the item's samples, and a
comparison's estimand is the mean over items of candidate − baseline (what the levels table
and the threshold gates measure). Items are independent; the samples of one item are not. So
the unit is the item, ``d_i`` = candidate's mean − baseline's mean on item ``i``.

**The sign-flip test** (Fisher 1935's randomisation test, exact): when both sides answered
an item equally often, then under "no difference" (the models' samples of an item
exchangeable) ``d_i`` is as likely to be ``+|d_i|`` as ``−|d_i|``; the statistic is
``S = Σ d_i`` and its one-sided p-value the share of the ``2**n`` sign assignments whose sum
is as low. With one sample per item (``d_i`` in {−1, 0, 1}) it is exactly the exact McNemar
test. Means of counts are rationals, so the ``|d_i|`` lie on a lattice and the sign-flip
distribution is a subset-sum distribution, computed exactly over the lattice when that costs
at most :data:`EXACT_WORK` cells (500 items with 3 repeats: 0.5 million), else by the normal
approximation with a continuity correction, whose error Berry–Esseen bounds
(:attr:`ItemTest.error`).

**The betting test**, where symmetry cannot be assumed: sides that answered an item unequally
often (a stored baseline asked with other repeats; failed calls) make ``d_i`` skewed even
when the models are equal (3 samples against 1 at accuracy 0.97: 8.6% false regressions at
alpha 0.05 in simulation), and "worse by more than ``max_drop``" is not a symmetry. There the
p-value is one over the final capital of the sequential gates' mixture of bets on
``u_i = (1 − d_i) / 2`` against ``(1 + max_drop) / 2`` (``gates.betting``): valid for any
bounded differences by Markov's inequality (the capital's mean is at most 1 under the null),
conservative. Deterministic throughout.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

from ..stats import z_for_confidence
from .betting import BETS, Mixture

__all__ = [
    "EXACT_WORK",
    "ItemTest",
    "as_fraction",
    "betting_test",
    "drop_fraction",
    "item_tests",
    "mean_difference_interval",
    "sign_flip",
]

EXACT_WORK = 4_000_000  # DP cells (nonzero items × lattice span) computed exactly: ~0.3 s
_BERRY_ESSEEN = 0.56  # Shevtsova (2010)'s constant for independent, non-identical terms


@dataclass(frozen=True)
class ItemTest:
    """A test of the per-item differences: p-values and how they were computed."""

    p_lower: float  # small when the candidate is worse
    p_upper: float  # small when it is better
    method: str  # "sign-flip" (exact), "sign-flip normal" or "betting"
    error: float = 0.0  # normal approximation only: Berry–Esseen's bound on |F − Φ|

    @property
    def p_two_sided(self) -> float:
        return min(1.0, 2 * min(self.p_lower, self.p_upper))

    @property
    def exact(self) -> bool:
        return self.method == "sign-flip"


def drop_fraction(max_drop: float) -> Fraction:
    """``max_drop`` as the decimal a suite wrote (0.05 is 1/20, not the float's binary
    value), so that the sign-flip test's lattice stays small."""
    return Fraction(repr(float(max_drop)))


def as_fraction(x: bool | float | Fraction) -> Fraction:
    """A per-item mean as a rational: a mean of counts given as a float is recovered
    exactly (its denominator, a number of samples, is far below the limit)."""
    if isinstance(x, Fraction):
        return x
    return Fraction(float(x)).limit_denominator(1_000_000)


def _lattice(values: Sequence[Fraction]) -> tuple[list[int], int]:
    """``values`` (nonzero) as integers on their coarsest common lattice: (|v_i|, Σ v_i)."""
    scale = math.lcm(*(v.denominator for v in values))
    ints = [int(v * scale) for v in values]
    step = math.gcd(*ints)
    return [abs(i) // step for i in ints], sum(ints) // step


def sign_flip(
    diffs: Sequence[Fraction], shift: Fraction = Fraction(0), *, work: int = EXACT_WORK
) -> ItemTest:
    """The sign-flip test of ``d_i + shift`` (exact rationals). Zero terms carry no
    evidence and are dropped (as McNemar drops concordant pairs)."""
    terms = [d + shift for d in diffs if d + shift != 0]
    if not terms:
        return ItemTest(1.0, 1.0, "sign-flip")
    sizes, observed = _lattice(terms)
    span = sum(sizes)
    if len(sizes) * span <= work:
        # X = the sum of the sizes whose sign is flipped to minus: S* = span − 2 X, and
        # the observed X is (span − observed) / 2. pmf over X by adding one item at a time.
        pmf = [1.0]
        for size in sorted(sizes):
            pad = [0.0] * size
            pmf = [(a + b) * 0.5 for a, b in zip(pmf + pad, pad + pmf, strict=True)]
        x = (span - observed) // 2
        lower = math.fsum(pmf[x:])  # S* <= S  <=>  X* >= x
        upper = math.fsum(pmf[: x + 1])
        return ItemTest(min(1.0, lower), min(1.0, upper), "sign-flip")
    sigma = math.sqrt(math.fsum(s * s for s in sizes))
    normal = NormalDist()
    error = _BERRY_ESSEEN * math.fsum(s**3 for s in sizes) / sigma**3
    # S* moves in steps of 2 (one size flipped): a continuity correction of 1.
    return ItemTest(
        normal.cdf((observed + 1) / sigma),
        1 - normal.cdf((observed - 1) / sigma),
        "sign-flip normal",
        error,
    )


def betting_test(diffs: Sequence[Fraction], max_drop: Fraction = Fraction(0)) -> ItemTest:
    """One over the final capital of the mixture of bets on ``u_i = (1 − d_i) / 2`` against
    "its mean is at most ``(1 + max_drop) / 2``" (the candidate not worse by more than
    ``max_drop``; ``p_lower``) and "at least" (``p_upper``): valid for any bounded
    differences (Markov), whatever their order, which the product ignores."""
    if not diffs:
        return ItemTest(1.0, 1.0, "betting")
    m = float(1 + max_drop) / 2
    out = []
    for up in (True, False):
        mix = Mixture(m, len(diffs), 0.05, up)
        other = [0.0] * BETS
        for d in diffs:
            for j, f in enumerate(mix.step(float(1 - d) / 2)):
                other[j] += f
        out.append(min(1.0, math.exp(-mix.log_capital(0, 0, 0, other))))
    return ItemTest(out[0], out[1], "betting")


def item_tests(
    diffs: Sequence[Fraction], *, matched: bool, max_drop: float
) -> tuple[ItemTest, ItemTest]:
    """(the test of "no difference", for the two-sided p-value; the regression test of
    "worse by more than ``max_drop``"): sign flips where both sides answered every item
    equally often (``matched``), else — and for the regression test with ``max_drop`` > 0 —
    the betting test."""
    plain = sign_flip(diffs) if matched else betting_test(diffs)
    if max_drop == 0:
        return plain, plain
    return plain, betting_test(diffs, drop_fraction(max_drop))


def mean_difference_interval(
    diffs: Sequence[Fraction], confidence: float = 0.95
) -> tuple[float, float]:
    """A normal interval for the mean difference, with the sign-flip test's own standard
    error ``sqrt(Σ d_i²) / n`` (never zero unless every difference is; at least the paired
    t's ``s / √n`` times ``√((n − 1) / n)``), clamped to [−1, 1]."""
    n = len(diffs)
    if n == 0:
        return (-1.0, 1.0)
    mean = float(sum(diffs, Fraction(0))) / n
    half = z_for_confidence(confidence) * math.sqrt(math.fsum(float(d) ** 2 for d in diffs)) / n
    return (max(-1.0, mean - half), min(1.0, mean + half))
