"""Small text helpers shared by the MuSR narrators: people with pronouns, articles, joining."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["People", "article", "join_names", "person", "sentence"]

People = Sequence[tuple[str, str]]  # (first name, "f" | "m")

_PRONOUNS = {
    "f": {"they": "she", "them": "her", "their": "her", "self": "herself"},
    "m": {"they": "he", "them": "him", "their": "his", "self": "himself"},
}


def person(slot: str, who: tuple[str, str]) -> dict[str, str]:
    """Slots for one person: ``{s}`` and ``{s_they}``, ``{s_them}``, ``{s_their}``, ``{s_self}``."""
    name, gender = who
    return {slot: name, **{f"{slot}_{k}": v for k, v in _PRONOUNS[gender].items()}}


def article(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def join_names(names: Sequence[str]) -> str:
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + ", and " + names[-1]


def sentence(text: str) -> str:
    """Capitalised, with a full stop (or the text's own end punctuation)."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?'\"" else text + "."
