"""Hostile input and faults (issue 20): replies no file can hold, YAML bombs and malformed
suites, knob values that would never finish, bad plugin options, a damaged cache, a full disk
under xdist, unwritable exports, huge replies in JUnit, a misleading error, and two runs
paying twice for one prompt. Each case answers in one line, bounded, losing no paid answer.
With ``REASONING_UPDATE_DOCS=1`` the tests write what they measured into the matrix of
docs/reliability.md. The suite loader and the CLI are fuzzed with Hypothesis at the end."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import forkrun
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import PLAIN
from pytest_reasoning.cli import main
from pytest_reasoning.config import load_suite
from pytest_reasoning.core import Item, Reply
from pytest_reasoning.errors import InvalidArgument, InvalidSuite
from pytest_reasoning.evaluate import EvalConfig, Evaluator, score_reply
from pytest_reasoning.models.cache import ResponseCache, new_owner
from pytest_reasoning.registry import get_task, task_ids
from pytest_reasoning.tasks.base import resolve_params
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer, hostile_answers

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "reliability.md"


def record(name: str, text: str) -> None:
    """Put ``text`` between ``<!-- hostile:NAME -->`` marks in docs/reliability.md, when
    REASONING_UPDATE_DOCS is set: the page quotes the last measured run, not a guess."""
    if not os.environ.get("REASONING_UPDATE_DOCS"):
        return
    import fcntl

    with DOC.open("r+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # xdist workers may record at the same time
        doc = fh.read()
        start, end = f"<!-- hostile:{name} -->", f"<!-- /hostile:{name} -->"
        a, b = doc.index(start) + len(start), doc.index(end)
        fh.seek(0)
        fh.write(doc[:a] + text + doc[b:])
        fh.truncate()


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _pytest(cwd: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    return forkrun.run(cmd, cwd=cwd, **kwargs)


SMALL = "seed: 3\nsamples: 2\ntasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n"


# -- 1 and 9: a lone surrogate, and 1 MB replies in JUnit -----------------------------------------
@pytest.fixture(scope="module")
def hostile_replies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run under ``-n 2`` of two hostile models (a lone surrogate in every reply; replies
    of 999,000 characters) with results, JUnit and an HTML report, then a rerun (no workers)
    from the cache."""
    root = tmp_path_factory.mktemp("replies")
    (root / "s.yaml").write_text(SMALL)
    out: dict[str, Any] = {}
    with FakeOpenAIServer() as server:
        common = ["s.yaml", "--llm", "openai/surrogate", "--llm", "openai/long:999000",
                  "--llm-api-base", server.url, "--reasoning-cache", "c"]  # fmt: skip
        out["first"] = _pytest(root, *common, "-n", "2", "--reasoning-results=r.jsonl",
                               "--junitxml=j.xml", "--reasoning-report=report")  # fmt: skip
        out["asked"] = server.stats()["total"]
        out["rerun"] = _pytest(root, *common, "--reasoning-results=r2.jsonl", "--junitxml=j2.xml")
        out["asked_again"] = server.stats()["total"] - out["asked"]
    out["root"] = root
    return out


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.e2e
def test_a_lone_surrogate_is_stored_scored_and_reported(hostile_replies: dict[str, Any]) -> None:
    """Before: INTERNALERROR in the results writer, a DumpError killing the xdist worker, a
    0-byte report, and the bad reply replayed from the cache on every rerun."""
    root, first, rerun = hostile_replies["root"], hostile_replies["first"], hostile_replies["rerun"]
    assert first.returncode == 0, first.stdout[-3000:]
    assert "INTERNALERROR" not in first.stdout + first.stderr
    for name in ("r.jsonl", "r2.jsonl"):
        rows = [r for r in _rows(root / name) if r["model"] == "openai/surrogate"]
        assert len(rows) == 2 and all(r["correct"] is True for r in rows)
        assert all(r["response"].endswith(" \ufffd") for r in rows)  # replaced, not dropped
    assert rerun.returncode == 0 and hostile_replies["asked_again"] == 0  # served by the cache
    for junit in ("j.xml", "j2.xml"):
        ET.parse(root / junit)  # well-formed
    index = root / "report" / "index.html"
    assert index.stat().st_size > 1000 and index.read_text().rstrip().endswith("</html>")
    record(
        "surrogate",
        f"4 items, `-n 2`: exit 0, 2 of 2 surrogate rows scored correct with U+FFFD in place, "
        f"JUnit well-formed, report {index.stat().st_size:,} bytes; the rerun took all "
        f"{len(_rows(root / 'r2.jsonl'))} answers from the cache (0 requests)",
    )


