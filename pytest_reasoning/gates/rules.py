"""What a gate demands (``GateRule``, every default written here once) and where it lives
(``GateSpec``: suite, entry, level)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from ..core import json_fields
from .metrics import Accuracy, Metric
from .metrics import metric as find_metric

__all__ = ["GateRule", "GateSpec"]


@dataclass(frozen=True)
class GateRule:
    """A level's gates: the threshold gate (``min_accuracy``, optionally on the Wilson lower
    bound at ``confidence``) and the regression gate against a baseline (``max_drop`` at
    significance ``alpha``, Holm-corrected across levels), on ``metric``; ``sequential``
    levels stop asking once their verdicts are settled (docs/sequential.md)."""

    min_accuracy: float | None = None
    confidence: float | None = None
    max_drop: float = 0.0
    alpha: float = 0.05
    metric: str = "accuracy"
    # Ask in collection order and stop as soon as an anytime-valid test settles the level
    # (gates.sequential); at ``samples`` answers without a decision, the fixed-n rule.
    sequential: bool = False

    def to_dict(self) -> dict[str, Any]:
        return json_fields(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GateRule:
        """Missing keys take the defaults above."""
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})

    @property
    def gauge(self) -> Metric:
        """The :class:`~.metrics.Metric` ``metric`` names (the suite's reader refused any
        other name; a name no metric has reads as accuracy)."""
        return find_metric(self.metric) or Accuracy()


@dataclass(frozen=True)
class GateSpec:
    """Where a sample's gate lives and what it demands."""

    suite: str
    entry: str
    level: str
    rule: GateRule = field(default_factory=GateRule)

    def to_dict(self) -> dict[str, Any]:
        """Flat: the place, then the rule's keys (the JUnit properties and summary.json)."""
        return {
            "suite": self.suite,
            "entry": self.entry,
            "level": self.level,
            **self.rule.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GateSpec:
        return cls(d["suite"], d["entry"], d["level"], GateRule.from_dict(d))

    @property
    def where(self) -> tuple[str, str, str]:
        return (self.suite, self.entry, self.level)
