"""Tree-based DAGs (T-DAG): top-down construction, naming, description order, steps.

Shared by the DyVal tasks; the operation semantics (values, validity) come from the task.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import InvalidArgument
from ...rng import Chooser

__all__ = ["UNARY", "Node", "TreeDag", "build_tree", "node_names", "order_nodes"]

UNARY = frozenset({"sqrt", "square", "not"})

# Three-letter words that would read as prose (or as an operator) inside a description.
_SKIP = frozenset({"add", "all", "and", "any", "are", "not", "odd", "sum", "the", "xor"})


def node_names() -> Iterator[str]:
    """``aaa, aab, …, zzz`` then ``aaaa, …``, skipping a few confusing English words."""
    for width in itertools.count(3):
        for letters in itertools.product(string.ascii_lowercase, repeat=width):
            name = "".join(letters)
            if name not in _SKIP:
                yield name


@dataclass
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
    attempts: int = 200,
) -> TreeDag:
    """Build a full tree of ``depth`` levels (depth 1 = a single leaf) top-down.

    An operation whose value is invalid (division by zero, square root of a negative, out of
    range) is redrawn with fresh children, like the reference implementation's local repair,
    so deep trees do not need whole-tree rejection.
    """

    binary_ops = [op for op in ops if op not in UNARY] or list(ops)

    def grow(d: int, parent_unary: bool = False) -> Node:
        if d == 1:
            return Node(op=None, value=leaf(chooser))
        for _ in range(attempts):
            # No unary directly under unary (sqrt(sqrt(x)), sqrt(x²)): such chains collapse
            # the tree to a single leaf and make duplicate problems common at every depth.
            op = chooser.choice(binary_ops if parent_unary else ops)
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
    names = node_names()
    for node in ordered:
        node.name = next(names)
    return TreeDag(ordered)


def order_nodes(nodes: Sequence[Node], order: str, chooser: Chooser) -> list[Node]:
    """Description order: ``topological`` (children first), ``reversed`` or ``random``."""
    out = list(nodes)
    if order == "reversed":
        out.reverse()
    elif order == "random":
        chooser.shuffle(out)
    return out
