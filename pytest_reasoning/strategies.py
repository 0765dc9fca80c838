"""Hypothesis strategies for every task: the suites' own generators driven by Hypothesis draws.

Every random choice a generator makes goes through a :class:`DrawChooser`, so Hypothesis can
shrink a failing problem: towards shallower trees and fewer nodes (the knob strategies shrink
to their lower bounds), the first operation, the smallest values, the identity order. Each
strategy yields the same :class:`~pytest_reasoning.core.Item` a suite would, gold included::

    from hypothesis import given, strategies as st
    from pytest_reasoning.strategies import arithmetic_problems, reasoning_settings

    @reasoning_settings
    @given(arithmetic_problems(depth=st.integers(2, 5), width=2))
    def test_model_adds(llm, problem):
        assert llm.solve(problem).correct

Knob arguments take a value or a strategy; a bad value raises
:class:`~pytest_reasoning.errors.InvalidArgument` naming the knob, at construction for values
and at the first draw for strategies.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any, TypeAlias, TypeVar

from hypothesis import HealthCheck, reject, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.strategies import SearchStrategy

from .core import Item
from .errors import InvalidArgument, UnknownLevel, UnknownTask
from .registry import get_task
from .tasks.base import Task

__all__ = [
    "DrawChooser",
    "abductive_logic_problems",
    "arithmetic_problems",
    "boolean_logic_problems",
    "deductive_logic_problems",
    "linear_equation_problems",
    "max_sum_path_problems",
    "monorel_problems",
    "murder_mystery_problems",
    "object_placement_problems",
    "people_in_rooms_problems",
    "problems",
    "reachability_problems",
    "reasoning_settings",
    "ruletaker_problems",
    "team_allocation_problems",
    "zebra_problems",
]

# Knobs that shape a batch of items, not one problem: a strategy draws single problems, so
# the named strategies leave them out (every other knob of the task is a keyword).
BATCH_KNOBS = frozenset({"unique"})

T = TypeVar("T")
Knob: TypeAlias = T | SearchStrategy[T] | None  # a value, a strategy, or the level's preset

# Few examples (each costs a model call), no deadline (a call takes seconds), failures kept in
# .hypothesis/ so they replay first next run. "reasoning-ci" derandomizes for reproducible CI.
settings.register_profile(
    "reasoning",
    max_examples=20,
    deadline=None,
    database=DirectoryBasedExampleDatabase(os.path.join(".hypothesis", "examples")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "reasoning-ci", parent=settings.get_profile("reasoning"), derandomize=True, database=None
)
reasoning_settings = settings(
    settings.get_profile("reasoning-ci" if os.environ.get("CI") else "reasoning")
)


class DrawChooser:
    """A Chooser backed by Hypothesis draws; every method shrinks to its simplest answer."""

    def __init__(self, draw: st.DrawFn) -> None:
        self._draw = draw

    def randint(self, low: int, high: int) -> int:
        return self._draw(st.integers(low, high))

    def choice(self, options: Sequence[T]) -> T:
        return options[self._draw(st.integers(0, len(options) - 1))]

    def random(self) -> float:
        return self._draw(st.floats(0.0, 1.0, exclude_max=True))

    def sample(self, population: Sequence[T], k: int) -> list[T]:
        pool = list(population)
        return [pool.pop(self.randint(0, len(pool) - 1)) for _ in range(k)]

    def shuffle(self, items: list[T]) -> None:
        # Fisher–Yates drawing the distance of the swap, so the shrunk order is the identity.
        for i in range(len(items) - 1, 0, -1):
            j = i - self.randint(0, i)
            items[i], items[j] = items[j], items[i]


def problems(
    task: str,
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    **knobs: Any,
) -> SearchStrategy[Item]:
    """Items of any registered task; ``knobs`` override the level's preset."""
    try:
        found = get_task(task)
    except UnknownTask as exc:
        raise InvalidArgument(f"task: {exc}") from None
    found.check_style(style)
    for name, value in knobs.items():
        if name not in found.knobs:
            raise InvalidArgument(
                f"unknown knob {name!r} for {task}; expected one of "
                + ", ".join(sorted(found.knobs))
            )
        if not isinstance(value, SearchStrategy):
            found.knobs[name].check(value)
    if level is None:
        level = found.levels[0]
    if isinstance(level, str):
        try:
            found.check_level(level)
        except UnknownLevel as exc:
            raise InvalidArgument(f"level: {exc}") from None
        if not any(isinstance(v, SearchStrategy) for v in knobs.values()):
            found.resolve_params(level, knobs)  # impossible combinations fail now, once
    if "balanced" in found.knobs:
        # Balancing is rejection sampling: wasteful under shrinking. Ask for it explicitly.
        knobs.setdefault("balanced", False)
    return _items(found, level, style, knobs)


