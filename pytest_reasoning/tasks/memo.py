"""A bounded memo for pure values the generators ask for again and again (canonical forms,
splits) where a level runs out of problems: forgotten all at once when full, which changes
nothing but the time, since every value is a pure function of its key."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["Memo"]

V = TypeVar("V")


class Memo(Generic[V]):
    """``memo(key, compute)``: the value remembered for ``key``, else ``compute()`` kept.
    At most ``kept`` values (a dict get and set; safe enough across threads for a cache of
    pure values)."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._values: dict[Hashable, V] = {}

    def get(self, key: Hashable) -> V | None:
        return self._values.get(key)

    def put(self, key: Hashable, value: V) -> V:
        if len(self._values) >= self._kept:
            self._values.clear()
        self._values[key] = value
        return value

    def __call__(self, key: Hashable, compute: Callable[[], V]) -> V:
        value = self._values.get(key)
        return self.put(key, compute()) if value is None else value
