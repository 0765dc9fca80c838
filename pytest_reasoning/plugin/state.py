"""Per-run state, kept in ``config.stash`` (no module globals): plain data the run's rooms
share — the options, the models, the evaluator, the embedded server's address, where each
selected test stands in the run loop and what prefetch built ahead, the controller's word
(``Signals``). It imports none of the rooms that use it, even for types: the rooms (the
controller, the live count, the shard) belong to the run session (``session.py``), which
hands each what it needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..gates.store import files_prompts
from .options import RunOptions
from .signals import Signals

if TYPE_CHECKING:
    from ..core import Item
    from ..evaluate import Evaluator
    from .sample import LevelRef

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
        # Node id → its place in the session's items (the run loop's order, for prefetch).
        self.order: dict[str, int] = {}
        self.built: dict[str, Item] = {}  # prefetched items, built once, kept until they run
        # Per sequential level: how far it may ask before the controller's first word.
        self.openings: dict[LevelRef, int] = {}
        self.test = ""  # the node id of the test running (the llm fixture's budget is per test)
        self.selection: tuple[int, int] = (0, 0)  # (samples added for gates, partial gates)
        self.worker_queue: Any = None  # xdist's WorkerInteractor, once looked up (or False)
        self.signals = Signals()  # the controller's word on settled levels (see signals.py)
        # Per candidate: its comparisons in the selection (the Holm family of a sequential
        # comparison's early verdicts).
        self.families: dict[str, int] = {}
        self.sent_prompts: set[str] = set()  # prompts' hashes this process sent (sample.PROMPT)
        # Whether the controller uses a prompt sent to it: a report shows it, or a results
        # file has a prompts file beside it (not ``-``, a FIFO or a device).
        self.sends_prompts = bool(options.report_dir) or files_prompts(options.results)

    def close(self) -> None:
        self.signals.close()
        evaluator = getattr(self, "evaluator", None)
        if evaluator is not None:
            evaluator.close()
        if self.local_server is not None:
            self.local_server.stop()


STATE = pytest.StashKey[RunState]()
