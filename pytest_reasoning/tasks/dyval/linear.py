"""DyVal ``linear_equation``: a 2×2 system whose coefficients are partly arithmetic T-DAG roots.

The model first computes the replaced coefficient(s), then solves the system; the solution is
unique (non-zero determinant, checked exactly when the coefficients are rational).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar

from ...answers import (
    format_number,
    parse_number,
    relative_error,
)
from ...core import Item, Score
from ...errors import InvalidArgument
from ...rng import Chooser
from ..base import Generated, Knob
from . import solver
from .arithmetic import (
    Number,
    arithmetic_knobs,
    arithmetic_steps,
    build_arithmetic,
    check_arithmetic,
    describe,
    to_json,
)
from .canon import linear_form
from .common import LINEAR_PRESETS, DyvalTask, export_nodes, read_value, tdag_knobs
from .tdag import TreeDag, mix_lines, node_names, order_lines

__all__ = ["LinearEquationTask", "parse_pair"]

TOLERANCE = 1e-3
FORMAT = (
    "Determine the values of x and y. Ensure your results are within a relative precision of "
    "0.001 (or 0.1%) compared to the ground truth values. Your response should be formatted "
    "as: <<<x's value y's value>>>, e.g., if x=1 and y=2, then it should be <<<1 2>>>."
)
ECHO_MARKER = "then it should be <<<1 2>>>"
_SUFFIX = re.compile(r"^[a-z]+")
_VAR = re.compile(r"\b[xy]\s*=\s*", re.I)


def parse_pair(raw: str) -> tuple[float, float] | None:
    """``1 2``, ``1, 2``, ``x=1, y=2``, ``1/2 -3`` → two numbers; anything else → None."""
    tokens = _VAR.sub(" ", raw).replace(",", " ").replace(";", " ").split()
    if len(tokens) != 2:
        return None
    a, b = parse_number(tokens[0]), parse_number(tokens[1])
    return None if a is None or b is None else (a, b)


def _term(coef: str | Number, var: str, first: bool) -> str:
    if isinstance(coef, str):
        return f"{coef} {var}" if first else f"+ {coef} {var}"
    magnitude: Any = abs(coef)
    text = format_number(coef) if first else format_number(magnitude)
    if first:
        return f"{text} {var}"
    return f"{'-' if coef < 0 else '+'} {text} {var}"


def equation_line(row: Sequence[str | Number]) -> str:
    a, b, c = row
    right = c if isinstance(c, str) else format_number(c)
    return f"{_term(a, 'x', True)} {_term(b, 'y', False)} = {right}"


class LinearEquationTask(DyvalTask):
    id = "dyval.linear_equation"
    levels = tuple(LINEAR_PRESETS)
    family = "a linear equation"
    description = "Solve a 2x2 linear system whose coefficients are arithmetic T-DAG roots."
    knobs: ClassVar[dict[str, Knob]] = {
        **tdag_knobs(),
        **arithmetic_knobs(),
        "replaced": Knob(
            "replaced", int, "coefficients given as the root of a T-DAG", minimum=1, maximum=6
        ),
        "min_coefficient": Knob(
            "min_coefficient", int, "smallest plain coefficient", minimum=-1000, maximum=1000
        ),
        "max_coefficient": Knob(
            "max_coefficient", int, "largest plain coefficient", minimum=-1000, maximum=1000
        ),
    }

    def preset(self, level: str) -> dict[str, Any]:
        return {
            **self.tree_preset(level, LINEAR_PRESETS),
            "ops": ["+", "-", "*", "/", "sqrt", "square"],
            "min_value": 1,
            "max_value": 10,
            "max_abs": 1e4,
            "replaced": 1,
            "min_coefficient": -10,
            "max_coefficient": 10,
        }

    def check_combination(self, params: Mapping[str, Any]) -> None:
        check_arithmetic(params)
        self.check_tree(params)
        if params["min_coefficient"] > params["max_coefficient"]:
            raise InvalidArgument("knob 'min_coefficient': must be <= max_coefficient")

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        lo, hi = params["min_coefficient"], params["max_coefficient"]
        for _ in range(50):  # a zero determinant is rare: 50 misses in a row mean bad knobs
            coefs: list[str | Number] = [Fraction(chooser.randint(lo, hi)) for _ in range(6)]
            values: list[Any] = list(coefs)  # Fraction, or float once a root is irrational
            positions = sorted(chooser.sample(range(6), params["replaced"]))
            dags: list[TreeDag] = []
            for k, pos in enumerate(positions):
                dag = build_arithmetic(chooser, params, node_names(str(k)))
                dags.append(dag)
                coefs[pos], values[pos] = dag.root.name, dag.root.value
            # Fractions throughout: int / int would silently give a float.
            a1, b1, c1, a2, b2, c2 = (Fraction(v) if isinstance(v, int) else v for v in values)
            det = a1 * b2 - a2 * b1
            # Exactly zero means no unique solution; nearly zero (float roots) is ill-posed.
            if det != 0 and abs(det) >= 1e-9 * (abs(a1 * b2) + abs(a2 * b1)):
                break
        else:
            raise InvalidArgument("knob 'min_coefficient': no system with a unique solution found")
        x = (c1 * b2 - c2 * b1) / det
        y = (a1 * c2 - a2 * c1) / det
        extra = [
            build_arithmetic(
                chooser,
                params,
                node_names(str(len(dags) + i)),
                depth=min(2, params["depth"]),
                extra_links=0,
            )
            for i in range(params["distractors"])
        ]
        blocks = [[describe(n) for n in d.nodes] for d in dags]
        for d in extra:  # each distractor joins one coefficient's description
            k = chooser.randint(0, len(blocks) - 1)
            blocks[k] = mix_lines(blocks[k], [[describe(n) for n in d.nodes]], chooser)
        rows = [coefs[0:3], coefs[3:6]]
        sections = [
            f"The calculation of {d.root.name} is defined as:\n"
            + "\n".join(order_lines(block, params["order"], chooser))
            for d, block in zip(dags, blocks, strict=True)
        ]
        body = (
            "Given the following linear equation system with two variables:\n\n"
            + "\n".join(equation_line(r) for r in rows)
            + "\n\n"
            + "\n\n".join(sections)
            + "\n\n"
            + FORMAT
        )
        nodes = []
        for d in dags:
            nodes.extend(export_nodes(d, (), to_json))
        for d in extra:
            nodes.extend(export_nodes(TreeDag([]), [d], to_json))
        problem = {
            "equations": [[c if isinstance(c, str) else to_json(c) for c in r] for r in rows],
            "nodes": nodes,
        }
        return Generated(
            problem=problem, answer=f"{format_number(x)} {format_number(y)}", body=body
        )

    def score(self, item: Item, response: str) -> Score:
        read = read_value(response, ECHO_MARKER, parse_pair)
        if isinstance(read, Score):
            return read
        raw, pair = read
        gold = [float(v) for v in item.answer.split()]
        if all(relative_error(p, g) <= TOLERANCE for p, g in zip(pair, gold, strict=True)):
            return Score(True, raw)
        return Score(False, raw, "wrong_value")

    def locate(self, prompt: str) -> int:
        return prompt.rfind("linear equation system with two variables")

    def form(self, problem: Mapping[str, Any]) -> str:
        return linear_form(problem)

    def solve_text(self, prompt: str) -> str:
        x, y = solver.solve_linear(prompt)
        return f"{format_number(x)} {format_number(y)}"

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        nodes = problem["nodes"]
        values = {n["name"]: n["value"] for n in nodes}
        lines = ["First compute the coefficients given by descriptions."]
        for row in problem["equations"]:
            for c in row:
                if isinstance(c, str):
                    suffix = _SUFFIX.sub("", c)  # the names of one DAG share a suffix
                    own = [
                        n
                        for n in nodes
                        if not n.get("distractor") and _SUFFIX.sub("", n["name"]) == suffix
                    ]
                    lines.extend(arithmetic_steps(own))
                    lines.append(f"So {c} = {format_number(values[c])}.")
        nums = [
            [values[c] if isinstance(c, str) else c for c in row] for row in problem["equations"]
        ]
        (a1, b1, c1), (a2, b2, c2) = [
            [Fraction(v) if isinstance(v, int) else v for v in r] for r in nums
        ]
        lines.append("Now solve the system:")
        lines.extend(equation_line(r) for r in nums)
        lines.extend(elimination_steps(a1, b1, c1, a2, b2, c2))
        lines.append(f"Thus, the answer is <<<{answer}>>>")
        return "\n".join(lines)


def _n(v: Number) -> str:
    """A number inside a formula: negative ones in parentheses."""
    text = format_number(v)
    return f"({text})" if v < 0 else text


def elimination_steps(
    a1: Number, b1: Number, c1: Number, a2: Number, b2: Number, c2: Number
) -> list[str]:
    """Solve ``a1 x + b1 y = c1, a2 x + b2 y = c2`` by elimination, every product and
    difference written out (the reference's training steps: eliminate y, solve for x,
    substitute back). The determinant is non-zero."""
    lines = []
    if b1 == 0 or b2 == 0:  # one equation has no y: it gives x at once
        (a, c), (a_o, b_o, c_o), which, other = (
            ((a1, c1), (a2, b2, c2), "first", "second")
            if b1 == 0
            else ((a2, c2), (a1, b1, c1), "second", "first")
        )
        x = c / a
        lines.append(
            f"The {which} equation has no y: {format_number(a)} x = {format_number(c)}, so "
            f"x = {format_number(c)} / {_n(a)} = {format_number(x)}."
        )
    else:
        other, (a_o, b_o, c_o) = "first", (a1, b1, c1)
        lines.append(
            f"To eliminate y, multiply the first equation by {_n(b2)} and the second by {_n(b1)}:"
        )
        lines.append(equation_line([a1 * b2, b1 * b2, c1 * b2]))
        lines.append(equation_line([a2 * b1, b1 * b2, c2 * b1]))
        det, num = a1 * b2 - a2 * b1, c1 * b2 - c2 * b1
        lines.append(
            f"Subtract the second from the first: ({_n(a1 * b2)} - {_n(a2 * b1)}) x = "
            f"{_n(c1 * b2)} - {_n(c2 * b1)}, so {format_number(det)} x = {format_number(num)}."
        )
        x = num / det
        lines.append(f"x = {format_number(num)} / {_n(det)} = {format_number(x)}.")
    rest = c_o - a_o * x
    lines.append(
        f"Substitute x into the {other} equation: {format_number(b_o)} y = {format_number(c_o)} "
        f"- {_n(a_o)} * {_n(x)} = {format_number(rest)}, so y = {format_number(rest)} / "
        f"{_n(b_o)} = {format_number(rest / b_o)}."
    )
    return lines
