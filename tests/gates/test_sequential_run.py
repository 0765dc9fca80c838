"""Sequential gates in a run and a merge (issue 32.1): a level settles at the same sample
whatever order its answers arrive in, its later samples are "not needed", answers paid for
after it settled are counted and never in a verdict or a figure, and a merge of the results
decides it alike. A level asks ahead no further than the fewest answers that could settle it
(issue 39): FLenQA's example suite decides as fixed-n with at most 45% of its requests."""

from __future__ import annotations

import json
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from results_rows import random_outcomes

from conftest import PLAIN
from pytest_reasoning.core import Outcome
from pytest_reasoning.gates import GateRule, GateSpec, Ledger, load_results
from pytest_reasoning.gates.inorder import opening
from pytest_reasoning.gates.sequential import PairedSequence, ThresholdSequence
from pytest_reasoning.testing.server import FakeOpenAIServer


@pytest.mark.parametrize("shuffle", [0, 1, 2, 3])
def test_a_level_settles_at_the_same_sample_whatever_the_arrival_order(shuffle: int) -> None:
    spec = GateSpec("s.yaml", "t", "D1", GateRule(min_accuracy=0.6, sequential=True))
    ledger = Ledger(hint="-")
    ledger.plan("m", spec, "t", 100, gate_id="s.yaml::t[D1-gate]")
    answers = random_outcomes("m", 0.95, 100, 7)
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
        events = [(o, i) for i, o in enumerate(random_outcomes("cand", 0.4, 200, 1))]
        events += [(o, i) for i, o in enumerate(random_outcomes("base", 0.9, 200, 2))]
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


def test_a_level_asks_ahead_no_further_than_the_fewest_answers_that_could_settle_it() -> None:
    """The frontier the ledger tells the run: items counted plus the fewest more that could
    settle the level; every answer moves it by at most one back, never behind what was
    told, so no answer asked within it is one the verdict could do without."""
    rule = GateRule(min_accuracy=0.1, sequential=True)
    assert opening(rule, 20) == 2  # two right answers pass it (2/20 >= 0.1)
    assert opening(GateRule(min_accuracy=0.9, sequential=True), 20) == 2  # two wrong fail it
    assert opening(rule, 21, repeats=3) == 6  # two items, three samples each
    assert opening(GateRule(sequential=True), 20, gate=False, compared=True) == 6  # 6 pairs
    spec = GateSpec("s.yaml", "t", "D1", GateRule(min_accuracy=0.6, sequential=True))
    ledger = Ledger(hint="-", lookahead=16)
    ledger.plan("m", spec, "t", 100, gate_id="s.yaml::t[D1-gate]")
    told = []
    for i, outcome in enumerate(random_outcomes("m", 0.7, 100, 3)):
        ledger.add(outcome, spec, i)
        told += [frontier for _, frontier in ledger.moved()]
        if ledger.settled():
            stop = i + 1
            break
    assert told == sorted(told) and told[-1] >= stop  # never behind; the stop within it
    for seq in (ThresholdSequence(0.6, 100), PairedSequence(100)):
        assert 0 < seq.fewest(16) <= 16


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
    assert main(["plan", "--accuracy", "0.9"]) == 4  # a gate needs its threshold and n


FLENQA = """\
seed: 3
samples: 40
sequential: true
tasks:
  - task: flenqa.monorel
    params: {padding: duplicate, position: first}
    levels:
      250: {min_accuracy: 0.5}
"""


def test_the_flenqa_length_table_counts_what_its_sequential_gate_counted(
    tmp_path: Path,
) -> None:
    """Answers that arrive after a level settled are paid for, never counted: the length
    table's n is the gate's n (before: 40 where the gate used the first 6)."""
    from pytest_reasoning.config import addresses, load_suite
    from pytest_reasoning.core import Reply
    from pytest_reasoning.evaluate import score_reply
    from pytest_reasoning.report import RunSummary, markdown_summary, summary_lines

    (tmp_path / "f.yaml").write_text(FLENQA)
    ledger = Ledger(hint="-")
    rows = []
    for i, a in enumerate(addresses(load_suite(tmp_path / "f.yaml", display="f.yaml"))):
        if i == 0:
            ledger.plan("m", a.gate, a.entry.task, 40, gate_id="f.yaml::g")
        item = a.make_item()
        o = score_reply(item, "m", Reply(f"<<<{item.answer}>>>", latency_s=0.1))
        o = Outcome.from_dict({**o.to_dict(), "suite": a.suite, "entry": a.entry.id})
        ledger.add(o, a.gate, i)  # every answer arrives: the last 31 after it settled
        rows.append(o.to_dict())
    (gate,) = ledger.gates
    n = gate.stats.n  # 6 samples settle it
    assert n < 40 and len(ledger.uncounted) == 40 - n
    run = RunSummary(levels=list(ledger.levels.values()), gates=ledger.gates, rows=rows,
                     uncounted=ledger.uncounted)  # fmt: skip
    line = [t.text for t in summary_lines(run) if t.text.startswith("m ")][-1]
    assert f"1.00 ({n})" in line and "(40)" not in line
    assert f"1.00 ({n})" in markdown_summary(run) and "(40)" not in markdown_summary(run)


