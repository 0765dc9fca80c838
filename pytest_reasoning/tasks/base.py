"""The task interface every family implements, and declarative knobs.

A task turns ``(level, params, seed, index)`` into an :class:`~pytest_reasoning.core.Item`
through a Chooser, renders it in a prompt style, scores a response, and answers it with a
solver written apart from its generator (the built-in ``reference`` model).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from abc import ABC, abstractmethod
from array import array
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..core import Item, Score, canonical_json
from ..errors import InvalidArgument, UnknownLevel, did_you_mean
from ..rng import Chooser, SeededChooser, derive_seed

__all__ = ["Generated", "Knob", "Shortcut", "Task", "item_id"]


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
            raise InvalidArgument(f"knob '{self.name}': expected a finite number, got {value!r}")
        if not ok:
            raise InvalidArgument(f"knob '{self.name}': expected {expected}, got {value!r}")
        if self.kind is dict:
            return self._check_mapping(value)
        if self.kind is list:
            if not value:
                raise InvalidArgument(f"knob '{self.name}': expected a non-empty list")
            for v in value:
                if self.choices is not None and v not in self.choices:
                    raise InvalidArgument(
                        f"knob '{self.name}': unknown value {v!r}; expected any of "
                        + ", ".join(map(str, self.choices))
                    )
            return list(value)
        if self.choices is not None and value not in self.choices:
            raise InvalidArgument(
                f"knob '{self.name}': expected one of "
                + ", ".join(map(str, self.choices))
                + f", got {value!r}{did_you_mean(value, self.choices)}"
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
                    f"knob '{self.name}': unknown key {k!r}; expected any of "
                    + ", ".join(map(str, self.choices))
                )
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise InvalidArgument(
                    f"knob '{self.name}.{k}': expected a finite number, got {v!r}"
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


def item_id(task: str, level: str, seed: int, index: int) -> str:
    return f"{task}[{level}-s{seed}-{index:03d}]"


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

    # -- levels and parameters -------------------------------------------------------------
    def check_level(self, level: str) -> None:
        if level not in self.levels:
            raise UnknownLevel(
                f"unknown level {level!r} for {self.id}{did_you_mean(level, self.levels)}; "
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
                f"unknown knob {name!r} for {self.id}{did_you_mean(name, self.knobs)}; "
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
                f"style {style!r} is not offered by {self.id}"
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
    ) -> Item:
        """The item addressed by ``(task, level, seed, index)`` under ``params``.

        The seed ignores ``params`` on purpose: the same address under another rendering knob
        (order, style) is the same underlying problem, which makes paired comparisons possible.
        """
        resolved = self.resolve_params(level, params)
        self.check_style(style)
        style = self.style_aliases.get(style, style)
        gen = self._generate_at(level, seed, index, resolved)
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
            id=id or item_id(self.id, level, seed, index),
        )

    def worked_examples(
        self, level: str, seed: int, index: int, params: Mapping[str, Any], item: Generated
    ) -> list[Generated]:
        """The worked examples shown with item ``index`` (styles in ``example_styles``).

        Drawn from streams of their own, never the item's problem nor one identical to it
        (:meth:`identity`), nor each other. Example ``j`` is drawn as index ``j`` (a balanced
        task's answer class ``j``); when that class has no problem left to show (D1 abduction
        has one True problem), the next classes are tried, and an example that cannot be made
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
                    draw = self.generate(chooser, shot_params, k)
                    if _fingerprint(self.identity(draw.problem)) not in seen:
                        example = draw
                        break
                if example is not None:
                    break
            if example is not None:
                seen.add(_fingerprint(self.identity(example.problem)))
                out.append(example)
        return out

    def identity(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """What makes two problems the same for the worked-example rule (the whole problem
        unless a task says otherwise; DyVal leaves out its distractors)."""
        return problem

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
        self, level: str, seed: int, index: int, params: Mapping[str, Any]
    ) -> Generated:
        """Item ``index`` of its batch: raw draw ``index``, or with ``unique`` the
        ``index``-th distinct problem of the raw draws (a duplicate draw is skipped)."""
        if not params.get("unique", False):
            return self.draw(level, seed, index, params, index)
        with self._batch_lock:
            return self._batch(level, seed, params).get(self, level, seed, index, params)

    def draw(
        self, level: str, seed: int, raw: int, params: Mapping[str, Any], index: int
    ) -> Generated:
        """Raw draw ``raw`` of a (level, seed) batch, built as item ``index``: every item's
        randomness starts here. Override to key the randomness differently (FLenQA keeps one
        base problem across lengths)."""
        return self.generate(SeededChooser(derive_seed(self.id, level, seed, raw)), params, index)

    def _batch(self, level: str, seed: int, params: Mapping[str, Any]) -> _Batch:
        """This process's record of one batch (call with the lock held); LRU-bounded."""
        key = (level, seed, canonical_json(dict(params)))
        batches: OrderedDict[tuple[str, int, str], _Batch]
        batches = self.__dict__.setdefault("_batches", OrderedDict())
        batch = batches.pop(key, None) or _Batch()
        batches[key] = batch  # most recently used last
        while len(batches) > _MAX_BATCHES:
            batches.popitem(last=False)
        return batch

    _batch_lock: ClassVar[threading.Lock] = threading.Lock()

    def repeated(
        self, level: str, seed: int, count: int, params: Mapping[str, Any] | None = None
    ) -> int | None:
        """How many of items ``0..count-1`` repeat an earlier item's problem: 0 unless the
        level has fewer distinct problems than that; ``None`` when ``unique`` is off."""
        repeats = self._repeats(level, seed, count, params)
        return None if repeats is None else sum(repeats)

    def is_repeat(
        self, level: str, seed: int, index: int, params: Mapping[str, Any] | None = None
    ) -> bool:
        """Whether item ``index`` repeats an earlier item's problem (an exhausted level)."""
        repeats = self._repeats(level, seed, index + 1, params)
        return bool(repeats and repeats[index])

    def _repeats(
        self, level: str, seed: int, count: int, params: Mapping[str, Any] | None
    ) -> bytes | None:
        """The batch's repeat flags of items ``0..count-1`` (replayed as far as needed)."""
        resolved = self.resolve_params(level, params)
        if not resolved.get("unique", False):
            return None
        with self._batch_lock:
            batch = self._batch(level, seed, resolved)
            if count > len(batch.raw):
                batch.get(self, level, seed, count - 1, resolved)
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
        self.seen: set[bytes] = set()
        self.next_raw = 0
        self.repeats = bytearray()  # 1 where item k repeats an earlier problem
        self.patience: dict[int, int] = {}  # per stratum: balanced labels exhaust apart

    def get(
        self, task: Task, level: str, seed: int, index: int, params: Mapping[str, Any]
    ) -> Generated:
        if index < len(self.raw):
            return task.draw(level, seed, self.raw[index], params, index)
        while True:
            k = len(self.raw)
            stratum = task.stratum(params, k)
            patience = self.patience.get(stratum, _PATIENCE)
            repeat = 0
            for attempt in range(patience):
                j = self.next_raw
                self.next_raw += 1
                gen = task.draw(level, seed, j, params, k)
                fp = _fingerprint(gen.problem)
                if fp not in self.seen:
                    self.seen.add(fp)
                    self.patience[stratum] = min(_PATIENCE, patience * 2)
                    break
                if attempt == patience - 1:  # nearly exhausted: accept this duplicate
                    repeat = 1
                    self.patience[stratum] = max(5, patience // 2)
            self.raw.append(j)
            self.repeats.append(repeat)
            if k == index:
                return gen
