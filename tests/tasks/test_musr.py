"""MuSR: gold answers against an independent Φ, the paper's sanity baselines near chance,
validators that keep conclusions out of the story, tree depth per level, the scorer, styles."""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import export_digests, inner_and_sweep
from pytest_reasoning.errors import ReasoningError
from pytest_reasoning.registry import get_task
from pytest_reasoning.rng import SeededChooser
from pytest_reasoning.strategies import (
    murder_mystery_problems,
    object_placement_problems,
    team_allocation_problems,
)
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.draw import split_of
from pytest_reasoning.tasks.musr import murder, placement, teams
from pytest_reasoning.tasks.musr.examples import solved
from pytest_reasoning.tasks.musr.reasoning import Step, check
from pytest_reasoning.tasks.musr.shortcuts import bag_of_words
from pytest_reasoning.tasks.musr.story import fact_recall
from pytest_reasoning.tasks.musr.task import MusrTask, extract_choice
from pytest_reasoning.tasks.musr.trees import Fact, FactType, Node, banned_pattern, grow, leaks
from pytest_reasoning.tasks.sampler import make_item

MURDER, PLACEMENT, TEAMS = "musr.murder_mystery", "musr.object_placement", "musr.team_allocation"
DOMAINS = (MURDER, PLACEMENT, TEAMS)
LEVELS = ("L1", "L2", "L3")
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _items(task_id: str, level: str, n: int, seed: int = 11) -> list[Any]:
    """Items ``0..n-1`` of a level (cached per process and per item: several tests read the
    same ones, and one test's items are often the first of another's)."""
    return [_cached_item(task_id, level, seed, i) for i in range(n)]


@functools.cache
def _cached_item(task_id: str, level: str, seed: int, index: int) -> Any:
    return make_item(get_task(task_id), level, seed, index)


# -- gold answers against Φ written in the test ---------------------------------------------------
def _murderer(problem: dict[str, Any]) -> str:
    full = [
        s["name"] for s in problem["suspects"] if s["means"] and s["motive"] and s["opportunity"]
    ]
    assert len(full) == 1
    other = next(s for s in problem["suspects"] if s["name"] != full[0])
    assert sum(other[e] for e in ("means", "motive", "opportunity")) == 2
    for s in problem["suspects"]:  # the same pools for both: a tree per element, a red herring
        assert set(s["trees"]) == {"means", "motive", "opportunity", "suspicious"}
    return full[0]


def _belief(problem: dict[str, Any]) -> str:
    who, item = problem["query"]["person"], problem["query"]["item"]
    seen = [
        m["to"]
        for m in problem["moves"]
        if m["item"] == item and (m["person"] == who or who in m["seen_by"])
    ]
    return seen[-1] if seen else problem["start"][item]


def _allocation_scores(problem: dict[str, Any]) -> dict[tuple[tuple[str, ...], ...], int]:
    people, skills = problem["people"], problem["skills"]
    team = {frozenset(t["pair"]): t["score"] for t in problem["teamwork"]}
    out = {}
    for single, job in itertools.product(people, (0, 1)):
        pair = tuple(sorted(p for p in people if p != single))
        groups = [pair, (single,)] if job == 1 else [(single,), pair]
        total = sum(skills[p][j] for j, g in enumerate(groups) for p in g) + team[frozenset(pair)]
        out[tuple(groups)] = total
    return out


def _murder_gold_is_the_only_suspect_with_all_three(item: Any) -> None:
    assert item.answer == _murderer(item.problem)
    assert item.problem["choices"][item.problem["answer_index"]] == item.answer


(
    test_murder_gold_is_the_only_suspect_with_all_three,
    test_murder_gold_is_the_only_suspect_with_all_three_sweep,
) = inner_and_sweep(
    _murder_gold_is_the_only_suspect_with_all_three,
    15,
    60,
    murder_mystery_problems(level=st.sampled_from(["L1", "L2", "L3"])),
)


def _placement_gold_is_the_last_move_seen_else_the_start(item: Any) -> None:
    p = item.problem
    assert item.answer == _belief(p)
    assert len(p["choices"]) == len(set(p["choices"])) and item.answer in p["choices"]
    for m in p["moves"]:
        assert m["person"] not in m["seen_by"]  # the mover knows; the others may have seen
        assert set(m["trees"]) == set(p["people"]) - {m["person"]}


