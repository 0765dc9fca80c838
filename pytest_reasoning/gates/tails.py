"""Exact one-sided McNemar tails for a sequential comparison's curtailment, walked as the
number of pairs moves instead of summed afresh (issue 44; pure stdlib; the method and its
error bound: docs/sequential.md, "Curtailment's critical counts, incrementally")."""

from __future__ import annotations

import math
from functools import lru_cache

__all__ = ["Critical"]

_EXACT_PAIRS = 4096  # up to here curtailment's tails are exact integers (cheap at this size)
_GUARD = 1e-7  # above, floats: a test this close (relatively) to its level is redone exactly


def _exact_tail(pairs: int, k: int) -> int:
    """Σ C(pairs, i) for i >= k, exactly, summed from the top (O(pairs − k) steps)."""
    if k > pairs:
        return 0
    term = tail = 1  # C(pairs, pairs)
    for i in range(pairs, max(k, 0), -1):
        term = term * i // (pairs - i + 1)  # C(pairs, i - 1)
        tail += term
    return tail


@lru_cache(maxsize=64)
def _critical_from_top(pairs: int, share: float, level: float) -> tuple[int, int, int]:
    """:class:`Critical`'s exact starting point: ``(k, tail, term)`` with ``k`` the fewest
    regression pairs among ``pairs`` whose exact one-sided McNemar p-value, over
    ``1 − share``, is below ``level`` (``pairs + 1``: none), ``tail`` = Σ C(pairs, i) for
    i >= k and ``term`` = C(pairs, k). Summed from the top (cached: a simulation's runs
    share it)."""
    whole = 1 << pairs
    k, term, tail = pairs + 1, 0, 0
    while k > 0:
        below = 1 if k == pairs + 1 else term * k // (pairs - k + 1)  # C(pairs, k - 1)
        if (tail + below) / whole / (1.0 - share) >= level:
            return k, tail, term
        k, tail, term = k - 1, tail + below, below
    return 0, tail, term


