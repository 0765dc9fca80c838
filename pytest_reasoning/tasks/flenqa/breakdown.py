"""FLenQA's figure 1 over a run's rows: accuracy per target length for each (model, task,
padding, position), then the label bias (share of False answers against the balanced truth's
0.50) and, for chain-of-thought, the answer-first and key-sentence coverage shares — over every
answered row (a truncated reply counts as wrong, as its gate counts it)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..breakdown import Breakdown, Chart, Panel, answered, row_params

__all__ = ["length_breakdown", "length_of"]


def length_of(row: Mapping[str, Any]) -> tuple[str, str, int] | None:
    """A row's (padding, position, target length), from its item's knobs (else from the
    scorer's facts, in rows of older files)."""
    _, params = row_params(row)
    source: Mapping[str, Any] = params if "padding" in params else (row.get("extra") or {})
    try:
        position = "first" if source["padding"] == "duplicate" else source["position"]
        return str(source["padding"]), str(position), int(source["target_tokens"])
    except (KeyError, TypeError, ValueError):
        return None


def length_breakdown(rows: Sequence[Mapping[str, Any]], *, suites: bool) -> Breakdown | None:
    cells: dict[tuple[str, ...], dict[int, list[bool]]] = defaultdict(lambda: defaultdict(list))
    flags: dict[tuple[str, ...], list[Mapping[str, Any]]] = defaultdict(list)
    lengths: set[int] = set()
    for r in answered(rows):
        found = length_of(r)
        if found is None:
            continue
        padding, position, length = found
        suite = (str(r.get("suite") or ""),) if suites else ()
        key = (str(r["model"]), *suite, str(r["task"]), padding, position)
        lengths.add(length)
        cells[key][length].append(bool(r.get("correct")))
        flags[key].append(r)
    if not cells:
        return None
    order = sorted(lengths)
    headers = ("model", *(("suite",) if suites else ()), "task", "padding", "position")
    headers += (*map(str, order), "False share", "answer first", "coverage")
    table = []
    for key in sorted(cells):
        row = list(key)
        for length in order:
            hits = cells[key].get(length, [])
            row.append(f"{sum(hits) / len(hits):.2f} ({len(hits)})" if hits else "-")
        outs = flags[key]
        said = [o.get("extracted") for o in outs if o.get("extracted") in ("True", "False")]
        row.append(f"{said.count('False') / len(said):.2f}" if said else "-")
        cot = [o for o in outs if "coverage" in (o.get("extra") or {})]
        for flag in ("answer_first", "coverage"):
            row.append(f"{sum(bool(o['extra'][flag]) for o in cot) / len(cot):.2f}" if cot else "-")
        table.append(tuple(row))
    return Breakdown(
        "accuracy by input length (FLenQA)", headers, tuple(table), _chart(cells, order, suites)
    )


def _chart(
    cells: Mapping[tuple[str, ...], Mapping[int, list[bool]]], order: list[int], suites: bool
) -> Chart:
    """A panel per padding; a line per (model, position[, suite]) pooling the three tasks."""
    pooled: dict[tuple[str, str, str], dict[int, list[bool]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for key, by_length in cells.items():
        model, padding, position = key[0], key[-2], key[-1]
        label = f"{model} {position}" + (f" ({key[1]})" if suites else "")
        for length, hits in by_length.items():
            pooled[(padding, label, "")][length] += hits
    panels = []
    for padding in sorted({k[0] for k in pooled}):
        lines = []
        for (pad, label, _), by_length in sorted(pooled.items()):
            if pad == padding:
                ys = tuple(
                    sum(by_length[x]) / len(by_length[x]) if by_length.get(x) else None
                    for x in order
                )
                lines.append((label, ys))
        panels.append(Panel(f"padding: {padding}", tuple(map(str, order)), tuple(lines)))
    return Chart(
        "flenqa_length.png",
        "FLenQA: accuracy by input length, padding and position",
        "input length (tokens)",
        tuple(panels),
    )
