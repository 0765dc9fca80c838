"""The HTML report: one self-contained ``index.html`` (inline CSS and script, plots embedded as
data URIs and also written beside it as PNGs, every sample in the viewer) and ``summary.json``,
from a run or from results files. Past :data:`viewer.INLINE_MAX` bytes of samples, their data
moves to ``data/*.js`` beside the page, loaded a level at a time.

matplotlib (the ``[analysis]`` extra) draws the plots; without it the report still has every
table. Nothing in the page loads from the network (its Content-Security-Policy says so too).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import level_key
from ..gates import Comparison, GateResult, LevelStats
from ..gates.store import sha_matches
from ..gates.threshold import MARGINAL_NOTE
from ..gates.verdicts import failure_cause
from ..tasks.sampler import make_item
from .cells import Cell, cells
from .links import fragment
from .plots import plots, plots_unavailable
from .render import html_table, html_text
from .samples import sample_data, sample_id
from .tables import (
    Incomplete,
    Table,
    comparisons_table,
    fmt,
    levels_table,
    models_table,
    verdict,
)
from .viewer import asset, viewer_parts, write_file

__all__ = ["Prices", "Report", "build_report"]

TOP = 10  # rows in the slowest / most expensive tables


@dataclass
class Report:
    out: str
    files: list[str]
    summary: dict[str, Any]
    note: str | None = None  # why something is missing (no plots without matplotlib)


# Rebuilding a prompt generates its item, and item k of a batch of distinct problems walks
# the k before it: at most this many items are generated per row the report holds (plus the
# floor), so a few rows with high indices in many batches cannot make a report run for hours.
# A run's own rows cost what the run's generation did; past the bound, prompts are missing.
REBUILD_FLOOR = 10_000
REBUILD_PER_ROW = 20


def _prompts(rows: Sequence[Mapping[str, Any]], known: Mapping[str, str]) -> dict[str, str]:
    """The rows' prompts by hash: ``known`` ones, and those the rows' addresses rebuild
    (checked against their hashes), batch by batch in index order (each batch walked once),
    within the bound above."""
    from ..gates.rows import MAX_ITEM_INDEX
    from ..registry import get_task

    wanted: dict[tuple[str, str, int, str, str], dict[int, list[Mapping[str, Any]]]] = {}
    for r in rows:
        address = (r.get("extra") or {}).get("address")
        if not isinstance(address, Mapping) or not r.get("prompt_sha256"):
            continue
        if str(r["prompt_sha256"]) in known:
            continue
        index = address.get("index")
        if not isinstance(index, int) or not 0 <= index <= MAX_ITEM_INDEX:
            continue
        try:
            knobs = json.dumps(address.get("params"), sort_keys=True)
        except (TypeError, ValueError, RecursionError):
            continue
        batch = (str(r["task"]), str(r["level"]), int(r["seed"]), knobs, str(address.get("style")))
        wanted.setdefault(batch, {}).setdefault(index, []).append(r)
    budget = REBUILD_FLOOR + REBUILD_PER_ROW * len(rows)
    out = dict(known)
    for (task_id, level, seed, knobs, style), by_index in sorted(wanted.items()):
        walked = 0  # the batch's items generated so far
        for index in sorted(by_index):
            if index + 1 - walked > budget:
                break  # this batch's later items cost more than is left
            budget -= index + 1 - walked
            walked = index + 1
            shas = {str(r["prompt_sha256"]) for r in by_index[index]} - out.keys()
            if not shas:
                continue
            try:
                item = make_item(get_task(task_id), level, seed, index, json.loads(knobs), style)
            except Exception:  # a task not installed here, a changed generator, bad knobs
                continue
            if item.prompt_sha256 in shas:
                out[item.prompt_sha256] = item.prompt
    return out


# What a model's tokens cost: (model, prompt tokens, completion tokens) → dollars, or None
# when it is not priced. The run's models answer it (``Evaluator.price``: each model asked for
# its own price); the report knows nothing of model clients.
Prices = Callable[[str, int, int], float | None]


def _costs(
    rows: Sequence[Mapping[str, Any]], models: Sequence[str], prices: Prices | None
) -> tuple[dict[str, list[int]], dict[str, float | None], dict[int, float]]:
    """Tokens per model, and costs: as the rows recorded them, else from ``prices`` (LiteLLM's
    bundled price map, for models it prices by name), per model and per uncached row."""
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
    priced = [m for m in models if m not in recorded and any(tokens[m])]
    if priced and prices is not None:
        for m in priced:
            costs[m] = prices(m, *tokens[m])
        for k, r in enumerate(rows):
            if r["model"] in priced and costs.get(r["model"]) is not None and not r.get("cached"):
                price = prices(
                    r["model"],
                    int(r.get("prompt_tokens") or 0),
                    int(r.get("completion_tokens") or 0),
                )
                if price is not None:
                    row_cost[k] = price
    return tokens, costs, row_cost


def _levels_order(table: Table, comparisons: Sequence[Comparison]) -> list[int]:
    """The Levels table's rows as the page lists them first: failed (a failed gate, or a
    regression at that level) before the rest, candidates before the baseline, then as built."""
    gate = table.headers.index("gate")
    regressed = {(c.candidate, *c.spec.where) for c in comparisons if c.regressed}
    baseline = comparisons[0].baseline if comparisons else None
    suites = "suite" in table.headers

    def key(k: int) -> tuple[bool, bool, int]:
        row = table.rows[k]
        where = (row[0], row[1], row[2], row[3]) if suites else (row[0], "", row[1], row[2])
        failed = row[gate] == "FAIL" or where in regressed
        return (not failed, row[0] == baseline, k)

    return sorted(range(len(table.rows)), key=key)


def build_report(
    rows: Iterable[Mapping[str, Any]],
    out: str,
    *,
    levels: Iterable[LevelStats] | None = None,
    gates: Sequence[GateResult] = (),
    comparisons: Sequence[Comparison] = (),
    extra_images: Sequence[tuple[str, str]] = (),
    title: str = "pytest-reasoning report",
    incomplete: Incomplete | None = None,
    uncounted: Collection[tuple[Any, ...]] = (),
    prices: Prices | None = None,
    prompts: Mapping[str, str] | None = None,
) -> Report:
    """Write ``index.html``, ``summary.json`` and the PNGs to ``out`` (and ``data/*.js``
    when the samples outgrow one page). ``levels`` are a run's own per-level stats (with
    their gates' rules); from results files they are rebuilt per suite, entry and level.
    ``uncounted``: answers no gate counted (past a sequential stop), left out of the
    families' breakdowns; the sample viewer still lists them. ``prices``: what a model's
    tokens cost, for rows that recorded no cost (None: only what the rows recorded).
    ``prompts``: the prompts the samples answered, by hash (the run's, or the prompts files
    beside results files: ``gates.store.read_prompts``); the rest are generated again."""
    rows = [dict(r) for r in rows]
    os.makedirs(out, exist_ok=True)
    stats = list(levels) if levels is not None else [c.stats for c in cells(rows).values()]
    by_key = {(s.model, *s.spec.where): Cell(s) for s in stats}
    ordered = sorted(by_key, key=lambda k: (k[0], k[1], k[2], level_key(k[3])))
    written = plots(by_key, rows, comparisons, out, uncounted)
    note = None if written else plots_unavailable()
    models = sorted({c.model for c in by_key.values()} | {str(r["model"]) for r in rows})
    tokens, costs, row_cost = _costs(rows, models, prices)
    known = {sha: text for sha, text in (prompts or {}).items() if sha_matches(sha, text)}
    rebuilt = _prompts(rows, known)
    data = sample_data(
        rows,
        comparisons,
        prompt=lambda r: rebuilt.get(str(r.get("prompt_sha256"))),
        cost=row_cost,
        verdicts=[verdict(c) for c in comparisons],
    )
    viewer, scripts, late, data_files = viewer_parts(data, out)
    ids = {k: sample_id(r) for k, r in enumerate(rows)}
    by_row = {id(r): k for k, r in enumerate(rows)}

    parts = [f"<h1>{html.escape(title)}</h1>", NAV]
    answered = sum(c.n for c in by_key.values())
    errors = sum(c.errors for c in by_key.values())
    failed = sum(g.passed is False for g in gates) + sum(c.regressed for c in comparisons)
    verdict_text = (
        f'<span class="fail">{failed} gate(s) failed</span>'
        if failed
        else '<span class="pass">all gates passed</span>'
        if gates
        else "no gates"
    )
    parts.append(
        f"<p>{len(models)} model(s): {html_text(', '.join(models))}; {answered} samples "
        f"scored, {errors} call error(s); {verdict_text}.</p>"
    )
    parts.append('<h2 id="levels">Levels</h2>')
    table = levels_table(stats, gates, reasons=bool(gates), incomplete=incomplete, suite=True)
    links = []
    for row in table.rows:
        c = by_key.get((row[0], row[1], row[2], row[3]))
        wrong = c is not None and c.n + c.errors > c.correct
        view = fragment(
            model=row[0],
            suite=row[1],
            task=row[2],
            level=row[3],
            outcome="not-correct" if wrong else None,
        )
        links.append(("failing" if wrong else "samples", f"#{view}"))
    # Failed levels first, then the candidates' before the baseline's (the page sorts it by
    # any column when a header is clicked).
    order = _levels_order(table, comparisons)
    table = Table(table.headers, [table.rows[k] for k in order])
    links = [links[k] for k in order]
    # Several suites: a section each (in the same order), under the suite's name, here and
    # under Plots, each linking to the other.
    sections = sorted({row[1] for row in table.rows})
    plotted = {p.suite for p in written}
    several = len(set(sections) | plotted) > 1
    numbers = {suite: n for n, suite in enumerate([*sections, *sorted(plotted - set(sections))], 1)}
    for n, suite in enumerate(sections, 1):
        keep = [k for k, row in enumerate(table.rows) if row[1] == suite]
        if several:
            to = f' <a class="pr-aside" href="#plots-{n}">plots</a>' if suite in plotted else ""
            parts.append(f'<h3 id="levels-{n}">{html_text(suite or "(no suite)")}{to}</h3>')
        part = Table(table.headers, [table.rows[k] for k in keep])
        levels_html = html_table(part, links=[links[k] for k in keep], paths={"suite"})
        parts.append(levels_html.replace("<table>", '<table class="pr-sortable">', 1))
    if any(g.marginal for g in gates):
        parts.append(f'<p class="note">* {html.escape(MARGINAL_NOTE)}</p>')
    if comparisons:
        parts.append(
            f'<h2 id="baseline">Candidate against baseline ({html_text(comparisons[0].baseline)})</h2>'
        )
        pair_links = [
            (
                "pairs",
                "#"
                + fragment(
                    view="pairs",
                    model=c.candidate,
                    suite=c.spec.suite,
                    task=c.spec.entry,
                    level=c.spec.level,
                ),
            )
            for c in comparisons
        ]
        parts.append(
            html_table(
                comparisons_table(comparisons, suite=True), links=pair_links, paths={"suite"}
            )
        )
    parts.append(viewer)
    # The viewer's script runs here, once the page above it is parsed: the plots, the other
    # tables and the samples' texts (read only to search or to show) are parsed after it.
    viewer_at = len(parts)
    parts.append('<h2 id="plots">Plots</h2>')
    shown: list[tuple[str, str, str | None]] = [*written, *((c, p, None) for c, p in extra_images)]
    for k, (caption, path, of) in enumerate(shown):
        # Suite by suite, each under its heading; the robustness plots (every suite's) last.
        if several and (k == 0 or of != shown[k - 1][2]):
            if of is None:
                parts.append('<h3 id="plots-robustness">Robustness</h3>')
            else:
                n, back = numbers[of], of in sections
                to = f' <a class="pr-aside" href="#levels-{n}">levels</a>' if back else ""
                parts.append(f'<h3 id="plots-{n}">{html_text(of or "(no suite)")}{to}</h3>')
        with open(path, "rb") as fh:
            png = base64.b64encode(fh.read()).decode("ascii")
        parts.append(
            f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{png}">'
            f"<figcaption>{html.escape(caption)} "
            f'(<a href="{html.escape(os.path.basename(path))}">PNG</a>)</figcaption></figure>'
        )
    if not written:
        parts.append(f'<p class="muted">{html_text(note or "No plots: nothing to plot")}.</p>')
    parts.append('<h2 id="models">Models</h2>')
    parts.append(
        '<p class="muted">Answers from the response cache cost nothing and take no time: '
        "a warm rerun shows them here, not as latency.</p>"
    )
    parts.append(html_table(models_table(stats)))
    parts.append('<h2 id="costs">Tokens and cost</h2>')
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
            ),
            links=[("open", "#" + fragment(sample=ids[by_row[id(r)]])) for r in slow],
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
                ),
                links=[("open", "#" + fragment(sample=ids[k])) for k in dear],
            )
        )

    body, rest = "\n".join(parts[:viewer_at]), "\n".join(parts[viewer_at:])
    script = asset("viewer.js")
    nonce = hashlib.sha256((body + scripts + rest + late + script).encode("utf-8")).hexdigest()[:32]
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # Nothing from the network, no script but the page's own (and its data files).
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"script-src 'nonce-{nonce}' 'strict-dynamic'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'\">"
        f"<title>{html.escape(title)}</title><style>{CSS}{asset('viewer.css')}</style>"
        # Lets a headless browser check that every plot decoded (see benchmarks/report_browser.py).
        f"<script nonce=\"{nonce}\">addEventListener('load',()=>{{document.body.dataset.brokenImages="
        "[...document.images].filter(i=>!i.naturalWidth).length})</script></head><body>"
        + body
        + scripts
        + f'<script nonce="{nonce}">{script}</script>'
        + rest
        + late
        + "</body></html>\n"
    )
    index = os.path.join(out, "index.html")
    write_file(index, page)
    summary = {
        "models": models,
        "levels": [by_key[k].to_dict() for k in ordered],
        "gates": [
            {
                "model": g.stats.model,
                **g.stats.spec.to_dict(),
                "passed": g.passed,
                "reason": g.reason,
                "cause": failure_cause(g.stats) if g.passed is False else None,
            }
            for g in gates
        ],
        "comparisons": [c.to_dict() for c in comparisons],
        "tokens": {
            m: {"prompt": tokens[m][0], "completion": tokens[m][1], "cost_usd": costs.get(m)}
            for m in models
        },
        "plots": [os.path.basename(p.path) for p in written],
        "samples": len(rows),
        "sample_data": "inline" if not data_files else f"{len(data_files)} files in data/",
    }
    write_file(
        os.path.join(out, "summary.json"), json.dumps(summary, indent=1, sort_keys=True) + "\n"
    )
    # The data folder as one entry: a large report holds hundreds of files there.
    folder = [os.path.join(out, "data")] if data_files else []
    files = [index, os.path.join(out, "summary.json"), *(p.path for p in written), *folder]
    return Report(out, files, summary, note)


NAV = (
    '<nav class="pr-nav"><a href="#levels">Levels</a> · <a href="#samples">Samples</a> · '
    '<a href="#plots">Plots</a> · <a href="#models">Models</a> · <a href="#costs">Cost</a></nav>'
)

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1400px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top;white-space:nowrap}
th{white-space:normal}td.prose{white-space:normal;min-width:10em}
th{background:#f4f4f4}.pass{color:#1a7f37;font-weight:600}.fail{color:#c62828;font-weight:600}
td.abbr{max-width:14em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f8f8f8;padding:.6em;max-height:22em;overflow:auto;font-size:12px}
h3 a.pr-aside{font-size:.75em;font-weight:normal}details{margin:.3em 0}summary{cursor:pointer}.muted{color:#777}.warn{color:#a15c00;font-weight:600}
"""
