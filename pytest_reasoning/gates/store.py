"""The results store: every answered sample in memory for the gates, and appended to a JSONL
file as it comes. Gates are decided once, by the process that saw every outcome (the xdist
controller)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..core import Outcome
from ..errors import StorageFailed
from .rules import GateSpec
from .threshold import LevelStats

__all__ = ["RESULT_FIELDS", "ResultStore", "read_results", "row_key"]

# The documented row of the results file, in this order.
RESULT_FIELDS = (
    "item_id",
    "model",
    "task",
    "level",
    "seed",
    "prompt_sha256",
    "response",
    "extracted",
    "gold",
    "correct",
    "failure_mode",
    "error",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "score",
    "extra",
    # Since issue 19 (frontier models); older files lack them.
    "style",
    "suite",
    "entry",
    "repeat",
    "repeats",
    "model_id",
    "finish_reason",
    "reasoning_tokens",
    "reasoning",
    "extraction",
    "error_kind",
    "cost_usd",
)


class ResultStore:
    """Collects outcomes in memory for gates, and appends them to a JSONL file as they come.

    Rows are flushed one by one, so a killed run keeps every row it wrote; a rerun appends
    (rows are idempotent by :func:`row_key`: readers keep the last).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path else None
        self._fh: IO[str] | None = None
        self.levels: dict[tuple[str, GateSpec], LevelStats] = {}
        self.outcomes: list[Outcome] = []
        self.specs: list[GateSpec] = []  # the gate spec of each outcome, in step

    def add(self, outcome: Outcome, spec: GateSpec) -> None:
        self.outcomes.append(outcome)
        self.specs.append(spec)
        key = (outcome.model, GateSpec(spec.suite, spec.entry, spec.level))
        if key not in self.levels:
            self.levels[key] = LevelStats(outcome.model, spec, outcome.task)
        self.levels[key].add(outcome)
        if self.path is not None:
            row = outcome.to_dict()
            ordered = {k: row[k] for k in RESULT_FIELDS}
            try:
                fh = self.open()
                fh.write(json.dumps(ordered, ensure_ascii=False) + "\n")
                fh.flush()
            except OSError as exc:
                raise StorageFailed(f"cannot write the results file {self.path}: {exc}") from None

    def open(self) -> IO[str]:
        """The results file, opened for appending (call early to fail before any model call)."""
        if self._fh is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            torn = (
                self.path.exists()
                and self.path.stat().st_size > 0
                and not _ends_with_newline(self.path)
            )
            self._fh = self.path.open("a", encoding="utf-8")
            if torn:  # a killed run's half-written last row: start ours on a fresh line
                self._fh.write("\n")
        return self._fh

    def close(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            # A failed write was already reported; the rows before it are on disk.
            with contextlib.suppress(OSError):
                fh.close()

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.levels.values())


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def row_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """What makes a row a distinct sample: the item, the model as named and precisely (two
    local GGUFs are both ``local``), the prompt (a CoT and a direct run of one entry share item
    ids) and the repeat. Rows of older files lack the last fields and key as before."""
    return (
        row["item_id"],
        row["model"],
        row.get("model_id"),
        row.get("prompt_sha256"),
        row.get("repeat") or 0,
    )


def read_results(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Rows of a results file, last row winning per :func:`row_key`. A line that is not a
    whole row (the last row of a killed run, cut mid-write) is skipped."""
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and "item_id" in row and "model" in row:
                rows.pop(row_key(row), None)  # the last row wins, in its own place
                rows[row_key(row)] = row
    # A rerun of an older file appends rows that name the model precisely: they replace the
    # older rows of the same sample, which did not.
    precise = {k[:2] + k[3:] for k in rows if k[2] is not None}
    for key, row in rows.items():
        if key[2] is not None or key[:2] + key[3:] not in precise:
            yield row
