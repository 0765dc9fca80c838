"""The plugin behaves like any pytest plugin (issue 21): printed ids select their items, gates
are collected and the counts add up, ``--lf`` / ``-x`` / ``-k`` / one item mean something
for gated suites, JUnit and the step summary tell wrong answers apart, cached answers say so,
the live count stays off a pipe and under ``-q``, and a third-party task package runs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from terminal import ESCAPES, on_a_terminal, screen

from conftest import PLAIN
from pytest_reasoning.plugin.progress import Pace, fitted
from pytest_reasoning.testing.server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # A subprocess per run: LiteLLM keeps process-wide client caches bound to event loops.
    return pytester.runpytest_subprocess("-p", "no:randomly", *args)


# -- ids, collection, counts (the reference model: no server, inline runs) --------------------
def test_printed_ids_select_their_items(mini_suite: pytest.Pytester) -> None:
    result = mini_suite.runpytest("--llm", "reference", "-v", "-p", "no:cacheprovider", PLAIN)
    out = result.stdout.str()
    assert "dyval::arithmetic" not in out  # pytest would print a dotted title that way
    printed = [line.split()[0] for line in out.splitlines() if line.startswith("mini.yaml::")]
    assert len(printed) == 10  # 8 samples and 2 gates
    sample = "mini.yaml::dyval.arithmetic[D1-s1-002]"
    gate = "mini.yaml::dyval.arithmetic[D1-gate]"
    assert {sample, gate} <= set(printed)

    one = mini_suite.runpytest("--llm", "reference", "-v", "-p", "no:cacheprovider", PLAIN, sample)
    ran = [line.split()[0] for line in one.stdout.lines if line.startswith("mini.yaml::")]
    assert ran == [sample]
    one.stdout.fnmatch_lines(["*partial 1/4*", "*1 level(s) ran in part*", "*= 1 passed*"])

    # A pasted gate id brings its level: the gate is only ever decided on the whole level.
    whole = mini_suite.runpytest("--llm", "reference", "-v", "-p", "no:cacheprovider", PLAIN, gate)
    ran = [line.split()[0] for line in whole.stdout.lines if line.startswith("mini.yaml::")]
    assert ran == [f"mini.yaml::dyval.arithmetic[D1-s1-00{i}]" for i in range(4)] + [gate]
    whole.stdout.fnmatch_lines(["*need their whole levels: 4 more samples*", "*= 5 passed*"])


def test_result_ids_select_every_models_sample(mini_suite: pytest.Pytester) -> None:
    """The report and results files name samples without the model (``item_id``): pasted
    into ``-k`` that id selects the sample for each model."""
    result = mini_suite.runpytest(
        "--llm", "reference", "--llm", "openai/other", "--collect-only", "-q",
        "--reasoning-cache", "off", "-k", "dyval.arithmetic[D1-s1-002]", PLAIN,
    )  # fmt: skip
    result.stdout.fnmatch_lines(
        [
            "mini.yaml::dyval.arithmetic[[]D1-s1-002-reference[]]",
            "mini.yaml::dyval.arithmetic[[]D1-s1-002-openai/other[]]",
            "2/20 tests collected (18 deselected)*",
        ]
    )


def test_gates_are_collected_and_the_counts_add_up(mini_suite: pytest.Pytester) -> None:
    listed = mini_suite.runpytest("--llm", "reference", "--collect-only", "-q", PLAIN)
    listed.stdout.fnmatch_lines(
        ["mini.yaml::dyval.arithmetic[[]D1-gate[]]", "mini.yaml::dyval.boolean_logic[[]D1-gate[]]"]
    )
    result = mini_suite.runpytest("--llm", "reference", "-p", "no:cacheprovider", PLAIN)
    result.stdout.fnmatch_lines(
        ["collected 10 items", "reasoning: 8 samples, 2 gate(s)*", "*= 10 passed*"]
    )


def test_a_suite_named_without_a_model_says_what_it_needs(mini_suite: pytest.Pytester) -> None:
    named = mini_suite.runpytest("mini.yaml", PLAIN)
    assert named.ret == pytest.ExitCode.USAGE_ERROR
    assert "mini.yaml is a reasoning suite" in named.stderr.str()
    assert "--llm reference" in named.stderr.str()
    found = mini_suite.runpytest(PLAIN)  # a folder: the suite is not run, and the run says so
    found.stdout.fnmatch_lines(["reasoning: 1 suite file(s) not run (e.g. mini.yaml)*"])


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


# -- gated suites under --lf, -x and -k (a model that answers "True" to everything) -----------
@pytest.mark.e2e
def test_lf_x_and_partial_levels(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    cache = mini_suite.path / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    # An older version left this run-wide entry behind: no collected test has that id.
    (cache / "lastfailed").write_text(json.dumps({"reasoning::infrastructure": True}))
    model = ("--llm", "openai/always-true", "--llm-api-base", fake_server.url)

    first = run(mini_suite, *model)
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    first.stdout.fnmatch_lines(["collected 10 items", "*1 failed, 3 passed, 6 wrong in*"])
    lastfailed = json.loads((cache / "lastfailed").read_text())
    arithmetic = {f"mini.yaml::dyval.arithmetic[D1-s1-00{i}]" for i in range(4)}
    assert "mini.yaml::dyval.arithmetic[D1-gate]" in lastfailed  # the failed gate
    assert arithmetic <= set(lastfailed)  # its whole level (its samples pass as tests)
    wrong_boolean = {k for k in lastfailed if "boolean_logic" in k}
    assert len(wrong_boolean) == 2 and not any("gate" in k for k in wrong_boolean)
    assert "reasoning::infrastructure" not in lastfailed

    again = run(mini_suite, *model, "--lf", "-v")
    again.stdout.fnmatch_lines(
        [
            "*collected 7 items",  # the failed gate, its level, the other wrong samples
            "run-last-failure: rerun previous 7 failures",
            "*dyval.arithmetic[[]D1-gate[]] FAILED*",
            "*boolean_logic*D1*partial 2/4*",
            "*1 failed, 6 wrong in*",
        ]
    )
    assert "boolean_logic[D1-gate]" not in again.stdout.str()

    stop = run(mini_suite, *model, "-x", "-v")
    assert stop.ret == pytest.ExitCode.TESTS_FAILED
    stop.stdout.fnmatch_lines(
        [
            "*STOPPED (-x / --maxfail): gates not decided: 1 (1 decided before the stop)*",
            "*1 failed, 4 wrong in*",
        ]
    )
    assert "boolean_logic[D1-s1-000]" not in stop.stdout.str()  # the next level never ran

    part = run(mini_suite, *model, "-k", "arithmetic and not D1-s1-003", "-rs")
    assert part.ret == pytest.ExitCode.OK  # a partial level is not decided, so not failed
    part.stdout.fnmatch_lines(
        [
            "*arithmetic*D1*partial 3/4*",
            "SKIPPED [[]1[]] mini.yaml: dyval.arithmetic[[]D1-gate[]]: not decided (3 of 4 samples)*",
            "*1 skipped, 6 deselected, 3 wrong in*",
        ]
    )


# -- JUnit, the step summary, the cache ------------------------------------------------------
MIXED = """\
name: mixed
seed: 1
samples: 4
tasks:
  - task: dyval.arithmetic
    levels:
      D1: {min_accuracy: 0.0}
  - task: zebra.grid
    metric: cell
    levels:
      2x3: {min_accuracy: 0.3}
