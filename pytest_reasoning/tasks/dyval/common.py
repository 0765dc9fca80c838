"""Pieces shared by the DyVal tasks: level presets, common knobs, prompt styles, scoring."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from ...answers import extract_delimited, normalise_label
from ...core import Item, Score
from ...errors import InvalidArgument
from ...rng import Chooser
from ..base import Generated, Knob, Task
from .canon import tree_form
from .tdag import UNARY, Node, TreeDag, mix_lines, order_lines

__all__ = [
    "COT_TRIGGER",
    "GDAG_PRESETS",
    "LINEAR_PRESETS",
    "MAX_TREE_NODES",
    "TDAG_PRESETS",
    "DyvalTask",
    "export_nodes",
    "gdag_knobs",
    "label_knobs",
    "label_score",
    "random_topological",
    "read_value",
    "tdag_knobs",
    "tdag_lines",
    "unreachable",
]

# The paper's presets per level.
TDAG_PRESETS: dict[str, tuple[int, int]] = {"D1": (2, 2), "D2": (3, 2), "D3": (3, 3), "D4": (4, 2)}
GDAG_PRESETS: dict[str, tuple[int, int]] = {
    "D1": (7, 3),
    "D2": (10, 4),
    "D3": (15, 6),
    "D4": (20, 8),
}
LINEAR_PRESETS: dict[str, tuple[int, int]] = {
    "D1": (1, 1),
    "D2": (2, 2),
    "D3": (3, 2),
    "D4": (4, 2),
}

# The most nodes one problem's T-DAGs may have, counted before generating for the worst case
# (every operation binary): depth 12 at width 2, 8 at width 3, 6 at width 4 or 5, 5 at width 6.
# Larger trees make prompts of megabytes; depth 12 × width 6 (4e8 nodes) would never finish.
MAX_TREE_NODES = 5_000

COT_TRIGGER = "Let's think step by step, and end with the final result between <<< and >>>."


def _common_knobs() -> dict[str, Knob]:
    return {
        "order": Knob(
            "order",
            str,
            "description order: children before parents, the reverse, or shuffled",
            choices=("topological", "reversed", "random"),
        ),
        "distractors": Knob(
            "distractors",
            int,
            "descriptions of unrelated small DAGs mixed into the text",
            minimum=0,
            maximum=20,
        ),
        "shots": Knob("shots", int, "worked examples in the 'fewshot' style", minimum=1, maximum=8),
        "unique": Knob(
            "unique", bool, "no two items of one (level, params, seed) batch share a problem"
        ),
    }


def tdag_knobs() -> dict[str, Knob]:
    return {
        "depth": Knob("depth", int, "levels of the tree, 1 = a single leaf", minimum=1, maximum=12),
        "width": Knob("width", int, "children of every non-unary operation", minimum=1, maximum=6),
        "extra_links": Knob(
            "extra_links",
            int,
            "extra children per non-unary operation, taken among earlier nodes (makes a DAG)",
            minimum=0,
            maximum=4,
        ),
        **_common_knobs(),
    }


def label_knobs(ops: tuple[str, ...]) -> dict[str, Knob]:
    """``ops`` and ``balanced``: the knobs of the True/False/N/A tree tasks."""
    return {
        "ops": Knob("ops", list, "operation set", choices=ops, item_kind=str),
        "balanced": Knob("balanced", bool, "equal answer classes by index (rejection)"),
    }


def gdag_knobs() -> dict[str, Knob]:
    return {
        "nodes": Knob("nodes", int, "nodes in the graph", minimum=2, maximum=200),
        "min_links": Knob("min_links", int, "fewest children a node draws", minimum=0),
        "max_links": Knob("max_links", int, "most children a node draws", minimum=1),
        **_common_knobs(),
    }


def label_score(raw_response: str, gold: str, echo_marker: str) -> Score:
    """Scoring of the label tasks: exact over True / False / N/A."""
    if echo_marker in raw_response:
        return Score(False, None, "echo")
    raw = extract_delimited(raw_response)
    if raw is None:
        return Score(False, None, "no_answer")
    label = normalise_label(raw)
    if label is None:
        return Score(False, raw, "format")
    if label == gold:
        return Score(True, raw)
    if "N/A" in (label, gold):
        return Score(False, raw, "na_confusion")
    return Score(False, raw, "wrong_label")


T = TypeVar("T")


def read_value(
    response: str, echo_marker: str, parse: Callable[[str], T | None]
) -> Score | tuple[str, T]:
    """The shared front of the value scorers: a failed :class:`Score` (``echo``,
    ``no_answer``, ``na_confusion``, ``format``), or the delimited text and its parsed value."""
    if echo_marker in response:
        return Score(False, None, "echo")
    raw = extract_delimited(response)
    if raw is None:
        return Score(False, None, "no_answer")
    if normalise_label(raw) == "N/A":
        return Score(False, raw, "na_confusion")
    value = parse(raw)
    if value is None:
        return Score(False, raw, "format")
    return raw, value


class DyvalTask(Task):
    """A DyVal task: the shared styles, fewshot rendering and knob combination rules."""

    styles = ("direct", "cot", "fewshot")
    family: ClassVar[str] = ""  # "an arithmetic", "a boolean logic", … (used by fewshot)

    def common_preset(self) -> dict[str, Any]:
        return {"order": "topological", "distractors": 0, "shots": 3, "unique": True}

    def tree_preset(
        self, level: str, presets: Mapping[str, tuple[int, int]] = TDAG_PRESETS
    ) -> dict[str, Any]:
        """Shape knobs of a T-DAG level plus the common ones; tasks add their own."""
        depth, width = presets[level]
        return {"depth": depth, "width": width, "extra_links": 0, **self.common_preset()}

    def text(self, lines: Sequence[str], question: str) -> str:
        """The problem statement: every DyVal task but the linear systems reads this way."""
        return (
            f"Here is the description of {self.family} problem:\n\n"
            + "\n".join(lines)
            + "\n\n"
            + question
        )

    def locate(self, prompt: str) -> int:
        return prompt.rfind(f"description of {self.family} problem")

    def text_answer(self, prompt: str, *, max_size: int | None = None) -> str | None:
        return f"<<<{self.solve_text(prompt)}>>>"

    def solve(self, item: Item) -> str:
        return self.solve_text(item.prompt)

    @abstractmethod
    def solve_text(self, prompt: str) -> str:
        """The answer found by the text-reading solver (``solver.py``), as the gold is written."""

    # Answer classes a ``balanced`` batch cycles through by index (empty: not balanced).
    labels: ClassVar[tuple[str, ...]] = ()

    def shots(self, params: Mapping[str, Any]) -> int:
        return int(params["shots"])

    def choices(self, item: Item) -> Sequence[str] | None:
        return list(self.labels) if self.labels else None

    def identity(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """The problem up to renaming its nodes and reordering commutative children, without
        its distractors (:meth:`form`): isomorphic problems are one problem for the split,
        ``unique`` batches, worked examples and the clustering of samples."""
        return {"form": self.form(problem)}

    def form(self, problem: Mapping[str, Any]) -> str:
        """The canonical form of a T-DAG problem (:mod:`.canon`): the tree read from its root
        (the node that is no node's child), the asked node and a given value marked; G-DAG
        and linear tasks override."""
        nodes = [n for n in problem["nodes"] if not n.get("distractor")]
        below = {c for n in nodes for c in n["children"]}
        root = next(n["name"] for n in reversed(nodes) if n["name"] not in below)
        marks = {problem["target"]: "@"}
        given = problem.get("given")
        if given:
            marks[given["node"]] = marks.get(given["node"], "") + "=" + str(given["value"])
        return tree_form(nodes, root, marks)

    def stratum(self, params: Mapping[str, Any], index: int) -> int:
        return index % len(self.labels) if params.get("balanced") and self.labels else 0

    def wanted(self, index: int) -> str:
        """The answer class item ``index`` is drawn for when ``balanced``."""
        return self.labels[index % len(self.labels)]

    def adapt(self, params: dict[str, Any], given: set[str]) -> None:
        if "nodes" in params:  # G-DAG: links can only go to the other nodes
            if "max_links" not in given:
                params["max_links"] = min(params["max_links"], params["nodes"] - 1)
            if "min_links" not in given:
                params["min_links"] = min(params["min_links"], params["max_links"])
        if "width" in params and "width" not in given and params["depth"] > 1:
            # Linear D1 is depth 1, width 1 (a stated coefficient); deeper needs width 2.
            params["width"] = max(params["width"], 2)

    def check_tree(self, params: Mapping[str, Any]) -> None:
        """Rules shared by the T-DAG tasks."""
        ops = params.get("ops", ())
        binary = any(op not in UNARY for op in ops)
        if params["depth"] > 1 and binary and params["width"] < 2:
            raise InvalidArgument("knob 'width': binary operations need width >= 2")
        if params.get("extra_links", 0) and params["depth"] < 2:
            raise InvalidArgument("knob 'extra_links': needs depth >= 2 (a leaf has no children)")
        check_tree_size(params)

    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        body = generated.body
        if style == "cot":
            return f"{body}\n\n{COT_TRIGGER}"
        if style == "fewshot" and examples:  # none: the knobs allow no other problem
            n = len(examples)
            plural = self.family.split(" ", 1)[1]  # "an arithmetic" → "arithmetic problems"
            head = (
                f"Here is an example of {self.family} problem with its step-by-step solution."
                if n == 1
                else f"Here are {n} examples of {plural} problems with their step-by-step "
                "solutions."
            )
            parts = [head]
            for i, ex in enumerate(examples, 1):
                parts.append(
                    f"Example {i}:\nQ:\n{ex.body}\n\nA:\n{self.explain(ex.problem, ex.answer)}"
                )
            parts.append(f"Now the problem to solve:\nQ:\n{body}")
            return "\n\n".join(parts)
        return body


def export_nodes(
    main: TreeDag, distractors: Sequence[TreeDag], value: Any = lambda v: v
) -> list[dict[str, Any]]:
    """The ``nodes`` of a T-DAG problem: the main DAG, then distractors marked as such."""
    out = [
        {
            "name": n.name,
            "op": n.op,
            "children": [c.name for c in n.children],
            "value": value(n.value),
        }
        for n in main.nodes
    ]
    for d in distractors:
        out.extend(
            {
                "name": n.name,
                "op": n.op,
                "children": [c.name for c in n.children],
                "value": value(n.value),
                "distractor": True,
            }
            for n in d.nodes
        )
    return out


def tdag_lines(
    main: TreeDag,
    distractors: Sequence[TreeDag],
    describe: Any,
    order: str,
    chooser: Chooser,
) -> list[str]:
    """Describe the main DAG children-first, mix distractor lines in, then apply the order.

    Children-first is a random topological order (each node once all its children are
    described, the next drawn among those ready), not the order the tree was built in: that
    one puts each subtree's leaves together, so where the first True leaf stands in the text
    told the answer of balanced logic items (issue 29: gradient boosting on the places of
    True and False, 0.75 at boolean D3)."""
    lines = [line for n in random_topological(main, chooser) if (line := describe(n))]
    extra = [[line for n in d.nodes if (line := describe(n))] for d in distractors]
    return order_lines(mix_lines(lines, extra, chooser), order, chooser)


def random_topological(dag: TreeDag, chooser: Chooser) -> list[Node]:
    """The nodes children-first, each drawn among those whose children are all placed."""
    waiting = {id(n): len({id(c) for c in n.children}) for n in dag.nodes}
    parents: dict[int, list[Node]] = {}
    for n in dag.nodes:
        for c in {id(c): c for c in n.children}.values():
            parents.setdefault(id(c), []).append(n)
    ready = [n for n in dag.nodes if not n.children]
    out: list[Node] = []
    while ready:
        node = ready.pop(chooser.randint(0, len(ready) - 1))
        out.append(node)
        for p in parents.get(id(node), []):
            waiting[id(p)] -= 1
            if waiting[id(p)] == 0:
                ready.append(p)
    return out


def check_tree_size(params: Mapping[str, Any]) -> None:
    """Refuse, before generating, a shape whose worst case exceeds MAX_TREE_NODES nodes:
    ``width``-ary operations on every level of ``depth``, times the trees one problem has
    (linear's ``replaced`` coefficients), plus the distractors (depth <= 2 each)."""
    depth, width = int(params["depth"]), int(params["width"])
    binary = any(op not in UNARY for op in params.get("ops", ("+",)))
    per_tree = sum(width**i for i in range(depth)) if binary and width > 1 else depth
    trees = int(params.get("replaced", 1))
    nodes = trees * per_tree + int(params.get("distractors", 0)) * (1 + width)
    if nodes > MAX_TREE_NODES:
        shape = f"depth {depth} × width {width}" + (f" × {trees} trees" if trees > 1 else "")
        raise InvalidArgument(
            f"knob 'depth': {shape} makes up to {nodes:,} nodes; at most {MAX_TREE_NODES:,} "
            "(lower depth or width)"
        )


def unreachable(label: str, params: Mapping[str, Any], draws: int) -> InvalidArgument:
    """The error when a balanced draw gave up: the label may be rare under these knobs rather
    than impossible (other seeds reach it), so say so and what widens the search."""
    shape = ", ".join(f"{k} {params[k]}" for k in ("depth", "width", "ops") if k in params)
    return InvalidArgument(
        f"knob 'balanced': no {label} answer in {draws:,} draws for this item ({shape}):"
        " rare under these knobs or in this train/test split (docs/tasks/splits.md), perhaps"
        " impossible; widen the search with more ops, another depth or width, or balanced: false"
    )
