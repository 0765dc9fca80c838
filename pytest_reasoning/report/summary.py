"""The run summary as prepared lines: the terminal renders them (``Line.sep`` as a separator,
``Line.style`` as colour), GitHub's step summary gets the same tables as Markdown. Nothing here
needs pytest, so the summary is testable from plain data."""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..gates import Comparison, GateResult, Ledger, LevelStats
from ..gates.threshold import MARGINAL_NOTE
from ..gates.verdicts import failure_cause
from . import render
from .tables import (
    Incomplete,
    breakdown_table,
    breakdowns,
    breaks_down,
    comparisons_table,
    levels_table,
    models_table,
    underpowered,
    verdict,
)

__all__ = [
    "Line",
    "RunSummary",
    "closing_lines",
    "error_lines",
    "ledger_summary",
    "markdown_summary",
    "summary_lines",
    "summary_reads",
]


@dataclass(frozen=True)
class Line:
    """One line of the terminal summary; ``sep`` draws a separator titled ``text``."""

    text: str
    style: str = ""  # "", "red", "yellow", "red bold", "yellow bold"
    sep: bool = False

    @property
    def markup(self) -> dict[str, bool]:
        return {word: True for word in self.style.split()}


@dataclass
class RunSummary:
    """What a finished (or interrupted) run has to say."""

    levels: Sequence[LevelStats]
    gates: Sequence[GateResult] = ()
    comparisons: Sequence[Comparison] = ()
    rows: Sequence[Mapping[str, Any]] = ()  # results rows (the FLenQA length table reads them)
    errors: int = 0
    answered: int = 0
    interrupted: bool = False
    saved_to: str | None = None
    # Per model: distinct error messages (redacted) with counts, in the order they came,
    # and how many samples were not asked after an error stopped the model.
    error_messages: Mapping[str, Sequence[tuple[str, int]]] = field(default_factory=dict)
    not_asked: Mapping[str, int] = field(default_factory=dict)
    incomplete: Incomplete = field(default_factory=dict)  # levels a selection ran only in part
    stopped: bool = False  # -x / --maxfail (or Ctrl-C) ended the run loop early
    undecided: int = 0  # selected gates left undecided by the stop
    deferred: int = 0  # verdicts left to ``pytest-reasoning gate`` (shards, defer mode)
    merged: bool = False  # decided by ``pytest-reasoning gate`` from results files
    # Sequential levels that settled early: (model, where) → (samples needed, samples of the
    # level, answers paid for that it did not need: asked ahead, or in after it settled).
    sequential: Mapping[Any, tuple[int, int, int]] = field(default_factory=dict)
    spend: str | None = None  # "spent $… and … tokens on … call(s)" (calls made now)
    budget_reached: str | None = None  # why the run stopped asking (--reasoning-budget)
    # Answers past a sequential stop (``Ledger.uncounted``): in no gate, so in no breakdown.
    uncounted: Collection[tuple[Any, ...]] = ()
    # Why samples were not asked, per model, when not its own error (``Tally.not_asked_why``),
    # and why an incomplete level lacks samples where its rows say (``Ledger.missing``).
    not_asked_why: Mapping[str, str] = field(default_factory=dict)
    missing_why: Mapping[tuple[str, str, str, str], str] = field(default_factory=dict)
    # The prompts the run's samples answered, by hash (the report shows them as they were
    # asked, without generating the items again); a prompt missing here is generated.
    prompts: Mapping[str, str] = field(default_factory=dict)


def ledger_summary(ledger: Ledger, **run: Any) -> RunSummary:
    """The summary of what ``ledger`` decided, built here for a pytest run and a merge
    (``pytest-reasoning gate``) alike; ``run``: what only the caller knows (its rows, how it
    ended, its spend; ``merged``), as :class:`RunSummary` names it."""
    levels = list(ledger.levels.values())
    return RunSummary(
        levels=levels,
        gates=ledger.gates,
        comparisons=ledger.comparisons,
        errors=sum(s.errors for s in levels),
        incomplete=ledger.incomplete(),
        error_messages=ledger.tally.messages,
        not_asked=ledger.tally.not_asked,
        sequential=ledger.sequential_counts(),
        uncounted=ledger.uncounted,
        not_asked_why=ledger.tally.not_asked_why,
        missing_why=ledger.missing(),
        **run,
    )


