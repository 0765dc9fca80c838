"""The canonical form of a puzzle: the puzzle up to renaming the values within each feature
and renaming the features (docs/tasks/splits.md, "The same problem").

Values are named by the house the solution puts them in: the solution is unique and a
function of the puzzle, so this names them the same way in every renaming, and it is exact.
What is left is the order of the features: each gets a signature from the clues it is in (its
houses there, the kinds, its partners' signatures, refined until stable), features are
ordered by signature, and where signatures tie every order of the tied features is tried and
the least clue list kept (exact; a puzzle whose ties allow more than ``MAX_ORDERS`` orders
keeps the refined signatures alone, a coarser invariant). Houses are not renamed: left and
right mean something. Clues are taken as the constraints they state (``direct_right`` as
``direct_left`` with its values swapped, a symmetric clue's two values in order), without
their wording or their order in the prompt; red herrings are left out (they say nothing about
the grid: distractors).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_ORDERS", "puzzle_form"]

MAX_ORDERS = 5040  # orders of tied features tried (7!): more than any level's puzzles need

_MIRRORED = {"direct_right": "direct_left", "right_of": "left_of"}
_SYMMETRIC = frozenset({"same_house", "side_by_side", "one_between", "two_between"})

# A clue over feature indices: kind, (feature, house) of a, of b (or (-1, 0)), its house.
Ref = tuple[int, int]
Constraint = tuple[str, Ref, Ref, int]


def puzzle_form(problem: Mapping[str, Any], solution: Sequence[Mapping[str, str]]) -> str:
    """The canonical form of ``problem`` (houses, features, clues) whose unique solution is
    ``solution`` (house 1 first, each house's value per feature)."""
    features = list(problem["features"])
    where = {(f, v): h for h, house in enumerate(solution, 1) for f, v in house.items()}
    index = {f: i for i, f in enumerate(features)}
    clues: list[tuple[str, Ref, Ref, int]] = []
    for c in problem["clues"]:
        if c["kind"] == "red_herring":
            continue
        a = _ref(c["a"], index, where)
        b = _ref(c["b"], index, where)
        kind = c["kind"]
        if kind in _MIRRORED:
            kind, a, b = _MIRRORED[kind], b, a
        clues.append((kind, a, b, c["house"] or 0))
    colours = _signatures(len(features), clues)
    best: str | None = None
    for order in _orders(colours):
        text = _encode(order, clues)
        if best is None or text < best:
            best = text
    assert best is not None
    return f"{problem['houses']}x{len(features)}:{best}"


def _ref(raw: Any, index: Mapping[str, int], where: Mapping[tuple[str, str], int]) -> Ref:
    if not raw:
        return (-1, 0)
    f, v = raw
    return (index[f], where[(f, v)])


def _signatures(m: int, clues: Sequence[Constraint]) -> list[int]:
    """Each feature's colour: from the clues it is in (kind, its role and house, the other
    end's house and colour), refined until the number of colours stops growing; numbered by
    sorting, so they do not depend on the features' names or order."""
    colour = [0] * m
    count = 1
    while True:
        seen: list[list[tuple[Any, ...]]] = [[] for _ in range(m)]
        for kind, a, b, house in clues:
            symmetric = kind in _SYMMETRIC
            if a[0] >= 0:
                other = (b[1], colour[b[0]]) if b[0] >= 0 else (0, -1)
                seen[a[0]].append((kind, "s" if symmetric else "a", a[1], *other, house))
            if b[0] >= 0:
                other = (a[1], colour[a[0]])
                seen[b[0]].append((kind, "s" if symmetric else "b", b[1], *other, house))
        keys = [(colour[i], tuple(sorted(seen[i]))) for i in range(m)]
        ranks = {k: r for r, k in enumerate(sorted(set(keys)))}
        colour = [ranks[k] for k in keys]
        if len(ranks) == count:
            return colour
        count = len(ranks)


def _orders(colours: Sequence[int]) -> list[list[int]]:
    """The feature orders to try: by colour, every order within a colour (each as a list:
    feature -> its place)."""
    groups: dict[int, list[int]] = {}
    for f, c in enumerate(colours):
        groups.setdefault(c, []).append(f)
    ordered = [groups[c] for c in sorted(groups)]
    total = math.prod(math.factorial(len(g)) for g in ordered)
    if total > MAX_ORDERS:  # keep the ties unbroken: every feature of a colour in one place
        place = [0] * len(colours)
        for rank, c in enumerate(sorted(groups)):
            for f in groups[c]:
                place[f] = rank
        return [place]
    out = []
    for perms in itertools.product(*(itertools.permutations(g) for g in ordered)):
        place = [0] * len(colours)
        for rank, f in enumerate(f for perm in perms for f in perm):
            place[f] = rank
        out.append(place)
    return out


def _encode(place: Sequence[int], clues: Sequence[Constraint]) -> str:
    def at(ref: Ref) -> tuple[int, int]:
        return (place[ref[0]], ref[1]) if ref[0] >= 0 else ref

    rows: list[Any] = []
    for kind, a, b, house in clues:
        x, y = at(a), at(b)
        if kind in _SYMMETRIC and y < x:
            x, y = y, x
        rows.append((kind, x, y, house))
    rows.sort()
    return json.dumps(rows, separators=(",", ":"))
