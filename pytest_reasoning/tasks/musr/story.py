"""The template narrator: turns each answer choice's scenario facts into a chapter and joins
the chapters into one story, recording each chapter's span (for the sanity baselines).

Seeded and deterministic: connectives, paragraphing and fact order come from the item's own
Chooser. Only tree leaves are told; the facts above them are left for the reader to infer.
Connectives are chosen by the tense of the sentence they open (``trees.TENSES``): "Meanwhile,"
only before what was going on at the moment, "It also came out that" only before a past
event, never a temporal one before a present-tense fact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...rng import Chooser
from .text import join_names, person, sentence
from .trees import Node

__all__ = [
    "CONNECTIVES",
    "MURDER_COLOUR",
    "PLACE_COLOUR",
    "Story",
    "be",
    "describe_allocation",
    "fact_recall",
    "move_sentence",
    "murder_story",
    "placement_story",
    "start_sentence",
    "teams_story",
]

# Per domain and tense: the connectives that may open a sentence ("" = none; several "" make
# a bare sentence the most common). An investigation reports facts it learned; a move's
# witnesses are described at that moment ("scene") or by their background ("before"); a
# person's history is a list of facts.
_TEAMS = ("", "", "", "Also, ", "On top of that, ", "As it happens, ", "Everyone knows that ")
CONNECTIVES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "murder": {
        "now": ("", "", "", "", "", "", "Also, ", "On top of that, ", "What is more, "),
        "past": ("", "", "", "", "", "", "", "", "", "Also, ", "On top of that, ",
                 "It also came out that ", "As it turned out, ", "{d} also learned that "),
        "colour": ("",),
    },
    "placement": {
        "scene": ("", "", "", "Meanwhile, ", "At that moment, ", "All the while, "),
        "before": ("", "", "", "", "", "", "As it happened, "),
        "past": ("", "", "", "", "", "", "As it happened, "),
        "colour": ("",),
    },
    "teams": {
        "now": _TEAMS,
        "past": _TEAMS,
        "colour": ("",),
    },
}  # fmt: skip
_SAME = {"before": "past", "scene": "past"}  # a tense a domain does not list reads as this


class Story:
    """A story being written: paragraphs in order, each chapter's character span."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.chapters: dict[str, list[int]] = {}

    def paragraph(self, text: str) -> None:
        self.parts.append(text)

    def chapter(self, name: str, paragraphs: Iterable[str]) -> None:
        start = len(self.text) + (2 if self.parts else 0)
        for p in paragraphs:
            self.paragraph(p)
        self.chapters[name] = [start, len(self.text)]

    @property
    def text(self) -> str:
        return "\n\n".join(self.parts)


_OWN_ADVERBIAL = re.compile(r"[^,]{1,30}, ")
_ALSO = re.compile(r"\balso\b")
_FIRST_WORD = re.compile(r"[\s']")


def _connect(prefix: str, text: str, proper: frozenset[str]) -> str:
    """``prefix`` + ``text``, lower-casing the text's first word unless it is a name. A text
    that opens with its own adverbial ("Just then, …", "At work, …") or with "That" keeps
    its opening and gets no prefix."""
    if not prefix or _OWN_ADVERBIAL.match(text) or text.startswith("That "):
        return sentence(text)
    first = _FIRST_WORD.split(text, maxsplit=1)[0]
    if first not in proper:
        text = text[:1].lower() + text[1:]
    return sentence(prefix + text)


Told = tuple[str, str]  # (sentence, tense)


def _told(nodes: Iterable[Node]) -> list[Told]:
    return [(n.text, n.tense) for n in nodes]


def _tell(
    told: Sequence[Told],
    ch: Chooser,
    proper: frozenset[str],
    per_paragraph: int,
    domain: str,
    slots: Mapping[str, str] | None = None,
) -> list[str]:
    """Facts as sentences in paragraphs, in a drawn order, with connectives that fit their
    tense (none before the first)."""
    order = list(told)
    ch.shuffle(order)
    table = CONNECTIVES[domain]
    detective = (slots or {}).get("d", "")
    out = [sentence(order[0][0])] if order else []
    for text, tense in order[1:]:
        options = table.get(tense) or table[_SAME.get(tense, "past")]
        prefix = options[min(int(ch.random() * len(options)), len(options) - 1)]
        if prefix:
            if "{d}" in prefix:
                prefix = "" if detective in text else prefix.format(d=detective)
            if "also" in prefix.lower() and _ALSO.search(text):
                prefix = ""  # not "also … had also heard"
            if prefix.startswith("Everyone") and text.startswith("Everyone"):
                prefix = ""  # not "Everyone knows that everyone still remembers"
        out.append(_connect(prefix, text, proper))
    return [" ".join(out[i : i + per_paragraph]) for i in range(0, len(out), per_paragraph)]


