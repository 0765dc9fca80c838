"""Sequential gates: a level's verdict after each answer, so that asking stops once it is
settled (pure stdlib; the method, its guarantees and measurements: docs/sequential.md).

Answers come one at a time in collection order. A level settles early by **exact
curtailment** (the fixed-n verdict is certain whatever the remaining answers are) or by an
**anytime-valid test**: a mixture of constant bets ``(1/J) Σ_j Π_i (1 + λ_j (x_i − m))``, a
nonnegative supermartingale under the null that by Ville's inequality ever reaches
``1/alpha`` with chance at most ``alpha``, whatever the stopping rule (Waudby-Smith and
Ramdas 2024, "Estimating means of bounded random variables by betting", JRSS-B 86(1); for
0/1 answers a discrete-prior mixture SPRT, Robbins 1970). At the ``n``-th answer today's
fixed-n rule decides, so no level asks more than ``n``.

Threshold gates test both sides of the line the fixed-n rule draws (the least mean answer
that passes at ``n``). Comparisons bet on ``(1 + baseline right − candidate right) / 2``
against ``(1 + max_drop) / 2`` (with ``max_drop`` 0: a sequential McNemar test on the
discordant pairs) and report a p-value valid wherever the level stopped, so Holm's
correction across levels keeps the family-wise error at ``alpha``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from enum import Enum
from fractions import Fraction
from typing import NamedTuple

from ..stats import wilson_interval, z_for_confidence
from .betting import BETS as _BETS
from .betting import Mixture as _Mixture
from .paired import PairedTable, mcnemar_regression_p
from .rules import GateRule
from .signflip import as_fraction, item_tests
from .tails import Critical

__all__ = [
    "EARLY_SHARE",
    "Decision",
    "Expected",
    "PairedSequence",
    "ThresholdSequence",
    "expected_calls",
    "expected_pair_calls",
]

EARLY_SHARE = 0.05  # of a comparison's alpha, for early "regression" verdicts (0.1: verdicts differ
# from fixed-n twice as often, for 3% fewer calls on regressions; benchmark)


class Decision(str, Enum):
    """Where a level stands after an answer."""

    CONTINUE = "continue"  # ask on
    PASS = "pass"  # settled: the gate passes (a comparison: no regression)
    FAIL = "fail"  # settled: the gate fails (a comparison: regression)
    FIXED = "fixed-n"  # all n answered undecided: today's fixed-n rule decides


def _edge(rejects: Callable[[float], bool], inside: float, outside: float) -> float:
    """The point between ``inside`` (rejected) and ``outside`` where ``rejects`` turns."""
    for _ in range(30):
        mid = (inside + outside) / 2
        if rejects(mid):
            inside = mid
        else:
            outside = mid
    return inside


class ThresholdSequence:
    """One level's threshold gate, answer by answer.

    ``threshold`` is ``min_accuracy``; ``n`` the level's ``samples``; with ``confidence`` the
    fixed-n rule is "the Wilson lower bound at ``confidence`` clears the threshold", else
    "the accuracy does". ``alpha`` bounds the anytime test's errors wherever the level stops:
    a model whose accuracy is below the line (hence below ``threshold``) is passed by it with
    chance at most ``alpha``, one above the line failed with chance at most ``alpha``.
    Curtailed verdicts are the fixed-n verdict itself.

    ``graded``: answers are means in [0, 1] (cell accuracy; or, with repeats, each item's
    mean over its repeats, fed once per item, ``n`` items), not 0/1. ``curtail`` off with
    repeats: the clustered fixed-n rule is not a function of the running sum (the anytime
    test stays valid on item means, since items are independent; the line is then taken at
    the conservative end of the clustering, one item one trial).

    A failed call is simply not fed: every verdict stays right with fewer answers than ``n``.
    Answers fed after the level settled are counted in :attr:`extra` and change nothing.
    """

    def __init__(
        self,
        threshold: float,
        n: int,
        *,
        confidence: float | None = None,
        alpha: float = 0.05,
        graded: bool = False,
        curtail: bool = True,
        unit: str = "samples",
        measure: str = "accuracy",
    ) -> None:
        if n < 1:
            raise ValueError(f"a sequential gate needs n >= 1 answers, got {n}")
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if confidence is not None:
            z_for_confidence(confidence)  # one clear line for a bad confidence
        self.threshold, self.n, self.confidence, self.alpha = threshold, n, confidence, alpha
        self.graded, self.curtail, self.unit, self.measure = graded, curtail, unit, measure
        self.line = self._line()
        inner = 0.0 < self.line < 1.0
        self._up = _Mixture(self.line, n, alpha, True) if inner else None
        self._down = _Mixture(self.line, n, alpha, False) if inner else None
        self._bar = math.log(1.0 / alpha)
        self.t = self.ones = self.zeros = self.extra = 0
        self.total = 0.0
        self._others: list[float] = []
        self._sum_up = [0.0] * _BETS
        self._sum_down = [0.0] * _BETS
        self.decision = Decision.CONTINUE
        self.how = ""  # "curtailed", "anytime" or "fixed-n" once decided
        self._why: str | None = None
        self._fewest = (0, 0)  # (the last fewest(), at answer t): a bound for the next
        if curtail:  # a gate no answer can change is settled before the first call
            self._settle()

    @classmethod
    def for_rule(cls, rule: GateRule, samples: int, *, repeats: int = 1) -> ThresholdSequence:
        """The sequential form of a level's threshold gate (``alpha`` is the rule's)."""
        if rule.min_accuracy is None:
            raise ValueError("a sequential threshold gate needs min_accuracy")
        return cls(
            rule.min_accuracy,
            samples,
            confidence=rule.confidence,
            alpha=rule.alpha,
            graded=rule.partial or repeats > 1,
            curtail=repeats == 1,
            unit="items" if repeats > 1 else "samples",
            measure=rule.measure,
        )

    def passes(self, total: float) -> bool:
        """Today's fixed-n rule on ``total`` (right answers, or summed credit) out of ``n``."""
        if self.confidence is None:
            return total / self.n >= self.threshold
        return wilson_interval(total, self.n, self.confidence)[0] >= self.threshold

    def _line(self) -> float:
        """The least mean answer that passes at ``n`` (2.0: none does; 0.0: any does)."""
        if self.passes(0):
            return 0.0
        if not self.passes(self.n):
            return 2.0
        # The rule is monotone in the total: bisect between a failing and a passing total.
        if not self.graded:
            lo_k, hi_k = 0, self.n
            while hi_k - lo_k > 1:
                mid_k = (lo_k + hi_k) // 2
                lo_k, hi_k = (lo_k, mid_k) if self.passes(mid_k) else (mid_k, hi_k)
            return hi_k / self.n
        lo, hi = 0.0, float(self.n)
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if self.passes(mid) else (mid, hi)
        return hi / self.n

    def update(self, answer: bool | float) -> Decision:
        """Feed the next answer in collection order (True/False, or credit in [0, 1])."""
        if self.decision is not Decision.CONTINUE:
            self.extra += 1
            return self.decision
        try:
            x = float(answer)
        except (TypeError, ValueError):
            x = math.nan
        if not 0.0 <= x <= 1.0 or (not self.graded and x not in (0.0, 1.0)):
            want = "a value in [0, 1]" if self.graded else "True or False"
            raise ValueError(f"a sequential gate's answer must be {want}, got {answer!r}")
        self.t += 1
        if x == 1.0:
            self.ones += 1
        elif x == 0.0:
            self.zeros += 1
        else:
            self._others.append(x)
            if self._up is not None and self._down is not None:
                self._sum_up = [s + f for s, f in zip(self._sum_up, self._up.step(x), strict=True)]
                self._sum_down = [
                    s + f for s, f in zip(self._sum_down, self._down.step(x), strict=True)
                ]
        self.total += x
        if self.t >= self.n:
            self.decision, self.how = Decision.FIXED, "fixed-n"
        else:
            self._settle()
        return self.decision

    def verdict(self, t: int, ones: int, zeros: int) -> tuple[Decision, str]:
        """The decision after ``t`` < ``n`` answers of which ``ones`` right and ``zeros`` wrong
        (no graded answers), and how: the rule :meth:`update` applies."""
        return self._decide(t, float(ones), ones, zeros, False)

    def _decide(
        self, t: int, total: float, ones: int, zeros: int, graded: bool
    ) -> tuple[Decision, str]:
        if self.curtail and self.passes(total):
            return Decision.PASS, "curtailed"
        if self.curtail and not self.passes(total + (self.n - t)):
            return Decision.FAIL, "curtailed"
        if t and self._up is not None and self._down is not None:
            up = self._up.log_capital(ones, zeros, other=self._sum_up if graded else None)
            if up >= self._bar:
                return Decision.PASS, "anytime"
            down = self._down.log_capital(ones, zeros, other=self._sum_down if graded else None)
            if down >= self._bar:
                return Decision.FAIL, "anytime"
        return Decision.CONTINUE, ""

    def _settle(self) -> None:
        decision, how = self._decide(self.t, self.total, self.ones, self.zeros, bool(self._others))
        if decision is not Decision.CONTINUE:
            self.decision, self.how = decision, how

    def fewest(self, cap: int) -> int:
        """The fewest further answers after which the level could be settled (0: it is), at
        most ``cap``: a run that asks no more than these at once never pays for an answer
        the verdict did not need. The decision is monotone in the answers, so the fastest
        ways to settle are all right (pass) or all wrong (fail). Each answer brings the
        settling point at most one answer nearer, so the last result bounds the search."""
        if self.decision is not Decision.CONTINUE:
            return 0
        cap = min(cap, self.n - self.t)  # the n-th answer settles it (fixed-n)
        last, at = self._fewest
        graded = bool(self._others)
        k = max(1, last - (self.t - at))
        while k < cap:
            t = self.t + k
            if (
                self._decide(t, self.total + k, self.ones + k, self.zeros, graded)[0]
                is not Decision.CONTINUE
                or self._decide(t, self.total, self.ones, self.zeros + k, graded)[0]
                is not Decision.CONTINUE
            ):
                break
            k += 1
        k = min(k, cap)
        self._fewest = (k, self.t)
        return k

    @property
    def reason(self) -> str:
        """One line saying why the level settled ("" while it asks on); made on first read."""
        if self._why is None and self.decision is not Decision.CONTINUE:
            self._why = self._reason()
        return self._why or ""

    def boundaries(self) -> tuple[list[int], list[int]]:
        """For 0/1 answers, per ``t`` in 0..n-1: the most right answers at which the level has
        failed, and the fewest at which it has passed (``-1`` / ``t + 1``: none). The decision
        is monotone in the count, so these two lists are the whole rule; and each boundary
        moves by at most one per answer (a right answer only raises the capital against
        "below the line", a wrong one only lowers it), so walking them costs O(n)."""
        fail_at_most, pass_at_least = [], []
        lo, hi = -1, 1
        for t in range(self.n):
            hi = min(max(hi, 0), t + 1)
            while hi <= t and self.verdict(t, hi, t - hi)[0] is not Decision.PASS:
                hi += 1
            while hi > 0 and self.verdict(t, hi - 1, t - hi + 1)[0] is Decision.PASS:
                hi -= 1
            lo = min(lo + 1, t)
            while lo >= 0 and self.verdict(t, lo, t - lo)[0] is not Decision.FAIL:
                lo -= 1
            while lo < t and self.verdict(t, lo + 1, t - lo - 1)[0] is Decision.FAIL:
                lo += 1
            fail_at_most.append(lo)
            pass_at_least.append(hi)
        return fail_at_most, pass_at_least

    def _rejects(self, m: float, up: bool) -> bool:
        """Whether the test centred at ``m`` (its own grid) rejects on the answers so far."""
        mix = _Mixture(m, self.n, self.alpha, up)
        other = [0.0] * _BETS
        for x in self._others:
            other = [o + f for o, f in zip(other, mix.step(x), strict=True)]
        return mix.log_capital(self.ones, self.zeros, other=other) >= self._bar

    def _reason(self) -> str:
        t, n, unit, what = self.t, self.n, self.unit, self.measure
        if self.how == "fixed-n":
            return f"all {n} {unit} answered: the fixed-n rule decides"
        rule = (
            f"{what} >= {self.threshold:g}"
            if self.confidence is None
            else f"the {self.confidence:.0%} Wilson lower bound >= {self.threshold:g}"
        )
        if self.how == "curtailed":
            if t == 0:
                if self.decision is Decision.PASS:
                    return f"passed before any answer: {rule} holds at {n} {unit} whatever they are"
                return f"failed before any answer: no {n} {unit} can reach {rule}"
            got = f"{self.total:.2f} credit" if self.graded else f"{self.ones} right"
            if self.decision is Decision.PASS:
                return (
                    f"passed at {t} of {n} {unit}: {got} already make {rule} at {n}, "
                    f"whatever the other {n - t} answer"
                )
            return (
                f"failed at {t} of {n} {unit}: even if the other {n - t} are all right, "
                f"{rule} is out of reach at {n}"
            )
        count = f"{self.total:.2f}/{t}" if self.graded else f"{self.ones}/{t}"
        level = f"{1 - self.alpha:.0%} anytime"
        line = (
            f"min_accuracy {self.threshold:g}"
            if abs(self.line - self.threshold) < 1e-9
            else f"{self.line:.3f} (the least {what} for {rule} at {n} {unit})"
        )
        head = f"{what} {self.total / t:.3f} ({count})"
        at = f"early at {t} of {n} {unit}: {head}; {level}"
        if self.decision is Decision.PASS:
            bound = _edge(lambda m: self._rejects(m, True), self.line, 1.0)
            return f"passed {at} lower bound {bound:.3f} >= {line}"
        bound = _edge(lambda m: self._rejects(m, False), self.line, 0.0)
        return f"failed {at} upper bound {bound:.3f} < {line}"


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


