"""Per-run state, kept in ``config.stash`` (no module globals): the options, the models, the
evaluator (opened on first use), the embedded server's address, and the collected items in
order for prefetching."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from .options import RunOptions

if TYPE_CHECKING:
    from ..core import Item
    from ..evaluate import Evaluator
    from .controller import Controller
    from .fixtures import LLM
    from .items import ReasoningItem
    from .progress import LiveCount, Ticker
    from .shards import Shard

__all__ = ["LOOKAHEAD_PER_SLOT", "STATE", "RunState"]

LOOKAHEAD_PER_SLOT = 4


class RunState:
    def __init__(self, config: pytest.Config, options: RunOptions) -> None:
        self.config = config
        self.options = options
        self.models: list[str] = list(options.models)
        if options.baseline and options.baseline not in self.models:
            self.models.append(options.baseline)  # it answers the very same items
        self.is_worker = hasattr(config, "workerinput")
        self.local_url: str | None = None
        self.local_identity: str | None = None
        self.local_server: Any = None
        self._evaluator: Evaluator | None = None
        self.items: list[ReasoningItem] = []
        self.order: dict[str, int] = {}
        self.built: dict[str, Item] = {}
        self.llm: LLM | None = None
        self.controller: Controller | None = None  # only in the process that sees every report
        self.live: LiveCount | None = None  # the waiting line (a TTY, not -q, not xdist)
        self.ticker: Ticker | None = None  # its xdist controller's form
        self.selection: tuple[int, int] = (0, 0)  # (samples added for gates, partial gates)
        self.shard: Shard | None = None  # what --reasoning-shard K/N kept
        self._worker_queue: Any = None

    @property
    def evaluator(self) -> Evaluator:
        if self._evaluator is None:
            from ..evaluate import EvalConfig, Evaluator

            o = self.options
            self._evaluator = Evaluator(
                EvalConfig(
                    api_base=o.api_base,
                    params=o.params,
                    cache_dir=str(o.cache_dir) if o.cache_dir else None,
                    cache_url=o.cache_url,
                    concurrency=o.concurrency,
                    timeout_s=o.timeout_s,
                    attempts=o.retries,
                    local_url=self.local_url,
                    local_identity=self.local_identity,
                    models=o.model_specs,
                    lenient=o.lenient,
                )
            )
        return self._evaluator

    def set_items(self, items: list[pytest.Item]) -> None:
        """The run's items in the order they will run (after every plugin's selection)."""
        from .items import ReasoningItem

        self.items = [i for i in items if isinstance(i, ReasoningItem)]
        self.order = {i.nodeid: n for n, i in enumerate(self.items)}

    def upcoming(self, item: ReasoningItem) -> Iterator[ReasoningItem]:
        """The items this process will run next, ``item`` first (for concurrent prefetch)."""
        window = self.options.concurrency * LOOKAHEAD_PER_SLOT
        if not self.is_worker:
            start = self.order.get(item.nodeid, 0)
            yield from self.items[start : start + window]
            return
        from .xdist import worker_upcoming

        yield item
        yield from worker_upcoming(item, window)

    def close(self) -> None:
        if self._evaluator is not None:
            self._evaluator.close()
        if self.local_server is not None:
            self.local_server.stop()


STATE = pytest.StashKey[RunState]()
