"""The pytest plugin. ``hooks`` is the door (the entry point: options, fixtures, and the run
session registered only when a model is named); the rooms:

- ``options``: the option table and ``RunOptions`` (built and checked once);
- ``state``: per-run data in ``config.stash``;
- ``session``: the run session, every hook of an active run;
- ``items``: suite files as collectors, one item per sample, outcomes as user_properties;
- ``controller``: outcomes → results file and verdict ledger → synthetic reports → exit status;
- ``batch``: ``--reasoning-batch``, the Batch API before the run loop;
- ``shards``, ``progress``, ``checks``; ``xdist``: the only module that touches xdist's internals;
- ``fixtures``: ``llm`` and ``reasoning_results``.
"""

from __future__ import annotations

from .fixtures import LLM, ReasoningResults

__all__ = ["LLM", "ReasoningResults"]
