"""The HTML report: one self-contained ``index.html`` (inline CSS, plots embedded as data
URIs and also written beside it as PNGs) and ``summary.json``, from a run or from results files.

matplotlib (the ``[analysis]`` extra) draws the plots; without it the report still has every
table. Nothing in the page loads from the network.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .comparison import Comparison
from .core import Outcome, level_key
from .results import GateResult, GateSpec, LevelStats
from .stats import wilson_interval

__all__ = ["Report", "build_report"]

DRILL = 3  # failing samples shown per (model, task, level)
TOP = 10  # rows in the slowest / most expensive tables


@dataclass
class Cell:
    """One (model, task, level): the gates' own LevelStats, plus its failing rows."""

    stats: LevelStats
    failing: list[dict[str, Any]] = field(default_factory=list)

    model = property(lambda self: self.stats.model)
    task = property(lambda self: self.stats.task)
    level = property(lambda self: self.stats.spec.level)
    n = property(lambda self: self.stats.n)
    correct = property(lambda self: self.stats.correct)
    errors = property(lambda self: self.stats.errors)
    score = property(lambda self: self.stats.score_sum)
    accuracy = property(lambda self: self.stats.accuracy)

    @property
    def modes(self) -> Counter[str]:
        """Failure modes; wrong answers a scorer gave no mode count as ``wrong``."""
        modes = Counter(self.stats.failure_modes)
        unlabelled = self.n - self.correct - sum(modes.values())
        if unlabelled > 0:
            modes["wrong"] += unlabelled
        return modes

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.stats.interval(0.95)
        return {
            "model": self.model,
            "task": self.task,
            "level": self.level,
            "n": self.n,
            "correct": self.correct,
            "accuracy": self.accuracy,
            "interval95": [lo, hi] if self.n else None,
            "mean_score": self.score / self.n if self.n else None,
            "errors": self.errors,
            "failure_modes": dict(sorted(self.modes.items())),
        }


@dataclass
class Report:
    out: str
    files: list[str]
    summary: dict[str, Any]


def _cells(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str], Cell]:
    """Results rows aggregated the way gates aggregate them (``LevelStats``)."""
    cells: dict[tuple[str, str, str], Cell] = {}
    for r in rows:
        key = (str(r["model"]), str(r["task"]), str(r["level"]))
        if key not in cells:
            cells[key] = Cell(LevelStats(key[0], GateSpec("", key[1], key[2]), key[1]))
        cells[key].stats.add(Outcome.from_dict(dict(r)))
        if r.get("error") is None and r.get("correct") is False:
            cells[key].failing.append(dict(r))
    return cells


def _prompt(row: Mapping[str, Any]) -> str | None:
    """The prompt, rebuilt from the row's address and checked against its hash."""
    address = (row.get("extra") or {}).get("address")
    if not address:
        return None
    try:
        from .registry import get_task

        item = get_task(str(row["task"])).make_item(
            str(row["level"]),
            int(row["seed"]),
            int(address["index"]),
            address["params"],
            str(address["style"]),
        )
    except Exception:  # a task not installed here, a changed generator
        return None
    return item.prompt if item.prompt_sha256 == row.get("prompt_sha256") else None


