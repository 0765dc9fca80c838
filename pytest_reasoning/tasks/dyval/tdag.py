"""Tree-based DAGs (T-DAG): top-down construction, extra links, naming, description order.

Shared by the DyVal tasks; the operation semantics (values, validity) come from the task.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import InvalidArgument
from ...rng import Chooser, weighted_choice

__all__ = [
    "UNARY",
    "Node",
    "TreeDag",
    "add_extra_links",
    "build_tree",
    "mix_lines",
    "node_names",
    "order_lines",
]

UNARY = frozenset({"sqrt", "square", "not"})

# Three-letter words that would read as prose (or as an operator) inside a description.
_SKIP = frozenset({"add", "all", "and", "any", "are", "not", "odd", "sum", "the", "xor"})


def node_names(suffix: str = "") -> Iterator[str]:
    """``aaa, aab, …, zzz`` then ``aaaa, …`` (each + ``suffix``), skipping a few English words."""
    for width in itertools.count(3):
        for letters in itertools.product(string.ascii_lowercase, repeat=width):
            name = "".join(letters)
            if name not in _SKIP:
                yield name + suffix


@dataclass(eq=False)  # identity semantics: a node may be the child of several parents
class Node:
    op: str | None  # None for a leaf
    children: list[Node] = field(default_factory=list)
    value: Any = None
    name: str = ""


@dataclass
class TreeDag:
    """Nodes in topological order (children first); ``root`` is the last."""

    nodes: list[Node]

    @property
    def root(self) -> Node:
        return self.nodes[-1]


Evaluate = Callable[[str, Sequence[Any]], Any]  # returns None when the operation is invalid


def build_tree(
    chooser: Chooser,
    *,
    depth: int,
    width: int,
    ops: Sequence[str],
    leaf: Callable[[Chooser], Any],
    evaluate: Evaluate,
    root_ok: Callable[[Any], bool] = lambda _v: True,
    weights: Sequence[float] | None = None,
    names: Iterator[str] | None = None,
    attempts: int = 200,
) -> TreeDag:
    """Build a full tree of ``depth`` levels (depth 1 = a single leaf) top-down.

    An operation whose value is invalid (division by zero, square root of a negative, out of
    range) is redrawn with fresh children, like the reference implementation's local repair,
    so deep trees do not need whole-tree rejection. ``weights`` (parallel to ``ops``) skew the
    operation draw, as the reference does for the implication tasks.
    """
    binary = [(op, w) for op, w in zip(ops, weights or [1.0] * len(ops), strict=True)]
    binary_only = [(op, w) for op, w in binary if op not in UNARY] or binary

    def pick(options: list[tuple[str, float]]) -> str:
        if weights is None:
            return chooser.choice(options)[0]
        return weighted_choice(chooser, [o for o, _ in options], [w for _, w in options])

    def grow(d: int, parent_unary: bool = False) -> Node:
        if d == 1:
            return Node(op=None, value=leaf(chooser))
        for _ in range(attempts):
            # No unary directly under unary (sqrt(sqrt(x)), sqrt(x²)): such chains collapse
            # the tree to a single leaf and make duplicate problems common at every depth.
            op = pick(binary_only if parent_unary else binary)
            k = 1 if op in UNARY else width
            children = [grow(d - 1, op in UNARY) for _ in range(k)]
            value = evaluate(op, [c.value for c in children])
            if value is not None:
                return Node(op=op, children=children, value=value)
        raise InvalidArgument(
            f"knob 'ops': no valid operation found in {attempts} attempts at depth {d}"
        )

    for _ in range(attempts):
        root = grow(depth)
        if root_ok(root.value):
            break
    else:
        raise InvalidArgument("knob 'depth': could not build a valid root; widen the value range")
    ordered: list[Node] = []

    def visit(node: Node) -> None:  # post-order: children are named before parents
        for child in node.children:
            visit(child)
        ordered.append(node)

    visit(root)
    names = names or node_names()
    for node in ordered:
        node.name = next(names)
    return TreeDag(ordered)


def add_extra_links(
    dag: TreeDag,
    chooser: Chooser,
    count: int,
    evaluate: Evaluate,
    root_ok: Callable[[Any], bool] = lambda _v: True,
) -> None:
    """Give every non-unary operation up to ``count`` extra children among earlier nodes.

    An earlier node in the post-order list is never an ancestor, so the graph stays acyclic and
    the list stays topological. A link whose new values break validity (division by zero, out of
    range, root rule) is undone and the next candidate tried; unary parents get none.
    """
    if count <= 0:
        return
    nodes = dag.nodes
    for pos, node in enumerate(nodes):
        if node.op is None or node.op in UNARY:
            continue
        for _ in range(count):
            candidates = [n for n in nodes[:pos] if all(n is not c for c in node.children)]
            chooser.shuffle(candidates)
            for candidate in candidates:
                saved = [n.value for n in nodes[pos:]]
                node.children.append(candidate)
                if _recompute(nodes, pos, evaluate) and root_ok(dag.root.value):
                    break
                node.children.pop()
                for n, v in zip(nodes[pos:], saved, strict=True):
                    n.value = v


def _recompute(nodes: list[Node], start: int, evaluate: Evaluate) -> bool:
    for n in nodes[start:]:
        if n.op is None:
            continue
        value = evaluate(n.op, [c.value for c in n.children])
        if value is None:
            return False
        n.value = value
    return True


def mix_lines(main: list[str], extra: Sequence[Sequence[str]], chooser: Chooser) -> list[str]:
    """Insert each distractor line at a random position, as the reference implementation does."""
    out = list(main)
    for group in extra:
        for line in group:
            out.insert(chooser.randint(0, len(out)), line)
    return out


def order_lines(lines: Sequence[str], order: str, chooser: Chooser) -> list[str]:
    """Description order: ``topological`` (children first), ``reversed`` or ``random``.

    Call it last: the problem must not depend on the rendering order.
    """
    out = list(lines)
    if order == "reversed":
        out.reverse()
    elif order == "random":
        chooser.shuffle(out)
    return out
