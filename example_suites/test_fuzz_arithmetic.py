"""Property-based difficulty fuzzing: Hypothesis searches generated arithmetic problems for one
the model gets wrong, then shrinks it to the smallest such problem (fewest nodes, first
operation, smallest values), which it prints as the falsifying example.

    pytest example_suites/test_fuzz_arithmetic.py --llm local

Skipped without ``--llm``; ``--llm reference`` passes. Each example is one model call (cached),
bounded by the ``reasoning`` settings profile and ``--reasoning-max-calls``.
"""

from __future__ import annotations

import pytest

# Hypothesis is the [fuzzing] extra (pip install -e '.[fuzzing]'): without it, a skip that says so.
pytest.importorskip("hypothesis", reason="fuzzing needs the [fuzzing] extra (Hypothesis)")

from hypothesis import given
from hypothesis import strategies as st

from pytest_reasoning.core import Item
from pytest_reasoning.plugin import LLM
from pytest_reasoning.strategies import arithmetic_problems, reasoning_settings


@reasoning_settings
@given(problem=arithmetic_problems(depth=st.integers(2, 4), width=2, ops=["+", "-", "*"]))
def test_model_does_arithmetic(llm: LLM, problem: Item) -> None:
    outcome = llm.solve(problem)
    assert outcome.correct, (
        f"{llm.model} answered {outcome.extracted!r} ({outcome.failure_mode}); "
        f"the answer is {problem.answer}"
    )
