"""DyVal (ICLR 2024): reasoning problems built from randomly generated DAGs."""

from .arithmetic import ArithmeticTask
from .boolean import BooleanLogicTask
from .graph import MaxSumPathTask, ReachabilityTask
from .linear import LinearEquationTask
from .logic import AbductiveLogicTask, DeductiveLogicTask

__all__ = [
    "TASKS",
    "AbductiveLogicTask",
    "ArithmeticTask",
    "BooleanLogicTask",
    "DeductiveLogicTask",
    "LinearEquationTask",
    "MaxSumPathTask",
    "ReachabilityTask",
]

# In the paper's order.
TASKS = (
    ArithmeticTask,
    LinearEquationTask,
    BooleanLogicTask,
    DeductiveLogicTask,
    AbductiveLogicTask,
    ReachabilityTask,
    MaxSumPathTask,
)
