"""The pytest plugin. ``hooks`` is the door (the entry point: options, fixtures, and the run
session registered only when a model is named); the rooms:

- ``flags``: the option table; ``options``: ``RunOptions`` (built and checked once);
- ``state``: per-run data in ``config.stash`` (data only: no room in it);
- ``session``: the run session, every hook of an active run; it owns the controller, the live
  count and the shard;
- ``items``: suite files as collectors, one item per sample;
- ``sample``: ``SampleReport``, what a sample's process tells the controller (one ``LevelRef``);
- ``controller``: sample reports → results file and verdict ledger → synthetic reports → exit
  status;
- ``batch``: ``--reasoning-batch``, the Batch API before the run loop;
- ``shards``, ``progress``, ``checks``; ``xdist``: the only module that touches xdist's internals;
- ``fixtures``: ``llm`` and ``reasoning_results``.
"""

from __future__ import annotations

from .fixtures import LLM, ReasoningResults

__all__ = ["LLM", "ReasoningResults"]