@pytest.mark.e2e
def test_junit_keeps_long_replies_short_and_the_results_file_whole(
    hostile_replies: dict[str, Any],
) -> None:
    """Before: two 1 MB replies made a 2 MB JUnit file."""
    root = hostile_replies["root"]
    rows = [r for r in _rows(root / "r.jsonl") if r["model"] == "openai/long:999000"]
    assert len(rows) == 2 and all(len(r["response"]) > 999_000 for r in rows)  # whole, via xdist
    junit = (root / "j.xml").stat().st_size
    assert junit < 30_000
    assert "more characters]" in (root / "j.xml").read_text()
    record(
        "junit",
        f"two 999,000-character replies under `-n 2`: JUnit {junit / 1000:.1f} kB (each text "
        f"clipped to 1,000 characters with a marker), results file "
        f"{(root / 'r.jsonl').stat().st_size / 1e6:.1f} MB with both replies whole",
    )


def test_a_cached_reply_with_a_lone_surrogate_from_an_older_run_is_cleaned(
    tmp_path: Path,
) -> None:
    """An older version stored the reply as it came: reading it must not bring the surrogate
    back into the run."""
    item = make_item(get_task("dyval.arithmetic"), "D1", 1, 0, {}, "direct")
    evaluator = Evaluator(EvalConfig(api_base="http://127.0.0.1:9/v1", cache_dir=str(tmp_path)))
    request = evaluator.request_for(item, "openai/x")
    stored = json.dumps({"content": f"<<<{item.answer}>>> \ud800", "error": None})
    ResponseCache(tmp_path).close()  # the tables
    db = sqlite3.connect(tmp_path / "responses.sqlite3")
    db.execute("INSERT INTO responses VALUES (?, ?, 0, ?)", (request.key, "openai/x", stored))
    db.commit()
    db.close()
    try:
        outcome = evaluator.answer(item, "openai/x")  # nobody listens on port 9: cache only
    finally:
        evaluator.close()
    assert outcome.cached and outcome.correct is True
    assert outcome.response == f"<<<{item.answer}>>> \ufffd"
    json.dumps(outcome.to_dict(), ensure_ascii=False).encode("utf-8")  # writable anywhere


def test_reply_text_is_valid_unicode_whatever_the_endpoint_sent() -> None:
    reply = Reply(content="a\ud800b\udfff \ud83d\ude00", error="bad \udcff byte")
    assert reply.content == "a\ufffdb\ufffd \U0001f600"  # a valid pair is kept as one
    assert reply.error == "bad \ufffd byte"


# -- 2 and 3: YAML bombs and malformed suites ----------------------------------------------------
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


# -- 4: knob limits that hung ------------------------------------------------------------------------
@pytest.mark.parametrize(("depth", "width", "nodes"), [(12, 6, "435,356,467"), (8, 6, "335,923")])
def test_trees_past_the_node_limit_fail_before_generating(
    depth: int, width: int, nodes: str
) -> None:
    """Before: depth 12 × width 6 (both documented maxima) never finished; 8 × 6 wrote an
    8 MB prompt. Now the knobs are refused when resolved, before anything is built."""
    for task in ("dyval.arithmetic", "dyval.boolean_logic", "dyval.linear_equation"):
        with pytest.raises(InvalidArgument) as exc:
            resolve_params(get_task(task), "D1", {"depth": depth, "width": width})
        assert str(exc.value) == (
            f"knob 'depth': depth {depth} × width {width} makes up to {nodes} nodes; "
            "at most 5,000 (lower depth or width)"
        )


def test_the_node_limit_names_the_knob_in_a_suite_and_in_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n"
                    "    params: {depth: 12, width: 6}\n")  # fmt: skip
    with pytest.raises(InvalidSuite) as exc:
        load_suite(path, display="s.yaml")
    assert str(exc.value).startswith("s.yaml: tasks[0].params: knob 'depth': depth 12 × width 6")
    argv = [
        "export",
        "dyval.arithmetic",
        "--level",
        "D1",
        "--param",
        "depth=8",
        "--param",
        "width=6",
    ]
    assert main(argv) == 4
    captured = capsys.readouterr()
    assert captured.out == "" and _lines(captured.err) == [
        "pytest-reasoning: error: knob 'depth': depth 8 × width 6 makes up to 335,923 nodes; "
        "at most 5,000 (lower depth or width)"
    ]


def test_the_largest_allowed_trees_stay_a_bounded_prompt() -> None:
    """Every operation binary, at the allowed extremes: prompts of at most a few hundred kB."""
    sizes = {}
    for depth, width in [(12, 2), (8, 3), (6, 5), (5, 6)]:
        item = make_item(get_task("dyval.arithmetic"),
            "D1", 1, 0, {"depth": depth, "width": width, "ops": ["+"]}, "direct"
        )
        sizes[f"{depth}x{width}"] = len(item.prompt)
    assert max(sizes.values()) < 400_000, sizes
    record(
        "knobs",
        "depth 12 × width 6 and 8 × 6 refused when the knobs are resolved (one line naming "
        "`depth`); the largest allowed trees, every operation binary, give prompts of "
        + ", ".join(f"{k} {v / 1000:.0f} kB" for k, v in sizes.items()),
    )


