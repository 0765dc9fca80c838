"""Issue 22: gate-aware shards (``--reasoning-shard K/N``), merged gates (``pytest-reasoning
gate``), deferred gates, and calls made for exactly the selected items."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability_matrix import record_hardened

from conftest import PLAIN
from pytest_reasoning.cli import main
from pytest_reasoning.core import Outcome
from pytest_reasoning.files import TEMP_PREFIX
from pytest_reasoning.gates import ResultStore, read_results
from pytest_reasoning.gates.rows import row_key
from pytest_reasoning.plugin.items import ReasoningItem, VerdictItem
from pytest_reasoning.plugin.schedulers import ShardRefused, parse_shard
from pytest_reasoning.plugin.shards import assign
from pytest_reasoning.testing.server import FakeOpenAIServer

# Five gated levels (one of cell accuracy), one ungated; a level of 3 samples, others of 4.
SUITE = """\
name: shards
seed: 3
samples: 4
tasks:
  - task: dyval.arithmetic
    levels:
      D1: {min_accuracy: 0.2}
      D2: {min_accuracy: 0.9}
  - task: dyval.boolean_logic
    levels:
      D1: {min_accuracy: 0.9}
      D2: {min_accuracy: 0.2}
  - task: zebra.grid
    metric: cell
    samples: 3
    levels:
      2x3: {min_accuracy: 0.2}
  - task: dyval.reachability
    levels: [D1]
