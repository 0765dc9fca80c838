"""Plans for MuSR's three domains, from the structured problem a MuSR task generates (the
export schema: gold facts, reasoning trees, the template story and its chapter spans).

As in the paper, one chapter per answer choice (a suspect), per move, or per person, each
written from its own scenario facts (the leaves of its reasoning trees). The paragraphs around
the chapters (the case, the setting and where things start, the closing line) are kept as the
template narrator wrote them: they carry the question's givens word for word.

The validators of each chapter are the task's own: the banned words of the gold facts below
which its facts sit (``BANNED`` of the murder library, the perception verbs of an observation,
``SKILL_BANNED`` and ``TEAM_BANNED``), minus any word its own facts must use (a move names its
item and destination), and the gold facts' texts themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core import Item
from ..tasks.musr import murder, teams
from ..tasks.musr.shortcuts import sentences
from ..tasks.musr.story import PLACE_COLOUR
from ..tasks.musr.trees import Node
from ..tasks.names import first_names
from .checks import mentions, strings, vocabulary
from .plan import Chapter, Plan, Planner

__all__ = ["GUILT", "PERCEPTION", "PLANNERS", "MurderPlanner", "PlacementPlanner", "TeamsPlanner"]

# An observation's validator bans these (besides its item and destination); a chapter also
# may not say outright that someone missed a move.
PERCEPTION = ("saw", "noticed", "watched", "spotted", "did not see", "didn't see", "never saw",
              "without seeing", "caught sight")  # fmt: skip
# A chapter may not settle a suspect's guilt in other words either ("bring Rachael to justice"
# passed the tree validators' words in a Qwen2.5-1.5B chapter).
GUILT = ("guilty", "culprit", "to justice", "confessed", "confession")
_NOT_ALONE = {"pick", "length"}  # a weapon's last word that is an everyday word on its own


def _dedupe(words: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w for w in words if w))


def _allowed(words: Iterable[str], facts: Sequence[str]) -> tuple[str, ...]:
    """Banned words minus those the chapter's own facts use (it must be able to state them)."""
    return tuple(w for w in _dedupe(words) if not any(mentions(w, f) for f in facts))


def _leaves(tree: Mapping[str, Any]) -> list[str]:
    return Node.from_dict(tree).leaves()


def _frame(item: Item) -> tuple[tuple[str, ...], tuple[str, ...], list[tuple[str, str]]]:
    """The template story split into the paragraphs before the first chapter, after the last
    one, and each chapter's (name, text)."""
    story: str = item.problem["story"]
    spans: Mapping[str, Sequence[int]] = item.problem["chapters"]
    ordered = sorted(spans.items(), key=lambda kv: kv[1][0])
    first, last = ordered[0][1][0], ordered[-1][1][1]
    before = tuple(p for p in story[:first].split("\n\n") if p.strip())
    after = tuple(p for p in story[last:].split("\n\n") if p.strip())
    return before, after, [(name, story[a:b]) for name, (a, b) in ordered]


def _people(named: Iterable[str], fixed: Iterable[str]) -> tuple[str, ...]:
    """The problem's people, and any first name in the fixed paragraphs (a team's leader)."""
    pool = set(first_names())
    found = list(named)
    for text in fixed:
        for w in re.findall(r"\b[A-Z][a-z]+\b", text):
            if w in pool and not any(w in name.split() for name in found):
                found.append(w)
    return _dedupe(found)


def _plan(
    item: Item,
    genre: str,
    chapters: Sequence[Chapter],
    entities: Iterable[str],
    people: Iterable[str],
) -> Plan:
    before, after, _ = _frame(item)
    vocab = vocabulary([*strings(item.problem), *PLACE_COLOUR])
    return Plan(
        genre=genre,
        before=before,
        chapters=tuple(chapters),
        after=after,
        entities=_dedupe(entities),
        vocabulary=vocab,
        people=_people(people, (*before, *after)),
    )


def _words(facts: Sequence[str]) -> int:
    return max(120, 40 + 15 * len(facts))


