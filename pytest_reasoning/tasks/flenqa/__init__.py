"""FLenQA: the same True/False reasoning at 250 to 3000+ tokens."""

from .task import FlenqaTask, MonoRelTask, PeopleInRoomsTask, RuleTakerTask

__all__ = ["TASKS", "FlenqaTask", "MonoRelTask", "PeopleInRoomsTask", "RuleTakerTask"]

TASKS = (MonoRelTask, PeopleInRoomsTask, RuleTakerTask)
