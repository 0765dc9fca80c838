"""The report's plots (matplotlib, the ``[analysis]`` extra): accuracy by level, FLenQA by
length, zebra sizes, failure-mode shares, candidate against baseline. Without matplotlib the
report still has every table.

Suites are kept apart: each suite's plots are its own figures (its own files, a section of
the page each, with its own thresholds), every number is the gate's own (its measure, interval
and denominator: truncated and unanswered samples count, failed calls do not), and no label is
cut: long names wrap, each figure is laid out to hold every label."""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import os
import textwrap
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from ..core import level_key
from ..errors import printable
from ..files import write_output_bytes
from ..gates import Comparison
from .cells import Cell, CellKey
from .tables import breakdowns

__all__ = ["Plot", "plots", "plots_unavailable"]

WRAP = 28  # characters per line of a label
# A figure's height is bounded: past these, a plot is cut into pages (``name_2.png``, …),
# each at most about 1,100 px tall (192 levels made a 7,400 px figure); its width too.
BARS = 48  # bars (levels) per bar chart, fewer where labels take several lines
BAR_IN = 0.18  # inches a bar of one-line label takes
PANEL_ROWS = 4  # rows of three panels per accuracy figure
TICK_IN = 0.2  # inches a level takes in a wide accuracy panel: labels at 45° stay apart
PANEL_MAX_IN = 12.0  # the widest a panel grows (55 levels named; past them, every k-th)
DPI = 110
# The ticks matplotlib's locator puts on 0-1 (less the two past the limits it would make).
SHARES = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


class Plot(NamedTuple):
    """A plot written: its caption, its file, and the suite it shows."""

    title: str
    path: str
    suite: str


class _Figures:
    """``plt.subplots`` without pyplot's global state: a Figure on its own Agg canvas, at the
    PNG's resolution (one renderer lays it out and draws it); the figures share their texts'
    images (a label, a tick value, a legend entry is laid out and rendered once)."""

    def __init__(self) -> None:
        from matplotlib.figure import Figure

        self._figure, self._canvas = Figure, _canvas()
        self._texts: dict[Any, Any] = {}

    def subplots(self, *args: Any, figsize: tuple[float, float], **kw: Any) -> tuple[Any, Any]:
        gc.collect(0)  # the figure before, dropped (see ``_young``)
        fig = self._figure(figsize=figsize, dpi=DPI)
        self._canvas(fig, self._texts)
        return fig, fig.subplots(*args, **kw)


