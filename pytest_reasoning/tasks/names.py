"""People's names for generated problems: Faker's en_US name lists, read as data.

The items' own seeded streams draw from these sorted tuples (Faker's random generator is never
used), so the same seed gives the same names on every machine with the same Faker version.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

# Imported with the task modules (on the main thread, at collection), not lazily: Faker is a
# pytest plugin, so pytest's assertion rewriter compiles its modules on import, and CPython
# 3.11 can fail such a compile ("AST constructor recursion depth mismatch") when it runs on
# the evaluator's prefetch thread while the main thread compiles too. It cost one item in a
# loaded run of tests/test_reliability.py. Under pytest, faker itself is already loaded.
from faker.providers.person.en_US import Provider

__all__ = ["first_names", "gendered_first_names", "last_names"]


@cache
def _lists() -> tuple[frozenset[str], frozenset[str]]:
    first = set(Provider.first_names_male) | set(Provider.first_names_female)
    return frozenset(first), frozenset(Provider.last_names)


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
    """``(name, "f" | "m")`` for names on exactly one of Faker's lists, sorted: stories need
    pronouns, and a name on both lists would leave them to chance."""
    female = {n for n in Provider.first_names_female if n.isalpha()}
    male = {n for n in Provider.first_names_male if n.isalpha()}
    pairs = [(n, "f") for n in female - male] + [(n, "m") for n in male - female]
    return tuple(sorted(p for p in pairs if p[0].lower() not in banned))