"""


def collected(pytester: pytest.Pytester, *args: str) -> list[pytest.Item]:
    """The items a collection keeps after every selection (in-process)."""
    rec = pytester.inline_run("--collect-only", "-p", "no:randomly", PLAIN, *args)
    sessions = [call.session for call in rec.getcalls("pytest_collection_finish")]
    assert len(sessions) == 1
    return list(sessions[0].items)


def test_shards_partition_the_collection_and_keep_levels_whole(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".yaml", shards=SUITE)
    models = ("--llm", "reference", "--llm", "openai/other")
    whole = collected(pytester, *models)
    n = 3
    shards = [
        collected(pytester, *models, "--reasoning-shard", f"{k}/{n}") for k in range(1, n + 1)
    ]
    ids = [i.nodeid for shard in shards for i in shard]
    assert sorted(ids) == sorted(i.nodeid for i in whole)  # the union, nothing twice
    gates = [i.nodeid for i in whole if isinstance(i, VerdictItem)]
    assert len(gates) == 10  # 5 gated levels x 2 models
    for shard in shards:
        mine = {id(i) for i in shard}
        for verdict in (i for i in shard if isinstance(i, VerdictItem)):
            assert all(id(s) in mine for s in verdict.samples), verdict.nodeid  # level whole
    loads = [sum(isinstance(i, ReasoningItem) for i in shard) for shard in shards]
    assert sum(loads) == 2 * (4 * 5 + 3)
    assert max(loads) - min(loads) <= 4  # greedy by size: within the largest group


def test_assignment_ignores_order_and_balances() -> None:
    sizes = {f"model\x1fs.yaml\x1fentry{i}\x1fD{i % 4}": 1 + (7 * i) % 5 for i in range(40)}
    keys = list(sizes)
    first = assign(sizes, 4)
    random.Random(1).shuffle(keys)
    assert assign({k: sizes[k] for k in keys}, 4) == first  # every job assigns alike
    loads = [sum(s for k, s in sizes.items() if first[k] == shard) for shard in (1, 2, 3, 4)]
    assert max(loads) - min(loads) <= max(sizes.values())
    assert set(assign(sizes, 1).values()) == {1}


@pytest.mark.parametrize("value", ["0/4", "5/4", "2", "a/b", "2/0", "-1/4"])
def test_bad_shard_is_one_line(pytester: pytest.Pytester, value: str) -> None:
    pytester.makefile(".yaml", shards=SUITE)
    result = pytester.runpytest("--llm", "reference", f"--reasoning-shard={value}", PLAIN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = [line for line in result.stderr.lines if line.strip()]
    assert err == [
        "ERROR: --reasoning-shard: expected K/N with 1 <= K <= N (e.g. 2/4) or auto, got "
        f"{value!r}"
    ]


# --reasoning-shard auto: job j (0-based) of 3 as each scheduler numbers it, and the value the
# job passes (a Kubernetes Job's completions are in no variable: auto/3).
SCHEDULERS: dict[str, tuple[str, Callable[[int], dict[str, str]]]] = {
    "kubernetes": ("auto/3", lambda j: {"JOB_COMPLETION_INDEX": str(j)}),
    "slurm": ("auto", lambda j: {"SLURM_ARRAY_TASK_ID": str(4 + j), "SLURM_ARRAY_TASK_MIN": "4",
                                 "SLURM_ARRAY_TASK_MAX": "6", "SLURM_ARRAY_TASK_COUNT": "3",
                                 "SLURM_ARRAY_TASK_STEP": "1"}),
    "slurm-count": ("auto", lambda j: {"SLURM_ARRAY_TASK_ID": str(j), "SLURM_ARRAY_TASK_COUNT": "3"}),
    "gitlab": ("auto", lambda j: {"CI_NODE_INDEX": str(j + 1), "CI_NODE_TOTAL": "3"}),
    "circleci": ("auto", lambda j: {"CIRCLE_NODE_INDEX": str(j), "CIRCLE_NODE_TOTAL": "3"}),
    "buildkite": ("auto", lambda j: {"BUILDKITE_PARALLEL_JOB": str(j),
                                     "BUILDKITE_PARALLEL_JOB_COUNT": "3"}),
}  # fmt: skip


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_auto_shard_reads_each_schedulers_job_as_k_of_n(scheduler: str) -> None:
    value, env = SCHEDULERS[scheduler]
    got = [parse_shard(value, env(j))[:2] for j in range(3)]
    assert got == [(1, 3), (2, 3), (3, 3)]
    assert parse_shard("1/3", {})[2] is None  # K/N reads no variable


REFUSED = [
    ("auto", {}, "--reasoning-shard auto: no scheduler's variables are set (read: "
     "JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID, CI_NODE_INDEX, CIRCLE_NODE_INDEX, "
     "BUILDKITE_PARALLEL_JOB); give K/N instead"),
    ("auto", {"CI_NODE_INDEX": "", "CI_NODE_TOTAL": "3"}, "no scheduler's variables are set"),
    ("auto", {"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3", "CIRCLE_NODE_INDEX": "0",
              "CIRCLE_NODE_TOTAL": "3"},
     "--reasoning-shard auto: GitLab parallel (CI_NODE_INDEX=2, CI_NODE_TOTAL=3) says shard 2/3 "
     "but CircleCI parallelism (CIRCLE_NODE_INDEX=0, CIRCLE_NODE_TOTAL=3) says 1/3: give K/N "
     "instead"),
    ("auto", {"JOB_COMPLETION_INDEX": "1"}, "use --reasoning-shard auto/N, N its completions"),
    ("auto/4", {"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "3"},
     "--reasoning-shard auto/4: GitLab parallel (CI_NODE_INDEX=1, CI_NODE_TOTAL=3) counts 3 "
     "jobs, not 4"),
    ("auto", {"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "3"},
     "--reasoning-shard auto: GitLab parallel (CI_NODE_INDEX=0, CI_NODE_TOTAL=3) names job 0 of "
     "3: out of range (1 <= K <= N <= 1,000)"),
    ("auto", {"BUILDKITE_PARALLEL_JOB": "3", "BUILDKITE_PARALLEL_JOB_COUNT": "3"}, "out of range"),
    ("auto", {"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "5000"}, "out of range"),
    ("auto", {"CI_NODE_INDEX": "\x1b[2J", "CI_NODE_TOTAL": "3"},
     "--reasoning-shard auto: CI_NODE_INDEX='\\x1b[2J' is not a non-negative integer"),
    ("auto", {"CI_NODE_INDEX": "1.0", "CI_NODE_TOTAL": "3"}, "is not a non-negative integer"),
    ("auto", {"CI_NODE_INDEX": "9" * 40, "CI_NODE_TOTAL": "3"}, "is not a non-negative integer"),
    ("auto", {"CI_NODE_INDEX": "1"}, "--reasoning-shard auto: CI_NODE_INDEX is set without "
     "CI_NODE_TOTAL"),
    ("auto", {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "4",
              "SLURM_ARRAY_TASK_COUNT": "3"},
     "--reasoning-shard auto: the SLURM array is not one range of consecutive ids "
     "(SLURM_ARRAY_TASK_MIN=0, SLURM_ARRAY_TASK_MAX=4, SLURM_ARRAY_TASK_COUNT=3): use "
     "--array=0-(N-1)"),
    ("auto", {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "4",
              "SLURM_ARRAY_TASK_STEP": "2"}, "not one range of consecutive ids"),
    ("auto", {"SLURM_ARRAY_TASK_ID": "2"}, "SLURM_ARRAY_TASK_ID is set without"),
    ("auto/0", {"JOB_COMPLETION_INDEX": "0"}, "--reasoning-shard: expected auto or auto/N with "
     "1 <= N <= 1,000 (N: a Kubernetes Indexed Job's completions), got 'auto/0'"),
    ("auto/x", {"JOB_COMPLETION_INDEX": "0"}, "expected auto or auto/N"),
]  # fmt: skip


@pytest.mark.parametrize(("value", "env", "line"), REFUSED)
def test_auto_shard_refuses_in_one_line(value: str, env: dict[str, str], line: str) -> None:
    with pytest.raises(ShardRefused) as refused:
        parse_shard(value, env)
    text = str(refused.value)
    assert "\n" not in text and "\x1b" not in text
    assert text == line if line.startswith("--") else line in text


def _no_scheduler(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's own CI must not choose the shard."""
    for key in list(os.environ):
        if key.startswith(("JOB_COMPLETION_", "SLURM_ARRAY_", "CI_NODE_", "CIRCLE_NODE_",
                           "BUILDKITE_PARALLEL")):  # fmt: skip
            monkeypatch.delenv(key)


