"""Thin renderers: one :class:`~pytest_reasoning.report.tables.Table` as terminal text
(tabulate's ``simple``), GitHub Markdown, or an HTML ``<table>``.

A cell may hold anything a run read: a model's answer, an endpoint's error, a model name from
a results file. Each renderer shows it and nothing more: control and bidi characters as
visible symbols (``errors.printable``) everywhere, HTML escaped in the page, and in Markdown
every character GitHub reads as markup (HTML, links, emphasis, a table's ``|``) escaped."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Collection, Sequence

from ..errors import printable
from .tables import Table

__all__ = ["Markdown", "html_table", "html_text", "markdown", "markdown_text", "text"]


class Markdown(str):
    """Markdown this package wrote itself (``**REGRESSION**``): a cell :func:`markdown`
    leaves as it is."""

    __slots__ = ()


# Inline Markdown and HTML in GitHub's renderer (a table cell is inline): backslash escapes
# make each of these a literal character, the pipe included.
_MARKUP = re.compile(r"([\\`*_\[\]<>&|~$])")


def html_text(value: object) -> str:
    """Text from a run as HTML that shows it: escaped, controls and bidi as symbols."""
    return html.escape(printable(str(value)))


def markdown_text(value: object) -> str:
    """Text from a run as GitHub Markdown that shows it, on one line: no image, link, tag,
    emphasis or table cell can start in it."""
    if isinstance(value, Markdown):
        return str(value)
    return _MARKUP.sub(r"\\\1", printable(str(value)))


def _shown(table: Table, cell: Callable[[str], str]) -> Table:
    return Table(tuple(cell(h) for h in table.headers), [[cell(v) for v in r] for r in table.rows])


def text(table: Table, fmt: str = "simple") -> str:
    from tabulate import tabulate

    shown = _shown(table, printable)  # before tabulate measures the columns
    return str(tabulate(shown.rows, headers=shown.headers, tablefmt=fmt, disable_numparse=True))


def markdown(table: Table) -> str:
    return text(_shown(table, markdown_text), "github")


_CLASSES = {
    "PASS": "pass",
    "PASS*": "warn",  # passed, not significantly (docs/verdicts.md)
    "FAIL": "fail",
    "REGRESSION": "fail",
    "DRIFT": "fail",
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
    head = "".join(f"<th>{html_text(h)}</th>" for h in headers)
    short = {i for i, h in enumerate(table.headers) if h in paths}
    wraps = {i for i, h in enumerate(table.headers) if h in prose}
    body = []
    for k, r in enumerate(table.rows):
        tds = []
        for i, v in enumerate(r):
            cls = _CLASSES.get(v) or ("abbr" if i in short else "prose" if i in wraps else None)
            attr = f' class="{cls}"' if cls else ""
            if i in short:
                attr += f' title="{html_text(v)}"'
                v = v.replace("\\", "/").rsplit("/", 1)[-1]
            tds.append(f"<td{attr}>{html_text(v)}</td>")
        if links:
            link = links[k] if k < len(links) else None
            tds.append(
                f'<td><a href="{html.escape(link[1])}">{html_text(link[0])}</a></td>'
                if link
                else "<td></td>"
            )
        body.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"