"""


@pytest.mark.e2e
def test_junit_step_summary_and_cached_answers(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """shallow:1 gets depth-2 arithmetic wrong and 2x3 grids partly right."""
    pytester.makefile(".yaml", mixed=MIXED)
    junit = pytester.path / "junit.xml"
    steps = pytester.path / "steps.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(steps))
    model = ("--llm", "openai/shallow:1", "--llm-api-base", fake_server.url)
    first = run(pytester, *model, f"--junitxml={junit}", "-p", "no:cacheprovider")
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()

    cases = {c.get("name"): c for c in ET.parse(junit).iter("testcase")}
    assert len(cases) == 10  # 8 samples, 2 gates: as collected
    props = {
        name: {p.get("name"): p.get("value") for p in case.iter("property")}
        for name, case in cases.items()
    }
    assert props["dyval.arithmetic[D1-s1-000]"]["reasoning.verdict"] == "wrong"
    assert all(c.find("failure") is None for c in cases.values())  # wrong is not failed
    gate = json.loads(props["zebra.grid[2x3-gate]"]["reasoning.gate"])
    assert gate["metric"] == "cell" and "accuracy" not in gate and "correct" not in gate
    # The one number is the gated cell accuracy the summary table shows.
    row = next(line for line in first.stdout.lines if line.split()[1:3] == ["zebra.grid", "2x3"])
    assert f"{gate['value']:.3f} cell" in row

    summary = steps.read_text()
    assert "### Wrong answers and errors (8;" in summary
    assert "<code>dyval.arithmetic\\[D1-s1-000\\]</code>" in summary

    warm = run(pytester, *model, "-v", "-p", "no:cacheprovider")
    warm.stdout.fnmatch_lines(
        [
            "*dyval.arithmetic[[]D1-s1-000[]] WRONG (cached)*",
            "model *samples*answered now*from cache*errors*",
            "openai/shallow:1 *8 *0 *8 *0 *-",
        ]
    )
    assert "cached" in next(line for line in warm.stdout.lines if "zebra.grid  " in line)


# -- the live count ----------------------------------------------------------------------------
def test_the_count_drops_whole_parts_to_fit_and_its_estimate_is_smoothed() -> None:
    parts = [("12s for local", 2), ("3/31 answered", 5), ("8 pending", 0), ("6.1 s/answer", 1),
             ("ETA 2m48s", 4)]  # fmt: skip
    full = " [12s for local: 3/31 answered, 8 pending, 6.1 s/answer, ETA 2m48s]"
    assert fitted(parts, 80, "12s for local") == full
    shown = [fitted(parts, room, "12s for local") for room in range(len(full), -1, -1)]
    assert sorted(set(shown), key=len, reverse=True) == [
        full,
        " [12s for local: 3/31 answered, 6.1 s/answer, ETA 2m48s]",
        " [12s for local: 3/31 answered, ETA 2m48s]",
        " [3/31 answered, ETA 2m48s]",
        " [3/31 answered]",
        "",
    ]
    assert all(len(text) <= room for room, text in zip(range(len(full), -1, -1), shown, strict=True))

    pace = Pace(started=0.0)
    pace.answered(30.0)  # the first answer waited for the start too: no estimate from it
    assert (pace.rate(), pace.eta(29, 30.0)) == ("", "")
    for at in (36.0, 42.0, 48.0):
        pace.answered(at)
    assert (pace.rate(), pace.eta(27, 48.0)) == ("6.0 s/answer", "ETA 2m42s")
    assert pace.eta(27, 51.0) == "ETA 2m39s"  # counts down while the next one is asked
    assert pace.eta(27, 60.0) == "ETA 2m36s"  # and holds at the answers after the next
    pace.answered(78.0)  # one slow answer (30 s) moves the pace, it does not swing it
    assert pace.rate() == "10.8 s/answer"
    fast = Pace(started=0.0)
    for at in (1.0, 1.25, 1.5):
        fast.answered(at)
    assert fast.rate() == "4.0 answers/s"


@pytest.mark.e2e
def test_live_count_on_a_terminal_but_not_under_q_or_a_pipe(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", s="samples: 1\ntasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n")
    # The count shows after 1 s of waiting: 4 s leaves the progress thread 3 s to draw it, which
    # a loaded machine also gives (the count in the quiet and piped runs must stay away, however long).
    with FakeOpenAIServer(latency_s=4.0) as slow:
        base = [sys.executable, "-m", "pytest", "s.yaml", "-p", "no:randomly", "-p",
                "no:cacheprovider", "--llm", "openai/oracle", "--llm-api-base", slow.url,
                "--reasoning-cache", "off"]  # fmt: skip
        shown = on_a_terminal(base, pytester.path)
        quiet = on_a_terminal([*base, "-q"], pytester.path)
        piped = subprocess.run(base, cwd=pytester.path, capture_output=True, text=True)
    count = re.compile(r"\[\d+s for openai/oracle: 0/1 answered")
    assert count.search(shown), shown
    assert not count.search(quiet), quiet
    assert not count.search(piped.stdout + piped.stderr)
    assert "1 passed" in shown and "1 passed" in quiet and piped.returncode == 0


# A count as it may be shown: whole parts only, the least useful dropped first on a narrow line.
_PART = r"(\d+/3 answered|\d+ pending|\d+\.\d s/answer|\d+\.\d answers/s|ETA \d+(m\d\d)?s)"
_COUNT = re.compile(rf"\[(\d+s for slow(: {_PART}(, {_PART})*)?|{_PART}(, {_PART})*)\]")


@pytest.mark.e2e
def test_a_slow_model_on_an_80_column_terminal(pytester: pytest.Pytester) -> None:
    """What a first run shows at 80 columns: the concurrency the model really gets, a count
    that fits the line (parts dropped whole, never cut), wrong answers in yellow, and a
    failed gate that says why the answers were cut off. Which parts fit depends only on the
    room the line leaves, so nothing here depends on timing but that each answer waits past
    the count's first second (4 s: 3 s to spare on a loaded machine)."""
    name = "a_suite_named_to_leave_the_count_room.yaml"
    assert len(name) == 42  # the line leaves the count 80 - 43 - 1 = 36 columns, then 35, 34
    (pytester.path / name).write_text(
        "samples: 3\ntasks:\n  - task: dyval.arithmetic\n    levels:\n      D1: {min_accuracy: 0.5}\n"
    )
    with FakeOpenAIServer(latency_s=4.0) as slow:
        pytester.makefile(
            ".yaml",
            models=f"""
            model_list:
              - model_name: slow
                litellm_params:
                  model: openai/loop
                  api_base: {slow.url}
                  max_tokens: 64
                  max_parallel_requests: 1
            """,
        )
        raw = on_a_terminal(
            [sys.executable, "-m", "pytest", name, "-p", "no:randomly", "-p", "no:cacheprovider",
             "--llm-config", "models.yaml", "--llm", "slow", "--reasoning-cache", "off",
             "--color=yes"],
            pytester.path, columns=80,
        )  # fmt: skip
    lines = screen(raw)
    text = [line for line, _ in lines]
    assert "reasoning: starting..." in raw and not any("starting" in t for t in text)  # wiped
    assert any(t.endswith("; concurrency 1 (its max_parallel_requests)") for t in text), raw
    progress = [(t, far) for t, far in lines if t.startswith(name)]
    assert progress and all(far <= 80 for _, far in progress), progress
    plain = ESCAPES.sub("", raw).replace("\b", "\n")
    counts = [c.rstrip() for c in re.findall(r"\[\d+(?:s for |/)[^\n]*", plain)]
    assert counts and all(_COUNT.fullmatch(c) for c in counts), counts
    # 0 answered: "3 pending" would not fit (39 columns), so it went, whole.
    assert any(re.fullmatch(r"\[\d+s for slow: 0/3 answered\]", c) for c in counts), counts
    # 2 answered: the estimate outranks the wait, which went too.
    assert any(re.fullmatch(r"\[2/3 answered, ETA \d+(m\d\d)?s\]", c) for c in counts), counts
    assert "\x1b[33mW" in raw and "\x1b[32mW" not in raw  # wrong is yellow, not green
    assert (
        "GATE FAILED slow dyval.arithmetic D1: accuracy 0.000 (0/3) < min_accuracy 0.5; 3 of 3 "
        "cut off at the token limit (max_tokens 64), 3 of them repeating themselves in a loop "
        "that a higher limit would not end"
    ) in text, text


