"""Independent DyVal solvers that read the PROMPT TEXT, not the generator's structures.

They re-parse the natural-language description with their own regular expressions, order the
graph with networkx, and evaluate in plain floats, so a gold answer is confirmed by code that
shares nothing with the generator but the wording it reads.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = [
    "SolverError",
    "arithmetic_depth",
    "solve_abductive",
    "solve_arithmetic",
    "solve_boolean",
    "solve_deductive",
    "solve_linear",
    "solve_max_sum_path",
    "solve_reachability",
]


class SolverError(ValueError):
    """The prompt could not be parsed: a generator/solver disagreement worth a bug report."""


_LAST_BLOCK = re.compile(r"Here is the description of an? [a-z ]+ problem:\n\n(.*?)\n\n", re.S)
_TARGET = re.compile(r"Compute the result of (\w+)\.")

_ARITH = [
    (re.compile(r"^The value of (\w+) is (-?[\d.]+)\.$"), "leaf"),
    (
        re.compile(
            r"^(\w+) gets its value by taking the square root of the value that (\w+) has\.$"
        ),
        "sqrt",
    ),
    (re.compile(r"^(\w+) gets its value by squaring the value that (\w+) has\.$"), "sq"),
    (re.compile(r"^(\w+) gets its value by adding together the value of (.+)\.$"), "add"),
    (re.compile(r"^(\w+) gets its value by multiplying together the value of (.+)\.$"), "mul"),
    (
        re.compile(
            r"^(\w+) gets its value by subtracting the value of (\w+) from the value of (\w+)\.$"
        ),
        "sub2",
    ),
    (
        re.compile(
            r"^(\w+) gets its value by subtracting the sum of the values of (.+) from the value of (\w+)\.$"
        ),
        "subn",
    ),
    (
        re.compile(
            r"^(\w+) gets its value by dividing the value of (\w+) by the value of (\w+)\.$"
        ),
        "div2",
    ),
    (
        re.compile(
            r"^(\w+) gets its value by dividing the value of (\w+) by the product of the values of (.+)\.$"
        ),
        "divn",
    ),
]


def _block_and_target(prompt: str) -> tuple[list[str], str]:
    blocks = _LAST_BLOCK.findall(prompt)
    targets = _TARGET.findall(prompt)
    if not blocks or not targets:
        raise SolverError("no problem description found in the prompt")
    return [ln.strip() for ln in blocks[-1].splitlines() if ln.strip()], targets[-1]


def _evaluate(graph: dict[str, tuple[str, list[str], Any]], target: str, fn: Any) -> Any:
    import networkx as nx

    g = nx.DiGraph()
    for name, (_kind, deps, _arg) in graph.items():
        g.add_node(name)
        for d in deps:
            if d not in graph:
                raise SolverError(f"{name} depends on undescribed {d}")
            g.add_edge(d, name)
    values: dict[str, Any] = {}
    for name in nx.topological_sort(g):
        kind, deps, arg = graph[name]
        values[name] = fn(kind, [values[d] for d in deps], arg)
    if target not in values:
        raise SolverError(f"target {target} is not described")
    return values[target]


def solve_arithmetic(prompt: str) -> float:
    lines, target = _block_and_target(prompt)
    return float(_evaluate(_arith_graph(lines), target, _arith_fn))


def arithmetic_depth(prompt: str) -> int:
    """Node levels of the arithmetic DAG a prompt describes (1 = a single leaf)."""
    import networkx as nx

    lines, target = _block_and_target(prompt)
    graph = _arith_graph(lines)
    g = nx.DiGraph()
    g.add_node(target)
    g.add_edges_from((name, dep) for name, (_k, deps, _a) in graph.items() for dep in deps)
    return int(nx.dag_longest_path_length(g.subgraph(nx.descendants(g, target) | {target}))) + 1


def _arith_graph(lines: list[str]) -> dict[str, tuple[str, list[str], Any]]:
    graph: dict[str, tuple[str, list[str], Any]] = {}
    for line in lines:
        for pattern, kind in _ARITH:
            m = pattern.match(line)
            if not m:
                continue
            g = m.groups()
            if kind == "leaf":
                graph[g[0]] = ("leaf", [], float(g[1]))
            elif kind in ("sqrt", "sq"):
                graph[g[0]] = (kind, [g[1]], None)
            elif kind in ("add", "mul"):
                graph[g[0]] = (kind, g[1].split(" and "), None)
            elif kind in ("sub2", "div2"):
                graph[g[0]] = (kind, [g[2], g[1]] if kind == "sub2" else [g[1], g[2]], None)
            else:  # subn, divn: "first" then the rest
                rest = g[1].split(" and ") if kind == "subn" else g[2].split(" and ")
                first = g[2] if kind == "subn" else g[1]
                graph[g[0]] = (kind, [first, *rest], None)
            break
        else:
            raise SolverError(f"unparsed line: {line!r}")
    return graph


def _arith_fn(kind: str, args: list[float], arg: Any) -> float:
    if kind == "leaf":
        return float(arg)
    if kind == "sqrt":
        return math.sqrt(args[0])
    if kind == "sq":
        return args[0] ** 2
    if kind == "add":
        return math.fsum(args)
    if kind == "mul":
        return math.prod(args)
    if kind in ("sub2", "subn"):
        return args[0] - math.fsum(args[1:])
    return args[0] / math.prod(args[1:])


_BOOL_LEAF = re.compile(r"^(\w+) is (True|False)\.$")
_BOOL_OP = re.compile(r"^The value of (\w+) equals \((.+)\)\.$")


def solve_boolean(prompt: str) -> bool:
    lines, target = _block_and_target(prompt)
    graph: dict[str, tuple[str, list[str], Any]] = {}
    for line in lines:
        m = _BOOL_LEAF.match(line)
        if m:
            graph[m.group(1)] = ("leaf", [], m.group(2) == "True")
            continue
        m = _BOOL_OP.match(line)
        if not m:
            raise SolverError(f"unparsed line: {line!r}")
        expr = m.group(2).split()
        if expr[0] == "NOT":
            graph[m.group(1)] = ("not", [expr[1]], None)
        else:
            ops = set(expr[1::2])
            if len(ops) != 1:
                raise SolverError(f"mixed operators in {line!r}")
            graph[m.group(1)] = (ops.pop().lower(), expr[0::2], None)

    def fn(kind: str, args: list[bool], arg: Any) -> bool:
        if kind == "leaf":
            return bool(arg)
        if kind == "not":
            return not args[0]
        return all(args) if kind == "and" else any(args)

    return bool(_evaluate(graph, target, fn))


# -- linear equations ---------------------------------------------------------------------------
_SYSTEM = "Given the following linear equation system with two variables:\n\n"
_EQUATION = re.compile(r"^(\S+) x ([+-]) (\S+) y = (\S+)$")


def solve_linear(prompt: str) -> tuple[float, float]:
    """Compute the described coefficients, then solve by Gaussian elimination with pivoting."""
    if _SYSTEM not in prompt:
        raise SolverError("no linear system found in the prompt")
    text = prompt.rsplit(_SYSTEM, 1)[1].split("Determine the values of x and y", 1)[0]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    rows = [_EQUATION.match(ln) for ln in lines[:2]]
    described = [ln for ln in lines[2:] if not ln.startswith("The calculation of")]
    graph = _arith_graph(described)

    def value(token: str) -> float:
        if re.fullmatch(r"-?[\d.]+", token):
            return float(token)
        return float(_evaluate(graph, token, _arith_fn))

    matrix: list[list[float]] = []
    for m in rows:
        if m is None:
            raise SolverError("unparsed equation")
        a, sign, b, c = m.groups()
        matrix.append([value(a), (1.0 if sign == "+" else -1.0) * value(b), value(c)])
    # Partial pivoting keeps the elimination stable for float coefficients.
    if abs(matrix[1][0]) > abs(matrix[0][0]):
        matrix.reverse()
    (a1, b1, c1), (a2, b2, c2) = matrix
    if a1 == 0:
        if b1 == 0:
            raise SolverError("singular system")
        y = c1 / b1
        return (c2 - b2 * y) / a2, y
    f = a2 / a1
    y = (c2 - f * c1) / (b2 - f * b1)
    return (c1 - b1 * y) / a1, y


# -- implication logic ----------------------------------------------------------------------------
_IMPLIES = re.compile(r"^\((.+)\) -> (\w+)\.$")
_FACT = re.compile(r"^(\w+) is (True|False)\.$")
_DEDUCE_TARGET = re.compile(r"Deduce the value of (\w+)\.")
_ABDUCE_Q = re.compile(r"Given (\w+) is (True|False), what is the value of (\w+)\?")


def _implications(lines: list[str]) -> tuple[dict[str, tuple[str, list[str]]], dict[str, bool]]:
    rules: dict[str, tuple[str, list[str]]] = {}
    facts: dict[str, bool] = {}
    for line in lines:
        m = _FACT.match(line)
        if m:
            facts[m.group(1)] = m.group(2) == "True"
            continue
        m = _IMPLIES.match(line)
        if not m:
            raise SolverError(f"unparsed line: {line!r}")
        words = m.group(1).split()
        if words[0] == "NOT":
            rules[m.group(2)] = ("not", [words[1]])
        else:
            ops = set(words[1::2])
            if len(ops) != 1:
                raise SolverError(f"mixed connectives in {line!r}")
            rules[m.group(2)] = (ops.pop(), words[0::2])
    return rules, facts


def solve_deductive(prompt: str) -> str:
    """Forward chaining over three values, memoised per node."""
    blocks = _LAST_BLOCK.findall(prompt)
    targets = _DEDUCE_TARGET.findall(prompt)
    if not blocks or not targets:
        raise SolverError("no deductive problem found")
    rules, facts = _implications([ln.strip() for ln in blocks[-1].splitlines() if ln.strip()])
    memo: dict[str, str] = {}

    def val(name: str) -> str:
        if name in facts:
            return str(facts[name])
        if name not in memo:
            op, premises = rules[name]
            got = [val(p) for p in premises]
            if op == "not":
                holds = got[0] == "False"
            elif op == "and":
                holds = all(g == "True" for g in got)
            else:
                holds = "True" in got
            memo[name] = "True" if holds else "N/A"
        return memo[name]

    return val(targets[-1])


def solve_abductive(prompt: str) -> str:
    """The last problem's answer under the semantics its question states: ``exact`` ("… if
    it could be either") by satisfiability, the paper's by walking the rule chain."""
    blocks = _LAST_BLOCK.findall(prompt)
    questions = _ABDUCE_Q.findall(prompt)
    if not blocks or not questions:
        raise SolverError("no abductive problem found")
    rules, facts = _implications([ln.strip() for ln in blocks[-1].splitlines() if ln.strip()])
    given, given_value, asked = questions[-1]
    if _EXACT.search(prompt[prompt.rfind("Given ") :]):
        return _entailment(rules, {**facts, given: given_value == "True"}, asked)
    return _chain(rules, given, given_value, asked)


