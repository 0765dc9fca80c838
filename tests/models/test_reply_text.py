"""Reply text no file could hold (lone surrogates, huge replies) is stored, scored and
reported as valid Unicode, bounded."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import forkrun
import pytest
from reliability_matrix import record

from pytest_reasoning.core import Reply
from pytest_reasoning.evaluate import EvalConfig, Evaluator
from pytest_reasoning.models.cache import ResponseCache
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer


def _pytest(cwd: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    return forkrun.run(cmd, cwd=cwd, **kwargs)


SMALL = "seed: 3\nsamples: 2\ntasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n"


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
