"""Shortcut rules for the FLenQA tasks (``pytest-reasoning audit``): word-overlap heuristics
that answer WITHOUT combining the two key facts. Each reads only the prompt text.
"""

from __future__ import annotations

import re

from ...core import Item
from ..base import Shortcut
from .vocab import RELATIONS

__all__ = ["MONOREL", "PEOPLE_IN_ROOMS", "RULETAKER", "split_prompt"]

_NAME = r"[A-Z][a-z]+ [A-Z][A-Za-z]+"
_CONVERSE = {a: b for a, b in RELATIONS} | {b: a for a, b in RELATIONS}


def split_prompt(prompt: str) -> tuple[str, str]:
    """(the text, the question): the question is the last ``Question:`` line; the text is
    every paragraph that is not a question, a rule or an instruction line."""
    at = prompt.rfind("Question: ")
    question = prompt[at + len("Question: ") :].split("\n", 1)[0] if at >= 0 else ""
    paragraphs = [
        p
        for p in prompt.split("\n\n")
        if not p.startswith(("Question: ", "Rule: ", "Read the text", "Answer whether"))
    ]
    return "\n\n".join(paragraphs), question


def _word(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text) is not None


def _property_occurs(item: Item) -> str | None:
    text, question = split_prompt(item.prompt)
    m = re.fullmatch(rf"Is ({_NAME}) in an? (\w+) room\?", question)
    return None if m is None else str(_word(text, m.group(2)))


def _traits_occur(item: Item) -> str | None:
    text, _ = split_prompt(item.prompt)
    m = re.search(r'"If a person is (\w+) and (\w+), then', item.prompt)
    if m is None:
        return None
    return str(_word(text, m.group(1)) and _word(text, m.group(2)))


def _subject_pattern(item: Item) -> str | None:
    text, question = split_prompt(item.prompt)
    m = re.fullmatch(rf"Is ({_NAME}) (\w+) than ({_NAME})\?", question)
    if m is None or m.group(2) not in _CONVERSE:
        return None
    x, rel, y = m.groups()
    said = set(re.findall(rf"({_NAME}) is (\w+) than {_NAME}\.", text))
    return str((x, rel) in said or (y, _CONVERSE[rel]) in said)


def _first_named(item: Item) -> str | None:
    text, question = split_prompt(item.prompt)
    m = re.fullmatch(rf"Is ({_NAME}) (\w+) than ({_NAME})\?", question)
    if m is None or m.group(1) not in text or m.group(3) not in text:
        return None
    return str(text.index(m.group(1)) < text.index(m.group(3)))


PEOPLE_IN_ROOMS = (
    Shortcut(
        "asked property occurs",
        "True iff the question's property word occurs anywhere in the text",
        _property_occurs,
    ),
)
RULETAKER = (
    Shortcut(
        "rule traits occur",
        "True iff both of the rule's condition words occur in the text",
        _traits_occur,
    ),
)
MONOREL = (
    Shortcut(
        "subject pattern",
        "True iff the question's first person is the subject of its relation word in some "
        "sentence, or its second person the subject of the converse",
        _subject_pattern,
    ),
    Shortcut(
        "first named first",
        "True iff the question's first person is named in the text before its second",
        _first_named,
    ),
)
