"""DyVal general DAGs (G-DAG): ``reachability`` and ``max_sum_path``.

``n`` nodes; each draws between ``min_links`` and ``max_links`` children among the nodes after
it in a hidden random order (so the graph is acyclic by construction; the last nodes have
fewer candidates, as in the reference). Names are assigned apart from that order, so
alphabetical order says nothing about reachability.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ...answers import parse_number
from ...core import Item, Score
from ...errors import InvalidArgument
from ...rng import Chooser
from ..base import Generated, Knob, Shortcut
from ..draw import draw_of
from . import shortcuts, solver
from .canon import graph_form
from .common import GDAG_PRESETS, DyvalTask, gdag_knobs, label_score, read_value
from .tdag import mix_lines, node_names, order_lines

__all__ = ["Graph", "MaxSumPathTask", "ReachabilityTask", "build_graph"]


@dataclass
class Graph:
    names: list[str]  # children before parents (a topological order, sinks first)
    edges: dict[str, list[str]]
    values: dict[str, int]

    def descendants(self, node: str) -> set[str]:
        seen: set[str] = set()
        stack = list(self.edges[node])
        while stack:
            n = stack.pop()
            if n not in seen:
                seen.add(n)
                stack.extend(self.edges[n])
        return seen


def build_graph(
    chooser: Chooser,
    nodes: int,
    min_links: int,
    max_links: int,
    names: Iterator[str],
    values: tuple[int, int] | None = None,
) -> Graph:
    created = [next(names) for _ in range(nodes)]
    hidden = list(created)
    chooser.shuffle(hidden)  # parents before children
    edges: dict[str, list[str]] = {}
    for pos, name in enumerate(hidden):
        later = hidden[pos + 1 :]
        k = min(chooser.randint(min_links, max_links), len(later))
        edges[name] = chooser.sample(later, k)
    vals = {n: chooser.randint(*values) for n in created} if values else {}
    return Graph(list(reversed(hidden)), {n: edges[n] for n in created}, vals)


def describe_edges(graph: Graph) -> list[str]:
    return [f"{n} points to: ({', '.join(graph.edges[n]) or 'None'})." for n in graph.names]


def describe_values(graph: Graph) -> list[str]:
    return [f"The value of {n} is {graph.values[n]}." for n in graph.names]


class _GraphTask(DyvalTask):
    levels = tuple(GDAG_PRESETS)
    has_values: ClassVar[bool] = False

    def preset(self, level: str) -> dict[str, Any]:
        nodes, max_links = GDAG_PRESETS[level]
        preset = {"nodes": nodes, "min_links": 1, "max_links": max_links, **self.common_preset()}
        if self.has_values:
            preset.update(min_value=1, max_value=10)
        return preset

    def check_combination(self, params: Mapping[str, Any]) -> None:
        if params["max_links"] > params["nodes"] - 1:
            raise InvalidArgument(
                f"knob 'max_links': at most nodes - 1 = {params['nodes'] - 1}, "
                f"got {params['max_links']}"
            )
        if params["min_links"] > params["max_links"]:
            raise InvalidArgument("knob 'min_links': must be <= max_links")
        if self.has_values and params["min_value"] > params["max_value"]:
            raise InvalidArgument("knob 'min_value': must be <= max_value")

    def graph(
        self, chooser: Chooser, params: Mapping[str, Any], names: Iterator[str], nodes: int
    ) -> Graph:
        values = (params["min_value"], params["max_value"]) if self.has_values else None
        links = min(params["max_links"], nodes - 1)
        return build_graph(chooser, nodes, min(params["min_links"], links), links, names, values)

    QUESTION: ClassVar[str]

    def form(self, problem: Mapping[str, Any]) -> str:
        return graph_form(problem)

    def finish(
        self,
        chooser: Chooser,
        params: Mapping[str, Any],
        main: Graph,
        names: Iterator[str],
        source: str,
        target: str,
        answer: str,
    ) -> Generated:
        """Distractor graphs (3 nodes each, as the reference), the description in the asked
        order, the question; call once the problem itself is drawn."""
        extra = [self.graph(chooser, params, names, 3) for _ in range(params["distractors"])]
        units = describe_edges(main) + (describe_values(main) if self.has_values else [])
        others = [
            describe_edges(g) + (describe_values(g) if self.has_values else []) for g in extra
        ]
        lines = order_lines(mix_lines(units, others, chooser), params["order"], chooser)
        body = self.text(lines, self.QUESTION.format(source=source, target=target))
        return Generated(self.problem(main, extra, source, target), answer, body)

    def problem(self, main: Graph, extra: list[Graph], source: str, target: str) -> dict[str, Any]:
        problem: dict[str, Any] = {"edges": dict(main.edges)}
        if self.has_values:
            problem["values"] = dict(main.values)
        if extra:
            problem["distractor_edges"] = {n: c for g in extra for n, c in g.edges.items()}
            if self.has_values:
                problem["distractor_values"] = {n: v for g in extra for n, v in g.values.items()}
        problem.update(source=source, target=target)
        return problem


class ReachabilityTask(_GraphTask):
    id = "dyval.reachability"
    family = "a graph reachability"
    labels = ("True", "False")
    description = "Can one node of a random DAG be reached from another? (True/False)"
    knobs: ClassVar[dict[str, Knob]] = {
        **gdag_knobs(),
        "balanced": Knob("balanced", bool, "alternate True/False answers by index (rejection)"),
    }
    QUESTION = (
        "Can {target} be reached starting from {source}? Respond with either '<<<True>>>' if "
        "reachable, or '<<<False>>>' otherwise."
    )

    def preset(self, level: str) -> dict[str, Any]:
        return {**super().preset(level), "balanced": True}

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        if params["balanced"]:
            return self._balanced(chooser, params, index)
        names = node_names()
        g = self.graph(chooser, params, names, params["nodes"])
        reach = {n: g.descendants(n) for n in g.names}
        # The reference: any ordered pair.
        pairs = [(s, t) for s in sorted(g.names) for t in sorted(g.names) if s != t]
        source, target = chooser.choice(pairs)
        return self.finish(chooser, params, g, names, source, target, str(target in reach[source]))

    def _balanced(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        """A graph and a pair whose surface says nothing about the answer.

        The graph is drawn as the reference draws it, and a pair among those that could be
        either answer: the target after the source in the hidden order (before it in the
        text), the source pointing somewhere, something pointing to the target. Then edges
        are swapped, two at a time, keeping every node's place and its numbers of children
        and parents (``a->b, c->d`` becomes ``a->d, c->b``), until the walk has met the pair
        reachable by a longer path and unreachable (one more swap turns the reachable graph
        into a direct edge); the item is the graph of the wanted kind. Whether all three are
        met does not depend on which is wanted, so
        the places of the two nodes, every node's degrees and the prompt's length are
        distributed alike for True and False: what tells them apart is the paths. True items
        are a direct edge with probability ``DIRECT_SHARE``."""
        want = self.wanted(index) == "True"
        kind = ("direct" if chooser.random() < DIRECT_SHARE else "path") if want else "none"
        met: set[str] = set()  # the kinds any walk has met, to give up early on bad knobs
        draw = draw_of(chooser)
        found = None
        for attempt in range(25 * GIVE_UP):
            if attempt == GIVE_UP and not {"path", "none"} <= met:
                break  # knobs whose graphs never (or always) join a pair: no use drawing on
            names = node_names()
            g = self.graph(chooser, params, names, params["nodes"])
            pairs = _candidate_pairs(g)
            if not pairs:
                continue
            source, target = chooser.choice(pairs)

            def fits(
                edges: dict[str, list[str]], g: Graph = g, pair: tuple[str, str] = (source, target)
            ) -> bool:
                return draw.fits(self.problem(Graph(g.names, edges, g.values), [], *pair))

            found = _walk(g, source, target, chooser, fits, met)
            if found is not None:
                g = Graph(g.names, found[kind], g.values)
                break
        if found is None:
            missing = (
                "is ever unreachable" if "none" not in met
                else "is ever reachable by a path" if "path" not in met
                else "can be both reachable and not"
            )  # fmt: skip
            raise InvalidArgument(
                f"knob 'balanced': no pair {missing} in the graphs of these knobs (nodes "
                f"{params['nodes']}, links {params['min_links']}-{params['max_links']}); "
                "change the links or balanced: false"
            )
        return self.finish(chooser, params, g, names, source, target, str(want))

    def score(self, item: Item, response: str) -> Score:
        return label_score(response, item.answer, "either '<<<True>>>' if reachable")

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.REACHABILITY

    def solve_text(self, prompt: str) -> str:
        return str(solver.solve_reachability(prompt))

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        edges, source, target = problem["edges"], problem["source"], problem["target"]
        lines = [f"Start the search at {source}."]
        seen, queue = {source}, [source]
        while queue:
            node = queue.pop(0)
            new = [c for c in edges[node] if c not in seen]
            kids = ", ".join(edges[node]) or "None"
            lines.append(f"{node} points to: ({kids}); new nodes: {', '.join(new) or 'none'}.")
            if target in new:
                lines.append(f"{target} is reached.")
                break
            seen.update(new)
            queue.extend(new)
        else:
            lines.append(
                f"Every node reachable from {source} is visited; {target} is not among them."
            )
        lines.append(f"Thus, the answer is <<<{answer}>>>")
        return "\n".join(lines)


class MaxSumPathTask(_GraphTask):
    id = "dyval.max_sum_path"
    family = "a maximum sum path"
    description = "Largest sum of node values over the paths between two nodes of a random DAG."
    has_values = True
    knobs: ClassVar[dict[str, Knob]] = {
        **gdag_knobs(),
        "min_value": Knob("min_value", int, "smallest node value", minimum=-1000, maximum=1000),
        "max_value": Knob("max_value", int, "largest node value", minimum=-1000, maximum=1000),
        "min_paths": Knob(
            "min_paths",
            int,
            "fewest paths joining the asked pair (a lone edge is never asked)",
            minimum=1,
            maximum=20,
        ),
    }
    QUESTION = (
        "What is the maximum sum of node values over the paths from {source} to {target}? "
        "The sum of a path A->B->C is the value of A plus the value of B plus the value of C. "
        "Please format your response as <<<Answer>>>. For example, if the answer is 1, it "
        "should be presented as <<<1>>>."
    )
    ECHO_MARKER = "it should be presented as <<<1>>>"

    def preset(self, level: str) -> dict[str, Any]:
        # D1's seven nodes join most pairs by one or two paths, and the best of them then
        # tends to be the two ends and the largest value between: "the asked values plus
        # the largest other" answered 0.14-0.21 of D1 (bound about 0.17; issue 41). Asking
        # pairs that three paths join: 0.08 (and the two largest others 0.12). D2-D4 are
        # as they were (their pairs have many paths; that rule scores under 0.08 there).
        return {**super().preset(level), **({"min_paths": 3} if level == "D1" else {})}

    def check_combination(self, params: Mapping[str, Any]) -> None:
        super().check_combination(params)
        if params["nodes"] < 3:
            raise InvalidArgument(
                "knob 'nodes': dyval.max_sum_path needs at least 3 (two nodes are joined by "
                f"one edge at most, and a lone edge is never asked), got {params['nodes']}"
            )

    def adapt(self, params: dict[str, Any], given: set[str]) -> None:
        super().adapt(params, given)
        if "min_paths" not in given and given & {"nodes", "min_links", "max_links"}:
            params.pop("min_paths", None)  # D1's rule is for D1's graphs, not a user's

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        fewest = params.get("min_paths", 1)
        for _ in range(1000):
            names = node_names()
            g = self.graph(chooser, params, names, params["nodes"])
            reach = _reach(g)
            # Only pairs joined by at least one path, as the reference; but not by a lone
            # edge: there the answer is the two stated values and no path is summed or
            # compared (issue 25: 'endpoints only' answered 46% of D1 items).
            pairs = [(s, t) for s in sorted(g.names) for t in sorted(_joined(g, reach, s))]
            if fewest > 1:
                pairs = [(s, t) for s, t in pairs if _paths(g, s, t, fewest) >= fewest]
            if pairs:
                source, target = chooser.choice(pairs)
                break
        else:
            raise InvalidArgument(
                "knob 'min_links': no pair is joined by more than a lone edge"
                + (f" (or by {fewest} paths)" if fewest > 1 else "")
                + "; raise min_links"
                + (" or lower min_paths" if fewest > 1 else "")
            )
        best = best_sums(g.names, g.edges, g.values, source)
        return self.finish(chooser, params, g, names, source, target, str(best[target]))

    def score(self, item: Item, response: str) -> Score:
        read = read_value(response, self.ECHO_MARKER, parse_number)
        if isinstance(read, Score):
            return read
        raw, pred = read
        if pred == float(item.answer):
            return Score(True, raw)
        return Score(False, raw, "wrong_value")

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.MAX_SUM_PATH

    def solve_text(self, prompt: str) -> str:
        return str(solver.solve_max_sum_path(prompt))

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        edges, values = problem["edges"], problem["values"]
        source, target = problem["source"], problem["target"]
        order = _topological(edges)
        best: dict[str, int] = {source: values[source]}
        lines = [f"best({source}) = {values[source]} (the start)."]
        for node in order[order.index(source) + 1 :]:
            parents = [p for p in order if node in edges[p] and p in best]
            if not parents:
                continue
            top = max(parents, key=lambda p: best[p])
            best[node] = best[top] + values[node]
            options = ", ".join(f"best({p}) = {best[p]}" for p in parents)
            lines.append(f"best({node}) = max({options}) + {values[node]} = {best[node]}.")
            if node == target:
                break
        lines.append(f"Thus, the answer is <<<{answer}>>>")
        return "\n".join(lines)


def hops(graph: Graph, source: str) -> dict[str, int]:
    """Fewest edges from ``source`` to each node it reaches (breadth first)."""
    out: dict[str, int] = {}
    frontier = [source]
    depth = 0
    while frontier:
        depth += 1
        nxt = []
        for node in frontier:
            for child in graph.edges[node]:
                if child not in out and child != source:
                    out[child] = depth
                    nxt.append(child)
        frontier = nxt
    return out


# The share of True items that are a direct edge. The rest are multi-hop, the distance drawn
# uniformly among those the graph has: uniform pairs of a dense graph are mostly direct edges,
# and an adjacency check would pass for reasoning (issue 25: at one distance in two, 'True iff
# an edge' answered 67-75%).
DIRECT_SHARE = 0.1


def _candidate_pairs(graph: Graph) -> list[tuple[str, str]]:
    """Pairs that could be either answer: the target described before the source (after it
    in the hidden order, as every reachable target is), with a node between them (room for
    a longer path), the source pointing somewhere and something pointing to the target."""
    at = {n: i for i, n in enumerate(graph.names)}  # children first
    pointed = {c for kids in graph.edges.values() for c in kids}
    return [
        (s, t)
        for s in sorted(graph.names)
        if graph.edges[s]
        for t in sorted(graph.names)
        if at[t] < at[s] - 1 and t in pointed
    ]


WALK = 200  # edge swaps tried before another graph is drawn
# Graphs drawn before knobs whose walks never met a pair both joined and not are refused (a
# walk at the presets misses the unreachable kind 70% of the time: 80 in a row is 1e-12),
# and 25 times as many before any knobs are: one walk in 20 succeeds at D1 (320 drawn,
# 1e-7), but at 5 nodes few graphs hold a pair of the wanted split both ways, and 320 failed
# 17 of 40 items where 2,000 fail none.
GIVE_UP = 80
# Swaps proposed per edge before the walk looks at the pair: the reference's graph is only
# where the walk starts, so the first graph of one kind must not be it more often than the
# first of another (a True pair is often reachable at once, a False one only after swaps).
BURN_IN = 2


def _walk(
    graph: Graph,
    source: str,
    target: str,
    chooser: Chooser,
    fits: Callable[[dict[str, list[str]]], bool],
    met: set[str],
) -> dict[str, dict[str, list[str]]] | None:
    """Swap edges (degrees and the hidden order kept) until the pair has been seen reachable
    by a longer path and unreachable, then make the direct edge from the reachable graph by
    one more swap; the graph of each kind ("path", "none", "direct") that ``fits`` the split
    being drawn, or None when the walk does not find all three."""
    order = {n: i for i, n in enumerate(reversed(graph.names))}  # parents before children
    edges = {n: list(kids) for n, kids in graph.edges.items()}
    arcs = [(a, k) for a in sorted(edges) for k in range(len(edges[a]))]
    last = len(arcs) - 1
    seen: dict[str, dict[str, list[str]]] = {}
    burn = BURN_IN * len(arcs)
    moved = True  # whether the last proposal changed the graph (else its kind is known)
    for step in range(burn + WALK):
        if step >= burn and moved:
            kind = _kind(edges, source, target)
            met.add(kind)
            if kind != "direct" and kind not in seen and fits(edges):
                seen[kind] = {n: list(kids) for n, kids in edges.items()}
                if len(seen) == 2:
                    direct = _direct(seen["path"], order, source, target, chooser, fits)
                    return None if direct is None else {**seen, "direct": direct}
        # Two arcs (randint, not sample: this loop is the generator's hot spot).
        (a, i), (c, j) = arcs[chooser.randint(0, last)], arcs[chooser.randint(0, last)]
        b, d = edges[a][i], edges[c][j]
        moved = not (
            a == c
            or b == d
            or order[a] >= order[d]
            or order[c] >= order[b]  # a loop, or
            or d in edges[a]
            or b in edges[c]  # against the hidden order, or a repeated edge
        )
        if moved:
            edges[a][i], edges[c][j] = d, b
    return None


def _direct(
    edges: Mapping[str, list[str]],
    order: Mapping[str, int],
    source: str,
    target: str,
    chooser: Chooser,
    fits: Callable[[dict[str, list[str]]], bool],
) -> dict[str, list[str]] | None:
    """``edges`` with one swap that makes ``source -> target`` an edge (``source -> x`` and
    ``y -> target`` become ``source -> target`` and ``y -> x``), the first in a random order
    of the valid ones that ``fits``; None if none does."""
    options = [
        (i, y, j)
        for i, x in enumerate(edges[source])
        for y in sorted(edges)
        if y != source and order[y] < order[x] and x not in edges[y]
        for j, z in enumerate(edges[y])
        if z == target
    ]
    chooser.shuffle(options)
    for i, y, j in options:
        out = {n: list(kids) for n, kids in edges.items()}
        out[y][j], out[source][i] = out[source][i], target
        if fits(out):
            return out
    return None


def _kind(edges: Mapping[str, list[str]], source: str, target: str) -> str:
    if target in edges[source]:
        return "direct"
    seen: set[str] = set()
    stack = list(edges[source])
    while stack:
        n = stack.pop()
        if n == target:
            return "path"
        if n not in seen:
            seen.add(n)
            stack.extend(edges[n])
    return "none"


def _reach(graph: Graph) -> dict[str, set[str]]:
    """Every node's descendants, children first (``names`` is sinks first)."""
    out: dict[str, set[str]] = {}
    for node in graph.names:
        found = set(graph.edges[node])
        for child in graph.edges[node]:
            found |= out[child]
        out[node] = found
    return out


