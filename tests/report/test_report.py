"""The HTML report: self-contained, with plots, tables and rebuilt prompts for failing samples,
from a run (``--reasoning-report``) and from results files (``pytest-reasoning report``)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from results_rows import PROP_SUITE, _gate, _row, _suite_rows_base, _write

from pytest_reasoning.report.viewer import page_data
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
SUITE = """\
seed: 3
samples: 6
tasks:
  - {task: dyval.arithmetic, levels: {D1: {min_accuracy: 0.5}, D3: {min_accuracy: 0.5}}}
  - {task: zebra.grid, metric: cell, levels: [2x3, 4x3]}
  - {task: flenqa.monorel, levels: [250, 500], params: {padding: similar}}
"""


def _run(pytester: pytest.Pytester, server: Any, *args: str) -> pytest.RunResult:
    pytester.makefile(".yaml", s=SUITE)
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--llm-api-base", server.url, "--reasoning-cache", "off", *args
    )


def _self_contained(index: Path) -> str:
    page = index.read_text()
    assert not re.search(r"""(src|href)=["']https?://""", page)  # nothing from the network
    assert "<style>" in page
    return page


@pytest.mark.e2e
def test_report_from_a_run(pytester: pytest.Pytester, fake_server: Any) -> None:
    out = pytester.path / "rep"
    result = _run(
        pytester, fake_server, "--llm", "openai/shallow:2", "--llm-baseline", "reference",
        f"--reasoning-report={out}", f"--reasoning-robustness={pytester.path / 'rob'}",
    )  # fmt: skip
    result.stdout.fnmatch_lines([f"*reasoning: report {out}/index.html"])
    page = _self_contained(out / "index.html")
    names = {p.name for p in out.iterdir()}
    assert {"index.html", "summary.json", "accuracy_by_level.png", "failure_modes.png",
            "baseline.png", "zebra_sizes.png", "flenqa_length.png"} <= names  # fmt: skip
    # Every plot embedded, the robustness plots too.
    assert page.count('src="data:image/png;base64,') == 8
    assert "Robustness: win probability" in page
    assert "Candidate against baseline (reference)" in page
    assert "FAIL" in page  # the D3 arithmetic gate
    # Every sample in the viewer: prompts rebuilt from the rows' addresses, the zebra clue named.
    manifest, metas, texts = page_data(out)
    assert manifest["total"] == 72  # 2 models x 6 levels x 6 samples
    assert any("description of an arithmetic problem" in p for t in texts for p in t["prompts"])
    details = {s.get("detail", "") for m in metas for s in m["samples"]}
    assert any("breaks clue" in d for d in details) or "partial_grid" in str(metas)
    summary = json.loads((out / "summary.json").read_text())
    d3 = next(c for c in summary["levels"] if c["task"] == "dyval.arithmetic" and c["level"] == "D3"
              and c["model"] == "openai/shallow:2")  # fmt: skip
    assert d3["accuracy"] == 0.0 and d3["failure_modes"] == {"wrong_value": 6}
    assert any(g["passed"] is False for g in summary["gates"])


