"""DyVal ``boolean_logic``: the truth value of a T-DAG's root over AND, OR, NOT."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar

from ...core import Item, Score
from ...rng import Chooser
from ..base import Generated, Knob, Shortcut
from ..draw import Draw, draw_of
from . import shortcuts, solver
from .canon import Shape, node_form, remembered_form, tree_shape, value_label
from .common import (
    TDAG_PRESETS,
    DyvalTask,
    export_nodes,
    label_knobs,
    label_score,
    tdag_knobs,
    tdag_lines,
    unreachable,
)
from .tdag import (
    MATCH_SHAPES,
    LeafBalancer,
    Node,
    TreeDag,
    add_extra_links,
    build_tree,
    node_names,
)

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


def build_boolean(
    chooser: Chooser,
    params: Mapping[str, Any],
    names: Iterator[str],
    *,
    depth: int | None = None,
    extra_links: int | None = None,
    shape_only: bool = False,
) -> TreeDag:
    """A T-DAG as the reference draws it; ``shape_only``: the operations alone, every value
    False until the caller draws the leaves (no operation is ever invalid, so the shape does
    not depend on the leaves)."""
    dag = build_tree(
        chooser,
        depth=params["depth"] if depth is None else depth,
        width=params["width"],
        ops=params["ops"],
        leaf=(lambda _c: False) if shape_only else (lambda c: c.randint(0, 1) == 1),
        evaluate=(lambda _op, _args: False) if shape_only else evaluate,
        names=names,
    )
    add_extra_links(
        dag, chooser, params["extra_links"] if extra_links is None else extra_links, evaluate
    )
    return dag


# NOT inverts its child; AND and OR are monotone.
LEAVES = LeafBalancer(evaluate, lambda op, _leaf: op == "not")


class BooleanLogicTask(DyvalTask):
    id = "dyval.boolean_logic"
    levels = tuple(TDAG_PRESETS)
    family = "a boolean logic"
    labels = ("True", "False")
    description = "Truth value of the root of a random AND/OR/NOT T-DAG."
    knobs: ClassVar[dict[str, Knob]] = {**tdag_knobs(), **label_knobs(OPS)}

    def preset(self, level: str) -> dict[str, Any]:
        return {
            **self.tree_preset(level),
            "ops": list(OPS),
            "balanced": True,
        }

    def check_combination(self, params: Mapping[str, Any]) -> None:
        self.check_tree(params)

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        want = self.wanted(index) == "True"
        for attempt in range(1000):
            names = node_names()
            # A tree's leaves are drawn by the balancer: only its shape is drawn here.
            extra_links = params["extra_links"]
            shape_only = params["balanced"] and not extra_links
            dag = build_boolean(chooser, params, names, shape_only=shape_only)
            # Balanced: the shape as the reference draws it, the leaves drawn for the wanted
            # answer (and, past one operation, for counts of True leaves that say nothing).
            if not params["balanced"] or LEAVES.balance_in(
                dag, chooser, lambda v: v is want,
                match=params["depth"] >= 3 and attempt < MATCH_SHAPES,
                fits=partial(self._fits, draw_of(chooser), dag,
                             None if extra_links else tree_shape(dag)),
            ):  # fmt: skip
                break
        else:
            raise unreachable(str(want), params, 1000)
        extra = [
            build_boolean(chooser, params, names, depth=min(2, params["depth"]), extra_links=0)
            for _ in range(params["distractors"])
        ]
        target = dag.root.name
        lines = tdag_lines(dag, extra, describe, params["order"], chooser)
        body = self.text(lines, FORMAT.format(target=target))
        problem = {"nodes": export_nodes(dag, extra), "target": target}
        return Generated(problem=problem, answer=str(dag.root.value), body=body)

    def _fits(
        self,
        draw: Draw,
        dag: TreeDag,
        shape: Shape | None,
        *,
        kept: bool = True,
        paired: bool = False,
    ) -> bool:
        """Whether ``dag`` with its leaves as drawn is a problem this draw may give;
        ``shape``: its :func:`tree_shape`, None with extra links."""
        if shape is None:  # the form of the exported problem
            problem = {"nodes": export_nodes(dag, []), "target": dag.root.name}
            return draw.fits(problem, kept=kept, paired=paired)
        # A tree: the same form read off the nodes (value_label: how a leaf's bool is written).
        leaves = tuple([n.value for n in dag.nodes if n.op is None])
        form = remembered_form(
            (self.id, shape, leaves),
            lambda: node_form(dag, lambda n: value_label(n.value), {dag.root.name: "@"}),
        )
        return draw.fits(None, key={"form": form}, kept=kept, paired=paired)

    def score(self, item: Item, response: str) -> Score:
        return label_score(response, item.answer, ECHO_MARKER)

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.BOOLEAN

    def solve_text(self, prompt: str) -> str:
        return str(solver.solve_boolean(prompt))

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        nodes = [n for n in problem["nodes"] if not n.get("distractor")]
        values = {n["name"]: n["value"] for n in nodes}
        lines = []
        for n in nodes:
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
        lines.append(f"Thus, the answer is <<<{answer}>>>")
        return "\n".join(lines)
