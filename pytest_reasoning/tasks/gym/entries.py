"""The one place reasoning-gym is imported (lazily): configurations, items by seed, scores.

A dataset object is built once per (dataset, knob values) and kept; an item is its entry 0
under a seed set just before (every registered generator draws from ``Random(seed + index)``,
the check in :mod:`.build` proves the bytes stable). Generation and scoring hold one lock, and
what generators and scorers print or warn is swallowed (one prints a line per item; numpy
warns with the answer's text). A generator that fails is one line naming the dataset.

A model's answer is scored with the readers of :mod:`.readers` in place of the ``eval`` and
``parse_expr`` the scorers call, under :func:`.guard.untrusted` (the audit hook and a
CPU-time limit): it is never run as code, and a scorer cannot hang on it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from ...errors import InvalidArgument, ReasoningError, clip
from . import guard, readers

__all__ = ["SCORE_CPU_S", "Scored", "config_for", "entry_at", "jsonable", "judge", "prepare",
           "score_at", "scored_at", "version"]  # fmt: skip

_LOCK = threading.Lock()
_DATASETS: OrderedDict[str, Any] = OrderedDict()
_ENTRIES: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
_KEEP_DATASETS = 64
_KEEP_ENTRIES = 512
SCORE_CPU_S = 5.0  # CPU seconds a scorer may spend on one answer (gold answers take < 0.1)


@dataclasses.dataclass(frozen=True)
class Scored:
    """A scorer's value for one answer, or why the answer scored 0 without its verdict:
    ``unsafe_answer`` (the scorer tried to run it, or something else the guard refuses; the
    ``detail`` says what) or ``scorer_timeout``."""

    value: float
    failure: str | None = None
    detail: str | None = None


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with (
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        yield


def judge(
    ds: Any, answer: str | None, entry: dict[str, Any], cpu_seconds: float = SCORE_CPU_S
) -> Scored:
    """``ds.score_answer(answer, entry)`` with ``answer`` read as data (see the module's
    docstring); a scorer that raises on odd text gives 0, as reasoning-gym's own training
    loop counts it."""
    value: Any = 0.0
    watch = guard.Watch()
    try:
        # The guard innermost: when the limit strikes, nothing else is left half restored.
        with readers.readers_for(ds), _quiet(), guard.untrusted(cpu_seconds) as watch:
            try:
                value = ds.score_answer(answer, entry)
            except Exception:
                value = 0.0
    except (guard.Refused, guard.Overran):
        value = 0.0
    if watch.refused is not None:
        return Scored(0.0, "unsafe_answer", watch.refused)
    if watch.overran:
        return Scored(0.0, "scorer_timeout", f"past {cpu_seconds:g} CPU seconds")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return Scored(0.0)
    return Scored(float(value) if math.isfinite(value) else 0.0)


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
            f"gym.{name}: reasoning-gym rejects these knobs "
            f"({type(exc).__name__}: {clip(' '.join(str(exc).split()), 160)})"
        ) from None
    return config


def _dataset(name: str, params: Mapping[str, Any]) -> Any:
    key = name + json.dumps(dict(params), sort_keys=True)
    found = _DATASETS.pop(key, None)
    if found is None:
        from reasoning_gym.factory import DATASETS

        dataset_cls, _ = DATASETS[name]
        config = config_for(name, params)
        with _quiet():
            found = dataset_cls(config=config)
    _DATASETS[key] = found
    while len(_DATASETS) > _KEEP_DATASETS:
        _DATASETS.popitem(last=False)
    return found


def _failed(name: str, what: str, exc: BaseException) -> InvalidArgument:
    detail = clip(" ".join(str(exc).split()), 160)
    return InvalidArgument(
        f"gym.{name}: reasoning-gym failed to {what} under these knobs "
        f"({type(exc).__name__}{': ' + detail if detail else ''})"
    )


def _built(name: str, params: Mapping[str, Any]) -> Any:
    try:
        return _dataset(name, params)
    except ReasoningError:
        raise
    except Exception as exc:
        raise _failed(name, "build the dataset", exc) from None


def prepare(name: str, params: Mapping[str, Any]) -> None:
    """Build (and keep) the dataset of these knobs now: reasoning-gym's validation and its
    constructor (which reads data files) run when a suite is read, so knobs they reject are
    a usage error, not a failure of every sample."""
    with _LOCK:
        _built(name, params)


def entry_at(
    name: str, params: Mapping[str, Any], seed: int, *, check: bool = False
) -> tuple[dict[str, Any], Scored | None]:
    """The item reasoning-gym makes at ``seed`` (and with ``check``, how its own verifier
    scores its gold answer). A generator that fails (a MemoryError, a bug at some knob
    values) is one line naming the dataset, not a traceback."""
    key = (name + json.dumps(dict(params), sort_keys=True), seed)
    with _LOCK:
        entry = _ENTRIES.pop(key, None)
        ds = _built(name, params)
        try:
            if entry is None:
                ds.seed = seed
                if hasattr(ds.config, "seed"):
                    ds.config.seed = seed
                with _quiet():
                    entry = ds[0]
        except ReasoningError:
            raise
        except Exception as exc:
            raise _failed(name, f"generate the item of gym seed {seed}", exc) from None
        _ENTRIES[key] = entry
        while len(_ENTRIES) > _KEEP_ENTRIES:
            _ENTRIES.popitem(last=False)
        score = None
        if check:
            answer = entry.get("answer")
            score = judge(ds, None if answer is None else str(answer), entry)
    return entry, score


def scored_at(
    name: str,
    params: Mapping[str, Any],
    seed: int,
    answer: str | None,
    cpu_seconds: float = SCORE_CPU_S,
) -> Scored:
    """reasoning-gym's own score of ``answer`` for the item at ``seed``, the answer read as
    data (0 if the scorer raises)."""
    entry, _ = entry_at(name, params, seed)
    with _LOCK:
        return judge(_built(name, params), answer, entry, cpu_seconds)


def score_at(name: str, params: Mapping[str, Any], seed: int, answer: str | None) -> float:
    """:func:`scored_at`'s value."""
    return scored_at(name, params, seed, answer).value
