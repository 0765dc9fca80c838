"""Command lines of every command, fuzzed with hostile values (/dev/full, NaN, 5,000-digit
numbers, alias bombs): each answers or fails in one line."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest
from bounds import bounded
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_reasoning.cli import main


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]




# Every command's flags with hostile values; frontier only ever answers with the reference
# solver (no model is called), and the slow knobs are kept small after drawing (see _argv).
_POOLS = {
    "num": ["0", "1", "2", "3", "-1", "0.5", "1.5", "nan", "inf", "-inf", "1e21", "1e-300",
            "9" * 5000, ""],
    "small": ["0", "1", "3", "-1", "x"],
    "task": ["dyval.arithmetic", "dyval.deductive_logic", "dyval.reachability", "zebra.grid",
             "flenqa.monorel", "musr.team_allocation", "nope", ""],
    "level": ["D1", "D4", "2x3", "250", "L1", "D9", "x"],
    "knob": ["depth", "width", "nodes", "houses", "moves", "distractors", "nope"],
    "param": ["depth=12", "width=6", "depth=3", "ops=[and, not]", "ops=[]", "balanced=false",
              "distractors=20", "shots=8", "padding=similar", "houses=10", "=3", "x",
              "depth=1e21", "depth=.nan", "x=[&a [1,1,1], &b [*a,*a,*a]]",
              "ops=" + "[" * 100_000, "depth=" + "9" * 5000, "depth=2024-13-45"],
    "int": ["0", "1", "3", "-1", "2147483648", "9" * 5000, "x"],
    "in": ["RESULTS", "/dev/full", "/proc/version", "/nonexistent/x", "", "\udcff"],
    "out": ["OUT", "/dev/full", "/proc/version", "/nonexistent/x", "", "\udcff"],
    "style": ["direct", "cot", "fewshot", "nope"],
    "model": ["reference"],
    "cache": ["off"],
}  # fmt: skip


# command: (positional pools, required flags, other flags); a flag maps to its value pool.
_COMMANDS: dict[str, tuple[list[str], dict[str, str | None], dict[str, str | None]]] = {
    "export": (["task"], {"--level": "level"},
               {"--count": "small", "--seed": "int", "--param": "param", "--style": "style",
                "--with-steps": None, "-o": "out"}),
    "tasks": ([], {}, {}),
    "plan": ([], {"--drop": "num", "--baseline-accuracy": "num"},
             {"--power": "num", "--alpha": "num", "--levels": "int", "--discordance": "num"}),
    "frontier": ([], {"--task": "task", "--knob": "knob", "--min": "int", "--max": "int"},
                 {"--target": "num", "--level": "level", "--param": "param", "--seed": "int",
                  "--confidence": "num", "--max-calls": "small", "--json": "out"}),
    "robustness": (["in"], {}, {"--out": "out", "--permutations": "small",
                                "--samples": "small", "--seed": "int"}),
    "report": (["in"], {"--out": "out"}, {"--baseline": "task"}),
}  # fmt: skip


_SAFE = {"--llm", "--cache"}  # never drawn as junk: they could name a paid model


_JUNK = sorted(
    ({w for _, need, more in _COMMANDS.values() for w in {**need, **more}} | set(_COMMANDS)) - _SAFE
)


_JUNK += ["-h", "--", "--nope"]


@st.composite
def _argv(draw: st.DrawFn) -> list[str]:
    """A command with some of its flags and hostile values, now and then with junk words
    mixed in (or only junk)."""
    command = draw(st.sampled_from(sorted(_COMMANDS)))
    positional, required, optional = _COMMANDS[command]
    flags = {**required, **optional}
    words = [command] + [draw(st.sampled_from(_POOLS[p])) for p in positional]
    chosen = draw(st.lists(st.sampled_from(sorted(flags) or ["--"]), max_size=6))
    if draw(st.integers(0, 4)):  # mostly with the required flags
        chosen = [*required, *chosen]
    for flag in draw(st.permutations(chosen)):
        words.append(flag)
        kind = flags.get(flag)
        if kind is not None:
            words.append(draw(st.sampled_from(_POOLS[kind])))
    if draw(st.integers(0, 4)) == 0:
        junk = draw(st.lists(st.sampled_from(_JUNK + _POOLS["num"]), max_size=4))
        at = draw(st.integers(0, len(words)))
        words[at:at] = junk
    if command == "frontier":  # the reference only, no cache, few samples: bounded and free
        words[1:1] = ["--llm", "reference", "--cache", "off", "--max-samples", "4"]
    return words


@pytest.fixture(scope="module")
def results_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small results file of two models for robustness and report to read."""
    path = tmp_path_factory.mktemp("results") / "r.jsonl"
    rows = []
    for model, right in (("a", True), ("b", False)):
        for i in range(4):
            rows.append({"item_id": f"t[D1-s1-00{i}]", "model": model, "task": "dyval.arithmetic",
                         "level": "D1", "seed": 1, "prompt_sha256": f"{i}", "response": "x",
                         "extracted": "x", "gold": "1", "correct": right or i % 2 == 0,
                         "failure_mode": None, "error": None, "prompt_tokens": 1,
                         "completion_tokens": 1, "latency_s": 0.1, "score": None, "extra": {}})  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.e2e  # a fuzzing campaign (500 command lines, ~20 s of CPU): CI runs it
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(argv=_argv())
def test_fuzzed_command_lines_answer_or_fail_in_one_line(
    fuzz_dir: Path, results_file: Path, argv: list[str]
) -> None:
    """Random argument lists for every command, run in-process: exit 0, or exit 4 (usage) with
    one line on stderr; never a traceback, a hang or a runaway allocation."""
    argv = [str(results_file) if a == "RESULTS" else str(fuzz_dir / "out") if a == "OUT" else a
            for a in argv]  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(fuzz_dir)  # files the commands write land here
    try:
        with bounded(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: usage errors, --help
                code = exc.code if isinstance(exc.code, int) else 4
    finally:
        os.chdir(cwd)
    lines = _lines(err.getvalue())
    assert code in (0, 4), (argv, code, lines)
    if code == 4:
        assert len(lines) == 1 and lines[0].startswith("pytest-reasoning: error: "), (argv, lines)
        assert len(lines[0]) <= 1100
    else:
        assert all(line.startswith("pytest-reasoning: note: ") for line in lines), (argv, lines)
