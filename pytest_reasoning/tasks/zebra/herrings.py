"""Red herrings (MultiZebraLogic's uninformative clues): true sentences that name attributes
outside the grid, so they leave the solution exactly as the real clues force it.

Each herring attribute ("the person with freckles") belongs to one person, is mentioned by
one clue of a puzzle only, and is placed in a hidden house that makes its clue true. A clue
about one free attribute can hold whatever the grid is (a neighbour, another house or a given
house always exists), so the grids the real clues allow are exactly the grids all clues
allow; the generator still proves it with the SAT solver (:mod:`.sat`), herring attributes
encoded as extra values with a house each.

No word of a herring sentence is a feature value, a name or a relation word the reference
solver reads (tested): it recognises a herring as a clue naming no grid value, or one value
and no house, and sets it aside.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from ...rng import Chooser
from .clues import Clue, Ref, ordinal

__all__ = ["ATTRIBUTES", "FACTS", "HERRING", "KINDS", "Herring", "draw"]

HERRING = "Herring"  # the feature key herring attributes go by in the prover

# (how the person is named, what is said of them): one fixed phrase each.
ATTRIBUTES: tuple[tuple[str, str], ...] = (
    ("the person with freckles", "has freckles"),
    ("the person who wears glasses", "wears glasses"),
    ("the person with a tattoo", "has a tattoo"),
    ("the person who owns a bicycle", "owns a bicycle"),
    ("the person with a twin sister", "has a twin sister"),
    ("the person who has been to Canada", "has been to Canada"),
    ("the person who often goes sailing", "often goes sailing"),
    ("the person who owns a cactus", "owns a cactus"),
    ("the person with a beard", "has a beard"),
    ("the person who speaks Welsh", "speaks Welsh"),
    ("the person who sings in a choir", "sings in a choir"),
    ("the person who collects stamps", "collects stamps"),
    ("the person who can juggle", "can juggle"),
    ("the person who watches ski jumping", "watches ski jumping"),
    ("the person with curly hair", "has curly hair"),
    ("the person who bakes bread", "bakes bread"),
)

FACTS: tuple[str, ...] = (
    "herrings are fish",
    "honey never spoils",
    "octopuses have three hearts",
    "snails are molluscs",
    "bananas are botanically berries",
    "several front doors on the street have brass knockers",
    "it is fun to solve puzzles",
    "sunlight takes about eight minutes to reach the Earth",
    "the street was paved last spring",
    "a group of crows is called a murder",
)

# MultiZebraLogic's eight red herring kinds, worded our way.
KINDS = (
    "same_herring",  # a grid value's person has the attribute
    "next_to_herring",  # ... lives next door to the attribute's person
    "double_herring",  # the attribute's person has a second attribute
    "fact",  # a fact about the world
    "object_fact",  # a grid value's person knows a fact
    "friends",  # a grid value's person is friends with the attribute's person
    "herring_found_at",  # the attribute's person lives in a given house
    "herring_not_at",  # ... does not live in a given house
)


class Herring(NamedTuple):
    """One red herring: its kind, its sentence, and what it states about houses for the
    prover (relations over grid values and herring attributes, ``(HERRING, phrase)``)."""

    kind: str
    text: str
    subject: Ref | None  # the grid value it names, if any
    states: tuple[Clue, ...]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def draw(
    grid: Sequence[dict[str, str]], count: int, name: Callable[[Ref], str], chooser: Chooser
) -> list[Herring]:
    """``count`` red herrings true of ``grid`` (values named by ``name``), kinds drawn in
    turn from a shuffled cycle of the eight, each with attributes of its own."""
    n = len(grid)
    free = chooser.sample(range(len(ATTRIBUTES)), len(ATTRIBUTES))
    facts = chooser.sample(range(len(FACTS)), len(FACTS))
    kinds = chooser.sample(KINDS, len(KINDS))
    refs = [(f, v) for house in grid for f, v in house.items()]
    out: list[Herring] = []
    for k in range(count):
        kind = kinds[k % len(kinds)]
        subject = chooser.choice(refs) if kind in _WITH_SUBJECT else None
        who = name(subject) if subject else ""
        if kind in ("fact", "object_fact"):
            fact = FACTS[facts[k % len(facts)]]
            text = f"{_cap(who)} knows that {fact}." if subject else f"{_cap(fact)}."
            out.append(Herring(kind, text, subject, ()))
            continue
        phrase, says = ATTRIBUTES[free.pop()]
        ref = (HERRING, phrase)
        if kind == "double_herring":
            phrase2, says2 = ATTRIBUTES[free.pop()]
            text = f"{_cap(phrase)} {says2}."
            # Both attributes' people share an (unstated) house: a relation of two free values.
            states: tuple[Clue, ...] = (Clue("same_house", ref, (HERRING, phrase2)),)
        elif kind == "same_herring":
            text = f"{_cap(who)} {says}."
            states = (Clue("same_house", subject, ref),)  # type: ignore[arg-type]
        elif kind == "next_to_herring":
            text = f"{_cap(who)} lives next door to {phrase}."
            states = (Clue("side_by_side", subject, ref),)  # type: ignore[arg-type]
        elif kind == "friends":
            text = f"{_cap(who)} is good friends with {phrase}."
            states = (Clue("different_house", subject, ref),)  # type: ignore[arg-type]
        else:
            house = chooser.randint(1, n)
            where = chooser.choice((f"house {house}", f"the {ordinal(house)} house"))
            verb = "lives in" if kind == "herring_found_at" else "does not live in"
            text = f"{_cap(phrase)} {verb} {where}."
            states = (Clue("found_at" if verb == "lives in" else "not_at", ref, None, house),)
        out.append(Herring(kind, text, subject, states))
    return out


_WITH_SUBJECT = {"same_herring", "next_to_herring", "object_fact", "friends"}
