"""The reference solver: reads a zebra prompt back from its TEXT and solves it by constraint
propagation and search over house bitmasks.

It shares nothing with the generator's SAT prover (pysat), so a gold grid that this solver
also finds, alone, is checked twice. It also writes the step-by-step explanations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "HERRING",
    "Puzzle",
    "SolverError",
    "Step",
    "check_steps",
    "count_solutions",
    "deduce",
    "parse_prompt",
    "solve_text",
    "trace",
]


class SolverError(ValueError):
    """The text is not a puzzle this solver can read."""


Ref = tuple[str, str]
# A clue that names no grid value, or one and no house: a red herring, set aside (it cannot
# narrow the grid; with it ignored the solver can only find MORE grids, never fewer).
HERRING: tuple[str, Ref, Ref | None, int | None] = ("red_herring", ("", ""), None, None)


@dataclass(frozen=True)
class Puzzle:
    houses: int
    features: dict[str, list[str]]  # first the name feature
    clues: list[tuple[str, Ref, Ref | None, int | None]]  # kind, a, b, house (1-based)
    texts: tuple[str, ...] = ()


_ORD = {
    w: i + 1
    for i, w in enumerate(
        [
            "first",
            "second",
            "third",
            "fourth",
            "fifth",
            "sixth",
            "seventh",
            "eighth",
            "ninth",
            "tenth",
            "eleventh",
            "twelfth",
        ]
    )
}
# Checked in this order: the first match decides (a "just left ..., next door" is direct).
_KIND_WORDS = (
    ("two_between", ("two houses between", "three houses away")),
    ("one_between", ("one house between", "two houses away")),
    ("direct_left", ("directly left", "immediately to the left", "just left")),
    ("direct_right", ("directly right", "immediately to the right", "just right")),
    ("side_by_side", ("next door", "next-door", "side by side", "neighbour")),
    ("left_of", ("left",)),
    ("right_of", ("right",)),
    ("same_house", ("same house",)),
)


def parse_prompt(prompt: str) -> Puzzle:
    """The LAST puzzle in ``prompt`` (a one-shot prompt shows a solved one first)."""
    starts = [m.start() for m in re.finditer(r"There are (\d+) houses", prompt)]
    if not starts:
        raise SolverError("no 'There are N houses' line")
    text = prompt[starts[-1] :]
    houses = int(re.match(r"There are (\d+) houses", text).group(1))  # type: ignore[union-attr]
    features: dict[str, list[str]] = {}
    for m in re.finditer(r"^- ([A-Za-z]+) \([^)]*\): (.+)$", text, re.MULTILINE):
        features[m.group(1)] = [v.strip() for v in m.group(2).split(", ")]
    if not features or any(len(v) != houses for v in features.values()):
        raise SolverError("feature lines missing or of the wrong length")
    owner = {v: f for f, vs in features.items() for v in vs}
    mention = re.compile(
        "|".join(
            rf"(?<![\w-]){re.escape(v)}(?![\w-])" for v in sorted(owner, key=len, reverse=True)
        )
    )
    body = text.split("Clues:", 1)[-1]
    clues: list[tuple[str, Ref, Ref | None, int | None]] = []
    texts = []
    for m in re.finditer(r"^\d+\. (.+)$", body, re.MULTILINE):
        sentence = m.group(1)
        found = [(owner[x.group(0)], x.group(0)) for x in mention.finditer(sentence)]
        rest = mention.sub("@", sentence).lower()
        texts.append(sentence)
        if not found:
            clues.append(HERRING)
        elif len(found) == 1:
            hm = re.search(r"house (\d+)", rest) or re.search(r"the (\w+) house", rest)
            if hm is None:
                clues.append(HERRING)
                continue
            word = hm.group(1)
            house = int(word) if word.isdigit() else _ORD.get(word)
            if house is None:
                raise SolverError(f"unknown house {word!r}")
            kind = "not_at" if re.search(r"\bnot\b", rest) else "found_at"
            clues.append((kind, found[0], None, house))
        elif len(found) == 2:
            # No relation word at all: "The teacher is the person who keeps a cat."
            kind = next(
                (k for k, words in _KIND_WORDS if any(w in rest for w in words)), "same_house"
            )
            clues.append((kind, found[0], found[1], None))
        else:
            raise SolverError(f"clue {sentence!r} names {len(found)} values")
    if not clues:
        raise SolverError("no clues")
    return Puzzle(houses, features, clues, tuple(texts))


class _State:
    """House bitmasks per value; ``dom[i]`` has bit h set if value i may be in house h+1."""

    def __init__(self, puzzle: Puzzle) -> None:
        self.n = puzzle.houses
        self.full = (1 << self.n) - 1
        self.refs: list[Ref] = [(f, v) for f, vs in puzzle.features.items() for v in vs]
        self.at = {r: i for i, r in enumerate(self.refs)}
        self.groups = [
            [self.at[(f, v)] for v in vs] for f, vs in puzzle.features.items()
        ]  # one per feature
        self.clues = [
            (k, -1, -1, 0) if k == HERRING[0] else (k, self.at[a], self.at[b] if b else -1, h or 0)
            for k, a, b, h in puzzle.clues
        ]


def _shift(mask: int, d: int, full: int) -> int:
    return ((mask << d) if d >= 0 else (mask >> -d)) & full


_OFFSETS = {
    "same_house": (0,),
    "direct_left": (1,),
    "direct_right": (-1,),
    "side_by_side": (-1, 1),
    "one_between": (-2, 2),
    "two_between": (-3, 3),
}


def _propagate(s: _State, dom: list[int], log: list[tuple[int, int, str]] | None = None) -> bool:
    """Narrow ``dom`` in place to a fixpoint; False on a contradiction. With ``log``, record
    (value, house, reason) whenever a value's house becomes known."""
    full = s.full
    changed = True

    def narrow(i: int, mask: int, why: str) -> bool:
        nonlocal changed
        new = dom[i] & mask
        if new != dom[i]:
            dom[i] = new
            changed = True
            if log is not None and new and new & (new - 1) == 0:
                log.append((i, new.bit_length(), why))
        return new != 0

    while changed:
        changed = False
        for c, (kind, a, b, h) in enumerate(s.clues):
            why = f"clue {c + 1}"
            if a < 0:  # a red herring
                continue
            if b < 0:
                bit = 1 << (h - 1)
                if not narrow(a, bit if kind == "found_at" else full & ~bit, why):
                    return False
                continue
            if kind == "left_of":
                # a below b's highest house; b above a's lowest house.
                ok = narrow(a, (1 << (dom[b].bit_length() - 1)) - 1, why) and narrow(
                    b, full & ~((dom[a] & -dom[a]) * 2 - 1), why
                )
            elif kind == "right_of":
                ok = narrow(b, (1 << (dom[a].bit_length() - 1)) - 1, why) and narrow(
                    a, full & ~((dom[b] & -dom[b]) * 2 - 1), why
                )
            else:
                offs = _OFFSETS[kind]
                to_b = 0
                to_a = 0
                for d in offs:
                    to_b |= _shift(dom[a], d, full)
                    to_a |= _shift(dom[b], -d, full)
                ok = narrow(b, to_b, why) and narrow(a, to_a, why)
            if not ok:
                return False
        for group in s.groups:
            for i in group:  # a placed value leaves its house to no other
                m = dom[i]
                if m & (m - 1) == 0:
                    for j in group:
                        if j != i and dom[j] & m and not narrow(j, full & ~m, "elimination"):
                            return False
            for bit in range(s.n):  # a house only one value can take gets it
                mask = 1 << bit
                holders = [i for i in group if dom[i] & mask]
                if not holders:
                    return False
                if len(holders) == 1 and dom[holders[0]] != mask:
                    narrow(holders[0], mask, "only place")
    return True


