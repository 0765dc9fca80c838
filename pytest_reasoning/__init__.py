"""pytest-reasoning: regression-test language models on freshly generated reasoning problems.

The public API; everything here is cheap to import (heavy modules load on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .core import Item, Outcome, Reply, Score
from .errors import (
    CallBudgetExceeded,
    InvalidArgument,
    InvalidDataset,
    InvalidSuite,
    ModelCallFailed,
    ReasoningError,
    StorageFailed,
    TestStopped,
    UnknownLevel,
    UnknownTask,
)
from .rng import Chooser, SeededChooser, derive_seed

if TYPE_CHECKING:
    from .datasets import Dataset, read_dataset
    from .evaluate import EvalConfig, Evaluator
    from .frontier import FrontierResult, find_frontier
    from .plugin import LLM
    from .registry import get_task, task_ids
    from .tasks.base import Knob, Task

__all__ = [
    "LLM",
    "CallBudgetExceeded",
    "Chooser",
    "Dataset",
    "EvalConfig",
    "Evaluator",
    "FrontierResult",
    "InvalidArgument",
    "InvalidDataset",
    "InvalidSuite",
    "Item",
    "Knob",
    "ModelCallFailed",
    "Outcome",
    "ReasoningError",
    "Reply",
    "Score",
    "SeededChooser",
    "StorageFailed",
    "Task",
    "TestStopped",
    "UnknownLevel",
    "UnknownTask",
    "__version__",
    "derive_seed",
    "find_frontier",
    "get_task",
    "read_dataset",
    "task_ids",
]

__version__ = "0.1.0"

_LAZY = {
    "Dataset": "datasets",
    "read_dataset": "datasets",
    "EvalConfig": "evaluate",
    "Evaluator": "evaluate",
    "FrontierResult": "frontier",
    "find_frontier": "frontier",
    "LLM": "plugin",
    "get_task": "registry",
    "task_ids": "registry",
    "Knob": "tasks.base",
    "Task": "tasks.base",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_reasoning' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)
