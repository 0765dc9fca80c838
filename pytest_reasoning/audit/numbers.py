"""Numbers rules: an open numeric answer guessed from the prompt's numbers alone (issue 41).

A rule reads the numbers of the prompt's description (every paragraph but the last, which is
the question and its format instruction) and computes one number from them: their product,
their sum, the largest, the first plus the last, ... A few rules read the numbers on the lines
that name the question's own words (the asked nodes: a path's two ends), and the others. The
rule most often right on the training problems is the one scored on the test problems, so the
choice is learned, never made on the items it is judged on. No rule knows a task: each is what
a learner that never reads the operations could stumble on (arithmetic D1's "the product of
the numbers" is right whenever the one operation is a multiplication).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..answers import relative_error

__all__ = ["RULES", "TOLERANCE", "Numbers", "NumbersRule", "close", "gold_number"]

TOLERANCE = 1e-4  # DyVal's relative precision: a rule's number within it of the gold counts
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9]+")
_COMMON = 0.5  # a question word in at least this share of training questions is template


@dataclass(frozen=True)
class Numbers:
    """A prompt's description numbers in reading order; those on lines naming an asked word
    (``asked``) and the rest (``other``)."""

    all: tuple[float, ...]
    asked: tuple[float, ...]
    other: tuple[float, ...]


def _split(prompt: str) -> tuple[str, str]:
    body, _, question = prompt.rstrip().rpartition("\n\n")
    return body, question


def _prod(xs: Sequence[float]) -> float | None:
    out = 1.0
    for x in xs:
        out *= x
        if not math.isfinite(out) or abs(out) > 1e300:
            return None
    return out if xs else None


def _pair(xs: Sequence[float], op: Callable[[float, float], float | None]) -> float | None:
    return op(xs[0], xs[-1]) if len(xs) >= 2 else None


def _ends_and_largest(xs: Sequence[float]) -> float | None:
    return xs[0] + xs[-1] + max(xs[1:-1]) if len(xs) >= 3 else None


def _root(xs: Sequence[float]) -> float | None:
    return math.sqrt(xs[0]) if xs and xs[0] >= 0 else None


def _plus_largest(asked: Sequence[float], other: Sequence[float], k: int) -> float | None:
    return math.fsum(asked) + math.fsum(sorted(other)[-k:]) if asked and other else None


# (label, rule): each maps a prompt's numbers to a guess, or None (the rule abstains).
RULES: tuple[tuple[str, Callable[[Numbers], float | None]], ...] = (
    ("product", lambda n: _prod(n.all)),
    ("sum", lambda n: math.fsum(n.all) if n.all else None),
    ("largest", lambda n: max(n.all, default=None)),
    ("smallest", lambda n: min(n.all, default=None)),
    ("first", lambda n: n.all[0] if n.all else None),
    ("last", lambda n: n.all[-1] if n.all else None),
    ("mean", lambda n: math.fsum(n.all) / len(n.all) if n.all else None),
    ("count", lambda n: float(len(n.all))),
    ("largest minus smallest", lambda n: max(n.all) - min(n.all) if n.all else None),
    ("first minus last", lambda n: _pair(n.all, lambda a, b: a - b)),
    ("last minus first", lambda n: _pair(n.all, lambda a, b: b - a)),
    ("first over last", lambda n: _pair(n.all, lambda a, b: a / b if b else None)),
    ("last over first", lambda n: _pair(n.all, lambda a, b: b / a if a else None)),
    ("square of the first", lambda n: n.all[0] ** 2 if n.all else None),
    ("square root of the first", lambda n: _root(n.all)),
    ("end values", lambda n: _pair(n.all, lambda a, b: a + b)),
    ("end values plus the largest", lambda n: _ends_and_largest(n.all)),
    ("the two largest", lambda n: math.fsum(sorted(n.all)[-2:]) if len(n.all) >= 2 else None),
    ("asked values", lambda n: math.fsum(n.asked) if n.asked else None),
    ("asked values plus the largest other", lambda n: _plus_largest(n.asked, n.other, 1)),
    ("asked values plus the two largest others", lambda n: _plus_largest(n.asked, n.other, 2)),
    ("asked values' product", lambda n: _prod(n.asked)),
)


def gold_number(answer: str) -> float | None:
    """The gold answer as one number, or None (a pair, a label, a grid)."""
    try:
        value = float(answer.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def close(guess: float | None, gold: float | None) -> bool:
    """Within :data:`TOLERANCE` of the gold, relatively (integers: exactly, in effect)."""
    if guess is None or gold is None or not math.isfinite(guess):
        return False
    return relative_error(guess, gold) <= TOLERANCE


class NumbersRule:
    """Reads each prompt's numbers and picks, on the training prompts, the rule of
    :data:`RULES` most often within tolerance of the gold (the first listed among equals)."""

    def __init__(self, prompts: Sequence[str], answers: Sequence[str]) -> None:
        questions = [set(_WORD.findall(_split(p)[1].lower())) for p in prompts]
        counts = Counter(w for q in questions for w in q)
        self.template = {w for w, k in counts.items() if k >= _COMMON * len(prompts)}
        golds = [gold_number(a) for a in answers]
        read = [self.numbers(p) for p in prompts]
        right = [
            sum(close(_safe(rule, n), g) for n, g in zip(read, golds, strict=True))
            for _, rule in RULES
        ]
        best = max(range(len(RULES)), key=lambda k: (right[k], -k))
        self.label, self.rule = RULES[best]
        self.trained = right[best]

    def numbers(self, prompt: str) -> Numbers:
        body, question = _split(prompt)
        asked = {w for w in _WORD.findall(question.lower()) if w not in self.template}
        every: list[float] = []
        named: list[float] = []
        rest: list[float] = []
        for line in body.splitlines():
            found = [float(x) for x in _NUMBER.findall(line)]
            every += found
            (named if asked & set(_WORD.findall(line.lower())) else rest).extend(found)
        return Numbers(tuple(every[:10_000]), tuple(named[:10_000]), tuple(rest[:10_000]))

    def guess(self, prompt: str) -> float | None:
        return _safe(self.rule, self.numbers(prompt))


def _safe(rule: Callable[[Numbers], float | None], numbers: Numbers) -> float | None:
    try:
        value = rule(numbers)
    except (ArithmeticError, ValueError):  # an overflow, a huge power: the rule abstains
        return None
    return value if value is not None and math.isfinite(value) else None
