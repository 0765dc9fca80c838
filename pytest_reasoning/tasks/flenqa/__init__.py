"""FLenQA: the same True/False reasoning at 250 to 3000+ tokens."""

from .families import MonoRelTask, PeopleInRoomsTask, RuleTakerTask
from .task import FlenqaTask

__all__ = ["TASKS", "FlenqaTask", "MonoRelTask", "PeopleInRoomsTask", "RuleTakerTask"]

TASKS = (MonoRelTask, PeopleInRoomsTask, RuleTakerTask)