@pytest.mark.e2e
def test_a_run_links_its_failed_gates_to_the_published_report(
    pytester: pytest.Pytester, fake_server: Any
) -> None:
    """The ini key (or --reasoning-report-url, which wins): terminal and JUnit links open the
    published page with the view a file:// link has; a bad address is one line, exit 4."""
    import xml.etree.ElementTree as ET

    pytester.makefile(".yaml", s="seed: 3\nsamples: 2\ntasks:\n"
                      "  - {task: dyval.arithmetic, levels: {D3: {min_accuracy: 0.5}}}\n")  # fmt: skip
    pytester.makeini("[pytest]\nreasoning_report_url = https://org.github.io/repo/\n")
    common = ["-p", "no:cacheprovider", "--llm-api-base", fake_server.url, "--llm",
              "openai/shallow:2", "s.yaml", "--junitxml=j.xml"]  # fmt: skip
    view = (
        "#model=openai%2Fshallow%3A2&suite=s.yaml&task=dyval.arithmetic&level=D3"
        "&outcome=not-correct"
    )
    result = pytester.runpytest_subprocess(*common, f"--reasoning-report={pytester.path / 'r'}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert f"; samples: https://org.github.io/repo/{view}" in out and "file://" not in out
    (failure,) = ET.parse(pytester.path / "j.xml").iter("failure")
    assert failure.get("message", "").endswith(f"; samples: https://org.github.io/repo/{view}")
    other = "https://ci.example/artifacts/r/index.html"
    result = pytester.runpytest_subprocess(*common, f"--reasoning-report-url={other}")
    assert f"; samples: {other}{view}" in result.stdout.str()
    bad = pytester.runpytest_subprocess(*common, "--reasoning-report-url=report/")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert bad.stderr.lines[0] == (
        "ERROR: --reasoning-report-url: expected an http(s) URL such as "
        "https://ORG.github.io/REPO/, got 'report/'"
    )


@pytest.mark.e2e
def test_report_command(pytester: pytest.Pytester, fake_server: Any, tmp_path: Path) -> None:
    """The report of results files, with the prompts each run filed beside its results (so
    none is generated again): every row's prompt, from one process or from xdist workers,
    never in JUnit XML, and an edited prompt is not shown."""
    from pytest_reasoning.gates.store import prompts_path, read_prompts

    files = []
    for model, more in (("reference", ()), ("openai/shallow:2", ("-n", "2"))):
        res = tmp_path / f"{model.replace('/', '_')}.jsonl"
        junit = tmp_path / "j.xml"
        _run(pytester, fake_server, "--llm", model, f"--reasoning-results={res}",
             f"--junitxml={junit}", *more)  # fmt: skip
        files.append(str(res))
        shas = {json.loads(line)["prompt_sha256"] for line in res.read_text().splitlines()}
        filed = read_prompts(res)
        assert set(filed) == shas and len(shas) == 36
        assert "reasoning.prompt" not in junit.read_text()
        assert not any(p in junit.read_text() for p in filed.values())
    # An edited prompt (its hash kept) is not read: the report generates that one again.
    beside = Path(prompts_path(files[1]))
    lines = beside.read_text().splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps(first | {"prompt": "INJECTED: answer 7."})
    beside.write_text("\n".join(lines) + "\n")
    for path in files[:1]:  # the reference's own prompts file is gone: those come from the other
        os.unlink(prompts_path(path))
    cmd = [sys.executable, "-m", "pytest_reasoning.cli", "report", *files]
    out = tmp_path / "rep"
    done = subprocess.run([*cmd, "--out", str(out), "--baseline", "reference"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert f"wrote {out}/index.html" in done.stdout
    page = _self_contained(out / "index.html")
    assert "Candidate against baseline (reference)" in page
    _, _, texts = page_data(out)
    shown = [p for t in texts for p in t["prompts"]]
    assert any("description of an arithmetic problem" in p for p in shown)
    assert first["prompt"] in shown and not any("INJECTED" in p for p in shown)
    assert "without their prompt" not in page
    bad = subprocess.run(
        [*cmd, "--out", str(out), "--baseline", "gpt-9"], capture_output=True, text=True
    )
    assert bad.returncode == 4
    assert bad.stderr.strip() == (
        "pytest-reasoning: error: --baseline: 'gpt-9' is not in the files; they hold "
        "openai/shallow:2, reference"
    )


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
@pytest.mark.e2e
def test_the_page_renders_in_a_browser(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "report_browser.py"), "--screenshot", str(shot)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "broken: 0, console errors: 0" in done.stdout
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summary_lines_without_pytest() -> None:
    """The terminal summary is prepared data: gates, tables and warnings as lines."""
    from pytest_reasoning.core import Outcome
    from pytest_reasoning.gates import GateRule, GateSpec, Ledger, decide_gates
    from pytest_reasoning.report import RunSummary, closing_lines, markdown_summary, summary_lines

    ledger = Ledger(hint="-")
    for level, hits in (("D1", [True, True, True, False]), ("D2", [False, False, True, False])):
        spec = GateSpec("s.yaml", "dyval.arithmetic", level, GateRule(min_accuracy=0.5))
        for i, hit in enumerate(hits):
            ledger.add(
                Outcome(
                    f"dyval.arithmetic[{level}-s1-00{i}]",
                    "m",
                    "dyval.arithmetic",
                    level,
                    1,
                    "h",
                    "<<<1>>>",
                    "1",
                    "1" if hit else "2",
                    hit,
                    None if hit else "wrong_value",
                    None,
                    10,
                    2,
                    0.5,
                    # D1's four items ask two problems (up to renaming): two repeat
                    problem=f"p{i % 2}" if level == "D1" else None,
                ),
                spec,
            )
    gates = decide_gates(ledger.levels.values())
    run = RunSummary(levels=list(ledger.levels.values()), gates=gates, errors=1)
    lines = summary_lines(run)
    text = [line.text for line in lines]
    assert text[0].split() == ["model", "task", "level", "n", "correct", "accuracy", "95%", "CI",
                               "threshold", "gate", "unanswered", "failure", "modes", "errors",
                               "tokens", "mean", "latency"]  # fmt: skip
    assert any(t.split()[:3] == ["m", "dyval.arithmetic", "D2"] and "FAIL" in t for t in text)
    failed = [line for line in lines if line.text.startswith("reasoning: 1 of 2 gates FAILED")]
    assert failed and failed[0].markup == {"red": True, "bold": True}
    assert (
        "  FAILED m dyval.arithmetic D2: accuracy 0.250 (1/4) < min_accuracy 0.5; "
        "3 of 4 failed as wrong_value" in text
    )
    closing = [line.text for line in closing_lines(run)]
    assert closing[0].startswith("reasoning: dyval.arithmetic D1 (m): 2 of 4 items repeat")
    assert closing[1] == "reasoning: 1 infrastructure error(s) (not counted as wrong answers)"
    md = markdown_summary(run)
    assert md.startswith("## pytest-reasoning\n\n**1 gate(s) failed.**")
    assert "| m       | dyval.arithmetic | D2      |" in md


def _outcome(model: str, index: int, correct: bool, *, cached: bool = False) -> Any:
    from pytest_reasoning.core import Outcome

    return Outcome(
        f"dyval.arithmetic[D1-s1-00{index}]", model, "dyval.arithmetic", "D1", 1, f"h{index}",
        "<<<1>>>", "1", "1" if correct else "2", correct, None if correct else "wrong_value",
        None, 10, 2, 0.5 + index, cached=cached,
    )  # fmt: skip


def test_report_says_under_powered_cached_and_partial(tmp_path: Path) -> None:
    """What the terminal says, the page says: a drop on 4 pairs is under-powered, not "ok";
    cached answers still list their (original) latency, marked; a partial level is shown
    as such; the per-model table counts answers from the cache."""
    from pytest_reasoning.gates import GateRule, GateSpec, Ledger, baseline_answers, compare
    from pytest_reasoning.report import build_report

    spec = GateSpec("s.yaml", "dyval.arithmetic", "D1", GateRule(min_accuracy=0.5))
    ledger = Ledger(hint="-")
    outcomes = []
    for i in range(4):
        outcomes += [_outcome("cand", i, False, cached=True), _outcome("base", i, True)]
    for o in outcomes:
        ledger.add(o, spec)
    cand = [(o, spec) for o in outcomes if o.model == "cand"]
    comparisons = compare(cand, baseline_answers(o for o in outcomes if o.model == "base"), "base")
    assert not comparisons[0].regressed  # p = 0.0625 on 4 pairs
    report = build_report(
        [o.to_dict() for o in outcomes],
        str(tmp_path / "r"),
        levels=list(ledger.levels.values()),
        comparisons=comparisons,
        incomplete={("cand", "s.yaml", "dyval.arithmetic", "D1"): (4, 10)},
    )
    page = (tmp_path / "r" / "index.html").read_text()
    assert '<td class="warn">under-powered</td>' in page and ">ok<" not in page
    assert "dyval.arithmetic[D1-s1-003] (cached)</td><td>3.50</td>" in page  # slowest first
    assert "<td>partial 4/10</td>" in page
    assert "<td>cand</td><td>4</td><td>0</td><td>4</td><td>0</td><td>-</td>" in page
    assert report.note is None  # matplotlib is installed here: plots, no note
    assert "accuracy_by_level.png" in report.summary["plots"]


def test_summary_shows_partial_levels_models_and_wrong_answers() -> None:
    from pytest_reasoning.gates import GateRule, GateSpec, Ledger
    from pytest_reasoning.report import RunSummary, markdown_summary, summary_lines

    spec = GateSpec("s.yaml", "dyval.arithmetic", "D1", GateRule(min_accuracy=0.5))
    ledger = Ledger(hint="-")
    outcomes = [_outcome("m", i, i == 0, cached=i == 2) for i in range(3)]
    for o in outcomes:
        ledger.add(o, spec)
    run = RunSummary(
        levels=list(ledger.levels.values()),
        rows=[o.to_dict() for o in outcomes],
        incomplete={("m", "s.yaml", "dyval.arithmetic", "D1"): (3, 5)},
    )
    text = [line.text for line in summary_lines(run)]
    assert "partial 3/5" in text[2]
    models = text.index(next(t for t in text if t.startswith("model ") and "from cache" in t))
    assert text[models + 2].split() == ["m", "3", "2", "1", "0", "1.00s"]  # 0.5 s and 1.5 s
    assert any(
        t.startswith("reasoning: 1 level(s) ran in part") and "-k 'dyval.arithmetic[D1-gate'" in t
        for t in text
    )
    md = markdown_summary(run)
    assert "### Wrong answers and errors (2;" in md
    assert (
        "| <code>dyval.arithmetic\\[D1-s1-002\\]</code> (cached) | 1 | 2 | wrong\\_value |" in md
    )


@pytest.mark.e2e
def test_report_says_when_plots_are_skipped(tmp_path: Path) -> None:
    """The README's first install has no matplotlib: the page and the command say the plots
    were skipped, and why (here matplotlib is shadowed by a package that fails to import)."""
    blocked = tmp_path / "blocked" / "matplotlib"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('No module named matplotlib')\n")
    (tmp_path / "r.jsonl").write_text(json.dumps(_outcome("m", 0, True).to_dict()) + "\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "blocked")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", "report", "r.jsonl", "--out", "o"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "note: no plots: matplotlib cannot be imported" in done.stderr
    assert "pytest-reasoning[analysis]" in (tmp_path / "o" / "index.html").read_text()


def test_the_step_summary_shows_model_text_and_names_as_text() -> None:
    """GitHub renders the step summary's Markdown with HTML: a model name or an answer
    holding a tag, a closing </details> or a pipe must show as written, not become markup
    or shift a table's columns (before: all three did)."""
    from pytest_reasoning.gates import GateRule, GateSpec, Ledger, decide_gates
    from pytest_reasoning.report import RunSummary, markdown_summary

    model = "m|<img src=x onerror=alert(1)>"
    answer = "</details><img src=x> | [click](https://evil) **bold** `code` \x1b[2J\u202e"
    spec = GateSpec("s.yaml", "dyval.arithmetic", "D1", GateRule(min_accuracy=0.5))
    ledger = Ledger(hint="-")
    outcomes = [
        dataclasses.replace(_outcome(model, i, i == 0), extracted=answer) for i in range(3)
    ]
    for o in outcomes:
        ledger.add(o, spec)
    levels = list(ledger.levels.values())
    rows = [o.to_dict() for o in outcomes]
    run = RunSummary(levels=levels, gates=decide_gates(levels), rows=rows)
    md = markdown_summary(run)
    assert not re.search(r"(?<!\\)<img", md) and "\x1b" not in md and "\u202e" not in md
    assert md.count("<details>") == md.count("</details>") == 1  # ours only
    assert "[click](" not in md and "**bold**" not in md  # no link, no emphasis
    assert "m\\|\\<img src=x onerror=alert(1)\\>" in md  # shown, backslash-escaped
    assert "<summary>m|&lt;img src=x onerror=alert(1)&gt; · dyval.arithmetic · D1: 2" in md
    for line in md.splitlines():  # every table row has its table's columns
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line)[1:-1]
            assert len(cells) in (4, 6, 13, 14), line


def test_a_results_row_cannot_make_the_report_generate_without_bound(tmp_path: Path) -> None:
    """A report rebuilds each prompt from its row's address, and item k of a batch of
    distinct problems walks the k before it. Before: ``extra.address.index = 10**18`` walked
    for ever (about 1.4 ms an item) and knobs from a row ran unchecked (3.8 GB). Now an index
    no suite asks, or knobs the task refuses, lose their address when the row is read (the
    row still counts), and the report generates at most 20 items a row."""
    import signal

    from pytest_reasoning.core import Reply
    from pytest_reasoning.evaluate import score_reply
    from pytest_reasoning.gates import load_results
    from pytest_reasoning.registry import get_task
    from pytest_reasoning.report import build_report

    item = make_item(get_task("dyval.arithmetic"), "D1", 1, 0)
    good = score_reply(item, "m", Reply(f"<<<{item.answer}>>>", latency_s=0.1)).to_dict()
    rows = [good]
    for n, address in enumerate(
        [{"index": 10**18}, {"params": {"depth": 12, "width": 6}}]  # the task refuses 12 x 6
        + [{"index": 99_999, "seed": s} for s in range(40)]  # asked, but 40 batches of 100,000
    ):
        row = json.loads(json.dumps(good))
        row["item_id"], row["prompt_sha256"] = f"x{n}", f"h{n}"
        row["seed"] = address.pop("seed", 1)
        row["extra"]["address"].update(address)
        rows.append(row)
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    found = load_results(tmp_path / "r.jsonl")
    assert len(found.rows) == 43 and found.unaddressed == [2, 3]  # counted, not addressed
    assert all("address" not in r["extra"] for r in found.rows[1:3])

    def stop(*_: Any) -> None:
        raise TimeoutError("the report is generating without bound")

    signal.signal(signal.SIGALRM, stop)
    signal.alarm(120)  # a guard for the regression, far above the second this takes
    try:
        build_report(found.rows, str(tmp_path / "out"))
    finally:
        signal.alarm(0)
    page = (tmp_path / "out" / "index.html").read_text()
    assert "42 sample(s) without their prompt" in page  # the good row's was rebuilt


def test_gym_knobs_from_a_row_meet_the_bounds_a_suite_meets(tmp_path: Path) -> None:
    """Before: coin_flip max_trials 10**6 in a row hung the report, tower_of_hanoi 60 disks
    was a MemoryError. A row's knobs pass the task's own checks (gym's bounds, the ones a
    suite meets) or its address is dropped when the row is read."""
    pytest.importorskip("reasoning_gym")
    from pytest_reasoning.core import Outcome
    from pytest_reasoning.gates import load_results

    rows = []
    knobs_of = [
        ("gym.coin_flip", {"max_trials": 10**6}),
        ("gym.tower_of_hanoi", {"max_disks": 60}),
        ("gym.coin_flip", {"max_trials": 4}),
    ]
    for n, (task, knobs) in enumerate(knobs_of):
        o = Outcome(f"{task}[L0-s1-00{n}]", "m", task, "L0", 1, f"h{n}", "<<<x>>>", "x", "y",
                    False, "wrong", None, 1, 1, 0.1,
                    extra={"address": {"index": n, "style": "direct", "params": knobs}})  # fmt: skip
        rows.append(json.dumps(o.to_dict()))
    (tmp_path / "r.jsonl").write_text("\n".join(rows) + "\n")
    found = load_results(tmp_path / "r.jsonl")
    assert found.unaddressed == [1, 2] and len(found.rows) == 3
    assert found.rows[2]["extra"]["address"]["params"] == {"max_trials": 4}


def test_report_keeps_two_models_of_one_name_apart(tmp_path: Path) -> None:
    from pytest_reasoning.cli.results import _read_all

    row = {"item_id": "x[D1-s1-000]", "model": "local", "task": "t", "level": "D1", "seed": 1,
           "prompt_sha256": "p", "response": "<<<1>>>", "extracted": "1", "gold": "1",
           "correct": True, "failure_mode": None, "error": None, "prompt_tokens": 1,
           "completion_tokens": 1, "latency_s": 0.1}  # fmt: skip
    for name in ("a", "b"):
        (tmp_path / f"{name}.jsonl").write_text(
            json.dumps({**row, "model_id": f"local=openai/smol@local:{name}.gguf#{name * 4}"})
        )
    got = _read_all([str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")])
    assert sorted(r["model"] for r in got) == [
        "local=openai/smol@local:a.gguf#aaaa",
        "local=openai/smol@local:b.gguf#bbbb",
    ]


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # A subprocess per run: LiteLLM keeps process-wide client caches bound to event loops.
    return pytester.runpytest_subprocess("-p", "no:randomly", *args)


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


@pytest.fixture
def suite_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "prop.yaml").write_text(PROP_SUITE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_failed_gate_links_to_its_samples_in_the_report(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [_row(b, "m", b[3] != "D2") for b in _suite_rows_base(str(suite_dir))]
    _write(suite_dir / "r.jsonl", rows)
    code, out, _ = _gate(["prop.yaml", "--results", "r.jsonl", "--report", "rep"], capsys)
    assert code == 1
    (failed,) = [line for line in out.splitlines() if " FAILED - " in line]
    link = (suite_dir / "rep" / "index.html").resolve().as_uri()
    assert "D2-gate] FAILED" in failed
    assert failed.endswith(
        f"; samples: {link}#model=m&suite=prop.yaml&task=dyval.boolean_logic&level=D2"
        "&outcome=not-correct"
    )
    assert (suite_dir / "rep" / "index.html").is_file()


@pytest.mark.e2e
def test_the_merge_report_shows_the_prompts_the_shards_filed(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``gate --report``: the prompts filed beside each shard's results are shown (these rows
    keep no item address, so none could be generated again)."""
    from pytest_reasoning.config import addresses, load_suite
    from pytest_reasoning.gates.store import prompts_path

    rows = [_row(b, "m", b[3] != "D2") for b in _suite_rows_base(str(suite_dir))]
    (suite_dir / "shards").mkdir()
    _write(suite_dir / "shards" / "s1.jsonl", rows[::2])
    _write(suite_dir / "shards" / "s2.jsonl", rows[1::2])
    code, _, _ = _gate(["prop.yaml", "--results", "shards", "--report", "rep"], capsys)
    assert code == 1
    page = (suite_dir / "rep" / "index.html").read_text()
    assert f"{len(rows)} sample(s) without their prompt" in page
    items = [a.make_item() for a in addresses(load_suite(suite_dir / "prop.yaml"))]
    for n, part in ((1, items[::2]), (2, items[1::2])):
        Path(prompts_path(suite_dir / "shards" / f"s{n}.jsonl")).write_text("".join(
            json.dumps({"prompt_sha256": i.prompt_sha256, "prompt": i.prompt}) + "\n"
            for i in part
        ))  # fmt: skip
    code, _, _ = _gate(["prop.yaml", "--results", "shards", "--report", "rep2"], capsys)
    assert code == 1
    assert "without their prompt" not in (suite_dir / "rep2/index.html").read_text()
    _, _, texts = page_data(suite_dir / "rep2")
    assert sorted(p for t in texts for p in t["prompts"]) == sorted({i.prompt for i in items})


def test_links_use_the_address_the_report_is_published_at(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--reasoning-report-url``: the terminal's and JUnit's links open the published page,
    with the same view after ``#`` as a file:// link."""
    import xml.etree.ElementTree as ET

    rows = [_row(b, "m", b[3] != "D2") for b in _suite_rows_base(str(suite_dir))]
    _write(suite_dir / "r.jsonl", rows)
    url = "https://org.github.io/repo/"
    view = "#model=m&suite=prop.yaml&task=dyval.boolean_logic&level=D2&outcome=not-correct"
    base = ["prop.yaml", "--results", "r.jsonl", "--junitxml", "j.xml"]
    code, out, _ = _gate([*base, "--report", "rep", "--reasoning-report-url", url], capsys)
    assert code == 1
    (failed,) = [line for line in out.splitlines() if " FAILED - " in line]
    assert failed.endswith(f"; samples: {url}{view}") and "file://" not in out
    (message,) = [f.get("message", "") for f in ET.parse("j.xml").iter("failure")]
    assert message.endswith(f"; samples: {url}{view}")
    # Without a --report here (the report is built and published by another step).
    code, out, _ = _gate([*base, "--reasoning-report-url", url], capsys)
    assert code == 1 and f"; samples: {url}{view}" in out
    code, out, err = _gate([*base, "--reasoning-report-url", "report/"], capsys)
    assert code == 4 and not out
    assert err.strip() == (
        "pytest-reasoning: error: --reasoning-report-url: expected an http(s) URL such as "
        "https://ORG.github.io/REPO/, got 'report/'"
    )
