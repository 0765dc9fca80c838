"""The drift check (``--reasoning-drift RESULTS``): has a model whose name did not change
started to answer otherwise? The stored run's items are asked of the same model again (never
from the response cache) and paired with the stored answers per item and prompt, as a
comparison pairs a candidate with a baseline, and one verdict per level says whether the
answers moved:

- **correctness**, two-sided: the exact McNemar test on the paired verdicts (with repeats,
  the sign-flip test on per-item mean differences: ``gates.comparison``), since a model that
  got better has drifted too;
- **the answers themselves**: the share of paired items whose extracted answer (over repeats,
  the most common one) changed, against ``max_changed`` (what sampling noise may move; 0.10
  by default), by the exact one-sided binomial test that the true share exceeds it.

A level's p-value is twice the smaller of the two (Bonferroni over the two tests), then
Holm-corrected across the model's levels as comparisons are; it drifted when that is below
the level's ``alpha``. The verdict is reported like a comparison (``entry[LEVEL-drift]``)."""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from ..core import Outcome
from ..errors import ReasoningError
from .comparison import Answer, Comparison, ItemScore, PairKey, adjust, compare, item_scores
from .rows import read_results
from .rules import GateSpec

__all__ = [
    "DEFAULT_MAX_CHANGED",
    "Drift",
    "DriftBaseline",
    "StoredAnswers",
    "binomial_upper_tail",
    "load_drift",
    "majority_answer",
]

DEFAULT_MAX_CHANGED = 0.10


def binomial_upper_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed in log space (no underflow at large n)."""
    if k <= 0 or p >= 1.0:
        return 1.0
    if k > n or p <= 0.0:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    top = math.lgamma(n + 1)
    logs = [
        top - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
        for i in range(k, n + 1)
    ]
    peak = max(logs)
    return min(1.0, math.exp(peak) * sum(math.exp(x - peak) for x in logs))


def majority_answer(answers: Sequence[str | None]) -> str | None:
    """The most common extracted answer (None, no answer, is one more answer); a tie goes to
    the one given first, as the majority vote's does."""
    if not answers:
        return None
    counts = Counter(answers)
    best = max(counts.values())
    return next(a for a in answers if counts[a] == best)


def _answers(rows: Iterable[Answer]) -> dict[PairKey, str | None]:
    """Per item and prompt, the most common extracted answer of its answered samples."""
    said: dict[PairKey, list[str | None]] = {}
    for o in rows:
        if o.error is None:
            text = o.extracted.strip() if isinstance(o.extracted, str) else None
            said.setdefault((o.cluster, o.prompt_sha256), []).append(text)
    return {key: majority_answer(v) for key, v in said.items()}


@dataclass(frozen=True)
class StoredAnswers:
    """One model's stored run: per item and prompt its scores and its most common answer,
    and the model ids its rows name."""

    scores: Mapping[PairKey, ItemScore]
    answers: Mapping[PairKey, str | None]
    model_ids: frozenset[str] = frozenset()


@dataclass
class Drift(Comparison):
    """A level's drift verdict, in a comparison's clothes (``regressed``: drifted)."""

    kind: ClassVar[str] = "drift"
    changed: int = 0  # paired items whose answer changed
    max_changed: float = DEFAULT_MAX_CHANGED
    p_changed: float = 1.0  # one-sided: the share changed exceeds max_changed
    p_correct: float = 1.0  # two-sided: correctness moved
    model_ids: tuple[str, ...] = field(default_factory=tuple)  # stored ids unlike this run's

    @property
    def changed_share(self) -> float:
        return self.changed / self.table.n if self.table.n else 0.0

    def reason(self) -> str:
        t = self.table
        moved = (
            f"{self.candidate} answers otherwise than its stored run"
            if self.regressed
            else f"{self.candidate} answers as its stored run did"
        )
        ids = (
            f"; the stored rows name model id {', '.join(self.model_ids)}" if self.model_ids else ""
        )
        return (
            f"{moved}: {self.changed} of {t.n} paired items ({self.changed_share:.0%}) changed "
            f"their answer (tolerated {self.max_changed:.0%}, p = {self.p_changed:.3g}); "
            f"accuracy {self.candidate_accuracy:.3f} now vs {self.baseline_accuracy:.3f} "
            f"stored (only stored right {t.only_baseline}, only now right "
            f"{t.only_candidate}; two-sided p = {self.p_correct:.3g}); Holm-adjusted p = "
            f"{self.p_adjusted:.3g} " + ("<" if self.regressed else ">=") + f" alpha "
            f"{self.spec.rule.alpha:g}{ids}"
        )

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update(
            kind="drift",
            drifted=self.regressed,
            changed=self.changed,
            changed_share=self.changed_share,
            max_changed=self.max_changed,
            p_changed=self.p_changed,
            p_correct=self.p_correct,
        )
        return out


