"""Candidate versus baseline on the same items: one regression gate per (suite, entry, level).

Items are paired by ``(item_id, prompt_sha256)``, so a baseline answer only counts for the very
same prompt; candidate items the baseline never answered are reported as missing, and pairs
where either call failed are left out (infrastructure, not evidence). The regression test is
one-sided, p-values are Holm-adjusted across the levels compared for each candidate, and a gate
fails when the adjusted p-value is below the level's ``alpha``.

One sample per item: the exact McNemar test when ``max_drop`` is 0, otherwise the inversion of
Newcombe's paired interval against ``−max_drop``. With repeats (several samples of an item on
either side) the gate's estimand is the mean accuracy, so each side's answer to an item is its
mean over the item's samples and the test is the exact sign-flip test on the per-item mean
differences (``gates.signflip``; clustered by item: items are independent, samples of one item
are not). A majority vote per item would hide lost consistency: a candidate right on 2 of 3
repeats of every item has the baseline's majority votes (issue 39).

Items that ask the same problem up to renaming (rows' ``problem``, issue 41) are one unit
likewise: each side's answer to a problem pools its items' samples, so isomorphic items are
one pair (one sample each: McNemar on the pooled votes; several: the mean test).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, NamedTuple, Protocol

from ..core import Outcome
from .clustered import majority_correct
from .paired import (
    PairedTable,
    holm,
    mcnemar_exact,
    mcnemar_regression_p,
    paired_difference_interval,
    samples_to_detect_drop,
)
from .rules import GateSpec
from .signflip import item_tests, mean_difference_interval

__all__ = [
    "Answer",
    "Comparison",
    "ItemMeans",
    "ItemScore",
    "PairAnswer",
    "adjust",
    "baseline_answers",
    "compare",
    "item_scores",
]

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
    model_id: str | None = None  # the model precisely (a drift check names a change of it)
    problem_cluster: str = ""  # the problem up to renaming (issue 41): one pair per problem

    @classmethod
    def of(cls, o: Outcome) -> PairAnswer:
        return cls(
            o.model, o.task, o.cluster, o.prompt_sha256, o.extracted, o.correct, o.error,
            o.model_id, o.problem_cluster,
        )  # fmt: skip


class ItemScore(NamedTuple):
    """One model's samples of one item (and prompt): its majority vote (None: every call
    failed), right and answered samples, and samples in all (failed calls too)."""

    vote: bool | None
    right: int
    answered: int
    samples: int

    @property
    def mean(self) -> Fraction:
        return Fraction(self.right, self.answered) if self.answered else Fraction(0)

    @classmethod
    def of(cls, value: ItemScore | bool | None) -> ItemScore:
        """A score, or a bare verdict (one sample: True, False, or None where it failed)."""
        if isinstance(value, ItemScore):
            return value
        if value is None:
            return cls(None, 0, 0, 1)
        return cls(bool(value), int(bool(value)), 1, 1)


@dataclass(frozen=True)
class ItemMeans:
    """A comparison over repeats: per-item mean accuracies and the regression test used."""

    candidate: float  # mean over paired items of the candidate's per-item accuracy
    baseline: float
    worse: int  # items where the candidate's mean is below the baseline's
    better: int
    tied: int
    method: str  # gates.signflip: "sign-flip", "sign-flip normal" or "betting"
    error: float = 0.0  # the normal approximation's Berry–Esseen bound

    @property
    def test(self) -> str:
        if self.method == "sign-flip":
            return "exact sign-flip test on per-item mean differences"
        if self.method == "betting":
            return "betting test on per-item mean differences (any design; conservative)"
        return (
            "sign-flip test on per-item mean differences (normal approximation, error <= "
            f"{self.error:.2g})"
        )


@dataclass
class Comparison:
    kind: ClassVar[str] = "regression"  # a drift check's verdicts are "drift" (gates.drift)
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
    means: ItemMeans | None = None  # over repeats: per-item means, tested by sign flips

    @property
    def regressed(self) -> bool:
        return self.p_adjusted < self.spec.rule.alpha

    @property
    def improved(self) -> bool:
        return self.difference > 0 and self.p_two_sided < self.spec.rule.alpha

    @property
    def candidate_accuracy(self) -> float:
        """The gated measure: with repeats, the mean over items of per-item accuracy."""
        return self.table.candidate_accuracy if self.means is None else self.means.candidate

    @property
    def baseline_accuracy(self) -> float:
        return self.table.baseline_accuracy if self.means is None else self.means.baseline

    @property
    def difference(self) -> float:
        """Candidate minus baseline accuracy."""
        if self.means is None:
            return self.table.difference
        return self.means.candidate - self.means.baseline

    @property
    def test(self) -> str:
        """The regression test's short name."""
        if self.means is None:
            return "McNemar"
        return "betting" if self.means.method == "betting" else "sign-flip"

    @property
    def detectable_drop(self) -> float | None:
        """The smallest drop this many pairs detect with power 0.8 (None: none up to 0.5)."""
        for hundredths in range(1, 51):
            drop = hundredths / 100
            if drop >= self.baseline_accuracy:
                return None
            need = samples_to_detect_drop(self.baseline_accuracy, drop, alpha=self.spec.rule.alpha)
            if need <= self.table.n:
                return drop
        return None

    def reason(self) -> str:
        t = self.table
        drop = f" by more than {self.spec.rule.max_drop:g}" if self.spec.rule.max_drop else ""
        if self.means is not None:
            m = self.means
            return (
                f"{self.candidate} is worse than {self.baseline}{drop}: per-item mean accuracy "
                f"{m.candidate:.3f} vs {m.baseline:.3f} over repeats on {t.n} paired items "
                f"(candidate worse on {m.worse}, better on {m.better}); difference "
                f"{self.difference:+.3f} [{self.low:+.3f}, {self.high:+.3f}], {m.test}, "
                f"Holm-adjusted p = {self.p_adjusted:.3g} < alpha {self.spec.rule.alpha:g}"
                + (f"; {self.settled}" if self.settled else "")
            )
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
        out: dict[str, Any] = {
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
        if self.means is None:
            return out
        # Over repeats: the per-item counts and the sign-flip test instead of McNemar's.
        m = self.means
        for key in ("both", "only_baseline", "only_candidate", "neither", "p_mcnemar"):
            del out[key]
        out.update(
            candidate_accuracy=m.candidate,
            baseline_accuracy=m.baseline,
            difference=self.difference,
            items_worse=m.worse,
            items_better=m.better,
            items_tied=m.tied,
            test=m.method,
            p_two_sided=self.p_two_sided,
        )
        return out


def item_scores(rows: Iterable[Answer]) -> dict[PairKey, ItemScore]:
    """Per item and prompt: the majority vote of its answered samples (the only sample's
    verdict without repeats; None where every call failed), its right and answered samples
    and its samples in all."""
    votes: dict[PairKey, list[tuple[str | None, bool]]] = {}
    samples: dict[PairKey, int] = {}
    for o in rows:
        key = (o.cluster, o.prompt_sha256)
        mine = votes.setdefault(key, [])
        samples[key] = samples.get(key, 0) + 1
        if o.error is None and o.correct is not None:
            mine.append((o.extracted, bool(o.correct)))
    return {
        key: ItemScore(
            majority_correct(v) if v else None, sum(ok for _, ok in v), len(v), samples[key]
        )
        for key, v in votes.items()
    }


def verdicts(rows: Iterable[Answer]) -> dict[PairKey, bool | None]:
    """One verdict per item and prompt: the majority vote of its answered samples (the only
    sample's verdict without repeats); ``None`` where every call failed."""
    return {key: score.vote for key, score in item_scores(rows).items()}


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
    baseline: Mapping[PairKey, ItemScore | bool | None],
    baseline_name: str,
) -> list[Comparison]:
    """One comparison per (candidate model, suite, entry, level), Holm-adjusted per model.
    ``baseline``: per item and prompt, :func:`item_scores` of the baseline (or a bare
    verdict per item: one sample each). A level where either side has several samples of
    an item is compared on per-item means (the sign-flip test), else by McNemar."""
    groups: dict[tuple[str, tuple[str, str, str]], list[tuple[Answer, GateSpec]]] = {}
    for outcome, spec in outcomes:
        groups.setdefault((outcome.model, spec.where), []).append((outcome, spec))
    results: list[Comparison] = []
    for (model, _where), rows in sorted(groups.items()):
        pairs: list[tuple[bool, bool]] = []
        means: list[tuple[Fraction, Fraction]] = []
        missing = errors = 0
        repeated, matched = False, True
        problem = {(o.cluster, o.prompt_sha256): o.problem_cluster or o.cluster for o, _ in rows}
        problems: dict[str, tuple[list[ItemScore], list[ItemScore]]] = {}
        for key, mine in item_scores(o for o, _ in rows).items():
            if key not in baseline:
                missing += 1
                continue
            theirs = ItemScore.of(baseline[key])
            if mine.vote is None or theirs.vote is None:
                errors += 1
                continue
            sides = problems.setdefault(problem[key], ([], []))
            sides[0].append(mine)
            sides[1].append(theirs)
        for mine_items, theirs_items in problems.values():
            mine, theirs = _pooled(mine_items), _pooled(theirs_items)
            pairs.append((bool(mine.vote), bool(theirs.vote)))
            means.append((mine.mean, theirs.mean))
            repeated = repeated or mine.samples > 1 or theirs.samples > 1
            matched = matched and mine.answered == theirs.answered
        spec = rows[0][1]
        table = PairedTable.from_pairs(pairs)
        comparison = Comparison(
            candidate=model,
            baseline=baseline_name,
            task=rows[0][0].task,
            spec=spec,
            table=table,
            missing=missing,
            errors=errors,
            p_two_sided=1.0,
            p_regression=1.0,
        )
        if repeated:
            _by_means(comparison, means, matched)
        else:
            comparison.p_two_sided = mcnemar_exact(table)
            comparison.p_regression = _regression_p(table, spec.rule.max_drop)
            comparison.low, comparison.high = paired_difference_interval(table, 0.95)
        results.append(comparison)
    adjust(results)
    return results


