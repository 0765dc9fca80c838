"""ZebraLogic: logic grid puzzles with a unique solution, proved by a SAT solver."""

from .task import ZebraGridTask

__all__ = ["TASKS", "ZebraGridTask"]

TASKS = (ZebraGridTask,)
