"""Invalid suites: each fails with exactly one line naming the file, the key path and the
expectation — never a traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bounds import bounded, within
from reliability_matrix import record

from conftest import PLAIN
from pytest_reasoning.cli import main
from pytest_reasoning.config import is_suite_file, load_suite
from pytest_reasoning.errors import InvalidArgument, InvalidSuite
from pytest_reasoning.models.endpoints import load_model_list
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


ROOT = Path(__file__).resolve().parents[2]


ENTRY = "tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n"


BOMB = (  # 9^9 = 387,420,489 values from a few hundred bytes
    "a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{c}: &{c} [" + ", ".join([f"*{p}"] * 9) + "]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n    params: {ops: *i}\n"
)


# A value within the bounds whose repr is 9 MB: the error quoting it must clip.
WIDE = (
    "tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n    params: {depth: [&w "
    + "x" * 1000
    + ", *w" * 8_999
    + "]}\n"
)


HOSTILE_SUITES = {
    # name: (text, what the one line must say)
    "alias bomb": (BOMB, "s.yaml: f[0]: expands to more than 100,000 values"),
    "wide value": (WIDE, "s.yaml: tasks[0].params: knob 'depth': expected int, got ['xxx"),
    "100,000-deep nesting": ("tasks: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested deeper than 32 levels (line 1)"),
    "5,000-deep mapping": ("tasks: " + "{a: " * 5_000 + "1" + "}" * 5_000 + "\n" + ENTRY, "nested deeper than 32 levels (line 1)"),
    "complex key": ("? [a, b]\n: 1\n" + ENTRY, "s.yaml: a mapping key must be a plain value (line 1)"),
    "complex key in an entry": ("tasks:\n  - {? [a, b] : 1, task: dyval.arithmetic}\n", "s.yaml: tasks[0]: a mapping key must be a plain value (line 2)"),
    "5,000-digit seed": ("seed: " + "9" * 5_000 + "\n" + ENTRY, "s.yaml: seed: an integer of 5,000 digits; expected at most 100 (line 1)"),
    "recursive alias": ("params: &p {x: *p}\n" + ENTRY, "s.yaml: params.x: alias *p is inside its own anchor (line 1)"),
    "impossible date": ("seed: 2024-13-45\n" + ENTRY, "s.yaml: YAML value error at line 1, column 7: cannot read '2024-13-45' as timestamp"),
    "2 MB file": ("#" + "x" * 2_000_000 + "\n" + ENTRY, "s.yaml: too large for a suite file (2,000,053 bytes, limit 1,000,000)"),
}  # fmt: skip


LOAD_CASES = """
import json, resource, sys, time, tracemalloc
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # a bomb fails, not the machine
from pathlib import Path
from pytest_reasoning.config import load_suite
from pytest_reasoning.errors import InvalidSuite
Path("s.yaml").write_text("tasks: [{task: dyval.arithmetic, levels: [D1]}]")
load_suite("s.yaml")  # imports and first-use costs before measuring
for name, text in json.loads(sys.stdin.read()).items():
    Path("s.yaml").write_text(text, encoding="utf-8")
    tracemalloc.start()
    started = time.perf_counter()
    try:
        load_suite("s.yaml")
        said = None
    except InvalidSuite as exc:
        said = str(exc)
    took = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(json.dumps({"name": name, "said": said, "s": took, "peak": peak}), flush=True)
"""


@pytest.mark.e2e
def test_hostile_suites_fail_in_one_bounded_line(tmp_path: Path) -> None:
    """In a child process capped at 1 GiB (a regression must fail the test, not the machine):
    before, the bomb grew to 5.4 GB, the deep nesting segfaulted PyYAML, the complex key was
    a TypeError, the seed a ValueError, the deep mapping a RecursionError."""
    cases = {name: text for name, (text, _) in HOSTILE_SUITES.items()}
    done = subprocess.run([sys.executable, "-c", LOAD_CASES], input=json.dumps(cases),
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = {r["name"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert set(results) == set(HOSTILE_SUITES)
    rows = []
    for name, (_, expected) in HOSTILE_SUITES.items():
        said = results[name]["said"]
        assert said is not None and said.startswith("s.yaml: ") and "\n" not in said, name
        assert expected in said and len(said) <= 600, said
        peak = results[name]["peak"]
        assert peak < 50_000_000, (name, peak)  # a bound, far above what loading takes
        size = f"{peak / 1e6:.1f} MB" if peak >= 1e6 else f"{peak / 1e3:.0f} kB"
        rows.append(f"{name} {results[name]['s'] * 1000:.1f} ms, {size}")
    record(
        "suites",
        "each one line naming the file (and key); time to it and peak memory (tracemalloc), "
        "in a child capped at 1 GiB: " + "; ".join(rows),
    )


@pytest.mark.parametrize(
    "name", [n for n in HOSTILE_SUITES if n not in ("alias bomb", "wide value", "100,000-deep nesting")]
)  # fmt: skip
def test_malformed_suites_fail_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The cheap cases in-process too (the inner loop): one line naming the file and key."""
    text, expected = HOSTILE_SUITES[name]
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(InvalidSuite) as exc:
        load_suite("s.yaml")
    assert expected in str(exc.value) and "\n" not in str(exc.value)


