"""The report's plots (matplotlib, the ``[analysis]`` extra): accuracy by level, FLenQA by
length, zebra sizes, failure-mode shares, candidate against baseline. Without matplotlib the
report still has every table."""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..core import level_key
from ..gates import Comparison
from ..stats import wilson_interval
from .cells import Cell
from .tables import length_key

__all__ = ["Gated", "plots", "plots_unavailable"]

# (task, level) → (min_accuracy or None, metric): what the run's gates measured, so every plot
# shows the gated number and its threshold.
Gated = Mapping[tuple[str, str], tuple[float | None, str]]


def plots_unavailable() -> str | None:
    """Why the report has no plots (matplotlib cannot be imported), or None."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        return (
            f"no plots: matplotlib cannot be imported ({exc}); pip install "
            "'pytest-reasoning[analysis]' for them (the report has every table)"
        )
    return None


def plots(
    cells: Mapping[tuple[str, str, str], Cell],
    rows: Sequence[Mapping[str, Any]],
    comparisons: Sequence[Comparison],
    out: str,
    gated: Gated | None = None,
) -> list[tuple[str, str]]:
    """(title, path) of each PNG written; none without matplotlib. ``gated`` (from a run's
    gates) draws each level's threshold and plots cell accuracy where that is what a level
    is gated on."""
    gated = gated or {}
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written: list[tuple[str, str]] = []

    def save(fig: Any, name: str, title: str) -> None:
        path = os.path.join(out, name)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append((title, path))

    models = sorted({c.model for c in cells.values()})
    tasks = sorted({c.task for c in cells.values()})
    # 1. Accuracy against difficulty level, per task (DyVal's figure 2 shape).
    cols = min(3, len(tasks))
    rows_n = math.ceil(len(tasks) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 3.0 * rows_n), squeeze=False)
    for ax, task in zip(axes.flat, tasks, strict=False):
        levels = sorted({c.level for c in cells.values() if c.task == task}, key=level_key)
        # The gated measure: cell accuracy for levels gated with ``metric: cell``.
        cell = any(gated.get((task, lv), (None, ""))[1] == "cell" for lv in levels)
        for m in models:
            pts = [
                (i, cells[(m, task, lv)]) for i, lv in enumerate(levels) if (m, task, lv) in cells
            ]
            pts = [(i, c) for i, c in pts if c.n]
            if not pts:
                continue
            xs = [i for i, _ in pts]
            hits = [c.score if cell else c.correct for _, c in pts]
            ys = [h / c.n for h, (_, c) in zip(hits, pts, strict=True)]
            ci = [wilson_interval(h, c.n) for h, (_, c) in zip(hits, pts, strict=True)]
            err = [  # clipped: Wilson's bound can round a hair past the estimate
                [max(0.0, y - lo) for y, (lo, _) in zip(ys, ci, strict=True)],
                [max(0.0, hi - y) for y, (_, hi) in zip(ys, ci, strict=True)],
            ]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=m)
        _thresholds(ax, [gated.get((task, lv), (None, ""))[0] for lv in levels])
        ax.set_xticks(range(len(levels)), levels, rotation=45 if len(levels) > 6 else 0)
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(task, fontsize=9)
        ax.set_ylabel("cell accuracy (gated)" if cell else "accuracy")
    for ax in list(axes.flat)[len(tasks) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    save(
        fig,
        "accuracy_by_level.png",
        "Accuracy by difficulty level (the gated measure, 95% Wilson intervals"
        + ("; red dashes: thresholds)" if any(t for t, _ in gated.values()) else ")"),
    )

    # 2. FLenQA: accuracy against input length, per padding and position (its figure 1).
    # Every answered row counts, truncated ones too (the gate's own denominator).
    flen = [(r, key) for r in rows if (key := length_key(r)) is not None]
    if flen:
        groups: dict[tuple[str, str, str], dict[int, list[bool]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for r, (padding, position, length) in flen:
            groups[(r["model"], padding, position)][length].append(bool(r["correct"]))
        paddings = sorted({k[1] for k in groups})
        fig, axes = plt.subplots(
            1, len(paddings), figsize=(4.2 * len(paddings), 3.2), squeeze=False
        )
        for ax, padding in zip(axes.flat, paddings, strict=True):
            for (m, pad, pos), by_len in sorted(groups.items()):
                if pad != padding:
                    continue
                xs = sorted(by_len)
                ax.plot(
                    xs,
                    [sum(by_len[x]) / len(by_len[x]) for x in xs],
                    marker="o",
                    label=f"{m} {pos}",
                )
            ax.set_title(f"padding: {padding}", fontsize=9)
            ax.set_xlabel("input length (tokens)")
            ax.set_ylim(-0.05, 1.05)
            ax.legend(fontsize=6)
        save(fig, "flenqa_length.png", "FLenQA: accuracy by input length, padding and position")

    # 3. Zebra: puzzle and cell accuracy per size.
    zebra = sorted(
        (c for c in cells.values() if c.task == "zebra.grid" and c.n),
        key=lambda c: level_key(c.level),
    )
    if zebra:
        sizes = sorted({c.level for c in zebra}, key=level_key)
        metric = {s: gated.get(("zebra.grid", s), (None, ""))[1] for s in sizes}
        fig, ax = plt.subplots(figsize=(max(5, 0.45 * len(sizes) + 2), 3.2))
        for m in models:
            mine = {c.level: c for c in zebra if c.model == m}
            xs = [i for i, s in enumerate(sizes) if s in mine]
            gated_on = {k for s, k in metric.items() if s in mine and k}
            ax.plot(
                xs,
                [mine[sizes[i]].correct / mine[sizes[i]].n for i in xs],
                marker="o",
                label=f"{m} puzzle" + (" (gated)" if gated_on == {"accuracy"} else ""),
            )
            ax.plot(
                xs,
                [mine[sizes[i]].score / mine[sizes[i]].n for i in xs],
                marker="s",
                ls="--",
                label=f"{m} cell" + (" (gated)" if gated_on == {"cell"} else ""),
            )
        _thresholds(ax, [gated.get(("zebra.grid", s), (None, ""))[0] for s in sizes])
        ax.set_xticks(range(len(sizes)), sizes, rotation=45)
        ax.set_ylim(-0.05, 1.05)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        save(fig, "zebra_sizes.png", "ZebraLogic: puzzle and cell accuracy by size")

    # 4. Failure-mode shares per level, stacked.
    keys = sorted(cells, key=lambda k: (k[0], k[1], level_key(k[2])))
    modes = sorted({m for c in cells.values() for m in c.modes})
    fig, ax = plt.subplots(figsize=(max(6, 0.32 * len(keys) + 2) + 1.6, 3.6))
    bottom = [0.0] * len(keys)
    for name in ["correct", *modes, "error"]:
        shares = []
        for k in keys:
            c = cells[k]
            total = c.n + c.errors
            v = c.correct if name == "correct" else c.errors if name == "error" else c.modes[name]
            shares.append(v / total if total else 0.0)
        ax.bar(range(len(keys)), shares, bottom=bottom, label=name)
        bottom = [b + s for b, s in zip(bottom, shares, strict=True)]
    ax.set_xticks(
        range(len(keys)),
        [f"{k[1].split('.')[-1]} {k[2]}" + (f" ({k[0]})" if len(models) > 1 else "") for k in keys],
        rotation=90,
        fontsize=6,
    )
    ax.set_ylabel("share of samples")
    # Beside the bars, not over them.
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save(fig, "failure_modes.png", "Outcomes per level: correct, each failure mode, errors")

    # 5. Candidate against baseline per level, with the paired difference.
    if comparisons:
        fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(comparisons) + 2), 3.4))
        xs = list(range(len(comparisons)))
        diffs = [c.table.difference for c in comparisons]
        err = [
            [max(0.0, d - c.low) for d, c in zip(diffs, comparisons, strict=True)],
            [max(0.0, c.high - d) for d, c in zip(diffs, comparisons, strict=True)],
        ]
        colors = ["#c33" if c.regressed else "#393" if c.improved else "#555" for c in comparisons]
        ax.bar(xs, diffs, color=colors)
        ax.errorbar(xs, diffs, yerr=err, fmt="none", ecolor="k", capsize=3)
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xticks(
            xs, [f"{c.spec.entry} {c.spec.level}" for c in comparisons], rotation=60, fontsize=7
        )
        ax.set_ylabel("candidate − baseline accuracy")
        save(
            fig,
            "baseline.png",
            f"Candidate against baseline ({comparisons[0].baseline}), paired, 95% intervals",
        )
    return written


def _thresholds(ax: Any, values: Sequence[float | None]) -> None:
    """A red dash at each level's threshold (x = the level's position)."""
    for i, value in enumerate(values):
        if value is not None:
            ax.hlines(value, i - 0.35, i + 0.35, colors="#c33", linestyles="--", lw=1.2)
