"""Reasoning trees: a gold fact supported by scenario facts (stated in the story) and a
commonsense fact (never stated), expanded recursively from a hand-written library.

A library maps a fact type to how it is said and how it may be supported. ``grow`` expands a
fact to a depth; validators reject an expansion whose subtree leaks a banned keyword (the
word "motive" under a motive, the destination under an observation), and another expansion
is tried. Only the leaves' scenario facts reach the story: everything above them is inferred.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import ReasoningError
from ...rng import Chooser
from .text import sentence

__all__ = [
    "DEEP",
    "Fact",
    "FactType",
    "Library",
    "Node",
    "banned_pattern",
    "fact_type",
    "fill",
    "grow",
    "leaks",
    "supports",
]

Slots = Mapping[str, str]


@dataclass(frozen=True)
class Fact:
    """A fact before it is said: a type from the library and its slot values."""

    type: str
    slots: Slots

    def with_(self, **more: str) -> Fact:
        return Fact(self.type, {**self.slots, **more})


# An expansion returns the supporting facts and the commonsense rule that joins them to the
# supported fact; it may draw new slot values (a store, a colleague) from the chooser.
Expansion = Callable[[Slots, Chooser], tuple[list[Fact], str]]


@dataclass(frozen=True)
class FactType:
    say: Sequence[str]  # templates over the slots; one is drawn per fact
    expansions: Sequence[Expansion] = ()
    # Used instead when at least DEEP levels remain: an extra, more abstract first step, so
    # deeper trees differ in shape (one more inference), not only in length.
    deep: Sequence[Expansion] = ()


DEEP = 3


Library = Mapping[str, FactType]


def supports(*types: str, rule: str) -> Expansion:
    """The common expansion: facts of ``types`` with the parent's own slots, joined by ``rule``."""

    def expand(slots: Slots, chooser: Chooser) -> tuple[list[Fact], str]:
        return [Fact(t, slots) for t in types], rule

    return expand


def fact_type(*say: str, exp: Sequence[Expansion] = (), deep: Sequence[Expansion] = ()) -> FactType:
    """A library entry: its wordings, then how it may be supported (see ``FactType``)."""
    return FactType(say, exp, deep)


@dataclass(frozen=True)
class Node:
    """One statement of a reasoning tree."""

    text: str
    kind: str  # "gold" (the fact to infer), "scenario" (in the story) or "commonsense"
    children: tuple[Node, ...] = field(default=())

    def leaves(self) -> list[str]:
        """The scenario facts the story must state, depth first."""
        if self.kind == "commonsense":
            return []
        if not self.children:
            return [] if self.kind == "gold" else [self.text]
        return [t for c in self.children for t in c.leaves()]

    def commonsense(self) -> list[str]:
        if self.kind == "commonsense":
            return [self.text]
        return [t for c in self.children for t in c.commonsense()]

    def height(self) -> int:
        """Inference steps from the leaves up to this statement."""
        kids = [c.height() for c in self.children if c.kind != "commonsense"]
        return 1 + max(kids) if kids else 0

    def texts(self) -> list[str]:
        """Every statement below this one (what the validators read)."""
        return [t for c in self.children for t in (c.text, *c.texts())]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "kind": self.kind}
        if self.children:
            out["children"] = [c.to_dict() for c in self.children]
        return out

    def explain(self) -> list[str]:
        """The inference, bottom-up, one line per step (for worked examples and --with-steps)."""
        steps: list[str] = []
        for c in self.children:
            if c.kind != "commonsense" and c.children:
                steps += c.explain()
        facts = [c.text for c in self.children if c.kind != "commonsense"]
        rules = [c.text for c in self.children if c.kind == "commonsense"]
        if facts:
            steps.append(
                " ".join(sentence(t) for t in [*facts, *rules]) + " So: " + sentence(self.text)
            )
        return steps


def fill(template: str, slots: Slots) -> str:
    """A template with its slots filled; the first letter is capitalised."""
    try:
        text = template.format_map(dict(slots))
    except KeyError as exc:  # a library bug, not a user error: name it
        raise ReasoningError(f"musr library: template {template!r} lacks slot {exc}") from None
    return text[:1].upper() + text[1:]


def banned_pattern(words: Sequence[str]) -> re.Pattern[str] | None:
    """One case-insensitive whole-word pattern for a validator's banned keywords."""
    words = [w for w in words if w]
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)


def leaks(node: Node, banned: re.Pattern[str] | None) -> list[str]:
    """The statements below ``node`` that state a banned keyword (empty: the tree is valid)."""
    if banned is None:
        return []
    return [t for t in node.texts() if banned.search(t)]


_PATIENCE = 8  # expansions tried before a fact gives up (the library is built to pass)


def grow(
    library: Library,
    fact: Fact,
    depth: int,
    chooser: Chooser,
    banned: re.Pattern[str] | None = None,
    kind: str = "scenario",
) -> Node:
    """The fact expanded ``depth`` levels; a fact type without expansions stays a leaf."""
    spec = library[fact.type]
    text = fill(chooser.choice(spec.say), fact.slots)
    if depth <= 0 or not spec.expansions:
        return Node(text, kind)
    tried: list[str] = []
    options = spec.deep if depth >= DEEP and spec.deep else spec.expansions
    for _ in range(_PATIENCE):
        expand = chooser.choice(options)
        children, rule = expand(fact.slots, chooser)
        kids = [grow(library, c, depth - 1, chooser, banned) for c in children]
        known = dict(fact.slots)
        for c in children:  # the rule may name what the expansion drew (a job, a store)
            known.update(c.slots)
        node = Node(text, kind, (*kids, Node(fill(rule, known), "commonsense")))
        # Only the direct children: each grown child already passed this check below it
        # (same pattern), so rescanning its subtree at every ancestor would be quadratic.
        bad = [c.text for c in node.children if banned and banned.search(c.text)]
        if not bad:
            return node
        tried += bad
    raise ReasoningError(
        f"musr library: every expansion of {fact.type!r} leaks a banned keyword, e.g. {tried[0]!r}"
    )
