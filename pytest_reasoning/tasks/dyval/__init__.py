"""DyVal (ICLR 2024): reasoning problems built from randomly generated DAGs."""

from .arithmetic import ArithmeticTask
from .boolean import BooleanLogicTask

__all__ = ["ArithmeticTask", "BooleanLogicTask"]
