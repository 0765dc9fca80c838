"""Shortcut rules for ``zebra.grid`` (``pytest-reasoning audit``): fill the grid without
solving it. Each reads only the prompt text."""

from __future__ import annotations

import itertools
import json
import re

from ...core import Item
from ..base import Shortcut
from .solver import SolverError, parse_prompt

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


_MAX_ORDERS = 40_320  # 8! orders of one feature's values; past it a feature is listed as is


def _unary_clues(item: Item) -> str | None:
    """Each feature's values in the first order (of the listing's permutations) that the
    unary clues allow: a value a ``found_at`` clue puts in a house is there, and none is
    where a ``not_at`` clue says it is not. The relational clues are never read."""
    try:
        puzzle = parse_prompt(item.prompt)
    except SolverError:
        return None
    n = puzzle.houses
    at: dict[tuple[str, str], int] = {}
    never: set[tuple[str, str, int]] = set()
    for kind, (feature, value), _b, house in puzzle.clues:
        if house is None:
            continue
        if kind == "found_at":
            at[(feature, value)] = house
        elif kind == "not_at":
            never.add((feature, value, house))
    grid: list[dict[str, str]] = [{} for _ in range(n)]
    for feature, values in puzzle.features.items():
        order = values
        orders = itertools.permutations(values) if len(values) <= 8 else iter(())
        for k, candidate in enumerate(orders):
            if k >= _MAX_ORDERS:
                break
            if all(
                at.get((feature, v), h + 1) == h + 1 and (feature, v, h + 1) not in never
                for h, v in enumerate(candidate)
            ):
                order = list(candidate)
                break
        for h, v in enumerate(order):
            grid[h][feature] = v
    return json.dumps(grid, ensure_ascii=False)


ZEBRA = (
    Shortcut(
        "listed order",
        "house h gets the h-th value each feature lists (the listing is alphabetical)",
        _listed_order,
    ),
    Shortcut(
        "unary clues",
        "each feature's first order that the found_at / not_at clues allow (the clues "
        "relating two values unread): at 2x2 the task itself, docs/tasks/zebra.md",
        _unary_clues,
    ),
)
