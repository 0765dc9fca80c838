"""Feature pools: thirteen feature kinds besides the person's name, ten values each.

Values are chosen so that no value is a word of another value, of a clue template or of a
name: a clue sentence can then be read back unambiguously (the reference solver does so).
Every value keeps one fixed phrase ("the person who keeps a {v}") so a clue names a value the
same way every time; variety comes from the clue templates.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FEATURES", "NAME", "Feature", "article", "feature", "phrase"]


@dataclass(frozen=True)
class Feature:
    """A feature kind: its JSON key, the line that introduces it, how a value is named."""

    key: str
    intro: str
    values: tuple[str, ...]
    noun: str  # "{v}" is replaced by the value; "{a}" by "a" or "an" before it


NAME = Feature("Name", "Each person has a different name", (), "{v}")

FEATURES: tuple[Feature, ...] = (
    NAME,
    Feature(
        "Car",
        "Each person drives a different car",
        (
            "tesla model 3",
            "ford f150",
            "toyota camry",
            "honda civic",
            "bmw x5",
            "chevrolet silverado",
            "audi a4",
            "subaru outback",
            "mazda cx-5",
            "volvo xc90",
        ),
        "the person who drives {a} {v}",
    ),
    Feature(
        "Pet",
        "Each person keeps a different pet",
        (
            "cat",
            "dog",
            "parrot",
            "goldfish",
            "horse",
            "rabbit",
            "hamster",
            "turtle",
            "snake",
            "ferret",
        ),
        "the person who keeps {a} {v}",
    ),
    Feature(
        "Drink",
        "Each person prefers a different drink",
        (
            "coffee",
            "tea",
            "milk",
            "water",
            "orange juice",
            "lemonade",
            "hot chocolate",
            "root beer",
            "smoothies",
            "kombucha",
        ),
        "the person who drinks {v}",
    ),
    Feature(
        "Job",
        "Each person has a different job",
        (
            "teacher",
            "doctor",
            "engineer",
            "lawyer",
            "nurse",
            "chef",
            "artist",
            "pilot",
            "architect",
            "librarian",
        ),
        "the {v}",
    ),
    Feature(
        "Color",
        "Each person has a different favourite colour",
        (
            "red",
            "green",
            "blue",
            "yellow",
            "white",
            "purple",
            "black",
            "pink",
            "gray",
            "brown",
        ),
        "the person whose favourite colour is {v}",
    ),
    Feature(
        "Lunch",
        "Each person eats a different lunch",
        (
            "pizza",
            "sushi",
            "tacos",
            "pasta",
            "curry",
            "salad",
            "soup",
            "stew",
            "burgers",
            "noodles",
        ),
        "the person who eats {v} for lunch",
    ),
    Feature(
        "Hobby",
        "Each person has a different hobby",
        (
            "painting",
            "gardening",
            "knitting",
            "chess",
            "hiking",
            "photography",
            "dancing",
            "reading",
            "cycling",
            "pottery",
        ),
        "the person who enjoys {v}",
    ),
    Feature(
        "Flower",
        "Each person grows a different flower",
        (
            "roses",
            "tulips",
            "daisies",
            "lilies",
            "orchids",
            "daffodils",
            "carnations",
            "irises",
            "sunflowers",
            "peonies",
        ),
        "the person who grows {v}",
    ),
    Feature(
        "Music",
        "Each person likes a different kind of music",
        (
            "jazz",
            "rock",
            "pop",
            "classical",
            "hip hop",
            "country",
            "blues",
            "reggae",
            "metal",
            "folk",
        ),
        "the {v} fan",
    ),
    Feature(
        "Sport",
        "Each person plays a different sport",
        (
            "soccer",
            "tennis",
            "basketball",
            "baseball",
            "golf",
            "volleyball",
            "rugby",
            "hockey",
            "badminton",
            "cricket",
        ),
        "the person who plays {v}",
    ),
    Feature(
        "Book",
        "Each person reads a different kind of book",
        (
            "mystery",
            "romance",
            "fantasy",
            "science fiction",
            "biography",
            "poetry",
            "horror",
            "thriller",
            "travel",
            "cooking",
        ),
        "the person who reads {v} books",
    ),
    Feature(
        "Month",
        "Each person was born in a different month",
        (
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ),
        "the person born in {v}",
    ),
    Feature(
        "Phone",
        "Each person uses a different phone",
        (
            "blackberry",
            "pixel",
            "galaxy",
            "oneplus",
            "xperia",
            "moto",
            "nokia",
            "alcatel",
            "xiaomi",
            "huawei",
        ),
        "the person with {a} {v} phone",
    ),
)


def feature(key: str) -> Feature:
    for f in FEATURES:
        if f.key == key:
            return f
    raise KeyError(key)


def article(word: str) -> str:
    """The article by how ``word`` is said, not spelt: an audi, an xperia (ex-), a oneplus
    (wun-), a xiaomi (shao-), a unicorn (yoo-), an hour."""
    w = word.lower()
    if w.startswith(("one", "uni", "use", "usu", "eu")):
        return "a"
    if w.startswith(("hour", "honest", "heir")):
        return "an"
    if w[:1] == "x":  # "ex-" before a consonant (xperia, xbox); "z"/"sh" before a vowel
        return "an" if w[1:2] and w[1] not in "aeiouy" else "a"
    return "an" if w[:1] in ("a", "e", "i", "o", "u") else "a"


def phrase(feat: Feature, value: str) -> str:
    """How a clue names the holder of ``value``: "Eric", "the person who keeps a cat"."""
    return feat.noun.replace("{a}", article(value)).replace("{v}", value)
