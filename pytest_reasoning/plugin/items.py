"""Suite files as pytest collectors, one test item per (model, suite entry, level, seed,
index), and the outcome each item carries to the controller: JSON primitives in
``user_properties``, which xdist replays on the controller like any report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .state import STATE

if TYPE_CHECKING:
    from ..config import Address
    from ..core import Item
    from ..evaluate import Evaluator
    from .state import RunState

__all__ = [
    "JUNIT_TEXT",
    "PROPERTY",
    "ReasoningItem",
    "ReasoningSuiteFile",
    "payload",
    "teststatus",
]

PROPERTY = "reasoning"
# Characters of any one text (a response, an extracted answer) the JUnit XML keeps of an
# outcome; the results file has them whole.
JUNIT_TEXT = 1_000


class ReasoningSuiteFile(pytest.File):
    """A suite YAML: one test item per (model, entry, level, seed, index)."""

    def collect(self) -> Iterator[pytest.Item]:
        from ..config import addresses, load_suite

        state = self.config.stash[STATE]
        rel = (
            self.path.relative_to(self.config.rootpath)
            if self.path.is_relative_to(self.config.rootpath)
            else self.path
        )
        opts = state.options
        suite = load_suite(self.path, samples=opts.samples, seed=opts.seed, display=str(rel))
        multi = len(state.models) > 1
        for model in state.models:
            for address in addresses(suite):
                sample = address.sample + (f"-{model}" if multi else "")
                yield ReasoningItem.from_parent(
                    self, name=f"{address.entry.id}[{sample}]", model=model, address=address
                )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from ..errors import ReasoningError

        if isinstance(excinfo.value, ReasoningError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class ReasoningItem(pytest.Item):
    """One generated sample answered by one model. A wrong answer does not fail the item:
    it is reported as WRONG and counted by the level's gate."""

    def __init__(self, *, model: str, address: Address, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.address = address
        self.add_marker("reasoning")

    @property
    def sample_id(self) -> str:
        return self.address.sample_id

    def build(self) -> Item:
        built = self.config.stash[STATE].built.pop(self.nodeid, None)
        return built if built is not None else self.address.make_item()

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from ..errors import ReasoningError

        if isinstance(excinfo.value, ReasoningError):  # a bad knob: one line, no traceback
            return f"{self.address.entry.id} {self.address.level.level}: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def runtest(self) -> None:
        from ..models.kinds import model_kind
        from ..registry import get_task

        state = self.config.stash[STATE]
        evaluator = state.evaluator
        if model_kind(self.model).calls_model:  # the reference answers instantly
            evaluator.prefetch(self._ahead(state, evaluator))
        outcome = evaluator.answer(self.build(), self.model)
        data = outcome.to_dict()
        if evaluator.storage_error is not None:
            data["storage_error"] = evaluator.storage_error
        a = self.address
        if get_task(a.entry.task).is_repeat(a.level.level, a.seed, a.index, a.level.params):
            data["repeat"] = True
        data["gate"] = a.gate.to_dict()
        self.user_properties.append((PROPERTY, json.dumps(data, ensure_ascii=False)))

    def teardown(self) -> None:
        """JUnit XML writes the properties of the teardown report: give it the outcome with
        long texts clipped. The call report, made before, carried the whole outcome to the
        controller (and through xdist), which writes it to the results file."""
        for i, (name, value) in enumerate(self.user_properties):
            if name == PROPERTY and isinstance(value, str) and len(value) > 4 * JUNIT_TEXT:
                small = _clipped(json.loads(value))
                self.user_properties[i] = (name, json.dumps(small, ensure_ascii=False))

    def _ahead(self, state: RunState, evaluator: Evaluator) -> Iterator[tuple[Item, str]]:
        """Upcoming model-answered items not yet built or in flight (built once, kept until
        they run)."""
        from ..models.kinds import model_kind

        for other in state.upcoming(self):
            if (
                other is self
                or not model_kind(other.model).calls_model
                or other.nodeid in state.built
                or evaluator.pending(other.sample_id, other.model)
            ):
                continue
            state.built[other.nodeid] = built = other.build()
            yield built, other.model

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


def _clipped(value: Any) -> Any:
    from ..errors import clip

    if isinstance(value, str):
        return clip(value, JUNIT_TEXT)
    if isinstance(value, list):
        return [_clipped(v) for v in value]
    if isinstance(value, dict):
        return {k: _clipped(v) for k, v in value.items()}
    return value


def payload(report: pytest.TestReport) -> dict[str, Any] | None:
    """The outcome an item's report carries, or None for other tests."""
    for name, value in getattr(report, "user_properties", ()):
        if name == PROPERTY and isinstance(value, str):
            data: dict[str, Any] = json.loads(value)
            return data
    return None


def teststatus(report: pytest.TestReport) -> tuple[str, str, str] | None:
    """``W``/``WRONG`` for a wrong answer, ``I``/``INFRA-ERROR`` for a failed call."""
    if report.when != "call" or not report.passed:
        return None
    data = payload(report)
    if data is None:
        return None
    if data.get("error") is not None:
        return "infra error", "I", "INFRA-ERROR"
    if not data.get("correct"):
        return "wrong", "W", "WRONG"
    return None
