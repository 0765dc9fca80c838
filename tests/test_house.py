"""The house (issues 30 and 45): no import circles (type-only imports counted), a narrow
door, every layer kept."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles() -> None:
    """Every import a module makes, type-only imports included: no two modules import each
    other, however indirectly (RunState's type-only imports of the controller, the items, the
    live count and the shards closed a circle of seven plugin modules)."""
    graph = grimp.build_graph(
        "pytest_reasoning", cache_dir=None, exclude_type_checking_imports=False
    )
    assert _cycles(graph) == []


def test_the_door_is_narrow() -> None:
    """The entry point keeps the options, the fixtures and a configure that registers the run
    session; every run hook belongs to the session."""
    door = (ROOT / "pytest_reasoning" / "plugin" / "hooks.py").read_text()
    assert len(door.splitlines()) <= 150
    hooks = [line for line in door.splitlines() if line.startswith("def pytest_")]
    assert [h.split("(")[0] for h in hooks] == ["def pytest_addoption", "def pytest_configure"]


PUBLIC = ("pytest_reasoning", "pytest_reasoning.tasks", "pytest_reasoning.strategies")


@pytest.mark.parametrize("module", PUBLIC)
def test_all_is_exactly_what_is_public(module: str) -> None:
    """As Hypothesis checks its own: every name in ``__all__`` resolves, and every public name
    a module defines is in ``__all__`` (nothing public by accident)."""
    found = importlib.import_module(module)
    names = list(found.__all__)
    assert len(names) == len(set(names))
    assert all(getattr(found, n, None) is not None for n in names), module
    public = {
        n
        for n in dir(found)
        if not n.startswith("_")
        and not inspect.ismodule(getattr(found, n))
        and getattr(getattr(found, n), "__module__", "") == module
    }
    assert public <= set(names), sorted(public - set(names))


def test_task_authors_import_only_the_public_face() -> None:
    """The extension docs and the example package import what ``pytest_reasoning.tasks`` (and
    a family package, to extend a built-in task) offer, never an internal module."""
    allowed = re.compile(r"pytest_reasoning(\.tasks(\.(dyval|flenqa|musr|zebra))?|\.strategies)?$")
    sources = [ROOT / "docs" / "extending.md", *sorted((ROOT / "examples").rglob("*.py"))]
    for path in sources:
        for module in re.findall(r"^\s*from (pytest_reasoning[\w.]*) import", path.read_text(), re.M):
            assert allowed.match(module), f"{path.name}: from {module} import"


def test_an_author_holds_the_task_contract_in_their_head() -> None:
    """``Task`` is the author's class: at most 20 public members (class variables, annotated
    ones included, and methods), none of them the sampler's; the optional hooks beyond it
    are declared once (``tasks.hooks.TaskHooks``) and never shadow a member of ``Task``."""
    from pytest_reasoning.tasks import Task
    from pytest_reasoning.tasks.hooks import HOOKS

    members = {n for n in (*dir(Task), *Task.__annotations__) if not n.startswith("_")}
    assert len(members) <= 20, sorted(members)
    required = {"id", "levels", "knobs", "preset", "generate", "render", "score", "solve"}
    assert required <= members
    assert Task.__abstractmethods__ == {"preset", "generate", "render", "score", "solve"}
    assert not members & {"make_item", "split_of", "fits_draw", "repeated", "shortfall"}
    assert not members & set(HOOKS)


def test_a_fifo_named_like_a_suite_never_hangs_a_plain_run(pytester: pytest.Pytester) -> None:
    """Without --llm the door sniffs YAML files for a top-level ``tasks:``; a FIFO with that
    name (no writer) must be passed over, not waited on."""
    import os

    os.mkfifo(pytester.path / "pipe.yaml")
    pytester.makepyfile(test_plain="def test_one():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=1)


def test_the_evaluator_never_sniffs_stores_or_clients() -> None:
    """Each model kind builds its client and every cache is one ResponseStore: the evaluator
    asks them, never which class they are (issue 30: it did 13 times)."""
    import ast

    tree = ast.parse((ROOT / "pytest_reasoning" / "evaluate.py").read_text())
    sniffs = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "getattr":
                sniffs.append(ast.unparse(node))
            if node.func.id == "isinstance":
                kinds = ast.unparse(node.args[1])
                if not re.fullmatch(r"int|str|float|sqlite3\.\w+", kinds):
                    sniffs.append(ast.unparse(node))
    assert sniffs == []
