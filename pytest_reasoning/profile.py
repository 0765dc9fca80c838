"""Failure-mode profiles: what a model gets wrong per (task, level), in a stable text form.

Shares are bucketed (default 5 points) so sampling noise does not churn a snapshot. The text is
keyed by task and level and names no model, and by default holds no example item (an item's
extracted answer is one model's), so a snapshot recorded with one model and checked with
another differs only where the modes moved: ``partial_calculation: ~10%`` → ``~35%``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .core import Outcome

__all__ = ["FailureProfile"]


def _bucket(share: float, step: int) -> int:
    return int(math.floor(share * 100 / step + 0.5) * step)  # halves up, not to even


@dataclass(frozen=True)
class FailureProfile:
    """A rendered profile; compare with ``==`` or hand it to a syrupy snapshot."""

    text: str

    @classmethod
    def from_outcomes(
        cls, outcomes: Iterable[Outcome], *, bucket: int = 5, examples: int = 0
    ) -> FailureProfile:
        """One model's profile. ``examples`` > 0 adds that many failing items per level (the
        first by id, with the extracted answer and gold): those lines are the model's own, so
        a snapshot holding them changes with any change of answers, not only of modes."""
        groups: dict[tuple[str, str], list[Outcome]] = {}
        models: set[str] = set()
        for o in outcomes:
            groups.setdefault((o.task, o.level), []).append(o)
            models.add(o.model)
        if len(models) > 1:
            from .errors import InvalidArgument, clip, printable

            raise InvalidArgument(
                f"a failure profile is one model's; these outcomes are {len(models)} models' "
                f"({printable(clip(', '.join(sorted(models)), 120))}): profile each apart"
            )
        lines: list[str] = []
        for (task, level), rows in sorted(groups.items()):
            answered = [o for o in rows if o.error is None]
            errors = len(rows) - len(answered)
            lines.append(f"{task} {level} ({len(answered)} answered, {errors} errors)")
            if not answered:
                continue
            correct = sum(bool(o.correct) for o in answered)
            lines.append(f"  accuracy: ~{_bucket(correct / len(answered), bucket)}%")
            modes: dict[str, int] = {}
            for o in answered:
                if not o.correct:
                    mode = o.failure_mode or "wrong"
                    modes[mode] = modes.get(mode, 0) + 1
            for mode, count in sorted(modes.items()):
                lines.append(f"  {mode}: ~{_bucket(count / len(answered), bucket)}%")
            failing = sorted((o for o in answered if not o.correct), key=lambda o: o.item_id)
            for o in failing[:examples]:
                lines.append(
                    f"  e.g. {o.item_id}: answered {o.extracted!r} ({o.failure_mode}), "
                    f"gold {o.gold!r}"
                )
        return cls("\n".join(lines) + "\n")

    def __str__(self) -> str:
        return self.text
