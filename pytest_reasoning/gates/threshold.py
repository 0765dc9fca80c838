"""Per-(model, suite entry, level) tallies and the threshold gates decided on them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..core import Outcome
from ..stats import wilson_interval
from .clustered import clustered_interval, majority_correct
from .metrics import Metric, PassAll, PassAny, sample_credit
from .rules import GateSpec

__all__ = [
    "MARGINAL_NOTE",
    "GateResult",
    "LevelStats",
    "decide_gates",
    "marginal",
]


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
    # Per item (repeats of one item form a cluster): (extracted, correct, score) per sample.
    clusters: dict[str, list[tuple[str | None, bool, float]]] = field(default_factory=dict)
    reasoning_tokens: int = 0
    not_asked: int = 0  # samples no call was made for (a stopped model, a budget reached)
    cost_usd: float = 0.0  # what the calls made now cost (LiteLLM's price), when priced
    # Truncated samples by the token limit they were cut at: (parameter, value) → count.
    token_limits: dict[tuple[str, int], int] = field(default_factory=dict)
    # Of those, cut at pytest-reasoning's default limit (no --llm-param gave one), and those
    # that were repeating themselves (a higher limit would not help them).
    default_limits: int = 0
    repeating: int = 0
    # Per item: the problem it asks up to renaming (Outcome.problem_cluster). Items of one
    # problem are one cluster of the interval, as an item's repeats are (issue 41).
    problems: dict[str, str] = field(default_factory=dict)

    def add(self, o: Outcome) -> None:
        if o.error_kind == "not_asked":  # no call was made: not an error, not an answer
            self.not_asked += 1
            return
        self.prompt_tokens += o.prompt_tokens or 0
        self.completion_tokens += o.completion_tokens or 0
        self.reasoning_tokens += o.reasoning_tokens or 0
        if not o.cached:
            self.latency_total += o.latency_s
            self.calls += 1
            self.cost_usd += o.cost_usd or 0.0
        if o.error is not None:
            self.errors += 1
            return
        self.n += 1
        self.correct += bool(o.correct)
        value = sample_credit(o.correct, o.score)
        self.score_sum += value
        if o.failure_mode:
            self.failure_modes[o.failure_mode] = self.failure_modes.get(o.failure_mode, 0) + 1
            limit = o.extra.get("token_limit") if o.failure_mode == "truncated" else None
            if isinstance(limit, list) and len(limit) == 2:
                name, value = limit
                if isinstance(name, str) and isinstance(value, int):
                    self.token_limits[(name, value)] = self.token_limits.get((name, value), 0) + 1
            if o.failure_mode == "truncated":
                self.default_limits += o.extra.get("token_limit_default") is True
                self.repeating += o.extra.get("repeating") is True
        self.clusters.setdefault(o.cluster, []).append((o.extracted, bool(o.correct), value))
        self.problems.setdefault(o.cluster, o.problem_cluster)

    @property
    def repeats(self) -> int:
        """The most samples any item of the level got (1 without repeats)."""
        return max((len(c) for c in self.clusters.values()), default=1)

    @property
    def items(self) -> int:
        return len(self.clusters)

    @property
    def distinct(self) -> int:
        """Distinct problems among the items (up to renaming): fewer than ``items`` where
        the level repeats a problem."""
        return len(set(self.problems.values()))

    def pass_at(self, k: int | None = None) -> float | None:
        """pass@k averaged over items (k defaults to the repeats; items with fewer answered
        samples than k count with all they have)."""
        return self._over_items(PassAny("pass@k", k=k))

    def pass_all(self, k: int | None = None) -> float | None:
        """pass^k averaged over items: the share of items right every one of k times (k and
        items with fewer samples as :meth:`pass_at`)."""
        return self._over_items(PassAll("pass^k", k=k))

    def _over_items(self, gauge: Metric) -> float | None:
        if not self.clusters:
            return None
        k = self.repeats
        values = [gauge.item_value([(ok, v) for _, ok, v in c], k) for c in self.clusters.values()]
        return sum(values) / len(values)

    def item_values(self) -> list[float]:
        """Each item's value under the gate's metric (:meth:`~.metrics.Metric.item_value`)."""
        gauge, k = self.spec.rule.gauge, self.repeats
        return [gauge.item_value([(ok, v) for _, ok, v in c], k) for c in self.clusters.values()]

    @property
    def majority(self) -> float | None:
        """Share of items whose most common answer is right (majority vote over repeats)."""
        if not self.clusters:
            return None
        votes = [majority_correct([(a, ok) for a, ok, _ in c]) for c in self.clusters.values()]
        return sum(votes) / len(votes)

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    @property
    def measure(self) -> float | None:
        """What the gate thresholds, under its metric: a mean over samples (accuracy, cell
        accuracy) or over items (pass@K / pass^K)."""
        if not self.n:
            return None
        if self.spec.rule.gauge.per_item:
            values = self.item_values()
            return sum(values) / len(values)
        return self.hits / self.n

    @property
    def hits(self) -> float:
        """The samples' values summed under the gate's metric: right answers, or credit."""
        return self.score_sum if self.spec.rule.gauge.graded else self.correct

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Wilson interval of the measure. For cell accuracy (a mean of values in [0, 1]) the
        same formula is conservative: such a mean has variance at most mu(1-mu)/n, the
        binomial variance Wilson assumes. With repeats, or items that ask the same problem,
        clustered by problem (Rao-Scott: see ``gates.clustered``). Under pass@K / pass^K,
        Wilson's over items (one value in [0, 1] per item, items independent: conservative, as
        for cell accuracy)."""
        gauge = self.spec.rule.gauge
        if gauge.per_item and self.n:
            values = self.item_values()
            return wilson_interval(sum(values), len(values), confidence)
        if self.repeats > 1 or self.distinct < self.items:
            clusters: dict[str, list[float]] = {}
            for item, c in self.clusters.items():
                mine = clusters.setdefault(self.problems.get(item, item), [])
                mine += [gauge.sample_value(ok, v) for _, ok, v in c]
            return clustered_interval(list(clusters.values()), confidence)
        return wilson_interval(self.hits, self.n, confidence)

    @property
    def mean_latency(self) -> float | None:
        return self.latency_total / self.calls if self.calls else None


