"""Where a sequential gate stands after an answer, and what it asks on average."""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

__all__ = ["Decision", "Expected"]


class Decision(str, Enum):
    """Where a level stands after an answer."""

    CONTINUE = "continue"  # ask on
    PASS = "pass"  # settled: the gate passes (a comparison: no regression)
    FAIL = "fail"  # settled: the gate fails (a comparison: regression)
    FIXED = "fixed-n"  # all n answered undecided: today's fixed-n rule decides


class Expected(NamedTuple):
    """What a sequential gate asks on average, and how often it settles early."""

    calls: float  # expected answers asked (the fixed-n gate asks n)
    early_pass: float  # chance of passing before n
    early_fail: float  # chance of failing before n
