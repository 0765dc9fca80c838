"""Rows re-checked against the suites before a merge counts them (issue 39).

A results row says which prompt it answered (``prompt_sha256``) and whether the answer was
right (``correct``, ``score``). A merge counts neither on the row's word: each row's prompt must
be the one its suite generates today, and its verdict the one the task's own scorer gives its
response against the suite's gold (the scoring of a live run, ``evaluate.score_reply``). A row
that fails either is refused — exit status 4, nothing decided: results of an older generator,
of another scorer, or an edited row are never gated as current.

The generator is a pure function of the address, so each addressed item is generated once
(the models and repeats of one item share it), and each distinct response of an item is
scored once. Generation is what costs (0.3 to 15 ms an item, by task): a large merge spreads
the generator batches over worker processes."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .config import Address
from .core import Item, Reply, canonical_json
from .errors import ReasoningError, quote
from .evaluate import score_reply

__all__ = ["PARALLEL_FROM", "SHOWN", "Origin", "RefusedRows", "recheck"]

SHOWN = 5  # rows named per results file; the rest are counted
# Below this many items a merge generates them itself: a worker costs its start and imports.
PARALLEL_FROM = 1_000


@dataclass(frozen=True)
class Origin:
    """Where a row was read: ``path:line``."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


class RefusedRows(ReasoningError):
    """Rows a merge will not count: one line per problem (``problems``)."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = tuple(problems)


def recheck(
    rows: Iterable[tuple[dict[str, Any], Origin, Address]], *, workers: int | None = None
) -> None:
    """Raise :class:`RefusedRows` unless every row answers its address's prompt as generated
    today and its ``correct`` (and ``score``) is what the task's scorer says of its response.
    Rows of failed calls carry no verdict: only their prompt is checked. ``workers``: the
    processes that generate the items (default: this one, or one per CPU from
    :data:`PARALLEL_FROM` items)."""
    rows = list(rows)
    groups: dict[tuple[Any, ...], list[int]] = {}
    knobs: dict[int, str] = {}  # id(level spec) → its knobs as canonical JSON
    for k, (_, _, address) in enumerate(rows):
        groups.setdefault(_batch(address, knobs), []).append(k)
    work = [[(rows[k][2], _slim(rows[k][0])) for k in ks] for ks in groups.values()]
    found: list[str | None] = [None] * len(rows)
    for ks, said in zip(groups.values(), _run(work, workers), strict=True):
        for k, problem in zip(ks, said, strict=True):
            found[k] = problem
    stale: dict[str, int] = {}
    lying: dict[str, list[str]] = {}
    for (_, origin, _), problem in zip(rows, found, strict=True):
        if problem == _STALE:
            stale[origin.path] = stale.get(origin.path, 0) + 1
        elif problem:
            lying.setdefault(origin.path, []).append(f"{origin}: {problem}")
    problems = [
        f"{path}: {n} row(s) answer a prompt their suite does not generate today (written by "
        "another version of the generator, or with other knobs): refused; rerun those samples "
        "with this version"
        for path, n in stale.items()
    ]
    for path, lines in lying.items():
        problems += lines[:SHOWN]
        if len(lines) > SHOWN:
            problems.append(
                f"{path}: {len(lines) - SHOWN} more row(s) whose verdict is not their "
                "response's: refused"
            )
    if problems:
        raise RefusedRows(problems)


_STALE = ""  # a row's prompt is not its address's
# The fields of a row the checks read (only these travel to a worker process).
_READ = ("model", "prompt_sha256", "error", "response", "finish_reason", "reasoning",
         "extraction", "correct", "score")  # fmt: skip


def _slim(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row.get(k) for k in _READ}


def _batch(address: Address, knobs: dict[int, str]) -> tuple[Any, ...]:
    """The generator batch of a sample: its items are drawn in one sequence (a level with
    ``unique`` replays the draws before an item), so one process generates them all. Two
    suites (or entries) that ask one task's level with one seed and knobs share it."""
    if address.entry.dataset is not None:  # the file's own items: read, not generated
        return (address.suite, address.entry.id, address.level.level)
    level = address.level
    if id(level) not in knobs:
        knobs[id(level)] = canonical_json(level.params)
    return (address.entry.task, level.level, address.seed, knobs[id(level)])


