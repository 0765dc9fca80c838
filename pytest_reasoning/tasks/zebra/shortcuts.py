"""Shortcut rules for ``zebra.grid`` (``pytest-reasoning audit``): fill the grid without
solving it. Each reads only the prompt text."""

from __future__ import annotations

import json
import re

from ...core import Item
from ..base import Shortcut

__all__ = ["ZEBRA"]

_FEATURE = re.compile(r"^- ([A-Za-z]+) \([^)]*\): (.+)$", re.M)


def _listing(prompt: str) -> list[tuple[str, list[str]]]:
    text = prompt[prompt.rfind("There are ") :]
    return [(m.group(1), m.group(2).split(", ")) for m in _FEATURE.finditer(text)]


def _listed_order(item: Item) -> str | None:
    features = _listing(item.prompt)
    if not features:
        return None
    n = len(features[0][1])
    grid = [{f: values[h] for f, values in features} for h in range(n)]
    return json.dumps(grid, ensure_ascii=False)


ZEBRA = (
    Shortcut(
        "listed order",
        "house h gets the h-th value each feature lists (the listing is alphabetical)",
        _listed_order,
    ),
)
