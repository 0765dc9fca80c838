"""ZebraLogic past 6x6 (issue 33): the leaderboard's size buckets as levels, the difficulty
measures every results row carries, red herrings that leave the solution as it was (gold
re-solved by the brute-force enumerator of ``test_zebra`` and by the text-reading solver), and
sizes to 8x8."""

from __future__ import annotations

import json
import math
import re
import statistics
from typing import Any

import pytest
from hypothesis import strategies as st

from conftest import inner_and_sweep
from pytest_reasoning.errors import InvalidArgument
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.tasks.zebra import solver
from pytest_reasoning.tasks.zebra.clues import names
from pytest_reasoning.tasks.zebra.herrings import ATTRIBUTES, FACTS, KINDS
from pytest_reasoning.tasks.zebra.pools import FEATURES
from pytest_reasoning.tasks.zebra.task import BUCKETS
from tasks.test_zebra import brute_force

ZEBRA = get_task("zebra.grid")

# The leaderboard's buckets as the issue lists them (written out here, not imported).
LEADERBOARD = {
    "Small": {"2x2", "2x3", "2x4", "2x5", "2x6", "3x2", "3x3", "4x2"},
    "Medium": {"3x4", "3x5", "3x6", "4x3", "4x4", "5x2", "6x2"},
    "Large": {"4x5", "5x3", "4x6", "5x4", "6x3"},
    "XL": {"5x5", "6x4", "5x6", "6x5", "6x6"},
}


def _space(size: str) -> float:
    n, m = map(int, size.split("x"))
    return m * math.log10(math.factorial(n))


def test_buckets_are_the_leaderboards_and_split_the_search_space() -> None:
    assert {k: set(v) for k, v in BUCKETS.items()} == LEADERBOARD
    assert set(BUCKETS) <= set(ZEBRA.levels)  # `pytest-reasoning tasks` lists them
    # Small < 10^3 <= Medium < 10^6 <= Large < 10^10 <= XL, as the paper bins them.
    bounds = {"Small": (0, 3), "Medium": (3, 6), "Large": (6, 10), "XL": (10, 99)}
    for bucket, sizes in LEADERBOARD.items():
        low, high = bounds[bucket]
        assert all(low <= _space(s) < high for s in sizes), bucket


@pytest.mark.parametrize("bucket", list(BUCKETS))
def test_bucket_items_take_their_sizes_in_turn_and_are_re_solved(bucket: str) -> None:
    sizes = BUCKETS[bucket]
    for index in range(len(sizes)):
        item = make_item(ZEBRA, bucket, 5, index)
        p = item.problem
        assert p["size"] == sizes[index] == f"{p['houses']}x{len(p['features'])}"
        assert p["search_space_log10"] == pytest.approx(_space(p["size"]), abs=1e-6)
        # Gold re-solved from the prompt text alone by the propagation solver.
        assert solver.count_solutions(solver.parse_prompt(item.prompt)) == [json.loads(item.answer)]


@pytest.mark.parametrize("level", ["7x7", "8x8"])
def test_past_6x6_the_gold_is_the_only_solution(level: str) -> None:
    for index in range(2):
        item = make_item(ZEBRA, level, 9, index)
        assert solver.count_solutions(solver.parse_prompt(item.prompt)) == [json.loads(item.answer)]


def test_custom_sizes_and_bad_sizes() -> None:
    item = make_item(ZEBRA, "XL", 1, 1, {"sizes": ["7x7", "8x8"]})
    assert item.problem["size"] == "8x8"
    with pytest.raises(InvalidArgument, match="knob 'sizes': '9x' is not a size"):
        make_item(ZEBRA, "XL", 1, 0, {"sizes": ["9x"]})
    with pytest.raises(InvalidArgument, match="knob 'houses': not with 'sizes'"):
        make_item(ZEBRA, "XL", 1, 0, {"houses": 4})
    with pytest.raises(InvalidArgument, match="knob 'red_herrings': must be <= 8"):
        make_item(ZEBRA, "4x4", 1, 0, {"red_herrings": 9})


