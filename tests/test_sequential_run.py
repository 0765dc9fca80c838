"""Sequential gates in a run and a merge (issue 32.1): a level settles at the same sample
whatever order its answers arrive in, its later samples are "not needed", answers paid for
after it settled are counted and never in a verdict or a figure, and a merge of the results
decides it alike."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from conftest import PLAIN
from pytest_reasoning.core import Outcome
from pytest_reasoning.gates import GateRule, GateSpec, Ledger
from pytest_reasoning.testing.server import FakeOpenAIServer


def _outcomes(model: str, p: float, n: int, seed: int) -> list[Outcome]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        ok = rng.random() < p
        out.append(
            Outcome(
                f"t[D1-s1-{i:03d}]", model, "t", "D1", 1, f"h{i}", "x", "x" if ok else "y", "x",
                ok, None if ok else "wrong", None, 1, 1, 0.1,
            )
        )
    return out


@pytest.mark.parametrize("shuffle", [0, 1, 2, 3])
def test_a_level_settles_at_the_same_sample_whatever_the_arrival_order(shuffle: int) -> None:
    spec = GateSpec("s.yaml", "t", "D1", GateRule(min_accuracy=0.6, sequential=True))
    ledger = Ledger(hint="-")
    ledger.plan("m", spec, "t", 100, gate_id="s.yaml::t[D1-gate]")
    answers = _outcomes("m", 0.95, 100, 7)
    order = list(range(100))
    if shuffle:
        random.Random(shuffle).shuffle(order)
    verdicts = []
    for i in order:
        verdicts += ledger.add(answers[i], spec, i)[0]
    verdicts += ledger.finish()
    assert [v.outcome for v in verdicts] == ["passed"]
    assert "passed early at 9 of 100 samples" in verdicts[0].message
    ((_key, (needed, size, late)),) = ledger.sequential_counts().items()
    assert (needed, size) == (9, 100) and late == 91  # every later answer arrived anyway
    (stats,) = ledger.levels.values()
    assert (stats.n, stats.correct) == (9, 9)  # only what the verdict counted


def test_a_comparison_settles_both_models_at_one_item() -> None:
    spec = GateSpec("s.yaml", "t", "D1", GateRule(sequential=True))
    results = []
    for seed in (5, 6):
        ledger = Ledger(hint="-", baseline="base")
        ledger.plan("cand", spec, "t", 200, comparison_id="s.yaml::t[D1-vs-baseline]")
        ledger.plan("base", spec, "t", 200)
        events = [(o, i) for i, o in enumerate(_outcomes("cand", 0.4, 200, 1))]
        events += [(o, i) for i, o in enumerate(_outcomes("base", 0.9, 200, 2))]
        random.Random(seed).shuffle(events)
        for outcome, i in events:
            ledger.add(outcome, spec, i)
        (verdict,) = ledger.finish()
        counts = ledger.sequential_counts()
        results.append((verdict.message, {k[0]: v[:2] for k, v in counts.items()}))
    assert results[0] == results[1]
    message, counts = results[0]
    assert "regression settled early at 39 of 200 paired items" in message
    assert counts == {"cand": (39, 200), "base": (39, 200)}


SUITE = """\
seed: 2
samples: 40
sequential: true
tasks:
  - task: dyval.boolean_logic
    levels:
      D3: {min_accuracy: 0.5}  # D1: five test problems, too few to settle on
