"""``pytest-reasoning gate --from``: another harness's logs gated as our own runs are.

The logs under ``tests/fixtures/harnesses/`` were written by the real tools (inspect-ai
0.3.285, lm-eval 0.4.13) asking our test server; ``make.py`` there regenerates them."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from pytest_reasoning.cli import main
from pytest_reasoning.errors import ReasoningError
from pytest_reasoning.gates import Comparison, GateResult
from pytest_reasoning.harnesses import gate_logs, read_logs
from pytest_reasoning.harnesses.samples import to_rows
from pytest_reasoning.merge import Merge, merge
from pytest_reasoning.testing.server import FakeOpenAIServer, drifted

LOGS = Path(__file__).parents[1] / "fixtures" / "harnesses"
ORACLE = str(LOGS / "inspect" / "oracle-deflate.eval")
DRIFTED = str(LOGS / "inspect" / "drifted-deflate.eval")
DRIFTED_ZSTD = str(LOGS / "inspect" / "drifted.eval")
EPOCHS = str(LOGS / "inspect" / "epochs.json")
LM_ORACLE = str(LOGS / "lm-eval" / "oracle")
LM_DRIFTED = str(LOGS / "lm-eval" / "drifted")

# The items the logs asked (``pytest-reasoning export dyval.reachability --level D2 --count
# 24 --seed 1`` when they were written), frozen in items.jsonl and run here as a suite of our
# own: since issue 41 drew generated items up to renaming, seed 1 generates other problems,
# and only the same prompts can give the same answers (the server's drift is per prompt).
ITEMS = LOGS / "items.jsonl"
SUITE = """\
name: reach
tasks:
  - dataset: items.jsonl
    levels:
      D2: {min_accuracy: 0.8}