@functools.cache
def _canvas() -> Any:
    """An Agg canvas whose renderer lays a text out once for its size and its drawing, and
    draws it as one image, as matplotlib did up to 3.10 (3.11 lays each text out again to
    draw it and renders it glyph by glyph through Python: ~80 µs a glyph, 4 of the 11 s that
    28 figures of 10,000 samples took; docs/benchmarks.md, "The plots stage"). The image is
    the string's at the origin: ``draw_text_image`` places and rotates it."""
    from matplotlib.backends import backend_agg

    agg: Any = backend_agg  # (untyped)
    # The parts of Agg this leans on are not public: where a matplotlib (>=3.8 is allowed)
    # lacks one, its own canvas draws the figures (the same plots, at its own speed).
    if not all(
        hasattr(obj, name)
        for obj, name in (
            (agg, "get_hinting_flag"),
            (agg.RendererAgg, "_prepare_font"),
            (agg.FigureCanvasAgg, "get_renderer"),
        )
    ):
        return _PlainCanvas

    class Renderer(agg.RendererAgg):  # type: ignore[misc]
        def __init__(self, width: int, height: int, dpi: float, texts: dict[Any, Any]) -> None:
            super().__init__(width, height, dpi)
            self.texts = texts

        def _text(self, s: str, prop: Any) -> Any:
            """(width, height, descent, image, its offset) of ``s``, antialiased."""
            key = (s, prop.copy(), self.dpi)  # (a FontProperties' hash follows its state)
            got = self.texts.get(key)
            if got is None:
                font = self._prepare_font(prop)
                font.set_text(s, 0, flags=agg.get_hinting_flag())
                font.draw_glyphs_to_bitmap(antialiased=True)
                w, h = font.get_width_height()
                got = (w / 64, h / 64, font.get_descent() / 64, font.get_image().copy(),
                       font.get_bitmap_offset())  # fmt: skip
                self.texts[key] = got
            return got

        def get_text_width_height_descent(self, s: str, prop: Any, ismath: Any) -> Any:
            if ismath:
                return super().get_text_width_height_descent(s, prop, ismath)
            return self._text(s, prop)[:3]

        def draw_text(
            self, context: Any, x: float, y: float, s: str, prop: Any, angle: float,
            ismath: Any = False, mtext: Any = None,
        ) -> None:  # fmt: skip
            if ismath or not context.get_antialiased():
                super().draw_text(context, x, y, s, prop, angle, ismath, mtext)
                return
            _, _, d, image, (xo, yo) = self._text(s, prop)
            rad = math.radians(angle)
            x = round(x + xo / 64 + d * math.sin(rad))
            y = round(y + yo / 64 + d * math.cos(rad))
            self._renderer.draw_text_image(image, x, y + 1, angle, context)

    class Canvas(agg.FigureCanvasAgg):  # type: ignore[misc]
        def __init__(self, figure: Any, texts: dict[Any, Any]) -> None:
            super().__init__(figure)
            self.texts = texts

        def get_renderer(self) -> Any:  # FigureCanvasAgg's, with the renderer above
            (w, h), dpi = self.get_width_height(physical=True), self.figure.dpi
            if getattr(self, "_lastKey", None) != (w, h, dpi):
                self.renderer, self._lastKey = Renderer(w, h, dpi, self.texts), (w, h, dpi)
            return self.renderer

    return Canvas


class _PlainCanvas:
    """matplotlib's own Agg canvas for a figure (no texts shared)."""

    def __new__(cls, figure: Any, texts: dict[Any, Any]) -> Any:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        return FigureCanvasAgg(figure)


