"""Reasoning trees: a gold fact supported by scenario facts (stated in the story) and a
commonsense fact (never stated), expanded recursively from a hand-written library.

A library maps a fact type to how it is said and how it may be supported. ``grow`` expands a
fact to a depth; validators reject an expansion whose subtree leaks a banned keyword (the
word "motive" under a motive, the destination under an observation), and another expansion
is tried. Only the leaves' scenario facts reach the story: everything above them is inferred.
Each fact type carries the tense its wordings are in, so the narrator can pick connectives
that fit ("Later," before a past event, never before "X has a key").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ...errors import ReasoningError
from ...rng import Chooser

__all__ = [
    "DEEP",
    "TENSES",
    "Banned",
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

# "now": present tense ("X owns", "X is"); "past": a past event or state ("X was seen",
# "X burned"); "before": the past perfect, background to the scene ("X had come in early");
# "scene": what was going on at the moment told ("X was standing at Y's elbow").
TENSES = ("now", "past", "before", "scene")


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact before it is said: a type from the library and its slot values."""

    type: str
    slots: Slots


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
    tense: str = "past"


DEEP = 3


Library = Mapping[str, FactType]


def supports(*types: str, rule: str) -> Expansion:
    """The common expansion: facts of ``types`` with the parent's own slots, joined by ``rule``."""

    def expand(slots: Slots, chooser: Chooser) -> tuple[list[Fact], str]:
        return [Fact(t, slots) for t in types], rule

    return expand


def fact_type(
    *say: str,
    exp: Sequence[Expansion] = (),
    deep: Sequence[Expansion] = (),
    tense: str = "past",
) -> FactType:
    """A library entry: its wordings, how it may be supported (see ``FactType``), and the
    tense of its wordings (one of ``TENSES``)."""
    if tense not in TENSES:
        raise ReasoningError(f"musr library: unknown tense {tense!r} for {say[0]!r}")
    return FactType(say, exp, deep, tense)


@dataclass(frozen=True, slots=True)
class Node:
    """One statement of a reasoning tree."""

    text: str
    kind: str  # "gold" (the fact to infer), "scenario" (in the story) or "commonsense"
    children: tuple[Node, ...] = field(default=())
    tense: str = "past"

    def leaves(self) -> list[str]:
        """The scenario facts the story must state, depth first."""
        return [n.text for n in self.leaf_nodes()]

    def leaf_nodes(self) -> list[Node]:
        if self.kind == "commonsense":
            return []
        if not self.children:
            return [] if self.kind == "gold" else [self]
        return [n for c in self.children for n in c.leaf_nodes()]

    def facts(self) -> list[Node]:
        """The children that are facts (not the commonsense rule)."""
        return [c for c in self.children if c.kind != "commonsense"]

    def rule(self) -> str:
        return next((c.text for c in self.children if c.kind == "commonsense"), "")

    def commonsense(self) -> list[str]:
        if self.kind == "commonsense":
            return [self.text]
        return [t for c in self.children for t in c.commonsense()]

    def height(self) -> int:
        """Inference steps from the leaves up to this statement."""
        kids = [c.height() for c in self.facts()]
        return 1 + max(kids) if kids else 0

    def texts(self) -> list[str]:
        """Every statement below this one (what the validators read)."""
        return [t for c in self.children for t in (c.text, *c.texts())]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "kind": self.kind, "tense": self.tense}
        if self.children:
            out["children"] = [c.to_dict() for c in self.children]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Node:
        """The node ``to_dict`` wrote (the worked reasoning is rebuilt from the export)."""
        kids = tuple(cls.from_dict(c) for c in data.get("children", ()))
        return cls(data["text"], data["kind"], kids, data.get("tense", "past"))


def fill(template: str, slots: Slots) -> str:
    """A template with its slots filled; the first letter is capitalised."""
    try:
        text = template.format_map(slots)
    except KeyError as exc:  # a library bug, not a user error: name it
        raise ReasoningError(f"musr library: template {template!r} lacks slot {exc}") from None
    return text[:1].upper() + text[1:]


class Banned:
    """A validator's banned keywords: ``search`` finds one as a whole word, in any case. A
    plain substring test runs first: almost no statement holds any of the words, and that
    test is several times cheaper than the regular expression."""

    __slots__ = ("_pattern", "_words")

    def __init__(self, words: Sequence[str]) -> None:
        self._words = tuple(sorted({w.lower() for w in words if w}, key=len, reverse=True))
        alternatives = "|".join(re.escape(w) for w in self._words)
        self._pattern = re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)

    def search(self, text: str) -> re.Match[str] | None:
        low = text.lower()
        if not any(w in low for w in self._words):
            return None
        return self._pattern.search(text)


