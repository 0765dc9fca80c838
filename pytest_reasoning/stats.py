"""Interval estimates for accuracies (pure stdlib)."""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["wilson_interval", "z_for_confidence"]


def z_for_confidence(confidence: float) -> float:
    """Two-sided normal quantile: 0.95 → 1.959964."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; ``(0, 1)`` when ``n == 0``."""
    if n <= 0:
        return (0.0, 1.0)
    z = z_for_confidence(confidence)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))
