"""What a gate demands (``GateRule``, every default written here once) and where it lives
(``GateSpec``: suite, entry, level)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["METRICS", "PASS_METRICS", "GateRule", "GateSpec", "pass_metric"]

# "puzzle" is the suite spelling of "accuracy" for zebra (puzzle accuracy); "cell" gates the
# mean partial credit (zebra's cell accuracy).
METRICS = ("accuracy", "puzzle", "cell")
# Over repeats, per item: pass@K (one of K samples right) and pass^K (every one of K right),
# K a number or ``k`` (the level's repeats); averaged over items (``gates.clustered``).
PASS_METRICS = ("pass@K", "pass^K")
_PASS = re.compile(r"pass([@^])([1-9][0-9]{0,3}|k)")


def pass_metric(metric: str) -> tuple[str, int | None] | None:
    """``("@", K)`` for ``pass@K``, ``("^", K)`` for ``pass^K`` (K None for ``k``: the
    level's repeats); None for any other metric."""
    found = _PASS.fullmatch(metric) if isinstance(metric, str) else None
    if found is None:
        return None
    k = found.group(2)
    return found.group(1), None if k == "k" else int(k)


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
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GateRule:
        """Missing keys take the defaults above."""
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})

    @property
    def partial(self) -> bool:
        """Whether the gated measure is the mean partial credit (cell accuracy)."""
        return self.metric == "cell"

    @property
    def passes(self) -> tuple[str, int | None] | None:
        """A pass@K / pass^K metric (:func:`pass_metric`), or None."""
        return pass_metric(self.metric)

    @property
    def measure(self) -> str:
        """What the gate thresholds, as messages name it."""
        if self.partial:
            return "cell accuracy"
        return self.metric if self.passes else "accuracy"


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
