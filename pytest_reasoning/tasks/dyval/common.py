"""Pieces shared by the DyVal tasks: level presets, common knobs, prompt styles."""

from __future__ import annotations

from ..base import Knob

__all__ = ["COT_TRIGGER", "ORDER_KNOB", "TDAG_PRESETS", "apply_style", "tdag_knobs"]

# The paper's presets: T-DAG (depth, width) per level.
TDAG_PRESETS: dict[str, tuple[int, int]] = {"D1": (2, 2), "D2": (3, 2), "D3": (3, 3), "D4": (4, 2)}

ORDER_KNOB = Knob(
    "order",
    str,
    "description order: children before parents, the reverse, or shuffled",
    choices=("topological", "reversed", "random"),
)

COT_TRIGGER = "Let's think step by step, and end with the final result between <<< and >>>."


def tdag_knobs() -> dict[str, Knob]:
    return {
        "depth": Knob("depth", int, "levels of the tree, 1 = a single leaf", minimum=1, maximum=8),
        "width": Knob("width", int, "children of every non-unary operation", minimum=1, maximum=6),
        "order": ORDER_KNOB,
    }


def apply_style(body: str, style: str) -> str:
    if style == "cot":
        return f"{body}\n\n{COT_TRIGGER}"
    return body
