"""The difficulty frontier: the hardest value of one numeric knob at which a model still reaches
a target accuracy, found with as few model calls as an adaptive search allows.

Assumes accuracy falls as the knob grows (deeper trees, more nodes). Each probe draws fresh
items at one knob value and stops as soon as the Wilson interval lies wholly above or below the
target (a sequential test), or at ``max_samples`` (then the point estimate decides and the
probe is marked inconclusive). Looking after every sample would inflate the error rate, so each
look uses a Bonferroni share of it: ``1 − (1 − confidence) / max_samples``; a probe's verdict
is then wrong with probability at most ``1 − confidence``. A bisection over ``[low, high]``
places the probes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .core import Item
from .errors import InvalidArgument
from .registry import get_task
from .stats import wilson_interval
from .tasks.base import resolve_params
from .tasks.sampler import make_item

__all__ = ["FrontierResult", "Probe", "find_frontier"]

Answer = Callable[[Item], bool | None]  # True / False, or None for an infrastructure error


@dataclass
class Probe:
    value: int
    n: int = 0
    correct: int = 0
    errors: int = 0
    low: float = 0.0
    high: float = 1.0
    verdict: str = ""  # "pass" | "fail" | "pass?" | "fail?" (inconclusive: point estimate)

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    @property
    def passed(self) -> bool:
        return self.verdict.startswith("pass")


@dataclass
class FrontierResult:
    task: str
    knob: str
    target: float
    confidence: float
    value: int | None  # the hardest passing value; None if even ``low`` fails
    beyond: bool  # True when ``high`` itself passes: the frontier is at least ``value``
    calls: int
    probes: list[Probe] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        spent = f"{self.calls} calls over {len(self.probes)} probes"
        if self.value is None:
            return f"{self.knob}: below the searched range (fails at the lowest value); {spent}"
        probe = next(p for p in self.probes if p.value == self.value)
        more = " or more (the highest value searched passes)" if self.beyond else ""
        return (
            f"{self.knob} = {self.value}{more}: accuracy {probe.accuracy:.2f} "
            f"[{probe.low:.2f}, {probe.high:.2f}] (sequential test, {self.confidence:.0%} "
            f"overall) vs target {self.target}; {spent}"
        )


def find_frontier(
    task: str,
    knob: str,
    low: int,
    high: int,
    answer: Answer,
    *,
    target: float = 0.5,
    level: str | None = None,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    confidence: float = 0.9,
    max_samples: int = 60,
    max_calls: int | None = None,
) -> FrontierResult:
    """Bisect ``[low, high]`` for the largest knob value whose probe passes."""
    found = get_task(task)
    level = level or found.levels[0]
    if knob not in found.knobs or found.knobs[knob].kind is not int:
        numeric = sorted(k for k, v in found.knobs.items() if v.kind is int)
        raise InvalidArgument(
            f"--knob: {knob!r} is not a numeric knob of {task}; expected one of "
            + ", ".join(numeric)
        )
    if low > high:
        raise InvalidArgument(f"--min: {low} is above --max {high}")
    if not 0 < target < 1:
        raise InvalidArgument(f"--target: expected a fraction in (0, 1), got {target}")
    if not 0 < confidence < 1:
        raise InvalidArgument(f"--confidence: expected a fraction in (0, 1), got {confidence}")
    base = dict(params or {})
    for value in (low, high):  # a one-line error before any call is spent
        resolve_params(found, level, {**base, knob: value})
    result = FrontierResult(task, knob, target, confidence, None, False, 0)
    per_look = 1 - (1 - confidence) / max_samples

    def probe(value: int) -> Probe:
        p = Probe(value)
        result.probes.append(p)
        index = 0
        while p.n < max_samples and (max_calls is None or result.calls < max_calls):
            item = make_item(found, level, seed, index, {**base, knob: value})
            index += 1
            result.calls += 1
            verdict = answer(item)
            if verdict is None:
                p.errors += 1
                if p.errors > max_samples:
                    break
                continue
            p.n += 1
            p.correct += bool(verdict)
            p.low, p.high = wilson_interval(p.correct, p.n, per_look)
            if p.low >= target:
                p.verdict = "pass"
                return p
            if p.high < target:
                p.verdict = "fail"
                return p
        accuracy = p.accuracy if p.accuracy is not None else 0.0
        p.verdict = "pass?" if accuracy >= target else "fail?"
        return p

    if not probe(low).passed:
        return result
    if probe(high).passed:
        result.value, result.beyond = high, True
        return result
    good, bad = low, high
    while bad - good > 1:
        middle = (good + bad) // 2
        if probe(middle).passed:
            good = middle
        else:
            bad = middle
    result.value = good
    return result
