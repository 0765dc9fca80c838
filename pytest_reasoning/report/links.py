"""Links into the report's sample viewer, to print beside a failed gate (terminal, JUnit):
``index.html#model=…&suite=…&task=…&level=…&outcome=wrong`` opens the page filtered to that
gate's wrong answers; ``#view=pairs&…`` a comparison's pairs, discordant ones first;
``#sample=<id>`` one sample. The page reads these parameters and writes them back as filters
change, so any view can be copied and shared. Where the report will be published
(``--reasoning-report-url``), links are made against that address instead of a ``file://``
path, so a link in a CI log opens the published page."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from ..errors import InvalidArgument, printable
from ..errors import quote as quoted
from ..gates import Comparison, GateResult, LevelStats

__all__ = [
    "check_report_url",
    "fragment",
    "gate_link",
    "report_url",
    "sample_link",
    "samples_link",
]


def check_report_url(url: str) -> str:
    """The address a report will be published at, as ``--reasoning-report-url`` gives it: an
    http(s) URL with a host, without a ``#fragment`` (each link adds its own view there), with
    nothing a terminal or a JUnit file would act on. Returns it stripped; raises
    InvalidArgument with one line."""
    from urllib.parse import urlsplit

    text = url.strip()
    problem = None
    try:
        text.encode("utf-8")
        parts = urlsplit(text)
        parts.port  # noqa: B018 - parsing the port is the check
    except (UnicodeEncodeError, ValueError):
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        problem = "expected an http(s) URL such as https://ORG.github.io/REPO/"
    elif parts.fragment or text.endswith("#"):
        problem = "expected the page's address without a #fragment (each link adds its own)"
    elif printable(text) != text or any(c.isspace() for c in text):
        problem = "expected a URL without spaces or control characters"
    if problem:
        raise InvalidArgument(f"{problem}, got {quoted(url, 100)}")
    return text


def report_url(index: str | os.PathLike[str]) -> str:
    """The page's address: a URL as given (``https://…/report/``, where GitHub Pages serves
    it), a path as a ``file://`` URL (terminals make those clickable). A path is the report's
    directory (it may not exist yet: a live run links before it writes) unless it names a page."""
    text = os.fspath(index)
    if "://" in text:
        return text
    path = Path(text)
    if path.suffix.lower() not in (".html", ".htm"):
        path = path / "index.html"
    return path.resolve().as_uri()


def fragment(**params: Any) -> str:
    """The part after ``#``: the view's parameters (empty ones left out), URL-encoded."""
    kept = {k: str(v) for k, v in params.items() if v is not None and v != ""}
    return urlencode(kept, quote_via=quote)


def samples_link(
    index: str | os.PathLike[str],
    *,
    model: str | None = None,
    suite: str | None = None,
    task: str | None = None,
    level: str | None = None,
    outcome: str | None = None,
    mode: str | None = None,
    search: str | None = None,
) -> str:
    """The viewer filtered: ``task`` is the suite entry (the task id unless the suite names
    the entry), ``outcome`` one of ``correct``, ``wrong``, ``error``, ``not-correct``."""
    view = fragment(
        model=model, suite=suite, task=task, level=level, outcome=outcome, mode=mode, q=search
    )
    return f"{report_url(index)}#{view}"


def gate_link(index: str | os.PathLike[str], gate: GateResult | LevelStats | Comparison) -> str:
    """The samples behind a gate: a threshold gate's level, its wrong answers and failed calls
    (every sample of the level when it has none); a comparison's pairs, discordant first."""
    if isinstance(gate, Comparison):
        suite, entry, level = gate.spec.where
        view = fragment(view="pairs", model=gate.candidate, suite=suite, task=entry, level=level)
        return f"{report_url(index)}#{view}"
    stats = gate.stats if isinstance(gate, GateResult) else gate
    suite, entry, level = stats.spec.where
    return samples_link(
        index,
        model=stats.model,
        suite=suite,
        task=entry,
        level=level,
        outcome="not-correct" if stats.n + stats.errors > stats.correct else None,
    )


def sample_link(index: str | os.PathLike[str], row: Mapping[str, Any]) -> str:
    """One sample of a results row."""
    from .samples import sample_id

    return f"{report_url(index)}#{fragment(sample=sample_id(row))}"
