"""The pytest plugin. ``hooks`` is the entry point and only wires; the rooms:

- ``options``: the option table and ``RunOptions`` (built and checked once);
- ``state``: per-run state in ``config.stash``;
- ``items``: suite files as collectors, one item per sample, outcomes as user_properties;
- ``controller``: outcomes → store → gates → synthetic reports → exit status, the summary;
- ``xdist``: the only module that touches xdist's internals;
- ``fixtures``: ``llm`` and ``reasoning_results``.
"""

from __future__ import annotations

from .fixtures import LLM, ReasoningResults
from .items import ReasoningItem, ReasoningSuiteFile

__all__ = ["LLM", "ReasoningItem", "ReasoningResults", "ReasoningSuiteFile"]
