"""The suite schema: keys and their docs, defaults, the parsed specs and their sample
addresses."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ..core import Item, repeat_id
from ..datasets import Dataset
from ..gates import GateRule, GateSpec
from ..registry import get_task
from ..tasks.base import item_id
from ..tasks.sampler import sampler

MAX_SAMPLES = 100_000
MAX_REPEATS = 1_000
# What a suite that says nothing gets (the gate keys' defaults are GateRule's own).
DEFAULTS: dict[str, Any] = {
    "samples": 10,
    "seeds": (1,),
    "style": "direct",
    "params": {},
    "repeats": 1,
}
_RULE = GateRule()
# Settings that cascade suite → entry → level; each layer adds its own structural keys.
LEVEL_KEYS = {
    "samples",
    "repeats",
    "seed",
    "seeds",
    "style",
    "params",
    "min_accuracy",
    "confidence",
    "max_drop",
    "alpha",
    "metric",
    "sequential",
}

# Every key a suite may use: (where, type, meaning). docs/suites.md's table is generated from
# this (docs/gen_examples.py), and a test checks it covers exactly the keys the parser accepts.
KEY_DOCS: dict[str, tuple[str, str, str]] = {
    "name": ("suite", "string", "a label (default: the file name)"),
    "description": ("suite", "string", "a label"),
    "tasks": ("suite", "non-empty list", "task entries"),
    "task": ("entry", "task id", "see `pytest-reasoning tasks`"),
    "id": (
        "entry",
        "`[A-Za-z0-9_.-]+`",
        "item-id prefix, unique in the file (default: the task id)",
    ),
    "levels": ("entry", "list, or mapping level → overrides", "the task's levels"),
    "dataset": (
        "entry",
        "path of a JSONL file (relative to the suite)",
        "run these items instead of generating (narrated, exported or your own; see "
        "[Frozen datasets](#frozen-datasets)); not with `seed`, `seeds`, `style`, `params`",
    ),
    "samples": (
        "any",
        f"integer 0..{MAX_SAMPLES}",
        f"samples per level and seed (default {DEFAULTS['samples']})",
    ),
    "repeats": (
        "any",
        f"integer 1..{MAX_REPEATS}",
        "samples of each item (default 1): the model answers every item this many times "
        "(for models that run only at temperature 1); accuracy gets an interval clustered "
        "by item, and pass@k, pass^k and majority vote are reported",
    ),
    "seed": (
        "any",
        "integer",
        f"the generation seed (default {DEFAULTS['seeds'][0]}; not with `seeds`)",
    ),
    "seeds": ("any", "non-empty list of integers", "several generation seeds"),
    "style": ("any", "string", f"prompt style offered by the task (default `{DEFAULTS['style']}`)"),
    "params": ("any", "mapping", "task knobs, merged down the layers (see the task's page)"),
    "min_accuracy": ("any", "number in [0, 1] or null", "gate threshold"),
    "confidence": (
        "any",
        "number in (0, 1) or null",
        "gate on the Wilson lower bound at this confidence",
    ),
    "max_drop": (
        "any",
        f"number in [0, 1], default {_RULE.max_drop:g}",
        "regression gate against a baseline: the accuracy drop tolerated",
    ),
    "alpha": (
        "any",
        f"number in (0, 1), default {_RULE.alpha:g}",
        "that gate's significance (Holm-corrected across levels)",
    ),
    "sequential": (
        "any",
        "true or false (default false)",
        "ask the level's samples in order and stop as soon as an anytime-valid test settles "
        "its gate and comparison; the rest are \"not needed\" ([docs/sequential.md]"
        "(sequential.md))",
    ),
    "metric": (
        "any",
        "`accuracy` (default), `puzzle` (the same), `cell`, `pass@K`, `pass^K`",
        "what `min_accuracy` thresholds: the share of correct samples, or the mean partial "
        "credit (`cell`: zebra's cell accuracy; tasks with partial credit only), or over "
        "repeats the share of items right at least once (`pass@K`) or every time (`pass^K`) "
        "in K samples (K at most `repeats`; `k`: the repeats)",
    ),
}
ENTRY_KEYS = LEVEL_KEYS | {"task", "id", "levels", "dataset"}
# What a dataset's items fix for themselves (a suite-wide default of these is for generated
# entries; on a dataset entry or its levels it is an error).
DATASET_FIXED = ("seed", "seeds", "style", "params")
SUITE_KEYS = LEVEL_KEYS | {"name", "description", "tasks"}
_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")


@dataclass(frozen=True)
class LevelSpec:
    level: str
    samples: int
    seeds: tuple[int, ...]
    style: str
    params: dict[str, Any]
    rule: GateRule = field(default_factory=GateRule)
    repeats: int = 1


@dataclass(frozen=True)
class EntrySpec:
    id: str
    task: str
    levels: tuple[LevelSpec, ...]
    # A frozen dataset's items (``dataset:``), ids already in the entry's form; None: generate.
    dataset: Dataset | None = None


@dataclass(frozen=True)
class SuiteSpec:
    path: str
    name: str
    entries: tuple[EntrySpec, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Address:
    """One sample of a suite: (entry, level, seed, index). Collection and the
    ``reasoning_results`` fixture both walk a suite through :func:`addresses`."""

    suite: str  # the suite file as named in messages and gate ids
    entry: EntrySpec
    level: LevelSpec
    seed: int
    index: int
    repeat: int = 0  # which sample of the item, with ``repeats`` > 1

    @property
    def sample(self) -> str:
        """``D2-s1-007`` (``D2-s1-007-r3`` with repeats): the level, seed, index (and repeat)
        part of every id (a dataset item's: what its id holds in brackets)."""
        if self.entry.dataset is not None:
            own = self._stored.id
            base = own[own.index("[") + 1 : -1]
        else:
            base = f"{self.level.level}-s{self.seed}-{self.index:03d}"
        return base + (f"-r{self.repeat}" if self.level.repeats > 1 else "")

    @property
    def sample_id(self) -> str:
        """The item id results rows carry: ``dyval.arithmetic[D2-s1-007]``, with the repeat
        index when the level asks each item more than once: ``dyval.arithmetic[D2-s1-007-r3]``.
        A dataset item keeps its own id."""
        if self.entry.dataset is not None:
            base = self._stored.id
        else:
            base = item_id(self.entry.id, self.level.level, self.seed, self.index)
        return repeat_id(base, self.repeat, self.level.repeats)

    @property
    def gate(self) -> GateSpec:
        return GateSpec(self.suite, self.entry.id, self.level.level, self.level.rule)

    @property
    def _stored(self) -> Item:
        assert self.entry.dataset is not None
        return self.entry.dataset.by_level[self.level.level][self.index]

    def make_item(self) -> Item:
        lv = self.level
        if self.entry.dataset is not None:
            item = self._stored
            return item if lv.repeats <= 1 else replace(item, id=self.sample_id)
        return sampler(get_task(self.entry.task)).item(
            lv.level, self.seed, self.index, lv.params, lv.style, id=self.sample_id
        )


def addresses(suite: SuiteSpec) -> Iterator[Address]:
    """Every sample of a suite, in file order: entry, level, seed, index, repeat."""
    for entry in suite.entries:
        for lv in entry.levels:
            if entry.dataset is not None:  # the file's items, in file order, up to ``samples``
                stored = entry.dataset.by_level[lv.level][: lv.samples]
                for index, item in enumerate(stored):
                    for repeat in range(lv.repeats):
                        yield Address(suite.path, entry, lv, item.seed, index, repeat)
                continue
            for seed in lv.seeds:
                for index in range(lv.samples):
                    for repeat in range(lv.repeats):
                        yield Address(suite.path, entry, lv, seed, index, repeat)
