"""The plugin end to end, through real pytest runs (pytester) against the project's fake
OpenAI-compatible server: LiteLLM really talks HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from pytest_reasoning.plugin.sample import PROPERTY, LevelRef, SampleReport, UnreadableReport
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer, key_digest


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # A subprocess per run: LiteLLM keeps process-wide client caches bound to event loops.
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def distinct_prompts(samples: int = 4) -> int:
    """Requests a cold run of the mini suite needs: small levels can repeat a prompt."""
    from pytest_reasoning.registry import get_task

    return len(
        {
            make_item(get_task(t), "D1", 1, i).prompt
            for t in ("dyval.arithmetic", "dyval.boolean_logic")
            for i in range(samples)
        }
    )


def test_reference_passes_every_gate(mini_suite: pytest.Pytester) -> None:
    result = mini_suite.runpytest("--llm", "reference", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["*reasoning summary*", "*reference*dyval.arithmetic*D1*4*4*1.000*PASS*", "*10 passed*"]
    )


def test_item_ids_are_stable_and_selectable(mini_suite: pytest.Pytester) -> None:
    result = mini_suite.runpytest("--llm", "reference", "--collect-only", "-q", "-k", "D1-s1-002")
    result.stdout.fnmatch_lines(
        [
            "mini.yaml::dyval.arithmetic[[]D1-s1-002[]]",
            "mini.yaml::dyval.boolean_logic[[]D1-s1-002[]]",
        ]
    )


@pytest.mark.e2e
def test_wrong_answers_and_failed_gates(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    junit = mini_suite.path / "junit.xml"
    result = run(
        mini_suite,
        "--llm",
        "openai/always-true",
        "--llm-api-base",
        fake_server.url,
        f"--junitxml={junit}",
        "-rf",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "WWWW" in out  # arithmetic answers "True": wrong, but not failures
    result.stdout.fnmatch_lines(
        [
            "collected 10 items",  # 8 samples and 2 gates: the 10 outcomes below
            "*GATE FAILED openai/always-true dyval.arithmetic D1: accuracy 0.000 (0/4) < min_accuracy 0.5*",
            "*reasoning: 1 of 2 gates FAILED*",
            "FAILED mini.yaml::dyval.arithmetic[[]D1-gate[]]*",
            "*1 failed, 3 passed, 6 wrong*",
        ]
    )
    xml = junit.read_text()
    assert 'name="dyval.arithmetic[D1-gate]"' in xml and "GATE FAILED" in xml
    assert fake_server.stats()["total"] >= distinct_prompts()


@pytest.mark.e2e
def test_same_results_with_and_without_xdist(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    outs = {}
    for mode in (["-n", "0"], ["-n", "2"], ["-p", "no:xdist"]):
        path = mini_suite.path / f"res{mode[-1]}.jsonl"
        result = run(
            mini_suite,
            "--llm",
            "openai/oracle",
            "--llm-api-base",
            fake_server.url,
            "--reasoning-cache",
            "off",
            f"--reasoning-results={path}",
            "--reasoning-samples",
            "6",
            *mode,
        )
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        outs[mode[-1]] = sorted(
            (r["item_id"], r["prompt_sha256"], r["response"], r["correct"]) for r in rows(path)
        )
    assert outs["0"] == outs["2"] == outs["no:xdist"]
    assert len(outs["0"]) == 12


@pytest.mark.e2e
def test_prompts_travel_to_the_controller_only_where_they_are_filed(
    mini_suite: pytest.Pytester,
) -> None:
    """A worker sends each prompt once when the controller files it beside the results or a
    report shows it; with the results on stdout (or a FIFO, a device) and no report nothing
    would keep it, so none is sent."""
    from pytest_reasoning.gates.store import read_prompts

    mini_suite.makeconftest(
        "import os\n"
        "seen = []\n"
        "def pytest_runtest_logreport(report):\n"
        "    seen.extend(v for k, v in report.user_properties if k == 'reasoning.prompt')\n"
        "def pytest_unconfigure(config):\n"
        "    if not hasattr(config, 'workerinput'):\n"
        "        with open('sent.txt', 'w') as fh:\n"
        "            fh.write(str(len(seen)))\n"
    )  # fmt: skip
    res = mini_suite.path / "r.jsonl"
    for target, more in (("-", ()), (str(res), ()), ("-", ("--reasoning-report=rep",))):
        result = run(mini_suite, "--llm", "reference", f"--reasoning-results={target}", "-n", "2",
                     *more)  # fmt: skip
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        sent = int((mini_suite.path / "sent.txt").read_text())
        if target == "-" and not more:
            assert sent == 0
        elif more:  # the report shows them
            assert sent == distinct_prompts()
        else:
            assert sent == len(read_prompts(res)) == distinct_prompts()


@pytest.mark.e2e
def test_warm_cache_makes_no_requests(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    args = ("--llm", "openai/oracle", "--llm-api-base", fake_server.url, "-n", "2")
    assert run(mini_suite, *args).ret == pytest.ExitCode.OK
    first = fake_server.stats()["total"]
    assert first >= distinct_prompts()
    assert run(mini_suite, *args).ret == pytest.ExitCode.OK
    assert fake_server.stats()["total"] == first
    db = mini_suite.path / ".reasoning_cache" / "responses.sqlite3"
    count = sqlite3.connect(db).execute("select count(*) from responses").fetchone()[0]
    assert count == distinct_prompts()


@pytest.mark.e2e
def test_cache_key_covers_api_base(mini_suite: pytest.Pytester) -> None:
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        for srv in (a, b):
            assert run(mini_suite, "--llm", "openai/oracle", "--llm-api-base", srv.url).ret == 0
        assert a.stats()["total"] == b.stats()["total"] >= distinct_prompts()


@pytest.mark.e2e
def test_retries_recover_flaky_endpoint(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    result = run(
        mini_suite,
        "--llm",
        "openai/flaky-oracle",
        "--llm-api-base",
        fake_server.url,
        "--reasoning-retries",
        "3",
    )
    assert result.ret == pytest.ExitCode.OK
    # One failure and one success per distinct prompt.
    assert fake_server.stats()["requests"]["flaky-oracle"] >= 2 * distinct_prompts()


@pytest.mark.e2e
def test_infrastructure_errors_are_not_wrong_answers(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(
        ".yaml", nogate="samples: 3\ntasks:\n  - task: dyval.boolean_logic\n    levels: [D1]\n"
    )
    res = pytester.path / "r.jsonl"
    failing = ("--llm", "openai/fail-500", "--llm-api-base", fake_server.url)
    result = run(pytester, *failing, "--reasoning-retries", "2", f"--reasoning-results={res}")
    assert result.ret == 6  # infrastructure only: not "a gate failed" (1)
    result.stdout.fnmatch_lines(
        [
            "*3 model call(s) failed (budget --reasoning-max-errors=0), 1 level(s) got no answer "
            "at all: infrastructure, not the model; not counted as wrong answers; cause: "
            "openai/fail-500: InternalServerError*(after 2 attempts)",
            "*1 failed, 3 infra error*",
        ]
    )
    assert "wrong" not in result.stdout.lines[-1]
    assert all(r["correct"] is None and r["error"] for r in rows(res))
    assert fake_server.stats()["requests"]["fail-500"] == 6
    # Within budget the run passes, and the errors are still counted apart (the server's
    # seeded faults: the third of three requests fails).
    with FakeOpenAIServer(fault_rate=0.5, fault_kinds=("500",), seed=0) as flaky:
        some = ("--llm", "openai/oracle", "--llm-api-base", flaky.url, "--reasoning-retries", "1")
        ok = run(pytester, *some, "--reasoning-max-errors", "1", "--reasoning-cache", "off")
        assert ok.ret == pytest.ExitCode.OK, ok.stdout.str()
        ok.stdout.fnmatch_lines(["*1 infrastructure error(s)*"])
    # A failed gate outranks infrastructure: exit status 1.
    pytester.makefile(
        ".yaml",
        nogate="samples: 3\nmin_accuracy: 0.5\ntasks:\n  - task: dyval.boolean_logic\n"
        "    levels: [D1]\n",
    )
    with FakeOpenAIServer(fault_rate=0.5, fault_kinds=("500",), seed=0) as flaky:
        wrong = ("--llm", "openai/constant:<<<N/A>>>", "--llm-api-base", flaky.url)
        both = run(pytester, *wrong, "--reasoning-retries", "1", "--reasoning-cache", "off")
    assert both.ret == pytest.ExitCode.TESTS_FAILED, both.stdout.str()


@pytest.mark.e2e
def test_api_key_never_written(
    mini_suite: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-DO-NOT-LEAK-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    res = mini_suite.path / "r.jsonl"
    junit = mini_suite.path / "j.xml"
    for model in ("openai/oracle", "openai/fail-500"):
        result = run(
            mini_suite,
            "--llm",
            model,
            "--llm-api-base",
            fake_server.url,
            "--reasoning-retries",
            "1",
            f"--reasoning-results={res}",
            f"--junitxml={junit}",
            "--reasoning-max-errors",
            "100",
        )
        assert secret not in result.stdout.str() + result.stderr.str()
    for path in [res, junit, *(mini_suite.path / ".reasoning_cache").iterdir()]:
        assert secret.encode() not in path.read_bytes(), path


@pytest.mark.e2e
@pytest.mark.fresh_process  # asserts what an unrelated run imports
def test_unrelated_run_does_not_load_heavy_modules(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain="""
        import sys
        def test_light():
            heavy = {"litellm", "pytest_reasoning.evaluate", "pytest_reasoning.registry", "yaml",
                     "networkx", "numpy", "pysat", "tiktoken", "pytest_reasoning.robustness"}
            assert not heavy & set(sys.modules), heavy & set(sys.modules)
    """
    )
    pytester.makefile(".yaml", suite="tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n")
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--reasoning-concurrency", "0", "must be >= 1, got 0"),
        # Before: a billion retries of a dead server was a hang, not an error.
        ("--reasoning-retries", "1000000000", "must be <= 50, got 1000000000"),
        ("--reasoning-concurrency", "100000", "must be <= 1024, got 100000"),
    ],
)
def test_bad_option_is_a_usage_error(
    mini_suite: pytest.Pytester, flag: str, value: str, said: str
) -> None:
    result = mini_suite.runpytest("--llm", "reference", flag, value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{flag}: {said}*"])


def test_ini_options(mini_suite: pytest.Pytester) -> None:
    mini_suite.makeini("[pytest]\nreasoning_llm = reference\nreasoning_samples = 2\n")
    result = mini_suite.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*6 passed*"])


EXAMPLE_SUITES = Path(__file__).resolve().parents[2] / "example_suites"


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("suite", "samples"),
    [
        pytest.param(name, (), id=name)
        for name in (
            "quick",
            "dyval",
            "musr",
            "test_fuzz_arithmetic.py",
            "test_snapshot_failure_modes.py",
        )
    ]
    # A thousand zebra grids and long FLenQA prompts at the shipped counts (2 minutes of CPU
    # in all): fewer a level still meet each floor with every answer right. Zebra takes 20:
    # intervals count distinct problems, and 2x2's first 12 draws hold 9 (lower bound 0.77 <
    # 0.8 on cells), its first 20 hold 11 (0.80).
    + [
        pytest.param(name, ("--reasoning-samples", n), id=name)
        for name, n in (("zebra", "20"), ("flenqa", "12"), ("frontier", "12"))
    ],
)
def test_example_suites_pass_with_reference(
    pytester: pytest.Pytester, suite: str, samples: tuple[str, ...]
) -> None:
    path = EXAMPLE_SUITES / (suite if suite.endswith(".py") else f"{suite}.yaml")
    result = pytester.runpytest_subprocess(
        str(path), "--llm", "reference", "--reasoning-cache", "off", "-p", "no:cacheprovider",
        *samples,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert "FAIL" not in result.stdout.str()


@pytest.mark.e2e
def test_collect_only_lists_the_example_suites_and_nothing_else(pytester: pytest.Pytester) -> None:
    """No verdict is reported when nothing ran (pytest printed an ``s`` per gate), and
    syrupy does not fail the listing for the snapshot test it did not run."""
    result = pytester.runpytest_subprocess(
        str(EXAMPLE_SUITES), "--collect-only", "-q", "--llm", "reference", "-p", "no:cacheprovider",
        # A forked run (tests/forkrun.py) imported the package before pytest could rewrite it.
        "-W", "ignore::pytest.PytestAssertRewriteWarning",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    lines = [line for line in result.stdout.lines if line.strip()]
    assert re.fullmatch(r"\d+ tests collected in [\d.]+s", lines[-1]), lines[-1]
    stray = [line for line in lines[:-1] if "::" not in line and not line.startswith("reasoning: ")]
    assert stray == [], stray
    assert any(line.endswith("quick.yaml::dyval.arithmetic[D1-gate]") for line in lines)
    assert not result.stderr.str().strip()


ALL_DYVAL = """\
name: all
seed: 3
samples: 4
tasks:
  - {task: dyval.arithmetic, levels: [D2], style: fewshot, params: {shots: 2}}
  - {task: dyval.linear_equation, levels: [D2], style: cot, params: {distractors: 1}}
  - {task: dyval.boolean_logic, levels: [D3], params: {order: random, extra_links: 1}}
  - {task: dyval.deductive_logic, levels: [D2], style: fewshot, params: {order: reversed}}
  - {task: dyval.abductive_logic, levels: [D3], params: {distractors: 2}}
  - {task: dyval.reachability, levels: [D2], style: fewshot, params: {shots: 1}}
  - {task: dyval.max_sum_path, levels: [D3], params: {distractors: 1, order: random}}
  - {task: dyval.boolean_logic, id: tiny, levels: [D1], samples: 14}