SHOWN_CAUSES = 3  # distinct error messages printed per model
WRONG_LISTED = 20  # wrong samples listed per level in the step summary


def summary_reads(task: str, error: str | None, correct: bool | None, step: bool) -> bool:
    """Whether the summary reads a sample's row: those of a family with a breakdown (FLenQA
    by length, ZebraLogic by size) and, for GitHub's step summary (``step``), the wrong and
    errored ones. A run keeps only these in memory (the summary comes out the same: the
    tables read no other row)."""
    return _breaks_down(task) or (step and (error is not None or not correct))


@functools.lru_cache(maxsize=256)
def _breaks_down(task: str) -> bool:
    return breaks_down(task)


def summary_lines(run: RunSummary) -> list[Line]:
    table = levels_table(run.levels, run.gates, incomplete=run.incomplete)
    lines = [Line(t) for t in render.text(table).splitlines()]
    if any(g.marginal for g in run.gates):
        lines.append(Line(f"* {MARGINAL_NOTE}", "yellow"))
    lines.append(Line(""))
    lines += [Line(t) for t in render.text(models_table(run.levels)).splitlines()]
    if run.interrupted or run.stopped:
        saved = f" (in {run.saved_to})" if run.saved_to else ""
        why = "INTERRUPTED" if run.interrupted else "STOPPED (-x / --maxfail)"
        decided = sum(g.passed is not None for g in run.gates)
        lines.append(
            Line(
                f"reasoning: {why}: gates not decided: {run.undecided} ({decided} decided "
                f"before the stop); {run.answered} answers recorded{saved}; rerun the same "
                "command: cached answers are not asked again",
                "yellow bold",
            )
        )
    if run.deferred:
        lines.append(
            Line(
                f"reasoning: {run.deferred} verdict(s) deferred: decide them from every "
                "shard's results with pytest-reasoning gate SUITE... --results FILE... "
                "(docs/ci.md)",
                "yellow",
            )
        )
    if run.incomplete and not run.deferred:
        shown = ", ".join(
            f"{entry} {level}"
            + (f" ({model})" if len({k[0] for k in run.incomplete}) > 1 else "")
            + f" ({ran} of {size})"
            for (model, _suite, entry, level), (ran, size) in sorted(run.incomplete.items())[:5]
        )
        more = f" and {len(run.incomplete) - 5} more" if len(run.incomplete) > 5 else ""
        _, _, entry, level = min(run.incomplete)
        example = f"{entry}[{level}-gate"  # a prefix of the gate's name, whatever the model
        causes = [run.missing_why.get(k) for k in run.incomplete]
        said = "; ".join(dict.fromkeys(str(c) for c in causes if c))  # what the rows say
        why, advice = (
            ("have fewer results rows than samples", said if all(causes) else "a shard did "
             "not run, or its results file was not given (docs/ci.md)")
            if run.merged
            else ("were cut short by the budget", "rerun with a larger --reasoning-budget")
            if run.budget_reached
            else ("were cut short by the stop", "rerun the same command")
            if run.interrupted or run.stopped
            else ("were cut short: calls stopped after an error", "fix the cause above and "
                  "rerun (answers already paid for come from the cache)")
            if run.not_asked
            else ("ran in part (a selection)", "select whole levels to decide them "
                  f"(-k '{example}', or paste a gate's id)")
        )  # fmt: skip
        lines.append(
            Line(
                f"reasoning: {len(run.incomplete)} level(s) {why}, their gates not decided: "
                f"{shown}{more}; {advice}",
                "yellow",
            )
        )
    if run.spend:
        lines.append(Line(f"reasoning: {run.spend}"))
    if run.budget_reached:
        # Only where a spend line is printed: a batch the budget kept from being submitted
        # had no call in flight and spent nothing, and the note would point at no line.
        flight = " (the calls then in flight were answered: they are in the spend above)"
        lines.append(
            Line(
                f"reasoning: STOPPED: {run.budget_reached}{flight if run.spend else ''}; "
                "levels cut short are not decided "
                "(rerun with a larger budget: cached answers are not paid for again)",
                "yellow bold",
            )
        )
    if run.sequential:
        needed = sum(n for n, _, _ in run.sequential.values())
        size = sum(s for _, s, _ in run.sequential.values())
        late = sum(x for _, _, x in run.sequential.values())
        spared = 0.0
        for stats in run.levels:  # what the samples not needed would have cost, at its price
            counts = run.sequential.get((stats.model, stats.spec.where))
            if counts and stats.calls and stats.cost_usd:
                spared += (counts[1] - counts[0] - counts[2]) * stats.cost_usd / stats.calls
        lines.append(
            Line(
                f"reasoning: {len(run.sequential)} sequential level(s) settled early: "
                f"{needed} of {size} samples needed, {size - needed} not needed"
                + (f" (about ${spared:.4f} saved)" if spared else "")
                + (
                    f"; {late} answer(s) asked ahead were not needed (paid for: in the spend "
                    "and the results file, in no verdict)"
                    if late
                    else ""
                ),
                "green",
            )
        )
    failed = [g for g in run.gates if g.passed is False]
    if failed:
        decided = sum(g.passed is not None for g in run.gates)
        lines.append(Line(f"reasoning: {len(failed)} of {decided} gates FAILED", "red bold"))
        suites = len({g.stats.spec.suite for g in run.gates}) > 1
        for g in failed:
            s = g.stats
            where = f"{s.spec.suite} " if suites else ""
            cause = failure_cause(s)
            lines.append(
                Line(
                    f"  FAILED {s.model} {where}{s.spec.entry} {s.spec.level}: {g.reason}"
                    + (f"; {cause}" if cause else ""),
                    "red",
                )
            )
    for b in breakdowns(run.rows, run.uncounted):
        lines.append(Line(b.title, sep=True))
        lines += [Line(t) for t in render.text(breakdown_table(b)).splitlines()]
    if run.comparisons:
        lines += _comparison_lines(run.comparisons)
    return lines


