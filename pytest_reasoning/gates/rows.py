"""Results files read back, every row type-checked: a verdict read from a file is only as good
as the fields it counts, so a row whose ``correct`` is the string ``"false"``, whose score is
NaN or whose error kind is unknown stops the reader with one line naming ``file:line: field``
— it is never counted (``"false"`` is truthy; NaN compares false with everything).

A line that is not JSON at all is the torn last row of a killed run (a rerun appends after it
on a fresh line): it is skipped and counted, and its sample is then missing, so its level is
partial and not decided — never decided on a guess.

A row's item address (``extra.address``: index, knobs, style) is what the report rebuilds its
prompt from, and generating item ``k`` of a batch of distinct problems walks every item before
it: an address is kept only when its index is one a suite can ask (below
:data:`MAX_ITEM_INDEX` + 1) and its knobs pass the task's own checks (``resolve_params``,
the bounds a suite's knobs meet). Otherwise it is dropped when the row is read — the verdict
counts the row as before; the report shows that sample without its prompt — so one row can
never make a report walk 10**18 items or build a 3.8 GB problem.

A row marked ``not_needed`` is a paid answer a sequential level did not need (asked ahead of
its stop): it is a sample's row like any other (the last row of a sample wins), and a sample
whose last row is one is left out of ``rows`` — out of every verdict, table and report —
and counted in ``not_needed``."""

from __future__ import annotations

import errno
import io
import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ReasoningError, clip
from ..files import InputRefused, open_input
from ..tasks.base import resolve_params
from .store import NOT_NEEDED, RESULT_FIELDS

__all__ = [
    "ERROR_KINDS",
    "MAX_ITEM_INDEX",
    "MAX_RESULTS_BYTES",
    "MAX_ROW_BYTES",
    "InvalidResults",
    "ResultsFile",
    "bound_address",
    "check_row",
    "load_results",
    "read_results",
    "row_key",
]

# The kinds of call error (``Reply.error_kind``); ``None`` on rows of older files.
ERROR_KINDS = ("stop", "request", "transient", "not_asked")
# A results file is read whole (a merge needs every row): 100,000 rows of long reasoning
# replies stay far below this; a larger file is an accident, refused before it is read.
MAX_RESULTS_BYTES = 4 << 30
# One row: a reply is capped at 1,000,000 characters when it arrives (up to 6 bytes each as
# escaped JSON), its reasoning text likewise; a longer line is not a row of ours.
MAX_ROW_BYTES = 16 << 20

# Fields every results row has carried since the first release: the documented row up to
# ``score`` (later ones default).
_REQUIRED = RESULT_FIELDS[: RESULT_FIELDS.index("score")]
_TEXT = ("item_id", "model", "task", "level", "prompt_sha256", "gold")
_OPTIONAL_TEXT = (
    "response",
    "extracted",
    "failure_mode",
    "error",
    "style",
    "suite",
    "entry",
    "model_id",
    "finish_reason",
    "reasoning",
    "extraction",
    "problem",
    "reasoning_text",
)
_COUNTS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")
# The largest item index a suite asks for (config.MAX_SAMPLES - 1; config sits above gates).
MAX_ITEM_INDEX = 99_999


class InvalidResults(ReasoningError):
    """A results file that cannot be counted: ``file:line: field: expected …, got …``."""


class _BadField(ValueError):
    def __init__(self, name: str, expected: str, got: Any) -> None:
        super().__init__(f"{name}: expected {expected}, got {_shown(got)}")


def _shown(value: Any) -> str:
    if value is _MISSING:
        return "nothing (the field is missing)"
    return clip(json.dumps(value, ensure_ascii=False, allow_nan=True, default=str), 60)