_EXACT = re.compile(r"'N/A' if it could be either")


def _chain(rules: dict[str, tuple[str, list[str]]], given: str, value: str, asked: str) -> str:
    """The paper's semantics: find the chain of rules from the asked leaf up to the given
    node with networkx, then walk it down applying modus tollens."""
    import networkx as nx

    g = nx.DiGraph()
    for conclusion, (_op, premises) in rules.items():
        for p in premises:
            g.add_edge(conclusion, p)
    try:
        path = nx.shortest_path(g, given, asked)
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return "N/A"
    state: str = value
    for node in path[:-1]:  # modus tollens only flows through a False conclusion
        op = rules[node][0]
        state = {"not": "True", "or": "False"}.get(op, "N/A") if state == "False" else "N/A"
    return state


Clause = frozenset[tuple[str, bool]]  # literals (variable, polarity), one of them true


def _entailment(rules: dict[str, tuple[str, list[str]]], known: dict[str, bool], asked: str) -> str:
    """Classical entailment: each rule as clauses (``(a and b) -> c`` is ``¬a ∨ ¬b ∨ c``,
    ``(a or b) -> c`` is ``¬a ∨ c`` and ``¬b ∨ c``, ``(NOT a) -> c`` is ``a ∨ c``), each
    known value a unit clause; the asked variable is True (False) when assuming it False
    (True) is unsatisfiable, N/A when both are satisfiable."""
    clauses: list[Clause] = []
    for conclusion, (op, premises) in rules.items():
        if op == "and":
            clauses.append(frozenset([*((p, False) for p in premises), (conclusion, True)]))
        elif op == "or":
            clauses.extend(frozenset([(p, False), (conclusion, True)]) for p in premises)
        else:
            clauses.append(frozenset([(premises[0], True), (conclusion, True)]))
    clauses.extend(frozenset([(name, value)]) for name, value in known.items())
    possible = [v for v in (True, False) if _satisfiable([*clauses, frozenset([(asked, v)])])]
    if not possible:
        raise SolverError("the stated values contradict the rules")
    return "N/A" if len(possible) == 2 else str(possible[0])


