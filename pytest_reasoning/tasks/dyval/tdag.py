"""Tree-based DAGs (T-DAG): top-down construction, extra links, naming, description order.

Shared by the DyVal tasks; the operation semantics (values, validity) come from the task.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import string
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...errors import InvalidArgument
from ...rng import Chooser, weighted_choice

__all__ = [
    "MATCH_SHAPES",
    "UNARY",
    "Fits",
    "LeafBalancer",
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
    # A generator draws a tree per attempt, each named afresh: the three-letter names are
    # spelled once per suffix, and only a tree past them spells the longer ones.
    return itertools.chain(_three_letter_names(suffix), _names_from(4, suffix))


@functools.lru_cache(maxsize=16)
def _three_letter_names(suffix: str) -> tuple[str, ...]:
    return tuple(itertools.islice(_names_from(3, suffix), 26**3 - len(_SKIP)))


def _names_from(width: int, suffix: str) -> Iterator[str]:
    for w in itertools.count(width):
        for letters in itertools.product(string.ascii_lowercase, repeat=w):
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
    # A generator draws thousands of trees an item where a level runs out of problems: the
    # options are laid out once per set of operations, not per tree nor per operation, and
    # the nodes are listed as they are made (the same post-order a walk would give).
    binary, binary_only, tables = _options(tuple(ops), None if weights is None else tuple(weights))
    ordered: list[Node] = []

    def pick(unary_parent: bool) -> str:
        if weights is None:
            return chooser.choice(binary_only if unary_parent else binary)[0]
        options, weighed, total = tables[unary_parent]  # the total taken once
        return weighted_choice(chooser, options, weighed, total)

    def grow(d: int, parent_unary: bool = False) -> Node:
        if d == 1:
            node = Node(None, [], leaf(chooser))
            ordered.append(node)
            return node
        start = len(ordered)
        for _ in range(attempts):
            # No unary directly under unary (sqrt(sqrt(x)), sqrt(x²)): such chains collapse
            # the tree to a single leaf and make duplicate problems common at every depth.
            op = pick(parent_unary)
            unary = op in UNARY
            if d == 2:  # the leaves made here, without a call each (most nodes are leaves)
                children = [Node(None, [], leaf(chooser)) for _ in range(1 if unary else width)]
                ordered.extend(children)
            else:
                children = [grow(d - 1, unary) for _ in range(1 if unary else width)]
            value = evaluate(op, [c.value for c in children])
            if value is not None:
                node = Node(op, children, value)
                ordered.append(node)  # post-order: children are listed before parents
                return node
            del ordered[start:]  # redrawn: the children are dropped
        raise InvalidArgument(
            f"knob 'ops': no valid operation found in {attempts} attempts at depth {d}"
        )

    for _ in range(attempts):
        ordered.clear()
        root = grow(depth)
        if root_ok(root.value):
            break
    else:
        raise InvalidArgument("knob 'depth': could not build a valid root; widen the value range")
    names = names or node_names()
    # strict=False: ordered ends first, and no name is drawn past its last node (strict
    # would draw one more to check).
    for node, name in zip(ordered, names, strict=False):
        node.name = name
    return TreeDag(ordered)


_Options = list[tuple[str, float]]
_Table = tuple[list[str], list[float], float]  # names, weights, total


@functools.lru_cache(maxsize=64)
def _options(
    ops: tuple[str, ...], weights: tuple[float, ...] | None
) -> tuple[_Options, _Options, list[_Table]]:
    """build_tree's options: (operation, weight) pairs, those with no unary operation (under
    a unary one), and each apart with its total (weighted_choice's arithmetic). Read only."""
    binary = [(op, w) for op, w in zip(ops, weights or [1.0] * len(ops), strict=True)]
    binary_only = [(op, w) for op, w in binary if op not in UNARY] or binary
    tables = [
        ([op for op, _ in o], [w for _, w in o], float(sum([w for _, w in o])))
        for o in (binary, binary_only)
    ]
    return binary, binary_only, tables


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


# -- drawing the leaves for a wanted answer ------------------------------------------------------
# How many leaf assignments of a subtree give it a value, by a statistic of its leaves (a
# tuple of counts; the empty tuple when nothing is matched).
Counts = dict[tuple[int, ...], int]

MATCH_LEAVES = 16  # larger trees are balanced on the answer alone (the tables grow as n²)
MATCH_SHAPES = 100  # shapes tried for a matched draw before settling for the answer alone
FEW_LEAVES = 4  # at most this many leaves: the other answer's problem is not drawn too
SPLIT_LEAVES = 32  # leaf draws tried for one shape's problem in the wanted split


class LeafBalancer:
    """Draws a tree's leaves (True/False) for a wanted root value, keeping its operations.

    ``evaluate`` gives an operation's value; ``inverts(op, leaf)`` says whether a True child
    (a leaf when ``leaf``) pushes an ``op`` node away from True (NOT over its child in
    boolean logic; in deduction NOT over a leaf, since NOT over a rule is never True).

    The shape is drawn as the reference draws it and the answer apart from it, so nothing
    about the shape (the root's operation, how many NOTs, the prompt's length) tells the
    answer; balancing by whole-tree rejection instead keeps the shapes that tend to give the
    wanted class (an AND root for False), and a rule reading the root's operation learns them.

    With ``match``, two counts of the leaves are drawn apart from the answer as well: how
    many leaves are True, and how many push the root towards True (True under an even number
    of inverting edges, False under an odd one). A shape whose answer those counts decide
    (one operation over leaves: OR is 'any', AND 'all') is refused like a constant one. So
    counting True leaves, or the leaves that hold, answers no better than chance: the answer
    depends on WHICH leaves hold. Given the answer and the counts, every assignment of the
    leaves is equally likely: a tree is counted exactly by dynamic programming (the tables
    depend on the shape only and are kept per shape), then drawn top-down. A DAG (extra
    links share nodes) is redrawn at random on the answer alone, at most ``_REDRAWS`` times.
    """

    def __init__(self, evaluate: Evaluate, inverts: Callable[[str, bool], bool]) -> None:
        self.evaluate = evaluate
        self.inverts = inverts
        self._lock = threading.Lock()
        self._clear()

    def _clear(self) -> None:
        self._ids: dict[tuple[str, tuple[int, ...]], int] = {}
        self._shapes: dict[int, tuple[str, tuple[int, ...]]] = {}
        # (shape, polarity, match) -> value -> [(the children's values, their counts)]
        self._options: dict[Spot, dict[Any, list[tuple[tuple[Any, ...], Counts]]]] = {}
        self._tables: dict[Spot, dict[Any, Counts]] = {}
        self._kids: dict[Spot, list[Spot]] = {}
        self._values: dict[tuple[int, bool], list[Any]] = {}  # a root's values, in order
        # (shape, polarity, match, value, counts) -> the children's (value, counts), drawn
        self._draws: dict[tuple[Spot, Any, Key], _Draw] = {}
        # (shape, match, the wanted values) -> the counts to draw, then a value per counts
        self._roots: dict[tuple[int, bool, tuple[Any, ...]], tuple[_Draw, dict[Key, _Draw]]] = {}

    def balance(
        self, dag: TreeDag, chooser: Chooser, want: Callable[[Any], bool], *, match: bool
    ) -> bool:
        """Redraw ``dag``'s leaves for a root value satisfying ``want``; False (nothing
        changed) when the shape cannot give both a wanted and an unwanted answer (with
        ``match``: both at the same counts), so the caller draws another shape."""
        if not _is_tree(dag):
            return _redraw(dag, chooser, want, self.evaluate)
        return self._balance(dag, chooser, want, match, None, both=False) is not None

    def _balance(
        self,
        dag: TreeDag,
        chooser: Chooser,
        want: Callable[[Any], bool],
        match: bool,
        fits: Fits | None,
        *,
        both: bool,
    ) -> bool | None:
        """:meth:`balance` of a tree: None when the shape cannot; with ``fits``, whether the
        drawn leaves fit, and with ``both`` a draw of the other answer at the same counts."""
        leaves = [n.op for n in dag.nodes].count(None)
        match = match and leaves <= MATCH_LEAVES
        both = both and leaves > FEW_LEAVES
        with self._lock:
            if len(self._ids) > _MAX_SHAPES:  # pure caches: dropping them changes nothing
                self._clear()
            shapes: dict[int, int] = {}
            ids, known = self._ids, self._shapes
            for node in dag.nodes:  # children first; a leaf's shape is 0
                if node.op is None:
                    shapes[id(node)] = 0
                    continue
                shape = (node.op, tuple([shapes[id(c)] for c in node.children]))
                got = ids.get(shape)
                if got is None:
                    got = ids[shape] = len(ids) + 1
                    known[got] = shape
                shapes[id(node)] = got
            root = shapes[id(dag.root)]
            values_here = self._values.get((root, match))
            if values_here is None:
                table = self._table(root, True, match)
                values_here = self._values[(root, match)] = sorted(table, key=repr)
            wanted = tuple(v for v in values_here if want(v))
            keys, values = self._planned(root, match, wanted)
            if not keys.options:
                return None
            key = keys.draw(chooser)
            spot = (root, True, match)
            self._place(dag.root, spot, values[key].draw(chooser), key, chooser)
            unwanted = tuple(v for v in values_here if not want(v))
            others = self._planned(root, match, unwanted)[1][key] if both else None
        if fits is None or not fits(paired=others is not None):
            return fits is None
        if others is None:
            return True
        # The other answer at the same counts must fit too: drawn, checked and dropped (only
        # once the wanted one fits, so a batch that is running out pays little for it).
        drawn = [n.value for n in dag.nodes]
        with self._lock:
            self._place(dag.root, spot, others.draw(chooser), key, chooser)
        fine = fits(kept=False, paired=True)
        for node, value in zip(dag.nodes, drawn, strict=True):
            node.value = value
        return fine

    def _planned(
        self, root: int, match: bool, wanted: tuple[Any, ...]
    ) -> tuple[_Draw, dict[Key, _Draw]]:
        plan = self._roots.get((root, match, wanted))
        if plan is None:
            table = self._table(root, True, match)
            plan = self._roots[(root, match, wanted)] = self._plan(table, wanted)
        return plan

    def balance_in(
        self,
        dag: TreeDag,
        chooser: Chooser,
        want: Callable[[Any], bool],
        *,
        match: bool,
        fits: Fits,
    ) -> bool:
        """:meth:`balance`, the leaves redrawn (the shape kept) until ``fits()`` says the
        problem is in the split being drawn (``Draw.fits``); False, for another
        shape, when ``SPLIT_LEAVES`` draws never fit (this shape has no problem of the
        wanted answer in the split).

        Counts are kept only where the OTHER answer has a problem that fits as well (one
        drawn at the same counts, not kept): a split holds different shares of one shape's
        problems of each answer at each count, and a ``unique`` batch uses up the rarer
        answer's first, so keeping the counts where the wanted answer alone fits let the
        counts tell the answer (issue 41: at deductive D3 "N/A iff at least 4 leaves are
        True" answered 0.65, gradient boosting on the counts 0.705). With both required,
        counts and shape are kept with the same probability whichever answer is wanted.
        Only with ``match`` (the counts drawn apart from the answer; depth >= 3) and more
        than ``FEW_LEAVES`` leaves: a level of smaller trees (D2's four leaves) is a handful
        of problems that a batch uses up whatever the counts, drawn as it was."""
        if not _is_tree(dag):
            for _ in range(SPLIT_LEAVES):
                if not _redraw(dag, chooser, want, self.evaluate):
                    return False
                if fits():
                    return True
            return False
        for _ in range(SPLIT_LEAVES):
            got = self._balance(dag, chooser, want, match, fits, both=match)
            if got is None:
                return False
            if got:
                return True
        return False

    @staticmethod
    def _plan(
        table: Mapping[Any, Counts], wanted: tuple[Any, ...]
    ) -> tuple[_Draw, dict[Key, _Draw]]:
        """The counts both answers share, weighted by all their assignments (as uniform
        leaves give them), so they are drawn the same way whichever answer is wanted; and
        per counts, the wanted values weighted by their assignments."""
        mine: Counts = {}
        others: Counts = {}
        for value in sorted(table, key=repr):
            side = mine if value in wanted else others
            for key, k in table[value].items():
                side[key] = side.get(key, 0) + k
        shared = sorted(key for key in mine if key in others)
        values = {
            key: _Draw([(v, table[v][key]) for v in wanted if key in table[v]]) for key in shared
        }
        return _Draw([(key, mine[key] + others[key]) for key in shared]), values

    def _spots(self, spot: Spot) -> list[Spot]:
        """The children's (shape, polarity, match)."""
        got = self._kids.get(spot)
        if got is None:
            shape, up, match = spot
            op, kids = self._shapes[shape]
            got = self._kids[spot] = [(k, up is not self.inverts(op, k == 0), match) for k in kids]
        return got

    def _table(self, shape: int, up: bool, match: bool) -> dict[Any, Counts]:
        """value -> counts -> assignments of a subtree of this shape, at this polarity."""
        spot = (shape, up, match)
        table = self._tables.get(spot)
        if table is not None:
            return table
        if shape == 0:
            table = {
                True: {(1, int(up)) if match else (): 1},
                False: {(0, int(not up)) if match else (): 1},
            }
            self._tables[spot] = table
            return table
        op = self._shapes[shape][0]
        tables = [self._table(*kid) for kid in self._spots(spot)]
        options: dict[Any, list[tuple[tuple[Any, ...], Counts]]] = {}
        for combo in itertools.product(*[sorted(t, key=repr) for t in tables]):
            value = self.evaluate(op, list(combo))
            if value is None:
                continue
            counts = tables[0][combo[0]]
            for t, v in zip(tables[1:], combo[1:], strict=True):
                counts = _convolve(counts, t[v])
            options.setdefault(value, []).append((combo, counts))
        table = {}
        for value, found in options.items():
            total: Counts = {}
            for _, counts in found:
                for k, n in counts.items():
                    total[k] = total.get(k, 0) + n
            table[value] = total
        self._options[spot] = options
        self._tables[spot] = table
        return table

    def _place(self, node: Node, spot: Spot, value: Any, key: Key, chooser: Chooser) -> None:
        """Give ``node`` the value ``value`` and its leaves the counts ``key``, every such
        assignment of its subtree equally likely (pre-order, one draw per operation)."""
        node.value = value
        if node.op is None:  # a tree of one leaf
            return
        draws = self._draws
        stack = [(node, spot, value, key)]
        while stack:
            node, spot, value, key = stack.pop()
            draw = draws.get((spot, value, key))
            if draw is None:
                draw = draws[(spot, value, key)] = self._joint(spot, value, key)
            todo = []
            for child, kid, (v, k) in zip(node.children, self._spots(spot), draw.draw(chooser),
                                          strict=True):  # fmt: skip
                child.value = v
                if child.op is not None:
                    todo.append((child, kid, v, k))
            stack.extend(reversed(todo))  # the first child's subtree is drawn first

    def _joint(self, spot: Spot, value: Any, key: Key) -> _Draw:
        """Every way to give the children values and counts that make ``value`` and
        ``key`` here, weighted by the assignments of their leaves."""
        kids = self._spots(spot)
        out: list[tuple[tuple[tuple[Any, Key], ...], int]] = []
        for combo, counts in self._options[spot][value]:
            if key not in counts:
                continue
            parts = [self._tables[kid][v] for kid, v in zip(kids, combo, strict=True)]
            for split in itertools.product(*[sorted(p.items()) for p in parts]):
                total = tuple(sum(k[i] for k, _ in split) for i in range(len(key)))
                if total == key:
                    weight = 1
                    for _, n in split:
                        weight *= n
                    out.append((tuple((v, k) for v, (k, _) in zip(combo, split, strict=True)),
                                weight))  # fmt: skip
        return _Draw(out)


class Fits(Protocol):
    """Whether the leaves as drawn make a problem the draw may give (``Draw.fits``);
    ``paired`` when a problem of the other answer is drawn with it, ``kept=False`` for that
    one, drawn only to be checked."""

    def __call__(self, *, kept: bool = True, paired: bool = False) -> bool: ...


Spot = tuple[int, bool, bool]  # a subtree's shape, its polarity, whether counts are matched
Key = tuple[int, ...]


class _Draw:
    """Options with exact integer weights (they outgrow a float's precision), drawn by one
    integer and a bisection."""

    def __init__(self, options: Sequence[tuple[Any, int]]) -> None:
        self.options = [o for o, _ in options]
        self.edges = list(itertools.accumulate(k for _, k in options))

    def draw(self, chooser: Chooser) -> Any:
        if len(self.options) == 1:  # forced: no randomness spent
            return self.options[0]
        return self.options[bisect.bisect_right(self.edges, chooser.randint(0, self.edges[-1] - 1))]


_MAX_SHAPES = 50_000


def _is_tree(dag: TreeDag) -> bool:
    """No node is the child of two parents (extra links make a DAG)."""
    ids = [id(c) for n in dag.nodes for c in n.children]
    return len(ids) == len(set(ids))


def _convolve(a: Counts, b: Counts) -> Counts:
    out: Counts = {}
    for ka, x in a.items():
        for kb, y in b.items():
            key = tuple(i + j for i, j in zip(ka, kb, strict=True))
            out[key] = out.get(key, 0) + x * y
    return out


_REDRAWS = 200


def _redraw(
    dag: TreeDag, chooser: Chooser, want: Callable[[Any], bool], evaluate: Evaluate
) -> bool:
    """A DAG: redraw the leaves at random until the wanted answer comes, having seen the
    other answer too (the original leaves count); False, leaves restored, if not."""
    leaves = [n for n in dag.nodes if n.op is None]
    saved = [n.value for n in dag.nodes]
    found: list[Any] | None = None
    seen_other = not want(dag.root.value)
    for _ in range(_REDRAWS):
        for leaf in leaves:
            leaf.value = chooser.randint(0, 1) == 1
        if not _recompute(dag.nodes, 0, evaluate):
            continue
        if want(dag.root.value):
            found = found or [n.value for n in dag.nodes]
        else:
            seen_other = True
        if found is not None and seen_other:
            for n, v in zip(dag.nodes, found, strict=True):
                n.value = v
            return True
    for n, v in zip(dag.nodes, saved, strict=True):
        n.value = v
    return False