@st.composite
def _items(
    draw: st.DrawFn,
    task: Task,
    level: str | SearchStrategy[str],
    style: str,
    knobs: dict[str, Any],
) -> Item:
    lvl = draw(level) if isinstance(level, SearchStrategy) else level
    params = {
        name: draw(value) if isinstance(value, SearchStrategy) else value
        for name, value in sorted(knobs.items())
    }
    resolved = task.resolve_params(lvl, params)
    chooser = DrawChooser(draw)
    index = draw(st.integers(0, 5)) if resolved.get("balanced") else 0  # the answer class
    try:
        generated = task.generate(chooser, resolved, index)
        examples = []
        if style in task.example_styles:
            shot = task.example_params(resolved)
            examples = [task.generate(chooser, shot, j) for j in range(task.shots(resolved))]
    except InvalidArgument:
        # A generator's rejection loop ran dry on these draws (e.g. every coefficient shrunk
        # to 0: no unique solution). The knobs were valid, so this draw is just invalid.
        reject()
    digest = hashlib.sha256(repr(generated.problem).encode("utf-8")).hexdigest()[:10]
    return task.build_item(
        generated,
        examples,
        level=lvl,
        seed=0,
        index=index,
        params=resolved,
        style=style,
        id=f"{task.id}[{lvl}-fuzz-{digest}]",
    )


def _given(**kwargs: Any) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if v is not None}


def arithmetic_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    depth: Knob[int] = None,
    width: Knob[int] = None,
    extra_links: Knob[int] = None,
    distractors: Knob[int] = None,
    order: Knob[str] = None,
    ops: Knob[list[str]] = None,
    min_value: Knob[int] = None,
    max_value: Knob[int] = None,
    max_abs: Knob[float] = None,
    shots: Knob[int] = None,
) -> SearchStrategy[Item]:
    """``dyval.arithmetic`` items: the value of a T-DAG's root."""
    return problems("dyval.arithmetic", **_given(**locals()))


def linear_equation_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    depth: Knob[int] = None,
    width: Knob[int] = None,
    extra_links: Knob[int] = None,
    distractors: Knob[int] = None,
    order: Knob[str] = None,
    ops: Knob[list[str]] = None,
    min_value: Knob[int] = None,
    max_value: Knob[int] = None,
    max_abs: Knob[float] = None,
    replaced: Knob[int] = None,
    min_coefficient: Knob[int] = None,
    max_coefficient: Knob[int] = None,
    shots: Knob[int] = None,
) -> SearchStrategy[Item]:
    """``dyval.linear_equation`` items: a 2×2 system with T-DAG coefficients."""
    return problems("dyval.linear_equation", **_given(**locals()))


def boolean_logic_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    depth: Knob[int] = None,
    width: Knob[int] = None,
    extra_links: Knob[int] = None,
    distractors: Knob[int] = None,
    order: Knob[str] = None,
    ops: Knob[list[str]] = None,
    balanced: Knob[bool] = None,
    shots: Knob[int] = None,
) -> SearchStrategy[Item]:
    """``dyval.boolean_logic`` items: the truth value of an AND/OR/NOT T-DAG's root."""
    return problems("dyval.boolean_logic", **_given(**locals()))


def deductive_logic_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    depth: Knob[int] = None,
    width: Knob[int] = None,
    extra_links: Knob[int] = None,
    distractors: Knob[int] = None,
    order: Knob[str] = None,
    ops: Knob[list[str]] = None,
    balanced: Knob[bool] = None,
    shots: Knob[int] = None,
) -> SearchStrategy[Item]:
    """``dyval.deductive_logic`` items: deduce the root of an implication tree."""
    return problems("dyval.deductive_logic", **_given(**locals()))


