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

__all__ = ["PROPERTY", "ReasoningItem", "ReasoningSuiteFile", "payload", "teststatus"]

PROPERTY = "reasoning"


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
        suite = load_suite(
            self.path, samples=opts.samples, seed=opts.seed, display=str(rel), repeats=opts.repeats
        )
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

        state = self.config.stash[STATE]
        evaluator = state.evaluator
        a = self.address
        item = self.build()
        if model_kind(self.model).calls_model:  # the reference answers instantly
            # This item's call first, then the look-ahead: collection order is answer order,
            # so the first item is answered first and its row written at once.
            evaluator.submit(item, self.model, a.repeat)
            evaluator.prefetch(self._ahead(state, evaluator))
        outcome = evaluator.answer(item, self.model, a.repeat)
        data = outcome.to_dict()
        data.update(suite=a.suite, entry=a.entry.id, repeats=a.level.repeats)
        if evaluator.storage_error is not None:
            data["storage_error"] = evaluator.storage_error
        if a.repeated_problem:
            data["repeated_problem"] = True
        data["gate"] = a.gate.to_dict()
        self.user_properties.append((PROPERTY, json.dumps(data, ensure_ascii=False)))

    def _ahead(self, state: RunState, evaluator: Evaluator) -> Iterator[tuple[Item, str, int]]:
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
            yield built, other.model, other.address.repeat

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


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
