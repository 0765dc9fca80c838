"""Thin renderers: one :class:`~pytest_reasoning.report.tables.Table` as terminal text
(tabulate's ``simple``), GitHub Markdown, or an HTML ``<table>``."""

from __future__ import annotations

import html

from .tables import Table

__all__ = ["html_table", "markdown", "text"]


def text(table: Table, fmt: str = "simple") -> str:
    from tabulate import tabulate

    return str(tabulate(table.rows, headers=table.headers, tablefmt=fmt, disable_numparse=True))


def markdown(table: Table) -> str:
    return text(table, "github")


_CLASSES = {"PASS": "pass", "FAIL": "fail", "REGRESSION": "fail", "under-powered": "warn"}


def html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.headers)
    body = []
    for r in table.rows:
        tds = []
        for v in r:
            cls = _CLASSES.get(v)
            attr = f' class="{cls}"' if cls else ""
            tds.append(f"<td{attr}>{html.escape(v)}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"
