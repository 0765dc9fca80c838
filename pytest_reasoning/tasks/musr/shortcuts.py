"""MuSR's shortcut rules: heuristics that answer a story WITHOUT the reasoning it tests, for
``pytest-reasoning audit`` (each must stay near chance), and the text tied to each choice
for the audit's per-choice bag-of-words classifier.

Rules read only what the prompt shows: the story (and its chapters, which a reader sees as
the detective's visits, the moves, the people), the choices and the question. They use the
exported fields that the story states word for word (the victim, weapon and scene of the
opening line; each move's person, item and destination; each item's starting place) rather
than parsing them back out of the text, and never a hidden one (who saw a move, the trees,
the answer).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from ...core import Item
from ..base import Shortcut
from . import murder, teams
from .story import PLACE_COLOUR, describe_allocation

__all__ = [
    "MURDER_SHORTCUTS",
    "PLACEMENT_SHORTCUTS",
    "TEAMS_SHORTCUTS",
    "bag_of_words",
    "murder_texts",
    "placement_texts",
    "sentences",
    "teams_texts",
]

_SENTENCE = re.compile(r"(?<=[.!?'])\s+(?=[A-Z'])")


def sentences(text: str) -> list[str]:
    """The story's sentences (its paragraphs split at full stops)."""
    return [s for p in text.split("\n\n") for s in _SENTENCE.split(p.strip()) if s]


def _count(phrase: str, text: str) -> int:
    return len(re.findall(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text, re.IGNORECASE))


def _chapter(p: Mapping[str, Any], name: str) -> str:
    start, end = p["chapters"][name]
    return str(p["story"][start:end])


def _pick(scores: Mapping[str, float], *, low: bool = False) -> str:
    """The choice with the highest (or lowest) score; a tie goes to the first of the tied
    in the prompt's order (the choices are shuffled, so that is a fair coin)."""
    best = (min if low else max)(scores.values())
    return next(c for c, v in scores.items() if v == best)


def _one_or_first(choices: Sequence[str], hits: Sequence[str], *, other: bool = False) -> str:
    """The one choice a rule singles out (or the other one, ``other``); when it singles out
    none or several, the first choice (a rule with no signal scores chance, not zero)."""
    if len(hits) != 1:
        return choices[0]
    return next(c for c in choices if c != hits[0]) if other else hits[0]


# -- murder mysteries ----------------------------------------------------------------------
def murder_texts(item: Item) -> dict[str, str]:
    """Each suspect's chapter (the detective's visit), keyed by the suspect's name."""
    return {name: _chapter(item.problem, name) for name in item.problem["choices"]}


def _per_suspect(item: Item, score: Callable[[str], float], *, low: bool = False) -> str:
    return _pick({n: score(t) for n, t in murder_texts(item).items()}, low=low)


def _crime_words(item: Item) -> list[str]:
    p = item.problem
    return [p["victim"], p["weapon"], p["scene"]]


_EXPLAINED = re.compile(
    r"dated (?:receipt|invoice)|explain|ordinary cause|account of|everyday", re.IGNORECASE
)
_NEGATION = re.compile(r"\b(?:no one|nobody|never|cannot|not|no)\b", re.IGNORECASE)


@cache
def _odd_acts() -> tuple[str, ...]:
    return tuple(murder.odd_acts())


def _explained_away(item: Item) -> str:
    hits = [n for n, t in murder_texts(item).items() if _EXPLAINED.search(t)]
    return _one_or_first(item.problem["choices"], hits, other=True)


def _odd_act(item: Item) -> str:
    hits = [n for n, t in murder_texts(item).items() if any(a in t for a in _odd_acts())]
    return _one_or_first(item.problem["choices"], hits, other=True)


def _names_all_three(item: Item) -> str:
    words = _crime_words(item)
    hits = [n for n, t in murder_texts(item).items() if all(_count(w, t) for w in words)]
    return _one_or_first(item.problem["choices"], hits)