def _run(
    work: Sequence[Sequence[tuple[Address, dict[str, Any]]]], workers: int | None
) -> list[list[str | None]]:
    """:func:`_check` of every batch, in order: in this process, or for a large merge over
    worker processes."""
    if workers is None:
        items = sum(len({(a.index, a.level.style) for a, _ in batch}) for batch in work)
        cpus = (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )
        workers = cpus if items >= PARALLEL_FROM else 1
    workers = min(workers, len(work))
    if workers <= 1:
        return [_check(batch) for batch in work]
    import multiprocessing

    # The largest batches first, so no worker is left alone with one at the end.
    order = sorted(range(len(work)), key=lambda k: -len(work[k]))
    out: list[list[str | None]] = [[] for _ in work]
    # multiprocessing's Pool (as the export's): on Ctrl-C its workers end at once.
    pool = multiprocessing.Pool(processes=workers, initializer=_worker_signals)
    try:
        for k, said in zip(order, pool.imap(_check, [work[k] for k in order]), strict=True):
            out[k] = said
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
    return out


def _worker_signals() -> None:
    """In a worker: SIGTERM ends it, and Ctrl-C is left to the main process, which
    terminates the workers."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _check(batch: Sequence[tuple[Address, dict[str, Any]]]) -> list[str | None]:
    """For each row of one generator batch: None when it holds, :data:`_STALE` when its prompt
    is not its address's, else why its verdict is not the scorer's. Each item is generated
    once, each distinct response of an item scored once."""
    items: dict[tuple[int, str], Item] = {}
    verdicts: dict[tuple[Any, ...], tuple[bool | None, float | None, str | None]] = {}
    out: list[str | None] = []
    for address, row in batch:
        where = (address.index, address.level.style)
        item = items.get(where)
        if item is None:
            item = items[where] = address.make_item()
        if row["prompt_sha256"] != item.prompt_sha256:
            out.append(_STALE)
            continue
        if row["error"] is not None:
            out.append(None)
            continue
        lenient = str(row["extraction"] or "").startswith("lenient")
        separate = row["reasoning"] == "separate"
        key = (*where, row["response"], row["finish_reason"], separate, lenient)
        verdict = verdicts.get(key)
        if verdict is None:
            reply = Reply(
                content=row["response"],
                finish_reason=row["finish_reason"],
                reasoning_chars=1 if separate else None,
            )
            again = score_reply(item, str(row["model"]), reply, lenient=lenient)
            verdict = verdicts[key] = (again.correct, again.score, again.extracted)
        out.append(_disagreement(row, verdict, item))
    return out


def _disagreement(
    row: dict[str, Any], verdict: tuple[bool | None, float | None, str | None], item: Item
) -> str | None:
    """Why a row's verdict is not the scorer's, or None when they agree."""
    correct, score, extracted = verdict
    why = ""
    if correct != row["correct"]:
        why = f"correct is {_json(row['correct'])}, but"
    elif (
        row.get("score") is not None
        and score is not None
        and not math.isclose(float(row["score"]), score, abs_tol=1e-9)
    ):
        why = f"score is {row['score']:g}, but"
    if not why:
        return None
    read = "no answer" if extracted is None else f"the answer {quote(extracted, 80)}"
    said = "right" if correct else "wrong"
    if score is not None and 0.0 < score < 1.0:
        said = f"worth {score:g}"
    return (
        f"{why} the task's scorer reads {read} in its response, {said} against the suite's "
        f"gold {quote(item.answer, 80)}: refused (an edited row, or another scorer's)"
    )


def _json(value: Any) -> str:
    return "true" if value is True else "false" if value is False else repr(value)
