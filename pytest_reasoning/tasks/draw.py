"""The train/test split of a task's problems, and the context of one draw.

Every level's problem space is partitioned into a test and a train split by a hash of the
canonical problem (:func:`split_of`): suites and default exports draw test problems only,
``export --split train`` and the audit's classifiers train problems only, so no problem a
model is tested on can be in its training data (docs/tasks/splits.md).

A draw (:class:`Draw`) is for one split and, in a ``unique`` batch or among worked
examples, must not repeat earlier problems. The sampler hands it to the generator with the
chooser (a :class:`SampledChooser`); a generator that redraws only part of a problem to stay
unbiased asks ``draw_of(chooser).fits(problem)``. Outside a sampler's draw (Hypothesis, a
generator called directly) :func:`draw_of` gives :data:`FREE`, where everything fits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any, cast

from ..core import canonical_json
from ..errors import InvalidArgument, did_you_mean, quote
from ..rng import Chooser, SeededChooser
from .base import Task
from .memo import Memo

__all__ = [
    "FREE",
    "SPLITS",
    "TEST_SHARE",
    "Draw",
    "OtherSplit",
    "Repeats",
    "SampledChooser",
    "check_split",
    "draw_of",
    "fingerprint",
    "split_key",
    "split_of",
    "split_of_key",
    "split_salt",
]

# Half and half: the splits are alike in distribution and size, and a test item costs two
# raw draws on average.
SPLITS: tuple[str, ...] = ("test", "train")
TEST_SHARE = 0.5

Repeats = Callable[[bytes], bool]  # a problem's fingerprint -> whether it would repeat one

_SPLITS: Memo[str] = Memo(20_000)  # (salt, task, key's items) -> its split
REFUSALS = 16  # repeats refused per draw before the level is taken as exhausted
SPARES = 64  # repeats refused per draw among problems checked and not kept (fits)


def check_split(split: str) -> None:
    if split not in SPLITS:
        raise InvalidArgument(
            f"split {quote(split)}: expected one of {', '.join(SPLITS)}"
            + did_you_mean(split, SPLITS)
        )


def fingerprint(problem: Mapping[str, Any]) -> bytes:
    # repr, not JSON: twice as fast, and deterministic (insertion-ordered dicts, no hash()).
    return hashlib.blake2b(repr(problem).encode("utf-8"), digest_size=16).digest()


def split_key(task: Task, problem: Mapping[str, Any]) -> Mapping[str, Any]:
    """What the split hashes: the task's ``split_key`` hook (hooks.TaskHooks), else its
    ``identity``."""
    hook = getattr(task, "split_key", None)
    return task.identity(problem) if hook is None else cast("Mapping[str, Any]", hook(problem))


def split_of(task: Task, problem: Mapping[str, Any]) -> str:
    """``test`` or ``train``: a SHA-256 of the task id and the canonical JSON of the
    problem's :func:`split_key` (its ``identity`` unless a task splits coarser), read as a
    number in [0, 1), below ``TEST_SHARE`` is test. The level is not hashed: a problem two
    levels share (FLenQA's base instance at every length) is in the same split at both."""
    return split_of_key(task, split_key(task, problem))


def split_salt(task: Task) -> str:
    """The task's ``split_salt`` hook (hooks.TaskHooks), else ``split-1``."""
    return str(getattr(task, "split_salt", "split-1"))


def split_of_key(task: Task, key: Mapping[str, Any]) -> str:
    salt = split_salt(task)
    # A draw checks the same few keys again and again where a level runs out of problems
    # (DyVal's forms, one string each): a key of strings is remembered.
    memo = None
    if all(type(v) is str for v in key.values()):
        memo = (salt, task.id, *sorted(key.items()))
        split = _SPLITS.get(memo)
        if split is not None:
            return split
    text = canonical_json(dict(key))
    digest = hashlib.sha256(f"{salt}\x1f{task.id}\x1f{text}".encode()).digest()
    split = "test" if int.from_bytes(digest[:8], "big") < TEST_SHARE * 2**64 else "train"
    return split if memo is None else _SPLITS.put(memo, split)


class OtherSplit(Exception):
    """A draw abandoned part-way: its problem is in the other split (stop_if_other_split)."""


class Draw:
    """What one draw of ``task`` must give: a problem of ``split`` and, with ``repeats``, no
    earlier one's problem (up to ``REFUSALS`` repeats refused: past that the level is taken
    as exhausted, and the batch counts the repeat). ``task`` None: a free draw."""

    def __init__(self, task: Task | None, split: str, repeats: Repeats | None = None) -> None:
        self.task = task
        self.split = split
        self.repeats = repeats
        self.refusals = REFUSALS
        self.spares = SPARES
        self.consulted = False  # whether the generator avoided repeats itself (fits)

    def fits(
        self,
        problem: Mapping[str, Any] | None,
        *,
        kept: bool = True,
        paired: bool = False,
        key: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether ``problem`` may be the one being drawn (always, in a free draw).

        Redrawing a whole problem that falls in the other split, or repeats an earlier one,
        is unbiased only where each shape has many problems of each answer. Where a level is
        small, a split holds different shares of one shape's True and False problems, and a
        batch uses up one shape's few True problems before its False ones, so the shape would
        tell the answer. A generator that draws the answer apart from a shape calls this to
        redraw only the answer-bearing part (the leaves, the pair) and keep the shape (DyVal's
        logic and reachability tasks do). ``paired``: the problem is drawn with one of the
        other answer (``kept=False``: that one, only checked; ``LeafBalancer``), whose
        repeats are refused from ``SPARES`` first, so both answers are refused alike.
        ``key``: the problem's :func:`split_key`, where the caller has it for less than the
        problem (``problem`` None then: a task whose split key is its identity)."""
        task = self.task
        if task is None:
            return True
        if key is None:
            assert problem is not None
            key = split_key(task, problem)  # once: canonical forms cost more than a lookup
        if split_of_key(task, key) != self.split:
            return False
        if kept:
            self.consulted = True
        if self.repeats is None or self.refusals <= 0 or (not kept and self.spares <= 0):
            return True  # an exhausted level: the batch accepts and counts the repeat
        same = getattr(task, "split_key", None) is None
        if self.repeats(fingerprint(key if same or problem is None else task.identity(problem))):
            if (paired or not kept) and self.spares > 0:
                self.spares -= 1
            else:
                self.refusals -= 1
            return False
        return True

    def stop_if_other_split(self, problem: Mapping[str, Any]) -> None:
        """Abandon the draw at once when ``problem`` (the part drawn so far, enough for
        :func:`split_key`: the finished problem's key must be the same) is in the other
        split: the draw would be redone anyway, so a generator whose split is known early
        skips the rest of a draw that cannot be kept (FLenQA's padding). In a free draw,
        nothing."""
        if self.task is not None and split_of(self.task, problem) != self.split:
            raise OtherSplit


FREE = Draw(None, "test")


class SampledChooser(SeededChooser):
    """A seeded chooser that carries the draw it is for (what :func:`draw_of` reads)."""

    def __init__(self, seed: int, draw: Draw) -> None:
        super().__init__(seed)
        self.draw = draw


def draw_of(chooser: Chooser) -> Draw:
    """The draw a generator's chooser is for: the sampler's, or :data:`FREE`."""
    return chooser.draw if isinstance(chooser, SampledChooser) else FREE
