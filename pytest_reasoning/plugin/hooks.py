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
from .items import ReasoningItem, ReasoningSuiteFile, VerdictItem, looks_like_suite, teststatus
from .options import RunOptions, add_options
from .state import STATE, RunState

__all__ = ["llm", "reasoning_results"]  # the fixtures pytest finds on this module

CONTROLLER = pytest.StashKey[Controller]()
# Suite files met without --llm (not run): the collection report says how to run them.
UNRUN = pytest.StashKey[list[Path]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "reasoning: a generated reasoning sample")
    if not RunOptions.active(config):
        _refuse_named_suites(config)
        return
    state = RunState(config, RunOptions.from_config(config))
    _check_split(config, state)
    config.stash[STATE] = state
    _check_litellm(state)
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
        state.controller = controller
        config.pluginmanager.register(controller, "reasoning-controller")


def _check_litellm(state: RunState) -> None:
    """A compromised litellm is refused before any item runs (from the package metadata; it
    is never imported), in one line."""
    from ..models.kinds import model_kind

    if not any(model_kind(m, state.options.model_specs).calls_model for m in state.models):
        return
    from ..errors import ReasoningError
    from ..models.litellm_client import check_installed_litellm

    try:
        check_installed_litellm()
    except ReasoningError as exc:
        raise pytest.UsageError(str(exc)) from None
    # This process will call (not an xdist controller, whose workers call; not
    # --collect-only): import litellm (seconds) while the suite is collected. Not when a
    # response cache is already there: a warm rerun may ask nothing, and then never pays
    # for the import at all (what each model accepts is kept beside the cache).
    config = state.config
    calls = not config.option.collectonly and (state.is_worker or _dist(config) == "no")
    if calls and not _may_be_warm(state):
        from ..models.litellm_client import import_litellm_soon

        import_litellm_soon()


def _may_be_warm(state: RunState) -> bool:
    """Whether answers may already be cached (a local cache file exists, or a shared one)."""
    from ..models.cache import CACHE_FILE

    o = state.options
    if o.cache_url is not None:
        return True
    return o.cache_dir is not None and (o.cache_dir / CACHE_FILE).exists()


def _dist(config: pytest.Config) -> str:
    return str(getattr(config.option, "dist", "no") or "no")


def _check_split(config: pytest.Config, state: RunState) -> None:
    """pytest-split cuts levels apart (it splits by test, by time): its gates could only be
    partial, so it is refused unless the gates are deferred to ``pytest-reasoning gate``."""
    if config.getoption("splits", None) and not state.options.defer_gates:
        raise pytest.UsageError(
            "--splits (pytest-split) cuts a suite's levels apart, so no gate could be decided "
            "in a split: use --reasoning-shard K/N (whole levels per shard), or add "
            "--reasoning-defer-gates and decide the gates with pytest-reasoning gate "
            "(docs/ci.md)"
        )


def _refuse_named_suites(config: pytest.Config) -> None:
    """A suite named on the command line without a model: say what it needs, in one line
    (pytest alone would answer "not found")."""
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0])
        if path.suffix in (".yaml", ".yml") and looks_like_suite(path):
            raise pytest.UsageError(
                f"{arg.split('::', 1)[0]} is a reasoning suite: name the model to run it with "
                "--llm MODEL (--llm reference runs the tasks' own solvers: free, no model "
                "needed); see pytest --help, group 'reasoning'"
            )


def _check_cache(state: RunState) -> None:
    """An unusable cache directory, or a damaged cache file, stops the run before any (paid)
    call, in one line: answers that cannot be cached could be lost. The controller checks the
    file's pages once (``PRAGMA quick_check``); workers only open it."""
    from ..models.kinds import model_kind

    path = state.options.cache_dir
    if not any(model_kind(m).calls_model for m in state.models):
        return
    if state.options.cache_url is not None:
        _check_shared_cache(state.options.cache_url)
    if path is None:
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


