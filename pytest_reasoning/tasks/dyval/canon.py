"""Canonical forms of DyVal problems: the problem up to renaming its nodes and reordering the
children of a commutative operation (docs/tasks/splits.md, "The same problem").

Two problems with the same canonical form have the same answer (it is computed from what the
form keeps: operations, leaf values, which node is asked or given), and renaming the nodes or
reordering commutative children never changes the form; tests/tasks/test_dyval.py checks both.

- A **tree** (every T-DAG task at its presets) is written bottom-up, each node as its operation
  over its children's forms, the children of ``+ * and or`` sorted, of ``-`` and ``/`` the
  first kept and the rest sorted (``a - b - c`` is ``a - (b + c)``), of the others in order;
  leaves as their values. This is the tree with its nodes renamed by position: exact.
- A **DAG** (extra links share nodes; G-DAG tasks) by colour refinement (1-dimensional
  Weisfeiler-Leman) over the labelled nodes, each refined by its children's and parents'
  colours along labelled edges until stable; the form lists every node's final colour, label
  and children's colours. It is a function of the graph up to isomorphism, and it determines
  the answer (a node's colour fixes its label and its children's colours, so values, and
  whether and how a marked node is reached, follow colour by colour). When every node ends with
  a colour of its own (nearly always here) the form is the canonical labelling itself; when
  some do not, two non-isomorphic graphs that refinement cannot tell apart share a form — a
  coarser invariant, never a wrong one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from ..memo import Memo
from .tdag import Node, TreeDag

__all__ = [
    "COMMUTATIVE",
    "Shape",
    "graph_form",
    "linear_form",
    "node_form",
    "remembered_form",
    "tree_form",
    "tree_shape",
    "value_label",
]

COMMUTATIVE = frozenset({"+", "*", "and", "or"})
_TAIL_COMMUTES = frozenset({"-", "/"})  # the first child apart, the rest a sum / a product


def _value(node: Mapping[str, Any]) -> str:
    return value_label(node["value"]) if "value" in node else "?"


def value_label(value: Any) -> str:
    """How a leaf's value is written in a form."""
    if value is True or value is False:  # the common cases, without json's call overhead
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is str:
        return _LABELS.get(value) or json.dumps(value)
    return json.dumps(value)


_LABELS = {v: json.dumps(v) for v in ("True", "False", "N/A")}


class _Shared(Exception):
    """A node reached twice from the root: the problem is a DAG, not a tree."""


def tree_form(
    nodes: Sequence[Mapping[str, Any]], root: str, marks: Mapping[str, str] | None = None
) -> str:
    """The canonical form of the T-DAG whose nodes are ``nodes`` (``name``, ``op``,
    ``children``; a leaf's ``value`` where it has one), read from ``root``. ``marks``: a
    label per node that the problem singles out (the asked node, a given one)."""
    by_name = {n["name"]: n for n in nodes}
    marks = marks or {}
    seen: set[str] = set()

    def form(name: str) -> str:
        if name in seen:
            raise _Shared
        seen.add(name)
        node = by_name[name]
        op = node["op"]
        if op is None:
            return _value(node) + marks.get(name, "")
        kids = [form(c) for c in node["children"]]
        if op in COMMUTATIVE:
            kids.sort()
        elif op in _TAIL_COMMUTES:
            kids[1:] = sorted(kids[1:])
        return f"{op}({','.join(kids)}){marks.get(name, '')}"

    try:
        return form(root)  # recursion as deep as the tree: at most 12 levels (the knob)
    except _Shared:
        return "dag:" + _dag_form(by_name, root, marks)


def node_form(
    dag: TreeDag, label: Callable[[Node], str], marks: Mapping[str, str]
) -> str:
    """:func:`tree_form` of a tree read off its nodes (``label``: a leaf's label, as
    :func:`value_label` writes its exported value, ``"?"`` for none), without exporting it:
    a balanced draw asks for the form of each candidate problem (its split, whether it
    repeats one), dozens a draw where a level runs out of problems. A tree only: ValueError
    for a DAG (extra links), whose form is :func:`tree_form`'s of the exported problem."""
    # dag.nodes lists a tree in post-order (build_tree): each node's children's forms are
    # the last ones made. A DAG has more edges than a tree of as many nodes, so it runs
    # out of forms on the way.
    made: list[str] = []
    for node in dag.nodes:
        op = node.op
        if op is None:
            made.append(label(node) + marks.get(node.name, ""))
            continue
        first = len(made) - len(node.children)
        if first < 0:
            raise ValueError("node_form: a DAG, not a tree")
        kids = made[first:]
        del made[first:]
        if op in COMMUTATIVE:
            kids.sort()
        elif op in _TAIL_COMMUTES:
            kids[1:] = sorted(kids[1:])
        made.append(f"{op}({','.join(kids)}){marks.get(node.name, '')}")
    if len(made) != 1:
        raise ValueError("node_form: a DAG, not a tree")
    return made[0]


Shape = tuple[tuple[str, str | None, int], ...]  # tree_shape's


def tree_shape(dag: TreeDag) -> Shape:
    """Each node's name, operation and number of children, children first: a tree's shape
    with its names (its nodes in post-order, as :func:`~.tdag.build_tree` lists them)."""
    return tuple([(n.name, n.op, len(n.children)) for n in dag.nodes])