MURDER_SHORTCUTS = (
    Shortcut("longest_chapter", "the suspect with the longer chapter (the paper's sanity "
             "baseline)", lambda it: _per_suspect(it, len)),
    Shortcut("shortest_chapter", "the suspect with the shorter chapter",
             lambda it: _per_suspect(it, len, low=True)),
    Shortcut("explained_away_is_innocent", "the suspect whose chapter explains something away "
             "(a dated receipt or invoice, an 'account of', 'explain') is innocent",
             _explained_away),
    Shortcut("odd_act_is_innocent", "the suspect whose chapter states an act from the "
             "suspicious-fact pool is innocent", _odd_act),
    Shortcut("names_the_crime_most", "the suspect whose chapter names the victim, the weapon "
             "and the scene most often", lambda it: _per_suspect(
                 it, lambda t: sum(_count(w, t) for w in _crime_words(it)))),
    Shortcut("names_all_three", "the only suspect whose chapter names the victim, the weapon "
             "and the scene", _names_all_three),
    Shortcut("fewer_negations", "the suspect whose chapter says 'no', 'not', 'never', "
             "'nobody' less often", lambda it: _per_suspect(
                 it, lambda t: len(_NEGATION.findall(t)), low=True)),
)  # fmt: skip


# -- object placements ---------------------------------------------------------------------
def placement_texts(item: Item) -> dict[str, str]:
    """Each choice's mentions: the story's sentences that name the location."""
    story = sentences(item.problem["story"])
    return {c: " ".join(s for s in story if _count(c, s)) for c in item.problem["choices"]}


def _moves_of(item: Item) -> list[Mapping[str, Any]]:
    q = item.problem["query"]
    return [m for m in item.problem["moves"] if m["item"] == q["item"]]


def _true_place(item: Item) -> str:
    moves = _moves_of(item)
    return (
        str(moves[-1]["to"]) if moves else str(item.problem["start"][item.problem["query"]["item"]])
    )


def _own_move(item: Item) -> str:
    who = item.problem["query"]["person"]
    own = [m["to"] for m in _moves_of(item) if m["person"] == who]
    return str(own[-1]) if own else _true_place(item)


def _last_mover_knows(item: Item) -> str:
    moves = _moves_of(item)
    if moves and moves[-1]["person"] == item.problem["query"]["person"]:
        return _true_place(item)
    return str(item.problem["choices"][0])


def _named(item: Item, *, low: bool = False) -> str:
    story = item.problem["story"]
    return _pick({c: _count(c, story) for c in item.problem["choices"]}, low=low)


def _previous_place(item: Item) -> str:
    """Where the item was before its last move (the start if it moved once)."""
    moves = _moves_of(item)
    places = [item.problem["start"][item.problem["query"]["item"]], *[m["to"] for m in moves]]
    return str(places[-2]) if len(places) > 1 else str(places[0])


def _item_place(item: Item) -> str:
    """The first choice (they are shuffled) that is one of the item's places: where it
    started or was moved to. Chance among those, not among all four."""
    q = item.problem["query"]
    own = {item.problem["start"][q["item"]], *(m["to"] for m in _moves_of(item))}
    choices: list[str] = item.problem["choices"]
    return next((c for c in choices if c in own), choices[0])


@cache
def _colour_patterns() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(re.escape(c).replace(re.escape("{place}"), "(.+?)"), re.IGNORECASE)
                 for c in PLACE_COLOUR)  # fmt: skip


def _coloured(item: Item) -> str:
    """The choice least often named in passing remarks (the narrator's colour sentences)."""
    counts = dict.fromkeys(item.problem["choices"], 0)
    for s in sentences(item.problem["story"]):
        for pattern in _colour_patterns():
            m = pattern.fullmatch(s)
            if m and m.group(1).lower() in {c.lower() for c in counts}:
                counts[next(c for c in counts if c.lower() == m.group(1).lower())] += 1
    return _pick(counts, low=True)


def _in_choices(item: Item, place: str) -> str:
    return place if place in item.problem["choices"] else str(item.problem["choices"][0])


PLACEMENT_SHORTCUTS = (
    Shortcut("true_location", "where the item really is at the end (its last move, else its "
             "start)", lambda it: _in_choices(it, _true_place(it))),
    Shortcut("start_location", "where the item was at the start",
             lambda it: _in_choices(it, str(it.problem["start"][it.problem["query"]["item"]]))),
    Shortcut("previous_location", "where the item was before its last move",
             lambda it: _in_choices(it, _previous_place(it))),
    Shortcut("own_move", "where the person asked about last put the item themselves, else "
             "where it really is", lambda it: _in_choices(it, _own_move(it))),
    Shortcut("asked_made_the_last_move", "the person asked about made the item's last move, so "
             "it is where it really is (else the first choice)",
             lambda it: _in_choices(it, _last_mover_knows(it))),
    Shortcut("most_named", "the most-named choice (the paper's sanity baseline)", _named),
    Shortcut("least_named", "the least-named choice", lambda it: _named(it, low=True)),
    Shortcut("item_place", "any place the item was at (its start or a move's destination), "
             "not a place only mentioned", _item_place),
    Shortcut("least_in_passing", "the choice the narrator's passing remarks name least "
             "(they top up the less-named places)", _coloured),
)  # fmt: skip


