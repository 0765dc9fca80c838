"""The values that flow through the pipeline: Item, Reply, Score, Outcome.

All are frozen dataclasses of JSON primitives with a ``to_dict``/``from_dict`` round trip, so
they can travel as pytest ``user_properties`` across xdist workers and into results files.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = [
    "Item",
    "Outcome",
    "Reply",
    "Score",
    "canonical_json",
    "clean_text",
    "cluster_id",
    "json_fields",
    "level_key",
    "repeat_id",
    "sha256_text",
]

JSON = Any


def canonical_json(obj: JSON) -> str:
    """Compact JSON with sorted keys: the byte form used for hashing and cache keys."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


_ATOMS = frozenset({str, int, float, bool, type(None)})
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


class _NotPlain(Exception):
    """A value ``json_fields`` leaves to ``asdict`` (a tuple, a nested dataclass, ...)."""


def _plain(value: JSON) -> JSON:
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    if kind is list:
        return [_plain(v) for v in value]
    raise _NotPlain


def json_fields(obj: Any) -> dict[str, JSON]:
    """``dataclasses.asdict(obj)`` for a dataclass of JSON values, the same dict (fields in
    order, dicts and lists copied) at a fraction of its cost: each results row passes here
    (``asdict`` recurses through ``deepcopy`` for every field). Anything else in a field (a
    tuple, a nested dataclass) is left to ``asdict``."""
    cls = type(obj)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    try:
        return {name: _plain(getattr(obj, name)) for name in names}
    except _NotPlain:
        return asdict(obj)


def level_key(level: str) -> tuple[Any, ...]:
    """Levels in reading order: 500 before 1000, 4x4 before 10x10, D2 before D10."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", level))


def cluster_id(item_id: str, repeat: int = 0, repeats: int = 1) -> str:
    """The item id without its repeat suffix: ``x[D2-s1-007-r3]`` → ``x[D2-s1-007]``."""
    suffix = f"-r{repeat}]"
    if repeats > 1 and item_id.endswith(suffix):
        return item_id[: -len(suffix)] + "]"
    return item_id


def repeat_id(item_id: str, repeat: int, repeats: int) -> str:
    """The id of sample ``repeat`` of ``repeats`` (unchanged when an item is asked once)."""
    if repeats <= 1 or not item_id.endswith("]"):
        return item_id
    return f"{item_id[:-1]}-r{repeat}]"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (valid surrogate pairs joined).

    A JSON reply may legally hold ``"\\ud800"``, a code point no UTF-8 file, XML report or xdist
    channel can carry; model text is cleaned once, where it enters (:class:`Reply`), so the
    cache, results, reports and scorers only ever see valid text. Valid text costs one
    encode attempt.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


@dataclass(frozen=True)
class Item:
    """One generated problem: addressable by (task, level, seed, index, params)."""

    id: str
    task: str
    level: str
    seed: int
    index: int
    params: dict[str, JSON]
    style: str
    prompt: str
    answer: str
    problem: dict[str, JSON]
    system: str | None = None  # a system message sent before the prompt (Task.system_prompt)

    @property
    def messages(self) -> list[dict[str, str]]:
        user = {"role": "user", "content": self.prompt}
        return [{"role": "system", "content": self.system}, user] if self.system else [user]

    @property
    def prompt_sha256(self) -> str:
        return sha256_text(self.prompt)

    def to_dict(self) -> dict[str, JSON]:
        return json_fields(self)

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Item:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


@dataclass(frozen=True)
class Reply:
    """What a model endpoint said (or why it said nothing)."""

    content: str | None
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cached: bool = False
    # Why the model stopped ("stop", "length", ...), as the endpoint said.
    finish_reason: str | None = None
    reasoning_tokens: int | None = None  # usage.completion_tokens_details.reasoning_tokens
    reasoning_chars: int | None = None  # length of a separate reasoning_content, if any
    cost_usd: float | None = None  # LiteLLM's price of the call (its bundled map), if priced
    # For errors: "stop" (retrying cannot help: the model gets no further calls), "request"
    # (this request only, not retried), "transient" (failed after retries), "not_asked".
    error_kind: str | None = None
    # The reasoning sent apart (reasoning_content), clipped (models.base.clip_reasoning);
    # None when there was none or the run turned reasoning off.
    reasoning_text: str | None = None

    def __post_init__(self) -> None:
        # The one boundary every model's text crosses (a client's reply, a cache row written
        # by an older version): invalid code points stop here, never fatal downstream.
        for name in ("content", "error", "finish_reason", "reasoning_text"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, clean_text(value))

    def to_dict(self) -> dict[str, JSON]:
        return json_fields(self)

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Reply:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


@dataclass(frozen=True)
class Score:
    """A scorer's verdict on one response; keeps the extracted answer for diagnosis."""

    correct: bool
    extracted: str | None
    failure_mode: str | None = None
    value: float | None = None  # partial credit where a task has it; else 1.0 / 0.0
    # Per-sample facts for diagnosis, copied into the results row's ``extra``: the clue a
    # zebra answer breaks (``detail``), FLenQA's predicted label and CoT checks, ...
    extra: dict[str, JSON] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return self.value if self.value is not None else (1.0 if self.correct else 0.0)


@dataclass(frozen=True)
class Outcome:
    """One answered sample: the row of the results file.

    ``correct`` is ``None`` exactly when ``error`` is set: a failed call is infrastructure,
    never a wrong answer.
    """

    item_id: str
    model: str
    task: str
    level: str
    seed: int
    prompt_sha256: str
    response: str | None
    extracted: str | None
    gold: str
    correct: bool | None
    failure_mode: str | None
    error: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    score: float | None = None
    cached: bool = False
    extra: dict[str, JSON] = field(default_factory=dict)
    # Added by issue 19 (older results files lack them; readers take these defaults).
    style: str | None = None
    suite: str | None = None  # the suite file and entry id the sample belongs to
    entry: str | None = None
    repeat: int = 0  # which of ``repeats`` samples of the same item this is
    repeats: int = 1
    model_id: str | None = None  # the model precisely: alias=model@api_base, or the GGUF's hash
    finish_reason: str | None = None
    reasoning_tokens: int | None = None
    reasoning: str | None = None  # "separate" (reasoning_content) or "tags" (<think>…</think>)
    extraction: str | None = None  # "strict", or "lenient:boxed" / "lenient:answer-is"
    error_kind: str | None = None  # see Reply.error_kind
    cost_usd: float | None = None
    # Paid for, never counted: asked ahead for a sequential level that settled before it
    # (issue 39). Its row says so; every reader leaves it out of verdicts and figures.
    not_needed: bool = False
    # Added by issue 41: a digest of the problem up to renaming (Task.problem_key), so that
    # samples of the same problem, whatever their item, are one cluster in a gate.
    problem: str | None = None
    # Added by issue 42: the model's reasoning sent apart (Reply.reasoning_text), clipped.
    reasoning_text: str | None = None

    def to_dict(self) -> dict[str, JSON]:
        data = json_fields(self)
        if not self.not_needed:  # the field only where it is true: older readers, same rows
            del data["not_needed"]
        if self.reasoning_text is None:  # likewise: rows without reasoning are unchanged
            del data["reasoning_text"]
        return data

    @property
    def cluster(self) -> str:
        """The item this sample answers: repeats of one item share it."""
        return cluster_id(self.item_id, self.repeat, self.repeats)

    @property
    def problem_cluster(self) -> str:
        """The problem this sample answers: items of the same problem up to renaming share
        it (rows without ``problem``, from older files, cluster by item)."""
        return f"problem:{self.problem}" if self.problem else self.cluster

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Outcome:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})
