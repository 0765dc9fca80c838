"""The sampler: a task's items by address, drawn from its generator.

An item is addressed by ``(task, level, seed, index)`` and a split; :class:`Sampler` turns
the address into raw draws of the generator (each under a :class:`~.draw.Draw` for its
split), keeps ``unique`` batches distinct (and counts the repeats of an exhausted level),
and draws the worked examples of the example styles. Authors never call it: they write a
:class:`~pytest_reasoning.tasks.base.Task`; everything else asks :func:`make_item`.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ..core import Item, canonical_json
from ..errors import InvalidArgument
from ..rng import derive_seed
from . import hooks
from .base import Generated, Task, check_style, item_id, resolve_params
from .draw import (
    REFUSALS,
    SPARES,
    Draw,
    OtherSplit,
    Repeats,
    SampledChooser,
    check_split,
    fingerprint,
    split_of,
)
from .shared_batches import adopt, records_after, shared_path, write_records

__all__ = ["REDRAW_STRIDE", "Sampler", "make_item", "sampler"]

_PATIENCE = 100  # fresh draws tried for a new problem before a duplicate is accepted
_MAX_BATCHES = 64
# Draws tried for a problem of the wanted split: a half-and-half split fails them all with
# probability 2**-200, so only an answer class with no problem in the split ever runs out.
_SPLIT_PATIENCE = 200
_GIVE_UPS = 3  # raw draws whose generator gave up before its error stands
# Raw draw ``raw``'s k-th redraw for its split is raw draw ``raw + k * REDRAW_STRIDE``: no
# stream reaches 2**40 items, so redraws never meet another item's own draw.
REDRAW_STRIDE = 1 << 40


def _raw(raw: int, attempt: int, split: str) -> int:
    """The raw number :meth:`Sampler.draw` gets for a split's draw and redraw ``attempt``."""
    number = raw + attempt * REDRAW_STRIDE
    return number if split == "test" else -1 - number


def sampler(task: Task) -> Sampler:
    """The task's sampler (one per task object: it holds the task's ``unique`` batches)."""
    found = task.__dict__.get("_sampler")
    if found is None:  # setdefault is atomic: two threads asking at once share one
        found = task.__dict__.setdefault("_sampler", Sampler(task))
    assert isinstance(found, Sampler)
    return found


def make_item(
    task: Task,
    level: str,
    seed: int,
    index: int,
    params: Mapping[str, Any] | None = None,
    style: str = "direct",
    *,
    id: str | None = None,
    split: str = "test",
) -> Item:
    """The item addressed by ``(task, level, seed, index)``: :meth:`Sampler.item`."""
    return sampler(task).item(level, seed, index, params, style, id=id, split=split)