"""


def test_later_samples_are_not_needed(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", seq=SUITE)
    result = pytester.runpytest("--llm", "reference", "-p", "no:cacheprovider", "-rs", PLAIN)
    out = result.stdout.str()  # 6 samples and the gate passed; the other samples not asked
    assert "1 sequential level(s) settled early: 6 of 40 samples needed, 34 not needed" in out
    assert re.search(r"= 7 passed, .*34 not needed in ", out)
    assert "seq.yaml ......." + "n" * 34 in out


@pytest.mark.e2e
def test_sequential_shards_under_xdist_merge_to_the_run_s_verdicts(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    """Over HTTP, with -n 2 and a results file: the level settles where one process would,
    and pytest-reasoning gate --reasoning-sequential decides the same from the rows."""
    pytester.makefile(".yaml", seq=SUITE.replace("samples: 40", "samples: 60"))
    common = ["--llm", "openai/oracle", "--llm-api-base", fake_server.url, "-p",
              "no:cacheprovider", "--reasoning-cache", "off", "--reasoning-sequential"]  # fmt: skip
    one = pytester.runpytest_subprocess(*common, "--reasoning-results", "one.jsonl")
    two = pytester.runpytest_subprocess(*common, "-n", "2", "--reasoning-results", "two.jsonl")
    needed = []
    for result in (one, two):
        line = next(t for t in result.outlines if "sequential level(s) settled early" in t)
        needed.append(line.split("settled early: ")[1].split(" of ")[0])
        assert result.ret == 0
    assert needed[0] == needed[1] == "6"  # the same stopping point with and without -n
    rows = [json.loads(line) for line in Path(pytester.path, "two.jsonl").read_text().splitlines()]
    assert 6 <= len(rows) < 60  # answers that arrived after the level settled are counted
    gate = pytester.run(
        "pytest-reasoning", "gate", "seq.yaml", "--results", "two.jsonl", "--reasoning-sequential"
    )
    gate.stdout.fnmatch_lines(["*seq.yaml::dyval.boolean_logic[[]D3-gate[]] PASSED*"])
    assert gate.ret == 0


# The simulated sequential runs cost in proportion to the plan's n: a drop of 0.2 (59 samples)
# in the inner loop, 0.1 (199 samples, ~0.9 s of CPU) in the sweep, which CI runs as well.
@pytest.mark.parametrize(
    ("drop", "n", "to"),
    [("0.2", 59, "0.65"), pytest.param("0.1", 199, "0.75", marks=pytest.mark.e2e)],
)
def test_plan_reports_the_calls_of_both_modes(
    capsys: pytest.CaptureFixture[str], drop: str, n: int, to: str
) -> None:
    from pytest_reasoning.cli import main

    assert main(["plan", "--accuracy", "0.95", "--min-accuracy", "0.6", "--samples", "100"]) == 0
    out = capsys.readouterr().out
    assert "fixed-n asks 100; sequential asks 11.7 on average (12%)" in out
    assert main(["plan", "--drop", drop, "--baseline-accuracy", "0.85"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{n} samples per level detect a drop from 0.85 to {to}")
    assert "sequential, with that drop:" in out and f"fixed-n: {n}" in out
    assert main(["plan", "--accuracy", "0.9"]) == 2  # a gate needs its threshold and n


def test_an_item_of_a_problem_already_fed_is_counted_but_not_fed() -> None:
    """Issue 41: 40 items of 4 problems (up to renaming), all right. Only each problem's first
    item is fed to the test (the others are not independent evidence) and curtailment is off
    from the first repeat on: four answers settle nothing, so the level runs to its end and
    the fixed-n rule decides; 40 items of 40 problems pass early at the 8th."""
    spec = GateSpec("s.yaml", "t", "D1", GateRule(min_accuracy=0.6, sequential=True))
    messages = []
    for problems in (4, 40):
        ledger = Ledger(hint="-")
        ledger.plan("m", spec, "t", 40, gate_id="s.yaml::t[D1-gate]")
        verdicts = []
        for i, o in enumerate(_outcomes("m", 1.0, 40, 3)):
            o = Outcome.from_dict({**o.to_dict(), "problem": f"p{i % problems}"})
            verdicts += ledger.add(o, spec, i)[0]
        verdicts += ledger.finish()
        assert [v.outcome for v in verdicts] == ["passed"]
        messages.append(verdicts[0].message)
        (stats,) = ledger.levels.values()
        if problems == 4:
            assert (stats.n, stats.distinct) == (40, 4)
    assert messages[0].endswith("accuracy 1.000 (40/40) >= min_accuracy 0.6")
    assert "passed early at 8 of 40 samples" in messages[1]
