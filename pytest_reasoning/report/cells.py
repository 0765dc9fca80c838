"""Results rows aggregated per (model, suite, entry, level) the way gates aggregate them (the
gates' own ``LevelStats``): suites are kept apart, as their gates are."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import Outcome
from ..gates import GateSpec, LevelStats

__all__ = ["Cell", "CellKey", "cells"]

CellKey = tuple[str, str, str, str]  # (model, suite, entry, level)


@dataclass
class Cell:
    """One (model, suite, entry, level): the gates' own LevelStats."""

    stats: LevelStats

    model = property(lambda self: self.stats.model)
    suite = property(lambda self: self.stats.spec.suite)
    entry = property(lambda self: self.stats.spec.entry)
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
            "suite": self.suite,
            "entry": self.entry,
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


def cells(rows: Sequence[Mapping[str, Any]]) -> dict[CellKey, Cell]:
    """Results rows aggregated the way gates aggregate them (``LevelStats``), per suite file
    and entry (rows written before suites were recorded: the task, no suite)."""
    cells: dict[CellKey, Cell] = {}
    for r in rows:
        suite, entry = str(r.get("suite") or ""), str(r.get("entry") or r["task"])
        key = (str(r["model"]), suite, entry, str(r["level"]))
        if key not in cells:
            spec = GateSpec(suite, entry, key[3])
            cells[key] = Cell(LevelStats(key[0], spec, str(r["task"])))
        cells[key].stats.add(Outcome.from_dict(dict(r)))
    return cells