"""


@pytest.mark.e2e
def test_every_dyval_task_and_style_over_http(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(".yaml", all=ALL_DYVAL)
    result = run(
        pytester,
        "--llm",
        "openai/oracle",
        "--llm-api-base",
        fake_server.url,
        "--reasoning-cache",
        "off",
        "-n",
        "2",
    )
    # 7 × 4 + 14 samples, 8 gates (no thresholds: reported, not gated).
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*42 passed*"])
    for task in ("arithmetic", "linear_equation", "deductive_logic", "max_sum_path"):
        result.stdout.fnmatch_lines([f"*openai/oracle*dyval.{task}*4*4*1.000*"])
    # D1 boolean logic has five test problems (ten in all): the summary says so.
    result.stdout.fnmatch_lines(["*tiny D1 (openai/oracle): 9 of 14 items repeat an earlier*"])


def _sample() -> SampleReport:
    from pytest_reasoning.core import Outcome
    from pytest_reasoning.gates import GateRule

    outcome = Outcome(
        item_id="dyval.arithmetic[D1-s1-000]",
        model="openai/m",
        task="dyval.arithmetic",
        level="D1",
        seed=1,
        prompt_sha256="ab" * 32,
        response="<<<3>>>",
        extracted="3",
        gold="3",
        correct=True,
        failure_mode=None,
        error=None,
        prompt_tokens=10,
        completion_tokens=1,
        latency_s=0.5,
        suite="mini.yaml",
        entry="dyval.arithmetic",
    )
    return SampleReport(
        outcome,
        LevelRef("openai/m", "mini.yaml", "dyval.arithmetic", "D1"),
        GateRule(min_accuracy=0.5, sequential=True),
        size=4,
        position=2,
        gate_id="mini.yaml::dyval.arithmetic[D1-gate]",
        comparison_id="mini.yaml::dyval.arithmetic[D1-vs-baseline]",
        family=3,
        notices=(("shared-cache", "the shared cache is gone"),),
    )


def test_a_sample_report_is_read_back_as_written() -> None:
    """What a worker sends is what the controller reads: one typed report, its level one
    reference, through one JSON string whose shape JUnit readers know (the row, then the
    gate and the ledger's fields)."""
    sent = _sample()
    text = sent.to_json()
    assert SampleReport.from_json(text) == sent
    assert SampleReport.read([("other", "x"), (PROPERTY, text)]) == sent
    data = json.loads(text)
    assert list(data)[-7:] == [
        "notices", "gate", "gate_id", "comparison_id", "level_size", "position", "family"
    ]  # fmt: skip
    assert data["gate"]["level"] == "D1" and data["correct"] is True


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"correct": "false"}, "correct: expected true or false"),
        ({"position": -1}, "position: expected an integer >= 0"),
        ({"gate": {"suite": "mini.yaml", "entry": "dyval.arithmetic"}}, "gate: expected"),
        ({"level": "D2"}, "is not the sample's level"),
        ({"min_accuracy": "half"}, "gate: min_accuracy: expected"),
        ({"notices": ["lost"]}, "notices: expected"),
        ({"latency_s": float("nan")}, "latency_s: expected a number"),
    ],
)
def test_a_damaged_sample_report_is_refused_in_one_line(change: dict[str, object], said: str) -> None:
    data = json.loads(_sample().to_json())
    if "min_accuracy" in change:
        data["gate"].update(change)
    else:
        data.update(change)
    with pytest.raises(UnreadableReport) as info:
        SampleReport.from_json(json.dumps(data))
    assert said in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(UnreadableReport, match="not JSON"):
        SampleReport.from_json(json.dumps(data)[:-3])


