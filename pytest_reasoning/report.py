"""Tables for people: the run summary (tabulate)."""

from __future__ import annotations

from collections.abc import Sequence

from .results import GateResult, LevelStats, ResultStore

__all__ = ["summary_rows", "summary_table"]

HEADERS = (
    "model",
    "task",
    "level",
    "n",
    "correct",
    "accuracy",
    "95% CI",
    "threshold",
    "gate",
    "errors",
    "tokens",
    "mean latency",
)


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def summary_rows(gates: Sequence[GateResult], store: ResultStore) -> list[list[str]]:
    by_stats = {id(g.stats): g for g in gates}
    rows = []
    levels: list[LevelStats] = sorted(
        store.levels.values(), key=lambda s: (s.model, s.spec.suite, s.spec.entry, s.spec.level)
    )
    for s in levels:
        gate = by_stats.get(id(s))
        lo, hi = s.interval(0.95)
        thr = s.spec.min_accuracy
        threshold = (
            "-"
            if thr is None
            else (f"{thr:g}" + (f" @{s.spec.confidence:g}" if s.spec.confidence else ""))
        )
        verdict = (
            "-" if gate is None or gate.passed is None else ("PASS" if gate.passed else "FAIL")
        )
        latency = s.mean_latency
        rows.append(
            [
                s.model,
                s.spec.entry,
                s.spec.level,
                str(s.n),
                str(s.correct),
                _fmt(s.accuracy),
                f"[{lo:.2f}, {hi:.2f}]" if s.n else "-",
                threshold,
                verdict,
                str(s.errors),
                str(s.prompt_tokens + s.completion_tokens),
                "-" if latency is None else f"{latency:.2f}s",
            ]
        )
    return rows


def summary_table(gates: Sequence[GateResult], store: ResultStore) -> str:
    from tabulate import tabulate

    return str(
        tabulate(
            summary_rows(gates, store), headers=HEADERS, tablefmt="simple", disable_numparse=True
        )
    )