@pytest.mark.e2e
def test_auto_shard_collects_what_k_of_n_collects_for_every_scheduler(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makefile(".yaml", shards=SUITE)
    _no_scheduler(monkeypatch)
    models = ("--llm", "reference", "--llm", "openai/other")
    expected = [
        [i.nodeid for i in collected(pytester, *models, "--reasoning-shard", f"{k}/3")]
        for k in (1, 2, 3)
    ]
    assert all(expected) and sum(map(len, expected)) == len(collected(pytester, *models))
    for scheduler, (value, env) in SCHEDULERS.items():
        for j in range(3):
            with monkeypatch.context() as job:
                for key, text in env(j).items():
                    job.setenv(key, text)
                got = [i.nodeid for i in collected(pytester, *models, "--reasoning-shard", value)]
            assert got == expected[j], (scheduler, j)


@pytest.mark.e2e
def test_auto_shard_says_what_it_read_and_refuses_in_one_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makefile(".yaml", shards=SUITE)
    _no_scheduler(monkeypatch)
    args = ("--llm", "reference", "-p", "no:cacheprovider", PLAIN)
    refused = pytester.runpytest(*args, "--reasoning-shard=auto")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    err = [line for line in refused.stderr.lines if line.strip()]
    assert len(err) == 1 and err[0].startswith("ERROR: --reasoning-shard auto: no scheduler's")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "3")
    pytester.makeini("[pytest]\nreasoning_shard = auto\n")  # the ini key reads alike
    # While the shard runs, its results file is not there for a merge to read.
    pytester.makeconftest(
        "import pathlib\n"
        "def pytest_runtest_logfinish(nodeid, location):\n"
        "    if pathlib.Path('out/s2.jsonl').exists():\n"
        "        pathlib.Path('seen').write_text(nodeid)\n"
    )
    ran = pytester.runpytest(*args, "--reasoning-results=out/s2.jsonl")
    assert ran.ret == pytest.ExitCode.OK
    ran.stdout.fnmatch_lines([
        "reasoning: shard 2/3 (--reasoning-shard auto) from SLURM array (SLURM_ARRAY_TASK_ID=1, "
        "SLURM_ARRAY_TASK_COUNT=3)",
        "reasoning: shard 2/3: *",
    ])  # fmt: skip
    # The results file and its prompts were moved in place whole: no part file is left.
    assert sorted(p.name for p in (pytester.path / "out").iterdir()) == [
        "s2.jsonl",
        "s2.jsonl.prompts",
    ]
    assert not (pytester.path / "seen").exists()
    assert len(list(read_results(pytester.path / "out" / "s2.jsonl"))) > 0


