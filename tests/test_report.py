"""The HTML report: self-contained, with plots, tables and rebuilt prompts for failing samples,
from a run (``--reasoning-report``) and from results files (``pytest-reasoning report``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
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
    # Failing samples: the prompt rebuilt from the row's address, the zebra clue named.
    assert "description of an arithmetic problem" in page
    assert "breaks clue" in page or "partial_grid" in page
    summary = json.loads((out / "summary.json").read_text())
    d3 = next(c for c in summary["levels"] if c["task"] == "dyval.arithmetic" and c["level"] == "D3"
              and c["model"] == "openai/shallow:2")  # fmt: skip
    assert d3["accuracy"] == 0.0 and d3["failure_modes"] == {"wrong_value": 6}
    assert any(g["passed"] is False for g in summary["gates"])


def test_report_command(pytester: pytest.Pytester, fake_server: Any, tmp_path: Path) -> None:
    files = []
    for model in ("reference", "openai/shallow:2"):
        res = tmp_path / f"{model.replace('/', '_')}.jsonl"
        _run(pytester, fake_server, "--llm", model, f"--reasoning-results={res}")
        files.append(str(res))
    cmd = [sys.executable, "-m", "pytest_reasoning.cli", "report", *files]
    out = tmp_path / "rep"
    done = subprocess.run([*cmd, "--out", str(out), "--baseline", "reference"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert f"wrote {out}/index.html" in done.stdout
    page = _self_contained(out / "index.html")
    assert (
        "Candidate against baseline (reference)" in page and "description of an arithmetic" in page
    )
    bad = subprocess.run(
        [*cmd, "--out", str(out), "--baseline", "gpt-9"], capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        "pytest-reasoning: error: --baseline: 'gpt-9' is not in the files; they hold "
        "openai/shallow:2, reference"
    )


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_the_page_renders_in_a_browser(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "report_browser.py"), "--screenshot", str(shot)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "broken: 0, console errors: 0" in done.stdout
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
