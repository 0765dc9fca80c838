"""Φ written apart from the generators: the answer from the gold facts F alone (the exported
``problem``), with no code shared with how F was drawn or told."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import product
from typing import Any

__all__ = ["solve_murder", "solve_placement", "solve_teams"]


def solve_murder(problem: Mapping[str, Any]) -> int:
    """The index (into ``choices``) of the one suspect with means, motive and opportunity."""
    guilty = [
        s["name"]
        for s in problem["suspects"]
        if s["means"] is True and s["motive"] is True and s["opportunity"] is True
    ]
    if len(guilty) != 1:
        raise ValueError(f"{len(guilty)} suspects have all three")
    return list(problem["choices"]).index(guilty[0])


def solve_placement(problem: Mapping[str, Any]) -> int:
    """Walk the moves backwards: the first move of the item the person made or saw is where
    they believe it is; none → its starting place."""
    who, item = problem["query"]["person"], problem["query"]["item"]
    belief = problem["start"][item]
    for move in reversed(problem["moves"]):
        if move["item"] != item:
            continue
        if who == move["person"] or who in move["seen_by"]:
            belief = move["to"]
            break
    return list(problem["choices"]).index(belief)


def solve_teams(problem: Mapping[str, Any]) -> int:
    """Try every assignment of each person to task 0 or 1 (both tasks staffed); the options'
    index of the highest total of skills plus the teamwork of people sharing a task."""
    people = problem["people"]
    skills = problem["skills"]
    teamwork = {frozenset(t["pair"]): t["score"] for t in problem["teamwork"]}
    best: tuple[int, frozenset[frozenset[str]]] | None = None
    for assign in product((0, 1), repeat=len(people)):
        if len(set(assign)) < 2:
            continue
        total = sum(skills[p][t] for p, t in zip(people, assign, strict=True))
        groups = [
            frozenset(p for p, t in zip(people, assign, strict=True) if t == j) for j in (0, 1)
        ]
        total += sum(teamwork[g] for g in groups if len(g) == 2)
        key = frozenset(frozenset((j, *g)) for j, g in enumerate(groups))
        if best is None or total > best[0]:
            best = (total, key)
    assert best is not None
    for n, option in enumerate(problem["choices"]):
        if frozenset(frozenset((j, *g)) for j, g in enumerate(option)) == best[1]:
            return n
    raise ValueError("the best allocation is not among the choices")
