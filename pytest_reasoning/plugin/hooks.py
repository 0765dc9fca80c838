"""The plugin's entry point (``pytest11: reasoning``): pytest's hooks, each a few lines that
hand off to the rooms of this package (options, state, items, controller, xdist glue,
fixtures). Importing it costs almost nothing: everything heavy loads inside hooks, and only
when ``--llm`` (or the ``reasoning_llm`` ini key) names a model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .controller import Controller
from .fixtures import llm, reasoning_results
from .items import ReasoningSuiteFile, teststatus
from .options import RunOptions, add_options
from .state import STATE, RunState

__all__ = ["llm", "reasoning_results"]  # the fixtures pytest finds on this module

CONTROLLER = pytest.StashKey[Controller]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "reasoning: a generated reasoning sample")
    if not RunOptions.active(config):
        return
    state = RunState(config, RunOptions.from_config(config))
    config.stash[STATE] = state
    _check_cache(state)
    if state.is_worker:
        from .xdist import worker_inputs

        state.local_url, state.local_identity = worker_inputs(config)
    else:
        _start_local_server(state)
    if config.pluginmanager.hasplugin("xdist"):
        from .xdist import XdistHooks

        config.pluginmanager.register(XdistHooks(state), "reasoning-xdist")
    if not state.is_worker:
        controller = Controller(state)
        controller.start()
        config.stash[CONTROLLER] = controller
        config.pluginmanager.register(controller, "reasoning-controller")


def _check_cache(state: RunState) -> None:
    """An unusable cache directory, or a damaged cache file, stops the run before any (paid)
    call, in one line: answers that cannot be cached could be lost. The controller checks the
    file's pages once (``PRAGMA quick_check``); workers only open it."""
    from ..models.kinds import model_kind

    path = state.options.cache_dir
    if path is None or not any(model_kind(m).calls_model for m in state.models):
        return
    import sqlite3

    from ..errors import StorageFailed
    from ..models.cache import ResponseCache, storage_failure

    try:
        cache = ResponseCache(path)
    except (OSError, sqlite3.Error) as exc:
        if isinstance(exc, sqlite3.DatabaseError) and (path / "responses.sqlite3").is_file():
            damaged = storage_failure(path / "responses.sqlite3", exc, "read")
            raise pytest.UsageError(f"--reasoning-cache: {damaged}") from None
        raise pytest.UsageError(
            f"--reasoning-cache: cannot use {path} ({type(exc).__name__}: {exc}); give a "
            "writable folder, or 'off' to run without a cache"
        ) from None
    try:
        if not state.is_worker:
            cache.verify()
    except StorageFailed as exc:
        raise pytest.UsageError(f"--reasoning-cache: {exc}") from None
    finally:
        cache.close()


def _start_local_server(state: RunState) -> None:
    from ..models.kinds import model_kind

    wanted = [m for m in state.models if model_kind(m).needs_local_server]
    if not wanted:
        return
    from ..errors import ReasoningError
    from ..models.local import LocalServer

    try:
        state.local_server = LocalServer()
        state.local_url = state.local_server.start()
        state.local_identity = state.local_server.identity
    except ReasoningError as exc:
        raise pytest.UsageError(f"--llm {wanted[0]}: {exc}") from None


def pytest_unconfigure(config: pytest.Config) -> None:
    controller = config.stash.get(CONTROLLER, None)
    if controller is not None:
        controller.store.close()
    state = config.stash.get(STATE, None)
    if state is not None:
        state.close()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    state = config.stash.get(STATE, None)
    if state is None:
        return None
    opts = state.options
    seed = f", seed override {opts.seed}" if opts.seed is not None else ""
    if opts.seed_source is not None:
        seed += f" (auto from {opts.seed_source!r}; replay with --reasoning-seed {opts.seed})"
    return [f"reasoning: models {', '.join(state.models)}; concurrency {opts.concurrency}{seed}"]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if STATE not in parent.config.stash:
        return None
    from ..config import is_suite_file

    if is_suite_file(file_path):
        return ReasoningSuiteFile.from_parent(parent, path=file_path)
    return None


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    return teststatus(report)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    state = config.stash.get(STATE, None)
    if state is not None:
        state.set_items(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Iterator[None]:
    result = yield
    controller = session.config.stash.get(CONTROLLER, None)
    if controller is not None:
        controller.finish(session)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    state = item.config.stash.get(STATE, None)
    if state is not None and state.llm is not None:
        state.llm.current = item.nodeid  # the llm fixture's call budget is per test
    return (yield)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    controller = config.stash.get(CONTROLLER, None)
    if controller is not None:
        controller.summary(terminalreporter, exitstatus)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    controller = session.config.stash.get(CONTROLLER, None)
    if controller is not None:
        controller.exit_status(session)
