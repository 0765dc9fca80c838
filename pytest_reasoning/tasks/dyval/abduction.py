"""Exact abduction (``semantics: exact``, the default of ``dyval.abductive_logic``).

The problem: implication rules ``(A and B) -> C``, ``(A or B) -> C``, ``(NOT A) -> C`` over a
tree, some leaves stated True or False, the root given False; the question is one unstated
leaf. The answer is what classical logic entails from ALL of it: True (or False) when the leaf
has that value in every assignment that keeps every rule and every given value, N/A when it
can take both. Walking down from the root: a False conclusion makes its premise False, so an
OR's parts are all False, a NOT's part True, and an AND's one part False only when its other
parts must be True (stated, or deduced from stated leaves); a True conclusion says nothing.

Balanced items are drawn so that the shape, the asked leaf and the counts of stated values
say nothing about the answer (see :func:`draw_statements`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

from ...rng import Chooser
from .tdag import Node, TreeDag

__all__ = [
    "NA",
    "PATTERNS",
    "Statements",
    "describe_stated",
    "draw_statements",
    "entailed",
    "explain_exact",
]

NA = "N/A"
Statements = dict[str, bool]  # stated leaf -> its value
PATTERNS = 64  # statement patterns tried per shape and asked leaf before another shape
# Counts are matched only where they leave room: with fewer other leaves, every count of
# stated values decides the outcome (one leaf under AND: stated True is definite), and a
# matched draw would refuse nearly every shape (D2 would never ask a True leaf).
MATCH_OTHERS = 2


def _can_be_false(node: Node, stated: Mapping[str, bool]) -> bool:
    """Whether some assignment of the subtree keeps every rule with ``node`` False: its
    premise must then be False (a True premise forces the conclusion)."""
    if node.op is None:
        return stated.get(node.name) is not True
    if node.op == "or":
        return all(_can_be_false(c, stated) for c in node.children)
    if node.op == "and":
        return any(_can_be_false(c, stated) for c in node.children)
    return _can_be_true(node.children[0], stated)  # not: the premise NOT c is False


def _can_be_true(node: Node, stated: Mapping[str, bool]) -> bool:
    # A rule never forbids its conclusion to be True; only a stated False leaf cannot be.
    return node.op is not None or stated.get(node.name) is not False


def entailed(dag: TreeDag, asked: str, stated: Mapping[str, bool]) -> str | None:
    """The asked leaf's value given the root False and the stated leaves: ``"True"``,
    ``"False"``, ``"N/A"`` (both possible), or ``None`` when nothing is consistent."""
    # _can_be_false of the root with the asked leaf True and with it False, in one walk.
    return _ANSWERS[_false_mask(dag.root, asked, stated)]


# Which values of the asked leaf let a subtree be False: bit 1 for True, bit 2 for False.
_EITHER = 3
_ANSWERS: tuple[str | None, ...] = (None, "True", "False", NA)


def _false_mask(node: Node, asked: str, stated: Mapping[str, bool]) -> int:
    """:func:`_can_be_false` of ``node`` with ``asked`` stated True and stated False, as a
    mask (a draw asks it of some 40 patterns per shape: one walk instead of two copies of
    ``stated`` and two walks through generators)."""
    op = node.op
    if op is None:
        if node.name == asked:
            return 2  # False unless True
        return 0 if stated.get(node.name) is True else _EITHER
    if op == "or":  # every part False
        mask = _EITHER
        for child in node.children:
            mask &= _false_mask(child, asked, stated)
            if not mask:
                break
        return mask
    if op == "and":  # some part False
        mask = 0
        for child in node.children:
            mask |= _false_mask(child, asked, stated)
            if mask == _EITHER:
                break
        return mask
    child = node.children[0]  # not: the part can be True
    if child.op is not None:
        return _EITHER
    if child.name == asked:
        return 1
    return 0 if stated.get(child.name) is False else _EITHER


def _outcome(answer: str | None) -> str | None:
    """definite (True or False) or N/A: what a balanced batch alternates."""
    return None if answer is None else ("N/A" if answer == NA else "definite")


def _can_vary(dag: TreeDag, asked: str) -> bool:
    """Whether stated leaves can make the asked leaf both definite and N/A: no NOT above its
    parent (below a NOT the conclusion is True, which says nothing), and an AND at its parent
    or above (OR alone forces every part False whatever is stated)."""
    parent = {id(c): n for n in dag.nodes for c in n.children}
    leaf = next(n for n in dag.nodes if n.name == asked)
    node = parent.get(id(leaf))
    found_and = False
    first = True
    while node is not None:
        if node.op == "not" and not first:
            return False
        found_and = found_and or node.op == "and"
        node, first = parent.get(id(node)), False
    return found_and


def _every(
    groups: Sequence[Sequence[str]], counts: Sequence[tuple[int, int]]
) -> list[Statements] | None:
    """Every pattern with these counts per group, when there are at most ``PATTERNS``."""
    total = 1
    for group, (stated, true) in zip(groups, counts, strict=True):
        total *= math.comb(len(group), stated) * math.comb(stated, true)
    if total > PATTERNS:
        return None
    options: list[list[Statements]] = []
    for group, (stated, true) in zip(groups, counts, strict=True):
        mine: list[Statements] = []
        for chosen in itertools.combinations(group, stated):
            for trues in itertools.combinations(chosen, true):
                mine.append({n: n in trues for n in chosen})
        options.append(mine)
    out: list[Statements] = []
    for parts in itertools.product(*options):
        merged: Statements = {}
        for part in parts:
            merged.update(part)
        out.append(merged)
    return out


def _pattern(chooser: Chooser, leaves: Sequence[str], stated: int, true: int) -> Statements:
    """``stated`` of ``leaves`` stated, ``true`` of those True, every such choice alike."""
    chosen = chooser.sample(list(leaves), stated)
    values = [True] * true + [False] * (stated - true)
    chooser.shuffle(values)
    return dict(zip(chosen, values, strict=True))


def draw_statements(
    dag: TreeDag,
    chooser: Chooser,
    want: str | None,
    *,
    match: bool,
    fits: Callable[[str, Statements], bool] = lambda _asked, _stated: True,
    apart: bool = True,
) -> tuple[str, Statements, str] | None:
    """The asked leaf, the stated leaves and the answer for ``dag`` (its shape only).

    ``want`` None (unbalanced): a leaf and statements drawn uniformly (each other leaf
    unstated, True or False alike), redrawn until consistent. ``want`` "definite" or "N/A":
    the asked leaf and a first pattern are drawn as for unbalanced items; patterns are then
    drawn again (with ``match``: with the same numbers of stated leaves and of True ones,
    under a NOT and elsewhere)
    until both outcomes have been seen, and the first pattern of the wanted one is returned.
    Whether both are seen does not depend on which is wanted, so the shape, the asked leaf
    (its parent's operation included) and, with ``match``, the counts of stated values are
    distributed alike for both outcomes: no rule reading them beats the majority answer.
    Only patterns that ``fits`` (the problem is in the split being drawn) count, so the
    split does not make the shape tell the answer either. ``apart`` False (one rule, D1:
    the rule IS the problem, and only an AND can give both outcomes): the first pattern of
    the wanted outcome is returned whatever else was seen.
    ``None``: this shape and leaf gave only one outcome (the caller draws another shape).
    """
    leaves = [n.name for n in dag.nodes if n.op is None]
    asked = chooser.choice(leaves)
    if want is not None and apart and not _can_vary(dag, asked):
        return None
    others = [name for name in leaves if name != asked]
    first: Statements = {
        name: v for name in others if (v := chooser.choice((None, True, False))) is not None
    }
    # Leaves under a NOT and the others are counted apart: a False one under a NOT makes
    # its rule hold, as a True one does elsewhere ("x is False. (NOT x) -> y" is a bigram).
    negated = {c.name for n in dag.nodes if n.op == "not" for c in n.children}
    groups = [[n for n in others if n in negated], [n for n in others if n not in negated]]
    counts = [(sum(n in first for n in g), sum(first.get(n) is True for n in g)) for g in groups]
    match = match and len(others) >= MATCH_OTHERS
    every = _every(groups, counts) if match else None
    if every is not None:  # few patterns share these counts: try each once, in random order
        chooser.shuffle(every)
        tries: list[Statements] = [first, *every]
    seen: dict[str, tuple[Statements, str]] = {}
    for k in range(len(tries) if every is not None else PATTERNS):
        if every is not None:
            pattern = tries[k]
        elif k == 0:
            pattern = first
        elif match:
            pattern = {}
            for group, (stated, true) in zip(groups, counts, strict=True):
                pattern.update(_pattern(chooser, group, stated, true))
        else:
            pattern = {
                name: bool(v)
                for name in others
                if (v := chooser.choice((None, True, False))) is not None
            }
        answer = entailed(dag, asked, pattern)
        outcome = _outcome(answer)
        if answer is None or outcome is None or outcome in seen or not fits(asked, pattern):
            continue
        if want is None or (not apart and outcome == want):
            return asked, pattern, answer
        seen[outcome] = (pattern, answer)
        if len(seen) == 2:
            pattern, answer = seen[want]
            return asked, pattern, answer
    return None


def describe_stated(
    stated: Mapping[str, bool], rule: Callable[[Node], str]
) -> Callable[[Node], str]:
    """A node's line: a stated leaf's value, an unstated leaf nothing, a rule its rule."""

    def describe(node: Node) -> str:
        if node.op is None:
            value = stated.get(node.name)
            return "" if value is None else f"{node.name} is {value}."
        return rule(node)

    return describe


def explain_exact(problem: Mapping[str, object], answer: str) -> str:
    """Step-by-step abduction for ``export --with-steps``: down the path from the root to
    the asked leaf, each AND's other parts shown True (stated, or deduced) or not."""
    raw = problem["nodes"]
    assert isinstance(raw, list)
    nodes = {n["name"]: n for n in raw if not n.get("distractor")}
    stated = problem["stated"]
    assert isinstance(stated, dict)
    target = problem["target"]
    parent = {c: n["name"] for n in nodes.values() for c in n["children"]}
    path = [target]
    while path[-1] in parent:
        path.append(parent[path[-1]])
    path.reverse()
    lines = [f"{path[0]} is given as False."]

    def must_be_true(name: str, out: list[str]) -> bool:
        """Whether ``name`` is True in every assignment (deduced from stated leaves), with
        the deduction's lines appended to ``out`` when it is."""
        n = nodes[name]
        if n["op"] is None:
            return stated.get(name) == "True"
        kids = n["children"]
        if n["op"] == "not":
            ok = stated.get(kids[0]) == "False"
            why = f"{kids[0]} is False"
        elif n["op"] == "or":
            found = next((k for k in kids if must_be_true(k, out)), None)
            ok, why = found is not None, f"{found} is True"
        else:
            ok = all(must_be_true(k, out) for k in kids)
            why = "every part is True"
        if ok:
            out.append(f"{name} is True: its premise holds ({why}).")
        return ok

    for here, below in itertools.pairwise(path):
        n = nodes[here]
        op, kids = n["op"], n["children"]
        premise = f"(NOT {kids[0]})" if op == "not" else "(" + f" {op} ".join(kids) + ")"
        head = f"{premise} -> {here}: {here} is False, so {premise} is False"
        if op == "not":
            if below == target:
                lines.append(f"{head}: {below} is True.")
            else:
                lines.append(
                    f"{head}: {below} is True, which says nothing about its own premise, so "
                    f"{target} could be True or False."
                )
            break
        if op == "or":
            lines.append(f"{head}: every part is False, {below} included.")
            continue
        others = [k for k in kids if k != below]
        steps: list[str] = []
        free = next((k for k in others if not must_be_true(k, steps)), None)
        lines.extend(steps)
        if free is not None:
            lines.append(
                f"{head}, but {free} is not known to be True, so that part may be the False "
                f"one: {below} is not forced, and {target} could be True or False."
            )
            break
        lines.append(f"{head}; its other parts are True, so {below} is False.")
    lines.append(f"Thus, the answer is <<<{answer}>>>")
    return "\n".join(lines)