_VISITS = (
    "{d} went to see {s} first.", "Next, {d} turned to {s}.", "{d} paid a visit to {s}.",
    "{d} sat down with {s} at the station.", "The next name on {d}'s list was {s}.",
)  # fmt: skip

# Scene colour with no bearing on the case, drawn from one pool for both suspects in equal
# measure (the paper's sanity baseline, the longer chapter, stays at chance): no sentence
# names the victim, the weapon, the scene or an hour, and none makes anyone look guilty.
MURDER_COLOUR = (
    "The interview took place in a cramped kitchen that smelled of burnt coffee.",
    "Rain drummed against the window the whole time.",
    "{d} made a note in a battered notebook.",
    "{s} offered {d} a cup of tea, which went cold on the table.",
    "A radio murmured somewhere in the next room.",
    "{s} spoke slowly, choosing each word with care.",
    "The conversation lasted well over an hour.",
    "A cat wandered in, inspected {d}'s shoes and wandered out again.",
    "{d} asked about {s}'s work and family, as always.",
    "The room was tidy, with a row of houseplants along the sill.",
    "Outside, a delivery van idled at the curb for a long while.",
    "{s} had lived in the neighbourhood for most of a decade.",
    "{d} flipped back through the file before the next question.",
    "A clock ticked loudly on the mantelpiece.",
    "{s} asked whether the visit would take long; {d} said it depended.",
    "Somewhere upstairs, a floorboard creaked.",
    "{d} thanked {s} for making the time.",
    "The two of them sat at a scratched wooden table.",
    "{d} had read the file twice on the way over.",
    "The heating clanked on halfway through the conversation.",
    "A neighbour's dog barked at {d} on the way in.",
    "{s} had a cold and kept apologising for sniffling.",
    "The kettle boiled twice before anyone touched it.",
    "{d} turned down an offer of biscuits.",
    "{s} wore reading glasses pushed up into {s_their} hair.",
    "Children were playing football in the street outside.",
    "{d} left a card on the table before going.",
    "A pile of unopened post sat on the hall table.",
    "{d} noticed a half-finished jigsaw puzzle on the sideboard.",
    "{s} apologised for the mess in the hallway.",
)
_COLOUR_COUNT = (2, 5)  # colour sentences per chapter, drawn uniformly


def murder_story(f: dict[str, Any], ch: Chooser) -> Story:
    d = f"Detective {f['detective']}"
    names = [s["name"] for s in f["suspects"]]
    proper = frozenset([*names, f["victim"], "Detective", f["detective"]])
    story = Story()
    story.paragraph(sentence(
        f"{f['victim']} was found dead at {f['scene']} on {f['day']}, {f['verb']}. The coroner "
        f"put the time of death at around {f['hour']}. {d} took the case, and two names "
        f"quickly came up: {join_names(names)}"
    ))  # fmt: skip
    # One draw for the story, split between the chapters: no remark twice.
    counts = [ch.randint(*_COLOUR_COUNT) for _ in f["suspects"]]
    pool = ch.sample(MURDER_COLOUR, sum(counts))
    for k, suspect in enumerate(f["suspects"]):
        slots = {"d": d, **person("s", (suspect["name"], suspect["gender"]))}
        told = _told(n for tree in suspect["trees"].values() for n in tree.leaf_nodes())
        colour = [pool.pop() for _ in range(counts[k])]
        told += [(c.format_map(slots), "colour") for c in colour]
        visit = _VISITS[0] if k == 0 else ch.choice(_VISITS[1:])
        body = _tell(told, ch, proper, 4, "murder", slots)
        body[0] = visit.format_map(slots) + " " + body[0]
        story.chapter(suspect["name"], body)
    story.paragraph(f"{d} had gathered enough to decide.")
    return story


_INTO = {"in": "into", "on": "onto"}
# How a move is told: the verbs that suit each preposition, and why it was made.
_VERBS = {"into": ("moved", "put", "carried", "tucked"),
          "onto": ("moved", "put", "carried", "set"),
          "under": ("moved", "put", "tucked", "slid"),
          "behind": ("moved", "put", "tucked", "slid")}  # fmt: skip
_WHY = ("to keep {them} safe", "to make some room", "where {they} would be handy later",
        "so {they} would not get lost", "to clear some space", "out of everyone's way")  # fmt: skip
# Passing mentions of places (to even out how often each choice is named), in the tense of
# the scene, every wording at most once a story.
PLACE_COLOUR = (
    "The area around {place} was getting cluttered.", "Someone had left a mug near {place}.",
    "{place} looked tidier than usual.", "A draught kept blowing in by {place}.",
    "The light over {place} flickered now and then.", "{place} was due for a good clean.",
    "A stack of flyers had slid to the floor beside {place}.", "{place} smelled faintly of polish.",
    "Somebody had taped a note about the fire drill next to {place}.",
    "A wobbly chair stood by {place}.", "{place} had been freshly dusted.",
    "A sunbeam fell across {place} for a while.",
)  # fmt: skip