def _search(s: _State, dom: list[int], limit: int, out: list[list[int]]) -> None:
    if not _propagate(s, dom):
        return
    best, size = -1, 99
    for i, m in enumerate(dom):
        c = m.bit_count()
        if 1 < c < size:
            best, size = i, c
    if best < 0:
        out.append(dom)
        return
    m = dom[best]
    while m and len(out) < limit:
        bit = m & -m
        m ^= bit
        child = list(dom)
        child[best] = bit
        _search(s, child, limit, out)


def _grid(s: _State, dom: Sequence[int]) -> list[dict[str, str]]:
    grid: list[dict[str, str]] = [{} for _ in range(s.n)]
    for group in s.groups:  # feature order as listed
        for i in group:
            f, v = s.refs[i]
            grid[dom[i].bit_length() - 1][f] = v
    return grid


def count_solutions(puzzle: Puzzle, limit: int = 2) -> list[list[dict[str, str]]]:
    """Up to ``limit`` solutions (house 1 first): one means the clues force the grid."""
    s = _State(puzzle)
    out: list[list[int]] = []
    _search(s, [s.full] * len(s.refs), limit, out)
    return [_grid(s, d) for d in out]


def solve_text(prompt: str) -> list[dict[str, str]]:
    """The unique solution of the last puzzle in ``prompt``."""
    found = count_solutions(parse_prompt(prompt))
    if len(found) != 1:
        raise SolverError(f"{len(found)} solutions")
    return found[0]