def _row(index: int) -> Outcome:
    return Outcome(
        f"dyval.arithmetic[D1-s1-{index:03d}]", "m", "dyval.arithmetic", "D1", 1, f"h{index}",
        "<<<1>>>", "1", "1", True, None, None, 10, 2, 0.1,
    )  # fmt: skip


def test_a_shards_results_file_is_whole_or_absent(tmp_path: Path) -> None:
    """A shard writes beside its results file and renames it in place at the end: while it
    runs a merge reads the old file (or none); a killed shard leaves the old file as it was."""
    path = tmp_path / "s1.jsonl"
    store = ResultStore(path, aside=True)
    store.open()
    store.add(_row(1))
    assert not path.exists()  # still running: no file for a merge to read
    parts = [p for p in tmp_path.iterdir() if p.name.startswith(TEMP_PREFIX)]
    assert len(parts) == 1 and parts[0].name.endswith("s1.jsonl.part")
    store.add(_row(2))
    store.close()
    assert [r["item_id"] for r in read_results(path)] == [_row(1).item_id, _row(2).item_id]
    assert [p.name for p in tmp_path.iterdir()] == ["s1.jsonl"]
    # A rerun appends (readers keep the last row per sample), also aside: the old file is
    # whole until the new one replaces it.
    with path.open("a") as fh:
        fh.write('{"item_id": "torn')  # a killed in-place writer's half row
    old = path.read_bytes()
    again = ResultStore(path, aside=True)
    again.add(_row(3))
    assert path.read_bytes() == old  # a killed shard would leave exactly this
    again.close()
    assert [r["item_id"] for r in read_results(path)] == [
        _row(i).item_id for i in (1, 2, 3)
    ]  # the torn row skipped, ours on a fresh line


def verdicts(junit: Path) -> dict[str, str]:
    """Verdict test cases of a JUnit file (gates, comparisons): name -> outcome."""
    out = {}
    for case in ET.parse(junit).iter("testcase"):
        name = case.get("name", "")
        if "-gate" not in name and "-vs-baseline" not in name and name != "infrastructure":
            continue
        found = [c.tag for c in case if c.tag in ("failure", "skipped", "error")]
        out[f"{case.get('classname')}.{name}"] = found[0] if found else "passed"
    return out


def rows(path: Path) -> list[tuple[object, ...]]:
    return sorted(map(repr, map(row_key, map(json.loads, path.read_text().splitlines()))))  # type: ignore[arg-type]


