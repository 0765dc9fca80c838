"""The template narrator: turns each answer choice's scenario facts into a chapter and joins
the chapters into one story, recording each chapter's span (for the sanity baselines).

Seeded and deterministic: connectives, paragraphing and fact order come from the item's own
Chooser. Only tree leaves are told; the facts above them are left for the reader to infer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ...rng import Chooser
from .text import join_names, sentence

__all__ = [
    "Story",
    "describe_allocation",
    "fact_recall",
    "murder_story",
    "placement_story",
    "teams_story",
]

# Per domain: an investigation unfolds over days; a move's witnesses are simultaneous; a
# person's history is a list of facts.
_CONNECTIVES = {
    "murder": ("", "", "", "", "Later, ", "Soon after, ", "On top of that, ", "As it turned out, ",
               "It also came out that ", "Interestingly, ", "According to the notes, "),
    "placement": ("", "", "", "", "Meanwhile, ", "At the same time, ", "Just then, "),
    "teams": ("", "", "", "", "Also, ", "On top of that, ", "As it happens, ",
              "Everyone knows that "),
}  # fmt: skip


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


def _connect(prefix: str, text: str, proper: frozenset[str]) -> str:
    """``prefix`` + ``text``, lower-casing the text's first word unless it is a name. A text
    that opens with its own adverbial ("Just then, …", "At work, …") or with "That" keeps
    its opening and gets no prefix."""
    if not prefix or re.match(r"[^,]{1,30}, ", text) or text.startswith("That "):
        return sentence(text)
    first = re.split(r"[\s']", text, maxsplit=1)[0]
    if first not in proper:
        text = text[:1].lower() + text[1:]
    return sentence(prefix + text)


def _tell(
    leaves: Sequence[str], ch: Chooser, proper: frozenset[str], per_paragraph: int, domain: str
) -> list[str]:
    """Leaves as sentences in paragraphs, with connectives drawn by the chooser."""
    order = list(leaves)
    ch.shuffle(order)
    sentences = [_connect(ch.choice(_CONNECTIVES[domain]) if i else "", leaf, proper)
                 for i, leaf in enumerate(order)]  # fmt: skip
    return [
        " ".join(sentences[i : i + per_paragraph]) for i in range(0, len(sentences), per_paragraph)
    ]


_VISITS = (
    "{d} went to see {s} first.", "Next, {d} turned to {s}.", "{d} paid a visit to {s}.",
    "{d} sat down with {s} at the station.", "The next name on {d}'s list was {s}.",
)  # fmt: skip


# Scene colour with no bearing on the case. Chapters are topped up with it to lengths drawn
# at random, so the longest chapter says nothing about who did it (the paper's sanity
# baseline): the innocent's suspicious fact tells in fewer words than a means or a motive.
_COLOUR = (
    "The interview took place in a cramped kitchen that smelled of burnt coffee.",
    "Rain drummed against the window the whole time.",
    "{d} made a note in a battered notebook.",
    "{s} offered {d} a cup of tea, which went cold on the table.",
    "A radio murmured somewhere in the next room.",
    "{s} spoke slowly, choosing each word with care.",
    "The conversation lasted well over an hour.",
    "A cat wandered in, inspected {d}'s shoes and wandered out again.",
    "The afternoon light was fading by the time they sat down.",
    "{d} asked about {s}'s work and family, as always at the start.",
    "The room was tidy, with a row of houseplants along the sill.",
    "Outside, a delivery van idled at the curb for a long while.",
    "{s} had lived in the neighbourhood for most of a decade.",
    "{d} flipped back through the file before the next question.",
    "A clock ticked loudly on the mantelpiece.",
    "{s} asked whether the visit would take long; {d} said it depended.",
    "Somewhere upstairs, a floorboard creaked.",
    "{d} thanked {s} for making the time.",
    "The two of them sat at a scratched wooden table.",
    "{d} had read the file twice on the drive over.",
)
_SLACK = 360  # characters of random extra length per chapter


def murder_story(f: dict[str, Any], ch: Chooser) -> Story:
    d = f"Detective {f['detective']}"
    names = [s["name"] for s in f["suspects"]]
    proper = frozenset([*names, f["victim"], "Detective", f["detective"]])
    story = Story()
    story.paragraph(sentence(
        f"{f['victim']} was found dead at {f['scene']} {f['time']}, {f['verb']}. {d} took the "
        f"case, and two names quickly came up: {join_names(names)}"
    ))  # fmt: skip
    leaves = [
        [leaf for tree in s["trees"].values() for leaf in tree.leaves()] for s in f["suspects"]
    ]
    longest = max(sum(len(x) + 1 for x in group) for group in leaves)
    for k, suspect in enumerate(f["suspects"]):
        told = list(leaves[k])
        target = longest + ch.randint(0, _SLACK)
        colour = [c.format(d=d, s=suspect["name"]) for c in _COLOUR]
        ch.shuffle(colour)
        while colour and sum(len(x) + 1 for x in told) < target:
            told.append(colour.pop())
        visit = _VISITS[0] if k == 0 else ch.choice(_VISITS[1:])
        body = _tell(told, ch, proper, 4, "murder")
        body[0] = visit.format(d=d, s=suspect["name"]) + " " + body[0]
        story.chapter(suspect["name"], body)
    story.paragraph(f"{d} had gathered enough to decide.")
    return story


def placement_story(f: dict[str, Any], ch: Chooser) -> Story:
    people, roles, where = f["people"], f["roles"], f["locations"]
    proper = frozenset(people)
    story = Story()
    cast = join_names([f"{p} (the {r})" for p, r in zip(people, roles, strict=True)])
    intro = f["setting"].format(names=cast)
    starts = " ".join(
        sentence(f"{item} {_be(item)} {where[place]} {place}") for item, place in f["start"].items()
    )
    opening = (
        sentence(intro) + " Everyone knew where things stood at the start of the day. " + starts
    )
    moves, told = [], []
    for m in f["moves"]:
        prep = _INTO.get(where[m["to"]], where[m["to"]])
        verb = ch.choice(("moved", "put", "carried", "tucked"))
        why = ch.choice(("to keep it safe", "to make some room", "where it would be handy later",
                         "so it would not get lost", "to clear the counter"))  # fmt: skip
        moves.append(sentence(f"{m['person']} {verb} {m['item']} {prep} {m['to']} {why}"))
        told.append([leaf for tree in m["trees"].values() for leaf in tree.leaves()])
    # Passing mentions of the choices, topping each up to the most-named one's count (plus
    # chance), so how often a place is named says nothing about the answer.
    text = " ".join([opening, *moves, *(x for group in told for x in group)])
    counts = {c: len(re.findall(rf"(?<!\w){re.escape(c)}(?!\w)", text)) for c in f["choices"]}
    top = max(counts.values())
    for place, count in counts.items():
        for _ in range(top - count + ch.randint(0, 1)):
            told[ch.randint(0, len(told) - 1)].append(ch.choice(_PLACE_COLOUR).format(place=place))
    story.chapter("opening", [opening])
    for n, (move, leaves) in enumerate(zip(moves, told, strict=True), 1):
        body = _tell(leaves, ch, proper, 4, "placement")
        story.chapter(f"move {n}", [move + " " + " ".join(body)])
    return story


_INTO = {"in": "into", "on": "onto"}
_PLACE_COLOUR = (
    "The area around {place} was getting cluttered.", "Someone had left a mug near {place}.",
    "{place} looked tidier than usual that day.", "A draught kept blowing in by {place}.",
    "The light over {place} flickered now and then.", "{place} was due for a good clean.",
)  # fmt: skip


def _be(item: str) -> str:
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
        leaves = [leaf for tree in f["trees"][p] for leaf in tree.leaves()]
        body = _tell(leaves, ch, proper, 4, "teams")
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
