"""The FLenQA vocabulary and phrase banks, all our own.

Key paragraphs open with a key sentence and continue on its topic with sentences from these
banks. A continuation must add nothing that bears on any question: the banks never use a
relation, room, property or rule word of any task (``task_words``; a test checks every bank
sentence against it), and never name anyone but the paragraph's own subject.
"""

from __future__ import annotations

__all__ = [
    "CONCLUSIONS",
    "CONDITIONS",
    "PERSON_BANK",
    "PROPERTY_GROUPS",
    "RELATIONS",
    "ROOMS",
    "ROOM_BANK",
    "task_words",
]

# Monotone relations: (relation, its converse). "A is younger than B" == "B is older than A".
RELATIONS: tuple[tuple[str, str], ...] = (
    ("younger", "older"),
    ("taller", "shorter"),
    ("richer", "poorer"),
    ("faster", "slower"),
    ("heavier", "lighter"),
    ("stronger", "weaker"),
    ("louder", "softer"),
    ("happier", "sadder"),
)

ROOMS: tuple[str, ...] = (
    "library", "kitchen", "study", "attic", "cellar", "gallery", "conservatory", "workshop",
    "pantry", "nursery", "ballroom", "lounge", "parlour", "greenhouse", "studio", "office",
    "den", "laundry", "sunroom", "chapel", "armoury", "observatory", "billiard hall", "foyer",
)  # fmt: skip

# Mutually exclusive properties: a room has exactly one of each group's values, so asking
# about the other value of the same group is unambiguously False.
PROPERTY_GROUPS: tuple[tuple[str, str], ...] = (
    ("bright", "dim"),
    ("warm", "cold"),
    ("quiet", "noisy"),
    ("spacious", "cramped"),
    ("tidy", "messy"),
    ("damp", "dry"),
)

CONDITIONS: tuple[str, ...] = (
    "kind", "clever", "brave", "honest", "patient", "generous", "careful", "curious",
    "cheerful", "humble", "polite", "loyal", "calm", "diligent",
)  # fmt: skip
CONCLUSIONS: tuple[str, ...] = ("admired", "trusted", "respected", "praised", "valued", "liked")

# {name}: the paragraph's subject, by first name.
PERSON_BANK: tuple[str, ...] = (
    "{name} grew up in a town by the sea and still misses the sound of the harbour at night.",
    "Most mornings {name} starts the day with a pot of tea and the crossword from the paper.",
    "{name} keeps a notebook for shopping lists, stray ideas and the occasional sketch.",
    "On weekends {name} likes long walks through the park, whatever the weather is doing.",
    "A few years ago {name} took up the piano again after a long break from lessons.",
    "{name} has a habit of humming old songs while cooking dinner.",
    "Friends say that {name} always remembers birthdays, even the ones nobody else does.",
    "{name} once spent a whole summer travelling by train from one end of the country to the "
    "other.",
    "These days {name} is reading a long novel about a family of sailors.",
    "{name} collects postcards from every city visited and pins the best ones above the desk.",
    "In the evenings {name} often phones an old school friend to talk about nothing in particular.",
    "{name} learned to bake bread during a long winter and has not stopped since.",
    "The bicycle that {name} rides to work has been repaired more times than anyone can count.",
    "{name} prefers handwritten letters to emails and still owns a fountain pen.",
    "Every spring {name} plants tomatoes on the balcony, with mixed results.",
    "{name} volunteers at the local market on the first Saturday of each month.",
    "A jar of buttons sits on the windowsill at home, and {name} cannot say where most came from.",
    "{name} can recite the names of all the stops on the coastal bus line.",
    "When it rains, {name} likes to sit by the window and watch people hurry past.",
    "{name} has been meaning to learn Italian for years and owns three different phrasebooks.",
    "At the end of a long day {name} enjoys a bowl of soup and an early night.",
    "{name} keeps a small herb garden in pots along the back steps.",
    "The neighbours often see {name} feeding the pigeons in the square.",
    "{name} has a favourite armchair with a blanket folded over one arm.",
    "Once a year {name} visits a cousin who lives on a farm in the hills.",
    "{name} likes to plan holidays months in advance, down to the last train ticket.",
    "Old maps fascinate {name}, especially the ones with sea monsters in the margins.",
    "{name} tends to lose umbrellas and has stopped buying expensive ones.",
    "Saturday mornings are for the flea market, where {name} hunts for old records.",
    "{name} writes a short diary entry every night before going to sleep.",
    "The first thing {name} does on holiday is find the nearest bakery.",
    "{name} enjoys doing jigsaw puzzles, the bigger the better.",
    "A friend once taught {name} a card trick that still gets shown at every party.",
    "{name} likes to take photographs of doors and windows in unfamiliar streets.",
    "For a while {name} worked at a bookshop and still visits it every month.",
    "{name} thinks that a good breakfast is the most important part of any day.",
    "On long drives {name} listens to radio plays and audiobooks.",
    "{name} has kept the same mug for almost a decade, chipped handle and all.",
    "Now and then {name} spends an afternoon repairing furniture found on the street.",
    "{name} once ran a small stall selling homemade jam at a summer fair.",
    "It is well known that {name} never leaves the house without a scarf.",
    "{name} follows the football results closely but rarely goes to a match.",
    "Sunday dinners with the family are a tradition {name} would not miss.",
    "{name} tries to swim a few lengths at the public pool every week.",
    "The walls at home are covered with paintings that {name} bought from street artists.",
    "{name} enjoys long conversations about films over a late coffee.",
    "Last autumn {name} went on a walking tour along an old pilgrim route.",
    "{name} has a knack for fixing clocks and watches that others have given up on.",
)

# {room}: the paragraph's room, without "the".
ROOM_BANK: tuple[str, ...] = (
    "The {room} sits at the end of a long corridor on the ground floor.",
    "A framed map of the old county hangs on one wall of the {room}.",
    "The {room} was added to the house about a century ago.",
    "Guests are often shown the {room} first when they arrive.",
    "There is a wooden bench by the door of the {room}.",
    "The {room} has a tall window that looks out over the garden.",
    "A grandfather clock stands in one corner of the {room}.",
    "The floor of the {room} is made of old oak boards that creak underfoot.",
    "Several portraits of former owners line the walls of the {room}.",
    "The {room} has two doors, one of them usually kept shut.",
    "A round table with a lace cloth stands in the middle of the {room}.",
    "The {room} was repainted last year in a pale shade of green.",
    "Visitors sometimes stop in the {room} to look at the carved ceiling.",
    "The {room} is on the way to the back stairs.",
    "A shelf of old almanacs runs along one side of the {room}.",
    "The door handle of the {room} is shaped like a brass lion.",
    "The {room} once served a different purpose, according to the old plans of the house.",
    "A narrow rug runs from the door of the {room} to the window.",
    "Fresh flowers are put in the {room} every Friday.",
    "The {room} is mentioned in the house's guidebook as one of its oldest parts.",
    "An old piano stool stands by the wall of the {room}, though there is no piano.",
    "A bowl of polished stones sits on the mantelpiece in the {room}.",
)


def task_words() -> set[str]:
    """Every word a continuation must not use (lower case)."""
    words = {w for pair in RELATIONS for w in pair}
    words |= {w for room in ROOMS for w in room.split()} | {"room", "rooms"}
    words |= {w for group in PROPERTY_GROUPS for w in group}
    words |= set(CONDITIONS) | set(CONCLUSIONS)
    return words
