"""The task interface every family implements, and declarative knobs.

A task turns ``(level, params, seed, index)`` into an :class:`~pytest_reasoning.core.Item`
through a Chooser, renders it in a prompt style, scores a response, and answers it with a
solver written apart from its generator (the built-in ``reference`` model).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import threading
from abc import ABC, abstractmethod
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..core import Item, Score, canonical_json
from ..errors import InvalidArgument, UnknownLevel, did_you_mean, quote
from ..rng import Chooser, SeededChooser, derive_seed
from .memo import Memo
from .shared_batches import adopt, records_after, shared_path, write_records

__all__ = [
    "REDRAW_STRIDE",
    "SPLITS",
    "TEST_SHARE",
    "Generated",
    "Knob",
    "Shortcut",
    "Task",
    "check_split",
    "item_id",
]

# Every level's problem space is partitioned into a test and a train split by a hash of the
# canonical problem (``Task.split_of``): suites and default exports draw test problems only,
# ``export --split train`` and the audit's classifiers train problems only, so no problem a
# model is tested on can be in its training data (docs/tasks/splits.md). Half and half: the
# splits are alike in distribution and size, and a test item costs two raw draws on average.
SPLITS: tuple[str, ...] = ("test", "train")
TEST_SHARE = 0.5


@dataclass(frozen=True)
class Knob:
    """One complexity or rendering parameter a suite may set."""

    name: str
    kind: type
    doc: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    item_kind: type | None = None  # element type for list knobs

    def check(self, value: Any) -> Any:
        """Return ``value`` normalised, or raise InvalidArgument naming this knob."""
        names: dict[type, str] = {list: f"list of {self._item()}", dict: "mapping"}
        expected = names.get(self.kind, self.kind.__name__)
        ok = isinstance(value, self.kind) and not (self.kind is int and isinstance(value, bool))
        if self.kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if ok and self.kind is float and not math.isfinite(value):
            raise InvalidArgument(
                f"knob '{self.name}': expected a finite number, got {quote(value)}"
            )
        if not ok:
            raise InvalidArgument(f"knob '{self.name}': expected {expected}, got {quote(value)}")
        if self.kind is dict:
            return self._check_mapping(value)
        if self.kind is list:
            if not value:
                raise InvalidArgument(f"knob '{self.name}': expected a non-empty list")
            for v in value:
                if self.choices is not None and v not in self.choices:
                    raise InvalidArgument(
                        f"knob '{self.name}': unknown value {quote(v)}; expected any of "
                        + ", ".join(map(str, self.choices))
                    )
            return list(value)
        if self.choices is not None and value not in self.choices:
            raise InvalidArgument(
                f"knob '{self.name}': expected one of "
                + ", ".join(map(str, self.choices))
                + f", got {quote(value)}{did_you_mean(value, self.choices)}"
            )
        if self.minimum is not None and value < self.minimum:
            raise InvalidArgument(f"knob '{self.name}': must be >= {self.minimum:g}, got {value}")
        if self.maximum is not None and value > self.maximum:
            raise InvalidArgument(f"knob '{self.name}': must be <= {self.maximum:g}, got {value}")
        return value

    def _check_mapping(self, value: dict[Any, Any]) -> dict[str, float]:
        """A ``{choice: number}`` mapping (weights), each number at least ``minimum``."""
        if not value:
            raise InvalidArgument(f"knob '{self.name}': expected a non-empty mapping")
        out: dict[str, float] = {}
        for k, v in value.items():
            if self.choices is not None and k not in self.choices:
                raise InvalidArgument(
                    f"knob '{self.name}': unknown key {quote(k)}; expected any of "
                    + ", ".join(map(str, self.choices))
                )
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise InvalidArgument(
                    f"knob '{self.name}.{k}': expected a finite number, got {quote(v)}"
                )
            if self.minimum is not None and v < self.minimum:
                raise InvalidArgument(
                    f"knob '{self.name}.{k}': must be >= {self.minimum:g}, got {v}"
                )
            out[str(k)] = float(v)
        return out

    def _item(self) -> str:
        return self.item_kind.__name__ if self.item_kind else "values"


@dataclass(frozen=True)
class Shortcut:
    """A heuristic that answers an item WITHOUT the reasoning the task names (a shortcut
    baseline for ``pytest-reasoning audit``). It reads only what the prompt shows: ``guess``
    returns an answer in the gold's format, or ``None`` to abstain (scored as wrong)."""

    name: str
    doc: str
    guess: Callable[[Item], str | None]


