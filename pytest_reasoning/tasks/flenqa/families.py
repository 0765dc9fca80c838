"""FLenQA's three tasks (``flenqa.monorel``, ``flenqa.people_in_rooms``,
``flenqa.ruletaker``): each draws its base instance, the template it is drawn from and the
reasoning that answers it; the padding to length is :class:`~.task.FlenqaTask`'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...rng import Chooser
from ..base import Shortcut
from . import shortcuts
from .task import INTRO, Base, FlenqaTask, _continue, _people
from .vocab import (
    CONCLUSIONS,
    CONDITIONS,
    PERSON_BANK,
    PROPERTY_GROUPS,
    RELATIONS,
    ROOM_BANK,
    ROOMS,
)

__all__ = ["MonoRelTask", "PeopleInRoomsTask", "RuleTakerTask"]


def _full(person: tuple[str, str]) -> str:
    return f"{person[0]} {person[1]}"


class MonoRelTask(FlenqaTask):
    id = "flenqa.monorel"
    description = (
        "Two comparisons on one monotone scale; is a third comparison implied? (True/False)"
    )

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.MONOREL

    def base(self, chooser: Chooser, label: bool, used: set[str] | None = None) -> Base:
        own: set[str] = set() if used is None else used
        rel, converse = chooser.choice(RELATIONS)
        people = _people(chooser, 3)
        a, b, c = (_full(p) for p in people)
        sentences = []
        for (x, y), (px, py) in (((a, b), people[:2]), ((b, c), people[1:])):
            if chooser.random() < 0.5:
                key, subject = f"{x} is {rel} than {y}.", px
            else:
                key, subject = f"{y} is {converse} than {x}.", py
            sentences.append((key, subject))
        order = [0, 1] if chooser.random() < 0.5 else [1, 0]
        # The two paragraphs share no sentence: `own` holds the templates already taken.
        paragraphs = [
            _continue(sentences[i][0], PERSON_BANK, "{name}", sentences[i][1][0], chooser, own)
            for i in order
        ]
        query = [a, c] if label else [c, a]
        question = f"Is {query[0]} {rel} than {query[1]}?"
        return Base(
            keys=(paragraphs[0][0], paragraphs[1][0]),
            paragraphs=(paragraphs[0], paragraphs[1]),
            question=question,
            logic={"facts": [[a, b], [b, c]], "relation": rel, "query": query},
            answer=str(label),
            entities=frozenset(w for p in people for w in p),
            head=f"{INTRO}\nQuestion: {question}",  # the paper asks before and after the text
            templates=frozenset(own),
        )

    def template(self, logic: Mapping[str, Any]) -> Any:
        (a, b), (_, c) = logic["facts"]
        role = {a: 0, b: 1, c: 2}
        return {"relation": logic["relation"], "query": [role[p] for p in logic["query"]]}

    def topic(self, logic: Mapping[str, Any]) -> Any:
        return logic["relation"]

    def reasoning(self, problem: Mapping[str, Any]) -> str:
        (a, b), (_, c) = problem["logic"]["facts"]
        rel = problem["logic"]["relation"]
        return f"So {a} is {rel} than {b}, who is {rel} than {c}; hence {a} is {rel} than {c}."


class PeopleInRoomsTask(FlenqaTask):
    id = "flenqa.people_in_rooms"
    banks = (PERSON_BANK, ROOM_BANK)
    description = "A person is in a room, the room has a property; is the person in a room with it?"

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.PEOPLE_IN_ROOMS

    def base(self, chooser: Chooser, label: bool, used: set[str] | None = None) -> Base:
        own: set[str] = set() if used is None else used
        person = _people(chooser, 1)[0]
        name = _full(person)
        room = chooser.choice(ROOMS)
        group = chooser.choice(PROPERTY_GROUPS)
        prop = chooser.choice(group)
        asked = prop if label else next(p for p in group if p != prop)
        k1 = _continue(f"{name} is in the {room}.", PERSON_BANK, "{name}", person[0], chooser, own)
        k2 = _continue(f"The {room} is {prop}.", ROOM_BANK, "{room}", room, chooser, own)
        first, second = (k1, k2) if chooser.random() < 0.5 else (k2, k1)
        article = "an" if asked[0] in "aeiou" else "a"
        return Base(
            keys=(first[0], second[0]),
            paragraphs=(first, second),
            question=f"Is {name} in {article} {asked} room?",
            logic={"person": name, "room": room, "room_property": prop, "query_property": asked},
            answer=str(label),
            entities=frozenset([*person, *room.split()]),
            templates=frozenset(own),
        )

    def template(self, logic: Mapping[str, Any]) -> Any:
        return {"room_property": logic["room_property"], "query_property": logic["query_property"]}

    def topic(self, logic: Mapping[str, Any]) -> Any:
        prop = logic["room_property"]
        return next((sorted(g) for g in PROPERTY_GROUPS if prop in g), [prop])

    def reasoning(self, problem: Mapping[str, Any]) -> str:
        g = problem["logic"]
        same = g["room_property"] == g["query_property"]
        return (
            f"So {g['person']} is in the {g['room']}, which is {g['room_property']}, and a room "
            f"that is {g['room_property']} is {'' if same else 'not '}{g['query_property']}."
        )


class RuleTakerTask(FlenqaTask):
    id = "flenqa.ruletaker"
    description = (
        "A rule with two conditions and two facts about one person: can the conclusion be derived?"
    )

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.RULETAKER

    def tail(self, base: Base) -> str:
        return ""  # the paper states the rule and the question before the facts only

    def base(self, chooser: Chooser, label: bool, used: set[str] | None = None) -> Base:
        own: set[str] = set() if used is None else used
        person = _people(chooser, 1)[0]
        name = _full(person)
        c1, c2, other = chooser.sample(CONDITIONS, 3)
        then = chooser.choice(CONCLUSIONS)
        facts = [c1, c2] if label else [chooser.choice((c1, c2)), other]
        chooser.shuffle(facts)
        k1 = _continue(f"{name} is {facts[0]}.", PERSON_BANK, "{name}", person[0], chooser, own)
        k2 = _continue(f"{name} is {facts[1]}.", PERSON_BANK, "{name}", person[0], chooser, own)
        question = (
            f'Given the rule "If a person is {c1} and {c2}, then the person is {then}", can '
            f'"{name} is {then}" be derived from the rule and the facts in the text?'
        )
        return Base(
            keys=(k1[0], k2[0]),
            paragraphs=(k1, k2),
            question=question,
            logic={
                "rule": {"if": [c1, c2], "then": then},
                "facts": [f"{name} is {f}" for f in facts],
                "query": f"{name} is {then}",
            },
            answer=str(label),
            entities=frozenset(person),
            head=f"{INTRO}\nQuestion: {question}",
            templates=frozenset(own),
        )

    def template(self, logic: Mapping[str, Any]) -> Any:
        # "If a person is c1 and c2": the conditions, like the two facts, are a set.
        have = sorted(f.rsplit(" is ", 1)[1] for f in logic["facts"])
        return {**self.topic(logic), "facts": have}

    def topic(self, logic: Mapping[str, Any]) -> Any:
        return {"if": sorted(logic["rule"]["if"]), "then": logic["rule"]["then"]}

    def reasoning(self, problem: Mapping[str, Any]) -> str:
        g = problem["logic"]
        needed = g["rule"]["if"]
        have = [f.rsplit(" is ", 1)[1] for f in g["facts"]]
        missing = [c for c in needed if c not in have]
        if not missing:
            return f"Both conditions of the rule hold, so {g['query']} follows."
        return f"The text never says the person is {missing[0]}, so the rule does not apply."
