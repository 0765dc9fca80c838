"""People's names for generated problems: Faker's en_US name lists, kept as our own data
(``name_lists.py``).

The items' own seeded streams draw from these sorted tuples, so the same seed gives the same
names on every machine.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from .name_lists import FIRST_NAMES_FEMALE, FIRST_NAMES_MALE, LAST_NAMES

__all__ = ["first_names", "gendered_first_names", "last_names"]


@cache
def _lists() -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(FIRST_NAMES_MALE) | frozenset(FIRST_NAMES_FEMALE), frozenset(LAST_NAMES)


def _keep(names: Iterable[str], banned: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(n for n in names if n.isalpha() and n.lower() not in banned))


def first_names(banned: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Alphabetic first names, sorted, minus those that are (lower-cased) ``banned`` words: a
    name that is also a task word (May, Rose) would make a problem ambiguous."""
    return _keep(_lists()[0], banned)


def last_names(banned: frozenset[str] = frozenset()) -> tuple[str, ...]:
    return _keep(_lists()[1], banned)


@cache
def gendered_first_names(banned: frozenset[str] = frozenset()) -> tuple[tuple[str, str], ...]:
    """``(name, "f" | "m")`` for names on exactly one of the lists, sorted: stories need
    pronouns, and a name on both lists would leave them to chance."""
    female = {n for n in FIRST_NAMES_FEMALE if n.isalpha()}
    male = {n for n in FIRST_NAMES_MALE if n.isalpha()}
    pairs = [(n, "f") for n in female - male] + [(n, "m") for n in male - female]
    return tuple(sorted(p for p in pairs if p[0].lower() not in banned))
