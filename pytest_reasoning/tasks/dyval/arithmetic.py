"""DyVal ``arithmetic``: the value of a T-DAG's root over + − × ÷ √ ²."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
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
from .common import TDAG_PRESETS, DyvalTask, export_nodes, read_value, tdag_knobs, tdag_lines
from .tdag import Node, TreeDag, add_extra_links, build_tree, node_names

__all__ = [
    "ArithmeticTask",
    "arithmetic_knobs",
    "arithmetic_steps",
    "build_arithmetic",
    "check_arithmetic",
    "describe",
]

OPS = ("+", "-", "*", "/", "sqrt", "square")
Number = int | Fraction | float

FORMAT = (
    "Compute the result of {target}. If the solution cannot be calculated, answer 'N/A'. "
    "Ensure your result is within a relative precision of 0.0001 (or 0.01%) compared to the "
    "ground truth value. Ensure your final result begins with '<<<' and ends with '>>>', for "
    "example, if the answer is 1, your final result should be <<<1>>>."
)
ECHO_MARKER = "your final result should be <<<1>>>"
TOLERANCE = 1e-4


def _exact(v: Number) -> Number:
    """Integers stay ``int`` (several times faster than ``Fraction``)."""
    return v.numerator if isinstance(v, Fraction) and v.denominator == 1 else v


def _sqrt(v: Number) -> Number | None:
    if v < 0:
        return None
    if isinstance(v, int):
        r = math.isqrt(v)
        return r if r * r == v else math.sqrt(v)
    if isinstance(v, Fraction):
        n, d = math.isqrt(v.numerator), math.isqrt(v.denominator)
        if n * n == v.numerator and d * d == v.denominator:
            return Fraction(n, d)
    return math.sqrt(v)


def evaluate(op: str, args: Sequence[Number], limit: float) -> Number | None:
    """Exact (int or Fraction) where possible so gold answers carry no float noise; floats only
    after an irrational square root. None if invalid."""
    value: Number | None
    if op == "+":
        value = _exact(sum(args))
    elif op == "-":
        value = _exact(args[0] - sum(args[1:]))
    elif op == "*":
        value = _exact(math.prod(args))
    elif op == "/":
        divisor = math.prod(args[1:])
        if divisor == 0:
            value = None
        elif isinstance(args[0], int | Fraction) and isinstance(divisor, int | Fraction):
            value = _exact(Fraction(args[0]) / divisor)  # int / int would be a float
        else:
            value = args[0] / divisor
    elif op == "sqrt":
        value = _sqrt(args[0])
    elif op == "square":
        value = args[0] * args[0]
    else:  # pragma: no cover - ops are validated by the knob
        raise InvalidArgument(f"knob 'ops': unknown operation {op!r}")
    if value is None or abs(float(value)) > limit:
        return None
    return value


def to_json(v: Number) -> int | float:
    if isinstance(v, int):
        return v
    if isinstance(v, Fraction) and v.denominator == 1:
        return int(v)
    return float(v)


def describe(node: Node) -> str:
    n = node.name
    kids = [c.name for c in node.children]
    if node.op is None:
        return f"The value of {n} is {format_number(node.value)}."
    if node.op == "sqrt":
        return f"{n} gets its value by taking the square root of the value that {kids[0]} has."
    if node.op == "square":
        return f"{n} gets its value by squaring the value that {kids[0]} has."
    if node.op == "+":
        return f"{n} gets its value by adding together the value of {' and '.join(kids)}."
    if node.op == "*":
        return f"{n} gets its value by multiplying together the value of {' and '.join(kids)}."
    if node.op == "-":
        if len(kids) == 2:
            return (
                f"{n} gets its value by subtracting the value of {kids[1]} "
                f"from the value of {kids[0]}."
            )
        rest = " and ".join(kids[1:])
        return (
            f"{n} gets its value by subtracting the sum of the values of {rest} "
            f"from the value of {kids[0]}."
        )
    if len(kids) == 2:
        return f"{n} gets its value by dividing the value of {kids[0]} by the value of {kids[1]}."
    rest = " and ".join(kids[1:])
    return (
        f"{n} gets its value by dividing the value of {kids[0]} "
        f"by the product of the values of {rest}."
    )


def step(node: Mapping[str, Any], values: Mapping[str, Any]) -> str:
    name, op, kids = node["name"], node["op"], node["children"]
    v = format_number(node["value"])
    if op is None:
        return f"{name} is {v}"
    args = [format_number(values[k]) for k in kids]
    if op == "sqrt":
        return f"{name} = sqrt({kids[0]}) = sqrt({args[0]}) = {v}"
    if op == "square":
        return f"{name} = {kids[0]}^2 = ({args[0]})^2 = {v}"
    return f"{name} = {f' {op} '.join(kids)} = {f' {op} '.join(args)} = {v}"


def arithmetic_knobs() -> dict[str, Knob]:
    return {
        "ops": Knob("ops", list, "operation set", choices=OPS, item_kind=str),
        "min_value": Knob("min_value", int, "smallest leaf value", minimum=-1000, maximum=1000),
        "max_value": Knob("max_value", int, "largest leaf value", minimum=-1000, maximum=1000),
        "max_abs": Knob("max_abs", float, "reject DAGs with any |value| above", minimum=1.0),
    }


def build_arithmetic(
    chooser: Chooser,
    params: Mapping[str, Any],
    names: Iterator[str],
    *,
    depth: int | None = None,
    extra_links: int | None = None,
) -> TreeDag:
    """An arithmetic T-DAG under the task's validity rules, extra links included."""
    limit = float(params["max_abs"])
    lo, hi = params["min_value"], params["max_value"]

    def ev(op: str, args: Sequence[Number]) -> Number | None:
        return evaluate(op, args, limit)

    # The reference implementation rejects roots below 1e-4; we keep its rule.
    def root_ok(v: Number) -> bool:
        return v >= 1e-4

    dag = build_tree(
        chooser,
        depth=params["depth"] if depth is None else depth,
        width=params["width"],
        ops=params["ops"],
        leaf=lambda c: c.randint(lo, hi),
        evaluate=ev,
        root_ok=root_ok,
        names=names,
    )
    links = params["extra_links"] if extra_links is None else extra_links
    add_extra_links(dag, chooser, links, ev, root_ok)
    return dag


