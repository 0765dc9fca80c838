"""Clue kinds: which clues are true of a grid, what each means, and how each is worded.

A clue's ``a`` is its subject: ``direct_left`` says a lives directly left of b, ``left_of``
somewhere left, ``one_between`` |pos(a) - pos(b)| = 2, ``two_between`` = 3. ``found_at`` and
``not_at`` name a house instead of ``b``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import NamedTuple

from ...rng import Chooser
from ..names import first_names
from .pools import FEATURES, feature, phrase

__all__ = [
    "KINDS",
    "TEMPLATES",
    "Clue",
    "Ref",
    "holds",
    "names",
    "ordinal",
    "render",
    "true_clues",
]

Ref = tuple[str, str]  # (feature key, value)

KINDS = (
    "found_at",
    "not_at",
    "same_house",
    "direct_left",
    "direct_right",
    "side_by_side",
    "left_of",
    "right_of",
    "one_between",
    "two_between",
)


class Clue(NamedTuple):
    kind: str
    a: Ref
    b: Ref | None = None
    house: int | None = None  # 1-based, found_at / not_at only

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "a": list(self.a),
            "b": list(self.b) if self.b else None,
            "house": self.house,
        }


# What each kind demands of the two houses (1-based): p = pos(a), q = pos(b) or the house.
_RELATION: dict[str, Callable[[int, int], bool]] = {
    "found_at": lambda p, q: p == q,
    "not_at": lambda p, q: p != q,
    "same_house": lambda p, q: p == q,
    "direct_left": lambda p, q: p + 1 == q,
    "direct_right": lambda p, q: p == q + 1,
    "side_by_side": lambda p, q: abs(p - q) == 1,
    "left_of": lambda p, q: p < q,
    "right_of": lambda p, q: p > q,
    "one_between": lambda p, q: abs(p - q) == 2,
    "two_between": lambda p, q: abs(p - q) == 3,
}


def holds(clue: Clue, pos: Mapping[Ref, int]) -> bool | None:
    """Whether ``clue`` is true where ``pos`` places values; None if a value is unplaced."""
    p = pos.get(clue.a)
    q = clue.house if clue.b is None else pos.get(clue.b)
    if p is None or q is None:
        return None
    return _RELATION[clue.kind](p, q)


def true_clues(grid: Sequence[Mapping[str, str]], kinds: Sequence[str] = KINDS) -> list[Clue]:
    """Every clue of the given kinds that is true of ``grid`` (house 1 first), in a fixed order.

    Symmetric kinds (side_by_side, one/two_between) appear once per pair, the left value as
    subject; the renderer may name either first.
    """
    n = len(grid)
    refs = [[(f, v) for f, v in house.items()] for house in grid]
    wanted = set(kinds)
    out: list[Clue] = []
    for h in range(n):
        for r in refs[h]:
            if "found_at" in wanted:
                out.append(Clue("found_at", r, None, h + 1))
            if "not_at" in wanted:
                out.extend(Clue("not_at", r, None, k + 1) for k in range(n) if k != h)
    if "same_house" in wanted:
        for h in range(n):
            for i, r in enumerate(refs[h]):
                out.extend(Clue("same_house", r, s) for s in refs[h][i + 1 :])
    for h in range(n):
        for k in range(h + 1, n):
            gap = k - h
            for r in refs[h]:
                for s in refs[k]:
                    if gap == 1:
                        if "direct_left" in wanted:
                            out.append(Clue("direct_left", r, s))
                        if "direct_right" in wanted:
                            out.append(Clue("direct_right", s, r))
                        if "side_by_side" in wanted:
                            out.append(Clue("side_by_side", r, s))
                    if "left_of" in wanted:
                        out.append(Clue("left_of", r, s))
                    if "right_of" in wanted:
                        out.append(Clue("right_of", s, r))
                    if gap == 2 and "one_between" in wanted:
                        out.append(Clue("one_between", r, s))
                    if gap == 3 and "two_between" in wanted:
                        out.append(Clue("two_between", r, s))
    return out


_ORDINALS = (
    "first", "second", "third", "fourth", "fifth", "sixth",
    "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth",
)  # fmt: skip


def ordinal(house: int) -> str:
    return _ORDINALS[house - 1] if house <= len(_ORDINALS) else f"{house}th"


# Several natural wordings per kind; {A}/{B} are the subject/object phrases, {H} a house.
TEMPLATES: dict[str, tuple[str, ...]] = {
    "found_at": ("{A} lives in {H}.", "{A} is in {H}.", "{H} is home to {A}."),
    "not_at": ("{A} does not live in {H}.", "{A} is not in {H}.", "{H} is not where {A} lives."),
    "same_house": (
        "{A} is {B}.",
        "{A} lives in the same house as {B}.",
        "{A} and {B} live in the same house.",
    ),
    "direct_left": (
        "{A} is directly left of {B}.",
        "{A} lives immediately to the left of {B}.",
        "{A} lives just left of {B}, next door.",
    ),
    "direct_right": (
        "{A} is directly right of {B}.",
        "{A} lives immediately to the right of {B}.",
        "{A} lives just right of {B}, next door.",
    ),
    "side_by_side": (
        "{A} and {B} are next-door neighbours.",
        "{A} lives next door to {B}.",
        "{A} and {B} live side by side.",
    ),
    "left_of": (
        "{A} lives somewhere to the left of {B}.",
        "{A} is somewhere left of {B}.",
        "{A} lives further left than {B}.",
    ),
    "right_of": (
        "{A} lives somewhere to the right of {B}.",
        "{A} is somewhere right of {B}.",
        "{A} lives further right than {B}.",
    ),
    "one_between": (
        "There is one house between {A} and {B}.",
        "{A} and {B} have exactly one house between them.",
        "{A} lives two houses away from {B}.",
    ),
    "two_between": (
        "There are two houses between {A} and {B}.",
        "{A} and {B} have exactly two houses between them.",
        "{A} lives three houses away from {B}.",
    ),
}

_SYMMETRIC = {"same_house", "side_by_side", "one_between", "two_between"}


def render(clue: Clue, chooser: Chooser) -> tuple[Clue, str]:
    """One sentence for ``clue`` (a symmetric clue may swap its two values; the returned clue
    is the one the sentence states, subject first)."""
    if clue.kind in _SYMMETRIC and clue.b is not None and chooser.random() < 0.5:
        clue = Clue(clue.kind, clue.b, clue.a, clue.house)
    template = chooser.choice(TEMPLATES[clue.kind])
    house = clue.house or 0
    h = chooser.choice((f"house {house}", f"the {ordinal(house)} house"))
    text = template.replace("{A}", _name(clue.a))
    text = text.replace("{B}", _name(clue.b) if clue.b else "").replace("{H}", h)
    return clue, text[0].upper() + text[1:]


def _name(ref: Ref) -> str:
    return phrase(feature(ref[0]), ref[1])


@cache
def names() -> tuple[str, ...]:
    """First names, minus any that is also a word of a value, a phrase or a template."""
    text = " ".join(" ".join(t) for t in TEMPLATES.values()) + " ".join(_ORDINALS)
    for f in FEATURES:
        text += " " + " ".join(f.values) + " " + f.noun + " " + f.intro
    banned = {w.lower() for w in re.findall(r"[A-Za-z]+", text)} | {"an"}
    return first_names(frozenset(banned))