(
    test_placement_gold_is_the_last_move_seen_else_the_start,
    test_placement_gold_is_the_last_move_seen_else_the_start_sweep,
) = inner_and_sweep(
    _placement_gold_is_the_last_move_seen_else_the_start,
    15,
    60,
    object_placement_problems(
        level=st.sampled_from(["L1", "L2", "L3"]),
        people=st.integers(2, 5),
        items=st.integers(1, 4),
        moves=st.integers(1, 8),
        see_prob=st.sampled_from([0.0, 0.33, 1.0]),
    ),
)


def _teams_gold_beats_every_other_allocation_by_the_margin(item: Any) -> None:
    p = item.problem
    scores = _allocation_scores(p)
    gold = tuple(tuple(sorted(g)) for g in p["choices"][p["answer_index"]])
    assert all(scores[gold] - s >= item.params["margin"] for a, s in scores.items() if a != gold)
    assert len(p["choices"]) == 3 and len({str(c) for c in p["choices"]}) == 3
    assert all(0 <= v <= 2 for skills in p["skills"].values() for v in skills)


(
    test_teams_gold_beats_every_other_allocation_by_the_margin,
    test_teams_gold_beats_every_other_allocation_by_the_margin_sweep,
) = inner_and_sweep(
    _teams_gold_beats_every_other_allocation_by_the_margin,
    15,
    60,
    team_allocation_problems(level=st.sampled_from(["L1", "L2", "L3"]), margin=st.integers(1, 3)),
)


@FAST
@given(st.integers(0, 3**9 - 1))
def test_the_lead_table_agrees_with_best_allocation(row: int) -> None:
    # _leads sums the six allocations' scores by index; best_allocation goes through dicts.
    flat, lead = teams._leads()[row]
    people = ("ann", "bob", "cy")
    skills = {p: [flat[2 * k], flat[2 * k + 1]] for k, p in enumerate(people)}
    teamwork = {
        teams.pair_key(people[a], people[b]): flat[6 + n]
        for n, (a, b) in enumerate(((0, 1), (0, 2), (1, 2)))
    }
    assert teams.best_allocation(people, skills, teamwork)[1] == lead


@pytest.mark.parametrize("task_id", DOMAINS)
def test_the_reference_solver_agrees_with_the_generator(task_id: str) -> None:
    task = get_task(task_id)
    for item in _items(task_id, "L2", 60):
        assert task.solve(item) == item.answer


# -- sanity baselines (the paper's rule baselines stay near chance) -------------------------------
# Sweeps over hundreds of stories are marked e2e: CI runs them (with the audit's own sweep in
# tests/conformance/test_audit.py), the inner loop keeps one level of each.
@pytest.mark.e2e
def test_longest_chapter_does_not_find_the_murderer() -> None:
    """500 stories: the suspect with the longer chapter is the murderer about half the time."""
    hits = 0
    for item in _items(MURDER, "L3", 500):
        spans = item.problem["chapters"]
        longest = max(item.problem["choices"], key=lambda name: spans[name][1] - spans[name][0])
        hits += longest == item.answer
    assert abs(hits / 500 - 0.5) < 0.08, hits


@pytest.mark.e2e
def test_most_mentioned_location_is_near_chance() -> None:
    """500 stories: the most-named choice is the believed place about a quarter of the time."""
    hits = 0
    for item in _items(PLACEMENT, "L3", 500):
        story, choices = item.problem["story"], item.problem["choices"]
        counts = [len(re.findall(rf"(?<!\w){re.escape(c)}(?!\w)", story)) for c in choices]
        hits += choices[counts.index(max(counts))] == item.answer
    assert abs(hits / 500 - 0.25) < 0.1, hits


# -- validators ------------------------------------------------------------------------------
def test_leaks_finds_whole_banned_words_only() -> None:
    pattern = banned_pattern(["motive", "the pastry case"])
    tree = Node(
        "gold",
        "gold",
        (Node("Ann had a motive.", "scenario"), Node("Motives vary.", "commonsense")),
    )
    assert leaks(tree, pattern) == ["Ann had a motive."]  # "Motives" is another word
    assert leaks(Node("g", "gold", (Node("It was in The Pastry Case", "scenario"),)), pattern)
    assert leaks(tree, None) == []


