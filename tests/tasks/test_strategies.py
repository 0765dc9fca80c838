"""Hypothesis strategies, shrinking, the ``llm`` fixture and the difficulty frontier."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from pytest_reasoning.core import Item
from pytest_reasoning.errors import InvalidArgument
from pytest_reasoning.frontier import find_frontier
from pytest_reasoning.registry import get_task
from pytest_reasoning.strategies import (
    abductive_logic_problems,
    arithmetic_problems,
    boolean_logic_problems,
    deductive_logic_problems,
    linear_equation_problems,
    max_sum_path_problems,
    problems,
    reachability_problems,
)
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer

# Derandomized: a shrink is a search, and which minimum it reaches may depend on where it
# started; the tests pin the minimum the strategies reach, not the luck of one start.
SHRINK = settings(
    database=None, max_examples=500, derandomize=True, deadline=None,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip


def depth_of(item: Item) -> int:
    nodes = {n["name"]: n for n in item.problem["nodes"]}

    def d(name: str) -> int:
        return 1 + max((d(c) for c in nodes[name]["children"]), default=0)

    return d(item.problem["target"])


# -- shrinking: a failing problem becomes the smallest failing problem ----------------------------
# The shrink's cost grows with the first failing tree (depth 5 of 2..6, 31 nodes): the inner
# loop starts it from depth 4 of 2..4 (15 nodes, a third of the CPU), CI from the full range.
@pytest.mark.parametrize(
    "deepest", [4, pytest.param(6, marks=pytest.mark.e2e)], ids=["depth-2-4", "depth-2-6"]
)
def test_shrinks_to_the_shallowest_failing_depth_and_minimal_width(deepest: int) -> None:
    # A "model" that fails whenever the DAG has depth >= 3.
    found = find(
        arithmetic_problems(depth=st.integers(2, deepest), width=st.integers(2, 4)),
        lambda item: depth_of(item) >= 3,
        settings=SHRINK,
    )
    assert found.params["depth"] == 3 and found.params["width"] == 2
    assert depth_of(found) == 3
    # The rest shrinks too: the first operation everywhere and the smallest leaf values.
    assert {n["op"] for n in found.problem["nodes"]} == {"+", None}
    assert {n["value"] for n in found.problem["nodes"] if n["op"] is None} == {1}


# A sweep (many generated items or examples): CI runs it, the inner loop does not.
@pytest.mark.e2e
def test_graph_problems_shrink_to_the_fewest_nodes() -> None:
    found = find(
        reachability_problems(nodes=st.integers(3, 20), max_links=st.integers(1, 2)),
        lambda item: len(item.problem["edges"]) >= 6,
        settings=SHRINK,
    )
    assert len(found.problem["edges"]) == 6 and found.params["max_links"] == 1


def test_boolean_problems_shrink_to_a_minimal_false_root() -> None:
    # A model that always answers True fails exactly the False problems.
    found = find(
        boolean_logic_problems(depth=st.integers(2, 5), width=st.integers(2, 3)),
        lambda item: get_task(item.task).score(item, "<<<True>>>").correct is False,
        settings=SHRINK,
    )
    assert found.answer == "False" and found.params["depth"] == 2
    assert len(found.problem["nodes"]) <= 3


# A sweep (many generated items or examples): CI runs it, the inner loop does not.
@pytest.mark.e2e
def test_linear_problems_shrink_towards_direct_coefficients() -> None:
    found = find(
        linear_equation_problems(depth=st.integers(1, 4)),
        lambda item: len(item.problem["nodes"]) > 1,  # fails once a coefficient is computed
        settings=SHRINK,
    )
    assert found.params["depth"] == 2


# A sweep (many generated items or examples): CI runs it, the inner loop does not.
@pytest.mark.e2e
def test_max_sum_paths_shrink_to_small_values() -> None:
    found = find(
        max_sum_path_problems(nodes=st.integers(3, 12)),
        lambda item: int(item.answer) >= 5,
        settings=SHRINK,
    )
    assert int(found.answer) == 5


# -- every strategy's items pass their own independent checks -------------------------------------
STRATEGIES = [
    arithmetic_problems(
        depth=st.integers(2, 5), width=st.integers(2, 3), extra_links=st.integers(0, 2)
    ),
    linear_equation_problems(depth=st.integers(1, 3), replaced=st.integers(1, 3)),
    boolean_logic_problems(depth=st.integers(2, 5), balanced=st.booleans(), style="cot"),
    deductive_logic_problems(depth=st.integers(2, 5), distractors=st.integers(0, 2)),
    abductive_logic_problems(depth=st.integers(2, 5), order=st.sampled_from(["random"])),
    reachability_problems(nodes=st.integers(2, 15), style="fewshot", shots=1),
    max_sum_path_problems(nodes=st.integers(3, 15), max_links=st.integers(1, 1)),
]


# 10 examples a strategy in the inner loop (an example draws a whole problem through
# Hypothesis, ~20 ms); the 60 of the sweep in CI.
@pytest.mark.parametrize("examples", [10, pytest.param(60, marks=pytest.mark.e2e)])
@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: repr(s)[:40])
def test_strategy_items_are_correct(strategy: st.SearchStrategy[Item], examples: int) -> None:
    @settings(max_examples=examples, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def check(item: Item) -> None:
        task = get_task(item.task)
        assert task.score(item, hooks.reference_response(task, item)).correct
        assert hooks.steps(task, item).endswith(f"<<<{item.answer}>>>")

    check()


def test_strategy_items_match_the_suite_item_shape() -> None:
    # Any one drawn item has the shape; shrinking an always-true condition only spends CPU
    # (about a second) searching for an item that has no more to show.
    first = settings(SHRINK, phases=[Phase.generate])
    item = find(problems("dyval.arithmetic", level="D2"), lambda i: True, settings=first)
    suite = make_item(get_task("dyval.arithmetic"), "D2", 1, 0)
    assert set(item.to_dict()) == set(suite.to_dict())
    assert item.params.keys() == suite.params.keys()
    assert item.id.startswith("dyval.arithmetic[D2-fuzz-")


def test_a_level_drawn_by_rejection_passes_hypothesis_health_checks() -> None:
    """Max-sum path D1 asks only pairs that three paths join (issue 41), by redrawing the
    graph: Hypothesis's simplest draws (a chain) never have one, so a strategy of D1 failed
    the large_base_example health check under default settings. Such knobs are off unless
    given, like ``balanced``; given, they hold."""

    @settings(database=None, max_examples=5, deadline=None)
    @given(max_sum_path_problems(level="D1"))
    def check(item: Item) -> None:
        assert item.params["min_paths"] == 1

    check()
    asked = find(max_sum_path_problems(level="D1", min_paths=3), lambda i: True,
                 settings=settings(SHRINK, phases=[Phase.generate]))  # fmt: skip
    assert asked.params["min_paths"] == 3


# -- bad arguments: one InvalidArgument naming the argument -----------------------------------
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: arithmetic_problems(depth=0), "knob 'depth': must be >= 1, got 0"),
        (lambda: arithmetic_problems(width=1), "knob 'width': binary operations need width >= 2"),
        (
            lambda: reachability_problems(nodes=5, max_links=9),
            "knob 'max_links': at most nodes - 1 = 4, got 9",
        ),
        (lambda: problems("dyval.arithmetic", colour=1), "unknown knob 'colour' for"),
        (lambda: problems("dyval.arithmetic", style="haiku"), "style 'haiku' is not offered"),
        (lambda: problems("dyval.arithmetic", level="D9"), "level: unknown level 'D9'"),
        (lambda: problems("dyval.nope"), "task: unknown task 'dyval.nope'"),
    ],
)
def test_bad_arguments_fail_at_construction(make: Any, message: str) -> None:
    with pytest.raises(InvalidArgument) as exc:
        make()
    assert str(exc.value).startswith(message)


def test_a_strategy_that_draws_a_bad_value_names_the_knob() -> None:
    @settings(database=None, max_examples=50)
    @given(arithmetic_problems(depth=st.integers(0, 3)))
    def check(item: Item) -> None:
        pass

    with pytest.raises(InvalidArgument, match="knob 'depth': must be >= 1, got 0"):
        check()


# -- the difficulty frontier ---------------------------------------------------------------------
def synthetic(frontier: int, good: float = 0.95, bad: float = 0.1) -> Any:
    """Deterministic per prompt: accuracy ``good`` up to ``frontier`` deep, ``bad`` beyond."""

    def answer(item: Item) -> bool:
        u = int(hashlib.sha256(item.prompt.encode()).hexdigest()[:8], 16) / 2**32
        return u < (good if int(item.params["depth"]) <= frontier else bad)

    return answer


# One search in the inner loop (~70 items drawn, up to depth 10); CI searches four more seeds.
@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(s, marks=pytest.mark.e2e) for s in range(1, 5))]
)
def test_frontier_finds_a_known_drop(seed: int) -> None:
    result = find_frontier("dyval.arithmetic", "depth", 2, 10, synthetic(4), target=0.5, seed=seed)
    assert result.value in (4, 5)
    # Far fewer calls than a grid of 9 values × 60 samples.
    assert result.calls < 9 * 60 / 4
    assert [p.value for p in result.probes][:2] == [2, 10]


# From D1's own 7 nodes: a balanced reachability item of 5 nodes is slow to draw (few graphs
# that small have a pair both reachable and not; 282 s in a CI run at load
# ~8 after issue 41's split), and searching from 5 checked nothing that 7 does not.
def test_frontier_below_and_beyond_the_range() -> None:
    below = find_frontier("dyval.arithmetic", "depth", 2, 6, lambda _i: False)
    assert below.value is None and len(below.probes) == 1
    beyond = find_frontier("dyval.reachability", "nodes", 7, 30, lambda _i: True)
    assert beyond.value == 30 and beyond.beyond
    assert "or more" in beyond.summary()


def test_frontier_counts_errors_apart() -> None:
    calls = iter(range(10_000))

    def flaky(item: Item) -> bool | None:
        return None if next(calls) % 3 == 0 else True

    result = find_frontier("dyval.arithmetic", "depth", 2, 3, flaky)
    assert all(p.errors > 0 and p.verdict == "pass" for p in result.probes)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"knob": "order"}, "--knob: 'order' is not a numeric knob of dyval.arithmetic"),
        ({"low": 5, "high": 3}, "--min: 5 is above --max 3"),
        ({"high": 99}, "knob 'depth': must be <= 12, got 99"),
        ({"target": 1.5}, "--target: expected a fraction in (0, 1), got 1.5"),
    ],
)
def test_frontier_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"knob": "depth", "low": 2, "high": 6, **kwargs}
    with pytest.raises(InvalidArgument) as exc:
        find_frontier(
            "dyval.arithmetic",
            args.pop("knob"),
            args.pop("low"),
            args.pop("high"),
            lambda _i: True,
            **args,
        )
    assert str(exc.value).startswith(message)


@pytest.mark.e2e
def test_frontier_command_against_a_model_with_a_known_frontier(
    fake_server: FakeOpenAIServer, tmp_path: Any
) -> None:
    out = tmp_path / "frontier.json"
    proc = subprocess.run(
        [
            sys.executable, "-m", "pytest_reasoning.cli", "frontier",
            "--llm", "openai/shallow:4", "--llm-api-base", fake_server.url,
            "--task", "dyval.arithmetic", "--knob", "depth", "--min", "2", "--max", "9",
            "--cache", str(tmp_path / "cache"), "--json", str(out),
        ],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "frontier: depth = 4:" in proc.stdout
    data = json.loads(out.read_text())
    assert data["value"] == 4 and data["calls"] == fake_server.stats()["total"]


@pytest.mark.e2e
def test_frontier_command_usage_error_is_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", "frontier", "--llm", "reference",
         "--task", "dyval.arithmetic", "--knob", "order", "--min", "1", "--max", "2"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 4
    assert proc.stderr.count("\n") == 1 and "not a numeric knob" in proc.stderr


# -- the llm fixture in a user's fuzz test ---------------------------------------------------------
FUZZ_TEST = """
from hypothesis import given, strategies as st
from pytest_reasoning.strategies import arithmetic_problems, reasoning_settings