def shard_and_gate(
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    common: tuple[str, ...],
    gate_args: tuple[str, ...],
    *,
    subprocess: bool = False,
    n: int = 3,
    scheduler: tuple[pytest.MonkeyPatch, str] | None = None,
) -> tuple[int, str, dict[str, str]]:
    """Run the suite whole and in ``n`` shards, check that the shards' rows are the whole
    run's, then decide the shards' files with ``pytest-reasoning gate`` and check that its
    verdicts (JUnit) and exit status are the whole run's. Returns the gate's status, its
    output and the verdicts. ``scheduler``: the shards take ``--reasoning-shard auto`` from
    that scheduler's variables (``SCHEDULERS``, n = 3)."""
    runpytest = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    common = ("-p", "no:cacheprovider", "-p", "no:randomly", PLAIN, *common)
    whole = runpytest(*common, "--reasoning-results=all.jsonl", "--junitxml=all.xml")
    for k in range(1, n + 1):
        value = f"{k}/{n}"
        if scheduler is not None:  # --reasoning-shard auto, job k-1 of that scheduler's
            monkeypatch, name = scheduler
            value, env = SCHEDULERS[name]
            for key, text in env(k - 1).items():
                monkeypatch.setenv(key, text)
        shard = runpytest(*common, f"--reasoning-shard={value}", f"--reasoning-results=s{k}.jsonl")
        assert shard.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        shard.stdout.fnmatch_lines([f"reasoning: shard {k}/{n}: *"])
    files = [str(pytester.path / f"s{k}.jsonl") for k in range(1, n + 1)]
    merged = sorted(r for f in files for r in rows(Path(f)))
    assert merged == rows(pytester.path / "all.jsonl")  # the union of shard rows, no repeat

    capsys.readouterr()
    suite = str(pytester.path / "shards.yaml")
    junit = f"--junitxml={pytester.path / 'gate.xml'}"
    status = main(["gate", suite, "--results", *files, *gate_args, junit])
    out = capsys.readouterr().out
    expected = verdicts(pytester.path / "all.xml")
    assert verdicts(pytester.path / "gate.xml") == expected
    assert status == whole.ret
    # One shard's file missing: its levels are not decided, and the merge fails as
    # infrastructure (status 6, not the model's fault), unless a decided gate failed (1).
    assert main(["gate", suite, "--results", *files[1:], *gate_args]) == (6 if status == 0 else 1)
    missing = capsys.readouterr().out
    assert "NOT DECIDED" in missing and "reasoning::infrastructure FAILED" in missing
    return status, out, expected


