"""Links into the report's sample viewer, to print beside a failed gate (terminal, JUnit):
``index.html#model=…&suite=…&task=…&level=…&outcome=wrong`` opens the page filtered to that
gate's wrong answers; ``#view=pairs&…`` a comparison's pairs, discordant ones first;
``#sample=<id>`` one sample. The page reads these parameters and writes them back as filters
change, so any view can be copied and shared."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from ..gates import Comparison, GateResult, LevelStats

__all__ = ["fragment", "gate_link", "report_url", "sample_link", "samples_link"]


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