# -- plots --------------------------------------------------------------------------------------
def _plots(
    cells: Mapping[tuple[str, str, str], Cell],
    rows: Sequence[Mapping[str, Any]],
    comparisons: Sequence[Comparison],
    out: str,
) -> list[tuple[str, str]]:
    """(title, path) of each PNG written; none without matplotlib."""
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
        for m in models:
            pts = [
                (i, cells[(m, task, lv)]) for i, lv in enumerate(levels) if (m, task, lv) in cells
            ]
            pts = [(i, c) for i, c in pts if c.n]
            if not pts:
                continue
            xs = [i for i, _ in pts]
            ys = [c.correct / c.n for _, c in pts]
            ci = [wilson_interval(c.correct, c.n) for _, c in pts]
            err = [  # clipped: Wilson's bound can round a hair past the estimate
                [max(0.0, y - lo) for y, (lo, _) in zip(ys, ci, strict=True)],
                [max(0.0, hi - y) for y, (_, hi) in zip(ys, ci, strict=True)],
            ]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=m)
        ax.set_xticks(range(len(levels)), levels, rotation=45 if len(levels) > 6 else 0)
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(task, fontsize=9)
        ax.set_ylabel("accuracy")
    for ax in list(axes.flat)[len(tasks) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    save(fig, "accuracy_by_level.png", "Accuracy by difficulty level (95% Wilson intervals)")

    # 2. FLenQA: accuracy against input length, per padding and position (its figure 1).
    flen = [
        r
        for r in rows
        if str(r["task"]).startswith("flenqa.")
        and r.get("correct") is not None
        and "padding" in (r.get("extra") or {})
    ]
    if flen:
        groups: dict[tuple[str, str, str], dict[int, list[bool]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for r in flen:
            e = r["extra"]
            groups[(r["model"], e["padding"], e["position"])][int(e["target_tokens"])].append(
                bool(r["correct"])
            )
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
        fig, ax = plt.subplots(figsize=(max(5, 0.45 * len(sizes) + 2), 3.2))
        for m in models:
            mine = {c.level: c for c in zebra if c.model == m}
            xs = [i for i, s in enumerate(sizes) if s in mine]
            ax.plot(
                xs,
                [mine[sizes[i]].correct / mine[sizes[i]].n for i in xs],
                marker="o",
                label=f"{m} puzzle",
            )
            ax.plot(
                xs,
                [mine[sizes[i]].score / mine[sizes[i]].n for i in xs],
                marker="s",
                ls="--",
                label=f"{m} cell",
            )
        ax.set_xticks(range(len(sizes)), sizes, rotation=45)
        ax.set_ylim(-0.05, 1.05)
        ax.legend(fontsize=7)
        save(fig, "zebra_sizes.png", "ZebraLogic: puzzle and cell accuracy by size")

    # 4. Failure-mode shares per level, stacked.
    keys = sorted(cells, key=lambda k: (k[0], k[1], level_key(k[2])))
    modes = sorted({m for c in cells.values() for m in c.modes})
    fig, ax = plt.subplots(figsize=(max(6, 0.32 * len(keys) + 2), 3.6))
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
    ax.legend(fontsize=6, ncol=2)
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


# -- the page -----------------------------------------------------------------------------------
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.pass{color:#1a7f37;font-weight:600}.fail{color:#c62828;font-weight:600}
figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}
pre{white-space:pre-wrap;background:#f8f8f8;padding:.6em;max-height:22em;overflow:auto;font-size:12px}
details{margin:.3em 0}summary{cursor:pointer}.muted{color:#777}
"""


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = []
    for r in rows:
        tds = []
        for v in r:
            text = html.escape("-" if v is None else str(v))
            cls = (
                ' class="pass"'
                if v == "PASS"
                else ' class="fail"'
                if v in ("FAIL", "REGRESSION")
                else ""
            )
            tds.append(f"<td{cls}>{text}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _ordered(cells: Mapping[tuple[str, str, str], Cell]) -> list[tuple[str, str, str]]:
    return sorted(cells, key=lambda k: (k[0], k[1], level_key(k[2])))


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def build_report(
    rows: Iterable[Mapping[str, Any]],
    out: str,
    *,
    gates: Sequence[GateResult] = (),
    comparisons: Sequence[Comparison] = (),
    extra_images: Sequence[tuple[str, str]] = (),
    title: str = "pytest-reasoning report",
) -> Report:
    """Write ``index.html``, ``summary.json`` and the PNGs to ``out``."""
    rows = [dict(r) for r in rows]
    os.makedirs(out, exist_ok=True)
    cells = _cells(rows)
    plots = _plots(cells, rows, comparisons, out)
    models = sorted({c.model for c in cells.values()})

    # Costs from LiteLLM's bundled price map, for models it prices.
    tokens: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        tokens[r["model"]][0] += int(r.get("prompt_tokens") or 0)
        tokens[r["model"]][1] += int(r.get("completion_tokens") or 0)
    costs: dict[str, float | None] = {}
    row_cost: dict[int, float] = {}
    priced = [m for m in models if m not in ("reference", "local") and any(tokens[m])]
    if priced:
        from .models.litellm_client import cost_usd

        for m in priced:
            costs[m] = cost_usd(m, *tokens[m])
        for k, r in enumerate(rows):
            if costs.get(r["model"]) is not None and not r.get("cached"):
                price = cost_usd(
                    r["model"],
                    int(r.get("prompt_tokens") or 0),
                    int(r.get("completion_tokens") or 0),
                )
                if price is not None:
                    row_cost[k] = price

    parts = [f"<h1>{html.escape(title)}</h1>"]
    answered = sum(c.n for c in cells.values())
    errors = sum(c.errors for c in cells.values())
    failed = sum(g.passed is False for g in gates) + sum(c.regressed for c in comparisons)
    verdict = (
        f'<span class="fail">{failed} gate(s) failed</span>'
        if failed
        else '<span class="pass">all gates passed</span>'
        if gates
        else "no gates"
    )
    parts.append(
        f"<p>{len(models)} model(s): {html.escape(', '.join(models))}; {answered} samples "
        f"scored, {errors} call error(s); {verdict}.</p>"
    )
    # Gates (from a run) or the plain accuracy table (from files).
    by_key = {
        (g.stats.model, g.stats.task, g.stats.spec.level, g.stats.spec.entry): g for g in gates
    }
    parts.append("<h2>Levels</h2>")
    if gates:
        trs = []
        for (m, _task, lv, entry), g in sorted(
            by_key.items(), key=lambda kv: (kv[0][0], kv[0][3], level_key(kv[0][2]))
        ):
            s = g.stats
            lo, hi = s.interval(0.95)
            trs.append(
                [
                    m,
                    entry,
                    lv,
                    s.n,
                    s.correct,
                    _fmt(s.measure) + (" cell" if s.spec.metric == "cell" else ""),
                    f"[{lo:.2f}, {hi:.2f}]" if s.n else "-",
                    s.spec.min_accuracy,
                    "-" if g.passed is None else "PASS" if g.passed else "FAIL",
                    s.errors,
                    g.reason,
                ]
            )
        parts.append(
            _table(
                [
                    "model",
                    "entry",
                    "level",
                    "n",
                    "correct",
                    "measure",
                    "95% CI",
                    "threshold",
                    "gate",
                    "errors",
                    "reason",
                ],
                trs,
            )
        )
    else:
        trs = []
        for key in _ordered(cells):
            c = cells[key]
            lo, hi = wilson_interval(c.correct, c.n)
            trs.append(
                [
                    c.model,
                    c.task,
                    c.level,
                    c.n,
                    c.correct,
                    _fmt(c.accuracy),
                    f"[{lo:.2f}, {hi:.2f}]" if c.n else "-",
                    _fmt(c.score / c.n if c.n else None),
                    c.errors,
                ]
            )
        parts.append(
            _table(
                [
                    "model",
                    "task",
                    "level",
                    "n",
                    "correct",
                    "accuracy",
                    "95% CI",
                    "mean score",
                    "errors",
                ],
                trs,
            )
        )
    if comparisons:
        parts.append(
            f"<h2>Candidate against baseline ({html.escape(comparisons[0].baseline)})</h2>"
        )
        parts.append(
            _table(
                [
                    "candidate",
                    "entry",
                    "level",
                    "pairs",
                    "candidate",
                    "baseline",
                    "difference [95% CI]",
                    "Holm p",
                    "verdict",
                ],
                [
                    [
                        c.candidate,
                        c.spec.entry,
                        c.spec.level,
                        c.table.n,
                        f"{c.table.candidate_accuracy:.3f}",
                        f"{c.table.baseline_accuracy:.3f}",
                        f"{c.table.difference:+.3f} [{c.low:+.2f}, {c.high:+.2f}]",
                        f"{c.p_adjusted:.3g}",
                        "REGRESSION" if c.regressed else "improved" if c.improved else "ok",
                    ]
                    for c in comparisons
                ],
            )
        )
    parts.append("<h2>Plots</h2>")
    for caption, path in [*plots, *extra_images]:
        with open(path, "rb") as fh:
            data = base64.b64encode(fh.read()).decode("ascii")
        parts.append(
            f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)} "
            f'(<a href="{html.escape(os.path.basename(path))}">PNG</a>)</figcaption></figure>'
        )
    if not plots:
        parts.append('<p class="muted">No plots: install the [analysis] extra (matplotlib).</p>')

    parts.append("<h2>Tokens and cost</h2>")
    parts.append(
        _table(
            ["model", "prompt tokens", "completion tokens", "cost (USD, LiteLLM price map)"],
            [[m, tokens[m][0], tokens[m][1], _fmt(costs.get(m), ".4f")] for m in models],
        )
    )
    timed = [r for r in rows if not r.get("cached") and r.get("latency_s")]
    slow = sorted(timed, key=lambda r: (-float(r["latency_s"]), r["item_id"]))[:TOP]
    parts.append("<h2>Slowest calls</h2>")
    parts.append(
        _table(
            ["model", "item", "latency (s)", "tokens", "error"],
            [
                [
                    r["model"],
                    r["item_id"],
                    f"{float(r['latency_s']):.2f}",
                    (r.get("prompt_tokens") or 0) + (r.get("completion_tokens") or 0),
                    r.get("error"),
                ]
                for r in slow
            ],
        )
    )
    if row_cost:
        dear = sorted(row_cost, key=lambda k: (-row_cost[k], rows[k]["item_id"]))[:TOP]
        parts.append("<h2>Most expensive calls</h2>")
        parts.append(
            _table(
                ["model", "item", "cost (USD)", "prompt tokens", "completion tokens"],
                [
                    [
                        rows[k]["model"],
                        rows[k]["item_id"],
                        f"{row_cost[k]:.5f}",
                        rows[k].get("prompt_tokens"),
                        rows[k].get("completion_tokens"),
                    ]
                    for k in dear
                ],
            )
        )

    parts.append("<h2>Failing samples</h2>")
    parts.append(
        f'<p class="muted">Up to {DRILL} per model, task and level, chosen by a hash of the item id (the same ones every time).</p>'
    )
    shown = 0
    for key in _ordered(cells):
        c = cells[key]
        if not c.failing:
            continue
        picks = sorted(
            c.failing, key=lambda r: hashlib.sha256(str(r["item_id"]).encode()).hexdigest()
        )[:DRILL]
        inner = []
        for r in picks:
            prompt = _prompt(r)
            detail = (r.get("extra") or {}).get("detail")
            inner.append(
                f"<details><summary>{html.escape(str(r['item_id']))}: "
                f"{html.escape(str(r.get('failure_mode') or 'wrong'))}"
                + (f" — {html.escape(str(detail))}" if detail else "")
                + "</summary>"
                + f"<p><b>Prompt</b></p><pre>{html.escape(prompt) if prompt else '<span class=muted>(not rebuildable here)</span>'}</pre>"
                + f"<p><b>Response</b></p><pre>{html.escape(str(r.get('response')))}</pre>"
                + f"<p><b>Extracted</b>: <code>{html.escape(str(r.get('extracted')))}</code> — <b>gold</b>: <code>{html.escape(str(r.get('gold')))}</code></p>"
                + "</details>"
            )
            shown += 1
        parts.append(
            f"<details><summary>{html.escape(c.model)} · {html.escape(c.task)} · {html.escape(c.level)}: "
            f"{c.n - c.correct} of {c.n} wrong</summary>{''.join(inner)}</details>"
        )
    if not shown:
        parts.append("<p>No failing samples.</p>")

    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style>"
        # Lets a headless browser check that every plot decoded (see benchmarks/report_browser.py).
        "<script>addEventListener('load',()=>{document.body.dataset.brokenImages="
        "[...document.images].filter(i=>!i.naturalWidth).length})</script></head><body>"
        + "\n".join(parts)
        + "</body></html>\n"
    )
    index = os.path.join(out, "index.html")
    with open(index, "w", encoding="utf-8") as fh:
        fh.write(page)
    summary = {
        "models": models,
        "levels": [
            cells[k].to_dict() for k in sorted(cells, key=lambda k: (k[0], k[1], level_key(k[2])))
        ],
        "gates": [
            {
                "model": g.stats.model,
                **g.stats.spec.to_dict(),
                "passed": g.passed,
                "reason": g.reason,
            }
            for g in gates
        ],
        "comparisons": [c.to_dict() for c in comparisons],
        "tokens": {
            m: {"prompt": tokens[m][0], "completion": tokens[m][1], "cost_usd": costs.get(m)}
            for m in models
        },
        "plots": [os.path.basename(p) for _, p in plots],
    }
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=1, sort_keys=True)
    files = [index, os.path.join(out, "summary.json"), *(p for _, p in plots)]
    return Report(out, files, summary)