"""


def _zstd_module() -> bool:
    for name in ("compression.zstd", "backports.zstd", "zstandard"):
        try:
            __import__(name)
        except ImportError:
            continue
        return True
    return False


def _thresholds(tmp_path: Path, text: str = "tasks:\n  reach: {min_accuracy: 0.8}\n") -> str:
    path = tmp_path / "thresholds.yaml"
    path.write_text(text)
    return str(path)


def _said(found: Merge) -> list[tuple[Any, ...]]:
    """What each verdict decided, whatever the levels are called: the kind, the outcome and
    the figures (a gate's counts and measure, a comparison's table and p-values)."""
    out: list[tuple[Any, ...]] = []
    for v in found.verdicts:
        s = v.subject
        if isinstance(s, GateResult):
            out.append((v.kind, v.outcome, s.stats.n, s.stats.correct, s.stats.measure))
        elif isinstance(s, Comparison):
            t = s.table
            out.append(
                (v.kind, v.outcome, t.n, t.only_baseline, t.only_candidate, s.p_adjusted)
            )
        else:
            out.append((v.kind, v.outcome))
    return out


@pytest.mark.e2e
def test_inspect_and_lm_eval_logs_gate_as_our_own_run_of_the_same_answers(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """Our own run of the logs' items against the same server (its answers to 7 of the 24
    prompts changed, as when the logs were written) gives the verdicts the logs give."""
    pytester.makefile(".yaml", reach=SUITE)
    (pytester.path / "items.jsonl").write_bytes(ITEMS.read_bytes())
    prompts = [json.loads(line)["prompt"] for line in ITEMS.read_text().splitlines()]
    assert sum(drifted(p, 0.3) for p in prompts) == 7
    args = ["-p", "no:cacheprovider", "--llm", "openai/oracle", "--llm-api-base", fake_server.url]
    args += ["--reasoning-cache", "off"]
    assert pytester.runpytest_subprocess(*args, "--reasoning-results=base.jsonl").ret == 0
    fake_server.control(drift=0.3)
    pytester.runpytest_subprocess(*args, "--reasoning-results=cand.jsonl")
    suite = str(pytester.path / "reach.yaml")
    ours_base = merge([suite], [str(pytester.path / "base.jsonl")])
    ours = merge(
        [suite],
        [str(pytester.path / "cand.jsonl")],
        baseline_results=str(pytester.path / "base.jsonl"),
    )
    thresholds = _thresholds(tmp_path)
    for kind, base, cand in (("inspect", ORACLE, DRIFTED), ("lm-eval", LM_ORACLE, LM_DRIFTED)):
        alone = gate_logs(kind, [base], thresholds=thresholds)
        assert _said(alone) == _said(ours_base) == [("gate", "passed", 24, 24, 1.0)]
        theirs = gate_logs(kind, [cand], thresholds=thresholds, baseline_logs=[base])
        assert _said(theirs) == _said(ours), kind
        assert [v.outcome for v in theirs.verdicts] == ["failed", "failed"]
        assert theirs.status == ours.status == 1
        # The gate's reason after its name: the same measure, counts and threshold (our
        # tasks name the wrong answers' failure mode too; a log's scorer does not).
        mine, their = ours.verdicts[0].message, theirs.verdicts[0].message
        assert mine.split(": ", 1)[1].split("; ")[0] == their.split(": ", 1)[1]
        assert their.endswith("accuracy 0.708 (17/24) < min_accuracy 0.8")


def test_a_candidate_log_with_a_significant_paired_drop_fails_with_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thresholds = _thresholds(tmp_path, "tasks: {}\n")  # comparisons only
    for kind, base, cand in (("inspect", ORACLE, DRIFTED), ("lm-eval", LM_ORACLE, LM_DRIFTED)):
        junit = tmp_path / f"{kind}.xml"
        status = main(
            ["gate", thresholds, "--from", kind, cand, "--reasoning-baseline-results", base,
             f"--junitxml={junit}"]
        )  # fmt: skip
        out = capsys.readouterr().out
        assert status == 1, out
        assert "reach[pattern-vs-baseline] FAILED" in out or (
            "reach[exact_match,strict-vs-baseline] FAILED" in out
        )
        assert "(only baseline right 7, only candidate right 0)" in out
        assert "Holm-adjusted p = 0.00781 < alpha 0.05" in out
        assert junit.read_text().count("<failure") == 1
        # The baseline against itself: no drop, exit 0.
        same = ["gate", thresholds, "--from", kind, base, "--reasoning-baseline-results", base]
        assert main(same) == 0
        capsys.readouterr()


def test_a_candidate_and_its_baseline_in_the_same_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--llm-baseline`` names a model of the logs given: samples of one side only are
    named and left out of the pairing."""
    samples = tmp_path / "samples.jsonl"
    lines = []
    for k in range(12):
        lines.append({"task": "t", "id": k, "model": "base", "correct": True, "input": f"q{k}"})
        if k != 3:  # the candidate never answered q3
            right = k % 2 == 0
            lines.append({"task": "t", "id": k, "model": "cand", "correct": right, "input": f"q{k}"})
    lines.append({"task": "t", "id": 99, "model": "cand", "correct": True, "input": "q99"})
    samples.write_text("".join(json.dumps(r) + "\n" for r in lines))
    found = gate_logs("jsonl", [str(samples)], baseline="base")
    (c,) = [v.subject for v in found.verdicts if isinstance(v.subject, Comparison)]
    assert c.table.n == 11 and c.missing == 1  # q99: no baseline sample; q3: no candidate
    assert c.table.only_baseline == 5 and c.regressed
    joined = "\n".join(found.notes)
    assert "1 sample(s) of cand have no sample of the baseline base" in joined
    assert "'t:all[99]'" in joined
    assert "1 sample(s) of the baseline base have none of cand" in joined
    assert "'t:all[3]'" in joined