def test_grow_rejects_a_leaking_expansion_and_keeps_the_clean_one() -> None:
    def leaky(s: Any, ch: Any) -> tuple[list[Fact], str]:
        return [Fact("leaf", {"x": "the motive was money"})], "A rule."

    def clean(s: Any, ch: Any) -> tuple[list[Fact], str]:
        return [Fact("leaf", {"x": "money was short"})], "A rule."

    lib = {"gold": FactType(("gold fact",), (leaky, clean)), "leaf": FactType(("{x}",))}
    for seed in range(30):
        tree = grow(
            lib, Fact("gold", {}), 1, SeededChooser(seed), banned_pattern(["motive"]), "gold"
        )
        assert tree.leaves() == ["Money was short"]
    only_leaky = {"gold": FactType(("gold fact",), (leaky,)), "leaf": FactType(("{x}",))}
    with pytest.raises(ReasoningError, match="every expansion of 'gold' leaks"):
        grow(only_leaky, Fact("gold", {}), 1, SeededChooser(0), banned_pattern(["motive"]))


def _texts(tree: dict[str, Any]) -> list[str]:
    return [t for c in tree.get("children", []) for t in (c["text"], *_texts(c))]


def _leaves(tree: dict[str, Any]) -> list[str]:
    kids = [c for c in tree.get("children", []) if c["kind"] != "commonsense"]
    return [tree["text"]] if not kids else [x for c in kids for x in _leaves(c)]


def _height(tree: dict[str, Any]) -> int:
    kids = [c for c in tree.get("children", []) if c["kind"] != "commonsense"]
    return 1 + max(map(_height, kids)) if kids else 0


@pytest.mark.parametrize(
    ("level", "count"),
    [("L1", 30), ("L2", 30), *(pytest.param(x, 60, marks=pytest.mark.e2e) for x in LEVELS)],
)
def test_no_story_states_a_conclusion_and_trees_reach_the_level_depth(
    level: str, count: int
) -> None:
    """Every tree at the level's depth, no tree's text with a banned word, no gold fact told
    (30 stories a domain in the inner loop, 60 in the e2e twin)."""
    depth = int(level[1])
    for item in _items(MURDER, level, count):
        story = item.problem["story"].lower()
        for s in item.problem["suspects"]:
            for kind, tree in s["trees"].items():
                assert _height(tree) == depth
                bad = banned_pattern(murder.BANNED[kind])
                assert bad is not None and not [t for t in _texts(tree) if bad.search(t)]
                assert tree["text"].lower() not in story  # the gold fact is never told
        for phrase in ("motive", "opportunity", "the means", "murderer", "killer"):
            assert phrase not in story.split("who is the most likely")[0]
    for item in _items(PLACEMENT, level, count):
        for m in item.problem["moves"]:
            for tree in m["trees"].values():
                assert _height(tree) == depth
                for text in _texts(tree):
                    assert m["item"] not in text and m["to"] not in text
                    assert not re.search(r"\b(saw|noticed|watched)\b", text)
    for item in _items(TEAMS, level, count):
        skill, team = banned_pattern(teams.SKILL_BANNED), banned_pattern(teams.TEAM_BANNED)
        for trees in item.problem["trees"].values():
            for tree in trees:
                assert _height(tree) == depth
                bad = team if " together" in tree["text"] else skill
                assert bad is not None and not [t for t in _texts(tree) if bad.search(t)]
                assert tree["text"] not in item.problem["story"]


@pytest.mark.parametrize("task_id", DOMAINS)
def test_every_scenario_fact_is_told_in_its_chapter(task_id: str) -> None:
    """The fact-recall validator (what an LLM narrator's chapters must pass) accepts every
    template chapter: each leaf of the chapter's trees is in it."""
    for item in _items(task_id, "L3", 20):
        p, story = item.problem, item.problem["story"]

        def chapter(name: str, p: dict[str, Any] = p, story: str = story) -> str:
            start, end = p["chapters"][name]
            return story[start:end]

        if task_id == MURDER:
            for s in p["suspects"]:
                facts = [leaf for t in s["trees"].values() for leaf in _leaves(t)]
                assert fact_recall(chapter(s["name"]), facts) == []
                other = next(o for o in p["suspects"] if o is not s)
                assert fact_recall(chapter(other["name"]), facts)  # it does notice absence
        elif task_id == PLACEMENT:
            for n, m in enumerate(p["moves"], 1):
                facts = [leaf for t in m["trees"].values() for leaf in _leaves(t)]
                assert fact_recall(chapter(f"move {n}"), facts) == []
        else:
            for person, trees in p["trees"].items():
                facts = [leaf for t in trees for leaf in _leaves(t)]
                assert fact_recall(chapter(person), facts) == []


