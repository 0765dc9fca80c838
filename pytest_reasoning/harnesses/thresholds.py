"""The thresholds file of ``pytest-reasoning gate --from``: a small YAML of the gate keys a
suite level takes, per task of the logs, with defaults for every task at the top::

    min_accuracy: 0.5            # every task
    tasks:
      gsm8k: {min_accuracy: 0.8, confidence: 0.9}
      reach: {metric: pass^3, min_accuracy: 0.6, score: pattern}

Keys: ``min_accuracy``, ``confidence``, ``max_drop``, ``alpha``, ``metric`` (as in a suite,
docs/suites.md) and ``score`` (which scorer, or lm-eval metric, is the verdict). Read as a
suite is: bounded, strict, every mistake at once, one line each."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.values import Problems, as_mapping, check_keys, common_settings
from ..config.yamlfile import _load_yaml
from ..errors import InvalidSuite, quote
from ..gates import GateRule

__all__ = ["RULE_KEYS", "Thresholds", "load_thresholds"]

RULE_KEYS = {"min_accuracy", "confidence", "max_drop", "alpha", "metric"}


@dataclass(frozen=True)
class Thresholds:
    """Per task: its gate rule and the score read as its verdict (None: the log's default);
    ``"*"`` holds what the top of the file sets for every task."""

    rules: dict[str, GateRule] = field(default_factory=dict)
    scores: dict[str, str] = field(default_factory=dict)
    path: str | None = None

    def rule(self, task: str) -> GateRule:
        return self.rules.get(task) or self.rules.get("*") or GateRule()


def load_thresholds(path: str) -> Thresholds:
    """Read a thresholds file; InvalidSuite with one line per problem."""
    data = _load_yaml(Path(path), path)
    problems = Problems()
    if not isinstance(data, dict):
        raise InvalidSuite(path, "", "expected a mapping with a 'tasks:' mapping")
    with problems.guard():
        check_keys(data, {*RULE_KEYS, "score", "tasks"}, "", path)
    top = _layer(data, "", path, {}, problems)
    rules, scores = {"*": GateRule.from_dict(top)}, {}
    if isinstance(data.get("score"), str):
        scores["*"] = data["score"]
    tasks: Mapping[str, Any] = {}
    with problems.guard():
        tasks = as_mapping(data.get("tasks", {}), "tasks", path)
    for name, body in tasks.items():
        where = f"tasks.{name}"
        if not isinstance(name, str) or not name:
            problems.add(path, "tasks", f"expected task names, got {quote(name, 40)}")
            continue
        if body is None:
            body = {}
        if not isinstance(body, dict):
            problems.add(path, where, "expected a mapping of gate keys")
            continue
        with problems.guard():
            check_keys(body, {*RULE_KEYS, "score"}, where, path)
        rules[name] = GateRule.from_dict(_layer(body, f"{where}.", path, top, problems))
        if "score" in body:
            scores[name] = body["score"]
    problems.raise_any()
    return Thresholds(rules, scores, path)


def _layer(
    d: Mapping[str, Any], where: str, path: str, inherited: dict[str, Any], problems: Problems
) -> dict[str, Any]:
    """The gate keys of one layer (a suite's own checks), and ``score``'s type."""
    rule_keys = {k: v for k, v in d.items() if k in RULE_KEYS}
    out = common_settings(rule_keys, where, path, inherited, problems)
    if "score" in d and not (isinstance(d["score"], str) and d["score"]):
        got = quote(d["score"], 40)
        problems.add(path, f"{where}score", f"expected a scorer or metric name, got {got}")
    return out