class Critical:
    """The fewest regression pairs among ``pairs`` discordant ones whose exact one-sided
    McNemar p-value, over ``1 − share``, is below ``level``, as ``pairs`` moves.

    The p-value is the very float :func:`mcnemar_regression_p` computes (an exact integer
    tail over ``2**pairs``, divided once), so curtailment agrees with the fixed-n test. A
    comparison's ``pairs`` (discordant so far plus pairs left) moves by at most one per
    answer, and the critical count with it (the binomial's upper quantile moves by 0 or 1
    when ``pairs`` does), so the tail is *walked* there by Pascal's rule instead of summed
    afresh: O(1) operations per answer, where summing every time was quadratic (issue 44:
    10,000 pairs took 59 s). Up to ``exact_up_to`` pairs the tail and ``C(pairs, k)`` are
    exact integers; above, probabilities in floats (each step a few roundings; 100,000
    steps drift by under 1e-10 relatively, the start from ``lgamma`` by about as much), and
    a comparison within :data:`_GUARD` of its level is redone on exact integers, so the
    answer is the exact one. :attr:`steps` counts the walk, for the tests."""

    def __init__(self, share: float, level: float, *, exact_up_to: int = _EXACT_PAIRS) -> None:
        self.share, self.level, self.exact_up_to = share, level, exact_up_to
        self.n = -1  # no state yet
        self.exact = True
        # tail = Σ_{i>=k} C(n, i), term = C(n, k): integers, or over 2**n as floats.
        self.k, self.tail, self.term = 0, 0.0, 0.0
        self.steps = self.redone = 0

    def __call__(self, pairs: int) -> int:
        exact = pairs <= self.exact_up_to or self.level < 1e-250  # floats would be subnormal
        if self.n < 0 or abs(pairs - self.n) > 2 or exact is not self.exact:
            self._start(pairs, exact)
        while self.n > pairs:
            self._shrink()
        while self.n < pairs:
            self._grow()
        while self.k <= self.n and not self._rejects(self.tail, self.k):
            self._up()
        while self.k > 0:
            below = self._below()
            if not self._rejects(self.tail + below, self.k - 1):
                break
            self.k, self.tail, self.term = self.k - 1, self.tail + below, below
            self.steps += 1
        return self.k

    def _start(self, pairs: int, exact: bool) -> None:
        """From the top: exact integers, or floats from ``lgamma`` where the terms stop
        underflowing (O(√pairs) steps)."""
        self.n, self.exact = pairs, exact
        if exact:
            self.k, self.tail, self.term = _critical_from_top(pairs, self.share, self.level)
            self.steps += pairs - self.k + 2
            return
        # From the highest k whose C(pairs, k) / 2**pairs a float holds well (>= e**-650):
        # the terms above it sum to under 1e-270, nothing beside any level a float holds
        # (>= 1e-250, else exact), so they are left out; then down by Pascal's rule.
        def log_term(k: int) -> float:
            return (
                math.lgamma(pairs + 1)
                - math.lgamma(k + 1)
                - math.lgamma(pairs - k + 1)
                - pairs * math.log(2)
            )

        low, high = pairs // 2, pairs  # log_term(low) >= -650 (pairs > 4096 or a test's 0)
        while high > low:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if log_term(mid) >= -650 else (low, mid - 1)
        self.term = math.exp(log_term(low))
        self.k, self.tail = low, self.term
        self.steps += 1

    def _rejects(self, tail: float, k: int) -> bool:
        """The McNemar rule at ``k`` with tail ``tail``, as :func:`_critical_from_top`
        evaluates it (a float too near the level: exactly)."""
        if self.exact:
            return not tail / (1 << self.n) / (1.0 - self.share) >= self.level
        p = tail / (1.0 - self.share)
        if abs(p - self.level) <= _GUARD * self.level:
            self.redone += 1
            exact = _exact_tail(self.n, k)
            return not exact / (1 << self.n) / (1.0 - self.share) >= self.level
        return not p >= self.level

    def _below(self) -> float:
        """C(n, k − 1) (over 2**n in floats)."""
        n, k = self.n, self.k
        if k > n:
            one: float = 1 if self.exact else 2.0**-n
            return one if k == n + 1 else 0 * one
        if self.exact:
            return self.term * k // (n - k + 1)
        return self.term * k / (n - k + 1)

    def _up(self) -> None:
        """k → k + 1 at the same n."""
        n, k = self.n, self.k
        self.tail -= self.term
        if self.exact:
            self.term = self.term * (n - k) // (k + 1)
        else:
            self.term = self.term * (n - k) / (k + 1)
        self.k += 1
        self.steps += 1

    def _grow(self) -> None:
        """n → n + 1 at the same k: Σ_{i>=k} C(n+1, i) = 2 Σ_{i>=k} C(n, i) + C(n, k − 1)."""
        n, k = self.n, self.k
        below = self._below()
        if self.exact:
            self.tail = 2 * self.tail + below
            self.term = 1 if k == n + 1 else self.term * (n + 1) // (n + 1 - k)
        else:
            self.tail += below / 2
            self.term = 2.0 ** -(n + 1) if k == n + 1 else self.term * (n + 1) / (n + 1 - k) / 2
        self.n += 1
        self.steps += 1

    def _shrink(self) -> None:
        """n → n − 1 at the same k (then k at most n + 1): the inverse of :meth:`_grow`,
        with C(n − 1, k − 1) = C(n, k)·k/n and C(n − 1, k) = C(n, k)·(n − k)/n."""
        n, k = self.n, self.k
        if k > n:  # C(n, k) = 0 = the tail, and C(n - 1, n - 1) = 1 is not a ratio of it
            self.n, self.k = n - 1, n
            self.tail = self.term = 0 * self.tail
        elif self.exact:
            self.tail = (self.tail - self.term * k // n) // 2
            self.term = self.term * (n - k) // n
            self.n -= 1
        else:
            self.tail -= self.term * k / n
            self.term = 2 * self.term * (n - k) / n
            self.n -= 1
        self.steps += 1
