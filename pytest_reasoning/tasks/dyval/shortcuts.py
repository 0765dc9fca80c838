"""Shortcut rules for the DyVal tasks (``pytest-reasoning audit``): heuristics that answer
WITHOUT doing the task's reasoning. Each reads only the prompt text (the last problem in it),
with its own small parser, and abstains (``None``) on anything it cannot read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ...core import Item
from ..base import Shortcut

__all__ = [
    "ABDUCTIVE",
    "BOOLEAN",
    "DEDUCTIVE",
    "MAX_SUM_PATH",
    "REACHABILITY",
]

_LEAF = re.compile(r"^(\w+) is (True|False)\.$", re.M)
_IMPLY = re.compile(r"^\((NOT (\w+)|[\w ]+)\) -> (\w+)\.$", re.M)
_BOOL = re.compile(r"^The value of (\w+) equals \((NOT \w+|[\w ]+)\)\.$", re.M)
_EDGES = re.compile(r"^(\w+) points to: \(([\w, ]*)\)\.$", re.M)
_VALUE = re.compile(r"^The value of (\w+) is (-?\d+)\.$", re.M)
_ABDUCE_Q = re.compile(r"Given (\w+) is (True|False), what is the value of (\w+)\?")
_REACH_Q = re.compile(r"Can (\w+) be reached starting from (\w+)\?")
_SUM_Q = re.compile(r"over the paths from (\w+) to (\w+)\?")
_TARGET = re.compile(r"(?:Compute the result|Deduce the value) of (\w+)\.")


def _last(prompt: str) -> str:
    """The problem to solve (a few-shot prompt shows worked examples first)."""
    return prompt.rsplit("Now the problem to solve:", 1)[-1]


def _premises(premise: str) -> tuple[str, list[str]]:
    """``"NOT a"`` → ("not", [a]); ``"a and b"`` → ("and", [a, b])."""
    words = premise.split()
    if words[0].upper() == "NOT":
        return "not", [words[1]]
    op = words[1].lower()
    return op, [w for w in words if w.lower() != op]


def _implications(text: str) -> dict[str, tuple[str, list[str]]]:
    return {m.group(3): _premises(m.group(1)) for m in _IMPLY.finditer(text)}


# -- abductive logic --------------------------------------------------------------------------
def _one_step(item: Item) -> str | None:
    text = _last(item.prompt)
    q = _ABDUCE_Q.search(text)
    if q is None:
        return None
    given, leaf = q.group(2), q.group(3)
    if given == "True":
        return "N/A"
    parent = next((op for op, kids in _implications(text).values() if leaf in kids), None)
    return {"not": "True", "and": "N/A", "or": "False"}.get(parent or "")


def _given_only(item: Item) -> str | None:
    q = _ABDUCE_Q.search(_last(item.prompt))
    return None if q is None else ("N/A" if q.group(2) == "True" else "False")


ABDUCTIVE = (
    Shortcut(
        "one step deep",
        "root given True: N/A; else by the leaf's own rule only: under NOT True, under AND "
        "N/A, under OR False (the rest of the path ignored)",
        _one_step,
    ),
    Shortcut("given value", "root given True: N/A, else False", _given_only),
)


# -- deductive and boolean logic --------------------------------------------------------------
def _leaf_majority(true: str, false: str) -> Callable[[Item], str | None]:
    def guess(item: Item) -> str | None:
        values = [v for _, v in _LEAF.findall(_last(item.prompt))]
        if not values:
            return None
        return true if values.count("True") > values.count("False") else false

    return guess


def _deductive_root_op(item: Item) -> str | None:
    text = _last(item.prompt)
    target = _TARGET.search(text)
    rules = _implications(text)
    if target is None or target.group(1) not in rules:
        return None
    return "True" if rules[target.group(1)][0] == "or" else "N/A"


def _boolean_root_op(item: Item) -> str | None:
    text = _last(item.prompt)
    target = _TARGET.search(text)
    ops = {m.group(1): _premises(m.group(2))[0] for m in _BOOL.finditer(text)}
    if target is None or target.group(1) not in ops:
        return None
    return {"and": "False", "or": "True"}.get(ops[target.group(1)], "False")


DEDUCTIVE = (
    Shortcut(
        "leaf majority",
        "True if more leaves are stated True than False, else N/A",
        _leaf_majority("True", "N/A"),
    ),
    Shortcut(
        "root operation", "True if the asked node's rule is an OR, else N/A", _deductive_root_op
    ),
)
BOOLEAN = (
    Shortcut(
        "leaf majority",
        "True if more leaves are True than False, else False",
        _leaf_majority("True", "False"),
    ),
    Shortcut("root operation", "AND: False, OR: True, NOT: False", _boolean_root_op),
)


# -- graphs -----------------------------------------------------------------------------------
def _graph(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """Nodes in description order, and their children."""
    order, edges = [], {}
    for m in _EDGES.finditer(text):
        order.append(m.group(1))
        kids = m.group(2).strip()
        edges[m.group(1)] = [] if kids in ("", "None") else [k.strip() for k in kids.split(",")]
    return order, edges


def _reach(
    rule: Callable[[list[str], dict[str, list[str]], str, str], bool],
) -> Callable[[Item], str | None]:
    def guess(item: Item) -> str | None:
        text = _last(item.prompt)
        q = _REACH_Q.search(text)
        order, edges = _graph(text)
        if q is None or q.group(1) not in edges or q.group(2) not in edges:
            return None
        return str(rule(order, edges, q.group(2), q.group(1)))

    return guess


def _in_degree(edges: dict[str, list[str]], node: str) -> int:
    return sum(node in kids for kids in edges.values())


REACHABILITY = (
    Shortcut(
        "description order",
        "True iff the target is described before the source",
        _reach(lambda order, _e, s, t: order.index(t) < order.index(s)),
    ),
    Shortcut(
        "direct edge",
        "True iff the source points to the target itself",
        _reach(lambda _o, edges, s, t: t in edges[s]),
    ),
    Shortcut(
        "degrees",
        "False if the source points nowhere or nothing points to the target",
        _reach(lambda _o, edges, s, t: bool(edges[s]) and _in_degree(edges, t) > 0),
    ),
    Shortcut(
        "order and degrees",
        "description order, but False for a dead-end source or an "
        "unreachable-by-anything target; True on a direct edge",
        _reach(
            lambda order, edges, s, t: (
                t in edges[s]
                or (bool(edges[s]) and _in_degree(edges, t) > 0 and order.index(t) < order.index(s))
            )
        ),
    ),
)


def _source_plus_target(item: Item) -> str | None:
    text = _last(item.prompt)
    q = _SUM_Q.search(text)
    values = {m.group(1): int(m.group(2)) for m in _VALUE.finditer(text)}
    if q is None or q.group(1) not in values or q.group(2) not in values:
        return None
    return str(values[q.group(1)] + values[q.group(2)])


MAX_SUM_PATH: Sequence[Shortcut] = (
    Shortcut(
        "endpoints only",
        "the source's value plus the target's (a direct edge)",
        _source_plus_target,
    ),
)
