"""Task families: generators, prompts and scorers (families never import each other), and the
public face for task authors — everything a third-party family needs (docs/extending.md)::

    from pytest_reasoning.tasks import Chooser, Generated, Item, Knob, Score, Task

Items are drawn by the sampler (``make_item(task, level, seed, index)``); a generator that
redraws part of a problem for its split asks its draw, ``draw_of(chooser).fits(problem)``.

A built-in task is extended through its family package (``pytest_reasoning.tasks.dyval``
exports ``ArithmeticTask``, …); the families' modules themselves are internal."""

from __future__ import annotations

from ..answers import extract_delimited, format_number, normalise_label, parse_number
from ..core import Item, Score
from ..rng import Chooser, SeededChooser, derive_seed
from .base import Generated, Knob, Shortcut, Task, item_id
from .breakdown import Breakdown, Chart, Panel
from .draw import Draw, draw_of, split_of
from .sampler import Sampler, make_item, sampler

__all__ = [
    "Breakdown",
    "Chart",
    "Chooser",
    "Draw",
    "Generated",
    "Item",
    "Knob",
    "Panel",
    "Sampler",
    "Score",
    "SeededChooser",
    "Shortcut",
    "Task",
    "derive_seed",
    "draw_of",
    "extract_delimited",
    "format_number",
    "item_id",
    "make_item",
    "normalise_label",
    "parse_number",
    "sampler",
    "split_of",
]
