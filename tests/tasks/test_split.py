"""The train/test split (issue 29.6, docs/tasks/splits.md): suites and ``export`` draw test
problems, ``export --split train`` train problems, and no problem is in both."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import networkx as nx
import pytest

from pytest_reasoning.cli import main
from pytest_reasoning.core import Item, Score, canonical_json
from pytest_reasoning.registry import get_task, task_ids
from pytest_reasoning.rng import Chooser, SeededChooser
from pytest_reasoning.tasks import Generated, Knob, Task, draw_of, hooks
from pytest_reasoning.tasks.base import resolve_params
from pytest_reasoning.tasks.draw import FREE, split_of
from pytest_reasoning.tasks.sampler import make_item

BUILT_IN = [t for t in task_ids() if not hooks.is_pack(get_task(t))]
CASES = [(t, lv) for t in BUILT_IN for lv in get_task(t).levels]
N = 3  # items of each split per level: the split is a function of the problem, so a few
# items per level check that every generator honours it (each test item hashes to test);
# the inner loop draws two (the first two of a batch), CI all N


@pytest.mark.parametrize("n", [2, pytest.param(N, marks=pytest.mark.e2e)])
@pytest.mark.parametrize(("task_id", "level"), CASES, ids=[f"{t}-{lv}" for t, lv in CASES])
def test_no_problem_is_in_both_splits(task_id: str, level: str, n: int) -> None:
    """Every item's problem hashes to the split it was drawn for, so the splits cannot share
    one (``split_of`` is a function of the problem); the drawn sets are disjoint too."""
    task = get_task(task_id)
    keys: dict[str, set[str]] = {}
    for split in ("test", "train"):
        items = [make_item(task, level, 1, i, split=split) for i in range(n)]
        assert all(split_of(task, i.problem) == split for i in items), (task_id, level, split)
        keys[split] = {canonical_json(dict(task.identity(i.problem))) for i in items}
    assert not keys["test"] & keys["train"]


def test_the_split_partitions_problems_about_half_and_half() -> None:
    """Raw draws (no split asked) fall in test about half the time: the splits are alike."""
    task = get_task("dyval.arithmetic")
    from pytest_reasoning.rng import SeededChooser, derive_seed

    params = resolve_params(task, "D4")
    splits = [
        split_of(task, task.generate(SeededChooser(derive_seed("raw", i)), params, i).problem)
        for i in range(400)
    ]
    assert 160 < splits.count("test") < 240


class _Asking(Task):
    """A generator that asks the draw it is part of, as DyVal's balanced ones do."""

    id = "test.asking"
    levels = ("L1",)
    knobs: ClassVar[Mapping[str, Knob]] = {}
    asked: ClassVar[list[tuple[str, int, bool]]] = []

    def preset(self, level: str) -> dict[str, Any]:
        return {}

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        n = chooser.randint(0, 10**9)
        draw = draw_of(chooser)
        self.asked.append((draw.split, n, draw.fits({"n": n})))
        return Generated({"n": n}, str(n), f"Say {n}.")

    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        return generated.body

    def score(self, item: Item, response: str) -> Score:
        return Score(response == item.answer, response, None)

    def solve(self, item: Item) -> str:
        return item.answer


def test_a_generator_asks_its_draw_through_its_chooser() -> None:
    """The sampler hands a generator its draw with the chooser (no thread-local): the split
    being drawn, and whether a problem fits it; called directly (Hypothesis, a test), the
    draw is free and every problem fits."""
    task = _Asking()
    item = make_item(task, "L1", 1, 0, split="train")
    assert split_of(task, item.problem) == "train"
    assert {split for split, _, _ in task.asked} == {"train"}
    # each answer is the split's own; the kept draw fitted, the ones before were redrawn
    assert all(fits == (split_of(task, {"n": n}) == "train") for _, n, fits in task.asked)
    assert task.asked[-1] == ("train", item.problem["n"], True)
    task.asked.clear()
    task.generate(SeededChooser(1), {}, 0)
    assert draw_of(SeededChooser(1)) is FREE and [f for *_, f in task.asked] == [True]


