"""The reference solver: reads a FLenQA prompt's TEXT, finds the facts about the question's
entities among the padding, and reasons over them (a relation graph, room properties, a rule).

It knows the task vocabulary (relations and their converses, property groups) but none of the
generator's choices; padding that happened to state facts about other people is harmless.
"""

from __future__ import annotations

import re

from .vocab import PROPERTY_GROUPS, RELATIONS

__all__ = ["SolverError", "solve", "solve_any"]

_NAME = r"[A-Z][a-z]+ [A-Z][A-Za-z]+"


class SolverError(ValueError):
    """The text is not a FLenQA prompt this solver can read."""


def _question(prompt: str) -> tuple[str, str]:
    """(text, question): the question is the last 'Question:' line (asked after the text,
    or before it as MonoRel and RuleTaker do); the text is everything but question lines."""
    asked = re.findall(r"^Question: (.*)$", prompt, re.M)
    if not asked:
        raise SolverError("no question")
    return re.sub(r"^Question: .*$", "", prompt, flags=re.M), asked[-1]


def solve(task: str, prompt: str) -> str:
    text, question = _question(prompt)
    if task == "flenqa.monorel":
        return str(_monorel(text, question))
    if task == "flenqa.people_in_rooms":
        return str(_rooms(text, question))
    if task == "flenqa.ruletaker":
        return str(_ruletaker(text, question))
    raise SolverError(f"unknown task {task}")


def solve_any(prompt: str) -> str:
    """Like :func:`solve`, the task told by the question's shape."""
    _, question = _question(prompt)
    if question.startswith("Given the rule"):
        return solve("flenqa.ruletaker", prompt)
    if re.fullmatch(r"Is .* in an? \w+ room\?", question):
        return solve("flenqa.people_in_rooms", prompt)
    return solve("flenqa.monorel", prompt)


def _monorel(text: str, question: str) -> bool:
    m = re.fullmatch(rf"Is ({_NAME}) (\w+) than ({_NAME})\?", question)
    if m is None:
        raise SolverError(f"unreadable question {question!r}")
    x, rel, y = m.groups()
    converse = {a: b for a, b in RELATIONS} | {b: a for a, b in RELATIONS}
    if rel not in converse:
        raise SolverError(f"unknown relation {rel!r}")
    # Edges p -> q meaning "p is REL than q", from sentences in either wording.
    edges: dict[str, set[str]] = {}
    for p, word, q in re.findall(rf"({_NAME}) is (\w+) than ({_NAME})\.", text):
        if word == rel:
            edges.setdefault(p, set()).add(q)
        elif word == converse[rel]:
            edges.setdefault(q, set()).add(p)
    seen, todo = {x}, [x]
    while todo:  # x REL y iff a chain of REL leads from x to y (the scale is transitive)
        for q in edges.get(todo.pop(), ()):
            if q == y:
                return True
            if q not in seen:
                seen.add(q)
                todo.append(q)
    return False


def _rooms(text: str, question: str) -> bool:
    m = re.fullmatch(rf"Is ({_NAME}) in an? (\w+) room\?", question)
    if m is None:
        raise SolverError(f"unreadable question {question!r}")
    person, asked = m.groups()
    where = re.findall(rf"{re.escape(person)} is in the ([a-z ]+?)\.", text)
    if len(set(where)) != 1:
        raise SolverError(f"{person} is in {len(set(where))} rooms")
    group = next((g for g in PROPERTY_GROUPS if asked in g), None)
    if group is None:
        raise SolverError(f"unknown property {asked!r}")
    said = set(re.findall(rf"The {re.escape(where[0])} is ({'|'.join(group)})\.", text))
    if len(said) != 1:
        raise SolverError(f"the {where[0]} has {len(said)} values of {group}")
    return bool(said.pop() == asked)


def _ruletaker(text: str, question: str) -> bool:
    m = re.fullmatch(
        rf'Given the rule "If a person is (\w+) and (\w+), then the person is (\w+)", can '
        rf'"({_NAME}) is (\w+)" be derived from the rule and the facts in the text\?',
        question,
    )
    if m is None:
        raise SolverError(f"unreadable question {question!r}")
    c1, c2, then, person, query = m.groups()
    facts = set(re.findall(rf"{re.escape(person)} is (\w+)\.", text))
    return query == then and c1 in facts and c2 in facts
