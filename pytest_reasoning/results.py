"""Results: the append-only JSONL store and per-(model, task, level) threshold gates.

Gates are decided once, by the process that saw every outcome (the xdist controller).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .core import Outcome
from .errors import StorageFailed
from .stats import wilson_interval

__all__ = [
    "RESULT_FIELDS",
    "GateResult",
    "GateSpec",
    "LevelStats",
    "ResultStore",
    "decide_gates",
    "read_results",
]

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
)


@dataclass(frozen=True)
class GateSpec:
    """Where a sample's gate lives and what it demands."""

    suite: str
    entry: str
    level: str
    min_accuracy: float | None = None
    confidence: float | None = None
    max_drop: float = 0.0
    alpha: float = 0.05
    metric: str = "accuracy"  # or "cell": mean partial credit (zebra's cell accuracy)

    def to_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "entry": self.entry,
            "level": self.level,
            "min_accuracy": self.min_accuracy,
            "confidence": self.confidence,
            "max_drop": self.max_drop,
            "alpha": self.alpha,
            "metric": self.metric,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GateSpec:
        return cls(
            d["suite"],
            d["entry"],
            d["level"],
            d.get("min_accuracy"),
            d.get("confidence"),
            d.get("max_drop", 0.0),
            d.get("alpha", 0.05),
            d.get("metric", "accuracy"),
        )

    @property
    def where(self) -> tuple[str, str, str]:
        return (self.suite, self.entry, self.level)


@dataclass
class LevelStats:
    model: str
    spec: GateSpec
    task: str
    n: int = 0
    correct: int = 0
    score_sum: float = 0.0  # partial credit (cell accuracy); equals ``correct`` for 0/1 tasks
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_total: float = 0.0
    calls: int = 0
    failure_modes: dict[str, int] = field(default_factory=dict)

    def add(self, o: Outcome) -> None:
        self.prompt_tokens += o.prompt_tokens or 0
        self.completion_tokens += o.completion_tokens or 0
        if not o.cached:
            self.latency_total += o.latency_s
            self.calls += 1
        if o.error is not None:
            self.errors += 1
            return
        self.n += 1
        self.correct += bool(o.correct)
        self.score_sum += float(bool(o.correct)) if o.score is None else o.score
        if o.failure_mode:
            self.failure_modes[o.failure_mode] = self.failure_modes.get(o.failure_mode, 0) + 1

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    @property
    def measure(self) -> float | None:
        """What the gate thresholds: accuracy, or mean cell accuracy under ``metric: cell``."""
        if not self.n:
            return None
        return (self.score_sum if self.spec.metric == "cell" else self.correct) / self.n

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Wilson interval of the measure. For cell accuracy (a mean of values in [0, 1]) the
        same formula is conservative: such a mean has variance at most mu(1-mu)/n, the
        binomial variance Wilson assumes."""
        hits = self.score_sum if self.spec.metric == "cell" else self.correct
        return wilson_interval(hits, self.n, confidence)

    @property
    def mean_latency(self) -> float | None:
        return self.latency_total / self.calls if self.calls else None


@dataclass(frozen=True)
class GateResult:
    stats: LevelStats
    passed: bool | None  # None: no threshold set
    reason: str


def decide_gates(stats: Iterable[LevelStats]) -> list[GateResult]:
    """Threshold gates. With ``confidence``, the Wilson lower bound must clear the threshold;
    errors are excluded from ``n`` (they are infrastructure, not answers)."""
    out = []
    for s in stats:
        thr = s.spec.min_accuracy
        if thr is None:
            out.append(GateResult(s, None, "no threshold"))
            continue
        if s.n == 0:
            out.append(GateResult(s, False, f"no scored samples ({s.errors} errors)"))
            continue
        acc = s.measure or 0.0
        what = "cell accuracy" if s.spec.metric == "cell" else "accuracy"
        count = f"{s.score_sum:.1f}/{s.n}" if s.spec.metric == "cell" else f"{s.correct}/{s.n}"
        if s.spec.confidence is not None:
            lo, _ = s.interval(s.spec.confidence)
            ok = lo >= thr
            reason = (
                f"{what} {acc:.3f} ({count}), {s.spec.confidence:.0%} Wilson "
                f"lower bound {lo:.3f} {'>=' if ok else '<'} min_accuracy {thr:g}"
            )
        else:
            ok = acc >= thr
            reason = f"{what} {acc:.3f} ({count}) {'>=' if ok else '<'} min_accuracy {thr:g}"
        out.append(GateResult(s, ok, reason))
    return out


class ResultStore:
    """Collects outcomes in memory for gates, and appends them to a JSONL file as they come.

    Rows are flushed one by one, so a killed run keeps every row it wrote; a rerun appends
    (rows are idempotent by ``item_id`` + ``model``: readers keep the last).
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


def read_results(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Rows of a results file, last row winning per (item_id, model). A line that is not a
    whole row (the last row of a killed run, cut mid-write) is skipped."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and "item_id" in row and "model" in row:
                rows[(row["item_id"], row["model"])] = row
    yield from rows.values()
