"""What a gate measures: one :class:`Metric` per metric, in a registry (:func:`metric`).

A metric says what it is called, whether a sample's value is graded (partial credit) or 0/1,
an item's value from its answered samples, whether the gated measure is a mean over items
(pass@K, pass^K) or over samples, and what it needs of the task (partial credit) and of the
level (K repeats). The ledger, the threshold and sequential gates, the tables and the plots ask
the metric; none of them branches on its name. A new metric is one class and one registration.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .clustered import pass_at_k, pass_hat_k

__all__ = [
    "SPELLINGS",
    "Accuracy",
    "CellAccuracy",
    "Metric",
    "PassAll",
    "PassAny",
    "metric",
    "sample_credit",
]

# An answered sample as a metric reads it: (right, credit), credit in [0, 1] (1.0 / 0.0 for a
# task without partial credit).
Sample = tuple[bool, float]


def sample_credit(correct: bool | None, score: float | None) -> float:
    """A sample's credit: the task's partial credit where it gives one, else 1.0 / 0.0."""
    return float(bool(correct)) if score is None else float(score)


@dataclass(frozen=True)
class Metric:
    """A gated measure. ``name`` is the suite's spelling; ``label`` what messages call it."""

    name: str = "accuracy"
    label: str = "accuracy"
    # A sample's value may lie strictly between 0 and 1 (partial credit), not only 0 or 1.
    graded: bool = False
    # The measure is a mean over items (each item's value from its repeats), not over samples.
    per_item: bool = False
    # The task must give partial credit (``Task.partial_credit``).
    needs_credit: bool = False

    @property
    def needs_repeats(self) -> int | None:
        """Samples of each item the metric needs (None: any number)."""
        return None

    @property
    def suffix(self) -> str:
        """What the levels table writes after the measure ("" for plain accuracy)."""
        return ""

    def sample_value(self, right: bool, credit: float) -> float:
        """One answered sample's value under the metric."""
        return credit if self.graded else float(right)

    def item_value(self, samples: Sequence[Sample], repeats: int) -> float:
        """One item's value from its answered samples (``repeats``: the level's): their mean."""
        values = [self.sample_value(ok, credit) for ok, credit in samples]
        return sum(values) / len(values)


@dataclass(frozen=True)
class Accuracy(Metric):
    """The share of right samples (``puzzle``: zebra's puzzle accuracy, the same)."""


@dataclass(frozen=True)
class CellAccuracy(Metric):
    """The mean partial credit (zebra's cell accuracy); tasks with partial credit only."""

    name: str = "cell"
    label: str = "cell accuracy"
    graded: bool = True
    needs_credit: bool = True

    @property
    def suffix(self) -> str:
        return " cell"


@dataclass(frozen=True)
class _OverRepeats(Metric):
    """A per-item measure over an item's repeats, K of them (None: the level's repeats)."""

    per_item: bool = True
    k: int | None = None

    @property
    def needs_repeats(self) -> int | None:
        return self.k

    @property
    def suffix(self) -> str:
        return f" {self.name}"

    def item_value(self, samples: Sequence[Sample], repeats: int) -> float:
        """The chance that K of the item's samples drawn without replacement pass (K:
        ``repeats`` for ``k``; an item with fewer answered samples counts with all it has)."""
        n, right = len(samples), sum(ok for ok, _ in samples)
        return self._estimate(n, right, min(self.k or repeats, n))

    def _estimate(self, n: int, right: int, k: int) -> float:
        raise NotImplementedError


@dataclass(frozen=True)
class PassAny(_OverRepeats):
    """pass@K: an item counts as right when at least one of K samples is."""

    def _estimate(self, n: int, right: int, k: int) -> float:
        return pass_at_k(n, right, k)


@dataclass(frozen=True)
class PassAll(_OverRepeats):
    """pass^K: an item counts as right only when every one of K samples is (tau-bench)."""

    def _estimate(self, n: int, right: int, k: int) -> float:
        return pass_hat_k(n, right, k)


# The registry: fixed names, then patterns with a number K (or ``k``: the level's repeats).
_NAMED: dict[str, Metric] = {
    "accuracy": Accuracy(),
    "puzzle": Accuracy(),
    "cell": CellAccuracy(),
}
_PATTERNS: list[tuple[str, re.Pattern[str], Callable[[str, int | None], Metric]]] = [
    ("pass@K", re.compile(r"pass@([1-9][0-9]{0,3}|k)"), lambda s, k: PassAny(s, s, k=k)),
    ("pass^K", re.compile(r"pass\^([1-9][0-9]{0,3}|k)"), lambda s, k: PassAll(s, s, k=k)),
]
# How a suite may spell a metric (error messages list these).
SPELLINGS = (*_NAMED, *(spelled for spelled, _, _ in _PATTERNS))


def metric(name: object) -> Metric | None:
    """The metric a suite's ``metric:`` names, or None for a name no metric has."""
    return _lookup(name) if isinstance(name, str) else None


@functools.lru_cache(maxsize=256)  # asked per item: parse each spelling once
def _lookup(name: str) -> Metric | None:
    if name in _NAMED:
        return _NAMED[name]
    for _, pattern, make in _PATTERNS:
        found = pattern.fullmatch(name)
        if found is not None:
            k = found.group(1)
            return make(name, None if k == "k" else int(k))
    return None