# -- a third-party task package ------------------------------------------------------------------
@pytest.mark.e2e
def test_a_third_party_task_package_runs_through_the_plugin(tmp_path: Path) -> None:
    """examples/acme-tasks, installed the way pip lays a package out (its folder on the path
    plus a ``.dist-info`` with its entry points, read from its own pyproject.toml), then its
    suite run by pytest and its tasks listed by the CLI, in fresh processes."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+, as CI
    package = ROOT / "examples" / "acme-tasks"
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    site = tmp_path / "site"
    shutil.copytree(package / "acme_tasks", site / "acme_tasks")
    info = site / f"acme_tasks-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    points = project["entry-points"]["pytest_reasoning.tasks"]
    (info / "entry_points.txt").write_text(
        "[pytest_reasoning.tasks]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
    )
    shutil.copy(package / "acme.yaml", tmp_path / "acme.yaml")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "acme.yaml", "--llm", "reference", "-v", "-p",
         "no:cacheprovider", "-p", "no:randomly", "--junitxml", "j.xml"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "acme.yaml::acme.letter_count[L2-gate] PASSED" in done.stdout
    assert "acme.yaml::acme.arithmetic_terse[D2-gate] PASSED" in done.stdout
    assert "24 passed" in done.stdout
    listed = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", "tasks", "acme.letter_count"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert "length    int     1..500" in listed.stdout, listed.stdout + listed.stderr
    exported = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", "export", "acme.arithmetic_terse",
         "--level", "D1", "--count", "1"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    row = json.loads(exported.stdout)
    assert row["system"].startswith("You are a careful calculator")
    assert row["prompt"].endswith("Answer: <<<")


@pytest.mark.e2e
def test_live_count_under_xdist(pytester: pytest.Pytester) -> None:
    """The workers have no terminal: the controller counts the wait since the last report."""
    pytester.makefile(".yaml", s="samples: 1\ntasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n")
    with FakeOpenAIServer(latency_s=4.0) as slow:  # as above: 3 s to draw the count
        base = [sys.executable, "-m", "pytest", "s.yaml", "-p", "no:randomly", "-p",
                "no:cacheprovider", "--llm", "openai/oracle", "--llm-api-base", slow.url,
                "--reasoning-cache", "off", "-n", "2"]  # fmt: skip
        shown = on_a_terminal(base, pytester.path)  # -q: the same check as without xdist
    count = re.compile(r"\[\d+s waiting for the first answer: 0/1 done\]")
    assert count.search(shown), shown
    assert "1 passed" in shown
