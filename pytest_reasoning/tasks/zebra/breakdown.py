"""ZebraLogic by puzzle size over a run's rows: puzzle accuracy (every cell right) and cell
accuracy per size for each model — the paper's figure, and the way a bucket level (``XL``)
is read: its items draw their sizes in turn, so one level holds several sizes. Over every
answered row (a truncated reply has no grid: wrong, cell accuracy 0)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ...core import level_key
from ..breakdown import Breakdown, Chart, Panel, answered, row_params

__all__ = ["size_breakdown", "size_of"]


def size_of(row: Mapping[str, Any]) -> str | None:
    """A row's puzzle size ``NxM``: the scorer's fact, else its item's knobs (a bucket level
    gives item i the size ``sizes[i % len(sizes)]``), else its level."""
    extra = row.get("extra") or {}
    if isinstance(extra.get("size"), str):
        return str(extra["size"])
    index, params = row_params(row)
    sizes = params.get("sizes")
    if isinstance(sizes, list) and sizes and index is not None:
        return str(sizes[index % len(sizes)])
    if isinstance(params.get("houses"), int) and isinstance(params.get("features"), int):
        return f"{params['houses']}x{params['features']}"
    level = str(row.get("level", ""))
    return level if "x" in level else None


def size_breakdown(rows: Sequence[Mapping[str, Any]], *, suites: bool) -> Breakdown | None:
    groups: dict[tuple[str, ...], dict[str, list[tuple[bool, float]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in answered(rows):
        size = size_of(r)
        if size is None:
            continue
        key = (str(r["model"]), *((str(r.get("suite") or ""),) if suites else ()))
        score = r.get("score")
        credit = float(score) if isinstance(score, int | float) else float(bool(r["correct"]))
        groups[key][size].append((bool(r["correct"]), credit))
    if not groups:
        return None
    sizes = sorted({s for by in groups.values() for s in by}, key=level_key)
    headers = ("model", *(("suite",) if suites else ()), "size", "n", "puzzle", "cell")
    table = []
    lines = []
    for key in sorted(groups):
        by = groups[key]
        puzzle: list[float | None] = []
        cell: list[float | None] = []
        for size in sizes:
            got = by.get(size, [])
            if got:
                table.append(
                    (
                        *key,
                        size,
                        str(len(got)),
                        f"{sum(ok for ok, _ in got) / len(got):.2f}",
                        f"{sum(c for _, c in got) / len(got):.2f}",
                    )
                )
            puzzle.append(sum(ok for ok, _ in got) / len(got) if got else None)
            cell.append(sum(c for _, c in got) / len(got) if got else None)
        name = " ".join(key)
        lines += [(f"{name} puzzle", tuple(puzzle)), (f"{name} cell", tuple(cell))]
    chart = Chart(
        "zebra_sizes.png",
        "ZebraLogic: puzzle and cell accuracy by size",
        "puzzle size (houses x features)",
        (Panel("", tuple(sizes), tuple(lines)),),
    )
    return Breakdown("accuracy by puzzle size (ZebraLogic)", headers, tuple(table), chart)
