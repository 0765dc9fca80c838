"""The betting capital of the anytime-valid tests (pure stdlib): a mixture of constant bets
``(1/J) Σ_j Π_i (1 + λ_j (x_i − m))`` against "the mean of answers in [0, 1] is at most
``m``" (or at least), a nonnegative supermartingale under that null (Waudby-Smith and Ramdas
2024). The sequential gates bet with it answer by answer (``gates.sequential``); a comparison
over repeats whose sign-flip test does not apply uses its final capital as a fixed-n p-value
(``gates.signflip``). The method: docs/sequential.md."""

from __future__ import annotations

import math

__all__ = ["BETS", "TOP", "Mixture"]

BETS = 12  # bets per mixture: 1 to 40 moved the mean calls by under 1% of n (tuning)
TOP = 0.98  # the boldest bet stops 2% short of staking everything (every factor stays > 0)


class Mixture:
    """The mixture capital against "the mean is at most ``m``" (``up``) or "at least ``m``",
    in logs, in closed form from the counts of answers 1, 0 and 1/2 plus the per-bet sums
    of any other answers (kept by the caller, in answer order)."""

    def __init__(self, m: float, n: int, alpha: float, up: bool) -> None:
        room = 1.0 - m if up else m
        var = m * (1.0 - m)
        low = min(math.sqrt(2.0 * var * math.log(1.0 / alpha) / n), room / 2)
        step = (TOP * room / low) ** (1.0 / (BETS - 1))
        sign = 1.0 if up else -1.0
        # λ_j = Δ_j / (m (1 − m)): Kelly's bet for the Bernoulli alternative m ± Δ_j.
        self.bets = tuple(sign * low * step**j / var for j in range(BETS))
        self.m = m
        self._one = tuple(math.log1p(b * (1.0 - m)) for b in self.bets)
        self._zero = tuple(math.log1p(-b * m) for b in self.bets)
        self._half = tuple(math.log1p(b * (0.5 - m)) for b in self.bets)

    def step(self, x: float) -> list[float]:
        """Each bet's log factor for one answer ``x`` in [0, 1]."""
        return [math.log1p(b * (x - self.m)) for b in self.bets]

    def log_capital(
        self, ones: int, zeros: int, halves: int = 0, other: list[float] | None = None
    ) -> float:
        if halves and self.m != 0.5:  # at m = 1/2 an answer of 1/2 leaves every bet as it is
            terms = [
                ones * a + zeros * z + halves * h
                for a, z, h in zip(self._one, self._zero, self._half, strict=True)
            ]
        else:
            terms = [ones * a + zeros * z for a, z in zip(self._one, self._zero, strict=True)]
        if other:
            terms = [t + o for t, o in zip(terms, other, strict=True)]
        top = max(terms)
        return top + math.log(sum([math.exp(t - top) for t in terms]) / BETS)
