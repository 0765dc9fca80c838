"""Reports for people: the tables (built once, ``tables.py``), their renderers (terminal,
Markdown, HTML), the run summary's prepared lines, and the self-contained HTML report with
every sample (and links into it: ``gate_link`` for a gate's samples)."""

from __future__ import annotations

from .html import Report, build_report
from .links import gate_link, sample_link, samples_link
from .summary import (
    Line,
    RunSummary,
    closing_lines,
    markdown_summary,
    summary_lines,
    summary_reads,
)
from .tables import Table

__all__ = [
    "Line",
    "Report",
    "RunSummary",
    "Table",
    "build_report",
    "closing_lines",
    "gate_link",
    "markdown_summary",
    "sample_link",
    "samples_link",
    "summary_lines",
    "summary_reads",
]
