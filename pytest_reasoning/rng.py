"""One randomness source for every generator: a small Chooser protocol.

Generators never touch the global ``random``; a seeded Chooser makes evaluation items
(any item can be rebuilt from its id) and a draw-backed Chooser lets Hypothesis shrink.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

__all__ = [
    "SEED_FORMS",
    "Chooser",
    "SeededChooser",
    "derive_seed",
    "resolve_seed",
    "weighted_choice",
]

T = TypeVar("T")


class Chooser(Protocol):
    """What a generator may ask of its randomness source."""

    def randint(self, low: int, high: int) -> int:
        """An integer in ``[low, high]`` inclusive."""
        ...

    def choice(self, options: Sequence[T]) -> T:
        """One element of a non-empty sequence."""
        ...

    def random(self) -> float:
        """A float in ``[0, 1)``."""
        ...

    def sample(self, population: Sequence[T], k: int) -> list[T]:
        """``k`` distinct elements, in random order."""
        ...

    def shuffle(self, items: list[T]) -> None:
        """Shuffle in place."""
        ...


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from any parts, stable across machines and ``PYTHONHASHSEED``.

    ``hash()`` is salted per process, so we hash a canonical text form with SHA-256.
    """
    text = "\x1f".join(repr(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


class SeededChooser:
    """A Chooser over a private ``random.Random``: same seed, same choices."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def randint(self, low: int, high: int) -> int:
        return self._rng.randint(low, high)

    def choice(self, options: Sequence[T]) -> T:
        return options[self._rng.randrange(len(options))]

    def random(self) -> float:
        return self._rng.random()

    def sample(self, population: Sequence[T], k: int) -> list[T]:
        return self._rng.sample(list(population), k)

    def shuffle(self, items: list[T]) -> None:
        self._rng.shuffle(items)


def weighted_choice(
    chooser: Chooser, options: Sequence[T], weights: Sequence[float], total: float | None = None
) -> T:
    """One option drawn with the given relative weights, through ``chooser.random()``.

    A draw near 0 picks the first option, so a shrinking Chooser moves towards it. ``total``
    is ``float(sum(weights))`` where a caller drawing thousands of times took it once.
    """
    total = float(sum(weights)) if total is None else total
    point = chooser.random() * total
    for option, weight in zip(options, weights, strict=True):
        point -= weight
        if point < 0:
            return option
    return options[-1]


SEED_FORMS = "expected an integer, 'auto' or 'auto:TEXT'"


def resolve_seed(raw: str) -> tuple[int, str | None]:
    """``--reasoning-seed``: an integer, or ``auto[:TEXT]`` -> a seed derived from TEXT
    (default today's UTC date); returns the seed and the text it came from (None for an
    integer). The one parser of the plugin's option and ``pytest-reasoning gate``'s; anything
    else is a ValueError (the callers say which option, with the value clipped)."""
    raw = raw.strip()
    if raw == "auto" or raw.startswith("auto:"):
        import datetime

        source = raw[5:] or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        return derive_seed("reasoning-seed", source) % 2**31, source
    return int(raw), None