# -- 10: the misleading balanced-draw error -----------------------------------------------------
def test_a_balanced_draw_that_gives_up_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """Before: 'label True not reachable' although other seeds reach it."""
    # True needs every rule above the bottom one to be an AND (NOT over a rule is never
    # True): about 1 shape in 8,000 at depth 5, width 3 (issue 25 draws the leaves for the
    # answer, so only the shape is left to chance).
    argv = ["export", "dyval.deductive_logic", "--level", "D4", "--seed", "1",
            "--param", 'ops=["and","not"]', "--param", "depth=5", "--param", "width=3"]  # fmt: skip
    assert main(argv) == 4
    (line,) = _lines(capsys.readouterr().err)
    assert line == (
        "pytest-reasoning: error: knob 'balanced': no True answer in 1,000 draws for this item "
        "(depth 5, width 3, ops ['and', 'not']): rare under these knobs or in this train/test "
        "split (docs/tasks/splits.md), perhaps impossible; widen the search with more ops, "
        "another depth or width, or balanced: false"
    )
    # The remedy it names works (before the split, seed 5 drew a True item within 1,000; the
    # test split halves those odds, and seeds 2-20 miss it).
    assert main([*argv, "--param", "balanced=false", "--count", "2"]) == 0


# -- 5: plugin options checked once, at configure ------------------------------------------------
BAD_OPTIONS = [
    (["--llm-param", "x"], "--llm-param: expected key=value, got 'x'"),
    (["--llm-param", "temperature=["], "--llm-param: temperature: expected a number, got '['"),
    (["--llm-param", "max_tokens=1.5"], "--llm-param: max_tokens: expected an integer, got 1.5"),
    (["--llm-param", "temperature=.nan"], "--llm-param: temperature: expected a finite number, got nan"),
    (["--llm-param", "when=2024-01-01"], "--llm-param: when: date datetime.date(2024, 1, 1) is not a JSON value; quote it"),
    (["--llm-api-base", "http://[::1"], "--llm-api-base: 'http://[::1': Invalid IPv6 URL"),
    (["--llm-api-base", "http://h:99999/v1"], "--llm-api-base: 'http://h:99999/v1': Port out of range 0-65535"),
    (["--llm-api-base", "localhost:8000"], "--llm-api-base: expected an http(s) URL such as http://127.0.0.1:8000/v1, got 'localhost:8000'"),
    (["--reasoning-samples", "1" + "0" * 21], "--reasoning-samples: expected at most 100,000, got 1,000,000,000,000,000,000,000"),
    (["--reasoning-timeout", "-1"], "--reasoning-timeout: expected a positive number of seconds, got -1.0"),
    (["--reasoning-timeout", "0"], "--reasoning-timeout: expected a positive number of seconds, got 0.0"),
    (["--reasoning-timeout", "nan"], "--reasoning-timeout: expected a positive number of seconds, got nan"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"), BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS]
)
def test_bad_options_are_one_line_before_any_item(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    """Before: a traceback per item (1,886 lines), a hang (1e21 samples collected), or
    accepted. Now exit 4 and one line, and the endpoint is never asked."""
    pytester.makefile(".yaml", s=SMALL)
    with FakeOpenAIServer() as server:
        argv = ["--llm", "openai/oracle", "--llm-api-base", server.url, *args]
        result = pytester.runpytest(*argv, "--reasoning-cache", "off", PLAIN)
        asked = server.stats()["total"]
    assert result.ret == pytest.ExitCode.USAGE_ERROR and asked == 0
    assert _lines(result.stderr.str()) == [f"ERROR: {message}"]


def test_the_option_checks_are_recorded() -> None:
    record(
        "options",
        f"{len(BAD_OPTIONS)} bad values (`--llm-param x`, `temperature=[`, `max_tokens=1.5`, "
        "a date, NaN, `http://[::1`, port 99999, no scheme, 10²¹ samples, timeouts −1, 0, "
        "NaN; the timeouts were already refused since issue 18): each exit 4, one line, "
        "0 requests",
    )


# -- 6: a damaged cache --------------------------------------------------------------------------
def _damaged_cache(folder: Path, answers: int = 300) -> bytes:
    """A cache of ``answers`` replies whose pages (not its header) were overwritten."""
    cache = ResponseCache(folder)
    conn = cache._connect()
    conn.executemany(
        "INSERT INTO responses VALUES (?, 'openai/oracle', 0, ?)",
        [(f"{i:064x}", json.dumps({"content": f"<<<{i}>>>"})) for i in range(answers)],
    )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cache.close()
    path = folder / "responses.sqlite3"
    size = path.stat().st_size
    with path.open("r+b") as fh:  # every page after the first: the header and schema intact
        fh.seek(4096)
        fh.write((bytes(range(256)) * 16 * ((size - 4096) // 4096 + 1))[: size - 4096])
    return path.read_bytes()


def test_a_damaged_cache_stops_the_run_before_any_call(pytester: pytest.Pytester) -> None:
    """Before: the start-up check passed, then every item failed with sqlite3.DatabaseError
    (266,011 lines, exit 1)."""
    pytester.makefile(".yaml", s=SMALL)
    folder = pytester.path / "cache"
    before = _damaged_cache(folder)
    with FakeOpenAIServer() as server:
        result = pytester.runpytest("--llm", "openai/oracle", "--llm-api-base", server.url,
                                    "--reasoning-cache", str(folder), PLAIN)  # fmt: skip
        asked = server.stats()["total"]
    assert result.ret == pytest.ExitCode.USAGE_ERROR and asked == 0
    (line,) = _lines(result.stderr.str())
    path = folder / "responses.sqlite3"
    assert line.startswith(f"ERROR: --reasoning-cache: the response cache {path} is damaged (")
    assert f"move its folder aside (mv {folder} {folder}.damaged) and rerun" in line
    assert path.read_bytes() == before  # nothing paid for was touched
    record(
        "damaged",
        "300 answers, every page but the first overwritten: exit 4 at start, one line naming the file and the "
        "`mv` that moves it aside, 0 requests, the file untouched",
    )


def test_damage_met_during_a_run_stops_it_in_one_line(tmp_path: Path) -> None:
    """Damage the start-up check could not see (the check skipped, as past its budget): the
    first read stops the evaluator from asking; the error names the file."""
    _damaged_cache(tmp_path)
    with FakeOpenAIServer() as server:
        evaluator = Evaluator(EvalConfig(api_base=server.url, cache_dir=str(tmp_path)))
        try:
            item = make_item(get_task("dyval.arithmetic"), "D1", 1, 0, {}, "direct")
            outcome = evaluator.answer(item, "openai/oracle")
            second = evaluator.answer(
                make_item(get_task("dyval.arithmetic"), "D1", 1, 1, {}, "direct"), "openai/oracle"
            )
        finally:
            evaluator.close()
        asked = server.stats()["total"]
    assert asked == 0 and outcome.correct is None and second.correct is None
    assert evaluator.storage_error is not None and "is damaged" in evaluator.storage_error
    assert outcome.error is not None and outcome.error.startswith(
        f"not asked: the response cache {tmp_path / 'responses.sqlite3'} is damaged"
    )


def test_frontier_with_a_damaged_cache_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _damaged_cache(tmp_path)
    argv = ["frontier", "--llm", "openai/x", "--llm-api-base", "http://127.0.0.1:9/v1", "--task",
            "dyval.arithmetic", "--knob", "depth", "--min", "1", "--max", "2", "--cache",
            str(tmp_path)]  # fmt: skip
    assert main(argv) == 4  # found before any call: usage, as the plugin's
    (line,) = _lines(capsys.readouterr().err)
    assert line.startswith(f"pytest-reasoning: error: the response cache {tmp_path}")
    assert "is damaged" in line


# -- 7: a full disk under -n 2 -----------------------------------------------------------------
KILL_SUITE = """\
seed: 9
samples: 60
tasks:
  - {task: dyval.arithmetic, levels: [D1, D2]}
"""


def _file_limit(max_bytes: int) -> Any:
    def limit() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    return limit


@pytest.mark.e2e
def test_a_full_disk_under_xdist_loses_at_most_the_calls_in_flight(tmp_path: Path) -> None:
    """Before (-n 2): 68 answered, 18 kept — the prefetched calls still went out after the
    first failed write. Now every call first claims its prompt in the cache (a write), and no
    call starts after a failed write: what is lost is at most the calls in flight, here
    2 per worker."""
    (tmp_path / "k.yaml").write_text(KILL_SUITE)
    cache = tmp_path / "cache"
    with FakeOpenAIServer(latency_s=0.02) as server:
        done = _pytest(tmp_path, "k.yaml", "--llm", "openai/oracle", "--llm-api-base", server.url,
                       "-n", "2", "--reasoning-concurrency", "2", "--reasoning-cache", str(cache),
                       preexec_fn=_file_limit(60_000))  # fmt: skip
        asked = server.stats()["total"]
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:]
    stops = [line for line in done.stdout.splitlines() if "stopped asking the model" in line]
    assert len(stops) == 1 and "Traceback" not in done.stdout + done.stderr
    db = sqlite3.connect(cache / "responses.sqlite3")
    kept = db.execute("SELECT count(*) FROM responses").fetchone()[0]
    db.close()
    assert kept >= 1 and asked - kept <= 2 * 2, (asked, kept)
    record(
        "disk-xdist",
        f"`-n 2`, 2 calls in flight per worker, the cache's files capped at 60 kB: {asked} "
        f"answered, {kept} kept, {asked - kept} lost (bound: 4)",
    )


@pytest.mark.e2e
def test_a_full_disk_counts_only_the_rows_really_written(tmp_path: Path) -> None:
    """Before: the summary claimed rows ('12 answers recorded') the results file did not
    hold, and a row refused by the full disk reached it later from the write buffer."""
    (tmp_path / "k.yaml").write_text(KILL_SUITE)
    res = tmp_path / "r.jsonl"
    with FakeOpenAIServer() as server:
        done = _pytest(tmp_path, "k.yaml", "--llm", "openai/oracle", "--llm-api-base", server.url,
                       "--reasoning-cache", "off", f"--reasoning-results={res}",
                       preexec_fn=_file_limit(20_000))  # fmt: skip
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:]
    (said,) = re.findall(r"gates not decided: .*?; (\d+) answers recorded", done.stdout)
    text = res.read_text()
    assert text.endswith("\n") and int(said) == text.count("\n") == len(_rows(res))
    record(
        "disk-count",
        f"results file capped at 20 kB: the summary says {said} answers recorded and "
        f"the file holds exactly {said} whole rows ({len(text):,} bytes, no torn row)",
    )


# -- 8: export write errors ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "reason"),
    [("/dev/full", "No space left on device"), ("/proc/version", None)],
)
def test_export_to_an_unwritable_file_is_one_line(
    capsys: pytest.CaptureFixture[str], target: str, reason: str | None
) -> None:
    if not Path(target).exists():
        pytest.skip(f"{target} is Linux-only")
    assert main(["export", "dyval.arithmetic", "--level", "D1", "--count", "50", "-o", target]) == 4
    (line,) = _lines(capsys.readouterr().err)
    assert line.startswith(f"pytest-reasoning: error: --output: cannot write {target}: ")
    assert reason is None or line.endswith(reason)


@pytest.mark.e2e
@pytest.mark.parametrize("argv", [["export", "dyval.arithmetic", "--level", "D1"], ["tasks"],
                                  ["plan", "--drop", "0.1", "--baseline-accuracy", "0.8"]])  # fmt: skip
def test_a_full_stdout_is_one_line_and_exit_4(argv: list[str]) -> None:
    """``> /dev/full``: before, a traceback and exit 1 (or 120 at interpreter exit)."""
    if not Path("/dev/full").exists():
        pytest.skip("/dev/full is Linux-only")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "pytest_reasoning.cli", *argv],
                              stdout=full, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert done.returncode == 4  # an output that cannot be written: usage, as pytest's report
    assert _lines(done.stderr) == [
        "pytest-reasoning: error: cannot write the standard output: No space left on device"
    ]
    record("export", "`-o /dev/full`, `-o /proc/version`, `> /dev/full` (export, tasks, plan): "
                     "exit 4, one line each")  # fmt: skip


# -- 11: concurrent runs sharing a cache ---------------------------------------------------------
def _item(index: int) -> Item:
    return make_item(get_task("dyval.arithmetic"), "D2", 5, index, {}, "direct")


def test_two_evaluators_sharing_a_cache_pay_once_per_prompt(tmp_path: Path) -> None:
    """Two runs (here two evaluators, as two processes would) want the same 12 prompts at
    once: the second waits for the first's answers instead of paying again."""
    with FakeOpenAIServer(latency_s=0.2) as server:
        config = EvalConfig(api_base=server.url, cache_dir=str(tmp_path), concurrency=4)
        first, second = Evaluator(config), Evaluator(config)
        try:
            pairs = [(_item(i), "openai/oracle") for i in range(12)]
            first.prefetch(pairs)
            second.prefetch(pairs)
            outcomes = [e.answer(i, m) for i, m in pairs for e in (first, second)]
        finally:
            first.close()
            second.close()
        asked = server.stats()["total"]
    assert asked == 12 and all(o.correct for o in outcomes)
    assert sum(o.cached for o in outcomes) >= 12  # one of each pair came from the other


def test_a_claim_is_taken_over_from_a_dead_holder_at_once_and_from_a_live_one_never(
    tmp_path: Path,
) -> None:
    cache = ResponseCache(tmp_path)
    me, other = new_owner(), new_owner()
    assert cache.claim("k", me, 600) and not cache.claim("k", other, 600)  # live: wait
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host, _pid, *_ = me.split("/")
    dead = f"{host}/{gone.pid}/1/x"
    cache._connect().execute("UPDATE claims SET owner = ? WHERE key = 'k'", (dead,))
    assert cache.claim("k", other, 600)  # a killed run's claim: taken over, no waiting
    cache._connect().execute("UPDATE claims SET expires = 0 WHERE key = 'k'")
    assert cache.claim("k", me, 600)  # an expired one too
    cache.release("k", me)
    assert cache.claim("k", other, 600)  # a released one
    cache.forget(other)
    assert cache._connect().execute("SELECT count(*) FROM claims").fetchone()[0] == 0
    cache.close()


@pytest.mark.e2e
def test_two_concurrent_runs_sharing_a_cache_pay_once_per_prompt(tmp_path: Path) -> None:
    """Before: two runs sharing one cache made 479 calls for 276 prompts."""
    (tmp_path / "k.yaml").write_text(KILL_SUITE.replace("samples: 60", "samples: 10"))
    with FakeOpenAIServer(latency_s=0.1) as server:
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "k.yaml",
               "--llm", "openai/oracle", "--llm-api-base", server.url,
               "--reasoning-cache", "shared", "--reasoning-concurrency", "4"]  # fmt: skip
        runs = [subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, text=True)
                for _ in range(2)]  # fmt: skip
        outputs = [run.communicate(timeout=600)[0] for run in runs]
        asked = server.stats()["total"]
    assert [run.returncode for run in runs] == [0, 0], outputs[0][-2000:] + outputs[1][-2000:]
    db = sqlite3.connect(tmp_path / "shared" / "responses.sqlite3")
    prompts = db.execute("SELECT count(*) FROM responses").fetchone()[0]
    db.close()
    assert asked == prompts, (asked, prompts)  # one call per distinct prompt
    record(
        "claims",
        f"two runs at once on one cache, {prompts} distinct prompts: {asked} calls",
    )


