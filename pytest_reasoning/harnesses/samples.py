"""Another harness's scored samples as our results rows: the shape every reader fills
(:class:`Sample`), the rows it becomes (:func:`to_rows`), and the documented JSONL shape of
our own for any other tool (:func:`read_jsonl`).

A sample's task is its entry and its scoring (an inspect_ai scorer, an lm-evaluation-harness
``metric,filter``) its level, so ``reach[pattern-gate]`` gates the ``pattern`` scorer's
verdicts on task ``reach``. Repeats of a sample (inspect_ai's epochs) get the item ids our own
repeats get (``task[id-r2]``), so they are clustered, pass@k'd and paired per item as ours are.
Everything read is data: text is kept as text (shown through ``errors.printable`` wherever it
is shown), numbers are checked, and a row a verdict could miscount is refused in one line."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ReasoningError, clip, quote
from ..files import BadJSON, InputRefused, loads_bounded, open_input
from ..gates.rows import MAX_ROW_BYTES, check_row

__all__ = [
    "MAX_LOG_BYTES",
    "HarnessLog",
    "InvalidLog",
    "Sample",
    "field_dict",
    "json_lines",
    "read_jsonl",
    "score_value",
    "text_of",
    "to_rows",
]

# A log is read whole (every sample counts): far above any real run, below what fills memory.
MAX_LOG_BYTES = 2 << 30
MAX_ID = 200  # characters of a sample id kept in an item id (longer ones end in a digest)
MAX_TEXT = 1_000_000  # characters of a prompt, reply or target kept (as our own rows)
MAX_ERROR = 500
# inspect_ai's letter values (``inspect_ai.scorer``: CORRECT, INCORRECT, PARTIAL, NOANSWER).
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "correct": 1.0, "no": 0.0, "false": 0.0, "incorrect": 0.0}


class InvalidLog(ReasoningError):
    """A log that cannot be counted: ``file: where: what``, one line."""


@dataclass(frozen=True)
class Sample:
    """One scored answer of another harness (``value``: its score in [0, 1]; None with
    ``error``: a call that failed, infrastructure, never a wrong answer)."""

    task: str
    level: str  # the scoring: a scorer, or lm-evaluation-harness's ``metric,filter``
    sample_id: str
    model: str
    value: float | None
    epoch: int = 1  # 1-based, as inspect_ai counts
    prompt: str = ""
    response: str | None = None
    extracted: str | None = None
    target: str = ""
    error: str | None = None
    no_answer: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    seconds: float = 0.0
    prompt_sha256: str | None = None  # the harness's own hash of the prompt, where it has one


@dataclass
class HarnessLog:
    """What the readers found: samples in the order read, the samples each (model, task,
    level) should hold where a log says (a run that stopped holds fewer: not decided), and
    notes for the summary."""

    harness: str
    samples: list[Sample] = field(default_factory=list)
    planned: dict[tuple[str, str, str], int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sources: dict[tuple[str, str, str], str] = field(default_factory=dict)  # → a file


def field_dict(found: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``found[name]`` where it is an object, else an empty one (a field a log may lack)."""
    value = found.get(name)
    return value if isinstance(value, dict) else {}


def score_value(value: Any, where: str) -> float:
    """A harness's per-sample score as a number in [0, 1]: true/false, inspect_ai's letters
    (C 1, I 0, P 0.5, N 0), yes/no, or a number from 0 to 1. ValueError (one line) else."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        if math.isfinite(value) and 0.0 <= value <= 1.0:
            return float(value)
        raise ValueError(f"{where}: score {clip(repr(value), 40)} is not in [0, 1]")
    if isinstance(value, str):
        found = _LETTERS.get(value.strip())
        if found is None:
            found = _WORDS.get(value.strip().lower())
        if found is not None:
            return found
    raise ValueError(
        f"{where}: score {quote(value, 40)} is no verdict (true/false, C/I/P/N, yes/no or a "
        "number from 0 to 1); choose another with `score:` in the thresholds file"
    )


def text_of(value: Any, limit: int = MAX_TEXT) -> str:
    """Text from a harness's field: text as it is, chat messages and content parts by their
    text, anything else as JSON; clipped to ``limit``."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        parts = []
        for v in value:
            content = v.get("content", v.get("text"))
            role = v.get("role")
            inner = text_of(content, limit) if content is not None else ""
            parts.append(f"{role}: {inner}" if isinstance(role, str) else inner)
        return "\n".join(parts)[:limit]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " | ".join(value)[:limit]
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)[:limit]
    except (TypeError, ValueError, RecursionError):
        return ""