def test_gate_over_shards_decides_like_the_unsharded_run(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process, the reference model (always right) against a stored baseline."""
    pytester.makefile(".yaml", shards=SUITE)
    base = pytester.runpytest(
        "--llm", "reference", "-p", "no:cacheprovider", "--reasoning-results=base.jsonl", PLAIN
    )
    assert base.ret == pytest.ExitCode.OK
    stored = pytester.path / "stored.jsonl"
    stored.write_text(
        "".join(
            json.dumps({**r, "model": "base"}) + "\n"
            for r in map(json.loads, (pytester.path / "base.jsonl").read_text().splitlines())
        )
    )
    baseline = (f"--reasoning-baseline-results={stored}",)
    status, out, found = shard_and_gate(
        pytester, capsys, ("--llm", "reference", *baseline), baseline
    )
    assert status == 0
    assert len(found) == 11 and set(found.values()) == {"passed"}  # 5 gates, 6 comparisons
    assert "shards.yaml::dyval.arithmetic[D2-gate] PASSED" in out
    assert out.splitlines()[-1].startswith("11 passed in ")


@pytest.mark.e2e
def test_gate_over_shards_decides_pass_hat_k_like_the_unsharded_run(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], fake_server: FakeOpenAIServer
) -> None:
    """``metric: pass^3`` against a model right on 2 of every 3 tries of a prompt: every item
    has pass@3 1.0 and pass^3 0.0, so the pass@3 level passes and the pass^3 level fails — in
    the run, in the merge of its shards' files, and in the merge's HTML report."""
    pytester.makefile(
        ".yaml",
        shards="samples: 4\nrepeats: 3\ntasks:\n  - task: dyval.reachability\n    levels:\n"
        "      D2: {min_accuracy: 0.5, metric: pass@3}\n"
        "      D3: {min_accuracy: 0.5, metric: pass^3}\n",
    )
    model = ("--llm", "openai/right:2/3", "--llm-api-base", fake_server.url)
    common = (*model, "--reasoning-cache", "off")
    status, out, found = shard_and_gate(pytester, capsys, common, (), subprocess=True, n=2)
    assert status == 1
    assert found == {
        "shards.yaml.dyval.reachability[D2-gate]": "passed",
        "shards.yaml.dyval.reachability[D3-gate]": "failure",
    }, found
    assert "pass^3 0.000 (0.0/4 items) < min_accuracy 0.5" in out
    assert "pass@3 1.000 (4.0/4 items) >= min_accuracy 0.5" not in out  # a pass says no reason
    # The report prices LiteLLM models: in a process of its own, so that litellm is never
    # imported here (pytester would unload it and leave its metadata finder behind).
    report = pytester.path / "report"
    gate = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", "gate", "shards.yaml", "--results",
         "s1.jsonl", "s2.jsonl", "--report", str(report)],
        cwd=pytester.path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert gate.returncode == 1, gate.stdout + gate.stderr
    page = (report / "index.html").read_text()
    assert "<td>0.000 pass^3</td>" in page and "<td>1.000 pass@3</td>" in page
    assert "pass^3 0.000 (0.0/4 items) &lt; min_accuracy 0.5" in page


@pytest.mark.e2e
def test_gate_over_auto_shards_of_a_slurm_array_decides_like_the_unsharded_run(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/ci.md's SLURM recipe: three array tasks with --reasoning-shard auto, then the
    merge: the shards' rows are the whole run's and the merge's verdicts are its."""
    pytester.makefile(".yaml", shards=SUITE)
    _no_scheduler(monkeypatch)
    status, _, found = shard_and_gate(
        pytester, capsys, ("--llm", "reference"), (), scheduler=(monkeypatch, "slurm")
    )
    assert status == 0 and len(found) == 5 and set(found.values()) == {"passed"}


@pytest.mark.e2e
def test_gate_over_shards_fails_like_the_unsharded_run(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], fake_server: FakeOpenAIServer
) -> None:
    """Over HTTP: a model that answers True to everything, against a live baseline that is
    always right — failed gates and regressions, decided alike."""
    pytester.makefile(".yaml", shards=SUITE)
    models = ("--llm", "openai/always-true", "--llm", "openai/oracle")
    common = (*models, "--llm-baseline", "openai/oracle", "--llm-api-base", fake_server.url)
    status, out, found = shard_and_gate(
        pytester, capsys, common, ("--llm-baseline", "openai/oracle"), subprocess=True, n=2
    )
    assert status == 1
    assert set(found.values()) == {"passed", "failure"}  # a real mix
    assert sum("-vs-baseline" in k for k in found) == 6  # decided (n=4 is too few to regress)
    assert "GATE FAILED openai/always-true dyval.arithmetic D1" in out
    # The HTML report, in a process of its own (matplotlib is imported once per process).
    report = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", "gate", "shards.yaml", "--results",
         "s1.jsonl", "s2.jsonl", "--llm-baseline", "openai/oracle", "--report", "rep", "-q"],
        cwd=pytester.path, capture_output=True, text=True,
    )  # fmt: skip
    assert report.returncode == 1, report.stderr
    assert (pytester.path / "rep" / "index.html").is_file()