class MurderPlanner:
    """One chapter per suspect: the detective's visit, told from the leaves of the suspect's
    four trees (means, motive, opportunity, the suspicious fact)."""

    def plan(self, item: Item) -> Plan:
        p = item.problem
        detective = f"Detective {p['detective']}"
        weapon = re.sub(r"^(?:a|an|the) ", "", p["weapon"])
        weapon_words = [weapon]
        if " " in weapon and weapon.rsplit(" ", 1)[1] not in _NOT_ALONE:
            weapon_words.append(weapon.rsplit(" ", 1)[1])
        chapters = []
        for k, s in enumerate(p["suspects"]):
            facts = [leaf for tree in s["trees"].values() for leaf in _leaves(tree)]
            banned = [*(w for element in s["trees"] for w in murder.BANNED[element]), *GUILT]
            visit = "first" if k == 0 else "next"
            chapters.append(
                Chapter(
                    name=s["name"],
                    brief=f"{detective} questions {s['name']} {visit}, one of the two suspects, "
                    "and learns the facts below. Treat the suspect like any other witness.",
                    facts=tuple(facts),
                    banned=_allowed(banned, facts),
                    conclusions=tuple(t["text"] for t in s["trees"].values()),
                    outside=_allowed(weapon_words, facts),
                    words=_words(facts),
                )
            )
        names = [p["victim"], detective, *(s["name"] for s in p["suspects"])]
        entities = [*names[:1], p["detective"], *names[2:], p["scene"], p["day"], p["hour"]]
        return _plan(item, "a murder mystery", chapters, entities, names)


class PlacementPlanner:
    """One chapter per move: the move, the template's passing mentions of places (they keep
    the most-named place from pointing at the answer), and why each other person saw it or
    missed it. The opening (who is there, where things start) is kept as written."""

    def plan(self, item: Item) -> Plan:
        p = item.problem
        _, _, written = _frame(item)
        things = [*p["start"], *p["locations"]]
        chapters: list[Chapter] = []
        for name, text in written:
            if not name.startswith("move "):
                chapters.append(Chapter(name, "", (), (), (), (), 0, fixed=text))
                continue
            move = p["moves"][int(name.split()[1]) - 1]
            colour = [s for s in sentences(text) if _is_colour(s)]
            facts = [
                move["told"],
                *colour,
                *(leaf for who in p["people"] if who in move["trees"]
                  for leaf in _leaves(move["trees"][who])),
            ]  # fmt: skip
            chapters.append(
                Chapter(
                    name=name,
                    brief=f"the next moment of the day, when this happened: {move['told']} "
                    "Tell that move, and what each of the others was doing at that moment.",
                    facts=tuple(facts),
                    banned=_allowed(PERCEPTION, facts),
                    conclusions=tuple(t["text"] for t in move["trees"].values()),
                    outside=_allowed(things, facts),
                    words=_words(facts),
                )
            )
        return _plan(item, "a story about people at work", chapters, [*p["people"], *things],
                     p["people"])  # fmt: skip


_COLOUR = tuple(
    re.compile(re.escape(c).replace(re.escape("{place}"), "(.+?)"), re.IGNORECASE)
    for c in PLACE_COLOUR
)


def _is_colour(sentence: str) -> bool:
    return any(c.fullmatch(sentence) for c in _COLOUR)


class TeamsPlanner:
    """One chapter per person: their experience with both jobs and one pair's history."""

    def plan(self, item: Item) -> Plan:
        p = item.problem
        banned = [*teams.SKILL_BANNED, *teams.TEAM_BANNED]
        chapters = []
        for person in p["people"]:
            trees = p["trees"][person]
            facts = [leaf for tree in trees for leaf in _leaves(tree)]
            a, b = p["team_pairs"][person]
            chapters.append(
                Chapter(
                    name=person,
                    brief=f"what was known about {person}: experience with "
                    f"{' and with '.join(p['tasks'])}, and how {a} and {b} had got on before.",
                    facts=tuple(facts),
                    banned=_allowed(banned, facts),
                    conclusions=tuple(t["text"] for t in trees),
                    outside=(),
                    words=_words(facts),
                )
            )
        entities = [*p["people"], *p["tasks"]]
        return _plan(item, "a story about colleagues at work", chapters, entities, p["people"])


PLANNERS: dict[str, Planner] = {
    "musr.murder_mystery": MurderPlanner(),
    "musr.object_placement": PlacementPlanner(),
    "musr.team_allocation": TeamsPlanner(),
}