# -- 12 (issue 44): a model's answer is data, never code ---------------------------------------
# The built-in tasks, the gym scorers that evaluated answers (eval, sympy's parse_expr) and six
# others run in the inner loop; every other registered task in the full sweep.
_EVALUATING = {"gym.binary_matrix", "gym.spiral_matrix", "gym.string_insertion",
               "gym.number_sorting", "gym.bitwise_arithmetic", "gym.countdown", "gym.puzzle24",
               "gym.simple_integration", "gym.intermediate_integration"}  # fmt: skip
_GYM = [t for t in task_ids() if t.startswith("gym.")]
_INNER = [t for t in task_ids() if not t.startswith("gym.") or t in _EVALUATING]
_INNER += ["gym.basic_arithmetic", "gym.codeio", "gym.game_of_life", "gym.knights_knaves",
           "gym.pool_matrix", "gym.tower_of_hanoi"]  # json, numpy, regexes: cheap to make
_EVERY = [t if t in _INNER else pytest.param(t, marks=pytest.mark.e2e) for t in task_ids()]


@pytest.mark.parametrize("tid", _EVERY)
def test_hostile_answers_never_run_in_any_scorer(tid: str, tmp_path: Path) -> None:
    """Before: ``<answer>__import__('pathlib').Path(...).write_text(<the API key>)</answer>``
    ran in binary_matrix's scorer (spiral_matrix, string_insertion: eval too; countdown,
    puzzle24 and the integration tasks: sympy's parse_expr). Every registered task now
    scores code in its answer format (``<answer>``, ``<<<>>>``, ``\\boxed{}`` read leniently)
    as an answer, raising nothing, and no canary file appears."""
    canary = tmp_path / "canary"
    task = get_task(tid)
    item = make_item(task, task.levels[0], 1, 0)
    for answer in hostile_answers(str(canary)):
        for text in (f"<answer>{answer}</answer>", f"<<<{answer}>>>", f"\\boxed{{{answer}}}"):
            reply = Reply(content=text, prompt_tokens=1, completion_tokens=1, latency_s=0.0)
            row = score_reply(item, "openai/hostile", reply, lenient=True)
            assert row.error is None and row.failure_mode != "scorer_error", row
    assert not canary.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.e2e
