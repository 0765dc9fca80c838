"""A level's comparison with a baseline, pair by pair: a sequential McNemar test (or, over
repeats, the per-item mean differences) with a p-value valid wherever the level stopped
(``PairedSequence``), and its expected calls (simulated)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

from ..betting import BETS as _BETS
from ..betting import Mixture as _Mixture
from ..paired import PairedTable, mcnemar_regression_p
from ..rules import GateRule
from ..signflip import as_fraction, item_tests
from ..tails import Critical
from .decision import Decision, Expected

__all__ = ["EARLY_SHARE", "PairedSequence", "expected_pair_calls"]

EARLY_SHARE = 0.05  # of a comparison's alpha, for early "regression" verdicts (0.1: verdicts differ
# from fixed-n twice as often, for 3% fewer calls on regressions; benchmark)


class PairedSequence:
    """One level's regression gate against a baseline, pair by pair (the same item's
    verdicts, fed in collection order once both are in; ``graded``, with repeats: each
    side's mean over the item's samples).

    ``family``: the number of levels Holm's correction spans for this candidate. A level
    settles ``FAIL`` (regression) early when its anytime p-value, over ``early_share``, is
    below ``alpha / family``: Holm then rejects it whatever the other levels say. It settles
    ``PASS`` early on anytime evidence (at ``alpha``) that the candidate is *not* worse by
    ``max_drop`` (with ``max_drop`` 0: it wins more discordant pairs than it loses). With
    ``max_drop`` 0 also by exact curtailment: no remaining pairs can make the combined
    p-value small enough, or none can save it. Levels that reach ``n`` leave the verdict to
    Holm over :meth:`p_value`.

    ``graded`` (repeats): the bets are on ``(1 + baseline mean − candidate mean) / 2``, a
    bounded answer per item (valid for any bounded answer; items are independent), without
    curtailment (the fixed-n test is then the sign-flip test on per-item mean differences,
    not a function of counts), and :meth:`p_value`'s fixed-n part is that sign-flip test.
    """

    def __init__(
        self,
        n: int,
        *,
        alpha: float = 0.05,
        max_drop: float = 0.0,
        family: int = 1,
        early_share: float = EARLY_SHARE,
        curtail: bool = True,
        unit: str = "paired items",
        graded: bool = False,
    ) -> None:
        if n < 1:
            raise ValueError(f"a sequential comparison needs n >= 1 pairs, got {n}")
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if not 0.0 <= max_drop < 1.0:
            raise ValueError(f"max_drop must be in [0, 1), got {max_drop}")
        if family < 1:
            raise ValueError(f"family (levels under Holm) must be >= 1, got {family}")
        if not 0.0 < early_share < 1.0:
            raise ValueError(f"early_share must be in (0, 1), got {early_share}")
        self.n, self.alpha, self.max_drop, self.family = n, alpha, max_drop, family
        self.early_share, self.unit = early_share, unit
        # Newcombe's p, and the sign-flip test over repeats, have no count to curtail on.
        self.curtail = curtail and max_drop == 0.0 and not graded
        self.graded = graded
        self._diffs: list[Fraction] = []  # graded: candidate − baseline mean, per item
        self._matched = True  # graded: both sides answered every item equally often
        self._total = 0.0  # graded: their sum
        self._halves = 0  # graded: answers (1 + d) / 2 of 1/2 (ties); other values summed:
        self._odd_worse, self._odd_better = [0.0] * _BETS, [0.0] * _BETS
        m = (1.0 + max_drop) / 2
        self._worse = _Mixture(m, n, alpha, True)
        self._better = _Mixture(m, n, alpha, False)
        self._peak = 0.0  # the largest log capital against "no regression" so far
        # Exact curtailment's critical counts, walked as the pairs move (O(1) per answer).
        self._fail_at = Critical(early_share, alpha / family)
        self._pass_at = Critical(early_share, alpha)
        self.t = self.both = self.only_baseline = self.only_candidate = self.neither = 0
        self.extra = 0
        self.decision = Decision.CONTINUE
        self.how = ""
        self._why: str | None = None
        self._fewest = (0, 0)  # (the last fewest(), at pair t): a bound for the next

    @classmethod
    def for_rule(
        cls, rule: GateRule, samples: int, *, family: int = 1, graded: bool = False
    ) -> PairedSequence:
        return cls(
            samples, alpha=rule.alpha, max_drop=rule.max_drop, family=family, graded=graded
        )

    @property
    def table(self) -> PairedTable:
        return PairedTable(self.both, self.only_baseline, self.only_candidate, self.neither)

    @property
    def anytime_p(self) -> float:
        """The anytime-valid p-value of "no regression": P(it is ever <= a) <= a."""
        return min(1.0, math.exp(-self._peak))

    def p_value(self, fixed_p: float | None = None) -> float:
        """The p-value for Holm: ``min(anytime_p / s, fixed_p / (1 − s))``, ``s`` the early
        share and ``fixed_p`` today's fixed-n p-value on all ``n`` pairs. With ``max_drop`` 0
        it is computed here, wherever the level stopped, as the exact McNemar p-value the
        remaining pairs would leave if they all favoured the candidate (the largest they
        can; at ``n``, today's p-value); with ``max_drop`` > 0 pass it for a level that
        reached ``n`` (earlier, the first part alone is used).

        Valid at any stopping point: the value is never below ``min(P / s, p_n / (1 − s))``
        with ``P`` the anytime p-value's least value up to ``n`` and ``p_n`` the fixed-n
        p-value had all ``n`` pairs been asked, and P(P <= s·a) <= s·a (Ville's inequality),
        P(p_n <= (1 − s)·a) <= (1 − s)·a, so P(p_value <= a) <= a. Holm over these p-values
        keeps the family-wise error at ``alpha`` whatever the levels' stopping points."""
        p = self.anytime_p / self.early_share
        if self.graded:  # the rest all favouring the candidate: the largest p they can give
            rest = self._diffs + [Fraction(1)] * (self.n - self.t)
            fixed_p = item_tests(rest, matched=self._matched, max_drop=self.max_drop)[1].p_lower
        elif self.max_drop == 0.0:
            left = self.n - self.t
            worst = PairedTable(0, self.only_baseline, self.only_candidate + left, 0)
            fixed_p = mcnemar_regression_p(worst)
        elif self.decision is not Decision.FIXED:
            fixed_p = None
        elif fixed_p is None:
            raise ValueError("with max_drop > 0 pass today's fixed-n p-value as fixed_p")
        if fixed_p is not None:
            p = min(p, fixed_p / (1.0 - self.early_share))
        return min(1.0, p)

    def update(
        self, candidate: bool | Fraction, baseline: bool | Fraction, *, matched: bool = True
    ) -> Decision:
        """Feed the next pair: whether the candidate and the baseline got the item right
        (``graded``: each side's mean over the item's samples; ``matched``: both sides
        answered it equally often, else the fixed-n test is the betting test)."""
        if self.decision is not Decision.CONTINUE:
            self.extra += 1
            return self.decision
        if self.graded:
            self._matched = self._matched and matched
            return self._update_graded(as_fraction(candidate) - as_fraction(baseline))
        self.t += 1
        if candidate and baseline:
            self.both += 1
        elif baseline:
            self.only_baseline += 1
        elif candidate:
            self.only_candidate += 1
        else:
            self.neither += 1
        b, c, same = self.only_baseline, self.only_candidate, self.both + self.neither
        if b > c:  # otherwise every bet against "no regression" is at most where it started
            self._peak = max(self._peak, self._worse.log_capital(b, c, same))
        if self.t >= self.n:
            self.decision, self.how = Decision.FIXED, "fixed-n"
            return self.decision
        decision, how = self.verdict(self.t, b, c, same, self._peak)
        if decision is not Decision.CONTINUE:
            self.decision, self.how = decision, how
        return self.decision

    def _update_graded(self, d: Fraction) -> Decision:
        """One item's mean difference ``d`` (candidate − baseline) into the bets on
        ``u = (1 − d) / 2``: ``u`` of 1, 0 and 1/2 are counted, others summed per bet."""
        self.t += 1
        self._diffs.append(d)
        self._total += float(d)
        if d == 0:
            self.both += 1  # tied
            self._halves += 1
        elif d == -1:
            self.only_baseline += 1
        elif d == 1:
            self.only_candidate += 1
        else:
            self.neither += 1  # any other difference (counted apart for the bets)
            u = float(1 - d) / 2
            for odd, mix in ((self._odd_worse, self._worse), (self._odd_better, self._better)):
                for j, f in enumerate(mix.step(u)):
                    odd[j] += f
        ones, zeros = self.only_baseline, self.only_candidate
        worse = self._worse.log_capital(ones, zeros, self._halves, self._odd_worse)
        self._peak = max(self._peak, worse)
        if self.t >= self.n:
            self.decision, self.how = Decision.FIXED, "fixed-n"
        elif math.exp(-self._peak) / self.early_share < self.alpha / self.family:
            self.decision, self.how = Decision.FAIL, "anytime"
        elif (self._total > 0 or self.max_drop) and self._better.log_capital(
            ones, zeros, self._halves, self._odd_better
        ) >= -math.log(self.alpha):
            self.decision, self.how = Decision.PASS, "anytime"
        return self.decision

    @property
    def worse_better(self) -> tuple[int, int]:
        """Items the candidate did worse and better on, so far."""
        if not self.graded:
            return self.only_baseline, self.only_candidate
        return sum(d < 0 for d in self._diffs), sum(d > 0 for d in self._diffs)

    @property
    def reason(self) -> str:
        """One line saying why the level settled ("" while it asks on)."""
        if self._why is None and self.decision is not Decision.CONTINUE:
            self._why = self._reason()
        return self._why or ""

    def fewest(self, cap: int) -> int:
        """The fewest further pairs after which the comparison could be settled (0: it is),
        at most ``cap`` (as :meth:`ThresholdSequence.fewest`): the fastest ways are pairs
        only the baseline gets right (a regression) or only the candidate (none)."""
        if self.decision is not Decision.CONTINUE:
            return 0
        cap = min(cap, self.n - self.t)
        last, at = self._fewest
        b, c = self.only_baseline, self.only_candidate
        same = self.both + self.neither
        k = max(1, last - (self.t - at))
        while k < cap:
            t = self.t + k
            worse = self._peak
            if b + k > c:
                worse = max(worse, self._worse.log_capital(b + k, c, same))
            if (
                self.verdict(t, b + k, c, same, worse)[0] is not Decision.CONTINUE
                or self.verdict(t, b, c + k, same, self._peak)[0] is not Decision.CONTINUE
            ):
                break
            k += 1
        k = min(k, cap)
        self._fewest = (k, self.t)
        return k

    def verdict(self, t: int, b: int, c: int, same: int, peak: float) -> tuple[Decision, str]:
        """The decision after ``t`` < ``n`` pairs (``b`` only baseline right, ``c`` only
        candidate right, ``same`` concordant) with ``peak`` the running largest log capital."""
        alpha, share, level = self.alpha, self.early_share, self.alpha / self.family
        if math.exp(-peak) / share < level:
            return Decision.FAIL, "anytime"
        if self.curtail:
            left = self.n - t
            pairs = b + c + left
            if b >= self._fail_at(pairs):  # even if the rest all favour the candidate
                return Decision.FAIL, "curtailed"
            if b + left < self._pass_at(pairs):  # even if the rest all favour
                best = max(peak, self._worse.log_capital(b + left, c, same))  # the baseline
                if math.exp(-best) / share >= alpha:
                    return Decision.PASS, "curtailed"
        # With max_drop 0 the candidate needs more wins than losses to have any evidence.
        if (c > b or self.max_drop) and self._better.log_capital(b, c, same) >= -math.log(alpha):
            return Decision.PASS, "anytime"
        return Decision.CONTINUE, ""

    def _reason(self) -> str:
        t, n, unit = self.t, self.n, self.unit
        if self.how == "fixed-n":
            return f"all {n} {unit} answered: Holm over the levels decides"
        head = (
            f"{t} of {n} {unit} (only baseline right {self.only_baseline}, "
            f"only candidate right {self.only_candidate})"
        )
        if self.graded:
            worse_on, better_on = self.worse_better
            head = f"{t} of {n} {unit} (candidate worse on {worse_on}, better on {better_on})"
        worse = f"worse by more than {self.max_drop:g}" if self.max_drop else "worse"
        if self.decision is Decision.FAIL:
            if self.how == "anytime":
                return (
                    f"regression settled early at {head}: anytime p-value "
                    f"{self.anytime_p:.3g} / {self.early_share:g} < alpha {self.alpha:g}"
                    + (f" / {self.family} levels" if self.family > 1 else "")
                )
            return (
                f"regression settled at {head}: even if the other {n - t} all favour the "
                f"candidate, the exact McNemar p-value stays below alpha"
                + (f" / {self.family} levels" if self.family > 1 else "")
            )
        if self.how == "anytime":
            return (
                f"no regression, settled early at {head}: {1 - self.alpha:.0%} anytime "
                f"evidence that the candidate is not {worse} than the baseline"
            )
        return (
            f"no regression possible at {head}: even if the other {n - t} all favour the "
            f"baseline, the p-value stays >= alpha {self.alpha:g}"
        )


def expected_pair_calls(
    baseline_accuracy: float,
    candidate_accuracy: float,
    n: int,
    *,
    discordance: float | None = None,
    alpha: float = 0.05,
    max_drop: float = 0.0,
    family: int = 1,
    runs: int = 200,
    seed: int = 0,
) -> Expected:
    """The sequential comparison: simulated (``runs`` seeded runs of :class:`PairedSequence`,
    so the same arguments give the same answer; its standard error is about 2% of ``n``
    at 200 runs). ``discordance`` (the share of items exactly one model gets right) defaults
    to independent errors, as ``plan`` assumes; ``early_pass`` is "no regression" early."""
    pb, pc = baseline_accuracy, candidate_accuracy
    if not (0.0 <= pb <= 1.0 and 0.0 <= pc <= 1.0):
        raise ValueError("accuracies must be in [0, 1]")
    psi = pb * (1 - pc) + pc * (1 - pb) if discordance is None else discordance
    delta = pc - pb
    if not abs(delta) <= psi <= 1.0:
        raise ValueError(f"discordance must be in [|difference|, 1], got {psi}")
    lose = (psi - delta) / 2  # only baseline right
    win = (psi + delta) / 2  # only candidate right
    rng = random.Random(seed)
    calls = early_pass = early_fail = 0.0
    for _ in range(runs):
        seq = PairedSequence(n, alpha=alpha, max_drop=max_drop, family=family)
        while seq.decision is Decision.CONTINUE:
            u = rng.random()
            seq.update(u >= lose, u < lose or u >= lose + win)
        calls += seq.t
        early_pass += seq.decision is Decision.PASS
        early_fail += seq.decision is Decision.FAIL
    return Expected(calls / runs, early_pass / runs, early_fail / runs)
