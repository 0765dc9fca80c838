"""Reading a model's JSON grid, and judging it cell by cell.

Extraction never raises: whatever the text, the result is a grid or a reason there is none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["extract_grid", "find_json", "norm"]

_MAX_SCAN = 200_000  # characters from the end of a response searched for JSON
_DECODER = json.JSONDecoder()
_OPEN = re.compile(r"[{\[]")


def norm(text: object) -> str:
    """A value as compared: case, spacing and surrounding punctuation ignored."""
    t = re.sub(r"\s+", " ", str(text)).strip().strip(".,;:!\"'`*").strip().lower()
    return t


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def find_json(text: str) -> tuple[Any, bool]:
    """The last top-level JSON object or array in ``text`` (code fences are fine), and
    whether the text tried to write one (an unparsable ``{`` counts as trying)."""
    text = text[-_MAX_SCAN:]
    found: Any = None
    tried = False
    pos = 0
    while True:
        m = _OPEN.search(text, pos)
        if m is None:
            return found, tried or found is not None
        if m.group(0) == "{":
            tried = True
        try:
            value, end = _DECODER.raw_decode(text, m.start())
        except (ValueError, RecursionError):
            pos = m.start() + 1
            continue
        if isinstance(value, dict | list) and value:
            found = value
        pos = max(end, m.start() + 1)


def _houses(obj: Any, n: int) -> list[Any] | None:
    """The list of N house entries inside a parsed JSON value, house 1 first."""
    if isinstance(obj, dict):
        for k, v in obj.items():  # {"reasoning": ..., "solution": {...}}
            if _key(str(k)) in {"solution", "answer", "grid", "houses", "finalanswer"}:
                return _houses(v, n)
        numbered: dict[int, Any] = {}
        for k, v in obj.items():
            m = re.fullmatch(r"\s*(?:house)?\s*#?\s*(\d+)\s*", str(k), re.IGNORECASE)
            if m is None:
                return None
            numbered[int(m.group(1))] = v
        if sorted(numbered) != list(range(1, n + 1)):
            return None
        return [numbered[i] for i in range(1, n + 1)]
    if isinstance(obj, list):
        if len(obj) != n:
            return None
        if all(isinstance(h, dict) for h in obj):
            # [{"House": 2, ...}, ...] may come in any order
            order = [_house_number(h) for h in obj]
            if sorted(o or 0 for o in order) == list(range(1, n + 1)):
                return [h for _, h in sorted(zip(order, obj, strict=True), key=lambda p: p[0] or 0)]
        return list(obj)
    return None


def _house_number(house: dict[Any, Any]) -> int | None:
    num = next((v for k, v in house.items() if _key(str(k)) == "house"), None)
    return int(num) if isinstance(num, int | str) and str(num).strip().isdigit() else None


def extract_grid(
    text: str, features: Mapping[str, Sequence[str]], n: int
) -> tuple[list[dict[str, str]] | None, str | None]:
    """``(grid, None)`` with each house's ``{feature: normalised value}`` (missing cells left
    out), or ``(None, failure mode)``: ``no_answer`` without any JSON, ``format`` otherwise."""
    obj, tried = find_json(text)
    if obj is None:
        return None, "format" if tried else "no_answer"
    houses = _houses(obj, n)
    if houses is None or not all(isinstance(h, dict) for h in houses):
        return None, "format"
    keys = {_key(f): f for f in features}
    grid: list[dict[str, str]] = []
    for house in houses:
        row: dict[str, str] = {}
        for k, v in house.items():
            nk = _key(str(k))
            f = keys.get(nk)
            if f is None:  # "Favourite Colour" for Color, "CarModel" for Car
                hits = [g for kk, g in keys.items() if kk and (kk in nk or nk in kk) and nk]
                f = hits[0] if len(hits) == 1 else None
            if f is not None and isinstance(v, str | int | float) and f not in row:
                row[f] = norm(v)
        grid.append(row)
    if not any(grid):  # JSON, but none of it names a feature
        return None, "format"
    return grid, None
