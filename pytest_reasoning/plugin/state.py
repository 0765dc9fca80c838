"""Per-run state, kept in ``config.stash`` (no module globals): plain data the run's rooms
share — the options, the models, the evaluator, the embedded server's address, the collected
items in order for prefetching. It imports none of the rooms that use it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .options import RunOptions
from .signals import Signals

if TYPE_CHECKING:
    from ..core import Item
    from ..evaluate import Evaluator
    from .controller import Controller
    from .fixtures import LLM
    from .items import ReasoningItem
    from .progress import LiveCount, Ticker
    from .shards import Shard

__all__ = ["STATE", "RunState"]


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
        self.evaluator: Evaluator  # set by the run session once the local server runs
        self.items: list[ReasoningItem] = []  # the run's samples in the order they run
        self.order: dict[str, int] = {}  # node id → its place in ``items``
        self.built: dict[str, Item] = {}  # prefetched items, built once, kept until they run
        # Per sequential level: how far it may ask before the controller's first word.
        self.openings: dict[str, int] = {}
        self.llm: LLM | None = None
        self.controller: Controller | None = None  # only in the process that sees every report
        self.live: LiveCount | None = None  # the waiting line (a TTY, not -q, not xdist)
        self.ticker: Ticker | None = None  # its xdist controller's form
        self.selection: tuple[int, int] = (0, 0)  # (samples added for gates, partial gates)
        self.shard: Shard | None = None  # what --reasoning-shard K/N kept
        self.worker_queue: Any = None  # xdist's WorkerInteractor, once looked up (or False)
        self.signals = Signals()  # the controller's word on settled levels (see signals.py)
        # Per candidate: its comparisons in the selection (the Holm family of a sequential
        # comparison's early verdicts).
        self.families: dict[str, int] = {}

    def close(self) -> None:
        self.signals.close()
        evaluator = getattr(self, "evaluator", None)
        if evaluator is not None:
            evaluator.close()
        if self.local_server is not None:
            self.local_server.stop()


STATE = pytest.StashKey[RunState]()
