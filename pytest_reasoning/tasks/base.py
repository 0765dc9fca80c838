"""The task interface every family implements, and declarative knobs.

A task turns ``(level, params, seed, index)`` into an :class:`~pytest_reasoning.core.Item`
through a Chooser, renders it in a prompt style, scores a response, and answers it with a
solver written apart from its generator (the built-in ``reference`` model).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..core import Item, Score
from ..errors import InvalidArgument, UnknownLevel
from ..rng import Chooser, SeededChooser, derive_seed

__all__ = ["Generated", "Knob", "Task", "item_id"]


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
        expected = self.kind.__name__ if self.kind is not list else f"list of {self._item()}"
        ok = isinstance(value, self.kind) and not (self.kind is int and isinstance(value, bool))
        if self.kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise InvalidArgument(f"knob '{self.name}': expected {expected}, got {value!r}")
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
                + f", got {value!r}"
            )
        if self.minimum is not None and value < self.minimum:
            raise InvalidArgument(f"knob '{self.name}': must be >= {self.minimum:g}, got {value}")
        if self.maximum is not None and value > self.maximum:
            raise InvalidArgument(f"knob '{self.name}': must be <= {self.maximum:g}, got {value}")
        return value

    def _item(self) -> str:
        return self.item_kind.__name__ if self.item_kind else "values"


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
    knobs: ClassVar[Mapping[str, Knob]]
    description: ClassVar[str] = ""

    # -- levels and parameters -------------------------------------------------------------
    def check_level(self, level: str) -> None:
        if level not in self.levels:
            raise UnknownLevel(
                f"unknown level {level!r} for {self.id}; expected one of {', '.join(self.levels)}"
            )

    @abstractmethod
    def preset(self, level: str) -> dict[str, Any]:
        """The knob values a level stands for."""

    def resolve_params(self, level: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The level's preset overridden by ``params``, every knob checked."""
        self.check_level(level)
        merged = dict(self.preset(level))
        for name, value in (params or {}).items():
            if name not in self.knobs:
                raise InvalidArgument(
                    f"unknown knob {name!r} for {self.id}; expected one of "
                    + ", ".join(sorted(self.knobs))
                )
            merged[name] = self.knobs[name].check(value)
        self.check_combination(merged)
        return merged

    def check_combination(self, params: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Raise InvalidArgument for knob values that are fine alone but impossible together."""

    def check_style(self, style: str) -> None:
        if style not in self.styles:
            raise InvalidArgument(
                f"style {style!r} is not offered by {self.id}; expected one of "
                + ", ".join(self.styles)
            )

    # -- generation ------------------------------------------------------------------------
    @abstractmethod
    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        """Build one problem; all randomness comes from ``chooser``."""

    @abstractmethod
    def render(self, generated: Generated, style: str) -> str:
        """The full prompt for a style."""

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
        chooser = SeededChooser(derive_seed(self.id, level, seed, index))
        gen = self.generate(chooser, resolved, index)
        return Item(
            id=id or item_id(self.id, level, seed, index),
            task=self.id,
            level=level,
            seed=seed,
            index=index,
            params=resolved,
            style=style,
            prompt=self.render(gen, style),
            answer=gen.answer,
            problem=gen.problem,
        )

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

    def steps(self, item: Item) -> str:
        """Step-by-step solution text for fine-tuning; tasks override."""
        return f"The answer is <<<{item.answer}>>>"
