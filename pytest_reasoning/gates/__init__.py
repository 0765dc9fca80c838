"""Gates: the verdict ledger, threshold gates, paired statistics, the candidate-vs-baseline
comparison, and results files written and read back (type-checked). Pure functions and plain
data; the plugin and the CLI decide every verdict through the ledger."""

from __future__ import annotations

from .comparison import Comparison, baseline_answers, compare, item_scores
from .ledger import Ledger
from .metrics import Metric, metric
from .rows import InvalidResults, load_results, read_results
from .rules import GateRule, GateSpec
from .store import RESULT_FIELDS, ResultStore
from .threshold import GateResult, LevelStats, decide_gates

__all__ = [
    "RESULT_FIELDS",
    "Comparison",
    "GateResult",
    "GateRule",
    "GateSpec",
    "InvalidResults",
    "Ledger",
    "LevelStats",
    "Metric",
    "ResultStore",
    "baseline_answers",
    "compare",
    "decide_gates",
    "item_scores",
    "load_results",
    "metric",
    "read_results",
]
