"""Small text helpers shared by the MuSR narrators: people with pronouns, articles, joining."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

__all__ = ["People", "article", "clock", "join_names", "person", "sentence"]

People = Sequence[tuple[str, str]]  # (first name, "f" | "m")

_PRONOUNS = {
    "f": {"they": "she", "them": "her", "their": "her", "self": "herself"},
    "m": {"they": "he", "them": "him", "their": "his", "self": "himself"},
}


def person(slot: str, who: tuple[str, str]) -> dict[str, str]:
    """Slots for one person: ``{s}`` and ``{s_they}``, ``{s_them}``, ``{s_their}``, ``{s_self}``."""
    return dict(_person(slot, who[0], who[1]))


@lru_cache(maxsize=4096)
def _person(slot: str, name: str, gender: str) -> tuple[tuple[str, str], ...]:
    return ((slot, name), *((f"{slot}_{k}", v) for k, v in _PRONOUNS[gender].items()))


_AN = ("hour", "honest", "honour", "honor", "heir")
_A = ("uni", "use", "usu", "eu", "one", "once")


def article(noun: str) -> str:
    """``a`` or ``an`` by the sound of the first word: an ice sculptor, a uniform, an hour."""
    low = noun.lower()
    vowel = (low[:1] in "aeiou" and not low.startswith(_A)) or low.startswith(_AN)
    return ("an " if vowel else "a ") + noun


def join_names(names: Sequence[str]) -> str:
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + ", and " + names[-1]


def sentence(text: str) -> str:
    """Capitalised, with a full stop (or the text's own end punctuation)."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?'\"" else text + "."


def clock(hour: int) -> str:
    """An hour on a 24-hour circle as said aloud: ``midnight``, ``3 am``, ``noon``, ``9 pm``."""
    hour %= 24
    if hour in (0, 12):
        return "midnight" if hour == 0 else "noon"
    return f"{hour % 12} {'am' if hour < 12 else 'pm'}"
