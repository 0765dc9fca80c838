"""Independent checks of a gym dataset's verifier: it must reject perturbed gold answers.

reasoning-gym's items and gold answers were not made by us, so the pack checks what it can
from outside: a copy of the gold answer with one letter or digit changed (to another of the
same kind, case kept) or removed is a different answer, and a verifier that still gives it
full marks would pass wrong models. Verifiers that compare with a tolerance (numbers) or
accept several answers may do so legitimately; docs/tasks/gym.md lists each dataset's result
and marks the ones that accept any.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import entries

__all__ = ["accepted_perturbations", "perturb", "perturbations"]


def perturb(answer: str, position: int, mode: str) -> str | None:
    """``answer`` with its alphanumeric character number ``position`` (modulo their count)
    changed to the next of its kind (``mode='change'``) or removed (``'drop'``); None if the
    answer has no alphanumeric character or removing it leaves nothing."""
    spots = [i for i, c in enumerate(answer) if c.isalnum() and c.isascii()]
    if not spots:
        return None
    i = spots[position % len(spots)]
    c = answer[i]
    if mode == "drop":
        out = answer[:i] + answer[i + 1 :]
        return out if out.strip() else None
    if c.isdigit():
        r = str((int(c) + 1) % 10)
    else:
        base = ord("a") if c.islower() else ord("A")
        r = chr(base + (ord(c) - base + 1) % 26)
    return answer[:i] + r + answer[i + 1 :]


def perturbations(answer: str) -> list[str]:
    """The fixed set the docs table uses: the first, middle and last letter or digit changed,
    and the middle one removed."""
    n = sum(1 for c in answer if c.isalnum() and c.isascii())
    out = [perturb(answer, k, "change") for k in (0, n // 2, n - 1)]
    out.append(perturb(answer, n // 2, "drop"))
    return [p for p in dict.fromkeys(out) if p is not None and p != answer]


def accepted_perturbations(
    dataset: str, params: Mapping[str, Any], seeds: range
) -> tuple[int, int, str | None]:
    """(perturbed answers given full marks, perturbed answers tried, one accepted example)."""
    accepted = tried = 0
    example = None
    for seed in seeds:
        entry, _ = entries.entry_at(dataset, params, seed)
        gold = str(entry["answer"])
        for wrong in perturbations(gold):
            tried += 1
            if entries.score_at(dataset, params, seed, wrong) >= 1.0:
                accepted += 1
                example = example or f"{gold!r} -> {wrong!r}"
    return accepted, tried, example
