"""Paired comparison of two models on the same items (pure stdlib).

A candidate and a baseline answer identical items, so each item is a pair of 0/1 outcomes:
the discordant pairs carry all the evidence (McNemar). Here: the 2×2 table, the exact McNemar
test, Newcombe's score interval for the paired difference of accuracies, Holm's correction
across levels, and the sample size a level needs to detect a given drop.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from ..stats import wilson_interval

__all__ = [
    "PairedTable",
    "holm",
    "mcnemar_exact",
    "mcnemar_regression_p",
    "paired_difference_interval",
    "samples_to_detect_drop",
]


@dataclass(frozen=True)
class PairedTable:
    """Counts of (candidate, baseline) outcomes over items both models answered."""

    both: int  # both right
    only_baseline: int  # baseline right, candidate wrong: a regression item
    only_candidate: int  # candidate right, baseline wrong: an improvement item
    neither: int

    @classmethod
    def from_pairs(cls, pairs: Sequence[tuple[bool, bool]]) -> PairedTable:
        """``pairs`` of (candidate correct, baseline correct)."""
        both = sum(c and b for c, b in pairs)
        only_b = sum(b and not c for c, b in pairs)
        only_c = sum(c and not b for c, b in pairs)
        return cls(both, only_b, only_c, len(pairs) - both - only_b - only_c)

    @property
    def n(self) -> int:
        return self.both + self.only_baseline + self.only_candidate + self.neither

    @property
    def candidate_accuracy(self) -> float:
        return (self.both + self.only_candidate) / self.n if self.n else 0.0

    @property
    def baseline_accuracy(self) -> float:
        return (self.both + self.only_baseline) / self.n if self.n else 0.0

    @property
    def difference(self) -> float:
        """Candidate minus baseline accuracy."""
        return (self.only_candidate - self.only_baseline) / self.n if self.n else 0.0


def _binomial_tail(k: int, n: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2), exactly."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    # Term by term (C(n, i ± 1) from C(n, i)), from the nearer end: a big-integer product
    # and quotient by small numbers per term, where math.comb per term made a level of
    # 20,000 pairs take seconds. The same integer as Σ C(n, i), so the same float.
    term = total = 1
    if 2 * k > n:
        for i in range(n, k, -1):
            term = term * i // (n - i + 1)  # C(n, i - 1)
            total += term
        return total / (1 << n)
    for i in range(k - 1):
        term = term * (n - i) // (i + 1)  # C(n, i + 1)
        total += term
    return ((1 << n) - total) / (1 << n)


def mcnemar_exact(table: PairedTable) -> float:
    """Two-sided exact McNemar p-value (the binomial test on the discordant pairs)."""
    b, c = table.only_baseline, table.only_candidate
    if b + c == 0:
        return 1.0
    return min(1.0, 2 * _binomial_tail(max(b, c), b + c))


def mcnemar_regression_p(table: PairedTable) -> float:
    """One-sided exact McNemar p-value for "the candidate is worse than the baseline"."""
    b, c = table.only_baseline, table.only_candidate
    return _binomial_tail(b, b + c) if b + c else 1.0


def paired_difference_interval(table: PairedTable, confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe's (1998, method 10) score interval for candidate − baseline accuracy.

    Wilson intervals for both marginal accuracies, combined with the correlation of the
    pairs; better coverage than the Wald interval at the accuracies models reach (near 1).
    """
    n = table.n
    if n == 0:
        return (-1.0, 1.0)
    a, b, c, d = table.both, table.only_candidate, table.only_baseline, table.neither
    p1, p2 = (a + b) / n, (a + c) / n  # candidate, baseline
    l1, u1 = wilson_interval(a + b, n, confidence)
    l2, u2 = wilson_interval(a + c, n, confidence)
    denominator = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0
    if denominator:
        phi = max(a * d - b * c - n / 2, 0) / math.sqrt(denominator)  # continuity-corrected
    theta = p1 - p2
    low = theta - math.sqrt(
        max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0)
    )
    high = theta + math.sqrt(
        max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0)
    )
    return (max(-1.0, low), min(1.0, high))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (family-wise error control, any dependence)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted = [0.0] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def samples_to_detect_drop(
    baseline_accuracy: float,
    drop: float,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    discordance: float | None = None,
) -> int:
    """Items per level for a one-sided McNemar test to detect ``drop`` with ``power``.

    Connor's (1987) formula: ``n = (z_α √ψ + z_β √(ψ − δ²))² / δ²`` with ψ the share of
    discordant pairs. ψ is unknown before the run; by default it assumes the two models err
    independently (ψ = p_b(1 − p_c) + p_c(1 − p_b)), which over-states ψ for models that
    fail on the same hard items, so the answer errs on the side of more samples.
    """
    if not 0 < drop < baseline_accuracy <= 1:
        raise ValueError("--drop, --baseline-accuracy: need 0 < drop < baseline accuracy <= 1")
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError("--power, --alpha: must be in (0, 1)")
    candidate = baseline_accuracy - drop
    psi = discordance
    if psi is None:
        psi = baseline_accuracy * (1 - candidate) + candidate * (1 - baseline_accuracy)
        psi = max(psi, drop)  # = drop exactly when the baseline is perfect; float noise aside
    if not drop <= psi <= 1:
        raise ValueError(f"--discordance: must be in [drop, 1], got {psi}")
    z_a = NormalDist().inv_cdf(1 - alpha)
    z_b = NormalDist().inv_cdf(power)
    n = (z_a * math.sqrt(psi) + z_b * math.sqrt(max(psi - drop * drop, 0.0))) ** 2 / drop**2
    return math.ceil(n)