DAMAGE = """
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.when == "call" and item.name.startswith("dyval.arithmetic[D1-s1-001"):
        report.user_properties = [
            (k, v.replace('"correct": true', '"correct": "yes"')) for k, v in report.user_properties
        ]
    return report
"""


def test_a_damaged_report_on_the_controller_is_one_line_not_a_crash(
    mini_suite: pytest.Pytester,
) -> None:
    """A sample's report the controller cannot read is named in one line and not counted:
    its level is not decided (never decided on a guess), and the run goes on."""
    mini_suite.makeconftest(DAMAGE)
    result = mini_suite.runpytest("--llm", "reference", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out
    result.stdout.fnmatch_lines(
        [
            "*reasoning: mini.yaml::dyval.arithmetic[[]D1-s1-001[]]: its report cannot be "
            "read: correct: expected true or false*",
            "*reference*dyval.arithmetic*D1*3*partial 3/4*",
            "*reference*dyval.boolean_logic*D1*4*PASS*",
            "*9 passed, 1 skipped*",
        ]
    )


@pytest.mark.e2e
def test_items_are_answered_in_collection_order(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(
        ".yaml", s="samples: 6\ntasks:\n  - task: dyval.arithmetic\n    levels: [D2]\n"
    )
    result = run(
        pytester,
        "--llm",
        "openai/oracle",
        "--llm-api-base",
        fake_server.url,
        "--reasoning-concurrency",
        "1",
        "--reasoning-cache",
        "off",
    )
    assert result.ret == pytest.ExitCode.OK
    task = get_task("dyval.arithmetic")
    expected = [key_digest(make_item(task, "D2", 1, i).prompt) for i in range(6)]
    assert fake_server.stats()["order"] == expected
