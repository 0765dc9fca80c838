"""Thin renderers: one :class:`~pytest_reasoning.report.tables.Table` as terminal text
(tabulate's ``simple``), GitHub Markdown, or an HTML ``<table>``."""

from __future__ import annotations

import html
from collections.abc import Collection, Sequence

from .tables import Table

__all__ = ["html_table", "markdown", "text"]


def text(table: Table, fmt: str = "simple") -> str:
    from tabulate import tabulate

    return str(tabulate(table.rows, headers=table.headers, tablefmt=fmt, disable_numparse=True))


def markdown(table: Table) -> str:
    return text(table, "github")


_CLASSES = {
    "PASS": "pass",
    "PASS*": "warn",  # passed, not significantly (docs/verdicts.md)
    "FAIL": "fail",
    "REGRESSION": "fail",
    "under-powered": "warn",
}


def html_table(
    table: Table,
    *,
    links: Sequence[tuple[str, str] | None] = (),
    paths: Collection[str] = (),
    prose: Collection[str] = ("reason", "error", "failure modes"),
) -> str:
    """``links``: per row, (text, href) of a last column; ``paths``: the headers of columns
    of file paths, shown by their file name, whole in a tooltip; ``prose``: the headers of
    columns that wrap (the page keeps every other cell on one line)."""
    headers = [*table.headers, *(("",) if links else ())]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    short = {i for i, h in enumerate(table.headers) if h in paths}
    wraps = {i for i, h in enumerate(table.headers) if h in prose}
    body = []
    for k, r in enumerate(table.rows):
        tds = []
        for i, v in enumerate(r):
            cls = _CLASSES.get(v) or ("abbr" if i in short else "prose" if i in wraps else None)
            attr = f' class="{cls}"' if cls else ""
            if i in short:
                attr += f' title="{html.escape(v)}"'
                v = v.replace("\\", "/").rsplit("/", 1)[-1]
            tds.append(f"<td{attr}>{html.escape(v)}</td>")
        if links:
            link = links[k] if k < len(links) else None
            tds.append(
                f'<td><a href="{html.escape(link[1])}">{html.escape(link[0])}</a></td>'
                if link
                else "<td></td>"
            )
        body.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"
