"""Candidate versus baseline on the same items: one regression gate per (suite, entry, level).

Items are paired by ``(item_id, prompt_sha256)``, so a baseline answer only counts for the very
same prompt; candidate items the baseline never answered are reported as missing, and pairs
where either call failed are left out (infrastructure, not evidence). With repeats (several
samples of an item), each side's verdict on an item is its majority vote, so every item is one
pair and McNemar's independence holds across items. The regression test is
one-sided: the exact McNemar test when ``max_drop`` is 0, otherwise the inversion of Newcombe's
paired interval against ``−max_drop``. p-values are Holm-adjusted across the levels compared
for each candidate, and a gate fails when the adjusted p-value is below the level's ``alpha``.

Items that ask the same problem up to renaming (rows' ``problem``) are one pair likewise, each
side's majority over them (issue 41).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from ..core import Outcome
from .clustered import majority_correct, problem_pairs
from .paired import (
    PairedTable,
    holm,
    mcnemar_exact,
    mcnemar_regression_p,
    paired_difference_interval,
    samples_to_detect_drop,
)
from .rules import GateSpec

__all__ = ["Answer", "Comparison", "PairAnswer", "adjust", "baseline_answers", "compare"]

PairKey = tuple[str, str]  # (item id without the repeat, prompt_sha256)


class Answer(Protocol):
    """What pairing reads of a sample: an :class:`Outcome`, or the slim :class:`PairAnswer`."""

    @property
    def model(self) -> str: ...
    @property
    def task(self) -> str: ...
    @property
    def cluster(self) -> str: ...
    @property
    def prompt_sha256(self) -> str: ...
    @property
    def extracted(self) -> str | None: ...
    @property
    def correct(self) -> bool | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def problem_cluster(self) -> str: ...


class PairAnswer(NamedTuple):
    """The part of an outcome a comparison needs, kept per sample instead of the whole row
    (a run's memory stays flat: the rows themselves go to the results file)."""

    model: str
    task: str
    cluster: str
    prompt_sha256: str
    extracted: str | None
    correct: bool | None
    error: str | None
    problem_cluster: str = ""  # the problem up to renaming (issue 41): one pair per problem

    @classmethod
    def of(cls, o: Outcome) -> PairAnswer:
        return cls(
            o.model, o.task, o.cluster, o.prompt_sha256, o.extracted, o.correct, o.error,
            o.problem_cluster,
        )  # fmt: skip


@dataclass
class Comparison:
    candidate: str
    baseline: str
    task: str
    spec: GateSpec
    table: PairedTable
    missing: int  # candidate items with no baseline answer for the same prompt
    errors: int  # pairs left out because a call failed on either side
    p_two_sided: float
    p_regression: float
    p_adjusted: float = 1.0
    low: float = -1.0  # 95% interval of candidate − baseline accuracy
    high: float = 1.0
    settled: str = ""  # a sequential level: where and how it settled (gates.sequential)

    @property
    def regressed(self) -> bool:
        return self.p_adjusted < self.spec.rule.alpha

    @property
    def improved(self) -> bool:
        return self.table.difference > 0 and self.p_two_sided < self.spec.rule.alpha

    @property
    def detectable_drop(self) -> float | None:
        """The smallest drop this many pairs detect with power 0.8 (None: none up to 0.5)."""
        for hundredths in range(1, 51):
            drop = hundredths / 100
            if drop >= self.table.baseline_accuracy:
                return None
            need = samples_to_detect_drop(
                self.table.baseline_accuracy, drop, alpha=self.spec.rule.alpha
            )
            if need <= self.table.n:
                return drop
        return None

    def reason(self) -> str:
        t = self.table
        drop = f" by more than {self.spec.rule.max_drop:g}" if self.spec.rule.max_drop else ""
        return (
            f"{self.candidate} is worse than {self.baseline}{drop}: accuracy "
            f"{t.candidate_accuracy:.3f} vs {t.baseline_accuracy:.3f} on {t.n} paired items "
            f"(only baseline right {t.only_baseline}, only candidate right {t.only_candidate}); "
            f"difference {t.difference:+.3f} [{self.low:+.3f}, {self.high:+.3f}], "
            f"Holm-adjusted p = {self.p_adjusted:.3g} < alpha {self.spec.rule.alpha:g}"
            + (f"; {self.settled}" if self.settled else "")
        )

    def to_dict(self) -> dict[str, Any]:
        t = self.table
        return {
            "candidate": self.candidate,
            "baseline": self.baseline,
            "task": self.task,
            "level": self.spec.level,
            "n": t.n,
            "both": t.both,
            "only_baseline": t.only_baseline,
            "only_candidate": t.only_candidate,
            "neither": t.neither,
            "candidate_accuracy": t.candidate_accuracy,
            "baseline_accuracy": t.baseline_accuracy,
            "difference": t.difference,
            "interval": [self.low, self.high],
            "p_mcnemar": self.p_two_sided,
            "p_regression": self.p_regression,
            "p_holm": self.p_adjusted,
            "max_drop": self.spec.rule.max_drop,
            "alpha": self.spec.rule.alpha,
            "missing": self.missing,
            "errors": self.errors,
            "regressed": self.regressed,
            "improved": self.improved,
        }


def verdicts(rows: Iterable[Answer]) -> dict[PairKey, bool | None]:
    """One verdict per item and prompt: the majority vote of its answered samples (the only
    sample's verdict without repeats); ``None`` where every call failed."""
    votes: dict[PairKey, list[tuple[str | None, bool]]] = {}
    for o in rows:
        mine = votes.setdefault((o.cluster, o.prompt_sha256), [])
        if o.error is None and o.correct is not None:
            mine.append((o.extracted, bool(o.correct)))
    return {key: majority_correct(v) if v else None for key, v in votes.items()}


def baseline_answers(rows: Iterable[Answer]) -> dict[PairKey, bool | None]:
    """The baseline's verdict per item and prompt (``None`` where its calls failed)."""
    return verdicts(rows)


def _regression_p(table: PairedTable, max_drop: float) -> float:
    if max_drop == 0:
        return mcnemar_regression_p(table)
    if table.n == 0 or table.difference >= -max_drop:
        return 1.0
    # The one-sided p-value is the α at which the (1 − 2α) interval's upper end reaches
    # −max_drop; the upper end grows as α shrinks, so bisect.
    lo, hi = 1e-12, 0.5
    for _ in range(60):
        alpha = (lo + hi) / 2
        _, upper = paired_difference_interval(table, 1 - 2 * alpha)
        if upper < -max_drop:
            hi = alpha
        else:
            lo = alpha
    return hi


def compare(
    outcomes: Iterable[tuple[Answer, GateSpec]],
    baseline: Mapping[PairKey, bool | None],
    baseline_name: str,
) -> list[Comparison]:
    """One comparison per (candidate model, suite, entry, level), Holm-adjusted per model."""
    groups: dict[tuple[str, tuple[str, str, str]], list[tuple[Answer, GateSpec]]] = {}
    for outcome, spec in outcomes:
        groups.setdefault((outcome.model, spec.where), []).append((outcome, spec))
    results: list[Comparison] = []
    for (model, _where), rows in sorted(groups.items()):
        pairs: list[tuple[str, bool, bool]] = []
        missing = errors = 0
        problem = {(o.cluster, o.prompt_sha256): o.problem_cluster or o.cluster for o, _ in rows}
        for key, verdict in verdicts(o for o, _ in rows).items():
            if key not in baseline:
                missing += 1
            elif verdict is None or baseline[key] is None:
                errors += 1
            else:
                pairs.append((problem[key], verdict, bool(baseline[key])))
        spec = rows[0][1]
        table = PairedTable.from_pairs(problem_pairs(pairs))  # one pair per problem
        low, high = paired_difference_interval(table, 0.95)
        results.append(
            Comparison(
                candidate=model,
                baseline=baseline_name,
                task=rows[0][0].task,
                spec=spec,
                table=table,
                missing=missing,
                errors=errors,
                p_two_sided=mcnemar_exact(table),
                p_regression=_regression_p(table, spec.rule.max_drop),
                low=low,
                high=high,
            )
        )
    adjust(results)
    return results


def adjust(comparisons: Iterable[Comparison]) -> None:
    """Holm's correction of each candidate's regression p-values across its levels."""
    comparisons = list(comparisons)
    for model in {c.candidate for c in comparisons}:
        mine = [c for c in comparisons if c.candidate == model]
        for c, p in zip(mine, holm([c.p_regression for c in mine]), strict=True):
            c.p_adjusted = p