def _paged(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    """``items`` in the fewest pages of at most ``size``, as even as can be (100 bars make
    pages of 34, 33 and 33, not 48, 48 and 4)."""
    pages = max(1, math.ceil(len(items) / size))
    even = math.ceil(len(items) / pages) if items else size
    return [items[i : i + even] for i in range(0, len(items), even)] or [items]


def _page_name(name: str, page: int, pages: int) -> tuple[str, str]:
    """(file name, caption suffix) of page ``page`` (0-based) of a plot cut into ``pages``."""
    if pages == 1:
        return name, ""
    stem, ext = os.path.splitext(name)
    return (name if page == 0 else f"{stem}_{page + 1}{ext}"), f" ({page + 1} of {pages})"


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


def _wrap(text: str, width: int = WRAP) -> str:
    """A label (model names, entries: anyone's text) on lines of ``width``, shown inert."""
    lines = textwrap.wrap(printable(text), width, break_long_words=True, break_on_hyphens=True)
    return "\n".join(lines)


def plots(
    cells: Mapping[CellKey, Cell],
    rows: Sequence[Mapping[str, Any]],
    comparisons: Sequence[Comparison],
    out: str,
    uncounted: Collection[tuple[Any, ...]] = (),
) -> list[Plot]:
    """Each plot written (PNG), suite by suite in suite order; none without matplotlib. Each
    cell's stats carry its gate's rule: the plots show the gated measure and threshold (and
    the breakdowns leave out ``uncounted``, as the gates did). One suite's files are named as
    they always were (``accuracy_by_level.png``); of several, the n-th suite's file names
    start with ``suite<n>_``."""
    try:
        plt = _Figures()
    except ImportError:
        return []
    written: list[Plot] = []
    # The gates' suites (a run's levels name them; its rows may not, if given apart).
    suites = sorted({c.suite for c in cells.values()} | {c.spec.suite for c in comparisons})
    suites = suites or sorted({str(r.get("suite") or "") for r in rows})
    models = sorted({c.model for c in cells.values()})
    modes = sorted({m for c in cells.values() for m in c.modes})  # the same colours everywhere
    apart = len(suites) > 1
    with _young():
        for n, suite in enumerate(suites, 1):
            prefix = os.path.join(out, f"suite{n}_" if apart else "")
            save = functools.partial(_save, plt, prefix, suite, written)
            mine = {k: c for k, c in cells.items() if c.suite == suite}
            _accuracy(plt, mine, models, save)
            of = [r for r in rows if str(r.get("suite") or "") == suite] if apart else rows
            _breakdowns(plt, of, uncounted, save)
            _outcomes(plt, mine, models, modes, save)
            ours = [c for c in comparisons if c.spec.suite == suite]
            if ours:
                _baseline(plt, ours, save)
    return written


@contextlib.contextmanager
def _young() -> Iterator[None]:
    """Only the youngest objects collected while the figures are drawn, each time a figure
    is begun: a figure is thousands of objects in reference cycles, which made Python's
    automatic collections traverse the whole heap (the report's rows and samples) three
    times or more, ~0.25 s each at 10,000 samples; the dropped figure is all young."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.collect(0)
        if enabled:
            gc.enable()


def _save(
    plt: Any,
    prefix: str,
    suite: str,
    written: list[Plot],
    fig: Any,
    name: str,
    title: str,
) -> None:
    path = prefix + name
    # One layout pass fits every label in the figure (none cut off, panels apart), with the
    # renderer the PNG is drawn with: the draw reuses its text metrics. (bbox_inches="tight"
    # cost another layout pass and, the figure cropped to a new size, every text measured
    # again; see docs/benchmarks.md, "The plots stage".)
    with warnings.catch_warnings():  # a glyph the font lacks (anyone's text) draws as a box
        warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
        fig.tight_layout(pad=0.4)
        fig.canvas.draw()  # (savefig would lay the figure out once more)
    # The PNG without its alpha (the figure is opaque) and with zlib's fastest level: its
    # filters do most of the work on flat colours (the files are as small as matplotlib's
    # RGBA at level 6, in 60% of the time).
    from PIL import Image

    size = fig.canvas.get_width_height(physical=True)
    image = Image.frombuffer("RGBA", size, fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    with write_output_bytes(path) as fh:  # the one writer: whole or not at all
        image.convert("RGB").save(fh, "png", compress_level=1, dpi=(DPI, DPI))
    written.append(Plot(title, path, suite))


def _accuracy(
    plt: Any, cells: Mapping[CellKey, Cell], models: list[str], save: Any
) -> None:
    """1. The gated measure against difficulty level, a panel per entry (of one suite)."""
    every = sorted({(c.suite, c.entry) for c in cells.values()})
    if not every:
        return
    pages = _paged(every, 3 * PANEL_ROWS)
    for page, panels in enumerate(pages):
        _accuracy_page(plt, cells, models, save, panels, page, len(pages))


def _accuracy_page(
    plt: Any,
    cells: Mapping[CellKey, Cell],
    models: list[str],
    save: Any,
    panels: Sequence[tuple[str, str]],
    page: int,
    pages: int,
) -> None:
    cols = min(3, len(panels))
    rows_n = math.ceil(len(panels) / cols)
    # Wide enough for the most levels a panel has: labels at 45° stay apart at TICK_IN a
    # level (a 10-point line is 0.14 in; neighbours at 45° lie 0.7 × the spacing apart).
    levels_of: dict[tuple[str, str], set[str]] = {panel: set() for panel in panels}
    for c in cells.values():
        if (c.suite, c.entry) in levels_of:
            levels_of[(c.suite, c.entry)].add(c.level)
    wide = min(PANEL_MAX_IN, max(4.2, TICK_IN * max(len(v) for v in levels_of.values()) + 1.0))
    fig, axes = plt.subplots(rows_n, cols, figsize=(wide * cols, 3.2 * rows_n), squeeze=False)
    thresholds = False
    for ax, (suite, entry) in zip(axes.flat, panels, strict=False):
        mine = [c for c in cells.values() if (c.suite, c.entry) == (suite, entry)]
        levels = sorted({c.level for c in mine}, key=level_key)
        # The panel's gated measure, as its metric names it (levels may gate different ones).
        named = sorted({c.stats.spec.rule.gauge.label for c in mine} - {"accuracy"})
        for m in models:
            pts = [(levels.index(c.level), c.stats) for c in mine if c.model == m and c.n]
            if not pts:
                continue
            pts.sort()
            xs = [i for i, _ in pts]
            ys = [s.measure or 0.0 for _, s in pts]
            ci = [s.interval(0.95) for _, s in pts]
            err = [  # clipped: an interval can round a hair past the estimate
                [max(0.0, y - lo) for y, (lo, _) in zip(ys, ci, strict=True)],
                [max(0.0, hi - y) for y, (_, hi) in zip(ys, ci, strict=True)],
            ]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=_wrap(m))
        limits: dict[str, float] = {}
        for c in mine:
            if c.stats.spec.rule.min_accuracy is not None:
                limits[c.level] = c.stats.spec.rule.min_accuracy
        thresholds |= bool(limits)
        _thresholds(ax, [limits.get(lv) for lv in levels], "#c33", "--")
        # Past what the widest panel holds, every k-th level is named (each keeps its tick).
        step = math.ceil(len(levels) / max(1, int((wide - 1.0) / TICK_IN + 1e-9)))
        named_levels = [lv if i % step == 0 else "" for i, lv in enumerate(levels)]
        ax.set_xticks(range(len(levels)), named_levels, rotation=45 if len(levels) > 6 else 0)
        ax.set_ylim(-0.05, 1.05)
        ax.set_yticks(SHARES)
        # y=1.0, where matplotlib would place it (nothing above the panel): placed, it is
        # not placed again at each layout and draw (7 ms a panel, y axis measured 3 times).
        ax.set_title(_wrap(entry, 40), fontsize=9, y=1.0)
        ax.set_ylabel(
            "accuracy" if not named else f"{named[0]} (gated)" if len(named) == 1 else "gated"
        )
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    name, part = _page_name("accuracy_by_level.png", page, pages)
    save(
        fig,
        name,
        "Accuracy by difficulty level (the gated measure, 95% intervals"
        + ("; red dashes: each suite's thresholds)" if thresholds else ")")
        + part,
    )


def _breakdowns(
    plt: Any,
    rows: Sequence[Mapping[str, Any]],
    uncounted: Collection[tuple[Any, ...]],
    save: Any,
) -> None:
    """2. Each family's own chart (FLenQA by length, ZebraLogic by size): a panel per
    ``Panel``, a line per series, from the family's ``Breakdown``."""
    for b in breakdowns(rows, uncounted):
        chart = b.chart
        if chart is None or not chart.panels:
            continue
        n = len(chart.panels)
        ticks = max(len(p.x) for p in chart.panels)
        wide = max(4.2, 0.45 * ticks + 2)
        fig, axes = plt.subplots(1, n, figsize=(wide * n, 3.2), squeeze=False)
        for ax, panel in zip(axes.flat, chart.panels, strict=True):
            for label, ys in panel.lines:
                pts = [(i, y) for i, y in enumerate(ys) if y is not None]
                if pts:
                    ax.plot(*zip(*pts, strict=True), marker="o", label=_wrap(label))
            ax.set_xticks(range(len(panel.x)), panel.x, rotation=45 if len(panel.x) > 6 else 0)
            if panel.title:
                ax.set_title(_wrap(panel.title, 40), fontsize=9, y=1.0)  # (as above)
            ax.set_xlabel(chart.x_label)
            ax.set_ylabel(chart.y_label)
            ax.set_ylim(-0.05, 1.05)
            ax.set_yticks(SHARES)
            ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        save(fig, chart.file, chart.caption)


def _outcomes(
    plt: Any,
    cells: Mapping[CellKey, Cell],
    models: list[str],
    modes: list[str],
    save: Any,
) -> None:
    """4. Outcome shares per level over the gate's denominator (every scored sample:
    truncated and unanswered ones included), as horizontal bars whose labels read whole;
    failed calls, outside the denominator, are counted at the end of the bar."""
    every = sorted(cells, key=lambda k: (k[1], k[2], level_key(k[3]), k[0]))
    if not every:
        return
    # Each outcome keeps its colour in every suite's figures; a suite's figures show only
    # the modes it has.
    colours = {name: f"C{i % 10}" for i, name in enumerate(["correct", *modes])}
    shown = [m for m in modes if any(c.modes[m] for c in cells.values())]
    several = len(models) > 1
    labels = [_wrap(f"{e} {lv}" + (f" ({m})" if several else ""), 70) for m, _, e, lv in every]
    pages = _paged(list(zip(every, labels, strict=True)), _bars_a_page(labels))
    for page, bars in enumerate(pages):
        keys, shown_labels = [k for k, _ in bars], [label for _, label in bars]
        _outcomes_page(plt, cells, shown_labels, save, colours, shown, keys, page, len(pages))


def _outcomes_page(
    plt: Any,
    cells: Mapping[CellKey, Cell],
    labels: Sequence[str],
    save: Any,
    colours: Mapping[str, str],
    modes: list[str],
    keys: Sequence[CellKey],
    page: int,
    pages: int,
) -> None:
    fig, ax = plt.subplots(figsize=(8.5, max(2.4, _bar_height(labels) * len(keys) + 1.2)))
    ys = list(range(len(keys)))[::-1]  # the first level on top
    left = [0.0] * len(keys)
    for name in ["correct", *modes]:
        shares = []
        for k in keys:
            c = cells[k]
            v = c.correct if name == "correct" else c.modes[name]
            shares.append(v / c.n if c.n else 0.0)
        _barh(ax, ys, shares, left, colours[name], label=name)
        left = [a + b for a, b in zip(left, shares, strict=True)]
    for y, k in zip(ys, keys, strict=True):
        c = cells[k]
        note = f"n={c.n}" + (f", +{c.errors} failed call(s)" if c.errors else "")
        ax.text(1.01, y, note, va="center", fontsize=6)
    _yticks(ax, ys, labels)
    ax.set_ylim(-0.6, len(keys) - 0.4)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of scored samples\n(the gate's denominator)")  # (as in _baseline_page)
    ax.legend(fontsize=6, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=4)
    name, part = _page_name("failure_modes.png", page, pages)
    save(
        fig,
        name,
        "Outcomes per level over the gate's denominator: correct and each failure mode "
        "(failed calls, outside it, noted at the end of each bar)" + part,
    )


def _baseline(plt: Any, comparisons: Sequence[Comparison], save: Any) -> None:
    """5. Candidate − baseline per level with its paired interval, as horizontal bars: a
    level's name reads whole at any length."""
    candidates = len({c.candidate for c in comparisons}) > 1
    every = sorted(
        comparisons,
        key=lambda c: (c.spec.suite, c.spec.entry, level_key(c.spec.level), c.candidate),
    )
    labels = [
        _wrap(f"{c.spec.entry} {c.spec.level}" + (f" ({c.candidate})" if candidates else ""), 70)
        for c in every
    ]
    pages = _paged(list(zip(every, labels, strict=True)), _bars_a_page(labels))
    for page, bars in enumerate(pages):
        mine, shown_labels = [c for c, _ in bars], [label for _, label in bars]
        _baseline_page(plt, mine, shown_labels, save, page, len(pages))


def _baseline_page(
    plt: Any,
    comparisons: Sequence[Comparison],
    labels: Sequence[str],
    save: Any,
    page: int,
    pages: int,
) -> None:
    n = len(comparisons)
    fig, ax = plt.subplots(figsize=(7.5, max(2.4, _bar_height(labels) * n + 1.2)))
    ys = list(range(n))[::-1]  # the first comparison on top
    diffs = [c.difference for c in comparisons]
    err = [
        [max(0.0, d - c.low) for d, c in zip(diffs, comparisons, strict=True)],
        [max(0.0, c.high - d) for d, c in zip(diffs, comparisons, strict=True)],
    ]
    colors = ["#c33" if c.regressed else "#393" if c.improved else "#777" for c in comparisons]
    _barh(ax, ys, diffs, [0.0] * n, colors)
    ax.errorbar(diffs, ys, xerr=err, fmt="none", ecolor="k", capsize=3)
    ax.axvline(0, color="k", lw=0.8)
    _yticks(ax, ys, labels)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(-1.05, 1.05)
    # Two lines: long level names narrow the bars, and one line would run past the figure.
    ax.set_xlabel("candidate − baseline accuracy\n(red: regression, green: improved)")
    name, part = _page_name("baseline.png", page, pages)
    save(
        fig,
        name,
        f"Candidate against baseline ({comparisons[0].baseline}), paired, 95% intervals" + part,
    )


def _thresholds(ax: Any, values: Sequence[float | None], color: str, style: Any) -> None:
    """A dash at each level's threshold (x = the level's position), one collection."""
    at = [(i, value) for i, value in enumerate(values) if value is not None]
    if at:
        ax.hlines([v for _, v in at], [i - 0.35 for i, _ in at], [i + 0.35 for i, _ in at],
                  colors=color, linestyles=style, lw=1.2)  # fmt: skip


def _barh(
    ax: Any, ys: Sequence[float], widths: Sequence[float], lefts: Sequence[float],
    colours: str | Sequence[str], label: str | None = None,
) -> None:  # fmt: skip
    """``ax.barh(ys, widths, left=lefts, height=0.8, color=colours, label=label)`` as one
    collection of rectangles, not a patch each (a patch costs ~1 ms to build and draw); the
    axes' limits are set by the caller."""
    from matplotlib.collections import PolyCollection

    boxes = [
        [(x0, y - 0.4), (x0, y + 0.4), (x0 + w, y + 0.4), (x0 + w, y - 0.4)]
        for y, w, x0 in zip(ys, widths, lefts, strict=True)
    ]
    bars = PolyCollection(boxes, facecolors=colours, edgecolors="none", linewidths=0)
    if label is not None:
        bars.set_label(label)
    ax.add_collection(bars, autolim=False)


def _bar_height(labels: Collection[str]) -> float:
    """Inches a bar takes: room for the longest label's lines at 6 points (0.1 in a line,
    as matplotlib spaces them, and a gap); a label of two lines or more overlapped its
    neighbours' at the one-line height."""
    lines = max((label.count("\n") + 1 for label in labels), default=1)
    return max(BAR_IN, 0.1 * lines + 0.04)


def _bars_a_page(labels: Collection[str]) -> int:
    """Bars a page of a bar chart holds: BARS at the one-line height, fewer for taller
    labels, so that a page's height stays bounded whatever the labels' length."""
    return max(1, math.floor(BARS * BAR_IN / _bar_height(labels) + 1e-9))


def _yticks(ax: Any, ys: Sequence[float], labels: Sequence[str]) -> None:
    """``ax.set_yticks(ys, labels, fontsize=6)`` drawn the same, from one text a label and
    one line of tick marks instead of a Tick each (five artists: 1-3 ms a bar to build, lay
    out and draw)."""
    from matplotlib import rcParams
    from matplotlib.markers import TICKLEFT

    ax.set_yticks([])
    size = rcParams["ytick.major.size"]
    place, va, ha = ax.get_yaxis_text1_transform(size + rcParams["ytick.major.pad"])
    for y, label in zip(ys, labels, strict=True):
        ax.text(0, y, label, transform=place, va=va, ha=ha, fontsize=6)
    ax.plot(
        [0] * len(ys), ys, transform=ax.get_yaxis_transform("tick1"), clip_on=False,
        linestyle="none", marker=TICKLEFT, markersize=size, color=rcParams["ytick.color"],
        markeredgewidth=rcParams["ytick.major.width"],
    )  # fmt: skip
