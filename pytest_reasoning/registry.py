"""Task id → Task. Built-in families plus any registered under the entry-point group
``pytest_reasoning.tasks`` (a third party's ``Task`` subclass)."""

from __future__ import annotations

from functools import cache

from .errors import UnknownTask
from .tasks.base import Task

__all__ = ["ENTRY_POINT_GROUP", "all_tasks", "get_task", "task_ids"]

ENTRY_POINT_GROUP = "pytest_reasoning.tasks"


@cache
def _tasks() -> dict[str, Task]:
    from importlib.metadata import entry_points

    from .tasks.dyval import TASKS as DYVAL
    from .tasks.flenqa import TASKS as FLENQA
    from .tasks.musr import TASKS as MUSR
    from .tasks.zebra import TASKS as ZEBRA

    found: dict[str, Task] = {}
    for cls in (*DYVAL, *FLENQA, *MUSR, *ZEBRA):
        found[cls.id] = cls()
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        obj = ep.load()
        task = obj() if isinstance(obj, type) else obj
        if isinstance(task, Task):
            found.setdefault(task.id, task)
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
            f"unknown task {task_id!r}; expected one of {', '.join(task_ids())}"
        ) from None