def test_hostile_answers_from_an_endpoint_and_from_its_cache_never_run(tmp_path: Path) -> None:
    """The attack of issue 44 end to end: five hostile models (each answer a different
    payload) over HTTP, then the same run again from the response cache with no network.
    Nothing runs, every sample is a wrong answer, no traceback."""
    canary = tmp_path / "canary"
    lines = ["seed: 5", "samples: 2", "tasks:"]
    lines += [f"  - {{task: {t}, levels: [L0]}}" for t in sorted(_EVALUATING)]
    lines += ["  - {task: dyval.arithmetic, levels: [D1]}"]
    (tmp_path / "h.yaml").write_text("\n".join(lines) + "\n")
    models = [f"openai/hostile:{k}:{canary}" for k in range(len(hostile_answers("x")))]
    runs, asked = [], []
    with FakeOpenAIServer() as server:
        for results in ("r1.jsonl", "r2.jsonl"):
            argv = [a for m in models for a in ("--llm", m)]
            runs.append(_pytest(tmp_path, "h.yaml", *argv, "--llm-api-base", server.url,
                                "--reasoning-cache", "c", f"--reasoning-results={results}"))  # fmt: skip
            asked.append(server.stats()["total"])
    for run in runs:  # no gate set: wrong answers are counted, not failed
        assert run.returncode == pytest.ExitCode.OK, run.stdout[-3000:]
        assert "Traceback" not in run.stdout + run.stderr
    rows = [_rows(tmp_path / name) for name in ("r1.jsonl", "r2.jsonl")]
    samples = 2 * (len(_EVALUATING) + 1) * len(models)
    assert [len(r) for r in rows] == [samples, samples]
    assert asked[1] == asked[0] == samples  # the rerun asked nothing: all from the cache
    modes = {r["failure_mode"] for r in rows[0] + rows[1]}
    assert not any(r["correct"] for r in rows[0] + rows[1]) and not canary.exists()
    assert modes <= {"wrong_answer", "format", "no_answer", "unsafe_answer"}, modes
    record(
        "answers",
        f"{len(models)} payloads × {len(_EVALUATING)} evaluating gym datasets and "
        f"dyval.arithmetic × 2 samples ({samples} answers), then the rerun from the cache (0 "
        f"requests): every answer wrong ({', '.join(sorted(modes))}), no file "
        "written, no traceback",
    )


