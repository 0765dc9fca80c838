"""The fixtures: ``llm`` (answer generated items from a test, within a call budget) and
``reasoning_results`` (outcomes and failure profiles of whole suites)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .state import STATE, RunState

if TYPE_CHECKING:
    from ..core import Item, Outcome
    from ..frontier import FrontierResult
    from ..profile import FailureProfile

__all__ = ["LLM", "ReasoningResults", "llm", "reasoning_results"]


class LLM:
    """The ``llm`` fixture: answer generated items with the ``--llm`` models from a test.

    ``llm.solve(item)`` returns the scored :class:`~pytest_reasoning.core.Outcome` (cached
    like suite items); ``llm.frontier(...)`` searches the difficulty frontier. Each test may
    make at most ``--reasoning-max-calls`` uncached calls (Hypothesis shrinking included).
    """

    def __init__(self, state: RunState) -> None:
        self._state = state
        self.models = list(state.models)
        self.budget = state.options.max_calls
        self.calls: dict[str, int] = {}

    @property
    def current(self) -> str:
        """The test running now (its node id): the call budget is per test."""
        return self._state.test

    @property
    def model(self) -> str:
        """The first ``--llm`` model (the one ``solve`` uses unless told otherwise)."""
        return self.models[0]

    def solve(self, item: Item, model: str | None = None) -> Outcome:
        """The scored answer; a call that failed after retries raises ``ModelCallFailed``
        (infrastructure, never a wrong answer for Hypothesis to shrink)."""
        from ..errors import ModelCallFailed

        outcome = self._answer(item, model)
        if outcome.error is not None:
            raise ModelCallFailed(f"{outcome.model}: {outcome.error}")
        if "hypothesis" in sys.modules:  # a fuzz test: the shrunk example's answer is shown
            from ..strategies import note_answer

            note_answer(item, outcome)
        return outcome

    def _answer(self, item: Item, model: str | None) -> Outcome:
        from ..errors import CallBudgetExceeded

        used = self.calls.get(self.current, 0)
        if used >= self.budget:
            raise CallBudgetExceeded(
                f"{self.current or 'this test'}: the call budget of {self.budget} is spent "
                "(--reasoning-max-calls); lower max_examples or raise the budget"
            )
        name = model or self.model
        outcome = self._state.evaluator.answer(item, name)
        if not outcome.cached and self._state.evaluator.model(name).calls_model:
            self.calls[self.current] = used + 1
        return outcome

    def frontier(
        self,
        task: str,
        knob: str,
        low: int,
        high: int,
        *,
        target: float = 0.5,
        model: str | None = None,
        **options: Any,
    ) -> FrontierResult:
        """The hardest ``knob`` value in ``[low, high]`` where the model reaches ``target``;
        options as :func:`pytest_reasoning.frontier.find_frontier`."""
        from ..frontier import find_frontier

        def answer(item: Item) -> bool | None:
            return self._answer(item, model).correct  # None for an error: counted apart

        return find_frontier(task, knob, low, high, answer, target=target, **options)


class ReasoningResults:
    """The ``reasoning_results`` fixture: outcomes of whole suites, for snapshots and checks.

    ``evaluate(suite)`` answers every item of a suite file with a model (``--llm`` first by
    default) through the run's evaluator, so answers already in the cache — from the suite's
    own items in this session or an earlier run — cost nothing; ``profile(suite)`` turns them
    into a :class:`~pytest_reasoning.profile.FailureProfile`. Because it reads the cache rather
    than other tests' reports, it is complete under xdist and whatever order tests run in.
    """

    def __init__(self, state: RunState, root: Path) -> None:
        self._state = state
        self._root = root

    def evaluate(self, suite: str | os.PathLike[str], model: str | None = None) -> list[Outcome]:
        from ..config import addresses, load_suite

        path = Path(suite)
        if not path.is_absolute():
            path = self._root / path
        opts = self._state.options
        spec = load_suite(
            path,
            samples=opts.samples,
            seed=opts.seed,
            repeats=opts.repeats,
            sequential=opts.sequential,
        )
        name = model or self._state.models[0]
        evaluator = self._state.evaluator
        # Ids as the suite's own items, so their cached answers are these.
        asked = [(a.make_item(), name, a.repeat) for a in addresses(spec)]
        evaluator.prefetch(asked)
        return [evaluator.answer(*one) for one in asked]

    def profile(
        self, suite: str | os.PathLike[str], model: str | None = None, **options: Any
    ) -> FailureProfile:
        from ..profile import FailureProfile

        return FailureProfile.from_outcomes(self.evaluate(suite, model), **options)


@pytest.fixture(scope="session")
def llm(request: pytest.FixtureRequest) -> LLM:
    """Answer generated items with the ``--llm`` models (skips the test without ``--llm``)."""
    state = request.config.stash.get(STATE, None)
    if state is None:
        pytest.skip("no --llm given: the llm fixture needs a model")
    return LLM(state)


@pytest.fixture(scope="session")
def reasoning_results(request: pytest.FixtureRequest) -> ReasoningResults:
    """Outcomes and failure profiles of suite files (skips the test without ``--llm``)."""
    state = request.config.stash.get(STATE, None)
    if state is None:
        pytest.skip("no --llm given: reasoning_results needs a model")
    return ReasoningResults(state, request.config.rootpath)
