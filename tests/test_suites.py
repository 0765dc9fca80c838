"""Invalid suites: each fails with exactly one line naming the file, the key path and the
expectation — never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_reasoning.config import load_suite
from pytest_reasoning.errors import InvalidSuite
from pytest_reasoning.registry import task_ids as _task_ids

# The reasoning-gym pack (registered where it is installed) is one entry of error lines.
_PACK = sum(t.startswith("gym.") for t in _task_ids())
GYM = f", gym.<name> ({_PACK} tasks: pytest-reasoning tasks)" if _PACK else ""

GOOD_ENTRY = "  - task: dyval.arithmetic\n    levels: [D1]\n"

CASES = [
    (
        "tasks: [\n",
        "s.yaml: YAML syntax error at line 2, column 1: did not find expected node content",
    ),
    ("", "s.yaml: empty file; expected a mapping with a 'tasks' list"),
    ("tasks: 3\n", "s.yaml: tasks: expected a non-empty list of task entries"),
    (
        "tasks:\n  - task: dyval.nope\n    levels: [D1]\n",
        "s.yaml: tasks[0].task: unknown task 'dyval.nope'; expected one of dyval.abductive_logic, dyval.arithmetic, dyval.boolean_logic, dyval.deductive_logic, dyval.linear_equation, dyval.max_sum_path, dyval.reachability, flenqa.monorel, flenqa.people_in_rooms, flenqa.ruletaker"
        + GYM
        + ", musr.murder_mystery, musr.object_placement, musr.team_allocation, zebra.grid",
    ),
    (
        "tasks:\n  - task: dyval.arithmetic\n    levels: [D7]\n",
        "s.yaml: tasks[0].levels.D7: unknown level 'D7' for dyval.arithmetic; expected one of D1, D2, D3, D4",
    ),
    ("samples: -3\ntasks:\n" + GOOD_ENTRY, "s.yaml: samples: expected an integer >= 0, got -3"),
    ("samples: ten\ntasks:\n" + GOOD_ENTRY, "s.yaml: samples: expected an integer, got str 'ten'"),
    (
        "samples: 10000000\ntasks:\n" + GOOD_ENTRY,
        "s.yaml: samples: expected at most 100000 samples, got 10000000",
    ),
    (
        "min_accuracy: 1.5\ntasks:\n" + GOOD_ENTRY,
        "s.yaml: min_accuracy: expected a number in [0, 1], got 1.5",
    ),
    (
        "confidence: 1\ntasks:\n" + GOOD_ENTRY,
        "s.yaml: confidence: expected a number in (0, 1), got 1",
    ),
    (
        "colour: red\ntasks:\n" + GOOD_ENTRY,
        "s.yaml: colour: unknown key; expected one of alpha, confidence, description, max_drop, metric, min_accuracy, name, params, repeats, samples, seed, seeds, sequential, style, tasks",
    ),
    (
        "tasks:\n  - task: dyval.arithmetic\n    levels:\n      D1: {min_acuracy: 0.5}\n",
        "s.yaml: tasks[0].levels.D1.min_acuracy: unknown key (did you mean 'min_accuracy'?); expected one of alpha, confidence, max_drop, metric, min_accuracy, params, repeats, samples, seed, seeds, sequential, style",
    ),
    (
        "tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n    params: {depth: 0}\n",
        "s.yaml: tasks[0].params: knob 'depth': must be >= 1, got 0",
    ),
    (
        "tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n    style: poetic\n",
        "s.yaml: tasks[0].style: style 'poetic' is not offered by dyval.arithmetic; expected one of direct, cot, fewshot",
    ),
    (
        "tasks:\n" + GOOD_ENTRY + GOOD_ENTRY,
        "s.yaml: tasks[1].id: duplicate id 'dyval.arithmetic'; give repeated tasks distinct 'id's",
    ),
    ("seed: 1\nseed: 2\ntasks:\n" + GOOD_ENTRY, "s.yaml: duplicate key 'seed' at line 2"),
    ("tasks:\n  - levels: [D1]\n", "s.yaml: tasks[0].task: missing; expected a task id"),
    (
        "tasks:\n  - task: dyval.arithmetic\n",
        "s.yaml: tasks[0].levels: missing; expected a list or mapping of D1, D2, D3, D4",
    ),
    ("- 1\n- 2\n", "s.yaml: expected a mapping at the top level, got list"),
    (
        "repeats: 2\ntasks:\n  - task: dyval.arithmetic\n    levels: {D1: {metric: pass^3}}\n",
        "s.yaml: tasks[0].levels.D1.metric: pass^3 needs 3 samples of each item; the level has repeats 2 (set repeats: 3 or more, or --reasoning-repeats)",
    ),
    (
        "metric: pass^three\ntasks:\n" + GOOD_ENTRY,
        "s.yaml: metric: expected one of accuracy, puzzle, cell, pass@K, pass^K (K a number or k: the repeats), got 'pass^three'",
    ),
]


@pytest.mark.parametrize(("text", "message"), CASES)
def test_invalid_suite_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(text)
    with pytest.raises(InvalidSuite) as exc:
        load_suite("s.yaml")
    assert str(exc.value) == message
    assert "\n" not in str(exc.value)


def test_every_mistake_at_once_with_suggestions(tmp_path: Path) -> None:
    """Three mistakes, three lines (file order), each with its closest fix (difflib)."""
    p = tmp_path / "s.yaml"
    p.write_text(
        "samles: 5\n"
        "tasks:\n"
        "  - task: dyval.reachabilty\n"
        "    levels: [D1]\n"
        "  - task: dyval.arithmetic\n"
        "    style: cott\n"
        "    params: {dept: 3, order: reversd}\n"
        "    levels: [D1, d2]\n"
    )
    with pytest.raises(InvalidSuite) as exc:
        load_suite(p, display="s.yaml")
    assert str(exc.value).split("\n") == [
        "s.yaml: samles: unknown key (did you mean 'samples'?); expected one of alpha, confidence, description, max_drop, metric, min_accuracy, name, params, repeats, samples, seed, seeds, sequential, style, tasks",
        "s.yaml: tasks[0].task: unknown task 'dyval.reachabilty' (did you mean 'dyval.reachability'?); expected one of dyval.abductive_logic, dyval.arithmetic, dyval.boolean_logic, dyval.deductive_logic, dyval.linear_equation, dyval.max_sum_path, dyval.reachability, flenqa.monorel, flenqa.people_in_rooms, flenqa.ruletaker"
        + GYM
        + ", musr.murder_mystery, musr.object_placement, musr.team_allocation, zebra.grid",
        "s.yaml: tasks[1].params: unknown knob 'dept' for dyval.arithmetic (did you mean 'depth'?); expected one of depth, distractors, extra_links, max_abs, max_value, min_value, ops, order, shots, unique, width",
        "s.yaml: tasks[1].params: knob 'order': expected one of topological, reversed, random, got 'reversd' (did you mean 'reversed'?)",
        "s.yaml: tasks[1].style: style 'cott' is not offered by dyval.arithmetic (did you mean 'cot'?); expected one of direct, cot, fewshot",
        "s.yaml: tasks[1].levels.d2: unknown level 'd2' for dyval.arithmetic (did you mean 'D2'?); expected one of D1, D2, D3, D4",
    ]


def test_cascade_and_overrides(tmp_path: Path) -> None:
    p = tmp_path / "ok.yaml"
    p.write_text(
        "samples: 3\nseeds: [1, 2]\nmin_accuracy: 0.5\ntasks:\n"
        "  - task: dyval.arithmetic\n    style: cot\n    levels:\n"
        "      D1: {samples: 7, confidence: 0.9}\n      D2:\n"
    )
    suite = load_suite(p)
    d1, d2 = suite.entries[0].levels
    assert (d1.samples, d1.seeds, d1.style, d1.rule.min_accuracy, d1.rule.confidence) == (
        7,
        (1, 2),
        "cot",
        0.5,
        0.9,
    )
    assert (d2.samples, d2.rule.confidence) == (3, None)
    over = load_suite(p, samples=2, seed=5)
    assert [lv.samples for lv in over.entries[0].levels] == [2, 2]
    assert over.entries[0].levels[0].seeds == (5,)


def test_collection_error_is_one_line(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", bad="tasks:\n  - task: dyval.arithmetic\n    levels: [D9]\n")
    pytester.makefile(
        ".yaml", good="tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n    samples: 1\n"
    )
    result = pytester.runpytest("--llm", "reference", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting bad.yaml*",
            "bad.yaml: tasks[0].levels.D9: unknown level 'D9' for dyval.arithmetic; expected one of D1, D2, D3, D4",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_non_suite_yaml_is_ignored(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", workflow="on: push\njobs: {}\n")
    result = pytester.runpytest("--llm", "reference")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


# -- fuzzed suites ------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_KEYS = ["tasks", "task", "levels", "samples", "seed", "seeds", "style", "params", "min_accuracy",
         "confidence", "max_drop", "alpha", "metric", "id", "name", "colour", "D1", "4x4", "250",
         "dataset"]  # fmt: skip
_SCALARS = (
    st.none() | st.booleans() | st.integers(-10, 10**7) | st.floats(allow_nan=True)
    | st.sampled_from(["dyval.arithmetic", "zebra.grid", "flenqa.monorel", "D1", "D9", "4x4",
                       "250", "cot", "oneshot", "cell", "", "x" * 300, "d.jsonl"])
)  # fmt: skip
_VALUES = st.recursive(
    _SCALARS,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.sampled_from(_KEYS), kids, max_size=5)
    ),
    max_leaves=20,
)


# A sweep (many generated items or examples): CI runs it, the inner loop does not.
@pytest.mark.e2e
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=6) | _VALUES)
def test_fuzzed_suites_are_valid_or_fail_in_one_line(data: object) -> None:
    """Arbitrary shapes and values, wrong types, unknown keys, tasks, levels and knobs, huge
    counts, out-of-range thresholds: a suite is accepted or rejected with exactly one line
    naming the file — never another exception."""
    from pytest_reasoning.config import parse_suite

    try:
        parse_suite(data, "f.yaml", samples=1)
    except InvalidSuite as exc:
        lines = str(exc).split("\n")
        assert lines == [p.line for p in exc.problems], lines
        assert len(set(lines)) == len(lines), lines  # a mistake repeated by layers: once
        for text in lines:
            assert text.startswith("f.yaml: ") and "\n" not in text, text
