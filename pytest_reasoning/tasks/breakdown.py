"""A family's own breakdown of its results rows — FLenQA's accuracy by input length, ZebraLogic's
by puzzle size — as plain data that the report renders (terminal, Markdown, HTML, a chart):
the family knows what its items vary; ``report/`` special-cases no family."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Breakdown", "Chart", "Panel", "row_params"]


@dataclass(frozen=True)
class Panel:
    """One panel of a chart: lines over the x ticks (None: no point there)."""

    title: str
    x: tuple[str, ...]
    lines: tuple[tuple[str, tuple[float | None, ...]], ...]


@dataclass(frozen=True)
class Chart:
    file: str  # the PNG's name in the report folder
    caption: str
    x_label: str
    panels: tuple[Panel, ...]
    y_label: str = "accuracy"


@dataclass(frozen=True)
class Breakdown:
    """A table (strings, rendered as is) and, optionally, its chart. Every count in it must
    use the gate's denominator: every answered row, truncated and unreadable ones included."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    chart: Chart | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def row_params(row: Mapping[str, Any]) -> tuple[int | None, Mapping[str, Any]]:
    """An answered row's item index and knobs, which every row carries whatever its outcome
    (``extra.address``; a truncated reply has no scorer facts)."""
    extra = row.get("extra") or {}
    address = extra.get("address") if isinstance(extra, Mapping) else None
    if not isinstance(address, Mapping):
        return None, {}
    params = address.get("params")
    index = address.get("index")
    return (
        index if isinstance(index, int) else None,
        params if isinstance(params, Mapping) else {},
    )


def answered(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows a gate counts (failed calls and samples not asked are outside it)."""
    return [r for r in rows if r.get("error") is None and r.get("correct") is not None]
