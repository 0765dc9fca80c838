"""The package's architecture: no import circles, a narrow entry point, every layer kept."""

from __future__ import annotations

import re
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]


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


def test_no_module_is_over_600_lines() -> None:
    """A module a contributor can read in one sitting: split by responsibility past 600."""
    long = {
        str(path.relative_to(ROOT)): n
        for path in (ROOT / "pytest_reasoning").rglob("*.py")
        if (n := len(path.read_text().splitlines())) > 600
    }
    assert long == {}


ROOMS = ("tasks", "gates", "models", "plugin", "report", "cli", "conformance", "e2e")
CAMPAIGNS = ("frontier_models", "hostile", "habits", "verdicts", "house", "hardened")


def test_the_tests_are_laid_out_like_the_package() -> None:
    """Every test module sits in the folder of the room it tests (or conformance/, e2e/), and
    none is named after the campaign that made it."""
    tests = ROOT / "tests"
    assert sorted(p.name for p in tests.iterdir() if p.is_dir() and (p / "__init__.py").exists()) == sorted(ROOMS)
    modules = list(tests.rglob("test_*.py"))
    assert [p.name for p in modules if p.parent == tests] == []
    assert [p.name for p in modules if p.stem.removeprefix("test_") in CAMPAIGNS] == []


def test_every_hook_method_of_the_plugin_is_a_hook_pytest_knows() -> None:
    """A ``pytest_*`` method pytest has no spec for (a misspelt name, a hook renamed upstream)
    is never called, and pytest checks only plugins registered while it configures: ours are
    registered later too (the controller, the progress line), so each name is checked here,
    against pytest's and xdist's specs."""
    import importlib
    import inspect
    import pkgutil

    from _pytest.config import PytestPluginManager
    from xdist import newhooks

    import pytest_reasoning.plugin as plugin

    specs = PytestPluginManager()  # pytest's specs, whatever this run loaded (-p no:xdist)
    specs.add_hookspecs(newhooks)
    hooks = specs.hook
    unknown = []
    for info in pkgutil.iter_modules(plugin.__path__):
        module = importlib.import_module(f"{plugin.__name__}.{info.name}")
        for cls in vars(module).values():
            if not inspect.isclass(cls) or cls.__module__ != module.__name__:
                continue
            for name in vars(cls):
                if name.startswith("pytest_"):
                    caller = getattr(hooks, name, None)
                    if caller is None or caller.spec is None:
                        unknown.append(f"{module.__name__}.{cls.__name__}.{name}")
    assert not unknown
