"""Every task's scorer takes hostile answers (code payloads) as text: none ever runs, from an
endpoint or from its cache."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import forkrun
import pytest
from reliability_matrix import record

from pytest_reasoning import registry
from pytest_reasoning.core import Item, Reply, Score
from pytest_reasoning.evaluate import score_reply
from pytest_reasoning.gates.rows import check_row
from pytest_reasoning.registry import get_task, task_ids
from pytest_reasoning.tasks.dyval import ArithmeticTask
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer, hostile_answers


def _pytest(cwd: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    return forkrun.run(cmd, cwd=cwd, **kwargs)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# The built-in tasks, the gym scorers that evaluated answers (eval, sympy's parse_expr) and six
# others run in the inner loop; every other registered task in the full sweep.
_EVALUATING = {"gym.binary_matrix", "gym.spiral_matrix", "gym.string_insertion",
               "gym.number_sorting", "gym.bitwise_arithmetic", "gym.countdown", "gym.puzzle24",
               "gym.simple_integration", "gym.intermediate_integration"}  # fmt: skip


_INNER = [t for t in task_ids() if not t.startswith("gym.") or t in _EVALUATING]


_INNER += ["gym.basic_arithmetic", "gym.codeio", "gym.game_of_life", "gym.knights_knaves",
           "gym.pool_matrix", "gym.tower_of_hanoi"]  # json, numpy, regexes: cheap to make


_EVERY = [t if t in _INNER else pytest.param(t, marks=pytest.mark.e2e) for t in task_ids()]


@pytest.mark.parametrize("tid", _EVERY)
def test_hostile_answers_never_run_in_any_scorer(tid: str, tmp_path: Path) -> None:
    """Before: ``<answer>__import__('pathlib').Path(...).write_text(<the API key>)</answer>``
    ran in binary_matrix's scorer (spiral_matrix, string_insertion: eval too; countdown,
    puzzle24 and the integration tasks: sympy's parse_expr). Every registered task now
    scores code in its answer format (``<answer>``, ``<<<>>>``, ``\\boxed{}`` read leniently)
    as an answer, raising nothing, and no canary file appears."""
    canary = tmp_path / "canary"
    task = get_task(tid)
    item = make_item(task, task.levels[0], 1, 0)
    for answer in hostile_answers(str(canary)):
        for text in (f"<answer>{answer}</answer>", f"<<<{answer}>>>", f"\\boxed{{{answer}}}"):
            reply = Reply(content=text, prompt_tokens=1, completion_tokens=1, latency_s=0.0)
            row = score_reply(item, "openai/hostile", reply, lenient=True)
            assert row.error is None and row.failure_mode != "scorer_error", row
    assert not canary.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.e2e
def test_hostile_answers_from_an_endpoint_and_from_its_cache_never_run(tmp_path: Path) -> None:
    """The attack of issue 44 end to end: five hostile models (each answer a different
    payload) over HTTP, then the same run again from the response cache with no network.
    Nothing runs, every sample is a wrong answer, no traceback."""
    canary = tmp_path / "canary"
    lines = ["seed: 5", "samples: 2", "tasks:"]
    lines += [f"  - {{task: {t}, levels: [L0]}}" for t in sorted(_EVALUATING)]
    lines += ["  - {task: dyval.arithmetic, levels: [D1]}"]
    (tmp_path / "h.yaml").write_text("\n".join(lines) + "\n")
    models = [f"openai/hostile:{k}:{canary}" for k in range(len(hostile_answers("x")))]
    runs, asked = [], []
    with FakeOpenAIServer() as server:
        for results in ("r1.jsonl", "r2.jsonl"):
            argv = [a for m in models for a in ("--llm", m)]
            runs.append(_pytest(tmp_path, "h.yaml", *argv, "--llm-api-base", server.url,
                                "--reasoning-cache", "c", f"--reasoning-results={results}"))  # fmt: skip
            asked.append(server.stats()["total"])
    for run in runs:  # no gate set: wrong answers are counted, not failed
        assert run.returncode == pytest.ExitCode.OK, run.stdout[-3000:]
        assert "Traceback" not in run.stdout + run.stderr
    rows = [_rows(tmp_path / name) for name in ("r1.jsonl", "r2.jsonl")]
    samples = 2 * (len(_EVALUATING) + 1) * len(models)
    assert [len(r) for r in rows] == [samples, samples]
    assert asked[1] == asked[0] == samples  # the rerun asked nothing: all from the cache
    modes = {r["failure_mode"] for r in rows[0] + rows[1]}
    assert not any(r["correct"] for r in rows[0] + rows[1]) and not canary.exists()
    assert modes <= {"wrong_answer", "format", "no_answer", "unsafe_answer"}, modes
    record(
        "answers",
        f"{len(models)} payloads × {len(_EVALUATING)} evaluating gym datasets and "
        f"dyval.arithmetic × 2 samples ({samples} answers), then the rerun from the cache (0 "
        f"requests): every answer wrong ({', '.join(sorted(modes))}), no file "
        "written, no traceback",
    )


@pytest.mark.parametrize(
    ("said", "why"),
    [
        (Score(1, "1"), "Score.correct is 1, not True or False"),  # type: ignore[arg-type]
        (Score(True, "1", value=1.5), "Score.value is 1.5, not a number from 0 to 1"),
        (Score(False, "1", value=float("nan")), "Score.value is nan, not a number from 0 to 1"),
        (Score(True, 1), "Score.extracted is 1, not text or None"),  # type: ignore[arg-type]
    ],
)
def test_a_malformed_score_from_a_scorer_is_its_error_and_the_row_is_kept(
    monkeypatch: pytest.MonkeyPatch, said: Score, why: str
) -> None:
    """A third-party scorer's Score the results row cannot hold (``correct`` 1, a value past
    1) is that scorer's error in a row every reader accepts: before, the controller refused
    the sample's report and its row never reached the results file."""

    class Careless(ArithmeticTask):
        id = "careless.arithmetic"

        def score(self, item: Item, response: str) -> Score:
            return said

    task = Careless()
    monkeypatch.setitem(registry._tasks(), task.id, task)  # as an entry point registers it
    outcome = score_reply(make_item(task, "D1", 1, 0), "m", Reply(content="<<<1>>>"))
    assert outcome.failure_mode == "scorer_error" and outcome.correct is False
    assert outcome.extra["scorer_error"].endswith(why)
    check_row(json.loads(json.dumps(outcome.to_dict())))  # what the sample report checks