def test_export_draws_test_items_and_split_train_gives_training_items(
    capsys: pytest.CaptureFixture[str],
) -> None:
    task = get_task("dyval.boolean_logic")
    args = ["export", task.id, "--level", "D3", "--count", "20", "-q"]
    rows = {}
    for split in ("test", "train"):
        assert main([*args, *(["--split", "train"] if split == "train" else [])]) == 0
        rows[split] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert len(rows[split]) == 20
        assert all(split_of(task, r["problem"]) == split for r in rows[split])
    assert all(r["id"].endswith("-train]") for r in rows["train"])
    assert not any(r["id"].endswith("-train]") for r in rows["test"])
    seen = {canonical_json(dict(task.identity(r["problem"]))) for r in rows["test"]}
    assert not seen & {canonical_json(dict(task.identity(r["problem"]))) for r in rows["train"]}
    # A bad split is one line (argparse's choices), exit 4.
    with pytest.raises(SystemExit) as stopped:
        main([*args, "--split", "dev"])
    assert stopped.value.code == 4
    assert capsys.readouterr().err.strip() == (
        "pytest-reasoning: error: argument --split: invalid choice: 'dev' "
        "(choose from 'test', 'train')"
    )


# The first repeats cost the most (a repeat is accepted after 100 fresh draws, then 50, 25,
# ...): 12 items already repeat seven times; 30 items: CI.
@pytest.mark.parametrize("count", [12, pytest.param(30, marks=pytest.mark.e2e)])
def test_a_small_level_says_its_split_has_fewer_problems(
    capsys: pytest.CaptureFixture[str], count: int
) -> None:
    """Boolean logic D1 has ten problems, five in each split: 30 items repeat 25 (12 items, 7)."""
    args = ["export", "dyval.boolean_logic", "--level", "D1", "--count", str(count), "-q"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        f"{count - 5} of {count} items repeat an earlier problem; the test split of "
        "dyval.boolean_logic D1" in err
    )


# -- issue 41: no test problem is a training problem renamed ------------------------------------
# The levels where, before, most test items were a training problem renamed (seeds 1-3, 200
# items of each split a seed: 589 of 600 at deductive D3, 590 of 600 at zebra 2x2).
RENAMED = [
    ("dyval.deductive_logic", "D3"),
    ("dyval.boolean_logic", "D3"),
    ("dyval.deductive_logic", "D2"),
    ("dyval.boolean_logic", "D2"),
    ("dyval.abductive_logic", "D1"),
    ("dyval.abductive_logic", "D3"),
    ("dyval.arithmetic", "D1"),
    ("zebra.grid", "2x2"),
]


# Levels whose test split holds at most 33 problems up to renaming (docs/tasks/splits.md):
# each seed's batch has drawn every one of them within 60 items (3 x 60 held the same 21, 33,
# 5, 4 and 3 problems as 3 x 200), and the rest are repeats that cost minutes of CPU to draw.
FEW_TEST_PROBLEMS = {
    ("dyval.deductive_logic", "D3"): 60,
    ("dyval.boolean_logic", "D3"): 60,
    ("dyval.deductive_logic", "D2"): 60,
    ("dyval.boolean_logic", "D2"): 60,
    ("dyval.abductive_logic", "D1"): 60,
}


# Levels whose training split holds few problems up to renaming too: 3 x 60 training items held
# the same 39 (deductive D3) and 33 (boolean D3) as 3 x 200 (not so at deductive D2: 9 of 12).
FEW_TRAINING_PROBLEMS = {
    ("dyval.deductive_logic", "D3"): 60,
    ("dyval.boolean_logic", "D3"): 60,
}
# Abductive logic D3's splits hold about 176 problems each, and each item is a search of
# ~85 trees (0.1 s): 300 of each split, not 600, keep the check under a minute of CPU.
FEWER_DRAWS = {("dyval.abductive_logic", "D3"): 100}