def start_sentence(item: str, prep: str, place: str) -> str:
    """``The van keys were on the flour shelf.``"""
    return sentence(f"{item} {be(item)} {prep} {place}")


def move_sentence(m: Mapping[str, Any], prep: str, verb: str, why: str) -> str:
    """``Janet carried the order clipboard into the delivery van to make some room.``"""
    return sentence(f"{m['person']} {verb} {m['item']} {_INTO.get(prep, prep)} {m['to']} {why}")


def placement_story(f: dict[str, Any], ch: Chooser) -> Story:
    people, roles, where = f["people"], f["roles"], f["locations"]
    proper = frozenset(people)
    story = Story()
    cast = join_names([f"{p} (the {r})" for p, r in zip(people, roles, strict=True)])
    intro = f["setting"].format(names=cast)
    starts = " ".join(start_sentence(i, where[place], place) for i, place in f["start"].items())
    opening = (
        sentence(intro) + " Everyone knew where things stood at the start of the day. " + starts
    )
    moves, told = [], []
    for m in f["moves"]:
        prep = _INTO.get(where[m["to"]], where[m["to"]])
        plural = be(m["item"]) == "were"
        why = ch.choice(_WHY).format(
            they="they" if plural else "it", them="them" if plural else "it"
        )
        m["told"] = move_sentence(m, where[m["to"]], ch.choice(_VERBS[prep]), why)
        moves.append(m["told"])
        told.append(_told(n for tree in m["trees"].values() for n in tree.leaf_nodes()))
    # Passing mentions of the choices, topping each up to the most-named one's count (plus
    # chance), so how often a place is named says nothing about the answer.
    text = " ".join([opening, *moves, *(x for group in told for x, _ in group)])
    counts = {c: len(re.findall(rf"(?<!\w){re.escape(c)}(?!\w)", text)) for c in f["choices"]}
    top = max(counts.values())
    colour = list(PLACE_COLOUR)
    ch.shuffle(colour)
    for place, count in counts.items():
        for _ in range(top - count + ch.randint(0, 1)):
            said = sentence(colour.pop().format(place=place)) if colour else ""
            if said:
                told[ch.randint(0, len(told) - 1)].append((said, "colour"))
    story.chapter("opening", [opening])
    for n, (move, leaves) in enumerate(zip(moves, told, strict=True), 1):
        body = _tell(leaves, ch, proper, 4, "placement")
        story.chapter(f"move {n}", [move + " " + " ".join(body)])
    return story


def be(item: str) -> str:
    """``were`` for plural items (``the van keys``), else ``was``."""
    return (
        "were" if item.endswith("s") and " of " not in item and not item.endswith("ss") else "was"
    )


def teams_story(f: dict[str, Any], ch: Chooser) -> Story:
    people = f["people"]
    proper = frozenset([*people, f["leader"]])
    story = Story()
    tasks = f["tasks"]
    story.paragraph(sentence(
        f["setting"].format(leader=f["leader"]) + f". Two jobs needed doing: {tasks[0]} and "
        f"{tasks[1]}. There were three people to do them, {join_names(people)}, and one job "
        f"would need two of them"
    ))  # fmt: skip
    for p in people:
        told = _told(n for tree in f["trees"][p] for n in tree.leaf_nodes())
        body = _tell(told, ch, proper, 4, "teams")
        lead = ch.choice((f"{f['leader']} thought about {p}", f"Then there was {p}",
                          f"{f['leader']} knew a few things about {p}"))  # fmt: skip
        body[0] = sentence(lead) + " " + body[0]
        story.chapter(p, body)
    story.paragraph(sentence(f"{f['leader']} had to decide who would do what"))
    return story


def describe_allocation(tasks: Sequence[str], alloc: Sequence[Sequence[str]]) -> str:
    """``the bake sale: Ann and Bo; the raffle: Cy`` (an option's text)."""
    return "; ".join(f"{t}: {join_names(list(g))}" for t, g in zip(tasks, alloc, strict=True))


def fact_recall(chapter: str, facts: Sequence[str]) -> list[str]:
    """The facts a chapter fails to state (the validator an LLM narrator's chapters must pass:
    every scenario fact's content words appear in it)."""
    text = chapter.lower()
    missing = []
    for fact in facts:
        words = [w for w in re.findall(r"[a-z0-9']+", fact.lower()) if len(w) > 3]
        if sum(w in text for w in words) < max(1, int(0.8 * len(words))):
            missing.append(fact)
    return missing
