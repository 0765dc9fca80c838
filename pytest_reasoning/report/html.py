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
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import level_key
from ..gates import Comparison, GateResult, LevelStats
from ..models.kinds import model_kind
from .cells import Cell, cells
from .plots import plots, plots_unavailable
from .render import html_table
from .tables import Partial, Table, comparisons_table, fmt, levels_table, models_table

__all__ = ["Report", "build_report"]

DRILL = 3  # failing samples shown per (model, task, level)
TOP = 10  # rows in the slowest / most expensive tables


@dataclass
class Report:
    out: str
    files: list[str]
    summary: dict[str, Any]
    note: str | None = None  # why something is missing (no plots without matplotlib)


def _prompt(row: Mapping[str, Any]) -> str | None:
    """The prompt, rebuilt from the row's address and checked against its hash."""
    address = (row.get("extra") or {}).get("address")
    if not address:
        return None
    try:
        from ..registry import get_task

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


# -- the page -----------------------------------------------------------------------------------
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.pass{color:#1a7f37;font-weight:600}.fail{color:#c62828;font-weight:600}
figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}
pre{white-space:pre-wrap;background:#f8f8f8;padding:.6em;max-height:22em;overflow:auto;font-size:12px}
details{margin:.3em 0}summary{cursor:pointer}.muted{color:#777}.warn{color:#a15c00;font-weight:600}
"""


def _ordered(by_key: Mapping[tuple[str, str, str], Cell]) -> list[tuple[str, str, str]]:
    return sorted(by_key, key=lambda k: (k[0], k[1], level_key(k[2])))


def _costs(
    rows: Sequence[Mapping[str, Any]], models: Sequence[str]
) -> tuple[dict[str, list[int]], dict[str, float | None], dict[int, float]]:
    """Tokens per model, and costs from LiteLLM's bundled price map for models it prices
    (per model, and per uncached row)."""
    tokens: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        tokens[r["model"]][0] += int(r.get("prompt_tokens") or 0)
        tokens[r["model"]][1] += int(r.get("completion_tokens") or 0)
    costs: dict[str, float | None] = {}
    row_cost: dict[int, float] = {}
    # Rows that recorded LiteLLM's price of their call (aliases of --llm-config included)
    # count as recorded; other priced models are priced from their token totals.
    recorded: dict[str, float] = defaultdict(float)
    for k, r in enumerate(rows):
        price = r.get("cost_usd")
        if isinstance(price, int | float) and not isinstance(price, bool):
            recorded[r["model"]] += float(price)
            if not r.get("cached"):
                row_cost[k] = float(price)
    costs.update(recorded)
    priced = [m for m in models if m not in recorded and model_kind(m).priced and any(tokens[m])]
    if priced:
        from ..models.litellm_client import cost_usd

        for m in priced:
            costs[m] = cost_usd(m, *tokens[m])
        for k, r in enumerate(rows):
            if r["model"] in priced and costs.get(r["model"]) is not None and not r.get("cached"):
                price = cost_usd(
                    r["model"],
                    int(r.get("prompt_tokens") or 0),
                    int(r.get("completion_tokens") or 0),
                )
                if price is not None:
                    row_cost[k] = price
    return tokens, costs, row_cost


def _failing(by_key: Mapping[tuple[str, str, str], Cell]) -> list[str]:
    """The deterministic drill-down: up to DRILL failing samples per cell, prompts rebuilt."""
    parts = []
    for key in _ordered(by_key):
        c = by_key[key]
        if not c.failing:
            continue
        picks = sorted(
            c.failing, key=lambda r: hashlib.sha256(str(r["item_id"]).encode()).hexdigest()
        )[:DRILL]
        inner = []
        for r in picks:
            prompt = _prompt(r)
            detail = (r.get("extra") or {}).get("detail")
            cached = " (cached)" if r.get("cached") else ""
            inner.append(
                f"<details><summary>{html.escape(str(r['item_id']))}{cached}: "
                f"{html.escape(str(r.get('failure_mode') or 'wrong'))}"
                + (f" — {html.escape(str(detail))}" if detail else "")
                + "</summary>"
                + f"<p><b>Prompt</b></p><pre>{html.escape(prompt) if prompt else '<span class=muted>(not rebuildable here)</span>'}</pre>"
                + f"<p><b>Response</b></p><pre>{html.escape(str(r.get('response')))}</pre>"
                + f"<p><b>Extracted</b>: <code>{html.escape(str(r.get('extracted')))}</code> — <b>gold</b>: <code>{html.escape(str(r.get('gold')))}</code></p>"
                + "</details>"
            )
        parts.append(
            f"<details><summary>{html.escape(c.model)} · {html.escape(c.task)} · {html.escape(c.level)}: "
            f"{c.n - c.correct} of {c.n} wrong</summary>{''.join(inner)}</details>"
        )
    return parts


def build_report(
    rows: Iterable[Mapping[str, Any]],
    out: str,
    *,
    levels: Iterable[LevelStats] | None = None,
    gates: Sequence[GateResult] = (),
    comparisons: Sequence[Comparison] = (),
    extra_images: Sequence[tuple[str, str]] = (),
    title: str = "pytest-reasoning report",
    partial: Partial | None = None,
) -> Report:
    """Write ``index.html``, ``summary.json`` and the PNGs to ``out``. ``levels`` are a run's
    own per-level stats (by suite entry); from results files they are rebuilt per task."""
    rows = [dict(r) for r in rows]
    os.makedirs(out, exist_ok=True)
    by_key = cells(rows)
    gated = {
        (s.task, s.spec.level): (s.spec.rule.min_accuracy, s.spec.rule.metric)
        for s in (levels or ())
    }
    written = plots(by_key, rows, comparisons, out, gated)
    note = None if written else plots_unavailable()
    models = sorted({c.model for c in by_key.values()})
    tokens, costs, row_cost = _costs(rows, models)

    parts = [f"<h1>{html.escape(title)}</h1>"]
    answered = sum(c.n for c in by_key.values())
    errors = sum(c.errors for c in by_key.values())
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
    stats = list(levels) if levels is not None else [c.stats for c in by_key.values()]
    parts.append("<h2>Levels</h2>")
    parts.append(html_table(levels_table(stats, gates, reasons=bool(gates), partial=partial)))
    parts.append("<h2>Models</h2>")
    parts.append(
        '<p class="muted">Answers from the response cache cost nothing and take no time: '
        "a warm rerun shows them here, not as latency.</p>"
    )
    parts.append(html_table(models_table(stats)))
    if comparisons:
        parts.append(
            f"<h2>Candidate against baseline ({html.escape(comparisons[0].baseline)})</h2>"
        )
        parts.append(html_table(comparisons_table(comparisons)))
    parts.append("<h2>Plots</h2>")
    for caption, path in [*written, *extra_images]:
        with open(path, "rb") as fh:
            data = base64.b64encode(fh.read()).decode("ascii")
        parts.append(
            f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)} "
            f'(<a href="{html.escape(os.path.basename(path))}">PNG</a>)</figcaption></figure>'
        )
    if not written:
        parts.append(f'<p class="muted">{html.escape(note or "No plots: nothing to plot")}.</p>')

    parts.append("<h2>Tokens and cost</h2>")
    parts.append(
        html_table(
            Table(
                ("model", "prompt tokens", "completion tokens", "cost (USD, LiteLLM price map)"),
                [
                    [m, str(tokens[m][0]), str(tokens[m][1]), fmt(costs.get(m), ".4f")]
                    for m in models
                ],
            )
        )
    )
    # Cached rows keep their original call's latency: still the slowest calls, marked.
    timed = [r for r in rows if r.get("latency_s")]
    slow = sorted(timed, key=lambda r: (-float(r["latency_s"]), r["item_id"]))[:TOP]
    parts.append("<h2>Slowest calls</h2>")
    if any(r.get("cached") for r in slow):
        parts.append(
            '<p class="muted">(cached): answered from the response cache in this run; the '
            "latency is the original call's.</p>"
        )
    parts.append(
        html_table(
            Table(
                ("model", "item", "latency (s)", "tokens", "error"),
                [
                    [
                        str(r["model"]),
                        str(r["item_id"]) + (" (cached)" if r.get("cached") else ""),
                        f"{float(r['latency_s']):.2f}",
                        str((r.get("prompt_tokens") or 0) + (r.get("completion_tokens") or 0)),
                        "-" if r.get("error") is None else str(r["error"]),
                    ]
                    for r in slow
                ],
            )
        )
    )
    if row_cost:
        dear = sorted(row_cost, key=lambda k: (-row_cost[k], rows[k]["item_id"]))[:TOP]
        parts.append("<h2>Most expensive calls</h2>")
        parts.append(
            html_table(
                Table(
                    ("model", "item", "cost (USD)", "prompt tokens", "completion tokens"),
                    [
                        [
                            str(rows[k]["model"]),
                            str(rows[k]["item_id"]),
                            f"{row_cost[k]:.5f}",
                            str(rows[k].get("prompt_tokens")),
                            str(rows[k].get("completion_tokens")),
                        ]
                        for k in dear
                    ],
                )
            )
        )

    parts.append("<h2>Failing samples</h2>")
    parts.append(
        f'<p class="muted">Up to {DRILL} per model, task and level, chosen by a hash of the item id (the same ones every time).</p>'
    )
    drill = _failing(by_key)
    parts += drill or ["<p>No failing samples.</p>"]

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
        "levels": [by_key[k].to_dict() for k in _ordered(by_key)],
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
        "plots": [os.path.basename(p) for _, p in written],
    }
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=1, sort_keys=True)
    files = [index, os.path.join(out, "summary.json"), *(p for _, p in written)]
    return Report(out, files, summary, note)
