"""The plugin behaves like any pytest plugin: printed ids select their items, gates are
collected and the counts add up, --lf / -x / -k / one item mean something for gated suites."""

from __future__ import annotations

import json

import pytest

from conftest import PLAIN
from pytest_reasoning.testing.server import FakeOpenAIServer


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # A subprocess per run: LiteLLM keeps process-wide client caches bound to event loops.
    return pytester.runpytest_subprocess("-p", "no:randomly", *args)


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