def test_deferred_gates_are_decided_by_gate(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makefile(".yaml", shards=SUITE)
    # Half a level runs in each job (finer than a level): its gate is deferred in both.
    sample = "shards.yaml::dyval.arithmetic[D2-s3-00{}]"
    for n, dropped in enumerate(((2, 3), (0, 1))):
        result = pytester.runpytest(
            "--llm", "reference", "-p", "no:cacheprovider", "--reasoning-defer-gates", PLAIN,
            "-k", "arithmetic and D2", f"--reasoning-results=h{n}.jsonl",
            *(f"--deselect={sample.format(i)}" for i in dropped),
        )  # fmt: skip
        assert result.ret == pytest.ExitCode.OK
        result.stdout.fnmatch_lines(
            ["*1 gate(s) (deferred: pytest-reasoning gate decides them*", "*2 passed, 1 skipped*"]
        )
    capsys.readouterr()
    status = main(
        ["gate", str(pytester.path / "shards.yaml"), "--results", "h0.jsonl", "h1.jsonl",
         "--allow-partial"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0  # the merge decides D2 on its whole level, the others are partial
    assert "shards.yaml::dyval.arithmetic[D2-gate] PASSED" in out
    assert "shards.yaml::dyval.arithmetic[D1-gate] NOT DECIDED" in out
    assert out.splitlines()[-1].startswith("1 passed, 4 not decided in ")

    # The same page on GitHub as a run (the HTML report: the e2e test below).
    summary = pytester.path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    args = ["gate", "shards.yaml", "--results", "h0.jsonl", "h1.jsonl", "--allow-partial"]
    assert main([*args, "-q"]) == 0
    out = capsys.readouterr().out
    assert "PASSED" not in out and "[D1-gate] NOT DECIDED" in out  # -q: what did not pass
    assert summary.read_text().startswith("## pytest-reasoning")


# Like pytest-split: a filter of its own that runs after the others and cuts levels apart.
SPLITTER = """
import os

import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    if not os.environ.get("SPLIT_HALF"):
        return
    config.hook.pytest_deselected(items=items[1::2])
    items[:] = items[::2]
"""


@pytest.mark.e2e
def test_calls_only_for_the_selected_items(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shard, then -k, then another plugin's filter: the model is asked exactly for the
    samples left after all three (prefetch included), counted by the server."""
    pytester.makefile(".yaml", shards=SUITE)
    pytester.makeconftest(SPLITTER)
    model = ("--llm", "openai/oracle", "--llm-api-base", fake_server.url)
    select = ("--reasoning-shard=1/2", "-k", "not reachability", "--reasoning-defer-gates")
    shard = collected(pytester, *model, "--reasoning-shard=1/2")
    monkeypatch.setenv("SPLIT_HALF", "1")
    samples = [i for i in collected(pytester, *model, *select) if isinstance(i, ReasoningItem)]
    assert 0 < len(samples) < sum(isinstance(i, ReasoningItem) for i in shard) < 23
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *model, *select)
    assert result.ret == pytest.ExitCode.OK
    assert fake_server.stats()["requests"] == {"oracle": len(samples)}


SMALL = "seed: 3\nsamples: 3\ntasks:\n  - {task: dyval.arithmetic, levels: [D1, D2]}\n"


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("shard", ["1/99999999999999999999", "1/10000000000", "1/100000000"])
def test_a_huge_shard_count_is_one_usage_line(pytester: pytest.Pytester, shard: str) -> None:
    """Before: 1/99999999999999999999 → INTERNALERROR (OverflowError, exit 3); 1/10000000000 →
    MemoryError; 1/100000000 took 1.6 GB and 34 s."""
    pytester.makefile(".yaml", s=SMALL)
    started = time.perf_counter()
    result = pytester.runpytest("--llm", "reference", "--reasoning-shard", shard, PLAIN)
    took = time.perf_counter() - started
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (line,) = _lines(result.stderr.str())
    assert line.startswith("ERROR: --reasoning-shard: at most 1,000 shards"), line
    record_hardened(f"shard-{len(shard) - 2}", f"exit 4, one line in {took:.2f} s")
