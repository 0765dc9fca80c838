"""The shortcut audit (``pytest-reasoning audit``): the battery itself, and the bound every
registered task x level must keep (docs/audit.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from pytest_reasoning.audit import NaiveBayes, audit, audit_level, features
from pytest_reasoning.audit.learners import mask_options
from pytest_reasoning.cli import main
from pytest_reasoning.core import Item, Score
from pytest_reasoning.registry import get_task, task_ids
from pytest_reasoning.rng import Chooser
from pytest_reasoning.stats import wilson_interval
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.base import Generated, Knob, Shortcut, Task


class _Parity(Task):
    """A toy task with a planted artefact: the answer is the parity of a number, and odd
    items say 'odd-ish' somewhere in the text. Declares one honest rule and one shortcut."""

    id = "toy.parity"
    levels = ("L1",)
    knobs: Mapping[str, Knob] = {}

    def preset(self, level: str) -> dict[str, Any]:
        return {}

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        n = chooser.randint(0, 10**6)
        answer = "odd" if n % 2 else "even"
        tell = " It feels odd-ish." if n % 2 and chooser.random() < 0.9 else ""
        return Generated({"n": n}, answer, f"Is {n} odd or even?{tell}")

    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        return generated.body

    def score(self, item: Item, response: str) -> Score:
        return Score(response.strip() == item.answer, response)

    def solve(self, item: Item) -> str:
        return item.answer

    def choices(self, item: Item) -> Sequence[str]:
        return ["odd", "even"]

    def shortcuts(self) -> Sequence[Shortcut]:
        return (
            Shortcut("tell", "odd iff the text says odd-ish",
                     lambda i: "odd" if "odd-ish" in i.prompt else "even"),
            Shortcut("broken", "raises: the audit counts it as abstaining",
                     lambda i: str(1 / 0)),
        )  # fmt: skip


class _Silent(_Parity):
    """The same items, declaring nothing: no choices, no rules."""

    id = "toy.silent"

    def choices(self, item: Item) -> None:  # type: ignore[override]
        return None

    def shortcuts(self) -> Sequence[Shortcut]:
        return ()


def test_the_battery_finds_a_planted_artefact_and_counts_abstentions() -> None:
    result = audit_level(_Parity(), "L1", count=200, seed=1)
    rows = {b.name: b for b in result.baselines}
    assert result.chance == 0.5 and result.chance_basis == "uniform over 2 answers"
    assert rows["tell"].accuracy > 0.9 and rows["tell"].low > 0.85
    assert rows["broken"].correct == 0 and rows["broken"].abstained == 200
    assert rows["answer prior"].accuracy == pytest.approx(0.5, abs=0.1)
    # The classifiers learn the planted word from the OTHER seed's items.
    assert rows["bag of words (naive Bayes)"].accuracy > 0.85
    # ... and so does gradient boosting on surface features (counts and places of words),
    # and on the counts alone of the words most prompts share ('odd' is in every question).
    assert rows["surface features"].accuracy > 0.85
    assert rows["surface counts"].accuracy > 0.85
    # The tell also makes odd prompts longer: the length baseline sees it too.
    assert rows["prompt length"].accuracy > 0.85
    assert result.best is not None and result.best.accuracy == max(
        b.accuracy for b in rows.values()
    )
    assert result.excess == pytest.approx(result.best.accuracy - 0.5)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["best"] == result.best.name and data["train_seed"] == 1
    assert data["bound"] == pytest.approx(max(result.chance, result.majority) + 0.10, abs=1e-6)
    # Training problems come from the train split: the same seed is no overlap; 600 of them
    # by default (issue 41: at 200 the boosted learners missed what they find at 600), a
    # problem drawn twice counted once.
    assert result.count == 200 and 590 <= result.train_count <= 600


def test_a_task_that_declares_nothing_is_audited_with_the_generic_battery() -> None:
    result = audit_level(_Silent(), "L1", count=50, seed=3, train_count=50)
    assert {b.kind for b in result.baselines} == {"prior", "length", "bow", "surface"}
    # No guess space: chance is the best constant answer's share of the test items.
    assert result.chance_basis.startswith("best constant answer")
    assert 0.3 < result.chance < 0.7


def test_each_problem_counts_once_and_no_test_problem_trains() -> None:
    """Issue 29.7: boolean logic D1 has eight problems up to renaming (issue 41), five in the
    test split and three in the train split. Six items of each split are five and three
    distinct problems, none shared, so a memorising learner has nothing to recall and the
    interval is not narrowed by repeats."""
    result = audit_level("dyval.boolean_logic", "D1", count=6, seed=4, train_count=6)
    assert result.count == 5 and result.train_count == 3
    for b in result.baselines:
        assert b.n == 5


class _Product(_Silent):
    """An open numeric answer: the product of the two stated numbers for 70% of items, their
    sum for the rest; the prompt names the operation, the numbers rule does not read it."""

    id = "toy.product"

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        a, b = chooser.randint(2, 40), chooser.randint(2, 40)
        times = chooser.random() < 0.7
        body = f"a is {a}.\nb is {b}.\n\n{'Multiply' if times else 'Add'} a and b (1 answer)."
        return Generated({"a": a, "b": b, "times": times}, str(a * b if times else a + b), body)


def test_a_numbers_rule_is_learned_on_the_train_split_and_read_numerically() -> None:
    """Issue 41: open answers get the rule over the description's numbers most often right
    in training (the question's own numbers, "1 answer", are not read); a guess is right
    within DyVal's relative 1e-4 ("12.0" for "12")."""
    result = audit_level(_Product(), "L1", count=200, seed=2, train_count=200)
    (rule,) = [b for b in result.baselines if b.kind == "numbers"]
    assert rule.name == "numbers rule (product)" and "product: " in rule.doc
    assert 0.6 < rule.accuracy < 0.8 and rule.abstained == 0
    assert result.best is rule and rule.accuracy > result.bound


def test_zebra_reports_cells_and_whole_grids_and_the_unary_clue_reading() -> None:
    """Issue 41: zebra's baselines are scored on whole grids (next to the paper's chance)
    and on cells (next to one over the houses); reading the found_at / not_at clues alone
    places most of a 2x2 grid's cells and solves a third or more of its grids, far above
    chance (0.25): the task itself at that size (docs/tasks/zebra.md). The test split holds
    12 distinct 2x2 problems among 30 items, each counted once."""
    result = audit_level("zebra.grid", "2x2", count=30, seed=1, train_count=30)
    rows = {b.name: b for b in result.baselines}
    assert result.partial_chance == 0.5 and result.partial_bound == pytest.approx(0.6)
    assert all(b.partial is not None for b in result.baselines)
    unary = rows["unary clues"]
    assert unary.accuracy > 0.3 and unary.partial is not None and unary.partial > 0.65
    assert rows["answer prior"].accuracy == 0 and (rows["answer prior"].partial or 0) < 0.2
    data = result.to_dict()
    assert data["partial_chance"] == 0.5 and data["partial_bound"] == pytest.approx(0.6)
    assert {b["name"]: b["partial"] for b in data["baselines"]}["unary clues"] == round(
        unary.partial, 4
    )


def test_each_options_text_is_read_with_the_options_names_masked() -> None:
    """Issue 41: names drawn afresh per story hide the words around them from a bag of
    words; masked, "<the option> punched a wall" is one feature across stories."""
    got = mask_options({"Ann": "Ann met Bob. ANN and bob's Annie", "Bob": "Bob saw Ann Lee"})
    assert got == {
        "Ann": "optionself met optionother. optionself and optionother's Annie",
        "Bob": "optionself saw optionother Lee",
    }


def test_naive_bayes_is_deterministic_and_learns_words() -> None:
    docs = [features(t) for t in ("red apple", "red cherry", "green pear", "green lime")]
    nb = NaiveBayes().fit(docs, ["red", "red", "green", "green"])
    assert nb.predict(features("a red plum")) == "red"
    assert nb.predict(features("green grape")) == "green"
    assert nb.predict(features("unseen words")) == "green"  # a tie goes to the first class


def test_multiple_choice_baselines_use_the_problem_choices() -> None:
    result = audit_level("musr.murder_mystery", "L1", count=20, seed=1, train_count=20)
    names = {b.name for b in result.baselines}
    assert {"position prior", "most mentioned choice"} <= names
    assert result.chance == 0.5


def test_cli_prints_every_baseline_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "dyval.reachability", "--level", "D1", "--count", "20",
                 "--train-count", "20"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "dyval.reachability D1: n=20, chance 0.500 (uniform over 2 answers)" in out
    assert "description order" in out and "95% Wilson" in out
    assert main(["audit", "flenqa.ruletaker", "--level", "250", "--count", "10",
                 "--train-count", "10", "--json"]) == 0  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert [(d["task"], d["level"]) for d in data] == [("flenqa.ruletaker", "250")]
    assert {"rule traits occur", "answer prior"} <= {b["name"] for b in data[0]["baselines"]}


def test_the_default_audit_is_the_built_in_families(capsys: pytest.CaptureFixture[str]) -> None:
    """The reasoning-gym pack's 88 datasets are audited only when named (docs/tasks/gym.md)."""
    assert hooks.is_pack(get_task("gym.basic_arithmetic")) and not hooks.is_pack(get_task("dyval.arithmetic"))
    assert main(["audit", "--level", "L0", "--count", "5"]) == 4  # only gym tasks have L0
    assert capsys.readouterr().err.strip() == (
        "pytest-reasoning: error: --level: no built-in task has a level 'L0' (a pack's tasks, "
        "gym.<name>, are audited only when named)"
    )
    got = audit(["gym.basic_arithmetic"], levels=["L0"], count=10, train_count=10)
    assert [(a.task, a.level) for a in got] == [("gym.basic_arithmetic", "L0")]


# Starts worker processes (e2e): CI runs it, the inner loop does not.
@pytest.mark.e2e
def test_parallel_audit_keeps_task_and_level_order() -> None:
    seen: list[tuple[str, str]] = []
    out = audit(
        ["dyval.boolean_logic", "dyval.reachability"],
        levels=["D1", "D2"],
        count=10,
        train_count=10,
        jobs=2,
        progress=lambda a: seen.append((a.task, a.level)),
    )
    expected = [
        (t, lv) for t in ("dyval.boolean_logic", "dyval.reachability") for lv in ("D1", "D2")
    ]
    assert [(a.task, a.level) for a in out] == expected == seen


# -- the bound every registered task x level keeps (docs/audit.md) ---------------------------
BOUND = 0.10  # a shortcut may beat max(chance, majority) by at most this much
CONFIDENCE = 0.99  # ... judged by its Wilson lower bound, so sampling noise never fails CI

# Properties that are the paper's own, each with the highest accuracy measured over the task's
# levels by `pytest-reasoning audit --count 200` (seed 1, train split vs test split; every
# level's numbers are in docs/audit.md). The bound for these is the documented number: a change
# that makes the shortcut stronger still fails.
EXCEPTIONS: dict[tuple[str, str], tuple[float, str]] = {
    ("flenqa.monorel", "subject pattern"): (
        0.86,
        "the paper's False question is the True one reversed: its first person is never the "
        "subject of the asked relation in a key sentence",
    ),
    ("flenqa.people_in_rooms", "asked property occurs"): (
        1.0,
        "the paper's own design under 'different' padding (no other property in the text); "
        "'similar' padding brings it to 0.615 at 3000 tokens",
    ),
    ("flenqa.people_in_rooms", "surface features"): (
        1.0,
        "as 'asked property occurs': the learner counts the question's own words in the text",
    ),
    ("flenqa.ruletaker", "rule traits occur"): (
        1.0,
        "the paper's own design under 'different' padding; 'similar' padding: 0.54 at 3000",
    ),
    ("musr.object_placement", "start_location"): (
        0.39,
        "the paper's design: a belief is a place the item was, and a person who saw no move "
        "believes the start (L1 0.39, L2 0.325, L3 0.235 at 200 items)",
    ),
    ("musr.object_placement", "item_place"): (
        0.39,
        "as start_location: a belief is a place the item was (its start or a move's end)",
    ),
    ("musr.object_placement", "own_move"): (
        0.385,
        "as start_location: where the asked person last put the item is what they believe",
    ),
    ("musr.object_placement", "previous_location"): (0.36, "as start_location"),
    ("musr.object_placement", "surface features (per choice)"): (
        0.39,
        "as start_location, learnt per choice: 23 of 40 at L1 seed 1 of issue 41's split (by "
        "the problem up to renaming), 9-19 of 40 at seeds 2-11",
    ),
    ("musr.team_allocation", "praise_words"): (
        0.985,
        "the paper's own design: skill and teamwork evidence is worded for or against, and the "
        "best allocation is a sum of it (a template narrator states the polarity in words)",
    ),
    ("musr.team_allocation", "bag of words (naive Bayes) (per choice)"): (
        1.0,
        "as praise_words: summing the evidence's polarity per allocation is the task's own sum",
    ),
    ("musr.team_allocation", "bag of words (logistic) (per choice)"): (1.0, "as praise_words"),
    ("musr.team_allocation", "surface features (per choice)"): (0.995, "as praise_words"),
    # Issue 41: where the signal is the task itself (docs/tasks/*.md, beside the level).
    ("dyval.arithmetic", "numbers rule"): (
        0.322,
        "D1 is one operation over one or two values: a rule that applies one operation "
        "without reading it scores that operation's share of the level's problems (x 0.322, "
        "+ 0.262 of D1's 183 test problems; docs/tasks/dyval.md)",
    ),
    ("musr.murder_mystery", "bag of words (logistic) (per choice)"): (
        0.66,
        "who wronged whom is stated in every motive sentence (the name next to the grudge): "
        "the innocent lacking a motive is found 0.96 of the time, the others at chance "
        "(docs/tasks/musr.md)",
    ),
    ("musr.murder_mystery", "bag of words (naive Bayes) (per choice)"): (0.66, "as logistic"),
    ("musr.murder_mystery", "surface features (per choice)"): (0.60, "as logistic"),
    ("zebra.grid", "unary clues"): (
        0.72,
        "a 2x2 grid is mostly placed by its found_at / not_at clues: reading them is the task "
        "(docs/tasks/zebra.md; 3x3 0.12, 4x4 and up 0)",
    ),
}
# The same for zebra's cells (the share of right cells; bound: one over the houses + 0.10).
CELL_EXCEPTIONS: dict[tuple[str, str], tuple[float, str]] = {
    ("zebra.grid", "unary clues"): (
        0.85,
        "the positional clues place 0.80 of a 2x2 grid's cells and 0.35 of a 6x6's (chance "
        "0.50 / 0.17; docs/tasks/zebra.md)",
    ),
}


def _rule(name: str) -> str:
    """A baseline's name as the exceptions know it: the numbers rule without its pick."""
    return "numbers rule" if name.startswith("numbers rule (") else name


def _count(task_id: str) -> int:
    """Items of each split: 40 (the interval then catches any shortcut 0.25 above the bound);
    zebra's 29 levels get 12 each."""
    return 12 if len(get_task(task_id).levels) > 10 else 40


# The built-in families; the reasoning-gym pack's datasets are not ours to fix:
# docs/tasks/gym.md records and marks their audit instead of gating it here.
CASES = [(t, lv) for t in task_ids() if not hooks.is_pack(get_task(t)) for lv in get_task(t).levels]


@pytest.mark.e2e  # 81 levels x both splits x every learner: minutes of CPU, not the inner loop
@pytest.mark.parametrize(("task_id", "level"), CASES, ids=[f"{t}-{lv}" for t, lv in CASES])
def test_no_learner_or_rule_beats_the_bound(task_id: str, level: str) -> None:
    """Issue 33.4: every baseline (rules, bag of words, surface features) at most
    max(chance, majority) + 0.10, judged by its 99% Wilson lower bound, or at most its
    documented exception."""
    n = _count(task_id)
    result = audit_level(task_id, level, count=n, train_count=n, seed=1, confidence=CONFIDENCE)
    assert result.baselines
    for b in result.baselines:
        allowed, why = EXCEPTIONS.get((task_id, _rule(b.name)), (result.bound, ""))
        allowed = max(allowed, result.bound)
        assert b.low <= allowed, (
            f"{task_id} {level}: '{b.name}' answers {b.correct}/{b.n} (Wilson 99% lower bound "
            f"{b.low:.3f}) against max(chance {result.chance:.3f}, majority "
            f"{result.majority:.3f}) + {BOUND}"
            + (f" and the documented {allowed:.3f} ({why})" if why else "")
        )
        if b.partial is None or result.partial_bound is None:
            continue
        # Cells, judged as a share of items (cells of one grid are not independent).
        low = wilson_interval(round(b.partial * b.n), b.n, CONFIDENCE)[0]
        cells, why = CELL_EXCEPTIONS.get((task_id, b.name), (result.partial_bound, ""))
        assert low <= max(cells, result.partial_bound), (
            f"{task_id} {level}: '{b.name}' gets {b.partial:.3f} of the cells (Wilson 99% "
            f"lower bound {low:.3f}) against {result.partial_bound:.3f}"
            + (f" and the documented {cells:.3f} ({why})" if why else "")
        )


@pytest.mark.parametrize(
    ("task_id", "level"), [("dyval.deductive_logic", "D3"), ("dyval.arithmetic", "D1")]
)
def test_the_generic_learners_keep_the_bound_where_they_did_not(task_id: str, level: str) -> None:
    """Issue 29.7's two cases, in the inner loop: gradient boosting on surface features
    scored 0.63 at deductive D3 (chance 0.50), and a bag of words 0.16 at arithmetic D1
    (majority 0.055) by recalling problems of its training seed."""
    result = audit_level(task_id, level, count=60, seed=1, train_count=60)
    learners = [b for b in result.baselines if b.kind in ("bow", "surface")]
    # Deductive D3's test split holds 21 problems up to renaming since its leaves are drawn
    # paired with the other answer (issue 41; docs/tasks/splits.md), each counted once.
    least = 21 if task_id == "dyval.deductive_logic" else 60
    assert learners and least <= result.count <= 60 and least <= result.train_count <= 60
    if task_id == "dyval.deductive_logic":
        assert {b.kind for b in learners} == {"bow", "surface"}
    for b in learners:
        assert b.accuracy <= result.bound, (b.name, b.accuracy, result.bound)


@pytest.mark.e2e  # 400 generated problems and every learner per level: a minute of CPU
@pytest.mark.parametrize(
    ("task_id", "level"),
    [("dyval.deductive_logic", "D3"), ("dyval.boolean_logic", "D3"), ("dyval.max_sum_path", "D1")],
)
def test_issue_41_levels_keep_the_bound_trained_on_every_training_problem(
    task_id: str, level: str
) -> None:
    """Issue 41: trained on 600 problems, gradient boosting on the prompt's counts scored
    0.705 at deductive D3 and 0.66 at boolean D3 (the leaf counts told the answer within a
    split), and "the asked values plus the largest other" up to 0.21 at max-sum path D1 (bound
    about 0.17). Every rule and learner now keeps the bound on the level's test problems: 400
    of max-sum path D1, and all that the logic D3 test splits hold up to renaming (21 and 33,
    docs/tasks/splits.md), each counted once: seed 1's first 60 test items hold every one of
    them. Their training splits hold 39 and 33 problems up to renaming, all within seed 1's
    first 60 training items: asking 600 gave the same training set and the same accuracy for
    every baseline (measured), at three times the CPU."""
    count = 400 if task_id == "dyval.max_sum_path" else 60
    train = 600 if task_id == "dyval.max_sum_path" else 60
    result = audit_level(task_id, level, count=count, train_count=train, seed=1)
    least = {"dyval.deductive_logic": 21, "dyval.boolean_logic": 33}.get(task_id, 400)
    trained = {"dyval.deductive_logic": 39, "dyval.boolean_logic": 33}.get(task_id, 400)
    assert least <= result.count <= count and result.train_count >= trained
    for b in result.baselines:
        assert b.accuracy <= result.bound, (b.name, b.accuracy, result.bound)


def test_every_exception_names_a_task_and_a_baseline_it_has() -> None:
    for (task_id, name), (accuracy, why) in [*EXCEPTIONS.items(), *CELL_EXCEPTIONS.items()]:
        task = get_task(task_id)
        declared = {r.name for r in hooks.shortcuts(task)}
        generic = {"prompt length", "most mentioned choice", "position prior", "answer prior",
                   "numbers rule"}  # fmt: skip
        learner = name.startswith(("bag of words", "surface features", "surface counts"))
        assert name in declared | generic or learner, name
        assert 0 < accuracy <= 1 and why


def test_a_file_of_items_is_audited_as_it_is(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 23: the audit runs on narrated (or exported, or a user's own) files: per task x
    level, the halves drawn by a hash of the id, not by position (generators balance answers
    by index, so alternate items would put one answer in each half)."""
    from pytest_reasoning.audit import audit_dataset

    path = tmp_path / "items.jsonl"
    # Boolean logic's D3 and D4 (True/False, balanced by index; 40 distinct problems of D3's
    # 47 up to renaming, 120 of D4): 0.5 s to export, where reachability's balanced graphs
    # took 2.6 s (D1 and D2).
    for level, count in (("D3", "40"), ("D4", "120")):
        assert main(["export", "dyval.boolean_logic", "--level", level, "--count", count,
                     "-q", "-o", str(tmp_path / f"{level}.jsonl")]) == 0  # fmt: skip
    path.write_text((tmp_path / "D3.jsonl").read_text() + (tmp_path / "D4.jsonl").read_text())
    got = audit_dataset(str(path))
    assert [(a.task, a.level) for a in got] == [("dyval.boolean_logic", lv) for lv in ("D3", "D4")]
    for a in got:
        assert 10 < a.count < 90 and a.chance == 0.5
        prior = next(b for b in a.baselines if b.name == "answer prior")
        assert 0.3 < prior.accuracy < 0.7  # both answers in each half
    # The command: JSON, seed -1 (the items name their own); a TASK beside --dataset is refused.
    capsys.readouterr()
    assert main(["audit", "--dataset", str(path), "--level", "D4", "--json"]) == 0
    (only,) = json.loads(capsys.readouterr().out)
    assert only["level"] == "D4" and only["seed"] == -1
    assert main(["audit", "--dataset", str(path), "dyval.boolean_logic"]) == 4
    assert capsys.readouterr().err.strip() == (
        "pytest-reasoning: error: --dataset: audits the file's own tasks; name no TASK"
    )