def abductive_logic_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    depth: Knob[int] = None,
    width: Knob[int] = None,
    extra_links: Knob[int] = None,
    distractors: Knob[int] = None,
    order: Knob[str] = None,
    ops: Knob[list[str]] = None,
    balanced: Knob[bool] = None,
    shots: Knob[int] = None,
) -> SearchStrategy[Item]:
    """``dyval.abductive_logic`` items: abduce a leaf from the given root."""
    return problems("dyval.abductive_logic", **_given(**locals()))


def reachability_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    nodes: Knob[int] = None,
    min_links: Knob[int] = None,
    max_links: Knob[int] = None,
    distractors: Knob[int] = None,
    order: Knob[str] = None,
    balanced: Knob[bool] = None,
    shots: Knob[int] = None,
) -> SearchStrategy[Item]:
    """``dyval.reachability`` items: can one node of a random DAG reach another?"""
    return problems("dyval.reachability", **_given(**locals()))


def max_sum_path_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    nodes: Knob[int] = None,
    min_links: Knob[int] = None,
    max_links: Knob[int] = None,
    distractors: Knob[int] = None,
    order: Knob[str] = None,
    min_value: Knob[int] = None,
    max_value: Knob[int] = None,
    shots: Knob[int] = None,
) -> SearchStrategy[Item]:
    """``dyval.max_sum_path`` items: the largest path sum between two nodes."""
    return problems("dyval.max_sum_path", **_given(**locals()))


def zebra_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    houses: Knob[int] = None,
    features: Knob[int] = None,
    clue_weights: Knob[dict[str, float]] = None,
    min_clues: Knob[int] = None,
    max_clues: Knob[int] = None,
) -> SearchStrategy[Item]:
    """``zebra.grid`` items: logic grid puzzles with one solution (``level`` is ``NxM``, e.g.
    ``st.sampled_from(["3x3", "4x4"])``). Shrinks towards the first feature kinds and names
    and the first removal order."""
    return problems("zebra.grid", **_given(**locals()))


def monorel_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    target_tokens: Knob[int] = None,
    padding: Knob[str] = None,
    position: Knob[str] = None,
    padding_corpus: Knob[str] = None,
) -> SearchStrategy[Item]:
    """``flenqa.monorel`` items: is a third comparison on one scale implied, at a length?"""
    return problems("flenqa.monorel", **_given(**locals()))


def people_in_rooms_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    target_tokens: Knob[int] = None,
    padding: Knob[str] = None,
    position: Knob[str] = None,
    padding_corpus: Knob[str] = None,
) -> SearchStrategy[Item]:
    """``flenqa.people_in_rooms`` items: is a person in a room with a property, at a length?"""
    return problems("flenqa.people_in_rooms", **_given(**locals()))


def ruletaker_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    target_tokens: Knob[int] = None,
    padding: Knob[str] = None,
    position: Knob[str] = None,
    padding_corpus: Knob[str] = None,
) -> SearchStrategy[Item]:
    """``flenqa.ruletaker`` items: does a two-condition rule apply, at a length?"""
    return problems("flenqa.ruletaker", **_given(**locals()))


def murder_mystery_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    depth: Knob[int] = None,
) -> SearchStrategy[Item]:
    """``musr.murder_mystery`` items: two suspects, one with means, motive and opportunity."""
    return problems("musr.murder_mystery", **_given(**locals()))


def object_placement_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    depth: Knob[int] = None,
    people: Knob[int] = None,
    items: Knob[int] = None,
    moves: Knob[int] = None,
    see_prob: Knob[float] = None,
) -> SearchStrategy[Item]:
    """``musr.object_placement`` items: where a person believes an item is."""
    return problems("musr.object_placement", **_given(**locals()))


def team_allocation_problems(
    *,
    level: str | SearchStrategy[str] | None = None,
    style: str = "direct",
    depth: Knob[int] = None,
    margin: Knob[int] = None,
) -> SearchStrategy[Item]:
    """``musr.team_allocation`` items: two jobs for three people, one best allocation."""
    return problems("musr.team_allocation", **_given(**locals()))