@dataclass(frozen=True)
class DriftBaseline:
    """Each model's stored run (by the name it ran under), and the share of changed answers
    tolerated."""

    stored: Mapping[str, StoredAnswers]
    path: str
    max_changed: float = DEFAULT_MAX_CHANGED

    def check(self, rows: Sequence[tuple[Answer, GateSpec]], model: str) -> list[Drift]:
        """One drift verdict per level of ``model``'s answers in ``rows`` (each level's
        p-value Holm-adjusted across them)."""
        mine = self.stored.get(model)
        if mine is None:
            return []
        found = compare(rows, mine.scores, f"{model} (stored)")
        now = _answers(a for a, _ in rows)
        ids = {str(getattr(a, "model_id", "")) for a, _ in rows} - {"", "None"}
        out = []
        for c in found:
            level = [a for a, s in rows if s.where == c.spec.where]
            paired = [
                key
                for key, score in item_scores(level).items()
                if score.vote is not None
                and key in mine.scores
                and ItemScore.of(mine.scores[key]).vote is not None
            ]
            changed = sum(now.get(k) != mine.answers.get(k) for k in paired)
            n = c.table.n
            p_changed = binomial_upper_tail(changed, n, self.max_changed) if n else 1.0
            drift = Drift(
                **{f.name: getattr(c, f.name) for f in fields(Comparison)},
                changed=changed,
                max_changed=self.max_changed,
                p_changed=p_changed,
                p_correct=c.p_two_sided,
                model_ids=tuple(sorted(mine.model_ids - ids)) if ids else (),
            )
            drift.p_regression = min(1.0, 2 * min(c.p_two_sided, p_changed)) if n else 1.0
            out.append(drift)
        adjust(out)
        return out


def load_drift(
    path: str | os.PathLike[str], models: Iterable[str], max_changed: float = DEFAULT_MAX_CHANGED
) -> DriftBaseline:
    """The stored run of ``--reasoning-drift``: a results file holding rows of every model
    named. Raises ValueError with one line naming the option and the file."""
    shown = os.fspath(path)
    if not 0.0 <= max_changed < 1.0:
        raise ValueError(
            f"--reasoning-drift-max-changed: expected a share from 0 to 1, got {max_changed}"
        )
    try:
        rows = list(read_results(path))
    except (OSError, ValueError) as exc:
        raise ValueError(f"--reasoning-drift {shown}: {exc}") from None
    except ReasoningError as exc:  # a row a verdict could miscount: file:line: field
        raise ValueError(f"--reasoning-drift: {exc}") from None
    held = sorted({str(r["model"]) for r in rows})
    stored = {}
    for model in models:
        mine = [Outcome.from_dict(r) for r in rows if r["model"] == model]
        if not mine:
            raise ValueError(
                f"--reasoning-drift {shown}: no rows of {model!r} (a drift check asks a model "
                f"what it was asked before); the file holds {', '.join(held) or 'no rows'}"
            )
        stored[model] = StoredAnswers(
            item_scores(mine),
            _answers(mine),
            frozenset(o.model_id for o in mine if o.model_id),
        )
    return DriftBaseline(stored, shown, max_changed)
