"""Reports for people: the tables (built once, ``tables.py``), their renderers (terminal,
Markdown, HTML), the run summary's prepared lines, and the self-contained HTML report."""

from __future__ import annotations

from .html import Report, build_report
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
    "markdown_summary",
    "summary_lines",
    "summary_reads",
]
