"""A suite's values checked one key at a time: numbers, unit intervals, seeds, mappings, known
keys, the settings every layer may set (:func:`common_settings`) and what a metric needs of
the level and the task. Each problem is one line (file, key path, expectation); a
:class:`Problems` collects them so that a suite's problems are reported all at once."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import InvalidSuite, did_you_mean, quote
from ..gates.metrics import SPELLINGS, metric
from ..tasks.base import Task
from .schema import MAX_REPEATS, MAX_SAMPLES

__all__ = [
    "Problems",
    "as_int",
    "as_mapping",
    "as_seeds",
    "as_unit",
    "check_credit",
    "check_keys",
    "check_repeats",
    "common_settings",
    "type_name",
]


def type_name(v: Any) -> str:
    return "null" if v is None else type(v).__name__


def as_int(v: Any, where: str, path: str, *, minimum: int = 0) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise InvalidSuite(path, where, f"expected an integer, got {type_name(v)} {quote(v, 80)}")
    if v < minimum:
        raise InvalidSuite(path, where, f"expected an integer >= {minimum}, got {v}")
    return v


def as_unit(v: Any, where: str, path: str, *, open_interval: bool = False) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise InvalidSuite(
            path, where, f"expected a number in [0, 1], got {type_name(v)} {quote(v, 80)}"
        )
    ok = 0 < v < 1 if open_interval else 0 <= v <= 1
    if not ok:
        rng = "(0, 1)" if open_interval else "[0, 1]"
        raise InvalidSuite(path, where, f"expected a number in {rng}, got {v}")
    return float(v)


def check_repeats(name: str, repeats: int, where: str, path: str) -> None:
    """A metric over K repeats (pass@K, pass^K) needs K samples of an item: K at most the
    level's repeats."""
    gauge = metric(name)
    k = gauge.needs_repeats if gauge is not None else None
    if k is not None and k > repeats:
        raise InvalidSuite(
            path,
            where,
            f"{name} needs {k} samples of each item; the level has repeats "
            f"{repeats} (set repeats: {k} or more, or --reasoning-repeats)",
        )


def check_credit(name: str, task: Task, where: str, path: str) -> None:
    """A metric of partial credit (``cell``) needs a task that gives it."""
    gauge = metric(name)
    if gauge is not None and gauge.needs_credit and not task.partial_credit:
        raise InvalidSuite(
            path, where, f"'{name}' needs a task with partial credit; {task.id} scores 0 or 1"
        )


def check_keys(d: Mapping[Any, Any], allowed: set[str], where: str, path: str) -> None:
    """Every unknown key at once, each with its closest known key."""
    found = [
        InvalidSuite(
            path,
            f"{where}.{k}" if where else str(k),
            f"unknown key{did_you_mean(k, sorted(allowed))}; expected one of "
            + ", ".join(sorted(allowed)),
        )
        for k in d
        if k not in allowed
    ]
    if found:
        raise InvalidSuite.several(found)


class Problems:
    """Every problem of a suite, so one run reports them all (one line each, file order)."""

    def __init__(self) -> None:
        self.found: list[InvalidSuite] = []

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Record an InvalidSuite raised in the block and go on with the next check."""
        try:
            yield
        except InvalidSuite as exc:
            self.found.extend(exc.problems)

    def add(self, path: str, key: str, message: str) -> None:
        self.found.append(InvalidSuite(path, key, message))

    def raise_any(self) -> None:
        if self.found:
            unique = list({p.line: p for p in self.found}.values())  # layers repeat a mistake
            raise InvalidSuite.several(unique)


def as_seeds(d: Mapping[str, Any], where: str, path: str) -> tuple[int, ...] | None:
    if "seed" in d and "seeds" in d:
        raise InvalidSuite(path, f"{where}seeds", "give either 'seed' or 'seeds', not both")
    if "seed" in d:
        return (as_int(d["seed"], f"{where}seed", path),)
    if "seeds" in d:
        v = d["seeds"]
        if not isinstance(v, list) or not v:
            raise InvalidSuite(path, f"{where}seeds", "expected a non-empty list of integers")
        return tuple(as_int(s, f"{where}seeds[{i}]", path) for i, s in enumerate(v))
    return None


def as_mapping(v: Any, where: str, path: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise InvalidSuite(path, where, f"expected a mapping, got {type_name(v)}")
    return v


def common_settings(
    d: Mapping[str, Any],
    where: str,
    path: str,
    inherited: dict[str, Any],
    problems: Problems | None = None,
) -> dict[str, Any]:
    """Settings that cascade suite → entry → level. With ``problems``, each bad key is
    recorded and keeps its inherited value, so the checks go on."""
    problems = problems if problems is not None else Problems()
    out = dict(inherited)
    if "samples" in d:
        with problems.guard():
            count = as_int(d["samples"], f"{where}samples", path)
            if count > MAX_SAMPLES:
                raise InvalidSuite(
                    path, f"{where}samples", f"expected at most {MAX_SAMPLES} samples, got {count}"
                )
            out["samples"] = count
    if "repeats" in d:
        with problems.guard():
            times = as_int(d["repeats"], f"{where}repeats", path, minimum=1)
            if times > MAX_REPEATS:
                raise InvalidSuite(
                    path, f"{where}repeats", f"expected at most {MAX_REPEATS} repeats, got {times}"
                )
            out["repeats"] = times
    with problems.guard():
        seeds = as_seeds(d, where, path)
        if seeds is not None:
            out["seeds"] = seeds
    if "style" in d:
        with problems.guard():
            if not isinstance(d["style"], str):
                raise InvalidSuite(
                    path, f"{where}style", f"expected a string, got {type_name(d['style'])}"
                )
            out["style"] = d["style"]
    if "min_accuracy" in d:
        with problems.guard():
            out["min_accuracy"] = (
                None
                if d["min_accuracy"] is None
                else as_unit(d["min_accuracy"], f"{where}min_accuracy", path)
            )
    if "confidence" in d:
        with problems.guard():
            out["confidence"] = (
                None
                if d["confidence"] is None
                else as_unit(d["confidence"], f"{where}confidence", path, open_interval=True)
            )
    if "max_drop" in d:
        with problems.guard():
            out["max_drop"] = as_unit(d["max_drop"], f"{where}max_drop", path)
    if "alpha" in d:
        with problems.guard():
            out["alpha"] = as_unit(d["alpha"], f"{where}alpha", path, open_interval=True)
    if "sequential" in d:
        with problems.guard():
            if not isinstance(d["sequential"], bool):
                raise InvalidSuite(
                    path,
                    f"{where}sequential",
                    f"expected true or false, got {quote(d['sequential'], 80)}",
                )
            out["sequential"] = d["sequential"]
    if "metric" in d:
        with problems.guard():
            gauge = metric(d["metric"])
            if gauge is None:
                raise InvalidSuite(
                    path,
                    f"{where}metric",
                    f"expected one of {', '.join(SPELLINGS)} (K a number or k: the repeats), "
                    f"got {quote(d['metric'], 80)}" + did_you_mean(d["metric"], SPELLINGS),
                )
            out["metric"] = gauge.name  # one name per metric: ``puzzle`` is ``accuracy``
    if "params" in d:
        with problems.guard():
            out["params"] = {
                **out.get("params", {}),
                **as_mapping(d["params"], f"{where}params", path),
            }
    return out