def banned_pattern(words: Sequence[str]) -> Banned | None:
    """One case-insensitive whole-word matcher for a validator's banned keywords."""
    words = [w for w in words if w]
    return _banned(tuple(words)) if words else None


@lru_cache(maxsize=256)
def _banned(words: tuple[str, ...]) -> Banned:
    return Banned(words)


def leaks(node: Node, banned: Banned | None) -> list[str]:
    """The statements below ``node`` that state a banned keyword (empty: the tree is valid)."""
    if banned is None:
        return []
    return [t for t in node.texts() if banned.search(t)]


_PATIENCE = 8  # expansions tried before a fact gives up (the library is built to pass)


def _index(chooser: Chooser, n: int) -> int:
    """A uniform index below ``n`` (none drawn for one option): one ``random()`` call, several
    times cheaper than ``randint``, and a tree draws a few dozen of them."""
    return min(int(chooser.random() * n), n - 1) if n > 1 else 0


def _say(
    spec: FactType, slots: Slots, chooser: Chooser, used: set[str] | None, log: list[str]
) -> tuple[str, bool]:
    """One wording of a fact: one the story has not said yet, and if possible in a template
    it has not used for someone else (two suspects who both "had paid a hardware store to
    copy a key" read like a form); and whether the statement is new to the story. What is
    said (and its template) goes into ``used`` and ``log``, to take back with an attempt."""
    say = spec.say
    if len(say) == 1:  # the common case: nothing to choose
        text = fill(say[0], slots)
        if used is None:
            return text, True
        if text in used:
            return text, False
        used.add(text)
        log.append(text)
        return text, True
    first = _index(chooser, len(say))
    if used is None:
        return fill(say[first], slots), True
    best: tuple[int, int, str] | None = None
    for k in range(len(say)):
        n = (first + k) % len(say)
        text = fill(say[n], slots)
        rank = 2 * (text in used) + (say[n] in used)  # 0: a new statement in a new template
        if best is None or rank < best[0]:
            best = (rank, n, text)
            if rank == 0:
                break
    assert best is not None
    rank, n, text = best
    for said in (text, say[n]):  # templates hold braces: never mistaken for a statement
        if said not in used:
            used.add(said)
            log.append(said)
    return text, rank < 2


def grow(
    library: Library,
    fact: Fact,
    depth: int,
    chooser: Chooser,
    banned: Banned | None = None,
    kind: str = "scenario",
    used: set[str] | None = None,
) -> Node:
    """The fact expanded ``depth`` levels; a fact type without expansions stays a leaf.
    ``used`` collects the story's statements so far: a wording already told is avoided, and
    an expansion that would repeat a statement is redrawn while others remain to try."""
    return _grow(library, fact, depth, chooser, banned, kind, used, [])[0]


def _grow(
    library: Library,
    fact: Fact,
    depth: int,
    chooser: Chooser,
    banned: Banned | None,
    kind: str,
    used: set[str] | None,
    log: list[str],
) -> tuple[Node, int]:
    """``grow``, and how many of the subtree's statements the story already had."""
    spec = library[fact.type]
    text, fresh = _say(spec, fact.slots, chooser, used, log)
    if depth <= 0 or not spec.expansions:
        return Node(text, kind, tense=spec.tense), 0 if fresh else 1
    tried: list[str] = []
    options = spec.deep if depth >= DEEP and spec.deep else spec.expansions
    mark = len(log)
    # The first expansion is drawn; a retry takes the next one round, so every expansion is
    # tried before any is tried twice.
    first = _index(chooser, len(options))
    for attempt in range(_PATIENCE):
        expand = options[(first + attempt) % len(options)]
        children, rule = expand(fact.slots, chooser)
        grown = [_grow(library, c, depth - 1, chooser, banned, "scenario", used, log)
                 for c in children]  # fmt: skip
        known = fact.slots
        for c in children:  # the rule may name what the expansion drew (a job, a store)
            if c.slots is not known:
                known = {**known, **c.slots}
        kids = (*(n for n, _ in grown), Node(fill(rule, known), "commonsense"))
        node = Node(text, kind, kids, spec.tense)
        repeats = sum(r for _, r in grown)
        # Only the direct children: each grown child already passed this check below it
        # (same pattern), so rescanning its subtree at every ancestor would be quadratic.
        bad = [c.text for c in kids if banned and banned.search(c.text)]
        if not bad and (not repeats or attempt == _PATIENCE - 1 or len(options) == 1):
            return node, repeats + (0 if fresh else 1)
        tried += bad
        if used is not None:  # forget what the dropped attempt said
            used.difference_update(log[mark:])
            del log[mark:]
    raise ReasoningError(
        f"musr library: every expansion of {fact.type!r} leaks a banned keyword, e.g. {tried[0]!r}"
    )