def check_arithmetic(params: Mapping[str, Any]) -> None:
    if params["min_value"] > params["max_value"]:
        raise InvalidArgument("knob 'min_value': must be <= max_value")


def arithmetic_steps(nodes: Sequence[Mapping[str, Any]]) -> list[str]:
    values = {n["name"]: n["value"] for n in nodes}
    return [step(n, values) for n in nodes if not n.get("distractor")]


class ArithmeticTask(DyvalTask):
    id = "dyval.arithmetic"
    levels = tuple(TDAG_PRESETS)
    family = "an arithmetic"
    description = "Value of the root of a random arithmetic T-DAG."
    knobs: ClassVar[dict[str, Knob]] = {**tdag_knobs(), **arithmetic_knobs()}

    def preset(self, level: str) -> dict[str, Any]:
        return {
            **self.tree_preset(level),
            "ops": list(OPS),
            "min_value": 1,
            "max_value": 10,
            "max_abs": 1e6,
        }

    def check_combination(self, params: Mapping[str, Any]) -> None:
        check_arithmetic(params)
        self.check_tree(params)

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        names = node_names()
        dag = build_arithmetic(chooser, params, names)
        # Distractors: small unrelated DAGs (one operation over leaves), as the reference does.
        extra = [
            build_arithmetic(chooser, params, names, depth=min(2, params["depth"]), extra_links=0)
            for _ in range(params["distractors"])
        ]
        target = dag.root.name
        lines = tdag_lines(dag, extra, describe, params["order"], chooser)
        body = self.text(lines, FORMAT.format(target=target))
        problem = {"nodes": export_nodes(dag, extra, to_json), "target": target}
        return Generated(problem=problem, answer=format_number(dag.root.value), body=body)

    def score(self, item: Item, response: str) -> Score:
        read = read_value(response, ECHO_MARKER, parse_number)
        if isinstance(read, Score):
            return read
        raw, pred = read
        gold = float(item.answer)
        if relative_error(pred, gold) <= TOLERANCE:
            return Score(True, raw)
        if is_partial(pred, item.problem):
            return Score(False, raw, "partial_calculation")
        return Score(False, raw, "wrong_value")

    def solve_text(self, prompt: str) -> str:
        return format_number(solver.solve_arithmetic(prompt))

    def text_answer(self, prompt: str, *, max_size: int | None = None) -> str | None:
        if max_size is not None and solver.arithmetic_depth(prompt) > max_size:
            return "<<<-1>>>"  # arithmetic roots are >= 1e-4: always wrong
        return super().text_answer(prompt)

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        lines = arithmetic_steps(problem["nodes"])
        lines.append(f"Thus, the answer is <<<{answer}>>>")
        return "\n".join(lines)


def is_partial(pred: float, problem: Mapping[str, Any]) -> bool:
    """The answer is the value of a non-root node, or the root with one operation undone or
    applied wrongly (the last operation's result over a subset of its children)."""
    nodes = [n for n in problem["nodes"] if not n.get("distractor")]
    target = problem["target"]
    if any(
        relative_error(pred, float(n["value"])) <= TOLERANCE for n in nodes if n["name"] != target
    ):
        return True
    root = next(n for n in nodes if n["name"] == target)
    if root["op"] is None or len(root["children"]) < 3:
        return False
    values = {n["name"]: n["value"] for n in nodes}
    kids = [values[c] for c in root["children"]]
    for skip in range(1, len(kids)):  # "off by one operation": one operand left out
        value = evaluate(root["op"], kids[:skip] + kids[skip + 1 :], math.inf)
        if value is not None and relative_error(pred, float(value)) <= TOLERANCE:
            return True
    return False