# The near-duplicate check reads the first 40 stories at either size; the word count reads all.
@pytest.mark.parametrize("count", [40, pytest.param(100, marks=pytest.mark.e2e)])
def test_murder_stories_at_l3_are_at_least_600_words_and_not_near_duplicates(count: int) -> None:
    stories = [item.problem["story"] for item in _items(MURDER, "L3", count)]
    assert min(len(s.split()) for s in stories) >= 600
    grams = [
        set(zip(*(w[i:] for i in range(4)), strict=False))
        for w in (s.lower().split() for s in stories)
    ]
    overlap = [len(a & b) / len(a | b) for a, b in itertools.combinations(grams[:40], 2)]
    assert max(overlap) < 0.5 and sum(overlap) / len(overlap) < 0.2


# -- prompts, styles and scoring --------------------------------------------------------------
@pytest.mark.parametrize("task_id", DOMAINS)
def test_styles_and_the_papers_name_for_direct(task_id: str) -> None:
    task = get_task(task_id)
    plain = make_item(task, "L1", 3, 0, style="regular")
    assert plain.style == "direct" and plain.prompt == make_item(task, "L1", 3, 0).prompt
    cot = make_item(task, "L1", 3, 0, style="cot")
    plus = make_item(task, "L1", 3, 0, style="cot+")
    shot = make_item(task, "L1", 3, 0, style="1shot-cot+")
    assert "How to reason" not in cot.prompt and "How to reason" in plus.prompt
    assert shot.prompt.startswith("Here is a solved example.") and shot.prompt.endswith(
        plus.prompt[-200:]
    )
    example = shot.prompt.split("Now the story to solve.")[0]
    assert "Reasoning:\n1. " in example and re.search(r"ANSWER: \d", example)
    assert plain.problem["story"] not in example  # another story, not the item's own
    assert (
        example
        == make_item(task, "L3", 9, 4, style="1shot-cot+").prompt.split("Now the story to solve.")[0]
    )  # the paper's protocol: one fixed, hand-written example


@pytest.mark.parametrize(
    ("reply", "choice"),
    [
        ("ANSWER: 2", 1),
        ("Reasoning...\n**Answer:** (1)", 0),
        ("The answer is 2.", 1),
        ("I think it was Peggy.\nANSWER: Peggy", 1),
        ("answer: option 1", 0),
        ("<<<2>>>", 1),
        ("Catherine had all three. So the murderer is Catherine.", 0),
        ("2", 1),
        ("Answer: 2\n\nI hope this answer helps.", 1),
        ("Either Catherine or Peggy, hard to say.", None),
        ("ANSWER: 7", None),
        ("", None),
    ],
)
def test_extract_choice(reply: str, choice: int | None) -> None:
    assert extract_choice(reply, [["Catherine"], ["Peggy"]]) == choice


def test_extract_choice_prefers_the_longer_place_name() -> None:
    aliases = [["the desk", "desk"], ["the front desk", "front desk"]]
    assert extract_choice("ANSWER: the front desk", aliases) == 1


def _the_scorer_never_raises(reply: str) -> None:
    for task_id in DOMAINS:
        task = get_task(task_id)
        item = _ITEMS[task_id]
        score = task.score(item, reply)
        assert score.correct in (True, False)


test_the_scorer_never_raises, test_the_scorer_never_raises_sweep = inner_and_sweep(
    _the_scorer_never_raises, 50, 300, st.text()
)


_ITEMS = {t: make_item(get_task(t), "L1", 1, 0) for t in DOMAINS}


def test_failure_modes_say_what_went_wrong() -> None:
    task = get_task(PLACEMENT)
    for item in _items(PLACEMENT, "L2", 80):
        p = item.problem
        for n, choice in enumerate(p["choices"]):
            if choice == item.answer:
                continue
            mode = task.score(item, f"ANSWER: {n + 1}").failure_mode
            if choice == p["true_place"]:
                assert mode == "true_location"
            elif choice == p["start"][p["query"]["item"]]:
                assert mode == "start_location"
            else:
                assert mode == "other_location"
    item = _ITEMS[MURDER]
    wrong = 2 - item.problem["answer_index"]
    assert get_task(MURDER).score(item, f"ANSWER: {wrong}").failure_mode == "accused_innocent"
    assert get_task(MURDER).score(item, "no idea").failure_mode == "no_answer"