@dataclass(frozen=True)
class Step:
    """One step of a worked solution, resting only on the clues it cites and the steps
    before it. ``place``: the value lives in ``house``; ``rule_out``: it cannot (a case that
    contradicts the cited clues); ``conclude``: it lives in ``house`` because every other
    house is taken or ruled out by earlier steps (cites no clue)."""

    kind: str
    value: Ref
    house: int  # 1-based
    clues: tuple[int, ...]  # 1-based clue numbers
    needs_earlier: bool  # the cited clues alone do not suffice: earlier steps are used too


class _Facts:
    """What earlier steps established: placements and ruled-out houses."""

    def __init__(self) -> None:
        self.placed: dict[int, int] = {}  # value index -> house bit
        self.out: set[tuple[int, int]] = set()  # (value index, house bit)

    def domains(self, s: _State) -> list[int]:
        dom = [s.full] * len(s.refs)
        for i, bit in self.placed.items():
            dom[i] = bit
        for i, bit in self.out:
            dom[i] &= ~bit
        return dom


def _consistent(
    puzzle: Puzzle, clues: Sequence[int], facts: _Facts | None, i: int, mask: int
) -> bool:
    """Whether some grid obeys the given clues (0-based) and facts with value ``i`` inside
    ``mask``: a conclusion is entailed exactly when its negation is not consistent."""
    sub = Puzzle(puzzle.houses, puzzle.features, [puzzle.clues[k] for k in clues])
    s = _State(sub)
    dom = facts.domains(s) if facts else [s.full] * len(s.refs)
    dom[i] &= mask
    if not dom[i]:
        return False
    found: list[list[int]] = []
    _search(s, dom, 1, found)
    return bool(found)


def _support(
    puzzle: Puzzle, facts: _Facts, i: int, negation: int, mention: Ref
) -> tuple[tuple[int, ...], bool]:
    """An irreducible set of clues that, with the facts, rules out value ``i`` in
    ``negation`` (a house mask); and whether the facts are needed besides. Clues not naming
    the value are dropped first, so the ones kept read as the reason."""
    keep = list(range(len(puzzle.clues)))
    order = sorted(keep, key=lambda k: (mention in puzzle.clues[k][1:3], -k))
    for k in order:
        trial = [c for c in keep if c != k]
        if not _consistent(puzzle, trial, facts, i, negation):
            keep = trial
    alone = not _consistent(puzzle, keep, None, i, negation)
    return tuple(k + 1 for k in keep), not alone


