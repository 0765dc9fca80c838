"""Failure-mode snapshots with syrupy: create, verify, diff when the model changes, under xdist."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_reasoning.core import Outcome
from pytest_reasoning.errors import InvalidArgument
from pytest_reasoning.profile import FailureProfile
from pytest_reasoning.testing.server import FakeOpenAIServer

SUITE = """\
seed: 1
samples: 20
tasks:
  - task: dyval.boolean_logic
    levels: [D2, D3]
  - task: dyval.arithmetic
    levels: [D1]
"""

TEST = """
from pathlib import Path
from pytest_reasoning.snapshots import FailureProfileExtension

def test_failure_modes(reasoning_results, snapshot):
    profile = reasoning_results.profile(Path(__file__).with_name("up.yaml"))
    assert profile == snapshot(extension_class=FailureProfileExtension)
"""


def run(
    pytester: pytest.Pytester, server: FakeOpenAIServer, model: str, *args: str
) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--llm", f"openai/{model}", "--llm-api-base", server.url,
        "test_profile.py", *args,
    )  # fmt: skip


@pytest.mark.e2e
def test_create_verify_and_diff(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under our own -n, the child would inherit xdist's worker variables and syrupy would
    # leave its report to a controller that does not exist.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    pytester.makefile(".yaml", up=SUITE)
    pytester.makepyfile(test_profile=TEST)
    created = run(pytester, fake_server, "always-true", "--snapshot-update")
    assert created.ret == pytest.ExitCode.OK, created.stdout.str()
    created.stdout.fnmatch_lines(["*1 snapshot generated*"])
    stored = next((pytester.path / "__snapshots__").rglob("*.txt")).read_text()
    # Keyed by task and level: no model's name, no model's answers to example items.
    assert "always-true" not in stored and "e.g." not in stored and "answered 'True'" not in stored
    assert stored.startswith("dyval.arithmetic D1 (20 answered, 0 errors)\n  accuracy: ~0%\n")
    assert "  wrong_label: ~50%" in stored  # boolean, balanced: "True" is right half the time

    # Same model again (cached answers, under xdist): the snapshot holds.
    calls = fake_server.stats()["total"]
    again = run(pytester, fake_server, "always-true", "-n", "2")
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()
    assert fake_server.stats()["total"] == calls  # every answer came from the cache

    # Another model's answers: the snapshot fails, and its diff is the modes and accuracies
    # that moved, under their task and level, and nothing about the model.
    other = run(pytester, fake_server, "oracle", "-vv")  # -vv: pytest shows the whole diff
    assert other.ret == pytest.ExitCode.TESTS_FAILED
    out = other.stdout.str()
    diff = [line.strip() for line in out.splitlines() if line.lstrip().startswith(("- ", "+ "))]
    assert diff, out
    assert "-   format: ~100%" in out  # always-true answered True to arithmetic
    assert "-   wrong_label: ~50%" in out
    assert "-   accuracy: ~0%" in out and "+   accuracy: ~100%" in out
    assert "model" not in "\n".join(diff) and "oracle" not in "\n".join(diff)
    assert all(("accuracy:" in line or ": ~" in line) for line in diff), diff


def _outcome(item: str, correct: bool, mode: str | None) -> Outcome:
    return Outcome(
        item_id=item, model="m", task="t", level="L", seed=1, prompt_sha256="h", response="",
        extracted="x", gold="y", correct=correct, failure_mode=mode, error=None,
        prompt_tokens=None, completion_tokens=None, latency_s=0.0,
    )  # fmt: skip


def test_buckets_absorb_sampling_noise() -> None:
    # 9/40 and 10/40 partial calculations (22.5%, 25%) both read "~25%"; 14/40 reads "~35%".
    def profile(partials: int) -> str:
        rows = [_outcome(f"i{k:02d}", False, "partial_calculation") for k in range(partials)]
        rows += [_outcome(f"j{k:02d}", True, None) for k in range(40 - partials)]
        return FailureProfile.from_outcomes(rows, examples=0).text

    assert "partial_calculation: ~25%" in profile(9)
    assert "partial_calculation: ~25%" in profile(10)
    assert "partial_calculation: ~35%" in profile(14)


def test_a_profile_is_one_models() -> None:
    rows = [_outcome("i", False, "format"), dataclasses.replace(_outcome("j", True, None), model="n")]
    with pytest.raises(InvalidArgument, match=r"one model's; these outcomes are 2 models' \(m, n\)"):
        FailureProfile.from_outcomes(rows)
    text = FailureProfile.from_outcomes(rows[:1], examples=1).text
    assert text.endswith("  e.g. i: answered 'x' (format), gold 'y'\n")  # asked for: kept


def test_example_snapshot_is_the_reference_models() -> None:
    stored = Path(__file__).resolve().parents[2] / "example_suites" / "__snapshots__"
    text = next(stored.rglob("*.txt")).read_text()
    assert "model" not in text and "e.g." not in text
    assert text.count("accuracy: ~100%") == text.count(" answered, ") > 0  # no failure
