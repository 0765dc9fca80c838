"""The run summary as prepared lines: the terminal renders them (``Line.sep`` as a separator,
``Line.style`` as colour), GitHub's step summary gets the same tables as Markdown. Nothing here
needs pytest, so the summary is testable from plain data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..gates import Comparison, GateResult, LevelStats
from . import render
from .tables import comparisons_table, length_table, levels_table, verdict

__all__ = [
    "Line",
    "RunSummary",
    "closing_lines",
    "error_lines",
    "markdown_summary",
    "summary_lines",
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
    repeats: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    # Per model: distinct error messages (redacted) with counts, in the order they came,
    # and how many samples were not asked after an error stopped the model.
    error_messages: Mapping[str, Sequence[tuple[str, int]]] = field(default_factory=dict)
    not_asked: Mapping[str, int] = field(default_factory=dict)


SHOWN_CAUSES = 3  # distinct error messages printed per model


def summary_lines(run: RunSummary) -> list[Line]:
    lines = [Line(t) for t in render.text(levels_table(run.levels, run.gates)).splitlines()]
    if run.interrupted:
        saved = f" (in {run.saved_to})" if run.saved_to else ""
        lines.append(
            Line(
                f"reasoning: INTERRUPTED: gates not decided; {run.answered} answers "
                f"recorded{saved}; rerun the same command: cached answers are not asked again",
                "yellow bold",
            )
        )
    failed = [g for g in run.gates if g.passed is False]
    if failed:
        decided = sum(g.passed is not None for g in run.gates)
        lines.append(Line(f"reasoning: {len(failed)} of {decided} gates FAILED", "red bold"))
        for g in failed:
            s = g.stats
            lines.append(
                Line(f"  FAILED {s.model} {s.spec.entry} {s.spec.level}: {g.reason}", "red")
            )
    lengths = length_table(run.rows)
    if lengths:
        lines.append(Line("accuracy by input length (FLenQA)", sep=True))
        lines += [Line(t) for t in render.text(lengths).splitlines()]
    if run.comparisons:
        lines += _comparison_lines(run.comparisons)
    return lines


def closing_lines(run: RunSummary) -> list[Line]:
    """Warnings that close the summary (after the robustness analysis and the report)."""
    lines = []
    for (entry, level, model), count in sorted(run.repeats.items()):
        lines.append(
            Line(
                f"reasoning: {entry} {level} ({model}): {count} sample(s) repeat an earlier "
                "problem; the level has fewer distinct problems than samples, so its interval "
                "is optimistic",
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
        lines.append(Line(f"reasoning: errors of {model} ({total}):", "yellow"))
        for message, count in messages[:SHOWN_CAUSES]:
            lines.append(Line(f"  {count}x {message}", "yellow"))
        if len(messages) > SHOWN_CAUSES:
            lines.append(
                Line(f"  ... and {len(messages) - SHOWN_CAUSES} more distinct message(s)", "yellow")
            )
        skipped = run.not_asked.get(model, 0)
        if skipped:
            lines.append(
                Line(f"  {skipped}x not asked: an error above stopped calls to {model}", "yellow")
            )
    return lines


def _comparison_lines(comparisons: Sequence[Comparison]) -> list[Line]:
    lines = [
        Line(""),
        Line(f"candidate vs baseline ({comparisons[0].baseline}), paired on identical prompts:"),
    ]
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
        if c.regressed:
            continue
        drop = c.detectable_drop
        if drop is None or drop > c.spec.rule.max_drop + 0.05:
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
        render.markdown(levels_table(run.levels, run.gates)),
    ]
    lengths = length_table(run.rows)
    if lengths:
        parts += ["", "### Accuracy by input length (FLenQA)", "", render.markdown(lengths)]
    if run.comparisons:
        table = comparisons_table(run.comparisons)
        for row, c in zip(table.rows, run.comparisons, strict=True):
            if c.regressed:
                row[-1] = f"**{verdict(c)}**"
        parts += [
            "",
            f"### Candidate vs baseline ({run.comparisons[0].baseline})",
            "",
            render.markdown(table),
        ]
    return "\n".join(parts) + "\n"
