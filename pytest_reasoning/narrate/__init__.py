"""Narrated datasets: MuSR stories written chapter by chapter by a language model under the
paper's validators, frozen as JSONL in the export schema (``pytest-reasoning narrate``).

This sits above the task layer on purpose: tasks stay pure functions of their seed and never
call a model; the narrator takes the structured problem a task generates, asks a model for the
chapters through the evaluator, and writes items a suite can run as a ``dataset:``.
"""

from __future__ import annotations

from .checks import FAILURES, FactCheck, Verdict, inspect
from .musr import PLANNERS
from .plan import (
    Chapter,
    Plan,
    Planner,
    assemble,
    narrated_item,
    planner_for,
    planners,
    register_planner,
)
from .run import NarrateOptions, Narration, StoryResult, Usage, narrate_items, narrate_story

for _task, _planner in PLANNERS.items():  # MuSR's stories are the ones narrated today
    register_planner(_task, _planner)

__all__ = [
    "FAILURES",
    "Chapter",
    "FactCheck",
    "NarrateOptions",
    "Narration",
    "Plan",
    "Planner",
    "StoryResult",
    "Usage",
    "Verdict",
    "assemble",
    "inspect",
    "narrate_items",
    "narrate_story",
    "narrated_item",
    "planner_for",
    "planners",
    "register_planner",
]
