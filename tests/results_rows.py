"""Results rows of the ``prop.yaml`` suite as a run writes them, and ``pytest-reasoning
gate`` over them."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_reasoning.cli import main
from pytest_reasoning.config import addresses, load_suite
from pytest_reasoning.core import Outcome, Reply
from pytest_reasoning.evaluate import score_reply
from pytest_reasoning.gates import RESULT_FIELDS
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item

PROP_SUITE = """\
name: prop
seed: 3
samples: 6
tasks:
  - task: dyval.boolean_logic
    levels:
      D1: {min_accuracy: 0.5}
      D2: {min_accuracy: 0.6}
  - task: dyval.arithmetic
    levels:
      D1: {min_accuracy: 0.5}
"""


_BASES: dict[str, tuple[tuple[Any, ...], ...]] = {}


def _suite_rows_base(folder: str) -> tuple[tuple[Any, ...], ...]:
    """(address fields, prompt hash, gold) of every sample of the folder's prop.yaml, the items
    built once per suite text: the rows do not depend on the folder (each Hypothesis example
    has a folder of its own)."""
    path = Path(folder) / "prop.yaml"
    text = path.read_text()
    if text not in _BASES:
        out = []
        for a in addresses(load_suite(path, display="prop.yaml")):
            item = a.make_item()
            out.append((a.sample_id, a.entry.id, a.entry.task, a.level.level, a.seed,
                        item.prompt_sha256, item.answer))  # fmt: skip
        _BASES[text] = tuple(out)
    return _BASES[text]


def _row(base: tuple[Any, ...], model: str, verdict: bool | None) -> dict[str, Any]:
    """A row as a run writes it: the gold answer when right, an unreadable one when wrong (a
    merge re-scores every row, and refuses one whose verdict is not its response's)."""
    sample_id, entry, task, level, seed, sha, gold = base
    said = None if verdict is None else gold if verdict else "x"
    outcome = Outcome(
        sample_id, model, task, level, seed, sha, None if said is None else f"<<<{said}>>>",
        said, gold, verdict, None if verdict in (True, None) else "format",
        "HTTP 500" if verdict is None else None, 10, 2, 0.1,
        suite="prop.yaml", entry=entry, error_kind="transient" if verdict is None else None,
    )  # fmt: skip
    row = outcome.to_dict()
    return {k: row[k] for k in RESULT_FIELDS}


def _write(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _gate(args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["gate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def random_outcomes(model: str, p: float, n: int, seed: int) -> list[Outcome]:
    """n answers of one level, each right with probability p (a seeded draw)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        ok = rng.random() < p
        out.append(
            Outcome(
                f"t[D1-s1-{i:03d}]", model, "t", "D1", 1, f"h{i}", "x", "x" if ok else "y", "x",
                ok, None if ok else "wrong", None, 1, 1, 0.1,
            )
        )
    return out


def truncated_outcomes(task: str, level: str, count: int) -> Iterator[Outcome]:
    """Replies of a reasoning model cut off at its token limit, scored."""
    for index in range(count):
        item = make_item(get_task(task), level, 1, index)
        reply = Reply(content="Let me think step by step about", finish_reason="length")
        outcome = score_reply(item, "gpt-5", reply)
        yield Outcome.from_dict(
            {**outcome.to_dict(), "extra": {**outcome.extra, "token_limit": ["max_completion_tokens", 1024]}}
        )
