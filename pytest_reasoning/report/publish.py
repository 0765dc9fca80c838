"""The one publisher of a finished run's outputs, for a pytest run and for
``pytest-reasoning gate`` alike: the robustness analysis (terminal lines and its files), the
HTML report folder, and GitHub's step summary. It returns the lines to show, so both callers
print the same thing; an output the user asked for that could not be written is a red line and
``Published.failed``, which the callers turn into a non-zero exit status (docs/verdicts.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .html import Prices, build_report
from .summary import Line, RunSummary, markdown_summary

__all__ = ["Published", "check_output_dir", "publish"]


@dataclass
class Published:
    lines: list[Line] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # outputs asked for and not written

    def __iter__(self) -> Any:
        return iter(self.lines)


def check_output_dir(option: str, path: str) -> str | None:
    """Why ``path`` cannot become an output folder (one line), or None: checked before a run
    asks anything, so a typo costs nothing."""
    if os.path.exists(path):
        if not os.path.isdir(path):
            return f"{option}: {path} exists and is not a folder"
        return None if os.access(path, os.W_OK) else f"{option}: cannot write in {path}"
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
        return f"{option}: cannot create {path} ({parent} is not a writable folder)"
    return None


def publish(
    run: RunSummary,
    *,
    report_dir: str | None = None,
    robustness: str | None = None,
    step_summary: str | None = None,
    prices: Prices | None = None,
) -> Published:
    """Write what was asked for. ``robustness``: None off, ``""`` terminal only, a folder for
    its files too. ``prices``: the models' prices for the report (``build_report``).
    ``step_summary`` defaults to ``$GITHUB_STEP_SUMMARY`` (GitHub renders it on
    the run's page)."""
    out = Published()
    extra: list[tuple[str, str]] = []
    if robustness is not None:
        _robustness(out, run.rows, robustness)
        for name in ("rank_changes", "win_probability", "accuracy_ranges"):
            path = os.path.join(robustness, f"{name}.png")
            if robustness and os.path.exists(path):  # its plots join the report
                extra.append((f"Robustness: {name.replace('_', ' ')}", path))
    if report_dir:
        try:
            report = build_report(
                run.rows,
                report_dir,
                levels=run.levels,
                gates=run.gates,
                comparisons=run.comparisons,
                extra_images=extra,
                incomplete=run.incomplete,
                uncounted=run.uncounted,
                prices=prices,
                prompts=run.prompts,
            )
        except Exception as exc:  # a report must never turn a run's verdict into a crash
            _failed(out, f"could not write the report to {report_dir}: {_why(exc)}")
        else:
            out.lines.append(Line(f"reasoning: report {os.path.join(report.out, 'index.html')}"))
            if report.note:
                out.lines.append(Line(f"reasoning: report: {report.note}", "yellow"))
    step_summary = step_summary or os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        try:
            with open(step_summary, "a", encoding="utf-8") as fh:
                fh.write(markdown_summary(run))
        except OSError as exc:  # the CI's file, not the user's request: a warning
            out.lines.append(
                Line(f"reasoning: could not write GITHUB_STEP_SUMMARY: {_why(exc)}", "yellow")
            )
    return out


def _failed(out: Published, text: str) -> None:
    out.failed.append(text)
    out.lines.append(Line(f"reasoning: {text}", "red"))


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror}"
    return f"{type(exc).__name__}: {exc}"


def _robustness(out: Published, rows: Sequence[Mapping[str, Any]], folder: str) -> None:
    """The distributional-robustness analysis over the models that answered the same items."""
    out.lines.append(Line("robustness of the ranking to the items' weights (seed 004)", sep=True))
    if len({r["model"] for r in rows}) < 2:
        out.lines.append(Line("reasoning: robustness needs two or more models; skipped"))
        return
    try:
        from .. import robustness
    except ImportError as exc:
        out.lines.append(
            Line(f"reasoning: robustness needs the [analysis] extra ({exc}); skipped", "yellow")
        )
        return
    try:
        analysis = robustness.analyze(robustness.build_matrix(rows))
    except ValueError as exc:
        out.lines.append(Line(f"reasoning: robustness skipped: {exc}", "yellow"))
        return
    out.lines += [Line(text) for text in robustness.summary_lines(analysis)]
    if folder:
        try:
            written = robustness.write_outputs(analysis, folder)
        except OSError as exc:
            _failed(out, f"could not write the robustness files to {folder}: {_why(exc)}")
            return
        out.lines += [Line(f"reasoning: wrote {path}") for path in written]