def _dyval_graph(problem: dict[str, Any]) -> nx.DiGraph:
    """A T-DAG problem as a labelled graph for networkx's own isomorphism test (VF2): a node
    is its operation or leaf value and marks, an edge its place where the operation cares."""
    g = nx.DiGraph()
    nodes = [n for n in problem["nodes"] if not n.get("distractor")]
    given = problem.get("given") or {}
    for n in nodes:
        mark = ("@" if n["name"] == problem["target"] else "") + (
            f"={given['value']}" if n["name"] == given.get("node") else ""
        )
        g.add_node(n["name"], label=f"{n['op'] or n.get('value', '?')}{mark}")
        for k, c in enumerate(n["children"]):
            place = "" if n["op"] in ("+", "*", "and", "or") else str(min(k, 1))
            g.add_edge(n["name"], c, label=place)
    return g


def _zebra_key(problem: dict[str, Any]) -> str:
    """The least encoding of the puzzle over every renaming of features and of values within
    each (brute force: 8 renamings at 2x2), clues as the constraints they state."""
    mirror = {"direct_right": "direct_left", "right_of": "left_of"}
    symmetric = {"same_house", "side_by_side", "one_between", "two_between"}
    features = problem["features"]
    feats = list(features)
    best = None
    for order in itertools.permutations(range(len(feats))):
        for perms in itertools.product(
            *(itertools.permutations(range(len(features[f]))) for f in feats)
        ):
            rename = {
                (f, v): (order[i], perms[i][k])
                for i, f in enumerate(feats)
                for k, v in enumerate(features[f])
            }
            rows = []
            for c in problem["clues"]:
                kind = c["kind"]
                a = rename[tuple(c["a"])]
                b = rename[tuple(c["b"])] if c["b"] else (-1, -1)
                if kind in mirror:
                    kind, a, b = mirror[kind], b, a
                if kind in symmetric:
                    a, b = min(a, b), max(a, b)
                rows.append((kind, a, b, c["house"] or 0))
            text = repr(sorted(rows))
            best = text if best is None or text < best else best
    return f"{problem['houses']}:{best}"


def _same_label(x: dict[str, str], y: dict[str, str]) -> bool:
    return x["label"] == y["label"]


def _wl(g: nx.DiGraph) -> str:
    """A bucket for VF2 (isomorphic graphs share it; undirected: networkx warns that its
    directed hashes changed in 3.5)."""
    u = g.to_undirected()
    return str(nx.weisfeiler_lehman_graph_hash(u, node_attr="label", edge_attr="label"))


@pytest.mark.e2e
@pytest.mark.parametrize(("task_id", "level"), RENAMED, ids=[f"{t}-{lv}" for t, lv in RENAMED])
def test_no_test_problem_is_a_training_problem_renamed(task_id: str, level: str) -> None:
    """600 test items against 600 training items (seeds 1-3; 180 of a split that holds few
    problems, 300 at abductive D3), compared by an isomorphism test written apart from the
    tasks' canonical forms: networkx's VF2 on labelled graphs for DyVal, every renaming tried
    for zebra."""
    task = get_task(task_id)
    each = FEWER_DRAWS.get((task_id, level), 200)
    count = {
        "test": FEW_TEST_PROBLEMS.get((task_id, level), each),
        "train": FEW_TRAINING_PROBLEMS.get((task_id, level), each),
    }
    drawn = {
        split: [make_item(task, level, s, i, split=split) for s in (1, 2, 3) for i in range(n)]
        for split, n in count.items()
    }
    if task_id.startswith("zebra"):
        train = {_zebra_key(i.problem) for i in drawn["train"]}
        assert not [i.id for i in drawn["test"] if _zebra_key(i.problem) in train]
        return
    buckets: dict[str, list[nx.DiGraph]] = {}
    for item in drawn["train"]:
        g = _dyval_graph(item.problem)
        buckets.setdefault(_wl(g), []).append(g)
    same = []
    for item in drawn["test"]:
        g = _dyval_graph(item.problem)
        for other in buckets.get(_wl(g), []):
            if nx.is_isomorphic(g, other, node_match=_same_label, edge_match=_same_label):
                same.append(item.id)
                break
    assert not same, same[:5]
