"""The author's contract: :class:`Task` (what a family implements), declarative knobs, and
the checks of a level, a style and a suite's knob values against a task.

A task turns ``(params, index)`` and a Chooser into a problem, renders it in a prompt style,
scores a response, and answers it with a solver written apart from its generator (the
built-in ``reference`` model). Drawing items (addresses, splits, ``unique`` batches, worked
examples) is the :mod:`~pytest_reasoning.tasks.sampler`'s; the optional hooks a task may
define beyond this class are declared in :mod:`~pytest_reasoning.tasks.hooks`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..core import Item, Score
from ..errors import InvalidArgument, UnknownLevel, did_you_mean, quote
from ..rng import Chooser

__all__ = [
    "Generated",
    "Knob",
    "Shortcut",
    "Task",
    "check_knob",
    "check_level",
    "check_style",
    "item_id",
    "resolve_params",
]


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
    """A task family's member: what an author writes (docs/extending.md).

    Required: ``id``, ``levels``, ``knobs``, :meth:`preset`, :meth:`generate`,
    :meth:`render`, :meth:`score` and :meth:`solve`. The other members have defaults; the
    rarer optional hooks (an answer's export form, the test server's oracle, the shortcut
    audit, a family's breakdown, ...) are declared in ``tasks.hooks.TaskHooks`` and defined
    on a task by name when it needs them.
    """

    id: ClassVar[str]
    levels: ClassVar[tuple[str, ...]]
    knobs: ClassVar[Mapping[str, Knob]]
    description: ClassVar[str] = ""
    styles: ClassVar[tuple[str, ...]] = ("direct", "cot")
    example_styles: ClassVar[tuple[str, ...]] = ("fewshot",)  # styles that show worked examples
    # A system message sent before every prompt of this task (None: the user message only).
    # Part of each request, so of the cache key; see docs/extending.md.
    system_prompt: ClassVar[str | None] = None
    partial_credit: ClassVar[bool] = False  # Score.value in (0, 1) possible: ``metric: cell``

    # -- levels and parameters -------------------------------------------------------------
    @abstractmethod
    def preset(self, level: str) -> dict[str, Any]:
        """The knob values a level stands for."""

    def adapt(self, params: dict[str, Any], given: set[str]) -> None:  # noqa: B027 - optional hook
        """Fit the preset's knobs (those not in ``given``) to the ones a user set, in place:
        ``nodes: 5`` at D4 lowers the preset's ``max_links`` rather than failing. Knobs the
        user set are never changed; an impossible combination of those still fails."""

    def check_combination(self, params: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Raise InvalidArgument for knob values that are fine alone but impossible together."""

    # -- generation ------------------------------------------------------------------------
    @abstractmethod
    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        """Build one problem; all randomness comes from ``chooser``. A generator that redraws
        part of a problem to stay in the split being drawn asks the draw it is part of:
        ``draw_of(chooser).fits(problem)`` (:mod:`~pytest_reasoning.tasks.draw`)."""

    @abstractmethod
    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        """The full prompt for a style; ``examples`` are the worked examples of ``fewshot``."""

    def shots(self, params: Mapping[str, Any]) -> int:
        """How many worked examples the ``example_styles`` show (0 if the task has none)."""
        return 0

    def stratum(self, params: Mapping[str, Any], index: int) -> int:
        """Which answer class item ``index`` is drawn for (balanced tasks), else 0."""
        return 0

    def identity(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """What makes two problems the same: for the worked-example rule, de-duplication
        (``unique``), the train/test split and the clustering of samples in a gate. The
        whole problem unless a task says otherwise; the built-in families give a canonical
        form, the problem up to renaming (DyVal's nodes, ZebraLogic's values and features,
        FLenQA's and MuSR's people), without what does not change it (distractors,
        padding): docs/tasks/splits.md."""
        return problem

    # -- scoring and solving ---------------------------------------------------------------
    @abstractmethod
    def score(self, item: Item, response: str) -> Score:
        """Judge a response; never raises on arbitrary text."""

    @abstractmethod
    def solve(self, item: Item) -> str:
        """The answer found by an independent solver (used by the ``reference`` model)."""

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        """Step-by-step solution text ending with the answer (``export --with-steps``,
        worked examples); tasks override."""
        return f"The answer is <<<{answer}>>>"


# -- checks of a suite's choices against a task (functions: not part of the author's class) --


def check_level(task: Task, level: str) -> None:
    """UnknownLevel unless ``level`` is one of the task's: its ``levels``, or where it
    defines the ``check_level`` hook (levels beyond those listed: FLenQA's lengths,
    ZebraLogic's sizes) whatever that accepts."""
    hook: Callable[[str], None] | None = getattr(task, "check_level", None)
    if hook is not None:
        hook(level)
    elif level not in task.levels:
        raise UnknownLevel(
            f"unknown level {quote(level)} for {task.id}{did_you_mean(level, task.levels)}; "
            f"expected one of {', '.join(task.levels)}"
        )


def resolve_params(
    task: Task, level: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The level's preset overridden by ``params``, every knob checked."""
    check_level(task, level)
    merged = dict(task.preset(level))
    for name, value in (params or {}).items():
        merged[name] = check_knob(task, name, value)
    task.adapt(merged, set(params or ()))
    task.check_combination(merged)
    return merged


def check_knob(task: Task, name: str, value: Any) -> Any:
    """One knob's value, normalised; InvalidArgument for an unknown knob or a bad value
    (suites check every knob this way, so all their mistakes are reported at once)."""
    if name not in task.knobs:
        raise InvalidArgument(
            f"unknown knob {quote(name)} for {task.id}{did_you_mean(name, task.knobs)}; "
            "expected one of " + ", ".join(sorted(task.knobs))
        )
    return task.knobs[name].check(value)


def check_style(task: Task, style: str) -> None:
    aliases: Mapping[str, str] = getattr(task, "style_aliases", {})
    if style not in task.styles and style not in aliases:
        raise InvalidArgument(
            f"style {quote(style)} is not offered by {task.id}"
            f"{did_you_mean(style, [*task.styles, *aliases])}; expected one of "
            + ", ".join(task.styles)
        )