def _joined(graph: Graph, reach: Mapping[str, set[str]], source: str) -> set[str]:
    """The nodes ``source`` reaches other than by a lone edge (an edge and no other path)."""
    via: set[str] = set()  # reached through a child: by a path of two edges or more
    for child in graph.edges[source]:
        via |= reach[child]
    return reach[source] - (set(graph.edges[source]) - via)


def _paths(graph: Graph, source: str, target: str, enough: int) -> int:
    """How many paths lead from ``source`` to ``target``, counted up to ``enough``."""
    counts: dict[str, int] = {target: 1}
    for node in graph.names:  # sinks first: a node's children are counted before it
        if node != target:
            counts[node] = min(enough, sum(counts.get(c, 0) for c in graph.edges[node]))
    return counts.get(source, 0)


def _topological(edges: Mapping[str, list[str]]) -> list[str]:
    """Parents before children (Kahn's algorithm, ties by name for a stable text)."""
    indegree = {n: 0 for n in edges}
    for kids in edges.values():
        for c in kids:
            indegree[c] += 1
    ready = sorted(n for n, d in indegree.items() if d == 0)
    out: list[str] = []
    while ready:
        n = ready.pop(0)
        out.append(n)
        for c in edges[n]:
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
        ready.sort()
    return out


def best_sums(
    names: list[str], edges: Mapping[str, list[str]], values: Mapping[str, int], source: str
) -> dict[str, int]:
    """Best path sum from ``source`` to every node it reaches; ``names`` sinks first."""
    best = {source: values[source]}
    for node in reversed(names):  # parents before children
        if node in best:
            for c in edges[node]:
                best[c] = max(best.get(c, -(10**18)), best[node] + values[c])
    return best