def remembered_form(key: Hashable, compute: Callable[[], str]) -> str:
    """``compute()``, the form of the problem that ``key`` names (the same key, the same
    problem: a :func:`tree_shape` with the leaves' values and the marks), remembered. A
    balanced draw that runs out of problems checks the same few candidates again and again
    (a deduction D3 item some 3,000 times); a form is pure, so forgetting them all at once
    when too many are kept changes nothing but the time."""
    return _FORMS(key, compute)


_FORMS: Memo[str] = Memo(20_000)  # some 6 MB


def _post_order(by_name: Mapping[str, Mapping[str, Any]], root: str) -> list[str]:
    out: list[str] = []
    stack: list[tuple[str, bool]] = [(root, False)]
    while stack:
        name, done = stack.pop()
        if done:
            out.append(name)
            continue
        stack.append((name, True))
        stack.extend((c, False) for c in reversed(by_name[name]["children"]))
    return out


def _edge_label(op: str | None, position: int) -> str:
    """What a child's place under ``op`` means: nothing for a commutative operation, first
    or rest for ``-`` and ``/``, the position otherwise."""
    if op in COMMUTATIVE:
        return ""
    if op in _TAIL_COMMUTES:
        return "0" if position == 0 else "1"
    return str(position)


def _dag_form(
    by_name: Mapping[str, Mapping[str, Any]], root: str, marks: Mapping[str, str]
) -> str:
    names = _post_order_unique(by_name, root)
    index = {name: i for i, name in enumerate(names)}
    labels = []
    edges: list[list[tuple[str, int]]] = []
    for name in names:
        n = by_name[name]
        op = n["op"]
        labels.append((op if op is not None else _value(n)) + marks.get(name, ""))
        edges.append([(_edge_label(op, k), index[c]) for k, c in enumerate(n["children"])])
    return refine(labels, edges)


def _post_order_unique(by_name: Mapping[str, Mapping[str, Any]], root: str) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for name in _post_order(by_name, root):
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def refine(labels: Sequence[str], edges: Sequence[Sequence[tuple[str, int]]]) -> str:
    """Colour refinement of a directed graph whose node ``i`` has label ``labels[i]`` and
    edges ``edges[i]`` (``(edge label, target)``), and its certificate: every node's final
    colour, label and out-edges by colour, sorted. Colours are numbered by sorting their
    signatures each round, so they depend on the graph alone, never on the input order."""
    n = len(labels)
    kinds = _number([lab for out in edges for lab, _ in out])
    # Edge labels are folded into the neighbour's colour (label rank * _SPAN + colour); where
    # every edge has the same label, neighbours are read by index alone (G-DAGs: C speed).
    plain = not any(kinds)
    out_nodes = [[j for _, j in out] for out in edges]
    in_nodes: list[list[int]] = [[] for _ in range(n)]
    offsets_out: list[list[int]] = []
    offsets_in: list[list[int]] = [[] for _ in range(n)]
    at = 0
    for i, out in enumerate(edges):
        mine = []
        for _, j in out:
            in_nodes[j].append(i)
            mine.append(kinds[at] * _SPAN)
            offsets_in[j].append(kinds[at] * _SPAN)
            at += 1
        offsets_out.append(mine)

    def seen_from(i: int, nodes: list[list[int]], offsets: list[list[int]]) -> tuple[int, ...]:
        if plain:
            return tuple(sorted(map(colour.__getitem__, nodes[i])))
        return tuple(sorted([k + colour[j] for k, j in zip(offsets[i], nodes[i], strict=True)]))

    colour = _number(labels)
    count = len(set(colour))
    while count < n:
        signatures = [
            (colour[i], seen_from(i, out_nodes, offsets_out), seen_from(i, in_nodes, offsets_in))
            for i in range(n)
        ]
        colour = _number(signatures)
        new = len(set(colour))
        if new == count:
            break
        count = new
    rows = sorted([colour[i], labels[i], seen_from(i, out_nodes, offsets_out)] for i in range(n))
    return json.dumps(rows, separators=(",", ":"))


_SPAN = 1 << 20  # more colours than any graph has nodes (MAX_TREE_NODES, 200 G-DAG nodes)


def _number(keys: Sequence[Any]) -> list[int]:
    """Each key's rank among the distinct keys (the same keys, the same numbers)."""
    ranks = {k: r for r, k in enumerate(sorted(set(keys)))}
    return [ranks[k] for k in keys]


def graph_form(problem: Mapping[str, Any]) -> str:
    """A G-DAG problem (``edges``, ``values`` for max_sum_path, ``source``, ``target``; the
    children lists' order is presentation only): its refinement certificate."""
    edges: Mapping[str, Sequence[str]] = problem["edges"]
    values: Mapping[str, Any] = problem.get("values") or {}
    names = sorted(edges)
    index = {name: i for i, name in enumerate(names)}
    marks = {problem["source"]: "s", problem["target"]: "t"}
    labels = [
        marks.get(name, "") + (json.dumps(values[name]) if name in values else "") for name in names
    ]
    out = [[("", index[c]) for c in edges[name]] for name in names]
    return refine(labels, out)


def linear_form(problem: Mapping[str, Any]) -> str:
    """A linear system: each coefficient a number or the form of the tree whose root it
    names; the two equations in sorted order (swapping them changes nothing)."""
    nodes = [n for n in problem["nodes"] if not n.get("distractor")]
    rows = []
    for row in problem["equations"]:
        rows.append(
            [tree_form(nodes, c) if isinstance(c, str) else json.dumps(c) for c in row]
        )
    return json.dumps(sorted(rows), separators=(",", ":"))
