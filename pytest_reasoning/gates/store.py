"""The results store: per-level tallies for the gates, every answered sample appended to a JSONL
file as it comes, and in memory only what a run still needs (the rows its summary or report
reads, the slim answers a baseline comparison pairs). Gates are decided once, by the process
that saw every outcome (the xdist controller)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ..core import Outcome
from ..errors import StorageFailed
from .comparison import PairAnswer
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
    """Tallies outcomes per level for the gates, and appends them to a JSONL file as they come.

    Rows are flushed one by one, so a killed run keeps every row it wrote; a rerun appends
    (rows are idempotent by :func:`row_key`: readers keep the last).

    By default every outcome is also kept in memory (``outcomes``, with ``specs`` in step).
    A long run keeps memory flat instead: ``keep`` says which outcomes to keep (those its
    summary or report still reads), and ``pairing`` keeps a slim :class:`PairAnswer` per
    sample (``pairs``) for a baseline comparison; ``count`` counts them all.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        keep: Callable[[Outcome], bool] | None = None,
        pairing: bool = False,
    ) -> None:
        self.path = Path(path) if path else None
        self._fh: IO[str] | None = None
        self._keep = keep
        self._pairing = pairing
        self.levels: dict[tuple[str, GateSpec], LevelStats] = {}
        self.outcomes: list[Outcome] = []
        self.specs: list[GateSpec] = []  # the gate spec of each kept outcome, in step
        # With ``pairing``: (answer, its level's gate spec) per sample, in arrival order.
        self.pairs: list[tuple[PairAnswer, GateSpec]] = []
        self.count = 0  # outcomes added
        self.written = 0  # rows on disk (a failed write is not counted)

    def add(self, outcome: Outcome, spec: GateSpec) -> None:
        self.count += 1
        if self._keep is None or self._keep(outcome):
            self.outcomes.append(outcome)
            self.specs.append(spec)
        key = (outcome.model, GateSpec(spec.suite, spec.entry, spec.level))
        level = self.levels.get(key)
        if level is None:
            level = self.levels[key] = LevelStats(outcome.model, spec, outcome.task)
        level.add(outcome)
        if self._pairing:
            # The level's first spec: one object per level, and the one a comparison reads.
            self.pairs.append((PairAnswer.of(outcome), level.spec))
        if self.path is not None:
            row = outcome.to_dict()
            ordered = {k: row[k] for k in RESULT_FIELDS}
            data = (json.dumps(ordered, ensure_ascii=False) + "\n").encode("utf-8")
            try:
                _append_whole(self.open(), data)
                self.written += 1
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


def _append_whole(fh: IO[str], data: bytes) -> None:
    """Append one row unbuffered, or nothing: a write the disk refuses part-way is cut back,
    so the file holds exactly the rows counted as written (no buffered rest reaches the disk
    later, when space was freed)."""
    fh.flush()
    fd = fh.fileno()
    size = os.fstat(fd).st_size
    done = 0
    try:
        while done < len(data):
            done += os.write(fd, data[done:])
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        raise


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
    whole row (the last row of a killed run, cut mid-write) is skipped. Raises ValueError for
    a path that is not a regular file (``/dev/zero`` would never end, a FIFO never start)."""
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    if not os.path.isfile(path):
        if os.path.exists(path):
            raise ValueError(f"{os.fspath(path)!s} is not a regular file")
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path))
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if (
                isinstance(row, dict)
                and isinstance(row.get("item_id"), str)
                and isinstance(row.get("model"), str)
            ):
                rows.pop(row_key(row), None)  # the last row wins, in its own place
                rows[row_key(row)] = row
    # A rerun of an older file appends rows that name the model precisely: they replace the
    # older rows of the same sample, which did not.
    precise = {k[:2] + k[3:] for k in rows if k[2] is not None}
    for key, row in rows.items():
        if key[2] is not None or key[:2] + key[3:] not in precise:
            yield row