@reasoning_settings
@given(arithmetic_problems(depth=st.integers(2, 6), width=st.integers(2, 3)))
def test_model_computes(llm, problem):
    assert llm.solve(problem).correct
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


@pytest.mark.e2e
def test_fuzz_test_passes_with_a_correct_model(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makepyfile(test_fuzz=FUZZ_TEST)
    result = run(pytester, "--llm", "openai/oracle", "--llm-api-base", fake_server.url)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*1 passed*"])


@pytest.mark.e2e
def test_fuzz_test_shrinks_a_real_failure_over_http(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)  # the "reasoning" profile, with its database
    pytester.makepyfile(test_fuzz=FUZZ_TEST)
    result = run(pytester, "--llm", "openai/shallow:2", "--llm-api-base", fake_server.url)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "Falsifying example" in out or "Failing test case" in out
    # The model fails from depth 3 on: the reported problem is the smallest such one.
    assert "'depth': 3" in out and "'width': 2" in out
    assert (pytester.path / ".hypothesis" / "examples").is_dir()  # replays first next run


@pytest.mark.e2e
def test_a_fuzz_failure_shows_the_shrunk_problems_prompt_reply_and_gold(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    """Without -v: the failure message holds the shrunk example's answer (prompt, reply,
    extracted, gold), and only that example's."""
    pytester.makepyfile(test_fuzz=FUZZ_TEST)
    result = run(
        pytester, "--llm", "openai/shallow:2", "--llm-api-base", fake_server.url,
        "-p", "no:randomly", "--hypothesis-seed", "0",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    # Only the shrunk example's answer is shown (pytest may repeat its failure message in the
    # short summary: under CI=true it prints whole lines there).
    heads = [line for line in out.splitlines() if "reasoning: openai/shallow:2 answered" in line]
    assert len(set(re.findall(r"answered (\S+): wrong", "\n".join(heads)))) == 1, heads
    head = heads[0]
    assert "dyval.arithmetic[D1-fuzz-" in head and head.endswith(": wrong (wrong_value)")
    block = out[out.index(head) :]
    prompt, reply = block.index("  prompt:"), block.index("  reply:")
    assert prompt < block.index("description of an arithmetic problem") < reply
    assert block.index("<<<", reply) > reply
    assert re.search(r"  extracted: '-?\d+'; gold: '-?\d+'", block)
    assert "'depth': 3" in out and "'width': 2" in out  # the shrunk problem's


def test_a_noted_answer_is_clipped_and_shows_control_characters() -> None:
    from pytest_reasoning.core import Reply
    from pytest_reasoning.evaluate import score_reply
    from pytest_reasoning.strategies import NOTE_LIMIT, describe_answer

    item = make_item(get_task("dyval.arithmetic"), "D1", 1, 0)
    reply = "\x1b[2J\u202eall PASSED\r\nstep 2\n" + "x" * 10_000 + "\n<<<7>>>"
    text = describe_answer(item, score_reply(item, "m\x1b[31m", Reply(content=reply)))
    assert "\x1b" not in text and "\u202e" not in text and "\r" not in text
    assert "    ␛[2J\\u202eall PASSED\n    step 2\n" in text
    assert f"… [{len(reply) - NOTE_LIMIT:,} more characters]" in text  # the clip is marked
    assert text.startswith("reasoning: m␛[31m answered dyval.arithmetic[D1-s1-000]: wrong")
    assert text.endswith(f"  extracted: '7'; gold: {item.answer!r}")


@pytest.mark.e2e
def test_call_budget_is_enforced(pytester: pytest.Pytester, fake_server: FakeOpenAIServer) -> None:
    pytester.makepyfile(test_fuzz=FUZZ_TEST)
    result = run(
        pytester,
        "--llm",
        "openai/oracle",
        "--llm-api-base",
        fake_server.url,
        "--reasoning-max-calls",
        "3",
        "--reasoning-cache",
        "off",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*the call budget of 3 is spent (--reasoning-max-calls)*"])
    assert fake_server.stats()["total"] == 3


@pytest.mark.e2e
def test_llm_fixture_skips_without_a_model(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_fuzz=FUZZ_TEST)
    result = run(pytester)
    result.stdout.fnmatch_lines(["*1 skipped*"])


@pytest.mark.e2e
def test_ci_profile_is_derandomized(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "1")
    pytester.makepyfile(
        test_profile="""
from pytest_reasoning.strategies import reasoning_settings

def test_profile():
    assert reasoning_settings.derandomize and reasoning_settings.database is None
    assert reasoning_settings.deadline is None and reasoning_settings.max_examples == 20
"""
    )
    assert run(pytester).ret == pytest.ExitCode.OK


@pytest.mark.e2e
def test_a_failed_call_is_an_error_not_a_wrong_answer(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makepyfile(test_fuzz=FUZZ_TEST)
    result = run(
        pytester,
        "--llm",
        "openai/fail-500",
        "--llm-api-base",
        fake_server.url,
        "--reasoning-retries",
        "1",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*ModelCallFailed: openai/fail-500:*"])
    # The first example's one attempt and no other: an outage is not shrunk (TestStopped).
    assert fake_server.stats()["total"] == 1


def test_every_named_strategy_takes_its_tasks_knobs() -> None:
    """Each ``*_problems`` strategy is built from its task's knobs: it takes every knob of
    that task as a keyword (batch knobs aside), so a knob added to a task is a keyword at
    once; a wrong keyword is refused at construction. (Drawing them is the other tests'.)"""
    import inspect

    from pytest_reasoning import strategies
    from pytest_reasoning.registry import get_task

    named = [n for n in strategies.__all__ if n.endswith("_problems") and n != "problems"]
    covered = set()
    for name in named:
        fn = getattr(strategies, name)
        task = strategies.NAMED[name]
        keywords = {
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind is p.KEYWORD_ONLY and p.name not in ("level", "style")
        }
        knobs = set(get_task(task).knobs) - strategies.BATCH_KNOBS
        assert keywords == knobs, (name, sorted(knobs - keywords), sorted(keywords - knobs))
        assert fn.__name__ == name and task in (fn.__doc__ or "")
        with pytest.raises(InvalidArgument, match="unknown knob 'no_such_knob'"):
            fn(no_such_knob=1)
        covered.add(task)
    from pytest_reasoning.registry import task_ids

    builtin = {t for t in task_ids() if t.split(".")[0] in {"dyval", "flenqa", "musr", "zebra"}}
    assert covered == builtin  # every built-in task has its named strategy