# -- fuzzing: the suite loader and the CLI -------------------------------------------------------
@contextlib.contextmanager
def bounded(seconds: int = 30, extra_bytes: int = 1 << 30) -> Iterator[None]:
    """A hang fails after ``seconds`` (SIGALRM: a cap for a loaded machine, not a speed
    claim) and an allocation past ``extra_bytes`` more address space is a MemoryError
    (RLIMIT_AS's soft limit, restored after) — where the platform allows."""
    import resource

    def hung(*_: object) -> None:
        raise TimeoutError(f"a case ran past {seconds} s")

    old_limit = resource.getrlimit(resource.RLIMIT_AS)
    try:
        status = Path("/proc/self/status").read_text()
        size = int(re.search(r"VmSize:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]
    except (OSError, AttributeError):
        size = None
    main_thread = threading.current_thread() is threading.main_thread() and hasattr(
        signal, "setitimer"
    )
    if main_thread:
        previous = signal.signal(signal.SIGALRM, hung)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    if size is not None:
        soft = size + extra_bytes
        hard = old_limit[1]
        resource.setrlimit(resource.RLIMIT_AS, (soft if hard < 0 else min(soft, hard), hard))
    try:
        yield
    finally:
        if size is not None:
            resource.setrlimit(resource.RLIMIT_AS, old_limit)
        if main_thread:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


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


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


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


# 40 fresh caches (320 opens: about 3 failures expected before the fix) in the inner loop;
# the 150 of the sweep, which CI runs, make a regression all but certain to show.
@pytest.mark.parametrize("caches", [40, pytest.param(150, marks=pytest.mark.e2e)])
def test_threads_opening_a_fresh_cache_at_once_all_get_it(tmp_path: Path, caches: int) -> None:
    """Before: switching a fresh file to WAL took an exclusive lock that SQLite refused at
    once while another connection opened it ("database is locked", not waited out: 4 of 480
    opens failed in a script of 60 fresh caches x 8 threads; CI once failed a narrate test on
    it). The mode is now asked first and a refusal retried."""
    failed: list[BaseException] = []

    def open_one(folder: Path) -> None:
        try:
            ResponseCache(folder)._connect()
        except BaseException as exc:  # the test counts every failure, whatever it is
            failed.append(exc)

    for k in range(caches):
        folder = tmp_path / str(k)
        threads = [threading.Thread(target=open_one, args=(folder,)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failed, failed[:3]


# -- issue 44.8: what a server or a model says is shown, never obeyed ----------------------------
# Clears the screen and paints a verdict; a newline and U+202E (which reverses what follows)
# would split a summary line and disguise the rest; 0x9b is a one-byte CSI.
ESCAPES = "\x1b[2J\x1b[1;31mFAKE: all gates PASSED\n\u202eevil\x9b"
_OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _inert(text: str) -> bool:
    """No character a terminal or a text viewer would act on (newlines and tabs aside)."""
    return _OBEYED.search(text) is None


def test_escape_sequences_and_bidi_controls_are_shown_as_symbols() -> None:
    from pytest_reasoning.errors import inert_json, printable
    from pytest_reasoning.models.base import error_text

    line = printable(ESCAPES)
    assert line == "␛[2J␛[1;31mFAKE: all gates PASSED␊\\u202eevil\\x9b"
    assert printable(line) == line and _inert(line)  # idempotent
    assert printable(ESCAPES, one_line=False).split("\n")[1] == "\\u202eevil\\x9b"
    assert printable("plain text, ünïcödé, 日本語\tkept") == "plain text, ünïcödé, 日本語\tkept"
    # A 4xx body as an error message: its first line, inert.
    assert error_text(f"HTTP 400: {ESCAPES}") == "HTTP 400: ␛[2J␛[1;31mFAKE: all gates PASSED"
    value = {"extracted": ESCAPES}
    shown = inert_json(json.dumps(value, ensure_ascii=False))
    assert _inert(shown) and json.loads(shown) == value  # the same JSON value


@pytest.fixture(scope="module")
def hostile_server_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two runs against an endpoint whose every word is hostile: a batch it rejects; then a
    batch with hostile ids whose lines it refuses (HTTP 400, a hostile body), the same
    refusal live, and JUnit."""
    from urllib.parse import quote as percent

    root = tmp_path_factory.mktemp("escapes")
    (root / "s.yaml").write_text(SMALL)
    out: dict[str, Any] = {"root": root}
    with FakeOpenAIServer() as server:
        base = ["s.yaml", "--llm-api-base", server.url, "--reasoning-cache", "c"]
        server.control(batch_text=ESCAPES, batch_reject=True)
        out["rejected"] = _pytest(root, *base, "--llm", "openai/oracle", "--reasoning-batch")
        model = "openai/refuse:" + percent(ESCAPES, safe="")
        out["refused"] = _pytest(root, *base, "--llm", model, "--reasoning-batch",
                                 "--junitxml=j.xml")  # fmt: skip
    return out


@pytest.mark.e2e
def test_a_rejected_batch_and_its_id_are_shown_not_obeyed(
    hostile_server_runs: dict[str, Any],
) -> None:
    done = hostile_server_runs["rejected"]
    said = done.stdout + done.stderr
    assert done.returncode == 4 and _inert(said), said[-2000:]
    (line,) = [ln for ln in said.splitlines() if "was rejected" in ln]
    shown = "␛[2J␛[1;31mFAKE: all gates PASSED␊\\u202eevil\\x9b"
    assert re.search(rf" batch batch_\d+{re.escape(shown)} was rejected: ", line)
    assert line.endswith("rejected: ␛[2J␛[1;31mFAKE: all gates PASSED !")  # its first line


@pytest.mark.e2e
def test_batch_ids_line_errors_and_live_refusals_are_shown_not_obeyed(
    hostile_server_runs: dict[str, Any],
) -> None:
    done = hostile_server_runs["refused"]
    said = done.stdout + done.stderr
    assert "INTERNALERROR" not in said and _inert(said), said[-3000:]
    (summary,) = [ln for ln in said.splitlines() if ln.startswith("reasoning: batch: openai/")]
    shown = "␛[2J␛[1;31mFAKE: all gates PASSED␊\\u202eevil\\x9b"
    assert re.search(rf"\(batch_\d+{re.escape(shown)} submitted(, |\))", summary)
    assert "left to live calls (e.g. HTTP 400: ␛[2J␛[1;31mFAKE: all gates PASSED)" in summary
    assert "stopped (infrastructure, not the model): BadRequestError" in said  # live, inert
    junit = (hostile_server_runs["root"] / "j.xml").read_text(encoding="utf-8")
    ET.fromstring(junit)  # well-formed
    assert _inert(junit) and "␛[2J␛[1;31mFAKE" in junit


@pytest.mark.e2e
def test_gate_shows_hostile_results_rows_never_obeys_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A results file is anyone's CI artifact: its model names and errors reach the
    terminal, JUnit and the step summary inert (before: raw, and JUnit not even XML)."""
    import dataclasses

    from pytest_reasoning.config import addresses
    from pytest_reasoning.evaluate import score_reply

    (tmp_path / "s.yaml").write_text(SMALL)
    rows = []
    for a in addresses(load_suite(tmp_path / "s.yaml", display="s.yaml")):
        item = a.make_item()
        for model in ("good", f"evil{ESCAPES}"):
            said = Reply(f"<<<{item.answer}>>>", latency_s=0.1)
            if model != "good":
                said = Reply(None, error=ESCAPES, error_kind="transient")
            o = dataclasses.replace(score_reply(item, model, said), suite="s.yaml", entry=a.entry.id)
            rows.append(json.dumps(o.to_dict(), ensure_ascii=False))
    (tmp_path / "r.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "steps.md"))
    code = main(["gate", "s.yaml", "--results", "r.jsonl", "--junitxml", "j.xml"])
    out, err = capsys.readouterr()
    assert code == 6 and _inert(out + err), out  # the evil model's calls all failed
    assert "evil␛[2J␛[1;31mFAKE: all gates PASSED␊\\u202eevil\\x9b" in out
    junit = (tmp_path / "j.xml").read_text(encoding="utf-8")
    ET.fromstring(junit)  # well-formed (an escape in an attribute made it no XML)
    assert _inert(junit)
    steps = (tmp_path / "steps.md").read_text(encoding="utf-8")
    assert _inert(steps) and "FAKE" in steps
