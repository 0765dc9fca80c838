"""What the ledger keeps per (model, level): its plan, what it holds so far, and, for a
sequential level, the answers taken in collection order (:class:`PlannedLevel`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core import Outcome
from .comparison import ItemScore, PairKey
from .rules import GateSpec
from .sequential import PairedSequence, ThresholdSequence
from .threshold import LevelStats

__all__ = ["Key", "PlannedLevel", "StoredBaseline", "Where", "sample_key"]

Where = tuple[str, str, str]  # (suite, entry, level)
Key = tuple[str, Where]  # (model, where)
# A stored baseline (--reasoning-baseline-results): its answers per item and prompt (an
# ItemScore, or a bare verdict: one sample), its name.
StoredBaseline = tuple[Mapping[PairKey, ItemScore | bool | None], str]


def sample_key(sample: Outcome | Mapping[str, Any]) -> tuple[Any, ...]:
    """A sample (an Outcome, or its results row) as :attr:`Ledger.uncounted` names it."""
    if isinstance(sample, Outcome):
        return (sample.model, sample.suite, sample.entry, sample.level, sample.item_id)
    return tuple(sample.get(k) for k in ("model", "suite", "entry", "level", "item_id"))


@dataclass
class PlannedLevel:
    """What one model's level should hold and what it holds so far."""

    spec: GateSpec
    task: str
    size: int = 0  # its samples (0: not known yet)
    received: int = 0  # samples in (with a sequential level's waiting and late ones)
    gate_id: str | None = None
    comparison_id: str | None = None
    stats: LevelStats | None = None
    repeats: int = 1  # samples per item
    family: int = 1  # levels under the candidate's Holm correction (sequential comparisons)
    # A sequential level: answers taken in collection order, item by item (``repeats``
    # samples each); an item is *counted* (tallies, pairs, tests) once its comparison can
    # read it, so that what a level counts never depends on the order answers arrived in.
    waiting: dict[int, Outcome] = field(default_factory=dict)  # arrived early
    taken: int = 0  # samples taken in order
    current: list[Outcome] = field(default_factory=list)  # the item being taken
    items: list[list[Outcome]] = field(default_factory=list)  # taken, not yet counted
    verdicts: list[bool | None] = field(default_factory=list)  # per taken item (majority)
    counts: list[tuple[int, int]] = field(default_factory=list)  # per taken item: right, answered
    keys: list[PairKey] = field(default_factory=list)  # per taken item: its pairing key
    # Per taken item: whether its problem (up to renaming) is new in the level. Only new
    # problems are fed to the sequential tests: another item of a problem already fed is not
    # independent evidence (issue 41); it is counted in the tallies, clustered with it.
    fresh: list[bool] = field(default_factory=list)
    asked: set[str] = field(default_factory=set)  # problems taken so far
    counted_items: int = 0
    stop: int | None = None  # items counted when it settled
    late: int = 0  # answers past the stop (paid, counted nowhere else)
    last: int = -1  # the furthest position answered (why a merged level lacks samples)
    not_asked: str | None = None  # the first not-asked sample's error: why it was not asked
    frontier: int = -1  # the samples the run was last told it may ask (see Ledger.moved)
    seq: ThresholdSequence | None = None
    pair: PairedSequence | None = None  # a candidate's comparison

    @property
    def total_items(self) -> int:
        return self.size // self.repeats

    @property
    def sequential(self) -> bool:
        return self.spec.rule.sequential and self.size > 0

    @property
    def whole(self) -> bool:
        """Every sample in — or, sequential, every sample up to where it settled."""
        if self.size <= 0:
            return False
        if self.sequential:
            return self.stop is not None or self.counted_items >= self.total_items
        return self.received >= self.size

    @property
    def counted(self) -> int:
        """Samples its figures and verdicts count (a sequential level: those counted)."""
        return self.counted_items * self.repeats if self.sequential else self.received
