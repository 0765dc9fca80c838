"""Frozen datasets: items as JSON lines in the export schema, written by ``pytest-reasoning
export`` or ``narrate`` or by hand, and read back as :class:`~pytest_reasoning.core.Item`s (a
suite entry's ``dataset:`` key, the shortcut audit, a notebook).

Reading checks every line before any item is used and stops at the first bad one with one line
naming the file, the line and the field. The file must be a regular file of at most
MAX_DATASET_BYTES (a FIFO or ``/dev/zero`` is refused before it is read); a line is JSON
nested at most ``files.MAX_JSON_DEPTH`` deep; a UTF-8 byte order mark at the start is allowed,
as in suite files. An item keeps its id and gold answer; its task must be
registered, and the task's own scorer must accept the gold answer (``<<<answer>>>`` scores as
correct), which also proves the scorer finds what it reads in ``problem``.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO, Any

from .core import Item, level_key
from .errors import InvalidArgument, InvalidDataset, UnknownTask, clip, quote
from .files import BadJSON, InputRefused, loads_bounded, open_input
from .registry import get_task
from .tasks import hooks
from .tasks.base import Task, check_style

__all__ = [
    "FIELDS",
    "MAX_DATASET_BYTES",
    "MAX_LINE_CHARS",
    "Dataset",
    "export_row",
    "item_from_row",
    "read_dataset",
    "write_row",
]

# Every field of a line: (required, type, meaning). docs/suites.md's table is generated from it.
FIELDS: dict[str, tuple[bool, str, str]] = {
    "id": (True, "non-empty string", "the item id, unique in the file; results rows keep it"),
    "task": (True, "task id", "the task whose scorer judges answers (`pytest-reasoning tasks`)"),
    "level": (True, "`[A-Za-z0-9_.:+-]+` (an integer is read as text)", "gated per level"),
    "prompt": (True, "non-empty string", "what the model is asked, verbatim"),
    "answer": (
        True,
        "string, or the task's JSON form (as `export` writes it)",
        "the gold answer",
    ),
    "problem": (
        False,
        "mapping",
        "what the task's scorer reads (MuSR's `choices` and `answer_index`, zebra's grid "
        "shape); needed where the scorer reads it",
    ),
    "seed": (False, "integer", "the generation seed (default 0)"),
    "index": (False, "integer", "the position in its batch (default: the line number - 1)"),
    "params": (False, "mapping", "the knobs it was made with (default `{}`)"),
    "style": (
        False,
        "a style the task offers",
        "the prompt style (default `direct`): sets the answer's token budget",
    ),
    "system": (
        False,
        "string",
        "the system prompt the item is asked with (a task's `system_prompt`)",
    ),
    "steps": (False, "string", "worked solution (`export --with-steps`); not used"),
    "narration": (False, "mapping", "provenance of a narrated item (`narrate`); not used"),
    "meta": (False, "any JSON", "your own notes; not used"),
}
_REQUIRED = tuple(k for k, (required, _, _) in FIELDS.items() if required)
_LEVEL = re.compile(r"^[A-Za-z0-9_.:+\-]+$")
MAX_LINE_CHARS = 20_000_000  # one item; a larger line is not an item but an accident
MAX_DATASET_BYTES = 1_000_000_000  # a larger file would not fit in memory as items: split it


@dataclass(frozen=True)
class Dataset:
    """The items of one file, in file order."""

    path: str  # as named in messages
    items: tuple[Item, ...]

    @property
    def tasks(self) -> list[str]:
        return sorted({i.task for i in self.items})

    def levels(self, task: str | None = None) -> list[str]:
        """The levels its items carry, in reading order (500 before 1000, L2 before L10)."""
        found = {i.level for i in self.items if task is None or i.task == task}
        return sorted(found, key=level_key)

    @cached_property
    def by_level(self) -> dict[str, tuple[Item, ...]]:
        """Items per level, each in file order (computed once)."""
        out: dict[str, list[Item]] = {}
        for item in self.items:
            out.setdefault(item.level, []).append(item)
        return {lv: tuple(found) for lv, found in out.items()}


def export_row(task: Task, item: Item, **extra: Any) -> dict[str, Any]:
    """The export schema's line for an item (``extra`` adds ``steps``, ``narration``)."""
    return {
        "id": item.id,
        "task": item.task,
        "level": item.level,
        "seed": item.seed,
        "index": item.index,
        "params": item.params,
        "style": item.style,
        "prompt": item.prompt,
        "answer": hooks.export_answer(task, item.answer),
        "problem": item.problem,
        # A task with a system prompt (docs/extending.md) asks with it.
        **({"system": item.system} if item.system is not None else {}),
        **extra,
    }


def write_row(out: IO[str], row: Mapping[str, Any]) -> None:
    """One line, the same bytes on every machine (key order as given, UTF-8, no spaces)."""
    out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def _type(v: Any) -> str:
    return "null" if v is None else type(v).__name__


