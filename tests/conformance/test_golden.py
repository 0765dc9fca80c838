"""Golden captures (issue 30): what users read from a fixed run — export bytes, results rows,
the terminal summary and JUnit — compared with the files under ``tests/golden/``, so a
refactor that changes any of it fails here. Only what varies between runs of the same code is
masked (latencies, durations, the test server's port, JUnit's timestamp and host).

After an intended change: ``GOLDEN_UPDATE=1 pytest tests/conformance/test_golden.py``, then read the diff
of ``tests/golden/`` before committing it."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import forkrun
import pytest

from pytest_reasoning.cli import main
from pytest_reasoning.testing.server import FakeOpenAIServer

GOLDEN = Path(__file__).parents[1] / "golden"
# pytest prints whole short-summary lines when CI or BUILD_NUMBER is set and cuts them to the
# terminal's width otherwise; the child is told it is not on CI so the captures hold on both.
NOT_CI = {"CI": "", "BUILD_NUMBER": ""}

SUITE = """\
name: golden
seed: 5
samples: 4
tasks:
  - {task: dyval.arithmetic, levels: {D1: {min_accuracy: 0.5}}}
  - {task: zebra.grid, metric: cell, levels: {2x3: {min_accuracy: 0.6}}}  # PASS*: 4 of 4
  - {task: flenqa.monorel, levels: {"250": {min_accuracy: 0.5}}}
  - {task: musr.murder_mystery, levels: {L1: {min_accuracy: 0.3}}}
"""

EXPORTS = {  # file name: export arguments
    "export-dyval.jsonl": ["dyval.arithmetic", "--level", "D2", "--count", "3", "--with-steps"],
    "export-zebra.jsonl": ["zebra.grid", "--level", "3x3", "--count", "2", "--style", "oneshot"],
    "export-flenqa.jsonl": ["flenqa.monorel", "--level", "500", "--count", "2"],
    "export-musr.jsonl": ["musr.object_placement", "--level", "L1", "--count", "1"],
}


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("GOLDEN_UPDATE"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no {path}: GOLDEN_UPDATE=1 pytest tests/conformance/test_golden.py writes it"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from tests/golden/"


@pytest.mark.parametrize("name", EXPORTS)
def test_export_bytes(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    assert main(["export", *EXPORTS[name], "--seed", "3", "-q", "-o", str(out)]) == 0
    _check(name, out.read_text(encoding="utf-8"))


def _rows(path: Path) -> str:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row.pop("latency_s")
        row["model_id"] = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", row["model_id"])
        rows.append(json.dumps(row, sort_keys=True, ensure_ascii=False))
    return "\n".join(rows) + "\n"


def _summary(stdout: str) -> str:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "reasoning summary" in line)
    text = "\n".join(lines[start:]) + "\n"
    text = re.sub(r"\b\d+(\.\d+)?s( \(\d+:\d\d:\d\d\))?", "Ts", text)  # latencies, duration
    # pytest centres a title between runs of = or - whose length follows the duration's digits
    text = re.sub(r"^([=-])\1* ([^\s=-].*?) \1+$", r"\1\1 \2 \1\1", text, flags=re.MULTILINE)
    return re.sub(r" {2,}", "  ", text)  # column widths follow the latencies' digits


def _junit(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r' (time|timestamp|hostname)="[^"]*"', r' \1=""', text)
    text = re.sub(r"(&quot;latency_s&quot;: )[\d.e-]+", r"\g<1>0", text)
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)
    return text.replace("><", ">\n<") + "\n"


@pytest.mark.e2e  # a pytest run in another process (tests/forkrun.py)
def test_a_fixed_run(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", golden=SUITE)
    with FakeOpenAIServer() as server:
        done = forkrun.run(
            [sys.executable, "-m", "pytest", "golden.yaml", "-p", "no:randomly", "-p",
             "no:cacheprovider", "--llm", "openai/oracle", "--llm", "openai/shallow:2",
             "--llm-api-base", server.url, "--reasoning-cache", "off",
             "--reasoning-results", "r.jsonl", "--junitxml", "j.xml"],
            cwd=pytester.path, env={**os.environ, "COLUMNS": "200", **NOT_CI},
        )  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]  # MuSR's gates fail: the oracle cannot
    _check("run-rows.jsonl", _rows(pytester.path / "r.jsonl"))
    _check("run-summary.txt", _summary(done.stdout))
    _check("run-junit.xml", _junit(pytester.path / "j.xml"))