_MISSING = object()


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_row(row: Any) -> None:
    """Raise ValueError (``field: expected …, got …``) unless ``row`` is a results row whose
    every field a verdict, a table or a report reads has its type: text, a bool ``correct``
    exactly when ``error`` is null, finite non-negative numbers, a known error kind."""
    if not isinstance(row, dict):
        raise ValueError(f"expected a JSON object (a results row), got {_shown(row)}")
    for name in _REQUIRED:
        if name not in row:
            raise _BadField(name, "a field every results row has", _MISSING)
    for name in _TEXT:
        if not isinstance(row[name], str):
            raise _BadField(name, "text", row[name])
    for name in _OPTIONAL_TEXT:
        value = row.get(name)
        if value is not None and not isinstance(value, str):
            raise _BadField(name, "text or null", value)
    seed = row["seed"]
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise _BadField("seed", "an integer", seed)
    error, correct = row["error"], row["correct"]
    if error is None and not isinstance(correct, bool):
        raise _BadField("correct", "true or false (error is null)", correct)
    if error is not None and correct is not None:
        raise _BadField("correct", "null (a call that failed has no verdict)", correct)
    score = row.get("score")
    if score is not None and not (_number(score) and 0.0 <= score <= 1.0):
        raise _BadField("score", "a number from 0 to 1, or null", score)
    for name in _COUNTS:
        value = row.get(name)
        if value is not None and not (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0
        ):
            raise _BadField(name, "a count (an integer >= 0) or null", value)
    latency = row["latency_s"]
    if not (_number(latency) and latency >= 0):
        raise _BadField("latency_s", "a number of seconds >= 0", latency)
    cost = row.get("cost_usd")
    if cost is not None and not (_number(cost) and cost >= 0):
        raise _BadField("cost_usd", "a price >= 0 or null", cost)
    if not isinstance(row.get("cached", False), bool):
        raise _BadField("cached", "true or false", row["cached"])
    if not isinstance(row.get(NOT_NEEDED, False), bool):
        raise _BadField(NOT_NEEDED, "true or false", row[NOT_NEEDED])
    if not isinstance(row.get("extra", {}), dict):
        raise _BadField("extra", "an object", row["extra"])
    repeat, repeats = row.get("repeat", 0), row.get("repeats", 1)
    for name, value, low in (("repeats", repeats, 1), ("repeat", repeat, 0)):
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= low):
            raise _BadField(name, f"an integer >= {low}", value)
    if repeat >= repeats:
        raise _BadField("repeat", f"below repeats ({repeats})", repeat)
    kind = row.get("error_kind")
    if kind is not None and kind not in ERROR_KINDS:
        raise _BadField("error_kind", "one of " + ", ".join(ERROR_KINDS) + " or null", kind)


def bound_address(row: dict[str, Any], checked: dict[tuple[str, str, str], bool]) -> bool:
    """Drop ``row``'s item address (``extra.address``) unless a report may rebuild its prompt
    from it: an index from 0 to :data:`MAX_ITEM_INDEX`, a style, knobs the task's own checks
    accept (``checked`` remembers each task, level and knobs' answer; a task not installed
    here keeps its address: nothing here can generate from it). Returns whether it dropped."""
    extra = row.get("extra")
    if not isinstance(extra, dict) or extra.get("address") is None:
        return False
    if not _address_fits(row, extra["address"], checked):
        row["extra"] = {k: v for k, v in extra.items() if k != "address"}
        return True
    return False


def _address_fits(
    row: Mapping[str, Any], address: Any, checked: dict[tuple[str, str, str], bool]
) -> bool:
    if not isinstance(address, dict) or not isinstance(address.get("style"), str):
        return False
    index, params = address.get("index"), address.get("params")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= MAX_ITEM_INDEX:
        return False
    if not isinstance(params, dict):
        return False
    try:  # the knobs as written (rows of one run write them alike): checked once each
        knobs = repr(params)
    except RecursionError:
        return False
    key = (str(row["task"]), str(row["level"]), knobs)
    if key not in checked:
        checked[key] = _knobs_pass(key[0], key[1], params)
    return checked[key]


def _knobs_pass(task_id: str, level: str, params: Mapping[str, Any]) -> bool:
    from ..registry import get_task  # only for rows with an address: gates stay light

    try:
        task = get_task(task_id)
    except ReasoningError:
        return True  # not installed here: no generation can follow
    try:
        resolve_params(task, level, params)
    except Exception:  # InvalidArgument, UnknownLevel, a task's own check failing oddly
        return False
    return True