def _check_shared_cache(url: str) -> None:
    """A shared cache that cannot be reached or written stops the run before any call, in one
    line: the run would pay for prompts other jobs are asking (mid-run, a lost Redis is
    different: the run goes on with its local cache, docs/models.md)."""
    from ..errors import StorageFailed
    from ..models.shared_cache import RedisStore

    store = RedisStore(url)
    try:
        store.ping()
    except StorageFailed as exc:
        raise pytest.UsageError(
            f"--reasoning-cache: {exc} (start Redis or fix the URL; a folder, or 'off', runs "
            "without sharing answers)"
        ) from None
    finally:
        store.close()


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
    config_file = f" (aliases from {opts.llm_config})" if opts.llm_config else ""
    if opts.llm_router:
        config_file += f" (model groups from {opts.llm_router})"
    lines = [
        f"reasoning: models {', '.join(state.models)}{config_file}; "
        f"concurrency {opts.concurrency}{seed}"
    ]
    if opts.cache_url is not None:
        from ..models.shared_cache import shown_url

        local = f"{opts.cache_dir} first, then " if opts.cache_dir else ""
        lines.append(f"reasoning: cache {local}{shown_url(opts.cache_url)} (shared)")
    return lines


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if STATE not in config.stash:
        if file_path.suffix in (".yaml", ".yml") and looks_like_suite(file_path):
            config.stash.setdefault(UNRUN, []).append(file_path)
        return None
    from ..config import is_suite_file

    if is_suite_file(file_path):
        return ReasoningSuiteFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--reasoning-shard K/N``: before any other selection (``-k``, ``--deselect``,
    pytest-split run after it; ``--lf`` filters around it), so every job assigns the same
    whole collection alike. The other shards' items are reported as deselected."""
    state = config.stash.get(STATE, None)
    if state is None or state.options.shard is None:
        return
    from .shards import select_shard

    index, count = state.options.shard
    kept, dropped, state.shard = select_shard(items, index, count)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """After every plugin's selection (``-k``, ``-m``, ``--lf``, ids, shards, pytest-split):
    complete the levels of selected gates (not when gates are deferred: the merge decides
    them), then hand the run's items — exactly the selected ones — to prefetch and the
    controller."""
    config = session.config
    state = config.stash.get(STATE, None)
    if state is None:
        return
    from .items import complete_levels

    added, partial = (0, 0) if state.options.defer_gates else complete_levels(session.items)
    state.set_items(session.items)
    state.selection = (added, partial)
    if state.controller is not None:
        state.controller.select(
            (i.nodeid for i in session.items),
            {i.nodeid: i.kind for i in session.items if isinstance(i, VerdictItem)},
        )
        from .progress import LiveCount

        if LiveCount.wanted(config) and not config.getoption("collectonly", False):
            state.live = LiveCount(config, state, len(state.items))


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]) -> list[str]:
    unrun = config.stash.get(UNRUN, [])
    state = config.stash.get(STATE, None)
    if state is None:
        if not unrun:
            return []
        return [
            f"reasoning: {len(unrun)} suite file(s) not run (e.g. {unrun[0].name}): name a "
            "model with --llm MODEL (--llm reference: the tasks' own solvers, free)"
        ]
    samples = sum(isinstance(i, ReasoningItem) for i in items)
    verdicts = [i for i in items if isinstance(i, VerdictItem)]
    shard = [state.shard.line()] if state.shard is not None else []
    if not samples and not verdicts:
        return shard
    gates = sum(v.kind == "gate" for v in verdicts)
    comparisons = len(verdicts) - gates
    when = (
        "deferred: pytest-reasoning gate decides them from the results files"
        if state.options.defer_gates
        else "a gate is decided when the last sample of its level is in"
    )
    lines = [
        *shard,
        f"reasoning: {samples} samples, {gates} gate(s)"
        + (f", {comparisons} comparison(s) against the baseline" if comparisons else "")
        + f" ({when})",
    ]
    added, partial = state.selection
    if added:
        lines.append(f"reasoning: the selected gates need their whole levels: {added} more samples")
    if partial:
        lines.append(
            f"reasoning: {partial} gate(s) selected with part of their level: reported as "
            "skipped (partial), not decided"
        )
    return lines


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Verdict items are reported by the controller when their level is in, so their turn
    in the run loop does nothing but what pytest's runner does after every test: tear down
    the nodes ``nextitem`` does not share (else the next file's first item finds the last
    file still set up)."""
    if not isinstance(item, VerdictItem):
        return None
    setupstate = getattr(item.session, "_setupstate", None)
    if setupstate is not None:
        setupstate.teardown_exact(nextitem)
    return True


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    return teststatus(report)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Iterator[None]:
    controller = session.config.stash.get(CONTROLLER, None)
    try:
        result = yield
    except BaseException:  # -x / --maxfail, Ctrl-C: gates not yet decided stay undecided
        if controller is not None:
            controller.stop()
        raise
    finally:
        state = session.config.stash.get(STATE, None)
        if state is not None and state.ticker is not None:
            state.ticker.stop()
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


@pytest.hookimpl(trylast=True)  # after the cache plugin has saved its lastfailed
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    controller = session.config.stash.get(CONTROLLER, None)
    if controller is not None:
        controller.exit_status(session)
        controller.update_lastfailed(session.config)
