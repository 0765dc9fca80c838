"""DyVal ``deductive_logic`` and ``abductive_logic``: implication trees over and/or/not.

Deduction follows the reference implementation (binding, see docs/tasks/dyval.md): NOT gives
True if its premise is False, else N/A; AND gives True if every premise is True, else N/A; OR
gives True if any premise is True, else N/A. Abduction has two semantics (the ``semantics``
knob): ``exact`` (the default, :mod:`.abduction`) states some leaves and answers what they and
the root's value entail; ``reference`` is the paper's: leaves unstated, walking from the given
root to the asked leaf a True or N/A conclusion makes the premise N/A, a False one makes a NOT
premise True, an OR premise False and an AND premise N/A.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar

from ...core import Item, Score
from ...errors import InvalidArgument
from ...rng import Chooser
from ..base import Generated, Knob, Shortcut
from ..draw import Draw, draw_of
from . import abduction, shortcuts, solver
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
from .tdag import MATCH_SHAPES, LeafBalancer, Node, TreeDag, build_tree, node_names

__all__ = ["AbductiveLogicTask", "DeductiveLogicTask", "abduce", "deduce"]

OPS = ("and", "or", "not")
NA = "N/A"
Value = bool | str  # True, False or "N/A"

ARROW = "The symbol '->' states a deduction: A -> B means that if A is True, then B is True. "
DEDUCE = (
    ARROW + "If A is False or unknown, B cannot be deduced from it (N/A). "
    "Deduce the value of {target}. If it cannot be deduced, answer 'N/A'. Ensure your final "
    "result begins with '<<<' and ends with '>>>', for example, if the answer is True, your "
    "final result should be <<<True>>>."
)
ABDUCE = (
    ARROW + "So if B is False, A must be False; if B is True or unknown, nothing follows "
    "about A (N/A). Given {root} is {value}, what is the value of {leaf}? If it cannot be "
    "abduced, answer 'N/A'. Ensure your final result begins with '<<<' and ends with '>>>', "
    "for example, if the answer is True, your final result should be <<<True>>>."
)
# The exact semantics: every rule and stated value holds, and nothing else is known.
ABDUCE_EXACT = (
    ARROW + "So if B is False, A must be False. Every rule and every stated value above holds, "
    "and nothing else is known. Given {root} is {value}, what is the value of {leaf}? Answer "
    "True if it must be True, False if it must be False, and 'N/A' if it could be either. "
    "Ensure your final result begins with '<<<' and ends with '>>>', for example, if the "
    "answer is True, your final result should be <<<True>>>."
)
SEMANTICS = ("exact", "reference")
ECHO_MARKER = "your final result should be <<<True>>>"


def text(v: Value) -> str:
    return v if isinstance(v, str) else str(v)


def deduce(op: str, args: Sequence[Value]) -> Value:
    if op == "not":
        return True if args[0] is False else NA
    if op == "and":
        return True if all(a is True for a in args) else NA
    return True if any(a is True for a in args) else NA


def abduce(op: str, conclusion: Value) -> Value:
    """The value a premise of ``op`` takes, given the value of the conclusion."""
    if conclusion is not False:
        return NA
    return {"not": True, "or": False}.get(op, NA)


def describe_implication(node: Node) -> str:
    kids = [c.name for c in node.children]
    if node.op == "not":
        return f"(NOT {kids[0]}) -> {node.name}."
    return f"({f' {node.op} '.join(kids)}) -> {node.name}."


def describe_deductive(node: Node) -> str:
    if node.op is None:
        return f"{node.name} is {node.value}."
    return describe_implication(node)


def describe_abductive(node: Node) -> str:
    return "" if node.op is None else describe_implication(node)  # leaves are not stated


# A False leaf makes NOT over it True; NOT over a rule is never True (a rule is never
# False), so the leaves below it cannot move the answer: no edge inverts there.
LEAVES = LeafBalancer(deduce, lambda op, leaf: op == "not" and leaf)


class _ImplicationTask(DyvalTask):
    levels = tuple(TDAG_PRESETS)
    # Operation weights of the reference implementation (and, or, not).
    weights: ClassVar[dict[str, float]]
    knobs: ClassVar[dict[str, Knob]] = {**tdag_knobs(), **label_knobs(OPS)}

    def preset(self, level: str) -> dict[str, Any]:
        return {
            **self.tree_preset(level),
            "ops": list(OPS),
            "balanced": True,
        }

    def check_combination(self, params: Mapping[str, Any]) -> None:
        self.check_tree(params)
        if params["extra_links"]:
            raise InvalidArgument(
                f"knob 'extra_links': {self.id} has none (the reference semantics are a tree)"
            )
        if params["depth"] < 2:
            raise InvalidArgument(f"knob 'depth': {self.id} needs depth >= 2 (one implication)")

    def tree(
        self,
        chooser: Chooser,
        params: Mapping[str, Any],
        names: Iterator[str],
        depth: int,
        *,
        shape_only: bool = False,
    ) -> TreeDag:
        """An implication tree as the reference draws it; ``shape_only``: the operations
        alone, every value N/A until the caller draws the leaves (no rule is ever invalid,
        so the shape does not depend on the leaves)."""
        ops = params["ops"]
        return build_tree(
            chooser,
            depth=depth,
            width=params["width"],
            ops=ops,
            weights=[self.weights[op] for op in ops],
            leaf=(lambda _c: NA) if shape_only else (lambda c: c.randint(0, 1) == 1),
            evaluate=(lambda _op, _args: NA) if shape_only else deduce,
            names=names,
        )

    def _fits(
        self, draw: Draw, dag: TreeDag, shape: Shape, *, kept: bool = True, paired: bool = False
    ) -> bool:
        """Whether ``dag`` (of ``shape``, :func:`tree_shape`) with its leaves as drawn is a
        problem this draw may give."""
        # The form of {"nodes": export_nodes(dag, [], text), "target": root}, read off the
        # tree (the implication tasks have no extra links).
        leaves = tuple([n.value for n in dag.nodes if n.op is None])
        form = remembered_form(
            (self.id, shape, leaves),
            lambda: node_form(dag, _leaf_label, {dag.root.name: "@"}),
        )
        return draw.fits(None, key={"form": form}, kept=kept, paired=paired)

    def score(self, item: Item, response: str) -> Score:
        return label_score(response, item.answer, ECHO_MARKER)


class DeductiveLogicTask(_ImplicationTask):
    id = "dyval.deductive_logic"
    family = "a deductive logic"
    labels = ("True", NA)  # an implication never concludes False: balance True vs N/A
    description = "Deduce the root of an implication tree from stated leaves (True/N/A)."
    weights: ClassVar[dict[str, float]] = {"and": 0.2, "or": 0.6, "not": 0.2}

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        want = self.wanted(index)
        for attempt in range(1000):
            names = node_names()
            dag = self.tree(chooser, params, names, params["depth"], shape_only=params["balanced"])
            # Balanced: the shape as the reference draws it, the leaves drawn for the wanted
            # answer (and, past one operation, for counts of True leaves that say nothing),
            # within the split being drawn. A shape that cannot conclude True (NOT over a
            # rule, which is never False) is drawn again, so neither the shape nor the asked
            # rule tells the answer.
            if not params["balanced"] or LEAVES.balance_in(
                dag, chooser, lambda v: text(v) == want,
                match=params["depth"] >= 3 and attempt < MATCH_SHAPES,
                fits=partial(self._fits, draw_of(chooser), dag, tree_shape(dag)),
            ):  # fmt: skip
                break
        else:
            raise unreachable(want, params, 1000)
        extra = [self.tree(chooser, params, names, 2) for _ in range(params["distractors"])]
        target = dag.root.name
        lines = tdag_lines(dag, extra, describe_deductive, params["order"], chooser)
        body = self.text(lines, DEDUCE.format(target=target))
        problem = {"nodes": export_nodes(dag, extra, text), "target": target}
        return Generated(problem=problem, answer=text(dag.root.value), body=body)

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.DEDUCTIVE

    def solve_text(self, prompt: str) -> str:
        return solver.solve_deductive(prompt)

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        nodes = [n for n in problem["nodes"] if not n.get("distractor")]
        values = {n["name"]: n["value"] for n in nodes}
        lines = []
        for n in nodes:
            name, op, kids, value = n["name"], n["op"], n["children"], n["value"]
            if op is None:
                lines.append(f"{name} is {value}.")
                continue
            if op == "not":
                premise, shown = f"(NOT {kids[0]})", f"(NOT {values[kids[0]]})"
            else:
                premise = "(" + f" {op} ".join(kids) + ")"
                shown = "(" + f" {op} ".join(values[k] for k in kids) + ")"
            if value == "True":
                why = f"the premise {shown} is True, so {name} is True."
            else:
                why = f"the premise {shown} is not True, so {name} cannot be deduced: N/A."
            lines.append(f"{premise} -> {name}: {why}")
        lines.append(f"Thus, the answer is <<<{answer}>>>")
        return "\n".join(lines)


class AbductiveLogicTask(_ImplicationTask):
    id = "dyval.abductive_logic"
    family = "an abductive logic"
    labels = ("True", "False", NA)
    description = "Given the root of an implication tree, abduce one leaf (True/False/N/A)."
    weights: ClassVar[dict[str, float]] = {"and": 0.07, "or": 0.66, "not": 0.27}
    knobs: ClassVar[dict[str, Knob]] = {
        **_ImplicationTask.knobs,
        "semantics": Knob(
            "semantics",
            str,
            "exact: some leaves stated, the answer is what everything given entails (balanced "
            "definite against N/A); reference: the paper's (leaves unstated, one path walked)",
            choices=SEMANTICS,
        ),
    }

    def preset(self, level: str) -> dict[str, Any]:
        return {**super().preset(level), "semantics": "exact"}

    def adapt(self, params: dict[str, Any], given: set[str]) -> None:
        super().adapt(params, given)
        if params["semantics"] == "reference" and "balanced" not in given:
            params["balanced"] = False  # the paper's own answer distribution

    def check_combination(self, params: Mapping[str, Any]) -> None:
        super().check_combination(params)
        if not params["balanced"]:
            return
        if params["semantics"] == "exact" and "and" not in params["ops"]:
            raise InvalidArgument(
                "knob 'ops': balanced exact abduction needs 'and' (an AND above the asked leaf "
                "is what makes a leaf's value depend on the stated ones)"
            )
        if params["semantics"] == "reference" and not {"not", "or"} <= set(params["ops"]):
            raise InvalidArgument(
                "knob 'ops': balanced abduction needs 'not' (for True) and 'or' (for False)"
            )

    def stratum(self, params: Mapping[str, Any], index: int) -> int:
        if params["semantics"] == "exact":  # definite and N/A alternate
            return index % 2 if params["balanced"] else 0
        return super().stratum(params, index)

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        if params["semantics"] == "exact":
            return self._exact(chooser, params, index)
        want = self.wanted(index)
        for _ in range(1000):
            names = node_names()
            dag = self.tree(chooser, params, names, params["depth"])
            # The reference gives the root False with probability 0.93 (True with 0.07).
            given: bool = chooser.random() < 0.07
            answers = leaf_answers(dag.root, given)
            leaves = [n for n in dag.nodes if n.op is None]
            if params["balanced"]:
                leaves = [n for n in leaves if text(answers[n.name]) == want]
            if leaves:
                leaf = chooser.choice(leaves)
                break
        else:
            raise unreachable(want, params, 1000)
        extra = [self.tree(chooser, params, names, 2) for _ in range(params["distractors"])]
        root = dag.root.name
        lines = tdag_lines(dag, extra, describe_abductive, params["order"], chooser)
        body = self.text(lines, ABDUCE.format(root=root, value=given, leaf=leaf.name))
        nodes = export_nodes(dag, extra, lambda _v: None)  # leaf values are not part of it
        for n in nodes:
            n.pop("value")
        problem = {
            "nodes": nodes,
            "target": leaf.name,
            "given": {"node": root, "value": str(given)},
        }
        return Generated(problem=problem, answer=text(answers[leaf.name]), body=body)

    def _exact(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        """The root given False, leaves stated or not, one unstated leaf asked; balanced:
        definite (True or False) and N/A alternate, drawn apart from the shape, the asked leaf
        and (past one operation) the counts of stated values (:func:`abduction.draw_statements`)."""
        want = ("definite", NA)[index % 2] if params["balanced"] else None
        for _ in range(1000):
            names = node_names()
            dag = self.tree(chooser, params, names, params["depth"], shape_only=True)
            drawn = abduction.draw_statements(
                dag, chooser, want, match=params["depth"] >= 3, apart=params["depth"] >= 3,
                fits=partial(self._fits_exact, draw_of(chooser), dag),
            )  # fmt: skip
            if drawn is not None:
                break
        else:
            raise unreachable(want or "consistent", params, 1000)
        leaf, stated, answer = drawn
        extra = [self.tree(chooser, params, names, 2) for _ in range(params["distractors"])]
        main = abduction.describe_stated(stated, describe_implication)
        own = {n.name for n in dag.nodes}

        def describe(node: Node) -> str:  # unrelated trees state every leaf, as in deduction
            return main(node) if node.name in own else describe_deductive(node)

        lines = tdag_lines(dag, extra, describe, params["order"], chooser)
        question = ABDUCE_EXACT.format(root=dag.root.name, value=False, leaf=leaf)
        problem = _exact_problem(dag, extra, leaf, stated)
        return Generated(problem=problem, answer=answer, body=self.text(lines, question))

    def _fits_exact(
        self, draw: Draw, dag: TreeDag, leaf: str, stated: Mapping[str, bool]
    ) -> bool:
        # The form of _exact_problem(dag, [], leaf, stated), read off the tree. (The shape
        # is taken here: most shapes drawn are never checked, draw_statements refuses them.)
        shape = tree_shape(dag)

        def label(node: Node) -> str:
            value = stated.get(node.name)
            return "?" if value is None else _STATED[value]

        form = remembered_form(
            (self.id, shape, leaf, frozenset(stated.items())),
            lambda: node_form(dag, label, {leaf: "@", dag.root.name: "=False"}),
        )
        return draw.fits(None, key={"form": form})

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.ABDUCTIVE

    def solve_text(self, prompt: str) -> str:
        return solver.solve_abductive(prompt)

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        if "stated" in problem:
            return abduction.explain_exact(problem, answer)
        nodes = {n["name"]: n for n in problem["nodes"] if not n.get("distractor")}
        parent = {c: n["name"] for n in nodes.values() for c in n["children"]}
        path = [problem["target"]]
        while path[-1] in parent:
            path.append(parent[path[-1]])
        path.reverse()  # root first
        value: Value = problem["given"]["value"] == "True"
        lines = [f"{path[0]} is given as {value}."]
        for here, below in itertools.pairwise(path):
            n = nodes[here]
            op, kids = n["op"], n["children"]
            premise = f"(NOT {kids[0]})" if op == "not" else "(" + f" {op} ".join(kids) + ")"
            nxt = abduce(op, value)
            if value is not False:
                why = f"{here} is {text(value)}, which says nothing about its premise"
            elif op == "not":
                why = f"{here} is False, so the premise {premise} is False and {below} is True"
            elif op == "or":
                why = f"{here} is False, so every part of {premise} is False"
            else:
                why = f"{here} is False, so {premise} is False, but which part is unknown"
            lines.append(f"{premise} -> {here}: {why}; {below} is {text(nxt)}.")
            value = nxt
        lines.append(f"Thus, the answer is <<<{answer}>>>")
        return "\n".join(lines)


def _leaf_label(node: Node) -> str:
    """A deduction leaf's label in its form (:meth:`DyvalTask.form`)."""
    return value_label(text(node.value))


_STATED = {v: value_label(str(v)) for v in (True, False)}  # a stated leaf's, in abduction


def _exact_problem(
    dag: TreeDag, extra: Sequence[TreeDag], leaf: str, stated: Mapping[str, bool]
) -> dict[str, Any]:
    """An exact abduction's problem: the rules, the stated leaves' values (the other nodes
    have none), the asked leaf, the given root; distractor trees with all their values."""
    nodes = export_nodes(dag, extra, text)
    for n in nodes:
        if n.get("distractor"):
            continue
        n.pop("value")
        if n["op"] is None and n["name"] in stated:
            n["value"] = str(stated[n["name"]])
    return {
        "nodes": nodes,
        "target": leaf,
        "given": {"node": dag.root.name, "value": "False"},
        "stated": {k: str(v) for k, v in sorted(stated.items())},
    }


def leaf_answers(root: Node, given: bool) -> dict[str, Value]:
    """The abduced value of every node below ``root`` (a tree: one path to each)."""
    out: dict[str, Value] = {root.name: given}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            out[child.name] = abduce(node.op or "", out[node.name])
            stack.append(child)
    return out
