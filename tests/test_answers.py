"""Answer extraction: the documented leniency, and never an exception on any text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_reasoning.answers import extract_delimited, format_number, normalise_label, parse_number
from pytest_reasoning.registry import all_tasks


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


@given(st.text())
def test_every_scorer_survives_arbitrary_text(text: str) -> None:
    for task in all_tasks().values():
        item = task.make_item(task.levels[0], 1, 0)
        score = task.score(item, text)
        assert score.correct in (True, False)
        assert score.correct or score.failure_mode