def _satisfiable(clauses: list[Clause]) -> bool:
    """DPLL: unit propagation, then a split on a variable of the shortest clause."""
    while True:
        units = [next(iter(c)) for c in clauses if len(c) == 1]
        if not units:
            break
        var, value = units[0]
        reduced: list[Clause] = []
        for c in clauses:
            if (var, value) in c:
                continue  # satisfied
            rest = c - {(var, not value)}
            if not rest:
                return False
            reduced.append(rest)
        clauses = reduced
    if not clauses:
        return True
    shortest: Clause = clauses[0]
    for c in clauses:
        if len(c) < len(shortest):
            shortest = c
    var, _ = next(iter(shortest))
    return any(_satisfiable([*clauses, frozenset([(var, v)])]) for v in (True, False))


# -- general DAGs ---------------------------------------------------------------------------------
_POINTS = re.compile(r"^(\w+) points to: \((.*)\)\.$")
_VALUE = re.compile(r"^The value of (\w+) is (-?\d+)\.$")
_REACH_Q = re.compile(r"Can (\w+) be reached starting from (\w+)\?")
_SUM_Q = re.compile(r"paths from (\w+) to (\w+)\?")


def _digraph(prompt: str) -> tuple[Any, dict[str, int]]:
    import networkx as nx

    blocks = _LAST_BLOCK.findall(prompt)
    if not blocks:
        raise SolverError("no graph found")
    g = nx.DiGraph()
    values: dict[str, int] = {}
    for line in (ln.strip() for ln in blocks[-1].splitlines() if ln.strip()):
        m = _POINTS.match(line)
        if m:
            g.add_node(m.group(1))
            if m.group(2) != "None":
                g.add_edges_from((m.group(1), c.strip()) for c in m.group(2).split(","))
            continue
        m = _VALUE.match(line)
        if not m:
            raise SolverError(f"unparsed line: {line!r}")
        values[m.group(1)] = int(m.group(2))
    return g, values


def solve_reachability(prompt: str) -> bool:
    import networkx as nx

    g, _ = _digraph(prompt)
    q = _REACH_Q.findall(prompt)
    if not q:
        raise SolverError("no reachability question found")
    target, source = q[-1]
    return bool(nx.has_path(g, source, target))


def solve_max_sum_path(prompt: str) -> int:
    """Dynamic programming over networkx's topological order of the nodes between the two
    endpoints (values may be negative, so no longest-path shortcut)."""
    import networkx as nx

    g, values = _digraph(prompt)
    q = _SUM_Q.findall(prompt)
    if not q:
        raise SolverError("no path question found")
    source, target = q[-1]
    between = (nx.descendants(g, source) | {source}) & (nx.ancestors(g, target) | {target})
    sub = g.subgraph(between)
    best: dict[str, int] = {source: values[source]}
    for u in nx.topological_sort(sub):
        if u not in best:
            continue
        for v in sub.successors(u):
            best[v] = max(best.get(v, best[u] + values[v]), best[u] + values[v])
    if target not in best:
        raise SolverError("no path between the endpoints")
    return best[target]
