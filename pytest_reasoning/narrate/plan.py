"""What a narrator writes from: a story's plan of chapters, each with the facts it must state
and what it must leave out, and the planners that make plans from a task's items.

The plan is task-neutral on purpose. MuSR's planners (``narrate.musr``) make one chapter per
answer choice, move or person from the structured problem; FLenQA's key-paragraph expansion
fits the same shape (two chapters, each one key sentence to state and no new facts) and would
add a planner here, not a new pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from ..core import Item
from ..errors import ReasoningError

__all__ = [
    "Chapter",
    "Plan",
    "Planner",
    "assemble",
    "narrated_item",
    "planner_for",
    "planners",
    "register_planner",
]


@dataclass(frozen=True)
class Chapter:
    """One chapter to write (and the validators' view of it)."""

    name: str  # its key in the problem's ``chapters`` spans (a suspect, "move 2", a person)
    brief: str  # what happens in it, one sentence for the prompt
    facts: tuple[str, ...]  # scenario facts it must state (fact recall checks each)
    banned: tuple[str, ...]  # words and phrases it may not use (they would leak a conclusion)
    conclusions: tuple[str, ...]  # gold facts the reader must infer: never stated
    outside: tuple[str, ...]  # the problem's items and places this chapter must not mention
    words: int  # about how long it should be
    fixed: str = ""  # kept as the template wrote it, not narrated (placement's opening)


@dataclass(frozen=True)
class Plan:
    """A story as chapters between fixed paragraphs (kept as the template wrote them)."""

    genre: str  # "a murder mystery"
    before: tuple[str, ...]  # paragraphs before the first chapter (the setting, the case)
    chapters: tuple[Chapter, ...]
    after: tuple[str, ...]  # paragraphs after the last chapter
    # Every name, item, place and time the problem holds (fact recall's entity check), and
    # its whole vocabulary, lower case (a capitalised word outside it is a stranger).
    entities: tuple[str, ...]
    vocabulary: frozenset[str]
    people: tuple[str, ...]  # names a chapter may use (told to the narrator)


class Planner(Protocol):
    """Turns a task's item into a plan (``narrated_item`` puts the told story back)."""

    def plan(self, item: Item) -> Plan: ...


def assemble(plan: Plan, texts: Sequence[str]) -> tuple[str, dict[str, list[int]]]:
    """The story (paragraphs joined by blank lines) and each chapter's character span, the
    template narrator's ``chapters`` layout."""
    parts = list(plan.before)
    spans: dict[str, list[int]] = {}
    text = "\n\n".join(parts)
    for chapter, body in zip(plan.chapters, texts, strict=False):
        start = len(text) + (2 if text else 0)
        text = f"{text}\n\n{body}" if text else body
        spans[chapter.name] = [start, len(text)]
    if len(texts) == len(plan.chapters):
        for paragraph in plan.after:
            text = f"{text}\n\n{paragraph}" if text else paragraph
    return text, spans


def narrated_item(item: Item, story: str, spans: dict[str, list[int]]) -> Item:
    """The item with its story told anew: the same id, facts, question, choices and gold
    answer; the prompt is the template's with the story replaced."""
    old = str(item.problem["story"])
    if item.prompt.count(old) != 1:
        raise ReasoningError(f"{item.id}: the prompt does not hold its story exactly once")
    problem = {**item.problem, "story": story, "chapters": spans}
    return replace(item, prompt=item.prompt.replace(old, story), problem=problem)


_PLANNERS: dict[str, Planner] = {}


def register_planner(task_id: str, planner: Planner) -> None:
    """Make ``task_id``'s items narratable (the package registers MuSR's planners; another
    family registers its own the same way)."""
    _PLANNERS[task_id] = planner


def planners() -> dict[str, Planner]:
    """Task id → planner, as registered."""
    return dict(_PLANNERS)


def planner_for(task_id: str) -> Planner:
    found = planners().get(task_id)
    if found is None:
        raise ReasoningError(
            f"narrate: no narrator plan for {task_id}; narratable tasks: "
            + ", ".join(sorted(planners()))
        )
    return found
