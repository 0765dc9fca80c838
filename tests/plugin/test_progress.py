"""The live count: on a terminal but not under -q or a pipe, fitted to the width, smoothed,
under xdist."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from terminal import ESCAPES, on_a_terminal, screen

from pytest_reasoning.plugin.progress import Pace, fitted
from pytest_reasoning.testing.server import FakeOpenAIServer


def test_the_count_drops_whole_parts_to_fit_and_its_estimate_is_smoothed() -> None:
    parts = [("12s for local", 2), ("3/31 answered", 5), ("8 pending", 0), ("6.1 s/answer", 1),
             ("ETA 2m48s", 4)]  # fmt: skip
    full = " [12s for local: 3/31 answered, 8 pending, 6.1 s/answer, ETA 2m48s]"
    assert fitted(parts, 80, "12s for local") == full
    shown = [fitted(parts, room, "12s for local") for room in range(len(full), -1, -1)]
    assert sorted(set(shown), key=len, reverse=True) == [
        full,
        " [12s for local: 3/31 answered, 6.1 s/answer, ETA 2m48s]",
        " [12s for local: 3/31 answered, ETA 2m48s]",
        " [3/31 answered, ETA 2m48s]",
        " [3/31 answered]",
        "",
    ]
    assert all(len(text) <= room for room, text in zip(range(len(full), -1, -1), shown, strict=True))

    pace = Pace(started=0.0)
    pace.answered(30.0)  # the first answer waited for the start too: no estimate from it
    assert (pace.rate(), pace.eta(29, 30.0)) == ("", "")
    for at in (36.0, 42.0, 48.0):
        pace.answered(at)
    assert (pace.rate(), pace.eta(27, 48.0)) == ("6.0 s/answer", "ETA 2m42s")
    assert pace.eta(27, 51.0) == "ETA 2m39s"  # counts down while the next one is asked
    assert pace.eta(27, 60.0) == "ETA 2m36s"  # and holds at the answers after the next
    pace.answered(78.0)  # one slow answer (30 s) moves the pace, it does not swing it
    assert pace.rate() == "10.8 s/answer"
    fast = Pace(started=0.0)
    for at in (1.0, 1.25, 1.5):
        fast.answered(at)
    assert fast.rate() == "4.0 answers/s"


@pytest.mark.e2e
def test_live_count_on_a_terminal_but_not_under_q_or_a_pipe(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", s="samples: 1\ntasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n")
    # The count shows after 1 s of waiting: 4 s leaves the progress thread 3 s to draw it, which
    # a loaded machine also gives (the count in the quiet and piped runs must stay away, however long).
    with FakeOpenAIServer(latency_s=4.0) as slow:
        base = [sys.executable, "-m", "pytest", "s.yaml", "-p", "no:randomly", "-p",
                "no:cacheprovider", "--llm", "openai/oracle", "--llm-api-base", slow.url,
                "--reasoning-cache", "off"]  # fmt: skip
        shown = on_a_terminal(base, pytester.path)
        quiet = on_a_terminal([*base, "-q"], pytester.path)
        piped = subprocess.run(base, cwd=pytester.path, capture_output=True, text=True)
    count = re.compile(r"\[\d+s for openai/oracle: 0/1 answered")
    assert count.search(shown), shown
    assert not count.search(quiet), quiet
    assert not count.search(piped.stdout + piped.stderr)
    assert "1 passed" in shown and "1 passed" in quiet and piped.returncode == 0


# A count as it may be shown: whole parts only, the least useful dropped first on a narrow line.
_PART = r"(\d+/3 answered|\d+ pending|\d+\.\d s/answer|\d+\.\d answers/s|ETA \d+(m\d\d)?s)"


_COUNT = re.compile(rf"\[(\d+s for slow(: {_PART}(, {_PART})*)?|{_PART}(, {_PART})*)\]")


@pytest.mark.e2e
def test_a_slow_model_on_an_80_column_terminal(pytester: pytest.Pytester) -> None:
    """What a first run shows at 80 columns: the concurrency the model really gets, a count
    that fits the line (parts dropped whole, never cut), wrong answers in yellow, and a
    failed gate that says why the answers were cut off. Which parts fit depends only on the
    room the line leaves, so nothing here depends on timing but that each answer waits past
    the count's first second (4 s: 3 s to spare on a loaded machine)."""
    name = "a_suite_named_to_leave_the_count_room.yaml"
    assert len(name) == 42  # the line leaves the count 80 - 43 - 1 = 36 columns, then 35, 34
    (pytester.path / name).write_text(
        "samples: 3\ntasks:\n  - task: dyval.arithmetic\n    levels:\n      D1: {min_accuracy: 0.5}\n"
    )
    with FakeOpenAIServer(latency_s=4.0) as slow:
        pytester.makefile(
            ".yaml",
            models=f"""
            model_list:
              - model_name: slow
                litellm_params:
                  model: openai/loop
                  api_base: {slow.url}
                  max_tokens: 64
                  max_parallel_requests: 1
            """,
        )
        raw = on_a_terminal(
            [sys.executable, "-m", "pytest", name, "-p", "no:randomly", "-p", "no:cacheprovider",
             "--llm-config", "models.yaml", "--llm", "slow", "--reasoning-cache", "off",
             "--color=yes"],
            pytester.path, columns=80,
        )  # fmt: skip
    lines = screen(raw)
    text = [line for line, _ in lines]
    assert "reasoning: starting..." in raw and not any("starting" in t for t in text)  # wiped
    assert any(t.endswith("; concurrency 1 (its max_parallel_requests)") for t in text), raw
    progress = [(t, far) for t, far in lines if t.startswith(name)]
    assert progress and all(far <= 80 for _, far in progress), progress
    plain = ESCAPES.sub("", raw).replace("\b", "\n")
    counts = [c.rstrip() for c in re.findall(r"\[\d+(?:s for |/)[^\n]*", plain)]
    assert counts and all(_COUNT.fullmatch(c) for c in counts), counts
    # 0 answered: "3 pending" would not fit (39 columns), so it went, whole.
    assert any(re.fullmatch(r"\[\d+s for slow: 0/3 answered\]", c) for c in counts), counts
    # 2 answered: the estimate outranks the wait, which went too.
    assert any(re.fullmatch(r"\[2/3 answered, ETA \d+(m\d\d)?s\]", c) for c in counts), counts
    assert "\x1b[33mW" in raw and "\x1b[32mW" not in raw  # wrong is yellow, not green
    assert (
        "GATE FAILED slow dyval.arithmetic D1: accuracy 0.000 (0/3) < min_accuracy 0.5; 3 of 3 "
        "cut off at the token limit (max_tokens 64), 3 of them repeating themselves in a loop "
        "that a higher limit would not end"
    ) in text, text


@pytest.mark.e2e
def test_live_count_under_xdist(pytester: pytest.Pytester) -> None:
    """The workers have no terminal: the controller counts the wait since the last report."""
    pytester.makefile(".yaml", s="samples: 1\ntasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n")
    with FakeOpenAIServer(latency_s=4.0) as slow:  # as above: 3 s to draw the count
        base = [sys.executable, "-m", "pytest", "s.yaml", "-p", "no:randomly", "-p",
                "no:cacheprovider", "--llm", "openai/oracle", "--llm-api-base", slow.url,
                "--reasoning-cache", "off", "-n", "2"]  # fmt: skip
        shown = on_a_terminal(base, pytester.path)  # -q: the same check as without xdist
    count = re.compile(r"\[\d+s waiting for the first answer: 0/1 done\]")
    assert count.search(shown), shown
    assert "1 passed" in shown
