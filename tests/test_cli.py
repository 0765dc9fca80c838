"""The ``pytest-reasoning`` command: export schema, streaming, one-line usage errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from pytest_reasoning.cli import main


def test_export_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "export",
                "dyval.arithmetic",
                "--level",
                "D2",
                "--count",
                "3",
                "--seed",
                "4",
                "--with-steps",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    row = json.loads(lines[1])
    assert list(row) == [
        "id",
        "task",
        "level",
        "seed",
        "index",
        "params",
        "style",
        "prompt",
        "answer",
        "problem",
        "steps",
    ]
    assert row["id"] == "dyval.arithmetic[D2-s4-001]"
    assert row["problem"]["target"] == row["problem"]["nodes"][-1]["name"]
    assert {n["op"] for n in row["problem"]["nodes"]} <= {
        None,
        "+",
        "-",
        "*",
        "/",
        "sqrt",
        "square",
    }
    assert row["steps"].endswith(f"<<<{row['answer']}>>>")


def test_export_param_changes_problem(capsys: pytest.CaptureFixture[str]) -> None:
    main(
        [
            "export",
            "dyval.boolean_logic",
            "--level",
            "D1",
            "--count",
            "1",
            "--param",
            "depth=4",
            "--param",
            "order=reversed",
        ]
    )
    row = json.loads(capsys.readouterr().out)
    assert row["params"]["depth"] == 4 and row["params"]["order"] == "reversed"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "dyval.nope", "--level", "D1"], "unknown task 'dyval.nope'"),
        (["export", "dyval.arithmetic", "--level", "D9"], "unknown level 'D9'"),
        (
            ["export", "dyval.arithmetic", "--level", "D1", "--param", "depth=0"],
            "knob 'depth': must be >= 1, got 0",
        ),
        (["export", "dyval.arithmetic", "--level", "D1", "--param", "oops"], "expected key=value"),
        (["export", "dyval.arithmetic"], "the following arguments are required: --level"),
    ],
)
def test_bad_arguments_are_one_line_usage_errors(argv: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", *argv], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_export_streams() -> None:
    from pytest_reasoning.cli import export_items

    buf = io.StringIO()
    assert export_items("dyval.arithmetic", "D4", 50, 1, {}, "cot", False, buf) == 50
    assert buf.getvalue().count("\n") == 50


@pytest.mark.parametrize(
    ("task", "keys"),
    [
        ("dyval.arithmetic", {"nodes", "target"}),
        ("dyval.linear_equation", {"equations", "nodes"}),
        ("dyval.boolean_logic", {"nodes", "target"}),
        ("dyval.deductive_logic", {"nodes", "target"}),
        ("dyval.abductive_logic", {"nodes", "target", "given"}),
        ("dyval.reachability", {"edges", "source", "target"}),
        ("dyval.max_sum_path", {"edges", "values", "source", "target"}),
    ],
)
def test_export_problem_schema_per_task(
    task: str, keys: set[str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["export", task, "--level", "D3", "--count", "2", "--param", "order=random"]
    assert main([*args, "--style", "fewshot", "--param", "shots=1", "--with-steps"]) == 0
    for line in capsys.readouterr().out.splitlines():
        row = json.loads(line)
        assert set(row["problem"]) == keys
        assert row["steps"].endswith(f"<<<{row['answer']}>>>")
        assert row["style"] == "fewshot" and row["params"]["order"] == "random"


def test_export_says_when_a_small_level_repeats(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "dyval.boolean_logic", "--level", "D1", "--count", "30"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 30
    assert "20 of 30 items repeat an earlier problem" in captured.err
    assert "\n" not in captured.err.rstrip("\n")


def test_export_list_knob_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["export", "dyval.arithmetic", "--level", "D2", "--count", "3"]
    assert main([*args, "--param", "ops=[+, -]", "--param", "extra_links=1"]) == 0
    for line in capsys.readouterr().out.splitlines():
        row = json.loads(line)
        assert row["params"]["ops"] == ["+", "-"]
        assert {n["op"] for n in row["problem"]["nodes"]} <= {"+", "-", None}