def test_a_byte_order_mark_before_tasks_is_a_suite(pytester: pytest.Pytester) -> None:
    """Before: a suite saved with a UTF-8 BOM (Windows editors) was not found, then skipped."""
    suite = "tasks:\n  - {task: dyval.arithmetic, levels: [D1]}\nsamples: 2\n"
    (pytester.path / "bom.yaml").write_bytes(b"\xef\xbb\xbf" + suite.encode())
    result = pytester.runpytest("--llm", "reference", "-p", "no:cacheprovider", PLAIN)
    result.assert_outcomes(passed=2)


def test_a_suite_too_large_to_load_says_so(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a suite over 1 MB was "not found" by pytest (its sniff refused the file) and
    "not a suite file" by gate; now both say it is too large, in one line."""
    suite = "tasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n#" + "x" * 1_000_000 + "\n"
    (pytester.path / "big.yaml").write_text(suite)
    said = f"big.yaml: too large for a suite file ({len(suite):,} bytes, limit 1,000,000)"
    result = pytester.runpytest("big.yaml", "--llm", "reference", "-p", "no:cacheprovider", PLAIN)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error
    out = result.stdout.str()
    assert said in out and "not found" not in out
    row = {"item_id": "i", "model": "m", "task": "dyval.arithmetic", "level": "D1", "seed": 1,
           "prompt_sha256": "h", "response": "<<<1>>>", "extracted": "1", "gold": "1",
           "correct": True, "failure_mode": None, "error": None, "prompt_tokens": 1,
           "completion_tokens": 1, "latency_s": 0.1}  # fmt: skip
    (pytester.path / "r.jsonl").write_text(json.dumps(row) + "\n")
    capsys.readouterr()
    code = main(["gate", str(pytester.path / "big.yaml"), "--results", str(pytester.path / "r.jsonl")])
    err = capsys.readouterr().err
    assert code == 4 and said in err and len(err.splitlines()) == 1, err


def test_values_quoted_in_errors_are_clipped(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("samples: '" + "x" * 100_000 + "'\n" + ENTRY)
    with pytest.raises(InvalidSuite) as exc:
        load_suite(path, display="s.yaml")
    said = str(exc.value)
    assert said.startswith("s.yaml: samples: expected an integer, got str 'xxx")
    assert said.endswith("… [99,922 more characters]") and len(said) < 200
    path.write_text("tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n"
                    "    params: {depth: '" + "y" * 100_000 + "'}\n")  # fmt: skip
    with pytest.raises(InvalidSuite) as exc:  # a task's own knob message, clipped as a whole
        load_suite(path, display="s.yaml")
    said = str(exc.value)
    assert said.startswith("s.yaml: tasks[0].params: knob 'depth'") and len(said) <= 600


_YAML_TOKENS = [
    "tasks:", "task:", "levels:", "params:", "samples:", "seed:", "seeds:", "depth:", "width:",
    "style:", "id:", "min_accuracy:", "metric:", " ", "  ", "    ", "\n", "\n  ", "\n    ", "- ",
    "[", "]", "{", "}", ", ", ": ", "? ", "&a ", "&b ", "*a", "*b", "<<: ", "!!int ", "!!str ",
    "!!float ", "!!python/object:os.system ", "!!binary ", "'", '"', "#", "|\n", ">\n", "---\n",
    "...\n", "%YAML 1.1\n", "dyval.arithmetic", "zebra.grid", "flenqa.monorel", "D1", "D4",
    "3x3", "250", "9" * 120, "1e999", ".nan", "-1", "0", "12", "6", "~", "null", "true",
    "2024-13-45", "\ufeff", "\t", "\\u12", "\x00", "\x85", "é", "\U0001f600", "\udcff", "x" * 300,
]  # fmt: skip


_DOCS = st.lists(st.sampled_from(_YAML_TOKENS), max_size=80).map("".join)


_EXAMPLES = sorted((ROOT / "example_suites").glob("*.yaml"))


@st.composite
def _mutated_example(draw: st.DrawFn) -> str:
    """An example suite with a few edits: spans deleted or duplicated, lines swapped, tokens
    (anchors, aliases, brackets, huge numbers) inserted, numbers replaced."""
    text = draw(st.sampled_from(_EXAMPLES)).read_text()
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "duplicate", "number", "swap"]))
        if kind == "insert":
            text = text[:at] + draw(st.sampled_from(_YAML_TOKENS)) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        elif kind == "duplicate":
            text = text[:at] + text[at : at + draw(st.integers(1, 200))] * 2 + text[at:]
        elif kind == "number":
            number = draw(st.sampled_from(["0", "-3", "13", "1e21", "9" * 400, "0.5", "nan"]))
            text = re.sub(r"\d+", number, text, count=1) if at % 2 else text + number
        else:
            lines = text.splitlines(keepends=True)
            if len(lines) > 1:
                i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
                lines[i], lines[j] = lines[j], lines[i]
                text = "".join(lines)
    return text




# A sweep (many generated items or examples): CI runs it, the inner loop does not.
@pytest.mark.e2e
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_DOCS | _mutated_example())
def test_fuzzed_suite_files_load_or_fail_in_one_line(fuzz_dir: Path, text: str) -> None:
    """Random YAML documents and mutated example suites: a SuiteSpec, or one line naming the
    file; never another exception, a hang or a runaway allocation."""
    path = fuzz_dir / "f.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))  # lone bytes: invalid UTF-8
    with bounded():
        try:
            load_suite(path, display="f.yaml")
        except InvalidSuite as exc:
            # One line per mistake (a suite reports all of them at once), each short.
            lines = str(exc).splitlines()
            assert lines and len(lines) == len(exc.problems) <= 100, str(exc)
            for said in lines:
                assert said.startswith("f.yaml: ") and len(said) <= 600, said


def test_every_mistake_of_a_suite_at_collection(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml",
        bad="samles: 3\ntasks:\n  - task: dyval.reachabilty\n    levels: [D1]\n"
        "  - task: dyval.arithmetic\n    levels: [D1, d2]\n",
    )
    result = pytester.runpytest("--llm", "reference", "-p", "no:cacheprovider", PLAIN)
    result.stdout.fnmatch_lines(
        [
            "bad.yaml: samles: unknown key (did you mean 'samples'?)*",
            "bad.yaml: tasks[[]0[]].task: unknown task 'dyval.reachabilty' (did you mean "
            "'dyval.reachability'?)*",
            "bad.yaml: tasks[[]1[]].levels.d2: unknown level 'd2' for dyval.arithmetic (did "
            "you mean 'D2'?)*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_a_fifo_named_like_a_suite_never_hangs_a_plain_run(pytester: pytest.Pytester) -> None:
    """Without --llm the door sniffs YAML files for a top-level ``tasks:``; a FIFO with that
    name (no writer) must be passed over, not waited on."""
    import os

    os.mkfifo(pytester.path / "pipe.yaml")
    pytester.makepyfile(test_plain="def test_one():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=1)


@pytest.fixture
def specials(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "items.fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as fh:  # sparse: 2 GB on paper, nothing on disk
        fh.truncate(2_000_000_000)
    return {"a FIFO": fifo, "/dev/zero": Path("/dev/zero"), "a 2 GB file": huge}


def test_suites_and_model_lists_that_are_not_files_never_hang(
    tmp_path: Path, specials: dict[str, Path]
) -> None:
    """Before: a FIFO named ``*.yaml`` hung collection (the suite sniff read it), and a FIFO as
    ``--llm-config`` hung the run (its size, 0, passed the cap)."""
    fifo = tmp_path / "suite.yaml"
    os.mkfifo(fifo)
    with within():
        assert not is_suite_file(fifo)
        with pytest.raises(InvalidSuite, match=r"suite.yaml: not a regular file \(a FIFO"):
            load_suite(fifo, display="suite.yaml")
        with pytest.raises(InvalidArgument) as info:
            load_model_list(specials["a FIFO"])
    assert str(info.value) == f"{specials['a FIFO']}: not a regular file (a FIFO (named pipe))"