def item_from_row(row: Any, *, path: str = "<items>", line: int = 1) -> Item:
    """One line's item, checked (InvalidDataset naming ``path:line`` and the field)."""

    def bad(field: str, message: str) -> InvalidDataset:
        return InvalidDataset(path, line, field, message)

    if not isinstance(row, dict):
        raise bad("", f"expected a JSON object, got {_type(row)}")
    unknown = sorted(k for k in row if k not in FIELDS)
    if unknown:
        name = unknown[0]  # any text: quoted unless it is a plain name (a line stays one line)
        raise bad(
            clip(name if name.isidentifier() else repr(name), 60),
            "unknown field; expected " + ", ".join(FIELDS) + " (put your own under 'meta')",
        )
    for key in _REQUIRED:
        if key not in row:
            raise bad(key, "missing")
    item_id = row["id"]
    if not isinstance(item_id, str) or not item_id.strip() or "\n" in item_id:
        got = f"{_type(item_id)} {quote(item_id)}"
        raise bad("id", f"expected a non-empty one-line string, got {got}")
    if not isinstance(row["task"], str):
        raise bad("task", f"expected a task id, got {_type(row['task'])}")
    try:
        task = get_task(row["task"])
    except UnknownTask as exc:
        raise bad("task", str(exc)) from None
    level = row["level"]
    if isinstance(level, int) and not isinstance(level, bool):
        level = str(level)
    if not isinstance(level, str) or not _LEVEL.match(level):
        raise bad("level", f"expected letters, digits or . _ : + -, got {quote(level)}")
    prompt = row["prompt"]
    if not isinstance(prompt, str) or not prompt.strip():
        raise bad("prompt", f"expected a non-empty string, got {_type(prompt)}")
    ints = {}
    for key, default in (("seed", 0), ("index", line - 1)):
        value = row.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad(key, f"expected an integer, got {_type(value)} {quote(value)}")
        ints[key] = value
    mappings = {}
    for key in ("problem", "params"):
        value = row.get(key, {})
        if not isinstance(value, dict):
            raise bad(key, f"expected a mapping, got {_type(value)}")
        mappings[key] = value
    style = row.get("style", "direct")
    if not isinstance(style, str):
        raise bad("style", f"expected a string, got {_type(style)}")
    try:
        check_style(task, style)
    except InvalidArgument as exc:
        raise bad("style", str(exc)) from None
    if row["answer"] is None:
        raise bad("answer", "expected the gold answer, got null")
    try:
        answer = hooks.import_answer(task, row["answer"])
    except Exception as exc:  # a structured answer of the wrong shape
        raise bad("answer", f"not an answer of {task.id}: {type(exc).__name__}: {exc}") from None
    item = Item(
        id=item_id,
        task=task.id,
        level=level,
        seed=ints["seed"],
        index=ints["index"],
        params=mappings["params"],
        style=hooks.style_aliases(task).get(style, style),
        prompt=prompt,
        answer=answer,
        problem=mappings["problem"],
        system=_system(row, bad),
    )
    _check_gold(task, item, bad)
    return item


def _check_gold(task: Task, item: Item, bad: Any) -> None:
    """The task's scorer must read the item and accept its own gold answer."""
    try:
        score = task.score(item, f"<<<{item.answer}>>>")
    except Exception as exc:  # the scorer needs a field the problem lacks
        raise bad(
            "problem", f"{task.id}'s scorer cannot read this item: {type(exc).__name__}: {exc}"
        ) from None
    if not score.correct:
        said = f" (it read {quote(score.extracted)}" + (
            f", {score.failure_mode})" if score.failure_mode else ")"
        )
        raise bad(
            "answer",
            f"{task.id}'s scorer does not accept the gold answer {item.answer!r:.80} as "
            f"correct{said}; check answer against problem",
        )


def _lines(fh: IO[str], path: str) -> Iterator[tuple[int, Any]]:
    n = 0
    while text := fh.readline(MAX_LINE_CHARS + 1):  # a line is read whole only if short enough
        n += 1
        if len(text) > MAX_LINE_CHARS:
            raise InvalidDataset(path, n, "", f"line longer than {MAX_LINE_CHARS:,} characters")
        if not text.strip():
            continue
        try:
            yield n, loads_bounded(text)
        except BadJSON as exc:
            raise InvalidDataset(path, n, "", str(exc)) from None


def read_dataset(path: str | Path, *, display: str | None = None) -> Dataset:
    """Every item of a JSONL file, checked; InvalidDataset (one line) on the first problem: a
    path that is not a regular file of at most MAX_DATASET_BYTES, a bad line, a duplicate id,
    an empty file."""
    shown = display or str(path)
    items: list[Item] = []
    first_line: dict[str, int] = {}
    try:
        raw = open_input(path, MAX_DATASET_BYTES, shown=shown, what="a dataset file")
    except InputRefused as exc:
        raise InvalidDataset(shown, None, "", exc.reason) from None
    try:
        # utf-8-sig: a byte order mark at the start is dropped, as suite files allow it.
        with io.TextIOWrapper(raw, encoding="utf-8-sig", newline=None) as fh:
            for n, row in _lines(fh, shown):
                item = item_from_row(row, path=shown, line=n)
                if item.id in first_line:
                    raise InvalidDataset(
                        shown, n, "id", f"duplicate id {quote(item.id)} (first on line "
                        f"{first_line[item.id]})",
                    )  # fmt: skip
                first_line[item.id] = n
                items.append(item)
    except UnicodeDecodeError as exc:
        raise InvalidDataset(shown, None, "", f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise InvalidDataset(shown, None, "", f"cannot read: {exc.strerror}") from None
    if not items:
        raise InvalidDataset(shown, None, "", "no items (expected one JSON object per line)")
    return Dataset(shown, tuple(items))


def _system(row: Mapping[str, Any], bad: Any) -> str | None:
    value = row.get("system")
    if value is not None and not isinstance(value, str):
        raise bad("system", f"expected a string, got {type(value).__name__}")
    return value
