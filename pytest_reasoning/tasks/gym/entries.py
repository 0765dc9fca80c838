"""The one place reasoning-gym is imported (lazily): configurations, items by seed, scores.

A dataset object is built once per (dataset, knob values) and kept; an item is its entry 0
under a seed set just before (every registered generator draws from ``Random(seed + index)``,
the check in :mod:`.build` proves the bytes stable). Generation and scoring hold one lock, and
what generators print is swallowed (one prints a line per item).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from ...errors import InvalidArgument

__all__ = ["config_for", "entry_at", "jsonable", "score_at", "version"]

_LOCK = threading.Lock()
_DATASETS: OrderedDict[str, Any] = OrderedDict()
_ENTRIES: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
_KEEP_DATASETS = 64
_KEEP_ENTRIES = 512


def version() -> str:
    from importlib.metadata import version as installed

    return installed("reasoning-gym")


def jsonable(value: Any) -> Any:
    """``value`` as JSON data, deterministically: tuples as lists, sets sorted, enums and
    numpy scalars by value, anything else by ``str``."""
    if value is None or type(value) in (bool, int, str):  # exact: str/int enums below
        return value
    if type(value) is float:
        return value if value == value and abs(value) != float("inf") else str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    for attr in ("value", "item"):  # Enum members; numpy scalars
        inner = getattr(value, attr, None)
        if inner is not None and not callable(inner):
            return jsonable(inner)
        if attr == "item" and callable(inner):
            try:
                return jsonable(inner())
            except (TypeError, ValueError):
                break
    return str(value)


def config_for(name: str, params: Mapping[str, Any]) -> Any:
    """The dataset's config at ``params['curriculum_step']`` with the knobs of ``params``,
    validated (a rejection is one line naming the dataset)."""
    from reasoning_gym.factory import DATASETS, create_curriculum

    _, config_cls = DATASETS[name]
    curriculum = create_curriculum(name)
    curriculum.set_global_level(int(params.get("curriculum_step", 0)))
    config = curriculum.generate_configuration({"seed": 0, "size": 1})
    fields = {f.name for f in dataclasses.fields(config_cls)}
    changes = {}
    for key, value in params.items():
        if key in fields:
            old = getattr(config, key)
            changes[key] = tuple(value) if isinstance(old, tuple) else value
    try:
        config = dataclasses.replace(config, **changes)
        if hasattr(config, "validate"):
            config.validate()
    except (AssertionError, ValueError, TypeError, KeyError) as exc:
        raise InvalidArgument(
            f"gym.{name}: reasoning-gym rejects these knobs ({type(exc).__name__}: {exc})"
        ) from None
    return config


def _dataset(name: str, params: Mapping[str, Any]) -> Any:
    key = name + json.dumps(dict(params), sort_keys=True)
    found = _DATASETS.pop(key, None)
    if found is None:
        from reasoning_gym.factory import DATASETS

        dataset_cls, _ = DATASETS[name]
        config = config_for(name, params)
        with contextlib.redirect_stdout(io.StringIO()):
            found = dataset_cls(config=config)
    _DATASETS[key] = found
    while len(_DATASETS) > _KEEP_DATASETS:
        _DATASETS.popitem(last=False)
    return found


def entry_at(
    name: str, params: Mapping[str, Any], seed: int, *, check: bool = False
) -> tuple[dict[str, Any], float | None]:
    """The item reasoning-gym makes at ``seed`` (and with ``check``, the score its own
    verifier gives its gold answer)."""
    key = (name + json.dumps(dict(params), sort_keys=True), seed)
    with _LOCK:
        entry = _ENTRIES.pop(key, None)
        ds = _dataset(name, params)
        if entry is None:
            ds.seed = seed
            if hasattr(ds.config, "seed"):
                ds.config.seed = seed
            with contextlib.redirect_stdout(io.StringIO()):
                entry = ds[0]
        _ENTRIES[key] = entry
        while len(_ENTRIES) > _KEEP_ENTRIES:
            _ENTRIES.popitem(last=False)
        score = None
        if check:
            answer = entry.get("answer")
            with contextlib.redirect_stdout(io.StringIO()):
                score = ds.score_answer(None if answer is None else str(answer), entry)
    return entry, score


def score_at(name: str, params: Mapping[str, Any], seed: int, answer: str | None) -> float:
    """reasoning-gym's own score of ``answer`` for the item at ``seed`` (0 if it raises)."""
    entry, _ = entry_at(name, params, seed)
    with _LOCK:
        ds = _dataset(name, params)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                value = ds.score_answer(answer, entry)
        except Exception:  # a verifier's bug on odd text is a wrong answer, not a crash
            return 0.0
    return float(value) if isinstance(value, (int, float)) else 0.0