@dataclass(frozen=True)
class Generated:
    """A generator's output before a prompt style is applied."""

    problem: dict[str, Any]
    answer: str
    body: str  # the problem statement and question, without style additions
    extra: dict[str, Any] = field(default_factory=dict)


def item_id(task: str, level: str, seed: int, index: int, split: str = "test") -> str:
    """``dyval.arithmetic[D2-s1-007]``; a train item's id ends ``-train``."""
    return f"{task}[{level}-s{seed}-{index:03d}{'' if split == 'test' else '-' + split}]"


class Task(ABC):
    """Base class of every task; subclasses set the class variables and the four methods."""

    id: ClassVar[str]
    levels: ClassVar[tuple[str, ...]]
    styles: ClassVar[tuple[str, ...]] = ("direct", "cot")
    example_styles: ClassVar[tuple[str, ...]] = ("fewshot",)  # styles that show worked examples
    # Other names a paper uses for a style (MuSR's "regular" is our "direct").
    style_aliases: ClassVar[Mapping[str, str]] = {}
    partial_credit: ClassVar[bool] = False  # Score.value in (0, 1) possible: ``metric: cell``
    # A system message sent before every prompt of this task (None: the user message only).
    # Part of each request, so of the cache key; see docs/extending.md.
    system_prompt: ClassVar[str | None] = None
    knobs: ClassVar[Mapping[str, Knob]]
    description: ClassVar[str] = ""
    # A pack's dataset (reasoning-gym's): generators not written here, audited only when
    # named (``pytest-reasoning audit`` with no task audits the built-in families).
    pack: ClassVar[bool] = False
    # Salts the train/test hash (:meth:`split_of`). A task whose smallest level lacks an
    # answer class in one split under the default picks another, and says why: changing it
    # reshuffles that task's splits (docs/tasks/splits.md).
    split_salt: ClassVar[str] = "split-1"

    # -- levels and parameters -------------------------------------------------------------
    def check_level(self, level: str) -> None:
        if level not in self.levels:
            raise UnknownLevel(
                f"unknown level {quote(level)} for {self.id}{did_you_mean(level, self.levels)}; "
                f"expected one of {', '.join(self.levels)}"
            )

    @abstractmethod
    def preset(self, level: str) -> dict[str, Any]:
        """The knob values a level stands for."""

    def resolve_params(self, level: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The level's preset overridden by ``params``, every knob checked."""
        self.check_level(level)
        merged = dict(self.preset(level))
        for name, value in (params or {}).items():
            merged[name] = self.check_knob(name, value)
        self.adapt(merged, set(params or ()))
        self.check_combination(merged)
        return merged

    def check_knob(self, name: str, value: Any) -> Any:
        """One knob's value, normalised; InvalidArgument for an unknown knob or a bad value
        (suites check every knob this way, so all their mistakes are reported at once)."""
        if name not in self.knobs:
            raise InvalidArgument(
                f"unknown knob {quote(name)} for {self.id}{did_you_mean(name, self.knobs)}; "
                "expected one of " + ", ".join(sorted(self.knobs))
            )
        return self.knobs[name].check(value)

    def adapt(self, params: dict[str, Any], given: set[str]) -> None:  # noqa: B027 - optional hook
        """Fit the preset's knobs (those not in ``given``) to the ones a user set, in place:
        ``nodes: 5`` at D4 lowers the preset's ``max_links`` rather than failing. Knobs the
        user set are never changed; an impossible combination of those still fails."""

    def check_combination(self, params: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Raise InvalidArgument for knob values that are fine alone but impossible together."""

    def check_style(self, style: str) -> None:
        if style not in self.styles and style not in self.style_aliases:
            raise InvalidArgument(
                f"style {quote(style)} is not offered by {self.id}"
                f"{did_you_mean(style, [*self.styles, *self.style_aliases])}; expected one of "
                + ", ".join(self.styles)
            )

    # -- generation ------------------------------------------------------------------------
    @abstractmethod
    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        """Build one problem; all randomness comes from ``chooser``."""

    @abstractmethod
    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        """The full prompt for a style; ``examples`` are the worked examples of ``fewshot``."""

    def shots(self, params: Mapping[str, Any]) -> int:
        """How many worked examples the ``fewshot`` style shows (0 if the task has none)."""
        return 0

    def example_params(self, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """The knobs worked examples are drawn with (the item's own, unless a task shows
        smaller examples)."""
        return params

    def export_answer(self, answer: str) -> Any:
        """The gold answer as the export writes it (JSON for structured answers)."""
        return answer

    def import_answer(self, value: Any) -> str:
        """The inverse of :meth:`export_answer`: the gold answer an exported (or a user's)
        item file gives, as the string items carry. Structured answers default to JSON."""
        if isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False)

    def stratum(self, params: Mapping[str, Any], index: int) -> int:
        """Which answer class item ``index`` is drawn for (balanced tasks), else 0."""
        return 0

    def make_item(
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
        resolved = self.resolve_params(level, params)
        self.check_style(style)
        check_split(split)
        style = self.style_aliases.get(style, style)
        gen = self._generate_at(level, seed, index, resolved, split)
        examples: list[Generated] = []
        if style in self.example_styles:
            examples = self.worked_examples(level, seed, index, resolved, gen)
        return self.build_item(
            gen,
            examples,
            level=level,
            seed=seed,
            index=index,
            params=resolved,
            style=style,
            id=id or item_id(self.id, level, seed, index, split),
        )

    def worked_examples(
        self, level: str, seed: int, index: int, params: Mapping[str, Any], item: Generated
    ) -> list[Generated]:
        """The worked examples shown with item ``index`` (styles in ``example_styles``).

        Drawn from streams of their own, from the **train** split only (an example shown in
        a test prompt is training material, and never another test item's problem), never
        the item's problem nor one identical to it (:meth:`identity`), nor each other.
        Example ``j`` is drawn as index ``j`` (a balanced task's answer class ``j``); when
        that class has no problem left to show (a small level), the next classes are tried,
        and an example that cannot be made
        distinct is left out rather than repeat the item.
        """
        shots = self.shots(params)
        shot_params = self.example_params(params)
        seen = {_fingerprint(self.identity(item.problem))}
        out: list[Generated] = []
        for j in range(shots):
            example = None
            # Same index first (the class the example was meant to show), then the others.
            for k in range(j, j + shots + 1):
                for attempt in range(_PATIENCE if k == j else _PATIENCE // 10):
                    chooser = SeededChooser(
                        derive_seed(self.id, level, seed, index, "shot", j, attempt)
                        if k == j
                        else derive_seed(self.id, level, seed, index, "shot", j, "k", k, attempt)
                    )
                    try:
                        with _drawing_for("train", seen.__contains__):
                            draw = self.generate(chooser, shot_params, k)
                    except _OtherSplit:
                        continue  # a test problem: the split check below would refuse it
                    except InvalidArgument:
                        break  # no problem of this class in the train split: the next class
                    if (
                        _fingerprint(self.identity(draw.problem)) not in seen
                        and self.split_of(draw.problem) == "train"
                    ):
                        example = draw
                        break
                if example is not None:
                    break
            if example is not None:
                seen.add(_fingerprint(self.identity(example.problem)))
                out.append(example)
        return out

    def identity(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """What makes two problems the same: for the worked-example rule, de-duplication
        (``unique``), the train/test split (:meth:`split_of`) and the clustering of samples
        in a gate (:meth:`problem_key`). The whole problem unless a task says otherwise; the
        built-in families give a canonical form, the problem up to renaming (DyVal's nodes,
        ZebraLogic's values and features, FLenQA's and MuSR's people), without what does
        not change it (distractors, padding): docs/tasks/splits.md."""
        return problem

    def split_key(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """What the train/test split hashes: :meth:`identity`, or something coarser that is
        a function of it (problems that are the same are then still always in one split).
        FLenQA splits by the part of its template drawn apart from the answer (a relation,
        a property group, a rule), so that both answers of each are in the same split."""
        return self.identity(problem)

    def problem_key(self, problem: Mapping[str, Any]) -> str:
        """A short digest of :meth:`identity`: the cluster a sample's results row names
        (``problem``), so samples of the same problem are one cluster in a gate."""
        text = canonical_json(dict(self.identity(problem)))
        return hashlib.sha256(f"{self.id}\x1f{text}".encode()).hexdigest()[:16]

    def fits_draw(
        self,
        problem: Mapping[str, Any] | None,
        *,
        kept: bool = True,
        paired: bool = False,
        key: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether ``problem`` may be the one being drawn (always, outside a draw): it is in
        the split being drawn and, in a ``unique`` batch (or among worked examples), no
        earlier one's problem (up to ``_REFUSALS`` repeats refused per draw: past that the
        level is taken as exhausted, and the batch counts the repeat).

        Redrawing a whole problem that falls in the other split, or repeats an earlier one,
        is unbiased only where each shape has many problems of each answer. Where a level is
        small, a split holds different shares of one shape's True and False problems, and a
        batch uses up one shape's few True problems before its False ones, so the shape would
        tell the answer. A generator that draws the answer apart from a shape calls this to
        redraw only the answer-bearing part (the leaves, the pair) and keep the shape (DyVal's
        logic and reachability tasks do). ``paired``: the problem is drawn with one of the
        other answer (``kept=False``: that one, only checked; :class:`LeafBalancer`), whose
        repeats are refused from ``_SPARES`` first, so both answers are refused alike.
        ``key``: the problem's :meth:`split_key`, where the caller has it for less than the
        problem (``problem`` None then: a task whose split key is its identity)."""
        state: _State | None = getattr(_DRAWING, "state", None)
        if state is None:
            return True
        if key is None:
            assert problem is not None
            key = self.split_key(problem)  # once: canonical forms cost more than a lookup
        if self._split_of_key(key) != state.split:
            return False
        if kept:
            state.consulted = True
        if state.repeats is None or state.refusals <= 0 or (not kept and state.spares <= 0):
            return True  # an exhausted level: the batch accepts and counts the repeat
        same = type(self).split_key is Task.split_key
        if state.repeats(_fingerprint(key if same or problem is None else self.identity(problem))):
            if (paired or not kept) and state.spares > 0:
                state.spares -= 1
            else:
                state.refusals -= 1
            return False
        return True

    def stop_if_other_split(self, problem: Mapping[str, Any]) -> None:
        """Within a draw, abandon it at once when ``problem`` (the part of it drawn so far,
        enough for :meth:`split_key`: the finished problem's key must be the same) is in the
        other split: the draw would be redone anyway (:meth:`draw_in`), so a generator whose
        split is known early skips the rest of a draw that cannot be kept (FLenQA's padding).
        Outside a draw (Hypothesis, a generator called directly), nothing."""
        state: _State | None = getattr(_DRAWING, "state", None)
        if state is not None and self.split_of(problem) != state.split:
            raise _OtherSplit

    def split_of(self, problem: Mapping[str, Any]) -> str:
        """``test`` or ``train``: a SHA-256 of the task id and the canonical JSON of the
        problem's :meth:`split_key` (its :meth:`identity` unless a task splits coarser),
        read as a number in [0, 1), below ``TEST_SHARE`` is test. The level is not hashed: a
        problem two levels share (FLenQA's base instance at every length) is in the same
        split at both."""
        return self._split_of_key(self.split_key(problem))

    def _split_of_key(self, key: Mapping[str, Any]) -> str:
        # A draw checks the same few keys again and again where a level runs out of problems
        # (DyVal's forms, one string each): a key of strings is remembered.
        memo = None
        if all(type(v) is str for v in key.values()):
            memo = (self.split_salt, self.id, *sorted(key.items()))
            split = _SPLITS.get(memo)
            if split is not None:
                return split
        text = canonical_json(dict(key))
        digest = hashlib.sha256(f"{self.split_salt}\x1f{self.id}\x1f{text}".encode()).digest()
        split = "test" if int.from_bytes(digest[:8], "big") < TEST_SHARE * 2**64 else "train"
        return split if memo is None else _SPLITS.put(memo, split)

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
        """An :class:`Item` from a generator's output (``make_item`` and the Hypothesis
        strategies both end here)."""
        return Item(
            id=id,
            task=self.id,
            level=level,
            seed=seed,
            index=index,
            params=dict(params),
            style=style,
            prompt=self.render(generated, style, examples),
            answer=generated.answer,
            problem=generated.problem,
            system=self.system_prompt,
        )

    def _generate_at(
        self, level: str, seed: int, index: int, params: Mapping[str, Any], split: str = "test"
    ) -> Generated:
        """Item ``index`` of its batch: raw draw ``index``, or with ``unique`` the
        ``index``-th distinct problem of the raw draws (a duplicate draw is skipped); each
        raw draw a problem of ``split`` (:meth:`draw_in`)."""
        if not params.get("unique", False):
            return self.draw_in(level, seed, index, params, index, split)
        with self._batch_lock:
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
        that redraws only part of a problem for its split, :meth:`fits_draw`, never makes a
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
        gave_up = 0
        for attempt in range(_SPLIT_PATIENCE):
            number = _raw(raw, attempt, split)
            with _drawing_for(split, repeats) as state:
                try:
                    gen = self.draw(level, seed, number, params, index)
                except _OtherSplit:
                    continue  # the draw below would have been redone: it stopped early
                except InvalidArgument:
                    if state.refusals == _REFUSALS and state.spares == _SPARES:
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
                        gen = self.draw(level, seed, number, params, index)
                    except _OtherSplit:
                        continue
            if self.split_of(gen.problem) == split:
                return gen, state.consulted
        raise InvalidArgument(
            f"{self.id} {level}: no problem of the {split} split in {_SPLIT_PATIENCE} draws for "
            f"item {index}; this level has too few problems (of this answer class) under these "
            "knobs: see the distinct-problem table in docs/tasks/splits.md"
        )

    def draw(
        self, level: str, seed: int, raw: int, params: Mapping[str, Any], index: int
    ) -> Generated:
        """Raw draw ``raw`` of a (level, seed) batch, built as item ``index``: every item's
        randomness starts here. Override to key the randomness differently (FLenQA keeps one
        base problem across lengths)."""
        return self.generate(SeededChooser(derive_seed(self.id, level, seed, raw)), params, index)

    def _batch(self, level: str, seed: int, params: Mapping[str, Any], split: str) -> _Batch:
        """This process's record of one batch (call with the lock held); LRU-bounded."""
        key = (level, seed, canonical_json(dict(params)), split)
        batches: OrderedDict[tuple[str, int, str, str], _Batch]
        batches = self.__dict__.setdefault("_batches", OrderedDict())
        batch = batches.pop(key, None) or _Batch()
        batches[key] = batch  # most recently used last
        while len(batches) > _MAX_BATCHES:
            batches.popitem(last=False)
        return batch

    _batch_lock: ClassVar[threading.Lock] = threading.Lock()

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

    def is_repeat(
        self,
        level: str,
        seed: int,
        index: int,
        params: Mapping[str, Any] | None = None,
        split: str = "test",
    ) -> bool:
        """Whether item ``index`` repeats an earlier item's problem (an exhausted level)."""
        repeats = self._repeats(level, seed, index + 1, params, split)
        return bool(repeats and repeats[index])

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
            f"{self.id} {level}: {repeated} of {count} items repeat an earlier problem: the "
            f"{split} split has only {count - repeated} distinct problems under these knobs "
            "(docs/tasks/splits.md)"
        )

    def _repeats(
        self, level: str, seed: int, count: int, params: Mapping[str, Any] | None, split: str
    ) -> bytes | None:
        """The batch's repeat flags of items ``0..count-1`` (replayed as far as needed)."""
        resolved = self.resolve_params(level, params)
        check_split(split)
        if not resolved.get("unique", False):
            return None
        if count <= 0:
            return b""
        with self._batch_lock:
            batch = self._batch(level, seed, resolved, split)
            if count > len(batch.raw):
                batch.get(self, level, seed, count - 1, resolved, split)
            return bytes(batch.repeats[:count])

    # -- scoring and solving ---------------------------------------------------------------
    @abstractmethod
    def score(self, item: Item, response: str) -> Score:
        """Judge a response; never raises on arbitrary text."""

    @abstractmethod
    def solve(self, item: Item) -> str:
        """The answer found by an independent solver (used by the ``reference`` model)."""

    def reference_response(self, item: Item) -> str:
        """What an ideal model would write for this item."""
        return f"<<<{self.solve(item)}>>>"

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        """Step-by-step solution text ending with the answer; tasks override."""
        return f"The answer is <<<{answer}>>>"

    def steps(self, item: Item) -> str:
        """Step-by-step solution of an item, for fine-tuning (``export --with-steps``)."""
        return self.explain(item.problem, item.answer)

    # -- answering from the prompt text alone (the test server's fake models) ---------------
    prompt_marker: ClassVar[str | None] = None  # a phrase only this task's question carries

    def locate(self, prompt: str) -> int:
        """Where this task's last question starts in ``prompt``, or -1 if it is not this
        task's (few-shot prompts show other problems first: the last marker counts)."""
        return prompt.rfind(self.prompt_marker) if self.prompt_marker else -1

    def text_answer(self, prompt: str, *, max_size: int | None = None) -> str | None:
        """The reply of a model that solves this task from the prompt TEXT alone, with the
        family's independent solver (the test server's ``oracle``). With ``max_size``: a model
        right only up to that size and wrong beyond (``shallow:N``), for tasks with a size.
        ``None``: the prompt alone does not determine the answer."""
        return None

    # -- the family's own breakdown (report) ----------------------------------------------
    # Whether :meth:`breakdown` reads this task's rows (a run then keeps them in memory).
    breaks_down: ClassVar[bool] = False

    def breakdown(self, rows: Sequence[Mapping[str, Any]], *, suites: bool = False) -> Any:
        """The family's own table (and chart) over the results rows of its tasks, a
        :class:`~pytest_reasoning.tasks.breakdown.Breakdown` — FLenQA's accuracy by length,
        ZebraLogic's by size — or None. ``suites``: rows of several suites (tell them
        apart)."""
        return None

    # -- shortcut audit ------------------------------------------------------------------
    def shortcuts(self) -> Sequence[Shortcut]:
        """The family's declared heuristic rules (see ``pytest-reasoning audit``)."""
        return ()

    def choice_texts(self, item: Item) -> Mapping[str, str] | None:
        """For multiple-choice tasks: the text tied to each answer choice (e.g. each
        suspect's chapter), keyed by the answer that choice stands for, in the order the
        prompt lists the choices, so the audit can train a per-choice bag-of-words classifier;
        ``None`` for other tasks."""
        return None

    def choices(self, item: Item) -> Sequence[str] | None:
        """The answers a guesser picks among, in the order the prompt lists them (gold
        format): a label task's classes, a multiple-choice item's options; ``None`` for open
        answers (numbers, grids). Defaults to the keys of :meth:`choice_texts`, else to the
        problem's ``choices`` list when it holds the gold answer (the MuSR convention)."""
        texts = self.choice_texts(item)
        if texts is not None:
            return list(texts)
        listed = item.problem.get("choices")
        if isinstance(listed, list) and item.answer in listed:
            return [str(c) for c in listed]
        return None

    def chance(self, item: Item) -> float | None:
        """The probability that a uniform guess answers ``item`` right: one over the number
        of :meth:`choices` (or of the problem's ``choices`` list) by default; ``None`` for an
        open answer with no natural guess space (the audit then takes the best constant
        answer's accuracy as chance)."""
        options = self.choices(item) or item.problem.get("choices")
        return 1.0 / len(options) if isinstance(options, Sequence) and options else None


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
    """The raw number :meth:`Task.draw` gets for a split's draw and redraw ``attempt``."""
    number = raw + attempt * REDRAW_STRIDE
    return number if split == "test" else -1 - number


# The split a draw on this thread is for, and which problems it must not repeat (fits_draw).
Repeats = Callable[[bytes], bool]  # a problem's fingerprint -> whether it would repeat one
_DRAWING = threading.local()


_SPLITS: Memo[str] = Memo(20_000)  # (salt, task, key's items) -> its split

_REFUSALS = 16
_SPARES = 64  # repeats refused per draw among problems checked and not kept (fits_draw)


class _OtherSplit(Exception):
    """A draw abandoned part-way: its problem is in the other split (stop_if_other_split)."""


@dataclass
class _State:
    split: str
    repeats: Repeats | None
    refusals: int = _REFUSALS
    spares: int = _SPARES
    consulted: bool = False  # whether the generator avoided repeats itself (fits_draw)


@contextlib.contextmanager
def _drawing_for(split: str, repeats: Repeats | None = None) -> Iterator[_State]:
    outer = getattr(_DRAWING, "state", None)
    state = _DRAWING.state = _State(split, repeats)
    try:
        yield state
    finally:
        _DRAWING.state = outer


def check_split(split: str) -> None:
    if split not in SPLITS:
        raise InvalidArgument(
            f"split {quote(split)}: expected one of {', '.join(SPLITS)}"
            + did_you_mean(split, SPLITS)
        )


def _fingerprint(problem: Mapping[str, Any]) -> bytes:
    # repr, not JSON: twice as fast, and deterministic (insertion-ordered dicts, no hash()).
    return hashlib.blake2b(repr(problem).encode("utf-8"), digest_size=16).digest()


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
        self, task: Task, level: str, seed: int, index: int, params: Mapping[str, Any], split: str
    ) -> Generated:
        path = None
        if index >= len(self.raw):  # another process of the run may have drawn these
            path = shared_path((task.id, level, seed, canonical_json(dict(params)), split))
            if path is not None:
                drawn = records_after(path, len(self.raw))
                adopt(self, lambda k: task.stratum(params, k), drawn, _PATIENCE)
        if index < len(self.raw):
            return task.draw_in(
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
                gen, _ = task._draw_in(level, seed, j, params, k, split, self._before(k))
                fp = _fingerprint(task.identity(gen.problem))
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