def test_sequential_rows_merged_without_the_flag_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sequential run's rows stop where its level settled. Merged without
    --reasoning-sequential, gate blamed "a shard that did not run"; it names the flag now,
    and with the flag it decides."""
    from pytest_reasoning.cli import main
    from pytest_reasoning.config import addresses, load_suite
    from pytest_reasoning.core import Reply
    from pytest_reasoning.evaluate import score_reply

    monkeypatch.chdir(tmp_path)
    (tmp_path / "seq.yaml").write_text(SUITE.replace("sequential: true\n", ""))  # the shards'
    rows = []  # --reasoning-sequential made it sequential
    for a in list(addresses(load_suite(tmp_path / "seq.yaml", display="seq.yaml")))[:6]:
        item = a.make_item()  # the 6 samples that settle it (test_later_samples_are_not_needed)
        o = score_reply(item, "m", Reply(f"<<<{item.answer}>>>", latency_s=0.1))
        rows.append({**o.to_dict(), "suite": "seq.yaml", "entry": a.entry.id})
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["gate", "seq.yaml", "--results", "r.jsonl"]) == 6
    out = capsys.readouterr().out
    assert "shard that did not run" not in out and "a shard did not run" not in out, out
    assert (
        "not decided (6 of 40 samples): a gate is decided only on its whole level (no row after "
        "sample 6 of 40: a sequential level that settled early (merge it with "
        "--reasoning-sequential, or the suite's `sequential: true`)"
    ) in out
    assert main(["gate", "seq.yaml", "--results", "r.jsonl", "--reasoning-sequential"]) == 0
    out = capsys.readouterr().out
    assert "seq.yaml::dyval.boolean_logic[D3-gate] PASSED" in out, out


FLENQA_SUITE = Path(__file__).parents[2] / "example_suites" / "flenqa.yaml"


def _gates(path: Path, suite: str) -> dict[str, str]:
    """Each gate of ``suite`` in a JUnit file: passed, failure or skipped."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.get("name", "").endswith("-gate]") and suite in case.get("classname", ""):
            kind = next((c.tag for c in case if c.tag in ("failure", "skipped")), "passed")
            out[case.get("name", "")] = kind
    return out