def _reasons(
    s: _State, dom: list[int], why: list[list[int]], fact: int
) -> list[tuple[int, int]] | None:
    """Propagate as :func:`_propagate` does, recording for every (value, house) it rules out
    the clues it rests on (bit k for clue k+1; ``fact`` for the earlier steps) in ``why``.
    Returns the placements in the order found, or None on a contradiction. The record is
    sound: a placement follows from the clues of its value's ruled-out houses."""
    full, n = s.full, s.n
    found: list[tuple[int, int]] = []
    changed = True

    def cause(i: int) -> int:  # what value i's current domain rests on
        out, gone = 0, full & ~dom[i]
        for h in range(n):
            if gone >> h & 1:
                out |= why[i][h]
        return out

    def narrow(i: int, mask: int, reason: int) -> bool:
        nonlocal changed
        new = dom[i] & mask
        if new != dom[i]:
            gone = dom[i] & ~new
            for h in range(n):
                if gone >> h & 1:
                    why[i][h] = reason
            dom[i] = new
            changed = True
            if new and new & (new - 1) == 0:
                found.append((i, new.bit_length()))
        return new != 0

    while changed:
        changed = False
        for c, (kind, a, b, h) in enumerate(s.clues):
            me = 1 << c
            if a < 0:  # a red herring
                continue
            if b < 0:
                bit = 1 << (h - 1)
                if not narrow(a, bit if kind == "found_at" else full & ~bit, me):
                    return None
                continue
            if kind == "left_of":
                ok = narrow(a, (1 << (dom[b].bit_length() - 1)) - 1, me | cause(b)) and narrow(
                    b, full & ~((dom[a] & -dom[a]) * 2 - 1), me | cause(a)
                )
            elif kind == "right_of":
                ok = narrow(b, (1 << (dom[a].bit_length() - 1)) - 1, me | cause(a)) and narrow(
                    a, full & ~((dom[b] & -dom[b]) * 2 - 1), me | cause(b)
                )
            else:
                to_b = to_a = 0
                for d in _OFFSETS[kind]:
                    to_b |= _shift(dom[a], d, full)
                    to_a |= _shift(dom[b], -d, full)
                ok = narrow(b, to_b, me | cause(a)) and narrow(a, to_a, me | cause(b))
            if not ok:
                return None
        for group in s.groups:
            for i in group:  # a placed value leaves its house to no other
                m = dom[i]
                if m & (m - 1) == 0:
                    for j in group:
                        if j != i and dom[j] & m and not narrow(j, full & ~m, cause(i)):
                            return None
            for bit in range(n):  # a house only one value can take gets it
                mask = 1 << bit
                holders = [i for i in group if dom[i] & mask]
                if not holders:
                    return None
                if len(holders) == 1 and dom[holders[0]] != mask:
                    reason = 0
                    for j in group:
                        if j != holders[0]:
                            reason |= why[j][bit]
                    narrow(holders[0], mask, reason)
    return found


