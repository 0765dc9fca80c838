"""A level's threshold gate, answer by answer: exact curtailment and an anytime-valid test
on both sides of the fixed-n rule's line (``ThresholdSequence``), and its expected calls."""

from __future__ import annotations

import math
from collections.abc import Callable

from ...stats import wilson_interval, z_for_confidence
from ..betting import BETS as _BETS
from ..betting import Mixture as _Mixture
from ..rules import GateRule
from .decision import Decision, Expected

__all__ = ["ThresholdSequence", "expected_calls"]


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
            graded=rule.gauge.graded or repeats > 1,
            curtail=repeats == 1,
            unit="items" if repeats > 1 else "samples",
            measure=rule.gauge.label,
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
