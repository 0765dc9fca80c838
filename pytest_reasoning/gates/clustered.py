"""Several samples of one item (suite key ``repeats``): accuracy's interval clustered by item,
pass@k, pass^k and majority vote (pure stdlib).

Samples of the same item are not independent (an item a model cannot do is missed every
time), so an interval that counts every sample as a separate trial is too narrow. We use
Rao and Scott's (1992) adjustment for clustered binary data: estimate the design effect
``deff`` (the variance of the accuracy under clustering, from the between-item spread, over
the binomial variance), then compute the Wilson interval with the effective sample size
``n / deff`` — between the number of items (samples of an item always agree) and the number
of samples (they are independent). Without information (accuracy 0 or 1, or one item) the
conservative end is taken: ``n_eff`` = the number of items.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ..stats import z_for_confidence

__all__ = [
    "clustered_interval",
    "design_effect",
    "majority_correct",
    "pass_at_k",
    "pass_hat_k",
    "problem_pairs",
]


def design_effect(clusters: Sequence[Sequence[float]]) -> float:
    """Kish's design effect of the mean of ``clusters`` (each a list of 0/1 or [0, 1] values),
    clamped to ``[1, mean cluster size]``: the linearised (ratio-estimator) variance of the
    mean, over the variance the same number of independent samples would have."""
    n = sum(len(c) for c in clusters)
    m = sum(1 for c in clusters if c)
    if n == 0 or m == 0:
        return 1.0
    top = n / m
    mean = sum(sum(c) for c in clusters) / n
    binomial = mean * (1 - mean) / n
    if m < 2 or binomial <= 0:
        return top  # nothing to estimate the spread from: assume samples of an item agree
    spread = sum((sum(c) - mean * len(c)) ** 2 for c in clusters if c)
    clustered = m / (m - 1) * spread / (n * n)
    return min(max(clustered / binomial, 1.0), top)


def clustered_interval(
    clusters: Sequence[Sequence[float]], confidence: float = 0.95
) -> tuple[float, float]:
    """The Wilson interval of the mean with the effective sample size ``n / deff``."""
    n = sum(len(c) for c in clusters)
    if n == 0:
        return (0.0, 1.0)
    p = sum(sum(c) for c in clusters) / n
    n_eff = n / design_effect(clusters)
    z = z_for_confidence(confidence)
    denom = 1.0 + z * z / n_eff
    centre = (p + z * z / (2 * n_eff)) / denom
    half = z * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` samples drawn without replacement from ``n``
    (``c`` of them correct) is correct: Chen et al. (2021)'s unbiased estimator
    ``1 - C(n-c, k) / C(n, k)``."""
    if not 0 < k <= n:
        raise ValueError(f"pass@k needs 0 < k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that every one of ``k`` samples drawn without replacement from ``n`` (``c``
    of them correct) is correct: pass^k, "right every time" (Yao et al. 2024, tau-bench), by
    the unbiased estimator ``C(c, k) / C(n, k)``."""
    if not 0 < k <= n:
        raise ValueError(f"pass^k needs 0 < k <= n, got k={k}, n={n}")
    return math.comb(c, k) / math.comb(n, k)


def majority_correct(votes: Sequence[tuple[str | None, bool]]) -> bool:
    """Whether the most common answer among an item's samples is right. ``votes`` are
    (extracted answer, correct) in repeat order; no answer (None) is one more answer, "no
    answer"; a tie goes to the answer given first, whose verdict is the vote's."""
    if not votes:
        return False
    counts = Counter(answer for answer, _ in votes)
    best = max(counts.values())
    return next(correct for answer, correct in votes if counts[answer] == best)


def problem_pairs(pairs: Sequence[tuple[str, bool, bool]]) -> list[tuple[bool, bool]]:
    """One (candidate, baseline) pair per problem from ``(problem, candidate right, baseline
    right)`` per item: each side's majority over the problem's items (a tie goes to the first
    item), as an item's repeats are one vote. Items of the same problem up to renaming are
    not independent pairs, so McNemar counts the problem once (issue 41)."""
    by_problem: dict[str, list[tuple[bool, bool]]] = {}
    for problem, mine, theirs in pairs:
        by_problem.setdefault(problem, []).append((mine, theirs))
    out = []
    for found in by_problem.values():
        out.append(
            (
                majority_correct([(str(m), m) for m, _ in found]),
                majority_correct([(str(t), t) for _, t in found]),
            )
        )
    return out