def test_inspect_epochs_gate_as_repeats_with_pass_at_k_and_pass_hat_k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The epochs log: 6 items, 3 epochs, every item right on 2 of its 3 (model right:2/3)."""
    rows = to_rows(read_logs("inspect", [EPOCHS], {}))
    assert len(rows) == 18 and {r["repeats"] for r in rows} == {3}
    assert sorted({r["item_id"] for r in rows})[:3] == [
        "reach:pattern[dyval.reachability[D2-s1-000]-r0]",
        "reach:pattern[dyval.reachability[D2-s1-000]-r1]",
        "reach:pattern[dyval.reachability[D2-s1-000]-r2]",
    ]
    verdicts = {}
    for metric in ("accuracy", "pass@3", "pass^3", "pass@k", "pass^k"):
        path = _thresholds(tmp_path, f"min_accuracy: 0.6\nmetric: {metric}\n")
        (v,) = gate_logs("inspect", [EPOCHS], thresholds=path).verdicts
        assert isinstance(v.subject, GateResult)
        verdicts[metric] = (v.outcome, v.subject.stats.measure)
        assert v.subject.stats.items == 6 and v.subject.stats.repeats == 3
    assert verdicts == {
        "accuracy": ("passed", pytest.approx(2 / 3)),  # clustered by item: PASS*
        "pass@3": ("passed", 1.0),
        "pass@k": ("passed", 1.0),
        "pass^3": ("failed", 0.0),
        "pass^k": ("failed", 0.0),
    }
    # Against the one-epoch baseline log: paired per item on per-item means (the test for
    # sides asked unequally often), the baseline's 18 other items named and left out.
    found = gate_logs("inspect", [EPOCHS], baseline_logs=[ORACLE])
    (c,) = [v.subject for v in found.verdicts if isinstance(v.subject, Comparison)]
    assert c.means is not None and c.means.method == "betting"
    assert (c.table.n, c.means.worse, c.means.candidate, c.means.baseline) == (
        6, 6, pytest.approx(2 / 3), 1.0
    )
    assert any("18 sample(s) of the baseline openai/oracle have none" in n for n in found.notes)
    path = _thresholds(tmp_path, "tasks:\n  reach: {min_accuracy: 0.6, metric: pass^3}\n")
    assert main(["gate", path, "--from", "inspect", EPOCHS]) == 1
    out = capsys.readouterr().out
    assert "pass^3 0.000 (0.0/6 items) < min_accuracy 0.6" in out
    path = _thresholds(tmp_path, "tasks:\n  reach: {min_accuracy: 0.6, metric: pass^4}\n")
    assert main(["gate", path, "--from", "inspect", EPOCHS]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "pytest-reasoning: error: thresholds for task 'reach': metric pass^4 needs 4 epochs "
        "of each sample; the logs hold 3"
    ]


@pytest.mark.e2e
def test_a_log_gated_with_a_report_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``gate --from inspect LOG --report DIR``: a log has no results files (and no prompts
    filed beside them); the report is written all the same."""
    assert main(["gate", "--from", "inspect", ORACLE, "--report", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "index.html").is_file()
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.skipif(not _zstd_module(), reason="no zstd module to unpack inspect_ai's .eval")
def test_a_zstd_eval_log_reads_as_its_deflate_copy() -> None:
    zstd = to_rows(read_logs("inspect", [DRIFTED_ZSTD], {}))
    assert zstd == to_rows(read_logs("inspect", [DRIFTED], {}))
    assert sum(r["correct"] for r in zstd) == 17


@pytest.mark.skipif(_zstd_module(), reason="a zstd module is installed")
def test_a_zstd_eval_log_without_a_zstd_module_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["gate", "--from", "inspect", DRIFTED_ZSTD]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "drifted.eval: header.json: zstd-compressed" in err[0]
    assert "pip install zstandard" in err[0] and "inspect log convert" in err[0]


def test_a_log_that_did_not_finish_is_not_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = json.loads(Path(EPOCHS).read_text())
    log["status"] = "cancelled"
    log["samples"] = log["samples"][:10]
    del log["results"]
    path = tmp_path / "cancelled.json"
    path.write_text(json.dumps(log))
    gate = _thresholds(tmp_path, "min_accuracy: 0.5\n")
    assert main(["gate", gate, "--from", "inspect", str(path)]) == 6
    out = capsys.readouterr().out
    assert "status 'cancelled': 10 of 18 samples in the log" in out
    assert "reach[pattern-gate] NOT DECIDED" in out and "not decided (10 of 18 samples)" in out
    assert main(["gate", gate, "--from", "inspect", str(path), "--allow-partial"]) == 0


def test_logs_that_cannot_be_counted_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        zf.writestr("samples/1_epoch_1.json", b"{}")
    # Its central directory says the member unpacks to 300 MB (a zip bomb's member).
    data = bytearray(bomb.read_bytes())
    entry = data.rindex(b"PK\x01\x02")
    data[entry + 24 : entry + 28] = (300_000_000).to_bytes(4, "little")
    bomb.write_bytes(bytes(data))
    log = json.loads(Path(EPOCHS).read_text())
    log["samples"][0]["scores"]["pattern"]["value"] = 7
    out_of_range = tmp_path / "score.json"
    out_of_range.write_text(json.dumps(log))
    cases = {
        "not-a-zip.eval": ("--from", "inspect", str(tmp_path / "not-a-zip.eval")),
        "bomb": ("--from", "inspect", str(bomb)),
        "score": ("--from", "inspect", str(out_of_range)),
        "kind": ("--from", "helm", str(bomb)),
        "yaml": ("--from", "inspect", EPOCHS, "t.yaml"),
        "both": ("--from", "inspect", EPOCHS, "--results", "r.jsonl"),
        "neither": ("t.yaml",),
        "correct": ("--from", "jsonl", str(tmp_path / "yes.jsonl")),
        "range": ("--from", "jsonl", str(tmp_path / "two.jsonl")),
        "folder": ("--from", "lm-eval", str(tmp_path / "nothing")),
    }
    (tmp_path / "not-a-zip.eval").write_text("hello")
    (tmp_path / "yes.jsonl").write_text('{"task": "t", "id": 1, "model": "m", "correct": "yes"}\n')
    (tmp_path / "two.jsonl").write_text('{"task": "t", "id": 1, "model": "m", "score": 2}\n')
    expected = {
        "not-a-zip.eval": "not-a-zip.eval: not an inspect_ai .eval log (not a zip: File is not a zip file)",
        "bomb": "bomb.eval: samples/1_epoch_1.json: 300,000,000 bytes, over 268,435,456",
        "score": "score.json: sample 1 (id 'dyval.reachability[D2-s1-000]'): scorer 'pattern': score 7 is not in [0, 1]",
        "kind": "--from 'helm': expected one of inspect, lm-eval, jsonl, then the logs",
        "yaml": "--from inspect: t.yaml is no log: put the thresholds file before --from",
        "both": "--results and --from: give our results files or logs, not both",
        "neither": "name the suites and --results FILE... (our shards), or --from KIND LOG...",
        "correct": "yes.jsonl:1: correct: expected true or false, got 'yes'",
        "range": "two.jsonl:1: score 2 is not in [0, 1]",
        "folder": "nothing: no such file or folder",
    }
    for name, args in cases.items():
        assert main(["gate", *args]) == 4, name
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and expected[name] in err[0], (name, err)


def test_thresholds_files_are_read_like_suites(tmp_path: Path) -> None:
    path = _thresholds(
        tmp_path,
        "min_accuracy: 2\nsampels: 3\ntasks:\n  reach: {metric: pass^x, score: 3}\n",
    )
    with pytest.raises(ReasoningError) as info:
        gate_logs("inspect", [EPOCHS], thresholds=path)
    lines = [p.line for p in getattr(info.value, "problems", ())]
    assert any("min_accuracy: expected a number in [0, 1], got 2" in line for line in lines)
    assert any("sampels: unknown key" in line for line in lines)
    assert any("tasks.reach.metric: expected one of" in line for line in lines)
    assert any("tasks.reach.score: expected a scorer or metric name" in line for line in lines)


def test_our_sample_shape_gates_as_the_log_it_was_copied_from(tmp_path: Path) -> None:
    """The documented JSONL shape (docs/harnesses.md) carries what a verdict needs: the
    epochs log written in it gates as the log does."""
    lines = []
    for r in to_rows(read_logs("inspect", [EPOCHS], {})):
        sid = r["extra"]["sample_id"]
        lines.append(
            {"task": "reach", "level": "pattern", "id": sid, "model": r["model"],
             "correct": r["correct"], "epoch": r["repeat"] + 1, "input": sid}
        )  # fmt: skip
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in lines))
    for metric in ("accuracy", "pass^3"):
        path = _thresholds(tmp_path, f"min_accuracy: 0.6\nmetric: {metric}\n")
        mine = gate_logs("jsonl", [str(samples)], thresholds=path)
        theirs = gate_logs("inspect", [EPOCHS], thresholds=path)
        assert _said(mine) == _said(theirs)


def test_a_sample_that_errored_is_infrastructure_not_a_wrong_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = json.loads(Path(EPOCHS).read_text())
    log["samples"][0]["error"] = {"message": "RateLimitError: \x1b[31mslow down", "traceback": ""}
    log["samples"][0]["scores"] = {}
    path = tmp_path / "errored.json"
    path.write_text(json.dumps(log))
    gate = _thresholds(tmp_path, "min_accuracy: 0.5\n")
    assert main(["gate", gate, "--from", "inspect", str(path)]) == 6
    out = capsys.readouterr().out
    assert "1 model call(s) failed (budget --reasoning-max-errors=0)" in out
    assert "RateLimitError: ␛[31mslow down" in out  # shown, never obeyed by the terminal
    assert main(["gate", gate, "--from", "inspect", str(path), "--reasoning-max-errors=1"]) == 0
    (v,) = gate_logs("inspect", [str(path)], thresholds=gate, max_errors=1).verdicts
    assert isinstance(v.subject, GateResult)
    assert (v.subject.stats.n, v.subject.stats.correct, v.subject.stats.errors) == (17, 11, 1)