def closing_lines(run: RunSummary) -> list[Line]:
    """Warnings that close the summary (after the robustness analysis and the report)."""
    lines = []
    repeating = [s for s in run.levels if s.distinct < s.items]
    for s in sorted(repeating, key=lambda s: (s.spec.entry, s.spec.level, s.model)):
        lines.append(
            Line(
                f"reasoning: {s.spec.entry} {s.spec.level} ({s.model}): "
                f"{s.items - s.distinct} of {s.items} items repeat an earlier problem (up to "
                "renaming); the level's test split has fewer distinct problems than items "
                f"(docs/tasks/splits.md), so its interval counts its {s.distinct} problems",
                "yellow",
            )
        )
    if run.errors:
        lines.append(
            Line(
                f"reasoning: {run.errors} infrastructure error(s) (not counted as wrong answers)",
                "yellow",
            )
        )
    lines += error_lines(run)
    return lines


def error_lines(run: RunSummary) -> list[Line]:
    """Per model, the first distinct error messages (already redacted) with their counts."""
    lines = []
    for model in sorted(set(run.error_messages) | set(run.not_asked)):
        messages = list(run.error_messages.get(model, ()))
        total = sum(c for _, c in messages)
        what = f"errors of {model} ({total})" if total else f"calls not made to {model}"
        lines.append(Line(f"reasoning: {what}:", "yellow"))
        for message, count in messages[:SHOWN_CAUSES]:
            lines.append(Line(f"  {count}x {message}", "yellow"))
        if len(messages) > SHOWN_CAUSES:
            lines.append(
                Line(f"  ... and {len(messages) - SHOWN_CAUSES} more distinct message(s)", "yellow")
            )
        skipped = run.not_asked.get(model, 0)
        if skipped:
            why = (
                run.budget_reached
                or run.not_asked_why.get(model)
                or f"an error above stopped calls to {model}"
            )
            lines.append(Line(f"  {skipped}x not asked: {why}", "yellow"))
    return lines