def deduce(puzzle: Puzzle) -> list[Step]:
    """A worked solution in which every step follows from the clues it cites and the steps
    before it (``check_steps`` verifies that): placements in the order propagation finds
    them, citing the clues their derivation rests on (recorded by :func:`_reasons`, then
    each checked for need); where propagation stalls, a case split on the least open value,
    each other house ruled out by an irreducible set of clues."""
    s = _State(puzzle)
    facts = _Facts()
    steps: list[Step] = []
    fact = 1 << len(puzzle.clues)
    while len(facts.placed) < len(s.refs):
        dom = facts.domains(s)
        # What the earlier steps rule out rests on them alone.
        why = [[0 if m >> h & 1 else fact for h in range(s.n)] for m in dom]
        found = _reasons(s, dom, why, fact)
        if found is None:
            raise SolverError("contradiction")
        forced = [(i, h) for i, h in found if i not in facts.placed]
        forced += [
            (i, m.bit_length())
            for i, m in enumerate(dom)
            if i not in facts.placed and m & (m - 1) == 0
        ]
        if forced:
            i, house = forced[0]
            rests = 0
            for h in range(s.n):
                if h != house - 1:
                    rests |= why[i][h]
            # Sound as recorded; then each clue is checked for need (a search or two).
            keep = [k for k in range(len(puzzle.clues)) if rests >> k & 1]
            negation = s.full & ~(1 << (house - 1))
            for k in list(keep):
                trial = [c for c in keep if c != k]
                if not _consistent(puzzle, trial, facts, i, negation):
                    keep = trial
            cited = tuple(k + 1 for k in keep)
            steps.append(Step("place", s.refs[i], house, cited, bool(rests & fact)))
            facts.placed[i] = 1 << (house - 1)
            continue
        i = min(
            (k for k in range(len(s.refs)) if k not in facts.placed),
            key=lambda k: (dom[k].bit_count(), k),
        )
        home = next(
            b
            for b in (1 << h for h in range(s.n))
            if dom[i] & b and _consistent(puzzle, range(len(puzzle.clues)), facts, i, b)
        )
        taken = {b for j, b in facts.placed.items() if _same_feature(s, i, j)}
        for h in range(s.n):
            b = 1 << h
            if b == home or b in taken or (i, b) in facts.out:
                continue
            clues, earlier = _support(puzzle, facts, i, b, s.refs[i])
            steps.append(Step("rule_out", s.refs[i], h + 1, clues, earlier))
            facts.out.add((i, b))
        steps.append(Step("conclude", s.refs[i], home.bit_length(), (), True))
        facts.placed[i] = home
    return steps


def _same_feature(s: _State, i: int, j: int) -> bool:
    return s.refs[i][0] == s.refs[j][0]


def check_steps(puzzle: Puzzle, steps: Sequence[Step]) -> None:
    """Raise SolverError unless every step follows from exactly the clues it cites (each of
    them needed) and the steps before it, and the steps place every value."""
    s = _State(puzzle)
    facts = _Facts()
    for n, step in enumerate(steps, 1):
        i, bit = s.at[step.value], 1 << (step.house - 1)
        negation = bit if step.kind == "rule_out" else s.full & ~bit
        cited = [c - 1 for c in step.clues]
        if _consistent(puzzle, cited, facts, i, negation):
            raise SolverError(f"step {n} does not follow from clues {step.clues}: {step}")
        for c in cited:
            if not _consistent(puzzle, [k for k in cited if k != c], facts, i, negation):
                raise SolverError(f"step {n} cites clue {c + 1} without needing it")
        if step.kind == "rule_out":
            facts.out.add((i, bit))
        else:
            facts.placed[i] = bit
    if len(facts.placed) != len(s.refs):
        raise SolverError("the steps leave values unplaced")


def _clue_list(clues: Sequence[int]) -> str:
    if len(clues) == 1:
        return f"clue {clues[0]}"
    return "clues " + ", ".join(map(str, clues[:-1])) + f" and {clues[-1]}"


def trace(puzzle: Puzzle, phrase: Mapping[Ref, str]) -> list[str]:
    """The worked solution of :func:`deduce` in words: each step names every clue it uses
    ("By clues 2 and 4, ..."), and says when it also builds on the houses found so far."""
    out = []
    for step in deduce(puzzle):
        who = phrase[step.value]
        so_far = " and the houses found so far" if step.needs_earlier else ""
        if step.kind == "conclude":
            out.append(f"So {who} lives in house {step.house}.")
        elif step.kind == "rule_out":
            out.append(
                f"If {who} lived in house {step.house}, {_clue_list(step.clues)}{so_far} "
                "could not all hold, so that house is ruled out."
                if len(step.clues) > 1 or so_far
                else f"{_cap(who)} cannot live in house {step.house}: "
                f"{_clue_list(step.clues)} rules it out."
            )
        elif not step.clues:
            out.append(f"{_cap(who)} lives in house {step.house}, the only house left.")
        else:
            out.append(f"By {_clue_list(step.clues)}{so_far}, {who} lives in house {step.house}.")
    return out


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
