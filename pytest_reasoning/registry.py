"""Task id → Task. Every family registers itself, built-in or third-party, through one line in
its package metadata: an entry point in the group ``pytest_reasoning.tasks`` naming a
:class:`~pytest_reasoning.tasks.base.Task` subclass, an instance, or a sequence of them::

    [project.entry-points."pytest_reasoning.tasks"]
    mytasks = "my_package.tasks:TASKS"

A task id registered twice, or an entry point that is not a task, is a one-line error naming
both sources: a silently shadowed task would make results mean something else.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib.metadata import EntryPoint
from typing import Any

from .core import Item
from .errors import ReasoningError, UnknownTask, did_you_mean, quote
from .tasks import hooks
from .tasks.base import Task

__all__ = [
    "ENTRY_POINT_GROUP",
    "all_tasks",
    "expected_tasks",
    "get_task",
    "load_tasks",
    "problem_key",
    "task_for_prompt",
    "task_ids",
]

ENTRY_POINT_GROUP = "pytest_reasoning.tasks"


def _as_tasks(name: str, value: str, obj: Any) -> list[Task]:
    items = obj if isinstance(obj, (list, tuple)) else [obj]
    out = []
    for one in items:
        task = one() if isinstance(one, type) and issubclass(one, Task) else one
        if not isinstance(task, Task):
            raise ReasoningError(
                f"entry point {name!r} ({value}) in group {ENTRY_POINT_GROUP}: expected a Task "
                f"subclass, a Task or a sequence of them, got {type(one).__name__} {one!r:.80}"
            )
        wrong = hooks.misdeclared(task)
        if wrong is not None:
            raise ReasoningError(f"entry point {name!r} ({value}): {wrong}")
        out.append(task)
    return out


@cache
def _tasks() -> dict[str, Task]:
    from importlib.metadata import entry_points

    return load_tasks(entry_points(group=ENTRY_POINT_GROUP))


def load_tasks(eps: Iterable[EntryPoint]) -> dict[str, Task]:
    """Tasks by id from entry points (in name order); one-line errors as described above."""
    found: dict[str, Task] = {}
    source: dict[str, str] = {}
    for ep in sorted(eps, key=lambda e: e.name):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken third-party package: name it, do not crash
            raise ReasoningError(
                f"entry point {ep.name!r} ({ep.value}) in group {ENTRY_POINT_GROUP} failed to "
                f"load: {type(exc).__name__}: {exc}"
            ) from None
        for task in _as_tasks(ep.name, ep.value, obj):
            where = f"entry point {ep.name!r} ({ep.value})"
            if task.id in found:
                raise ReasoningError(
                    f"task id {task.id!r} is registered twice: by {source[task.id]} and by "
                    f"{where}; rename one"
                )
            found[task.id] = task
            source[task.id] = where
    if not found:
        raise ReasoningError(
            f"no tasks registered in the entry point group {ENTRY_POINT_GROUP}: is "
            "pytest-reasoning installed (pip install -e .)?"
        )
    return found


def all_tasks() -> dict[str, Task]:
    return dict(_tasks())


def task_ids() -> list[str]:
    return sorted(_tasks())


def get_task(task_id: str) -> Task:
    try:
        return _tasks()[task_id]
    except KeyError:
        raise UnknownTask(
            f"unknown task {quote(task_id)}{did_you_mean(task_id, task_ids())}; expected one of "
            + expected_tasks()
        ) from None


_LISTED = 12  # a family with more tasks is summarised in one-line errors (a task pack)


def expected_tasks() -> str:
    """Every task id for an error line, a large family (a pack of datasets) as one entry:
    ``gym.<name> (88 tasks: pytest-reasoning tasks)``."""
    families: dict[str, list[str]] = {}
    for tid in task_ids():
        families.setdefault(tid.split(".", 1)[0], []).append(tid)
    parts: list[str] = []
    for family, ids in families.items():
        if len(ids) > _LISTED:
            parts.append(f"{family}.<name> ({len(ids)} tasks: pytest-reasoning tasks)")
        else:
            parts.extend(ids)
    return ", ".join(parts)


def problem_key(item: Item) -> str | None:
    """The item's problem up to renaming (``hooks.problem_key``), or None where its task is
    not installed or its problem (a user's dataset row) is not one the task can read: such a
    sample is its own cluster."""
    try:
        return hooks.problem_key(get_task(item.task), item.problem)
    except (ReasoningError, LookupError, TypeError, ValueError, AttributeError):
        return None


def task_for_prompt(prompt: str) -> Task | None:
    """The task whose question a prompt ends with: the one whose ``prompt_marker`` occurs
    last (few-shot prompts show other problems first), or None."""
    best: tuple[int, Task] | None = None
    for task in _tasks().values():
        at = hooks.locate(task, prompt)
        if at >= 0 and (best is None or at > best[0]):
            best = (at, task)
    return best[1] if best else None