def _comparison_lines(comparisons: Sequence[Comparison]) -> list[Line]:
    head = f"candidate vs baseline ({comparisons[0].baseline}), paired on identical prompts:"
    if comparisons[0].kind == "drift":
        head = "drift: each model now against its stored run, paired on identical prompts:"
    lines = [Line(""), Line(head)]
    lines += [Line(t) for t in render.text(comparisons_table(comparisons)).splitlines()]
    missing = sum(c.missing for c in comparisons)
    if missing:
        lines.append(
            Line(
                f"reasoning: {missing} candidate sample(s) have no baseline answer for the same "
                "prompt: not compared",
                "yellow",
            )
        )
    for c in comparisons:
        if underpowered(c) and c.kind != "drift":
            drop = c.detectable_drop
            shown = "no drop up to 0.5" if drop is None else f"only drops of {drop:g} or more"
            lines.append(
                Line(
                    f"reasoning: {c.spec.entry} {c.spec.level}: under-powered: {c.table.n} paired "
                    f"samples detect {shown} with power 0.8 (see pytest-reasoning plan)",
                    "yellow",
                )
            )
    return lines


def markdown_summary(run: RunSummary) -> str:
    """The run summary as Markdown tables (for ``$GITHUB_STEP_SUMMARY``)."""
    failed = sum(g.passed is False for g in run.gates) + sum(c.regressed for c in run.comparisons)
    parts = [
        "## pytest-reasoning",
        "",
        f"**{failed} gate(s) failed.**" if failed else "All gates passed.",
        "",
        render.markdown(levels_table(run.levels, run.gates, incomplete=run.incomplete)),
        *(["", "\\* " + MARGINAL_NOTE.replace("*", "\\*")] if _marked(run) else []),
        "",
        render.markdown(models_table(run.levels)),
    ]
    wrong = _wrong_markdown(run.rows)
    if wrong:
        parts += ["", *wrong]
    for b in breakdowns(run.rows, run.uncounted):
        title = b.title[0].upper() + b.title[1:]
        parts += ["", f"### {title}", "", render.markdown(breakdown_table(b))]
    if run.comparisons:
        table = comparisons_table(run.comparisons)
        for row, c in zip(table.rows, run.comparisons, strict=True):
            if c.regressed:
                row[-1] = render.Markdown(f"**{verdict(c)}**")
        parts += [
            "",
            f"### Candidate vs baseline ({render.markdown_text(run.comparisons[0].baseline)})",
            "",
            render.markdown(table),
        ]
    return "\n".join(parts) + "\n"


def _marked(run: RunSummary) -> bool:
    return any(g.marginal for g in run.gates)


def _wrong_markdown(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Wrong answers and call errors per level, folded: they pass as tests (the level's gate
    decides), so the step summary is where a reader sees them."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("error") is not None or not r.get("correct"):
            groups.setdefault((str(r["model"]), str(r["task"]), str(r["level"])), []).append(r)
    if not groups:
        return []
    total = sum(len(g) for g in groups.values())
    out = [
        f"### Wrong answers and errors ({total}; they do not fail the run by themselves: "
        "the gates decide)",
        "",
    ]
    for (model, task, level), found in sorted(groups.items()):
        # An HTML block: its text is HTML, not Markdown (entities, not backslashes).
        title = render.html_text(f"{model} · {task} · {level}: {len(found)}")
        out.append(f"<details><summary>{title}</summary>")
        out += ["", "| item | extracted | gold | failure mode / error |", "|---|---|---|---|"]
        for r in found[:WRONG_LISTED]:
            cached = " (cached)" if r.get("cached") else ""
            cells = [
                f"<code>{_cell(r['item_id'], 200)}</code>{cached}",
                _cell(r.get("extracted")),
                _cell(r.get("gold")),
                _cell(r.get("error") or r.get("failure_mode") or "wrong"),
            ]
            out.append("| " + " | ".join(cells) + " |")
        if len(found) > WRONG_LISTED:
            out.append(f"| … {len(found) - WRONG_LISTED} more | | | |")
        out += ["", "</details>", ""]
    return out


def _cell(value: Any, width: int = 60) -> str:
    """A value as a Markdown table cell: cut to ``width`` characters, then made inert."""
    text = "-" if value is None else str(value).replace("\n", " ")
    return render.markdown_text(text if len(text) <= width else text[: width - 1] + "…")