@pytest.mark.e2e
def test_flenqa_decides_as_fixed_n_with_at_most_45_percent_of_its_requests(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    """The example suite (30 of its 90 levels of 20) with every threshold at 0.1, then at
    0.9, answered by a model right on half of them (always True, on balanced labels), at the
    default concurrency (8): the same verdicts as fixed-n (all passed, then all failed), with at
    most 45% of the samples fixed-n asks, and no more requests than those (counted by the
    server) where a level's problems are distinct.

    Issue 41 made items equal up to renaming one problem: monorel's levels hold 6 problems in
    20 items, people_in_rooms' 10, ruletaker's 20. Only a problem's first item feeds the
    sequential test and curtailment is off once one repeats (the suite's confidence 0.9 makes
    the fixed-n rule the clustered Wilson bound, which no running count decides), so at 0.1
    the levels that repeat problems cannot settle early: they ask every sample, as fixed-n
    does. Monorel's entries gate on plain accuracy (``confidence: null`` in the example suite:
    6 problems cannot clear its floors at 90%), which a running count does decide, so its
    levels settle early though their problems repeat. The suite is therefore run in three
    parts, each counted by the server on its own."""
    text = FLENQA_SUITE.read_text()
    head, *entries = re.split(r"(?m)^(?=  - task: )", text)
    # Two entries of each task's six (two paddings, ten levels): the other four differ only in
    # padding and position, which neither the sequential test nor its stopping sees; nine
    # pytest runs over all 90 levels took 103 s of CI's time.
    parts = {
        "distinct": [e for e in entries if "flenqa.ruletaker" in e][:2],
        "plain": [e for e in entries if "flenqa.monorel" in e][:2],
        "repeated": [e for e in entries if "flenqa.people_in_rooms" in e][:2],
    }
    assert all("confidence: null" in e for e in parts["plain"])
    common = ["-p", "no:randomly", "-p", "no:cacheprovider", "--llm", "openai/always-true",
              "--llm-api-base", fake_server.url]  # fmt: skip
    for part, chosen in parts.items():
        for name, value in (("low", "0.1"), ("high", "0.9")):
            body = re.sub(r"min_accuracy: [0-9.]+", f"min_accuracy: {value}", "".join(chosen))
            pytester.makefile(".yaml", **{f"{part}-{name}": head + body})
        levels, samples = 5 * len(chosen), 100 * len(chosen)
        before = fake_server.stats()["total"]
        fixed = pytester.runpytest_subprocess(
            *common, f"{part}-low.yaml", f"{part}-high.yaml", f"--junitxml={part}.xml",
            "--reasoning-cache", f"{part}-fixed",
        )  # fmt: skip
        assert fixed.ret == pytest.ExitCode.TESTS_FAILED
        # the second file's answers: the cache's (its prompts are the first file's)
        fixed_requests = fake_server.stats()["total"] - before
        repeats = fixed.stdout.str().count("items repeat an earlier problem")
        assert repeats == (0 if part == "distinct" else 2 * levels)  # the premise, per level
        for name in ("low", "high"):
            before = fake_server.stats()["total"]
            # a fresh cache: identical prompts are asked once, as in the fixed-n run
            run = pytester.runpytest_subprocess(
                *common, f"{part}-{name}.yaml", "--reasoning-sequential",
                "--reasoning-cache", f"{part}-{name}", f"--junitxml={part}-{name}.xml",
            )  # fmt: skip
            out = run.stdout.str()
            requests = fake_server.stats()["total"] - before
            sequential = _gates(pytester.path / f"{part}-{name}.xml", f"{part}-{name}")
            assert len(sequential) == levels
            assert sequential == _gates(pytester.path / f"{part}.xml", f"{part}-{name}")
            assert set(sequential.values()) == {"passed" if name == "low" else "failure"}
            calls = re.search(r"reasoning: spent [\d,]+ tokens on (\d+) call", out)
            assert calls is not None and int(calls.group(1)) == requests
            settled = re.search(r"(\d+) sequential level\(s\) settled early: (\d+) of", out)
            # Nothing settles early where problems repeat before a running count can decide:
            # at 0.1 under the clustered bound (people in rooms), and at 0.9 on monorel's plain
            # accuracy, whose third wrong answer (what decides 18 of 20) comes after its 6
            # problems have begun to repeat. Every sample is asked, and no request more.
            if (part, name) in (("repeated", "low"), ("plain", "high")):
                assert settled is None, out
                assert requests == fixed_requests
                continue
            # At 0.1 a level needs 5 right answers (confidence 0.9), 9 of 20 samples of this
            # model: 45% of the samples is the floor, and the run asks nothing past it.
            assert settled is not None and int(settled.group(1)) == levels, out
            needed = int(settled.group(2))
            assert needed <= 0.45 * samples, out
            assert "asked ahead were not needed" not in out
            assert requests <= needed, (part, name, requests, needed)
            if name == "high":  # the gates are decided before their answers: little is asked
                assert requests <= 0.45 * fixed_requests, (part, name, requests, fixed_requests)


@pytest.mark.e2e
def test_answers_a_settled_comparison_did_not_need_are_marked_and_paid(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    """In one process a candidate's samples run before the baseline's, so its comparison
    settles after they were paid for: their rows are marked not needed (the spend counts
    them, no verdict or figure does), and pytest-reasoning gate on the file decides what
    the run decided."""
    # SUITE gates boolean D3 since issue 41 (D1 and D2 hold too few problems up to renaming
    # to settle on): the level asked here, and the one gate decides below.
    pytester.makefile(".yaml", seq=SUITE)
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "-p", "no:cacheprovider", "--llm", "openai/oracle",
        "--llm-baseline", "openai/always-true", "--llm-api-base", fake_server.url,
        "--reasoning-results", "r.jsonl",
    )  # fmt: skip
    out = result.stdout.str()
    assert result.ret == 0, out
    received = fake_server.stats()["total"]
    found = load_results(pytester.path / "r.jsonl")
    assert found.not_needed and {r["model"] for r in found.not_needed} == {"openai/oracle"}
    paid = [r for r in found.rows + found.not_needed if not r["cached"]]
    assert len(paid) == received  # every request, one row
    assert f"on {received} call(s)" in out
    assert f"{len(found.not_needed)} answer(s) asked ahead were not needed" in out
    needed = re.search(r"settled early: (\d+) of 80 samples needed", out)
    assert needed is not None and int(needed.group(1)) == len(found.rows)
    gate = pytester.run(
        "pytest-reasoning", "gate", "seq.yaml", "--results", "r.jsonl",
        "--llm-baseline", "openai/always-true", "--reasoning-sequential",
    )  # fmt: skip
    gate.stdout.fnmatch_lines(["*D3-gate-openai/oracle] PASSED*", "*D3-vs-baseline] PASSED*"])
    assert gate.ret == 0