class Expected(NamedTuple):
    """What a sequential gate asks on average, and how often it settles early."""

    calls: float  # expected answers asked (the fixed-n gate asks n)
    early_pass: float  # chance of passing before n
    early_fail: float  # chance of failing before n


def expected_calls(
    accuracy: float,
    threshold: float,
    n: int,
    *,
    confidence: float | None = None,
    alpha: float = 0.05,
) -> Expected:
    """The sequential threshold gate for 0/1 answers each right with chance ``accuracy``:
    computed exactly (dynamic programming over the count of right answers along the
    stopping boundaries, O(n²)), not simulated."""
    if not 0.0 <= accuracy <= 1.0:
        raise ValueError(f"accuracy must be in [0, 1], got {accuracy}")
    seq = ThresholdSequence(threshold, n, confidence=confidence, alpha=alpha)
    if seq.decision is Decision.PASS:
        return Expected(0.0, 1.0, 0.0)
    if seq.decision is Decision.FAIL:
        return Expected(0.0, 0.0, 1.0)
    fail_at_most, pass_at_least = seq.boundaries()
    calls = early_pass = early_fail = 0.0
    alive = {0: 1.0}  # right answers so far -> chance, over levels not yet settled
    for t in range(1, n + 1):
        nxt: dict[int, float] = {}
        for s, chance in alive.items():
            nxt[s] = nxt.get(s, 0.0) + chance * (1.0 - accuracy)
            nxt[s + 1] = nxt.get(s + 1, 0.0) + chance * accuracy
        if t == n:
            calls += n * sum(nxt.values())
            break
        alive = {}
        for s, chance in nxt.items():
            if s >= pass_at_least[t]:
                early_pass += chance
                calls += t * chance
            elif s <= fail_at_most[t]:
                early_fail += chance
                calls += t * chance
            else:
                alive[s] = chance
    return Expected(calls, early_pass, early_fail)


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
