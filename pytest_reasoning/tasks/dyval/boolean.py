"""DyVal ``boolean_logic``: the truth value of a T-DAG's root over AND, OR, NOT."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...answers import extract_delimited, normalise_label
from ...core import Item, Score
from ...errors import InvalidArgument
from ...rng import Chooser
from ..base import Generated, Knob, Task
from . import solver
from .common import TDAG_PRESETS, apply_style, tdag_knobs
from .tdag import UNARY, Node, build_tree, order_nodes

__all__ = ["BooleanLogicTask"]

OPS = ("and", "or", "not")
FORMAT = (
    "Compute the result of {target}. If the solution cannot be calculated, answer 'N/A'. "
    "Ensure your final result begins with '<<<' and ends with '>>>', for example, if the "
    "answer is True, your final result should be <<<True>>>."
)
ECHO_MARKER = "your final result should be <<<True>>>"


def evaluate(op: str, args: Sequence[bool]) -> bool:
    if op == "and":
        return all(args)
    if op == "or":
        return any(args)
    return not args[0]


def describe(node: Node) -> str:
    if node.op is None:
        return f"{node.name} is {node.value}."
    kids = [c.name for c in node.children]
    if node.op == "not":
        return f"The value of {node.name} equals (NOT {kids[0]})."
    joined = f" {node.op.upper()} ".join(kids)
    return f"The value of {node.name} equals ({joined})."


class BooleanLogicTask(Task):
    id = "dyval.boolean_logic"
    levels = tuple(TDAG_PRESETS)
    description = "Truth value of the root of a random AND/OR/NOT T-DAG."
    knobs: ClassVar[dict[str, Knob]] = {
        **tdag_knobs(),
        "ops": Knob("ops", list, "operation set", choices=OPS, item_kind=str),
        "balanced": Knob("balanced", bool, "alternate True/False answers by index (rejection)"),
    }

    def preset(self, level: str) -> dict[str, Any]:
        depth, width = TDAG_PRESETS[level]
        return {
            "depth": depth,
            "width": width,
            "order": "topological",
            "ops": list(OPS),
            "balanced": True,
        }

    def check_combination(self, params: Mapping[str, Any]) -> None:
        binary = any(op not in UNARY for op in params["ops"])
        if params["depth"] > 1 and binary and params["width"] < 2:
            raise InvalidArgument("knob 'width': binary operations need width >= 2")

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        want = "True" if index % 2 == 0 else "False"
        for _ in range(1000):
            dag = build_tree(
                chooser,
                depth=params["depth"],
                width=params["width"],
                ops=params["ops"],
                leaf=lambda c: c.randint(0, 1) == 1,
                evaluate=evaluate,
            )
            if not params["balanced"] or str(dag.root.value) == want:
                break
        else:  # pragma: no cover - both labels are reachable for every valid knob set
            raise InvalidArgument("knob 'balanced': could not reach the wanted label")
        target = dag.root.name
        lines = [describe(n) for n in order_nodes(dag.nodes, params["order"], chooser)]
        body = (
            "Here is the description of a boolean logic problem:\n\n"
            + "\n".join(lines)
            + "\n\n"
            + FORMAT.format(target=target)
        )
        problem = {
            "nodes": [
                {
                    "name": n.name,
                    "op": n.op,
                    "children": [c.name for c in n.children],
                    "value": n.value,
                }
                for n in dag.nodes
            ],
            "target": target,
        }
        return Generated(problem=problem, answer=str(dag.root.value), body=body)

    def render(self, generated: Generated, style: str) -> str:
        return apply_style(generated.body, style)

    def score(self, item: Item, response: str) -> Score:
        if ECHO_MARKER in response:
            return Score(False, None, "echo")
        raw = extract_delimited(response)
        if raw is None:
            return Score(False, None, "no_answer")
        label = normalise_label(raw)
        if label is None:
            return Score(False, raw, "format")
        if label == item.answer:
            return Score(True, raw)
        if "N/A" in (label, item.answer):
            return Score(False, raw, "na_confusion")
        return Score(False, raw, "wrong_label")

    def solve(self, item: Item) -> str:
        return str(solver.solve_boolean(item.prompt))

    def steps(self, item: Item) -> str:
        values = {n["name"]: n["value"] for n in item.problem["nodes"]}
        lines = []
        for n in item.problem["nodes"]:
            if n["op"] is None:
                lines.append(f"{n['name']} is {n['value']}.")
            elif n["op"] == "not":
                k = n["children"][0]
                lines.append(f"{n['name']} = (NOT {k}) = (NOT {values[k]}) = {n['value']}.")
            else:
                op = f" {n['op'].upper()} "
                names = op.join(n["children"])
                vals = op.join(str(values[k]) for k in n["children"])
                lines.append(f"{n['name']} = ({names}) = ({vals}) = {n['value']}.")
        lines.append(f"Thus, the answer is <<<{item.answer}>>>")
        return "\n".join(lines)