# -- team allocations ----------------------------------------------------------------------
def _jobs(item: Item) -> dict[str, teams.Job]:
    """The two jobs' setting data by name (how the story talks about each job)."""
    tasks = item.problem["tasks"]
    for s in teams.SETTINGS:
        if [j.name for j in s.jobs] == list(tasks):
            return {j.name: j for j in s.jobs}
    raise ValueError(f"no setting has the jobs {tasks}")


def _about(text: str, words: Sequence[str]) -> bool:
    return all(_count(w, text) for w in words)


def teams_texts(item: Item) -> dict[str, str]:
    """Each allocation's text: for every person, the sentences about them and the job the
    allocation gives them; for the pair, the sentences that name both."""
    p = item.problem
    story = sentences(p["story"])
    jobs = _jobs(item)
    out: dict[str, str] = {}
    for option in p["choices"]:
        parts: list[str] = []
        for task, group in zip(p["tasks"], option, strict=True):
            job = jobs[task]
            words = (job.doing, job.craft, job.place, job.flop)
            for person in group:
                parts += [
                    s for s in story if _count(person, s) and any(_count(w, s) for w in words)
                ]
            if len(group) == 2:
                parts += [s for s in story if _about(s, group)]
        out[describe_allocation(p["tasks"], option)] = " ".join(parts)
    return out


_GOOD = re.compile(r"\b(?:years|diploma|certificate|best|praised|trusted|friends?|teaches|"
                   r"thanking|clipping|finish each other's|doubles)\b", re.IGNORECASE)  # fmt: skip
_BAD = re.compile(r"\b(?:never|once|groans|tedious|rushing|late|shouting|refuses|careless|"
                  r"blamed|forgot|avoids?|hardly|rarely)\b", re.IGNORECASE)  # fmt: skip


def _lexicon(item: Item) -> str:
    return _pick({k: len(_GOOD.findall(t)) - len(_BAD.findall(t))
                  for k, t in teams_texts(item).items()})  # fmt: skip


def _longest_text(item: Item) -> str:
    return _pick({k: len(t) for k, t in teams_texts(item).items()})


TEAMS_SHORTCUTS = (
    Shortcut("praise_words", "the allocation whose text has the most praise words minus "
             "blame words (a sentiment lexicon, no reasoning)", _lexicon),
    Shortcut("most_text", "the allocation with the most sentences about its people at their "
             "jobs", _longest_text),
)  # fmt: skip


# -- the per-choice bag-of-words baseline ----------------------------------------------------
def _features(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))}


def bag_of_words(
    train: Iterable[Item], test: Iterable[Item], texts: Callable[[Item], Mapping[str, str]]
) -> tuple[int, int]:
    """A naive Bayes classifier over each choice's text (binary unigram and bigram features,
    add-one smoothing), trained on ``train`` labelled gold / not gold; it answers each
    ``test`` item with the choice whose text scores highest. Returns (right, asked): what a
    classifier that learned the narrator's wording, not the reasoning, would score."""
    pos: Counter[str] = Counter()
    neg: Counter[str] = Counter()
    n_pos = n_neg = 0
    for item in train:
        for answer, text in texts(item).items():
            if answer == item.answer:
                pos.update(_features(text))
                n_pos += 1
            else:
                neg.update(_features(text))
                n_neg += 1
    weight = {f: math.log((pos[f] + 1) / (n_pos + 2)) - math.log((neg[f] + 1) / (n_neg + 2))
              for f in set(pos) | set(neg)}  # fmt: skip
    right = asked = 0
    for item in test:
        # Summed in sorted order: the same float whatever PYTHONHASHSEED orders the set.
        scores = {
            a: math.fsum(weight.get(f, 0.0) for f in sorted(_features(t)))
            for a, t in texts(item).items()
        }
        right += _pick(scores) == item.answer
        asked += 1
    return right, asked
