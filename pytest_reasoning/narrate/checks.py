"""The validators a narrated chapter must pass, as the MuSR paper's pipeline has them:
fact recall (every scenario fact is stated: a model's yes/no answer per fact, and first a
deterministic check that the fact's names, places, items and times are in the chapter), no
leak (none of the banned words of its gold facts, no gold conclusion stated), and nothing
from outside the problem (no stranger's name; none of the problem's items or places the
chapter's facts do not concern).

The deterministic checks run first: a chapter they reject costs no yes/no questions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from ..tasks.names import first_names, last_names
from .plan import Chapter, Plan

__all__ = [
    "FAILURES",
    "FactCheck",
    "Verdict",
    "inspect",
    "mentions",
    "parse_judge",
    "strings",
    "vocabulary",
]

# Why an attempt failed, in the order the summary lists them.
FAILURES = {
    "empty": "no chapter text",
    "cut": "cut off at the token limit",
    "leak": "leak (a banned word or a gold conclusion)",
    "stranger": "outside the problem (a name it does not have)",
    "outside": "outside the chapter (an item or place of another part of the problem)",
    "entities": "fact recall: a fact's names, places, items or times missing",
    "judge": "fact recall: the model's yes/no check said a fact is not stated",
}


@dataclass
class FactCheck:
    fact: str
    missing: tuple[str, ...]  # the fact's entities the chapter lacks
    judge: str | None = None  # "yes", "no", "unclear"; None: not asked

    @property
    def stated(self) -> bool:
        return not self.missing and self.judge == "yes"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fact": self.fact, "judge": self.judge}
        if self.missing:
            out["missing"] = list(self.missing)
        return out


@dataclass
class Verdict:
    """One attempt's validation."""

    facts: list[FactCheck]
    leaks: list[str] = field(default_factory=list)
    strangers: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    empty: bool = False
    cut: bool = False  # the reply stopped at its token limit, mid-chapter

    @property
    def deterministic_ok(self) -> bool:
        return not (
            self.empty
            or self.cut
            or self.leaks
            or self.strangers
            or self.outside
            or self._entity_misses
        )

    @property
    def _entity_misses(self) -> list[FactCheck]:
        return [f for f in self.facts if f.missing]

    @property
    def ok(self) -> bool:
        return self.deterministic_ok and all(f.stated for f in self.facts)

    def failures(self) -> list[str]:
        """The validators this attempt failed (keys of ``FAILURES``)."""
        out = []
        if self.empty:
            out.append("empty")
        if self.cut:
            out.append("cut")
        if self.leaks:
            out.append("leak")
        if self.strangers:
            out.append("stranger")
        if self.outside:
            out.append("outside")
        if self._entity_misses:
            out.append("entities")
        if any(f.judge not in (None, "yes") for f in self.facts):
            out.append("judge")
        return out

    def feedback(self) -> list[str]:
        """What the next prompt tells the narrator was wrong."""
        lines = []
        if self.empty:
            lines.append("It was empty: write the chapter itself.")
        if self.cut:
            lines.append("It ran on and was cut off: keep to the length asked for.")
        for leak in self.leaks:
            lines.append(f"It gave a conclusion away: {leak}.")
        for name in self.strangers:
            lines.append(f"It named {name!r}, who or which is not part of this story.")
        for thing in self.outside:
            lines.append(f"It mentioned {thing}, which this chapter is not about.")
        for f in self.facts:
            if f.missing:
                lines.append(
                    f"It did not state this fact (it lacks {', '.join(map(repr, f.missing))}): "
                    f"{f.fact}"
                )
            elif f.judge not in (None, "yes"):
                lines.append(f"It did not clearly state this fact: {f.fact}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        asked = [f for f in self.facts if f.judge is not None]
        out: dict[str, Any] = {
            "passed": self.ok,
            "failed": self.failures(),
            "facts_stated": sum(f.stated for f in self.facts),
            "facts": len(self.facts),
            "questions": len(asked),
        }
        unstated = [f.to_dict() for f in self.facts if not f.stated and (f.missing or f.judge)]
        if unstated:
            out["not_stated"] = unstated
        for key in ("leaks", "strangers", "outside"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        return out


# -- matching ----------------------------------------------------------------------------------
_ARTICLE = re.compile(r"^(?:the|a|an) ", re.IGNORECASE)
_TIME = re.compile(r"\b\d{1,2}(?::\d{2})? (?:am|pm)\b|\bnoon\b|\bmidnight\b")


# Cached: inspect() asks for every entity, banned word and outside item whether the same
# chapter mentions it, which normalised the whole chapter each time (86,000 calls for 18
# problems, most of the validators' CPU).
@lru_cache(maxsize=1024)
def _normal(text: str) -> str:
    """Lower case, curly quotes straight, ``10 p.m.``/``10pm`` → ``10 pm``, one space."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = re.sub(r"(?<=[\d\s])([ap])\.m\.?", r"\1m", text)
    text = re.sub(r"(\d)([ap]m)\b", r"\1 \2", text)
    return " ".join(text.split())


@cache
def _phrase(phrase: str) -> re.Pattern[str]:
    words = _normal(_ARTICLE.sub("", phrase.strip())).split()
    body = r"\s+".join(re.escape(w) for w in words)
    return re.compile(rf"(?<![\w-]){body}(?![\w-])")


def mentions(phrase: str, text: str) -> bool:
    """Whether ``text`` names ``phrase`` as whole words, in any case, with or without its
    article (``the front drawer`` is named by "The front drawer" and "front drawer")."""
    if not phrase.strip():
        return False
    return _phrase(phrase).search(_normal(text)) is not None


_CAPITAL = re.compile(r"[A-Z][A-Za-z'\u2019-]*")
# A capitalised word right after these starts a sentence (or a quotation).
_OPENERS = set('.!?:;"\u201c\u201d(\u2014\n')
_TITLES = frozenset({"i", "i'm", "i'd", "i'll", "i've", "mr", "mrs", "ms", "miss", "dr",
                     "sir", "madam", "ok", "okay", "detective", "officer", "inspector",
                     "sergeant"})  # fmt: skip
# First names that are everyday words too: at a sentence's start they are not taken as names.
_WORDS_TOO = frozenset({"will", "may", "june", "april", "august", "grant", "mark", "bill",
                        "rose", "hope", "faith", "joy", "dawn", "summer", "autumn", "art",
                        "chase", "cash", "guy", "sky", "river", "iris", "page", "sunny",
                        "early", "young", "long", "white", "black", "brown", "green", "love",
                        "bell", "king", "price", "best", "hill", "wood", "little"})  # fmt: skip


@cache
def _known_names() -> frozenset[str]:
    return frozenset(n.lower() for n in (*first_names(), *last_names())) - _WORDS_TOO


def _strangers(text: str, plan: Plan) -> list[str]:
    """Capitalised words the problem never uses: names of people, places or things it does
    not have. A sentence's first word counts only when it is a known first or last name."""
    found: list[str] = []
    for m in _CAPITAL.finditer(text):
        word = re.sub(r"['\u2019]s$", "", m.group()).strip("'\u2019-")
        low = word.lower()
        if not low or low in plan.vocabulary or low in _TITLES:
            continue
        before = text[: m.start()].rstrip()
        initial = not before or before[-1] in _OPENERS
        if (not initial or low in _known_names()) and word not in found:
            found.append(word)
    return found


def _entities(fact: str, plan: Plan) -> list[str]:
    """What a chapter must name to state ``fact``: the problem's names, places, items and
    times the fact names, and any other capitalised name in it (not its first word)."""
    out = [e for e in plan.entities if mentions(e, fact)]
    norm = _normal(fact)
    out += [t for t in _TIME.findall(norm) if t not in out]
    for m in _CAPITAL.finditer(fact):
        word = re.sub(r"['\u2019]s$", "", m.group())
        if m.start() > 0 and not any(mentions(word, e) for e in out) and word not in out:
            out.append(word)
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", _normal(text))


def _states(conclusion: str, text: str) -> bool:
    """The chapter holds the conclusion's words in order, word for word."""
    want, have = _words(conclusion), _words(text)
    n = len(want)
    return n > 0 and any(have[i : i + n] == want for i in range(len(have) - n + 1))


def inspect(text: str, chapter: Chapter, plan: Plan, *, cut: bool = False) -> Verdict:
    """The deterministic validators on one attempt (the judge's answers come later); ``cut``:
    the reply stopped at its token limit."""
    facts = [
        FactCheck(f, tuple(e for e in _entities(f, plan) if not mentions(e, text)))
        for f in chapter.facts
    ]
    if not text.strip():
        return Verdict(facts, empty=True, cut=cut)
    leaks = [f"it says {w!r}" for w in chapter.banned if mentions(w, text)]
    leaks += [f"it states {c!r}" for c in chapter.conclusions if _states(c, text)]
    outside = [o for o in chapter.outside if mentions(o, text)]
    return Verdict(facts, leaks, _strangers(text, plan), outside, cut=cut)


_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def parse_judge(reply: str) -> str:
    """``yes``, ``no`` or ``unclear``: the first yes or no the reply says."""
    m = _YES_NO.search(reply)
    return m.group(1).lower() if m else "unclear"


def vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """Every word of ``texts``, lower case (what the stranger check accepts)."""
    out: set[str] = set()
    for t in texts:
        out.update(w.strip("'-") for w in re.findall(r"[a-z0-9'\u2019-]+", _normal(t)))
    return frozenset(out)


def strings(value: Any) -> Sequence[str]:
    """Every string inside a JSON value (a problem's facts, names, trees)."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return out
