"""Independent DyVal solvers that read the PROMPT TEXT, not the generator's structures.

They re-parse the natural-language description with their own regular expressions, order the
graph with networkx, and evaluate in plain floats, so a gold answer is confirmed by code that
shares nothing with the generator but the wording it reads.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["SolverError", "solve_arithmetic", "solve_boolean"]


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

    def fn(kind: str, args: list[float], arg: Any) -> float:
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

    return float(_evaluate(graph, target, fn))


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
