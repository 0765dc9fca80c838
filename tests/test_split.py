"""The train/test split (issue 29.6, docs/tasks/splits.md): suites and ``export`` draw test
problems, ``export --split train`` train problems, and no problem is in both."""

from __future__ import annotations

import json

import pytest

from pytest_reasoning.cli import main
from pytest_reasoning.core import canonical_json
from pytest_reasoning.registry import get_task, task_ids

BUILT_IN = [t for t in task_ids() if not get_task(t).pack]
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
        items = [task.make_item(level, 1, i, split=split) for i in range(n)]
        assert all(task.split_of(i.problem) == split for i in items), (task_id, level, split)
        keys[split] = {canonical_json(dict(task.identity(i.problem))) for i in items}
    assert not keys["test"] & keys["train"]


def test_the_split_partitions_problems_about_half_and_half() -> None:
    """Raw draws (no split asked) fall in test about half the time: the splits are alike."""
    task = get_task("dyval.arithmetic")
    from pytest_reasoning.rng import SeededChooser, derive_seed

    params = task.resolve_params("D4")
    splits = [
        task.split_of(task.generate(SeededChooser(derive_seed("raw", i)), params, i).problem)
        for i in range(400)
    ]
    assert 160 < splits.count("test") < 240


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
        assert all(task.split_of(r["problem"]) == split for r in rows[split])
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