def _pooled(items: list[ItemScore]) -> ItemScore:
    """The items of one problem up to renaming as one: their samples pooled, the vote their
    answered samples' majority (a tie: the first item's vote)."""
    if len(items) == 1:
        return items[0]
    right = sum(i.right for i in items)
    answered = sum(i.answered for i in items)
    vote = items[0].vote if 2 * right == answered else 2 * right > answered
    return ItemScore(vote, right, answered, sum(i.samples for i in items))


def _by_means(c: Comparison, means: list[tuple[Fraction, Fraction]], matched: bool) -> None:
    """A comparison over repeats: a test of the per-item mean differences (``matched``:
    both sides answered every item equally often; ``gates.signflip``)."""
    diffs = [mine - theirs for mine, theirs in means]
    n = len(diffs) or 1
    plain, regression = item_tests(diffs, matched=matched, max_drop=c.spec.rule.max_drop)
    c.p_two_sided, c.p_regression = plain.p_two_sided, regression.p_lower
    c.low, c.high = mean_difference_interval(diffs, 0.95)
    c.means = ItemMeans(
        candidate=float(sum((m for m, _ in means), Fraction(0))) / n,
        baseline=float(sum((t for _, t in means), Fraction(0))) / n,
        worse=sum(d < 0 for d in diffs),
        better=sum(d > 0 for d in diffs),
        tied=sum(d == 0 for d in diffs),
        method=regression.method,
        error=regression.error,
    )


def adjust(comparisons: Iterable[Comparison]) -> None:
    """Holm's correction of each candidate's regression p-values across its levels."""
    comparisons = list(comparisons)
    for model in {c.candidate for c in comparisons}:
        mine = [c for c in comparisons if c.candidate == model]
        for c, p in zip(mine, holm([c.p_regression for c in mine]), strict=True):
            c.p_adjusted = p