def test_team_answer_exports_as_an_allocation_object() -> None:
    task = get_task(TEAMS)
    item = _ITEMS[TEAMS]
    exported = hooks.export_answer(task, item.answer)
    gold = item.problem["choices"][item.problem["answer_index"]]
    assert exported == {t: g for t, g in zip(item.problem["tasks"], gold, strict=True)}


@pytest.mark.e2e
def test_same_seed_same_bytes() -> None:
    digests = export_digests(
        [(t, level, 5, 3, {}, "cot+", True) for t in DOMAINS for level in ("L1", "L3")]
    )
    assert len(set(digests)) == len(digests)


# -- shortcuts (issue 25): what a reader could get right without the reasoning --------------
def _accuracy(task_id: str, level: str, n: int, seed: int = 31) -> dict[str, float]:
    task = get_task(task_id)
    items = _items(task_id, level, n, seed)
    return {s.name: sum(s.guess(it) == it.answer for it in items) / n for s in hooks.shortcuts(task)}


@pytest.mark.parametrize("level", ["L1", pytest.param("L3", marks=pytest.mark.e2e)])
def test_no_murder_rule_finds_the_murderer(level: str) -> None:
    """Every declared rule (the longer chapter, explained-away wording, the odd act, how often
    a chapter names the crime, negations) picks the murderer about half the time."""
    for name, acc in _accuracy(MURDER, level, 300).items():
        assert abs(acc - 0.5) < 0.1, (name, acc)


@pytest.mark.parametrize("level", ["L1", pytest.param("L3", marks=pytest.mark.e2e)])
def test_a_bag_of_words_cannot_tell_the_murderer(level: str) -> None:
    """A naive Bayes over each suspect's chapter, trained on one seed and tested on another,
    is at chance: both chapters come from the same pools, only relations tell them apart."""
    task = get_task(MURDER)
    right, asked = bag_of_words(
        _items(MURDER, level, 200, 41), _items(MURDER, level, 200, 42), task.choice_texts
    )
    assert abs(right / asked - 0.5) < 0.1, right


@pytest.mark.e2e
def test_the_bag_of_words_has_teeth() -> None:
    """The same classifier reads team allocations (their evidence is polar by design, the
    paper's own property) — so chance on murder mysteries is not a broken classifier."""
    task = get_task(TEAMS)
    right, asked = bag_of_words(
        _items(TEAMS, "L1", 150, 41), _items(TEAMS, "L1", 150, 42), task.choice_texts
    )
    assert right / asked > 0.8


# 300 stories a level (fewer would blur the 40% bound): the inner loop keeps L1 only.
@pytest.mark.parametrize(
    "level",
    ["L1", pytest.param("L2", marks=pytest.mark.e2e), pytest.param("L3", marks=pytest.mark.e2e)],
)
def test_placement_questions_mostly_test_a_false_belief(level: str) -> None:
    """Never about the person who made the item's last move; the answer is where the item
    really is at most 40% of the time; no simple rule reaches 40% (chance 25%)."""
    items = _items(PLACEMENT, level, 300, 31)
    for item in items:
        p = item.problem
        moves = [m for m in p["moves"] if m["item"] == p["query"]["item"]]
        assert moves and moves[-1]["person"] != p["query"]["person"]
    assert sum(it.answer == it.problem["true_place"] for it in items) / len(items) <= 0.4
    for name, acc in _accuracy(PLACEMENT, level, 300).items():
        assert acc <= 0.4, (name, acc)


@pytest.mark.parametrize("deep", [20, pytest.param(60, marks=pytest.mark.e2e)])
def test_every_observation_names_somebody(deep: int) -> None:
    """Each told reason why someone did or did not see a move names a person in the story
    (a reader must be able to tell whose attention it explains). The inner loop reads the
    L3 stories other tests generate (20), the e2e twin 60."""
    for item in _items(PLACEMENT, "L3", deep) + _items(PLACEMENT, "L2", 60):
        cast = item.problem["people"]
        for m in item.problem["moves"]:
            for tree in m["trees"].values():
                for leaf in _leaves(tree):
                    assert any(re.search(rf"\b{n}\b", leaf) for n in cast), leaf


