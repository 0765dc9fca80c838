"""The xdist glue, and the only module that touches xdist's internals: the controller hands
the local server's address and the run's seed to each worker, and a worker peeks (read-only,
best effort) at its own queue to prefetch what it will run next."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .state import STATE, RunState

__all__ = ["XdistHooks", "stop_workers", "worker_upcoming"]


class XdistHooks:
    """Registered only when xdist is present. ``collected``: told the node ids a worker
    collected (on the controller, which collects nothing)."""

    def __init__(self, state: RunState, collected: Callable[[list[str]], None]) -> None:
        self.state = state
        self.collected = collected

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["reasoning_local_url"] = self.state.local_url
        node.workerinput["reasoning_local_identity"] = self.state.local_identity
        node.workerinput["reasoning_seed"] = self.state.options.seed
        node.workerinput["reasoning_seed_source"] = self.state.options.seed_source
        node.workerinput["reasoning_signals"] = self.state.signals.folder

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The controller does not collect: the workers' ids say which tests were selected
        (every worker collects the same)."""
        self.collected(ids)


def stop_workers(config: Any, reason: str) -> None:
    """``-x``/``--maxfail`` reached by a gate the controller decided: xdist counts only the
    workers' failures, so tell its scheduler to stop as it would for those."""
    dsession = config.pluginmanager.getplugin("dsession")
    if dsession is not None and not getattr(dsession, "shouldstop", True):
        dsession.shouldstop = reason


def worker_inputs(config: Any) -> tuple[str | None, str | None, str | None]:
    """The local server's address and identity, and the signals folder, as the controller
    handed them over."""
    workerinput = config.workerinput
    return (
        workerinput.get("reasoning_local_url"),
        workerinput.get("reasoning_local_identity"),
        workerinput.get("reasoning_signals"),
    )


def worker_upcoming(item: pytest.Item, window: int) -> Iterator[pytest.Item]:
    """The items after ``item`` in this worker's queue (xdist's ``WorkerInteractor.torun``)."""
    state = item.config.stash[STATE]
    if state.worker_queue is None:
        state.worker_queue = next(
            (
                p
                for p in item.config.pluginmanager.get_plugins()
                if type(p).__name__ == "WorkerInteractor"
            ),
            False,
        )
    wi = state.worker_queue
    if not wi:
        return
    try:
        with wi.torun.lock() as queue:
            indices = [wi.nextitem_index, *list(queue)[:window]]
    except Exception:
        return
    all_items = item.session.items
    for i in indices:
        if isinstance(i, int) and 0 <= i < len(all_items):
            yield all_items[i]
