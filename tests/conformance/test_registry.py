"""The registry: every family registers through the entry-point group (built-in ones too),
a clash or a non-task is one line naming its source, and the test server's oracle asks the
registry which task a prompt belongs to."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from pytest_reasoning.errors import ReasoningError
from pytest_reasoning.registry import (
    ENTRY_POINT_GROUP,
    all_tasks,
    get_task,
    load_tasks,
    task_for_prompt,
)
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.sampler import make_item


def ep(name: str, value: str) -> EntryPoint:
    return EntryPoint(name, value, ENTRY_POINT_GROUP)


def test_builtin_families_register_through_entry_points() -> None:
    families = ["zebra", "dyval", "musr", "flenqa", "gym"]  # gym: empty without reasoning-gym
    tasks = load_tasks([ep(f, f"pytest_reasoning.tasks.{f}:TASKS") for f in families])
    assert list(tasks) == list(all_tasks())  # the installed metadata says the same, in order
    assert len([t for t in tasks if not t.startswith("gym.")]) == 14


def test_the_contract_on_one_screen_is_a_whole_family(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/extending.md's family (one class, one registration line) registers, its items
    are drawn by the sampler, and its independent solver answers every one of them."""
    doc = (Path(__file__).parents[2] / "docs" / "extending.md").read_text()
    code = re.search(r"```python\n# my_tasks/__init__.py\n(.*?)```", doc, re.S)
    line = re.search(r'^(\w+) = "(my_tasks:TASKS)"', doc, re.M)
    assert code is not None and line is not None
    assert len(code.group(1).splitlines()) <= 60  # one screen
    (tmp_path / "my_tasks").mkdir()
    (tmp_path / "my_tasks" / "__init__.py").write_text(code.group(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    [(tid, task)] = load_tasks([ep(line.group(1), line.group(2))]).items()
    assert tid == "mine.sum"
    for level in task.levels:
        for index in range(3):
            item = make_item(task, level, 1, index, style="cot")
            assert task.score(item, hooks.reference_response(task, item)).correct
            assert not task.score(item, "<<<-1>>>").correct


def test_a_hook_of_the_wrong_kind_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Optional hooks are read by name (tasks.hooks): one written as a method where a value
    is declared (or the reverse) would be misread, so registering it stops with one line."""
    (tmp_path / "odd_tasks.py").write_text(
        "from pytest_reasoning.tasks.dyval import ArithmeticTask\n"
        "class Odd(ArithmeticTask):\n"
        "    id = 'odd.arithmetic'\n"
        "    def breaks_down(self):\n"
        "        return False\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ReasoningError) as info:
        load_tasks([ep("odd", "odd_tasks:Odd")])
    assert str(info.value) == (
        "entry point 'odd' (odd_tasks:Odd): odd.arithmetic: hook 'breaks_down' must be a "
        "value, not a method (tasks.hooks.TaskHooks)"
    )


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
            item = make_item(task, level, 3, 1, style=style)
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
                answer = hooks.text_answer(claimed, item.prompt)
                assert answer is not None and get_task(task_id).score(item, answer).correct


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
def test_a_third_party_task_package_runs_through_the_plugin(tmp_path: Path) -> None:
    """examples/acme-tasks, installed the way pip lays a package out (its folder on the path
    plus a ``.dist-info`` with its entry points, read from its own pyproject.toml), then its
    suite run by pytest and its tasks listed by the CLI, in fresh processes."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+, as CI
    package = ROOT / "examples" / "acme-tasks"
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    site = tmp_path / "site"
    shutil.copytree(package / "acme_tasks", site / "acme_tasks")
    info = site / f"acme_tasks-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    points = project["entry-points"]["pytest_reasoning.tasks"]
    (info / "entry_points.txt").write_text(
        "[pytest_reasoning.tasks]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
    )
    shutil.copy(package / "acme.yaml", tmp_path / "acme.yaml")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "acme.yaml", "--llm", "reference", "-v", "-p",
         "no:cacheprovider", "-p", "no:randomly", "--junitxml", "j.xml"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "acme.yaml::acme.letter_count[L2-gate] PASSED" in done.stdout
    assert "acme.yaml::acme.arithmetic_terse[D2-gate] PASSED" in done.stdout
    assert "24 passed" in done.stdout
    listed = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", "tasks", "acme.letter_count"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert "length    int     1..500" in listed.stdout, listed.stdout + listed.stderr
    exported = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", "export", "acme.arithmetic_terse",
         "--level", "D1", "--count", "1"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    row = json.loads(exported.stdout)
    assert row["system"].startswith("You are a careful calculator")
    assert row["prompt"].endswith("Answer: <<<")
