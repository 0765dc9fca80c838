"""Answer extraction: the documented leniency, and never an exception on any text."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_reasoning.answers import (
    extract_delimited,
    format_number,
    normalise_label,
    parse_number,
    repeating,
)
from pytest_reasoning.core import Reply
from pytest_reasoning.evaluate import score_reply
from pytest_reasoning.registry import all_tasks, get_task
from pytest_reasoning.tasks import Item, Task
from pytest_reasoning.tasks.sampler import make_item


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so <<<5>>>", "5"),
        ("<<<5>>", "5"),  # SmolLM2's two closing brackets
        ("first <<<1>>> then <<<2>>>", "2"),  # the last answer wins
        ("<<< 3.5 >>>", "3.5"),
        ("<<5>>", None),
        ("no answer", None),
        ("<<<<7>>>", None),
    ],
)
def test_extract_delimited(text: str, expected: str | None) -> None:
    assert extract_delimited(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12", 12.0),
        ("-3.5", -3.5),
        ("1,234", 1234.0),
        ("1e-3", 0.001),
        ("7/4", 1.75),
        ("abc", None),
        ("1/0", None),
        ("", None),
        ("inf", None),
    ],
)
def test_parse_number(text: str, expected: float | None) -> None:
    assert parse_number(text) == expected


def test_labels_and_numbers() -> None:
    assert normalise_label(" true. ") == "True"
    assert normalise_label("N/A") == "N/A"
    assert normalise_label("maybe") is None
    assert format_number(31.874999999999993) == "31.875"
    assert format_number(12.0) == "12"


# Replies SmolLM2-135M gave on example_suites/quick.yaml when cut off at 256 tokens.
_BOOLEAN_LOOP = "Aa is True.\naab is False.\nThe value of aac equals (aaa OR aab).\n\n" * 9 + "Aa is"
_JSON_LOOP = '{\n  "House 1": {\n    "Name": "Erin"\n  }\n}\n\nThis JSON is a JSON-RPC' + "-JSON" * 80
_NESTED_LOOP = "JSON:\n{\n" + "".join(
    "  " * i + f'"Name": "Cheri",\n{"  " * i}"Month": "May",\n{"  " * i}"House": {{\n'
    for i in range(1, 9)
)


@pytest.mark.parametrize(
    ("text", "looping"),
    [
        (_BOOLEAN_LOOP, True),
        ("The answer is 1.\n\n" * 30, True),
        (_JSON_LOOP, True),
        (_NESTED_LOOP, True),  # no line repeats exactly, half of them do once stripped
        ("Let me think step by step about", False),  # too short to tell
        # A long answer cut off mid-way, no loop: a 5x5 grid's JSON, each house different.
        (
            "{\n"
            + "".join(
                f'  "House {h}": {{\n    "Name": "N{h}",\n    "Pet": "P{h}",\n    "Car": "C{h}"\n  }},\n'
                for h in range(1, 6)
            ),
            False,
        ),
        ("First, 3 + 4 = 7. Then 7 * 2 = 14. Then 14 - 5 = 9, and 9 / 3 = 3. So the value", False),
    ],
)
def test_a_reply_cut_off_in_a_loop_is_told_apart(text: str, looping: bool) -> None:
    assert repeating(text) is looping


@cache
def _first_items() -> list[tuple[Task, Item]]:
    # One item per task, made once: the property is about the scorers, not the generators.
    return [
        (task, make_item(task, task.levels[0], 1, 0))
        for task in all_tasks().values()
        if not task.id.startswith("gym.")  # the gym pack's scorers: tests/tasks/test_gym.py
    ]


@given(st.text())
def test_every_scorer_survives_arbitrary_text(text: str) -> None:
    for task, item in _first_items():
        score = task.score(item, text)
        assert score.correct in (True, False)
        assert score.correct or score.failure_mode


# -- supply chain ---------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["1.82.7", "1.82.8", "1.107.0", "1.107.12"])
def test_compromised_litellm_releases_are_refused(version: str) -> None:
    from pytest_reasoning.errors import ReasoningError
    from pytest_reasoning.models.litellm_client import check_litellm_version

    with pytest.raises(ReasoningError, match=f"litellm {version} is a compromised release"):
        check_litellm_version(version)


def test_installed_litellm_is_the_pinned_safe_release() -> None:
    from importlib.metadata import version
    from pathlib import Path

    import tomllib

    from pytest_reasoning.models.litellm_client import check_litellm_version

    installed = version("litellm")
    check_litellm_version(installed)  # fails the suite if a compromised release is installed
    for fine in ("1.82.6", "1.106.2", "1.108.0", "1.10.7"):
        check_litellm_version(fine)
    deps = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    pins = [d for d in deps["project"]["dependencies"] if d.startswith("litellm")]
    assert pins == ["litellm==1.106.2"] and installed == "1.106.2"


def arithmetic(index: int = 0) -> Item:
    return make_item(get_task("dyval.arithmetic"), "D1", 1, index)


def test_a_truncated_reply_is_never_correct_whatever_it_mentions() -> None:
    item = arithmetic()
    right = f"<<<{item.answer}>>>"
    cut = score_reply(item, "m", Reply(content=f"So {right} and", finish_reason="length"))
    unclosed = score_reply(
        item, "m", Reply(content=f"<think>it is {right}, or", finish_reason="stop")
    )
    thought = score_reply(item, "m", Reply(content=f"<think><<<-1>>>?</think>\n{right}"))
    no_open = score_reply(item, "m", Reply(content=f"<<<-1>>>? no.</think> {right}"))
    empty = score_reply(item, "m", Reply(content="", finish_reason="length", reasoning_tokens=900))
    assert [o.failure_mode for o in (cut, unclosed, empty)] == ["truncated"] * 3
    assert not any(o.correct for o in (cut, unclosed, empty))
    assert thought.correct and no_open.correct and thought.reasoning == "tags"
    assert cut.finish_reason == "length" and empty.reasoning_tokens == 900


def test_lenient_extraction_is_opt_in_and_recorded() -> None:
    item = arithmetic()
    reply = Reply(content=f"Thus \\boxed{{{item.answer}}}.")
    strict = score_reply(item, "m", reply)
    lenient = score_reply(item, "m", reply, lenient=True)
    said = score_reply(item, "m", Reply(content=f"The answer is {item.answer}."), lenient=True)
    assert (strict.correct, strict.failure_mode, strict.extraction) == (
        False,
        "no_answer",
        "strict",
    )
    assert lenient.correct and lenient.extraction == "lenient:boxed"
    assert said.correct and said.extraction == "lenient:answer-is"
