"""Model and provider text shown as symbols, never obeyed: escape sequences and bidi
controls in replies, batch ids and errors, and results rows."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import forkrun
import pytest

from pytest_reasoning.cli import main
from pytest_reasoning.config import load_suite
from pytest_reasoning.core import Reply
from pytest_reasoning.evaluate import score_reply
from pytest_reasoning.testing.server import FakeOpenAIServer


def _pytest(cwd: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    return forkrun.run(cmd, cwd=cwd, **kwargs)


SMALL = "seed: 3\nsamples: 2\ntasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n"


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