def row_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes a row a distinct sample: its suite file and entry (two suites that gate one
    task and level with one seed ask the same items, and each decides on its own rows), the
    item, the model as named and precisely (two local GGUFs are both ``local``), the prompt (a
    CoT and a direct run of one entry share item ids) and the repeat. Rows of older files lack
    the later fields and key as before."""
    return (
        row.get("suite"),
        row.get("entry"),
        row["item_id"],
        row["model"],
        row.get("model_id"),
        row.get("prompt_sha256"),
        row.get("repeat") or 0,
    )


@dataclass
class ResultsFile:
    """A results file's rows (the last row of each sample winning, in its place; with
    ``every``, all of them), the line number of each, the line numbers of torn lines (no whole
    JSON row: skipped) and the rows of samples asked ahead and not needed (paid for, left out
    of ``rows``)."""

    path: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    torn: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # rows[k] is on line lines[k]
    unaddressed: list[int] = field(default_factory=list)  # lines whose address was dropped
    not_needed: list[dict[str, Any]] = field(default_factory=list)


def load_results(path: str | os.PathLike[str], *, every: bool = False) -> ResultsFile:
    """Read and type-check a results file. Raises InvalidResults (one line) for a path that
    is not a regular file under :data:`MAX_RESULTS_BYTES`, and for the first row a verdict
    could miscount (``file:line: field: expected …``); FileNotFoundError if it is missing.
    ``every``: every row in file order, duplicates too (a merge names those that disagree)."""
    shown = os.fspath(path)
    if not os.path.lexists(path):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), shown)
    try:  # checked on the opened file: a FIFO cannot hang, /dev/zero cannot fill memory
        raw = open_input(path, MAX_RESULTS_BYTES, shown=shown, what="a results file")
    except InputRefused as exc:
        raise InvalidResults(f"{shown}: {exc.reason}") from None
    out = ResultsFile(shown)
    rows: dict[tuple[Any, ...], tuple[int, dict[str, Any]]] = {}
    checked: dict[tuple[str, str, str], bool] = {}  # knobs, by task and level
    # utf-8-sig: a byte order mark (a file saved by a Windows editor) is not part of row 1.
    with io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace") as fh:
        number = 0
        while True:
            line = fh.readline(MAX_ROW_BYTES + 1)
            if not line:
                break
            number += 1
            if len(line) > MAX_ROW_BYTES:
                raise InvalidResults(
                    f"{shown}:{number}: a line longer than {MAX_ROW_BYTES:,} characters is "
                    "no results row"
                )
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                out.torn.append(number)
                continue
            except RecursionError:
                raise InvalidResults(
                    f"{shown}:{number}: nested too deeply to be a results row"
                ) from None
            try:
                check_row(row)
            except ValueError as exc:
                raise InvalidResults(f"{shown}:{number}: {exc}") from None
            if bound_address(row, checked):
                out.unaddressed.append(number)
            if every:
                out.rows.append(row)
                out.lines.append(number)
                continue
            rows.pop(row_key(row), None)  # the last row wins, in its own place
            rows[row_key(row)] = (number, row)
    if every:
        return out
    # A rerun of an older file appends rows that name the model precisely: they replace the
    # older rows of the same sample, which did not.
    precise = {_imprecise(k) for k in rows if k[_MODEL_ID] is not None}
    for key, (number, row) in rows.items():
        if key[_MODEL_ID] is not None or _imprecise(key) not in precise:
            if row.get(NOT_NEEDED):
                out.not_needed.append(row)
            else:
                out.rows.append(row)
                out.lines.append(number)
    return out


_MODEL_ID = 4  # where row_key puts the model_id


def _imprecise(key: tuple[Any, ...]) -> tuple[Any, ...]:
    return key[:_MODEL_ID] + key[_MODEL_ID + 1 :]


def read_results(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The checked rows of a results file (see :func:`load_results`)."""
    yield from load_results(path).rows
