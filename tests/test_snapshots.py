"""Failure-mode snapshots with syrupy: create, verify, diff when the model changes, under xdist."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_reasoning.core import Outcome
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
    assert "model: openai/always-true" in stored
    assert "dyval.arithmetic D1 (20 answered, 0 errors)\n  accuracy: ~0%" in stored
    assert "  wrong_label: ~50%" in stored  # boolean, balanced: "True" is right half the time
    assert "  e.g. dyval.boolean_logic[D2-s1-001]: answered 'True' (wrong_label)" in stored

    # Same model again (cached answers, under xdist): the snapshot holds.
    calls = fake_server.stats()["total"]
    again = run(pytester, fake_server, "always-true", "-n", "2")
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()
    assert fake_server.stats()["total"] == calls  # every answer came from the cache

    # Another model: the snapshot fails and the diff names what changed.
    other = run(pytester, fake_server, "oracle", "-vv")  # -vv: pytest shows the whole diff
    assert other.ret == pytest.ExitCode.TESTS_FAILED
    out = other.stdout.str()
    assert "- model: openai/always-true" in out and "+ model: openai/oracle" in out
    assert "-   wrong_label: ~50%" in out
    assert "-   accuracy: ~0%" in out and "+   accuracy: ~100%" in out
    assert "-   format: ~100%" in out  # always-true answered True to arithmetic


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


def test_example_snapshot_is_the_reference_models() -> None:
    stored = Path(__file__).resolve().parent.parent / "example_suites" / "__snapshots__"
    text = next(stored.rglob("*.txt")).read_text()
    assert text.startswith("model: reference\n") and "~100%" in text
