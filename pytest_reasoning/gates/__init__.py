"""Gates: the results store, threshold gates, paired statistics and the candidate-vs-baseline
comparison. Pure functions and plain data; the plugin and the CLI decide gates through here."""

from __future__ import annotations

from .comparison import Comparison, baseline_answers, compare
from .rules import METRICS, GateRule, GateSpec
from .store import RESULT_FIELDS, ResultStore, read_results
from .threshold import GateResult, LevelStats, decide_gates

__all__ = [
    "METRICS",
    "RESULT_FIELDS",
    "Comparison",
    "GateResult",
    "GateRule",
    "GateSpec",
    "LevelStats",
    "ResultStore",
    "baseline_answers",
    "compare",
    "decide_gates",
    "read_results",
]