_HOURS = {"midnight": 0, "noon": 12, **{f"{h} am": h for h in range(1, 12)},
          **{f"{h} pm": h + 12 for h in range(1, 12)}}  # fmt: skip
_WINDOW = re.compile(
    r"(?:from|between) (\d+ [ap]m|midnight|noon) (?:to|and) (\d+ [ap]m|midnight|noon)"
)


def _covers(start: int, end: int, hour: int) -> bool:
    return (hour - start) % 24 <= (end - start) % 24


def _the_innocent_lacks_an_element_in_the_same_words(item: Any) -> None:
    """The innocent's tree for the missing element is told in the murderer's wordings but
    misses the crime: another weapon's trade, a grudge the other way round, hours that do
    not cover the time of death. The murderer's trees all hit it."""
    p = item.problem
    hour = _HOURS[p["hour"]]
    for s in p["suspects"]:
        for element in ("means", "motive", "opportunity"):
            tree = s["trees"][element]
            assert ("no proven" in tree["text"]) is (not s[element])
            windows = [_WINDOW.search(leaf) for leaf in _leaves(tree)]
            for w in filter(None, windows):
                assert _covers(_HOURS[w[1]], _HOURS[w[2]], hour) is s[element]
            if element == "means":  # no told statement names a weapon: the trade tells
                assert not [w for w in murder.WEAPONS for leaf in _leaves(tree) if w.name in leaf]
                if not s["means"]:
                    assert p["weapon"] not in tree["text"].split(",")[0]
            if element == "motive":  # who is the aggrieved one in the seething / grudge
                first = _leaves(tree)[0]
                assert p["victim"] in first and s["name"] in first


(
    test_the_innocent_lacks_an_element_in_the_same_words,
    test_the_innocent_lacks_an_element_in_the_same_words_sweep,
) = inner_and_sweep(
    _the_innocent_lacks_an_element_in_the_same_words,
    15,
    60,
    murder_mystery_problems(level=st.sampled_from(["L1", "L2", "L3"])),
)


@pytest.mark.parametrize("count", [12, pytest.param(40, marks=pytest.mark.e2e)])
@pytest.mark.parametrize("task_id", DOMAINS)
def test_stories_read_as_english(task_id: str, count: int) -> None:
    """Articles agree, no connective of time before a present-tense fact or a past-perfect
    background, no word doubled, no gerund after 'learning', no sentence said twice in a
    murder mystery or a team story. 12 stories a level in the inner loop, 40 in the twin."""
    bad_article = re.compile(
        r"\b[Aa] (?!uni|use|one|eu)[aeiouAEIOU]\w|\b[Aa]n (?!hour|honest|honor|IOU)[^aeiouAEIOU\W]"
    )
    present = re.compile(
        r"(?:Later|Soon after|Just then|It also came out that|As it turned out"
        r"|Meanwhile|At that moment|All the while),? (?:\w+'s )?\w+ (?:\w+ )?"
        r"(?:is|are|has|owns|keeps|works|holds|pays|competes|practises)\b"
    )
    perfect = re.compile(
        r"(?:Meanwhile|At that moment|All the while|Just then), [^.]*?\bhad "
        r"(?:been|come|started|finished|offered|covered|helped|promised|asked"
        r"|run|returned|just|heard|found|seen)\b"
    )
    for level in ("L1", "L2", "L3"):
        for item in _items(task_id, level, count, 51):
            story = item.problem["story"]
            for pattern in (bad_article, present, perfect):
                assert not pattern.search(story), pattern.search(story)
            assert not re.search(r"\b(\w+) \1\b", story), re.search(r"\b(\w+) \1\b", story)
            assert not re.search(r"\blearning \w+ing\b", story)
            said = [x for x in re.split(r"(?<=[.!?])\s+", story) if x]
            if task_id != PLACEMENT:  # a move's witness may be busy with the same thing twice
                assert len(said) == len(set(said)), [x for x in said if said.count(x) > 1]


# -- the worked reasoning cites every fact it uses --------------------------------------------
def _tree_steps_cite_children(node: Node, steps: list[Step]) -> None:
    """Every inference of the tree has a step that concludes it from exactly its facts (a
    moment's fact carries "while Ann moved the key"). A background fact that holds all day
    is inferred once: a second tree may support it with other words, not inferred again."""
    if not node.facts():
        return
    here = [s for s in steps if s.conclusion.startswith(node.text)]
    assert here, node.text

    def cites(step: Step, child: Node) -> bool:
        if not child.facts():
            return ("story", child.text) in step.uses
        refs = {1 + k for k, s in enumerate(steps) if s.conclusion.startswith(child.text)}
        return any(("step", r) in step.uses for r in refs)

    mine = [s for s in here if all(cites(s, c) for c in node.facts())]
    assert mine or node.tense == "before", node.text
    if mine:
        for child in node.facts():
            _tree_steps_cite_children(child, steps)


