"""Hypothesis strategies for every task: the suites' own generators driven by Hypothesis draws.
Each task's strategy is built from its knobs (``strategy_for``); the built-in tasks' are named
(``arithmetic_problems``, ``zebra_problems``, …).

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
and at the first draw for strategies. Each answer ``llm.solve`` gets inside a Hypothesis test
is noted (:func:`note_answer`): the failure message of the shrunk example shows its prompt, the
model's reply and the gold answer, without ``-v``.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .tasks import hooks
from .tasks.base import check_level, check_style, resolve_params
from .tasks.sampler import sampler

try:
    from hypothesis import HealthCheck, currently_in_test_context, note, reject, settings
    from hypothesis import strategies as st
    from hypothesis.database import DirectoryBasedExampleDatabase
    from hypothesis.strategies import SearchStrategy
except ImportError as exc:  # an extra: its pytest plugin costs every pytest run
    raise ImportError(
        "pytest_reasoning.strategies needs Hypothesis: pip install 'pytest-reasoning[fuzzing]'"
    ) from exc

from .core import Item, Outcome
from .errors import InvalidArgument, UnknownLevel, UnknownTask, clip, printable
from .registry import get_task
from .tasks.base import Task

# The named strategies of the built-in tasks: ``<name>_problems`` for the task ``family.name``
# (zebra's grid keeps its family's name). Each is built from the task's own knobs on first use
# (:func:`strategy_for`), so a knob added to a task is a keyword of its strategy at once.
NAMED = {
    "arithmetic_problems": "dyval.arithmetic",
    "linear_equation_problems": "dyval.linear_equation",
    "boolean_logic_problems": "dyval.boolean_logic",
    "deductive_logic_problems": "dyval.deductive_logic",
    "abductive_logic_problems": "dyval.abductive_logic",
    "reachability_problems": "dyval.reachability",
    "max_sum_path_problems": "dyval.max_sum_path",
    "zebra_problems": "zebra.grid",
    "monorel_problems": "flenqa.monorel",
    "people_in_rooms_problems": "flenqa.people_in_rooms",
    "ruletaker_problems": "flenqa.ruletaker",
    "murder_mystery_problems": "musr.murder_mystery",
    "object_placement_problems": "musr.object_placement",
    "team_allocation_problems": "musr.team_allocation",
}


__all__ = [
    "DrawChooser",
    "describe_answer",
    "note_answer",
    "problems",
    "reasoning_settings",
    "strategy_for",
    *NAMED,
]

# Knobs that shape a batch of items, not one problem: a strategy draws single problems, so
# the named strategies leave them out (every other knob of the task is a keyword).
BATCH_KNOBS = frozenset({"unique"})
# Knobs a strategy turns off unless given (``balanced`` draws the answer class, ``min_paths``
# asks only pairs joined by that many paths: both by rejection): their value when off.
REJECTION_KNOBS: dict[str, Any] = {"balanced": False, "min_paths": 1}

_T = TypeVar("_T")

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


# Characters of a prompt or a reply a failure message shows: a shrunk problem's prompt is
# short, but a long-context task's is not, and a reply may be a megabyte.
NOTE_LIMIT = 4_000


def _block(text: str) -> str:
    """Untrusted text as an indented block: clipped, every line made printable (a reply's
    ANSI escape or bidi control is shown, not obeyed; its line breaks stay line breaks)."""
    lines = clip(text, NOTE_LIMIT).replace("\r\n", "\n").split("\n")
    return "\n".join(f"    {printable(line)}" for line in lines)


def describe_answer(item: Item, outcome: Outcome) -> str:
    """One answer as a failure message shows it: the verdict, the prompt, the model's reply,
    what was extracted from it and the gold answer."""
    verdict = "right" if outcome.correct else f"wrong ({outcome.failure_mode or 'wrong'})"
    # repr() escapes what is not printable; printable() again, as for every terminal line.
    extracted = "nothing" if outcome.extracted is None else repr(clip(outcome.extracted, 200))
    gold = repr(clip(outcome.gold, 200))
    return "\n".join(
        [
            f"reasoning: {printable(outcome.model)} answered {printable(item.id)}: {verdict}",
            "  prompt:",
            _block(item.prompt),
            "  reply:",
            _block(outcome.response or ""),
            printable(f"  extracted: {extracted}; gold: {gold}"),
        ]
    )


def note_answer(item: Item, outcome: Outcome) -> None:
    """Inside a Hypothesis test, note the answer: Hypothesis prints the notes of the final
    (shrunk) failing example in its failure message, whatever the verbosity."""
    if currently_in_test_context():
        note(describe_answer(item, outcome))


class DrawChooser:
    """A Chooser backed by Hypothesis draws; every method shrinks to its simplest answer."""

    def __init__(self, draw: st.DrawFn) -> None:
        self._draw = draw

    def randint(self, low: int, high: int) -> int:
        return self._draw(st.integers(low, high))

    def choice(self, options: Sequence[_T]) -> _T:
        return options[self._draw(st.integers(0, len(options) - 1))]

    def random(self) -> float:
        return self._draw(st.floats(0.0, 1.0, exclude_max=True))

    def sample(self, population: Sequence[_T], k: int) -> list[_T]:
        pool = list(population)
        return [pool.pop(self.randint(0, len(pool) - 1)) for _ in range(k)]

    def shuffle(self, items: list[_T]) -> None:
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
    check_style(found, style)
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
            check_level(found, level)
        except UnknownLevel as exc:
            raise InvalidArgument(f"level: {exc}") from None
        if not any(isinstance(v, SearchStrategy) for v in knobs.values()):
            resolve_params(found, level, knobs)  # impossible combinations fail now, once
    # Knobs that draw by rejection (redraw the whole problem until it qualifies) are off
    # unless asked for: under shrinking the simplest draws never qualify, so the smallest
    # example would be a thousand redraws (Hypothesis's large_base_example health check:
    # max-sum path D1's pairs that three paths join, issue 41, are never in a chain graph).
    for name, off in REJECTION_KNOBS.items():
        if name in found.knobs and name not in knobs:
            try:
                knobs[name] = found.knobs[name].check(off)
            except InvalidArgument:  # another task's knob of that name: its own meaning
                continue
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
    resolved = resolve_params(task, lvl, params)
    chooser = DrawChooser(draw)
    index = draw(st.integers(0, 5)) if resolved.get("balanced") else 0  # the answer class
    try:
        generated = task.generate(chooser, resolved, index)
        examples = []
        if style in task.example_styles:
            shot = hooks.example_params(task, resolved)
            examples = [task.generate(chooser, shot, j) for j in range(task.shots(resolved))]
    except InvalidArgument:
        # A generator's rejection loop ran dry on these draws (e.g. every coefficient shrunk
        # to 0: no unique solution). The knobs were valid, so this draw is just invalid.
        reject()
    digest = hashlib.sha256(repr(generated.problem).encode("utf-8")).hexdigest()[:10]
    return sampler(task).build_item(
        generated,
        examples,
        level=lvl,
        seed=0,
        index=index,
        params=resolved,
        style=style,
        id=f"{task.id}[{lvl}-fuzz-{digest}]",
    )


def strategy_for(task: str) -> Callable[..., SearchStrategy[Item]]:
    """The strategy function of any registered task (a third party's too): keyword-only
    ``level``, ``style`` and one keyword per knob (a value or a strategy; None: the level's
    preset), as its signature shows."""
    try:
        found = get_task(task)
    except UnknownTask as exc:
        raise InvalidArgument(f"task: {exc}") from None
    names = [k for k in found.knobs if k not in BATCH_KNOBS]

    def strategy(
        *, level: str | SearchStrategy[str] | None = None, style: str = "direct", **knobs: Any
    ) -> SearchStrategy[Item]:
        unknown = sorted(set(knobs) - set(names))
        if unknown:
            raise InvalidArgument(
                f"unknown knob {unknown[0]!r} for {task}; expected one of " + ", ".join(names)
            )
        given = {k: v for k, v in knobs.items() if v is not None}
        return problems(task, level=level, style=style, **given)

    keyword = inspect.Parameter.KEYWORD_ONLY
    strategy.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("level", keyword, default=None),
            inspect.Parameter("style", keyword, default="direct"),
            *(inspect.Parameter(k, keyword, default=None) for k in names),
        ],
        return_annotation="SearchStrategy[Item]",
    )
    name = next((n for n, t in NAMED.items() if t == task), f"{task.rpartition('.')[2]}_problems")
    strategy.__name__ = strategy.__qualname__ = name
    strategy.__doc__ = f"``{task}`` items: {found.description} Knobs: {', '.join(names) or 'none'}."
    return strategy


def __getattr__(name: str) -> Callable[..., SearchStrategy[Item]]:
    task = NAMED.get(name)
    if task is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    built = globals()[name] = strategy_for(task)  # built once: the registry loads lazily
    return built


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(NAMED))
