"""The registry: every family registers through the entry-point group (built-in ones too),
a clash or a non-task is one line naming its source, and the test server's oracle asks the
registry which task a prompt belongs to."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from pytest_reasoning.errors import ReasoningError
from pytest_reasoning.registry import (
    ENTRY_POINT_GROUP,
    all_tasks,
    get_task,
    load_tasks,
    task_for_prompt,
)


def ep(name: str, value: str) -> EntryPoint:
    return EntryPoint(name, value, ENTRY_POINT_GROUP)


def test_builtin_families_register_through_entry_points() -> None:
    families = ["zebra", "dyval", "musr", "flenqa", "gym"]  # gym: empty without reasoning-gym
    tasks = load_tasks([ep(f, f"pytest_reasoning.tasks.{f}:TASKS") for f in families])
    assert list(tasks) == list(all_tasks())  # the installed metadata says the same, in order
    assert len([t for t in tasks if not t.startswith("gym.")]) == 14


def test_a_task_id_registered_twice_is_one_line_naming_both() -> None:
    with pytest.raises(ReasoningError) as info:
        load_tasks(
            [
                ep("a", "pytest_reasoning.tasks.zebra:TASKS"),
                ep("b", "pytest_reasoning.tasks.zebra:ZebraGridTask"),
            ]
        )
    message = str(info.value)
    assert "\n" not in message
    assert "'zebra.grid' is registered twice" in message
    assert "'a' (pytest_reasoning.tasks.zebra:TASKS)" in message
    assert "'b' (pytest_reasoning.tasks.zebra:ZebraGridTask)" in message


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("pytest_reasoning.errors:ReasoningError", "expected a Task subclass"),
        ("pytest_reasoning.core:level_key", "expected a Task subclass"),
        ("no_such_module_here:TASKS", "failed to load: ModuleNotFoundError"),
    ],
)
def test_an_entry_point_that_is_not_a_task_is_one_line(value: str, expected: str) -> None:
    with pytest.raises(ReasoningError) as info:
        load_tasks([ep("thirdparty", value)])
    assert expected in str(info.value) and "'thirdparty'" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_prompt_is_claimed_by_its_own_task() -> None:
    gym = [t for t in all_tasks() if t.startswith("gym.")]
    for task_id, task in all_tasks().items():
        if task_id.startswith("gym.") and task_id not in gym[::15]:  # a sample of the pack
            continue
        for style in task.styles:
            level = task.levels[0]
            item = task.make_item(level, 3, 1, style=style)
            claimed = task_for_prompt(item.prompt)
            if task_id.startswith("gym."):  # reasoning-gym's questions: no text answer
                assert claimed is None, (task_id, claimed)
                continue
            if task_id.startswith("musr."):
                assert claimed is None  # stories need commonsense the text leaves out
            elif task_id.startswith("flenqa."):
                assert claimed is not None and claimed.id.startswith("flenqa.")
            else:
                assert claimed is task, (task_id, style, claimed)
            if claimed is not None:  # the text answer is what the task scores as right
                answer = claimed.text_answer(item.prompt)
                assert answer is not None and get_task(task_id).score(item, answer).correct