def test_difficulty_measures_reach_the_results_row() -> None:
    item = make_item(ZEBRA, "Large", 2, 3, {"red_herrings": 2})
    for response in (hooks.reference_response(ZEBRA, item), "no grid here", '{"House 1": {}}'):
        extra = ZEBRA.score(item, response).extra
        assert extra["size"] == item.problem["size"]
        assert extra["search_space_log10"] == item.problem["search_space_log10"]
        assert extra["sat_conflicts"] == item.problem["sat_conflicts"] >= 0
        assert extra["red_herrings"] == 2


# An 8x8 item takes ~0.1 s to draw: the inner loop compares medians of three items a size
# (3x3: 1, 0, 0; 8x8: 2, 9, 33), CI of eight.
@pytest.mark.parametrize("items", [3, pytest.param(8, marks=pytest.mark.e2e)])
def test_conflicts_grow_with_the_size(items: int) -> None:
    def median(level: str) -> float:
        return statistics.median(
            make_item(ZEBRA, level, 4, i).problem["sat_conflicts"] for i in range(items)
        )

    assert median("3x3") < median("8x8")


# -- red herrings ------------------------------------------------------------------------------
def _real(problem: dict[str, Any]) -> dict[str, Any]:
    return {**problem, "clues": [c for c in problem["clues"] if c["kind"] != "red_herring"]}


def _red_herrings_leave_the_gold_the_only_solution(
    level: str, count: int, seed: int, index: int
) -> None:
    item = make_item(ZEBRA, level, seed, index, {"red_herrings": count})
    herrings = [c for c in item.problem["clues"] if c["kind"] == "red_herring"]
    assert len(herrings) == count == item.problem["red_herrings"]
    gold = json.loads(item.answer)
    # The real clues alone force the gold grid (brute force, apart from generator and solver);
    # the reference solver reads the whole prompt, herrings and all, to the same grid.
    assert brute_force(_real(item.problem)) == [gold]
    assert ZEBRA.solve(item) == item.answer
    assert ZEBRA.score(item, hooks.reference_response(ZEBRA, item)).correct
    # Each herring attribute is named once: no two herrings can combine into a constraint.
    for _, says in ATTRIBUTES:
        mark = says.split()[-1]  # the attribute's own word ("glasses")
        assert len(re.findall(rf"\b{mark}\b", item.prompt)) <= 1, says
    # The kinds come round in turn: any 8 herrings use all eight.
    if count == 8:
        assert {c["herring"] for c in herrings} == set(KINDS)


(
    test_red_herrings_leave_the_gold_the_only_solution,
    test_red_herrings_leave_the_gold_the_only_solution_sweep,
) = inner_and_sweep(
    _red_herrings_leave_the_gold_the_only_solution,
    10,
    30,
    st.sampled_from(["2x2", "2x4", "3x2", "3x3", "4x2", "3x4"]),
    st.integers(1, 8),
    st.integers(0, 10**6),
    st.integers(0, 20),
)


def test_herring_sentences_name_no_value_name_or_relation() -> None:
    values = {v.lower() for f in FEATURES for v in f.values}
    relation = {"left", "right", "next", "door", "between", "same", "house", "houses", "away"}
    first = {n.lower() for n in names()}
    for text in [p for pair in ATTRIBUTES for p in pair] + list(FACTS):
        tokens = set(re.findall(r"[a-z]+", text.lower()))
        assert not tokens & first, text
        assert not {v for v in values if re.search(rf"\b{re.escape(v)}\b", text.lower())}, text
        assert not tokens & relation, text


def test_herrings_change_nothing_when_zero() -> None:
    """red_herrings 0 (the default) draws nothing more: the same puzzle as before the knob."""
    a = make_item(ZEBRA, "4x4", 8, 2)
    b = make_item(ZEBRA, "4x4", 8, 2, {"red_herrings": 0})
    assert a.prompt == b.prompt and a.answer == b.answer
