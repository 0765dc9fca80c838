"""The run session: registered by the door (``hooks.py``) only when the plugin is active
(``--llm`` names a model), as xdist registers its ``DSession`` only under ``--dist``. It owns
every hook of a run — start-up, collection, selection, the run loop's glue — so none of them
asks "am I active?", and it imports what it needs at the top: a plain pytest run never loads
this module. It owns the run's rooms: the controller (the process that sees every report,
registered beside it), the live count and the shard kept; ``RunState`` holds the data they
share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..budget import Meter
from ..config import is_suite_file
from ..errors import ReasoningError, StorageFailed
from ..models.cache import CACHE_FILE
from ..models.litellm_client import import_litellm_soon
from ..runs import RunConfig, open_run
from ..tasks.shared_batches import share_batches
from .batch import run_batch_phase
from .controller import Controller
from .items import ReasoningItem, ReasoningSuiteFile, VerdictItem, complete_levels, teststatus
from .options import RunOptions
from .progress import LIVE, LiveCount, Ticker
from .shards import Shard, select_shard
from .signals import Signals
from .state import STATE, RunState
from .xdist import XdistHooks, worker_inputs

__all__ = ["RunSession"]


class RunSession:
    """One active run: its state (``config.stash[STATE]``), its checks, its hooks."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        options = RunOptions.from_config(config)
        if config.getoption("splits", None) and not options.defer_gates:
            # pytest-split cuts levels apart (by test, by time): its gates could only be
            # partial, so it is refused unless the gates are left to pytest-reasoning gate.
            raise pytest.UsageError(
                "--splits (pytest-split) cuts a suite's levels apart, so no gate could be "
                "decided in a split: use --reasoning-shard K/N (whole levels per shard), or "
                "add --reasoning-defer-gates and decide the gates with pytest-reasoning gate "
                "(docs/ci.md)"
            )
        self.state = state = RunState(config, options)
        config.stash[STATE] = state
        self.samples: list[ReasoningItem] = []  # the run's samples, in the order they run
        self.shard: Shard | None = None  # what --reasoning-shard K/N kept
        self.ticker: Ticker | None = None  # the live count of an xdist controller
        local = None
        if state.is_worker:
            url, identity, signals = worker_inputs(config)
            local = (url, identity)  # the controller's embedded server, if it runs one
            state.signals = Signals(signals)
            share_batches(signals)  # one worker draws a unique batch, the others read it
        elif str(getattr(config.option, "dist", "no") or "no") != "no":
            state.signals = Signals.for_workers()
        try:  # the embedded server, the caches, the evaluator; checked before any item runs:
            # litellm, the cache (the controller reads its pages)
            opened = open_run(
                RunConfig.from_options(state.models, options),
                local=local,
                deep=not state.is_worker,
            )
        except ReasoningError as exc:
            raise pytest.UsageError(_option_of(exc)) from None
        state.local_server, state.evaluator = opened.local_server, opened.evaluator
        state.local_url, state.local_identity = opened.local_url, opened.local_identity
        state.evaluator.halt = state.signals.stopped  # a budget reached: no more calls
        if options.budget:  # each call admitted against it, each reply counted on arrival
            state.evaluator.meter = Meter(options.budget, state.signals)
        if options.budget.usd is not None and not state.is_worker:
            unpriced = state.evaluator.unpriced(state.models)
            if unpriced:
                raise pytest.UsageError(
                    f"--reasoning-budget {options.budget}: {', '.join(unpriced)} has no price "
                    "(not in LiteLLM's price map): give its --llm-config entry "
                    "input_cost_per_token and output_cost_per_token, or budget tokens=N"
                )
        if self._calls_here() and not self._may_be_warm():
            # import litellm (seconds) while the suite is collected; not when a response
            # cache is already there: a warm rerun may ask nothing and never pay for it.
            import_litellm_soon()
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(
                XdistHooks(state, self._workers_collected), "reasoning-xdist"
            )
        self.controller: Controller | None = None
        if not state.is_worker:
            self.controller = Controller(state)
            self.controller.start()
            config.pluginmanager.register(self.controller, "reasoning-controller")

    # -- start-up ----------------------------------------------------------------------------
    def _calls_here(self) -> bool:
        """Whether this process will call models (not an xdist controller, whose workers call;
        not --collect-only)."""
        config, state = self.config, self.state
        if config.option.collectonly:
            return False
        dist = str(getattr(config.option, "dist", "no") or "no")
        calls = any(state.evaluator.model(m).calls_model for m in state.models)
        return calls and (state.is_worker or dist == "no")

    def _may_be_warm(self) -> bool:
        """Whether answers may already be cached (a local cache file exists, or a shared one)."""
        o = self.state.options
        if o.cache_url is not None:
            return True
        return o.cache_dir is not None and (o.cache_dir / CACHE_FILE).exists()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.controller is not None:
            self.controller.store.close()
        self.state.close()
        share_batches(None)

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        state = self.state
        opts = state.options
        seed = f", seed override {opts.seed}" if opts.seed is not None else ""
        if opts.seed_source is not None:
            seed += f" (auto from {opts.seed_source!r}; replay with --reasoning-seed {opts.seed})"
        config_file = f" (aliases from {opts.llm_config})" if opts.llm_config else ""
        if opts.llm_router:
            config_file += f" (model groups from {opts.llm_router})"
        lines = [
            f"reasoning: models {', '.join(state.models)}{config_file}; "
            f"{self._concurrency()}{seed}"
        ]
        if opts.cache_url is not None:
            from ..models.shared_cache import shown_url

            local = f"{opts.cache_dir} first, then " if opts.cache_dir else ""
            lines.append(f"reasoning: cache {local}{shown_url(opts.cache_url)} (shared)")
        if opts.shard_source is not None:  # --reasoning-shard auto: which variables it read
            lines.append(opts.shard_source)
        return lines

    def _concurrency(self) -> str:
        """The calls in flight at once, as the models get them: ``--llm local`` is answered
        one call at a time by the embedded server, whatever --reasoning-concurrency says."""
        state, asked = self.state, self.state.options.concurrency
        lower: dict[str, int] = {}
        for m in state.models:
            if state.evaluator.model(m).calls_model:
                try:
                    n = state.evaluator.concurrency(m)
                except ReasoningError:  # its client cannot be built: the run will say why
                    continue
                if n < asked:
                    lower[m] = n
        if not lower:
            return f"concurrency {asked}"
        if len(lower) == len(state.models) == 1:
            model, n = next(iter(lower.items()))
            why = (
                "the embedded server answers one call at a time"
                if state.evaluator.model(model).api.needs_local_server
                else "its max_parallel_requests"
            )
            return f"concurrency {n} ({why})"
        return f"concurrency {asked} ({', '.join(f'{m}: {n}' for m, n in lower.items())})"

    # -- collection and selection ------------------------------------------------------------
    def pytest_collect_file(
        self, file_path: Path, parent: pytest.Collector
    ) -> pytest.Collector | None:
        if is_suite_file(file_path):
            return ReasoningSuiteFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """``--reasoning-shard K/N``: before any other selection (``-k``, ``--deselect``,
        pytest-split run after it; ``--lf`` filters around it), so every job assigns the same
        whole collection alike. The other shards' items are reported as deselected."""
        shard = self.state.options.shard
        if shard is None:
            return
        kept, dropped, self.shard = select_shard(items, *shard)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """After every plugin's selection (``-k``, ``-m``, ``--lf``, ids, shards, pytest-split):
        complete the levels of selected gates (not when gates are deferred: the merge decides
        them), then hand the run's items — exactly the selected ones — to prefetch and the
        controller."""
        state = self.state
        added, in_part = (0, 0) if state.options.defer_gates else complete_levels(session.items)
        self.samples = [i for i in session.items if isinstance(i, ReasoningItem)]
        state.order = {i.nodeid: n for n, i in enumerate(session.items)}
        state.selection = (added, in_part)
        for item in session.items:
            if isinstance(item, VerdictItem) and item.kind == "comparison":
                state.families[item.model] = state.families.get(item.model, 0) + 1
        if self.controller is not None:
            self.controller.select(
                (i.nodeid for i in session.items),
                {i.nodeid: (i.kind, i.model) for i in session.items if isinstance(i, VerdictItem)},
            )
            if LiveCount.wanted(self.config) and not self.config.option.collectonly:
                live = LiveCount(self.config, state.evaluator, len(self.samples))
                self.config.stash[LIVE] = live  # where a waiting sample finds it

    def _workers_collected(self, ids: list[str]) -> None:
        """Under xdist the controller collects nothing: the first worker's ids say which
        gates were selected (every worker collects the same). Then the live count starts (on
        a terminal)."""
        if self.controller is None or self.controller.selected is not None:
            return
        self.controller.select(ids)
        if LiveCount.wanted(self.config) and self.ticker is None:
            self.ticker = Ticker(self.config, len(ids))
            self.config.pluginmanager.register(self.ticker, "reasoning-ticker")
            self.ticker.start()

    def pytest_report_collectionfinish(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> list[str]:
        state = self.state
        samples = sum(isinstance(i, ReasoningItem) for i in items)
        verdicts = [i for i in items if isinstance(i, VerdictItem)]
        shard = [self.shard.line()] if self.shard is not None else []
        if not samples and not verdicts:
            return shard
        gates = sum(v.kind == "gate" for v in verdicts)
        comparisons = len(verdicts) - gates
        when = (
            "deferred: pytest-reasoning gate decides them from the results files"
            if state.options.defer_gates
            else "a gate is decided when the last sample of its level is in"
        )
        against = "comparison(s) against the baseline"
        if state.options.drift:  # every prompt asked anew: the cache is not read
            against = f"drift check(s) against {state.options.drift}, not from the cache"
        lines = [
            *shard,
            f"reasoning: {samples} samples, {gates} gate(s)"
            + (f", {comparisons} {against}" if comparisons else "")
            + f" ({when})",
        ]
        added, in_part = state.selection
        if added:
            lines.append(
                f"reasoning: the selected gates need their whole levels: {added} more samples"
            )
        if in_part:
            lines.append(
                f"reasoning: {in_part} gate(s) selected with part of their level: reported as "
                "skipped (not decided)"
            )
        return lines

    # -- the run loop ------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> bool | None:
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

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        return teststatus(report)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Iterator[None]:
        try:
            if self.state.options.batch and not self.config.option.collectonly:
                # The Batch API first: the run answers from cache.
                run_batch_phase(self.state, self.controller, self.samples)
            result = yield
        except BaseException:  # -x / --maxfail, Ctrl-C: gates not yet decided stay undecided
            if self.controller is not None:
                self.controller.stop()
            raise
        finally:
            if self.ticker is not None:
                self.ticker.stop()
        if self.controller is not None and not self.config.option.collectonly:
            self.controller.finish(session)  # nothing ran: no verdict to report (no "s" line)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        self.state.test = item.nodeid  # the llm fixture's call budget is per test
        return (yield)

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        if self.controller is not None:
            self.controller.summary(terminalreporter, exitstatus)

    @pytest.hookimpl(trylast=True)  # after the cache plugin has saved its lastfailed
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.controller is not None:
            self.controller.exit_status(session)
            self.controller.update_lastfailed(session.config)


def _option_of(exc: ReasoningError) -> str:
    """A start-up check's line, under the option it is about."""
    return f"--reasoning-cache: {exc}" if isinstance(exc, StorageFailed) else str(exc)