def _item_id(task: str, level: str, sample_id: str, epoch: int, epochs: int) -> str:
    """``task:level[id]`` (``…[id-r2]`` for the third of several epochs): the level is part
    of the item, as a suite's is, so two scorings of one answer never pool into one item."""
    sid = sample_id
    if len(sid) > MAX_ID:  # bounded, and still distinct
        digest = hashlib.sha256(sid.encode("utf-8", "replace")).hexdigest()[:12]
        sid = f"{sid[: MAX_ID - 13]}~{digest}"
    return f"{task}:{level}[{sid}" + (f"-r{epoch - 1}]" if epochs > 1 else "]")


def to_rows(log: HarnessLog) -> list[dict[str, Any]]:
    """Our results rows for ``log``'s samples (the last of a sample read twice kept, named in
    the log's notes); each row type-checked as a results file's would be."""
    epochs: dict[tuple[str, str, str], int] = {}
    kept: dict[tuple[str, str, str, str, int], Sample] = {}
    twice = 0
    for s in log.samples:
        key = (s.model, s.task, s.level, s.sample_id, s.epoch)
        twice += key in kept
        kept.pop(key, None)
        kept[key] = s
        where = (s.model, s.task, s.level)
        epochs[where] = max(epochs.get(where, 1), s.epoch)
    if twice:
        log.notes.append(
            f"{twice} sample(s) read twice (the same epoch of a sample): the last kept"
        )
    rows = []
    for s in kept.values():
        times = epochs[(s.model, s.task, s.level)]
        failed = s.error is not None
        row: dict[str, Any] = {
            "item_id": _item_id(s.task, s.level, s.sample_id, s.epoch, times),
            "model": s.model,
            "task": s.task,
            "level": s.level,
            "seed": 0,
            "prompt_sha256": s.prompt_sha256 or _sha256(s.prompt),
            "response": s.response,
            "extracted": s.extracted,
            "gold": s.target,
            "correct": None if failed else s.value == 1.0,
            "failure_mode": "no_answer" if s.no_answer and not failed else None,
            "error": clip(s.error, MAX_ERROR) if s.error is not None else None,
            "prompt_tokens": s.prompt_tokens,
            "completion_tokens": s.completion_tokens,
            "latency_s": s.seconds,
            "score": None if failed else s.value,
            "extra": {"harness": log.harness, "sample_id": s.sample_id},
            "suite": log.harness,
            "entry": s.task,
            "repeat": s.epoch - 1,
            "repeats": times,
            "reasoning_tokens": s.reasoning_tokens,
            "error_kind": "transient" if failed else None,
        }
        try:
            check_row(row)
        except ValueError as exc:  # a reader's bug or a field no check above caught
            source = log.sources.get((s.model, s.task, s.level), log.harness)
            raise InvalidLog(f"{source}: sample {quote(s.sample_id, 80)}: {exc}") from None
        rows.append(row)
    return rows


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def _count(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _text_field(row: Mapping[str, Any], name: str, shown: str) -> str | None:
    value = row.get(name)
    if value is None:
        return None
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise InvalidLog(f"{shown}: {name}: expected text, got {quote(value, 40)}")
    return str(value)


def read_jsonl(paths: Iterable[str], scores: Mapping[str, str]) -> HarnessLog:
    """Files in the documented sample shape (docs/harnesses.md): one JSON object a line with
    ``task``, ``id``, ``model`` and ``correct`` (true/false) or ``score`` (0 to 1), optionally
    ``epoch`` (from 1), ``level``, ``input``, ``output``, ``answer``, ``target``, ``error``,
    ``input_tokens``, ``output_tokens``, ``seconds``. ``scores`` is unused (one score a row)."""
    del scores
    log = HarnessLog("jsonl")
    for path in paths:
        for shown, row in json_lines(path, "a samples file"):
            if isinstance(row, BadJSON):
                raise InvalidLog(f"{shown}: {row}")
            log.samples.append(_jsonl_sample(row, shown))
            s = log.samples[-1]
            log.sources.setdefault((s.model, s.task, s.level), os.fspath(path))
    return log


def json_lines(path: str, what: str) -> Iterator[tuple[str, Any]]:
    """The non-blank lines of a JSONL log, each as (``path:line``, its parsed value, or the
    :class:`BadJSON` it raised: a killed run's torn last line is the caller's to judge),
    read bounded: InvalidLog (one line) for a file that is no regular file under
    ``MAX_LOG_BYTES`` or a line longer than ``MAX_ROW_BYTES``."""
    try:
        raw = open_input(path, MAX_LOG_BYTES, what=what)
    except InputRefused as exc:
        raise InvalidLog(str(exc)) from None
    with raw:
        number = 0
        while True:
            line = raw.readline(MAX_ROW_BYTES + 1)
            if not line:
                break
            number += 1
            shown = f"{path}:{number}"
            if len(line) > MAX_ROW_BYTES:
                raise InvalidLog(f"{shown}: a line longer than {MAX_ROW_BYTES:,} bytes")
            if not line.strip():
                continue
            try:
                yield shown, loads_bounded(line.decode("utf-8-sig", "replace"))
            except BadJSON as exc:
                yield shown, exc


def _jsonl_sample(row: Any, shown: str) -> Sample:
    if not isinstance(row, dict):
        raise InvalidLog(f"{shown}: expected a JSON object (a sample), got {quote(row, 40)}")
    fields = {}
    for name in ("task", "id", "model"):
        text = _text_field(row, name, shown)
        if not text:
            raise InvalidLog(f"{shown}: {name}: expected text, got nothing")
        fields[name] = text
    error = _text_field(row, "error", shown)
    value: float | None = None
    correct = row.get("correct")
    if error is None:
        if correct is not None and not isinstance(correct, bool):
            raise InvalidLog(f"{shown}: correct: expected true or false, got {quote(correct, 40)}")
        if correct is None and row.get("score") is None:
            raise InvalidLog(f"{shown}: correct: expected true or false (or a score), got nothing")
        try:
            if row.get("score") is not None:
                value = score_value(row["score"], shown)
        except ValueError as exc:
            raise InvalidLog(str(exc)) from None
        if value is None:
            value = float(bool(correct))
        elif correct is not None and (value == 1.0) != correct:
            raise InvalidLog(f"{shown}: correct and score disagree")
    epoch = row.get("epoch", 1)
    if not isinstance(epoch, int) or isinstance(epoch, bool) or not 1 <= epoch <= 1000:
        raise InvalidLog(
            f"{shown}: epoch: expected an integer from 1 to 1000, got {quote(epoch, 40)}"
        )
    seconds = row.get("seconds", 0.0)
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not (
        math.isfinite(seconds) and seconds >= 0
    ):
        raise InvalidLog(f"{shown}: seconds: expected a number >= 0, got {quote(seconds, 40)}")
    return Sample(
        task=fields["task"],
        level=_text_field(row, "level", shown) or "all",
        sample_id=fields["id"],
        model=fields["model"],
        value=value,
        epoch=epoch,
        prompt=text_of(row.get("input", "")),
        response=_text_field(row, "output", shown),
        extracted=_text_field(row, "answer", shown),
        target=text_of(row.get("target", "")),
        error=error,
        prompt_tokens=_count(row.get("input_tokens")),
        completion_tokens=_count(row.get("output_tokens")),
        seconds=float(seconds),
    )