@pytest.mark.parametrize("count", [10, pytest.param(25, marks=pytest.mark.e2e)])
@pytest.mark.parametrize("task_id", DOMAINS)
@pytest.mark.parametrize("level", ["L1", "L3"])
def test_reasoning_steps_check_against_the_facts(task_id: str, level: str, count: int) -> None:
    """The worked reasoning, rebuilt from the export: every quote is in the story, every
    inference of the trees it needs cites exactly its facts, the last step names the gold
    answer, and team scores add up from F's values (10 items in the inner loop, 25 e2e)."""
    task = get_task(task_id)
    assert isinstance(task, MusrTask)
    for item in _items(task_id, level, count, 61):
        p = item.problem
        steps = task.reasoning(p)
        assert check(steps, p["story"]) == []
        trees: list[dict[str, Any]] = []
        if task_id == MURDER:
            trees = [t for s in p["suspects"] for t in s["trees"].values()]
        elif task_id == PLACEMENT:
            who = p["query"]["person"]
            trees = [m["trees"][who] for m in p["moves"]
                     if m["item"] == p["query"]["item"] and m["person"] != who]  # fmt: skip
        else:
            for step in steps[:-1]:  # every choice's score adds up, from F's values
                got = re.search(r"scores ([\d + ]+) = (\d+)", step.conclusion)
                if got:
                    assert sum(map(int, got[1].split(" + "))) == int(got[2])
        for tree in trees:
            _tree_steps_cite_children(Node.from_dict(tree), steps)
        gold = f"Choice {p['answer_index'] + 1} " if task_id == TEAMS else item.answer
        assert gold in steps[-1].conclusion
        assert hooks.steps(task, item).endswith(f"ANSWER: {p['answer_index'] + 1}")


def test_the_hand_written_examples_are_valid_and_share_no_template() -> None:
    """The one-shot examples pass the same checker; their answer is the reasoning's last
    conclusion; none of them contains a wording of the template libraries."""
    chunks = [
        c.strip()
        for lib in (murder.LIBRARY, placement.LIBRARY, teams.LIBRARY)
        for spec in lib.values()
        for t in spec.say
        for c in re.split(r"\{[^}]*\}", t)
        if len(c.split()) >= 4
    ]
    for domain in ("murder", "placement", "teams"):
        ex = solved(domain)
        assert check(ex.steps, ex.story) == []
        assert ex.choices[ex.answer - 1].split(":")[0] in ex.steps[-1].conclusion or (
            f"Choice {ex.answer} " in ex.steps[-1].conclusion
        )
        assert not [c for c in chunks if c.lower() in ex.story.lower()]
    scores = [int(re.search(r"= (\d+)$", s.conclusion)[1]) for s in solved("teams").steps[-4:-1]]  # type: ignore[index]
    assert scores.index(max(scores)) + 1 == solved("teams").answer


# -- the same problem up to renaming (issue 41) ------------------------------------------------
@pytest.mark.parametrize("task_id", ["musr.murder_mystery", "musr.object_placement",
                                     "musr.team_allocation"])  # fmt: skip
def test_a_story_about_other_people_is_the_same_problem(task_id: str) -> None:
    """People renamed everywhere (their facts, trees, choices, the story) is the same problem
    in the same split; the narration and its chapter offsets are not part of it."""
    import json

    task = get_task(task_id)
    assert isinstance(task, MusrTask)
    items = [make_item(task, "L1", 2, i) for i in range(3)]
    for item in items:
        text = json.dumps(item.problem)
        for k, name in enumerate(task.people(item.problem)):
            text = re.sub(rf"\b{re.escape(name)}\b", f"Quill{'x' * k}", text)
        renamed = json.loads(text)
        renamed["chapters"] = {}
        assert renamed != item.problem
        assert task.identity(renamed) == task.identity(item.problem)
        assert split_of(task, renamed) == split_of(task, item.problem) == "test"
    assert len({hooks.problem_key(task, i.problem) for i in items}) == len(items)
