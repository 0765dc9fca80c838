"""Results rows aggregated per (model, task, level) the way gates aggregate them (the gates'
own ``LevelStats``), with each cell's failing rows for the report's drill-down."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import Outcome
from ..gates import GateSpec, LevelStats

__all__ = ["Cell", "cells"]


@dataclass
class Cell:
    """One (model, task, level): the gates' own LevelStats, plus its failing rows."""

    stats: LevelStats
    failing: list[dict[str, Any]] = field(default_factory=list)

    model = property(lambda self: self.stats.model)
    task = property(lambda self: self.stats.task)
    level = property(lambda self: self.stats.spec.level)
    n = property(lambda self: self.stats.n)
    correct = property(lambda self: self.stats.correct)
    errors = property(lambda self: self.stats.errors)
    score = property(lambda self: self.stats.score_sum)
    accuracy = property(lambda self: self.stats.accuracy)

    @property
    def modes(self) -> Counter[str]:
        """Failure modes; wrong answers a scorer gave no mode count as ``wrong``."""
        modes = Counter(self.stats.failure_modes)
        unlabelled = self.n - self.correct - sum(modes.values())
        if unlabelled > 0:
            modes["wrong"] += unlabelled
        return modes

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.stats.interval(0.95)
        return {
            "model": self.model,
            "task": self.task,
            "level": self.level,
            "n": self.n,
            "correct": self.correct,
            "accuracy": self.accuracy,
            "interval95": [lo, hi] if self.n else None,
            "mean_score": self.score / self.n if self.n else None,
            "errors": self.errors,
            "failure_modes": dict(sorted(self.modes.items())),
        }


def cells(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str], Cell]:
    """Results rows aggregated the way gates aggregate them (``LevelStats``)."""
    cells: dict[tuple[str, str, str], Cell] = {}
    for r in rows:
        key = (str(r["model"]), str(r["task"]), str(r["level"]))
        if key not in cells:
            cells[key] = Cell(LevelStats(key[0], GateSpec("", key[1], key[2]), key[1]))
        cells[key].stats.add(Outcome.from_dict(dict(r)))
        if r.get("error") is None and r.get("correct") is False:
            cells[key].failing.append(dict(r))
    return cells
