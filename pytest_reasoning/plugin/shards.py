"""Gate-aware shards (``--reasoning-shard K/N``): the collection is cut into groups that a
gate needs whole — one per (model, suite file, entry, level), its samples with its verdict
items — and every other test is a group of its own. Groups are assigned to shards greedily,
largest first (most samples), ties in the order of a SHA-256 of the group's key, each to the
shard with the fewest samples so far (the lowest-numbered on a tie): the same collection gives
every job the same assignment whatever its PYTHONHASHSEED or its own selection (``-k``,
``--lf`` apply after it), so the N shards run every item exactly once."""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pytest

from .items import ReasoningItem, VerdictItem

__all__ = ["Shard", "assign", "group_key", "select_shard"]


def group_key(item: pytest.Item) -> str:
    """The group an item runs with: its level's, or its own node id."""
    if isinstance(item, ReasoningItem):
        # The file as its node id names it: the same on every runner.
        return replace(item.level, suite=item.nodeid.partition("::")[0]).key
    if isinstance(item, VerdictItem):
        # A comparison's samples are the candidate's and the baseline's: it goes with its
        # candidate's level (its verdict is deferred in a shard anyway).
        mine = [s for s in item.samples if s.model == item.model]
        if mine:
            return group_key(mine[0])
    return item.nodeid


def _weight(item: pytest.Item) -> int:
    """What a group's size counts: samples (and other tests); verdict items cost nothing."""
    return 0 if isinstance(item, VerdictItem) else 1


def assign(sizes: Mapping[str, int], shards: int) -> dict[str, int]:
    """Group key → shard (1..N): greedy largest-first (longest-processing-time) over groups
    ordered by size, then by the SHA-256 of their key; each to the least loaded shard."""
    order = sorted(sizes, key=lambda k: (-sizes[k], hashlib.sha256(k.encode()).hexdigest()))
    # (load, shard index): the heap's top is the least loaded shard, the lowest on a tie.
    loads = [(0, i) for i in range(shards)]
    out: dict[str, int] = {}
    for key in order:
        load, target = loads[0]
        heapq.heapreplace(loads, (load + sizes[key], target))
        out[key] = target + 1
    return out


@dataclass(frozen=True)
class Shard:
    """What one shard got, for the collection report."""

    index: int
    count: int
    groups: int  # groups of this shard
    total_groups: int
    samples: int  # samples (and other tests) of this shard
    total_samples: int
    loads: tuple[int, ...]  # samples per shard, 1..N

    def line(self) -> str:
        spread = f"{min(self.loads)}-{max(self.loads)}" if self.count > 1 else str(self.samples)
        return (
            f"reasoning: shard {self.index}/{self.count}: {self.groups} of {self.total_groups} "
            f"level groups, {self.samples} of {self.total_samples} samples (shards hold "
            f"{spread} each); the others run in the other shards"
        )


def select_shard(
    items: Sequence[pytest.Item], index: int, count: int
) -> tuple[list[pytest.Item], list[pytest.Item], Shard]:
    """The items of shard ``index`` of ``count`` (in collection order) and the rest."""
    keys = [group_key(i) for i in items]
    sizes: dict[str, int] = {}
    for key, item in zip(keys, items, strict=True):
        sizes[key] = sizes.get(key, 0) + _weight(item)
    where = assign(sizes, count)
    kept = [i for i, k in zip(items, keys, strict=True) if where[k] == index]
    dropped = [i for i, k in zip(items, keys, strict=True) if where[k] != index]
    loads = [0] * count
    for key, size in sizes.items():
        loads[where[key] - 1] += size
    mine = [k for k in sizes if where[k] == index]
    shard = Shard(
        index,
        count,
        len(mine),
        len(sizes),
        loads[index - 1],
        sum(sizes.values()),
        tuple(loads),
    )
    return kept, dropped, shard