class Sampler:
    """Draws one task's items, batches, repeats and worked examples."""

    # One lock for every task's batches: a batch is short work, and a run's items are drawn
    # on one thread; the lock keeps a library user's threads from drawing one batch twice.
    lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, task: Task) -> None:
        self.task = task
        self._batches: OrderedDict[tuple[str, int, str, str], _Batch] = OrderedDict()

    def item(
        self,
        level: str,
        seed: int,
        index: int,
        params: Mapping[str, Any] | None = None,
        style: str = "direct",
        *,
        id: str | None = None,
        split: str = "test",
    ) -> Item:
        """The item addressed by ``(task, level, seed, index)`` under ``params``, a problem of
        ``split`` (``test``, what suites ask; ``train``, never one of those).

        The seed ignores ``params`` on purpose: the same address under another rendering knob
        (order, style) is the same underlying problem, which makes paired comparisons possible.
        """
        task = self.task
        resolved = resolve_params(task, level, params)
        check_style(task, style)
        check_split(split)
        style = hooks.style_aliases(task).get(style, style)
        gen = self.generated(level, seed, index, resolved, split)
        examples: list[Generated] = []
        if style in task.example_styles:
            examples = self.worked_examples(level, seed, index, resolved, gen)
        return self.build_item(
            gen,
            examples,
            level=level,
            seed=seed,
            index=index,
            params=resolved,
            style=style,
            id=id or item_id(task.id, level, seed, index, split),
        )

    def build_item(
        self,
        generated: Generated,
        examples: Sequence[Generated],
        *,
        level: str,
        seed: int,
        index: int,
        params: Mapping[str, Any],
        style: str,
        id: str,
    ) -> Item:
        """An :class:`Item` from a generator's output (:meth:`item` and the Hypothesis
        strategies both end here)."""
        task = self.task
        return Item(
            id=id,
            task=task.id,
            level=level,
            seed=seed,
            index=index,
            params=dict(params),
            style=style,
            prompt=task.render(generated, style, examples),
            answer=generated.answer,
            problem=generated.problem,
            system=task.system_prompt,
        )

    def worked_examples(
        self, level: str, seed: int, index: int, params: Mapping[str, Any], item: Generated
    ) -> list[Generated]:
        """The worked examples shown with item ``index`` (styles in ``example_styles``).

        Drawn from streams of their own, from the **train** split only (an example shown in
        a test prompt is training material, and never another test item's problem), never
        the item's problem nor one identical to it (``identity``), nor each other.
        Example ``j`` is drawn as index ``j`` (a balanced task's answer class ``j``); when
        that class has no problem left to show (a small level), the next classes are tried,
        and an example that cannot be made distinct is left out rather than repeat the item.
        """
        task = self.task
        shots = task.shots(params)
        shot_params = hooks.example_params(task, params)
        seen = {fingerprint(task.identity(item.problem))}
        out: list[Generated] = []
        for j in range(shots):
            example = None
            # Same index first (the class the example was meant to show), then the others.
            for k in range(j, j + shots + 1):
                for attempt in range(_PATIENCE if k == j else _PATIENCE // 10):
                    chooser = SampledChooser(
                        derive_seed(task.id, level, seed, index, "shot", j, attempt)
                        if k == j
                        else derive_seed(task.id, level, seed, index, "shot", j, "k", k, attempt),
                        Draw(task, "train", seen.__contains__),
                    )
                    try:
                        draw = task.generate(chooser, shot_params, k)
                    except OtherSplit:
                        continue  # a test problem: the split check below would refuse it
                    except InvalidArgument:
                        break  # no problem of this class in the train split: the next class
                    if (
                        fingerprint(task.identity(draw.problem)) not in seen
                        and split_of(task, draw.problem) == "train"
                    ):
                        example = draw
                        break
                if example is not None:
                    break
            if example is not None:
                seen.add(fingerprint(task.identity(example.problem)))
                out.append(example)
        return out

    def generated(
        self, level: str, seed: int, index: int, params: Mapping[str, Any], split: str = "test"
    ) -> Generated:
        """Item ``index`` of its batch: raw draw ``index``, or with ``unique`` the
        ``index``-th distinct problem of the raw draws (a duplicate draw is skipped); each
        raw draw a problem of ``split`` (:meth:`draw_in`)."""
        if not params.get("unique", False):
            return self.draw_in(level, seed, index, params, index, split)
        with self.lock:
            return self._batch(level, seed, params, split).get(
                self, level, seed, index, params, split
            )

    def draw_in(
        self,
        level: str,
        seed: int,
        raw: int,
        params: Mapping[str, Any],
        index: int,
        split: str,
        repeats: Repeats | None = None,
    ) -> Generated:
        """Raw draw ``raw`` of ``split``: :meth:`draw` of raw number ``raw`` (a test item) or
        ``-1 - raw`` (a train item: the two splits never share randomness, so a generator
        that redraws only part of a problem for its split, ``Draw.fits``, never makes a
        train item the near twin of the test item at the same address) when its problem falls
        in the split, else the draw redone (``± k * REDRAW_STRIDE`` further, k = 1, 2, …)
        until one does: two draws on average, and item ``index`` is still a pure function of
        its address. InvalidArgument when none does in ``_SPLIT_PATIENCE`` draws (a small
        level whose answer class has no problem in this split)."""
        return self._draw_in(level, seed, raw, params, index, split, repeats)[0]

    def _draw_in(
        self,
        level: str,
        seed: int,
        raw: int,
        params: Mapping[str, Any],
        index: int,
        split: str,
        repeats: Repeats | None,
    ) -> tuple[Generated, bool]:
        """:meth:`draw_in`, and whether the generator avoided repeats itself (so a repeat it
        returns means it found nothing new: the batch takes the level as exhausted at once)."""
        task = self.task
        gave_up = 0
        for attempt in range(_SPLIT_PATIENCE):
            number = _raw(raw, attempt, split)
            state = Draw(task, split, repeats)
            try:
                gen = self.draw(level, seed, number, params, index, state)
            except OtherSplit:
                continue  # the draw below would have been redone: it stopped early
            except InvalidArgument:
                if state.refusals == REFUSALS and state.spares == SPARES:
                    # Not for want of new problems: the knobs cannot, or (a split with
                    # few problems up to renaming: abduction D2's train split holds
                    # three) the generator's bounded search missed them this once; the
                    # next raw draws try again before the error stands.
                    gave_up += 1
                    if gave_up == _GIVE_UPS:
                        raise
                    continue
                # Only repeats were left for what was wanted: the level is exhausted.
                state.refusals = 0
                try:
                    gen = self.draw(level, seed, number, params, index, state)
                except OtherSplit:
                    continue
            if split_of(task, gen.problem) == split:
                return gen, state.consulted
        raise InvalidArgument(
            f"{task.id} {level}: no problem of the {split} split in {_SPLIT_PATIENCE} draws for "
            f"item {index}; this level has too few problems (of this answer class) under these "
            "knobs: see the distinct-problem table in docs/tasks/splits.md"
        )

    def draw(
        self, level: str, seed: int, raw: int, params: Mapping[str, Any], index: int, draw: Draw
    ) -> Generated:
        """Raw draw ``raw`` of a (level, seed) batch, built as item ``index`` under ``draw``:
        every item's randomness starts here (a task's ``draw`` hook keys it otherwise)."""
        task = self.task
        custom = getattr(task, "draw", None)
        if custom is not None:
            out = custom(level, seed, raw, params, index, draw)
            assert isinstance(out, Generated)
            return out
        chooser = SampledChooser(derive_seed(task.id, level, seed, raw), draw)
        return task.generate(chooser, params, index)

    def _batch(self, level: str, seed: int, params: Mapping[str, Any], split: str) -> _Batch:
        """This process's record of one batch (call with the lock held); LRU-bounded."""
        key = (level, seed, canonical_json(dict(params)), split)
        batches = self._batches
        batch = batches.pop(key, None) or _Batch()
        batches[key] = batch  # most recently used last
        while len(batches) > _MAX_BATCHES:
            batches.popitem(last=False)
        return batch

    def repeated(
        self,
        level: str,
        seed: int,
        count: int,
        params: Mapping[str, Any] | None = None,
        split: str = "test",
    ) -> int | None:
        """How many of items ``0..count-1`` repeat an earlier item's problem: 0 unless the
        level's split has fewer distinct problems than that; ``None`` when ``unique`` is off."""
        repeats = self._repeats(level, seed, count, params, split)
        return None if repeats is None else sum(repeats)

    def shortfall(
        self,
        level: str,
        seed: int,
        count: int,
        params: Mapping[str, Any] | None = None,
        split: str = "test",
    ) -> str | None:
        """One line when items ``0..count-1`` ask for more distinct problems than the
        level's split has (``None`` when they do not, or ``unique`` is off): what a suite
        and ``export`` print."""
        repeated = self.repeated(level, seed, count, params, split)
        if not repeated:
            return None
        return (
            f"{self.task.id} {level}: {repeated} of {count} items repeat an earlier problem: "
            f"the {split} split has only {count - repeated} distinct problems under these knobs "
            "(docs/tasks/splits.md)"
        )

    def _repeats(
        self, level: str, seed: int, count: int, params: Mapping[str, Any] | None, split: str
    ) -> bytes | None:
        """The batch's repeat flags of items ``0..count-1`` (replayed as far as needed)."""
        resolved = resolve_params(self.task, level, params)
        check_split(split)
        if not resolved.get("unique", False):
            return None
        if count <= 0:
            return b""
        with self.lock:
            batch = self._batch(level, seed, resolved, split)
            if count > len(batch.raw):
                batch.get(self, level, seed, count - 1, resolved, split)
            return bytes(batch.repeats[:count])


class _Batch:
    """Which raw draw each item of one ``(level, seed, params)`` batch uses.

    Only fingerprints and raw indices are kept (about 100 bytes an item), so streaming 100,000
    items stays small; any item is rebuilt by replaying the prefix once per process. When a
    level has fewer distinct problems than items (D1 boolean logic has ten), a duplicate is
    accepted after ``patience`` fresh draws, and counted; patience shrinks while that lasts so
    an exhausted level stays cheap. The state only ever grows in index order, so item ``k`` is
    the same whatever order items are asked for.
    """

    def __init__(self) -> None:
        self.raw = array("q")
        self.seen: dict[bytes, int] = {}  # a problem's fingerprint -> the first item with it
        self.next_raw = 0
        self.repeats = bytearray()  # 1 where item k repeats an earlier problem
        self.patience: dict[int, int] = {}  # per stratum: balanced labels exhaust apart

    def get(
        self,
        sampler: Sampler,
        level: str,
        seed: int,
        index: int,
        params: Mapping[str, Any],
        split: str,
    ) -> Generated:
        task = sampler.task
        path = None
        if index >= len(self.raw):  # another process of the run may have drawn these
            path = shared_path((task.id, level, seed, canonical_json(dict(params)), split))
            if path is not None:
                drawn = records_after(path, len(self.raw))
                adopt(self, lambda k: task.stratum(params, k), drawn, _PATIENCE)
        if index < len(self.raw):
            return sampler.draw_in(
                level, seed, self.raw[index], params, index, split, self._before(index)
            )
        start, fps = len(self.raw), []
        while True:
            k = len(self.raw)
            stratum = task.stratum(params, k)
            patience = self.patience.get(stratum, _PATIENCE)
            repeat = 0
            for _attempt in range(patience):
                j = self.next_raw
                self.next_raw += 1
                gen, _ = sampler._draw_in(level, seed, j, params, k, split, self._before(k))
                fp = fingerprint(task.identity(gen.problem))
                if fp not in self.seen:
                    self.seen[fp] = k
                    fps.append(fp)
                    self.patience[stratum] = min(_PATIENCE, patience * 2)
                    break
            else:  # nearly exhausted: the last draw, a repeat, is accepted and counted
                # (only here: a draw the generator could not keep new is followed by others,
                # another shape often is, so a flagged item always repeats an earlier one)
                repeat = 1
                self.patience[stratum] = max(5, patience // 2)
                fps.append(bytes(16))
            self.raw.append(j)
            self.repeats.append(repeat)
            if k == index:
                if path is not None:
                    new = zip(self.raw[start:], self.repeats[start:], fps, strict=True)
                    write_records(path, start, list(new))
                return gen

    def _before(self, k: int) -> Repeats:
        """Whether a problem is one of items ``0..k-1``: what item ``k``'s draw avoids, the
        same whenever it is replayed."""
        seen = self.seen
        return lambda fp: seen.get(fp, k) < k
