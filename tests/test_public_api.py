"""The curated public API and the registry-wide gold-answer check."""

from __future__ import annotations

import pytest

import pytest_reasoning
from pytest_reasoning.registry import all_tasks, get_task


def test_all_is_sorted_and_resolvable() -> None:
    names = pytest_reasoning.__all__
    assert names == sorted(names, key=str.lower) or names == sorted(names)
    for name in names:
        assert getattr(pytest_reasoning, name) is not None


@pytest.mark.parametrize("task_id", sorted(all_tasks()))
def test_every_task_scores_its_own_gold_answer(task_id: str) -> None:
    task = get_task(task_id)
    for level in task.levels:
        for style in task.styles:
            item = task.make_item(level, 7, 3, style=style)
            assert task.score(item, f"<<<{item.answer}>>>").correct
            assert task.score(item, task.reference_response(item)).correct