@dataclass(frozen=True)
class GateResult:
    stats: LevelStats
    passed: bool | None  # None: not decided (no threshold, or no answer at all: infrastructure)
    reason: str
    # A pass without ``confidence`` whose 95% interval reaches below ``min_accuracy``: the
    # rule holds, but the evidence does not say the model is above the line (``PASS*``).
    marginal: bool = False


MARGINAL_NOTE = (
    "PASS*: the measure reaches min_accuracy but its 95% interval reaches below it, so the "
    "pass is not significant (a model exactly at min_accuracy passes about half the time); "
    "a suite's `confidence` gates on the interval's lower bound instead (docs/verdicts.md)"
)


def marginal(s: LevelStats) -> bool:
    """Whether a pass of ``s``'s gate is not significant: no ``confidence`` (with one the
    interval's lower bound has cleared the threshold) and the 95% interval shown in the
    levels table reaching below ``min_accuracy``."""
    thr = s.spec.rule.min_accuracy
    if thr is None or s.spec.rule.confidence is not None or not s.n:
        return False
    return s.interval(0.95)[0] < thr


def decide_gates(stats: Iterable[LevelStats]) -> list[GateResult]:
    """Threshold gates. With ``confidence``, the Wilson lower bound must clear the threshold;
    errors are excluded from ``n`` (they are infrastructure, not answers)."""
    out = []
    for s in stats:
        thr = s.spec.rule.min_accuracy
        if thr is None:
            out.append(GateResult(s, None, "no threshold"))
            continue
        if s.n == 0 and s.errors:
            # Every sample failed for infrastructure: nothing is known about the model, so
            # the gate is not decided (the run fails as infrastructure, exit status 6).
            out.append(
                GateResult(
                    s, None, f"not decided: all {s.errors} samples failed for infrastructure"
                )
            )
            continue
        if s.n == 0:
            out.append(GateResult(s, False, "no scored samples"))
            continue
        acc = s.measure or 0.0
        gauge = s.spec.rule.gauge
        what = gauge.label
        count = f"{s.score_sum:.1f}/{s.n}" if gauge.graded else f"{s.correct}/{s.n}"
        if gauge.per_item:
            count = f"{acc * s.items:.1f}/{s.items} items"
        if s.spec.rule.confidence is not None:
            lo, _ = s.interval(s.spec.rule.confidence)
            ok = lo >= thr
            how = (
                f"Wilson, clustered by {s.distinct} problems,"
                if s.distinct < s.items
                else "Wilson" if s.repeats == 1 else f"Wilson, clustered by {s.items} items,"
            )
            if gauge.per_item:
                how = f"Wilson over {s.items} items"
            reason = (
                f"{what} {acc:.3f} ({count}), {s.spec.rule.confidence:.0%} {how} "
                f"lower bound {lo:.3f} {'>=' if ok else '<'} min_accuracy {thr:g}"
            )
        else:
            ok = acc >= thr
            reason = f"{what} {acc:.3f} ({count}) {'>=' if ok else '<'} min_accuracy {thr:g}"
        weak = ok and marginal(s)
        if weak:
            lo, _ = s.interval(0.95)
            reason += f", but its 95% interval reaches {lo:.3f}: not significant (PASS*)"
        out.append(GateResult(s, ok, reason, weak))
    return out
