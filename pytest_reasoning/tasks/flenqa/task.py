"""FLenQA: the same True/False reasoning padded to any length (``flenqa.monorel``,
``flenqa.people_in_rooms``, ``flenqa.ruletaker``).

A base instance is two key paragraphs (each opens with a key sentence and continues on its
topic with no fact that bears on the question) and a question needing both. The level is the
target length in cl100k tokens; padding of the chosen kind fills the rest, with the key
paragraphs at the chosen position.
"""

from __future__ import annotations

import math
import re
from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, ClassVar

from ...core import Item, Score
from ...errors import InvalidArgument, UnknownLevel
from ...rng import Chooser, SeededChooser, derive_seed
from ..base import Generated, Knob, Task
from ..draw import Draw, SampledChooser, draw_of
from ..names import first_names, last_names
from . import corpus, solver
from .breakdown import length_breakdown
from .tokens import count
from .vocab import (
    PERSON_BANK,
    task_words,
)

__all__ = ["TOLERANCE", "Base", "FlenqaTask"]

TOLERANCE = 70  # a sample "has length N" when its prompt measures N ± 70 tokens
KEY_TOKENS = 100  # a key paragraph continues until about this long
MAX_SENTENCE = 60  # longest padding sentence, in tokens (the tuning step; see _padding)
INTRO = "Read the text below, then answer the question about it."
DIRECT = "Answer with True or False only."
COT = "Show your steps, then answer True or False.\nLet's think step by step."
PADDINGS = ("duplicate", "similar", "different")
POSITIONS = ("first", "middle", "last", "random")
_VERDICT = re.compile(r"\b(true|false)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Base:
    """A base instance: the reasoning every length variant shares."""

    keys: tuple[str, str]
    paragraphs: tuple[tuple[str, ...], tuple[str, ...]]  # sentences, the key sentence first
    question: str
    logic: dict[str, Any]
    answer: str
    entities: frozenset[str]  # words that mark a mention of this instance's people or room
    head: str = ""  # what the prompt says before the text (the question, where the paper asks it)
    templates: frozenset[str] = frozenset()  # the filler templates its paragraphs used


@cache
def _names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """First and last names, minus task words."""
    banned = frozenset(task_words())
    return first_names(banned), last_names(banned)


# Bounded caches: a 128k-token item holds about 8,000 distinct sentences, so this keeps several
# items' counts and memory stops growing after a few long items (docs/benchmarks.md).
_CACHE = 50_000
_encoded = lru_cache(maxsize=_CACHE)(count)
_KNOWN: dict[str, int] = {}  # bank sentences (with their leading space), counted by parts


def _count(text: str) -> int:
    known = _KNOWN.get(text)
    return _encoded(text) if known is None else known


def _filled(template: str, slot: str, value: str) -> str:
    """A bank sentence about ``value``; its length with a leading space is recorded from
    cached parts. cl100k's pre-tokenizer starts a piece at " word" and at "'s", and the slot
    always follows a space (or opens the template) and is followed by a space, "'s" or
    punctuation, so the parts add up (a test checks every template)."""
    sentence = template.replace(slot, value)
    key = " " + sentence
    if key not in _KNOWN:
        if len(_KNOWN) > _CACHE:
            _KNOWN.clear()
        parts = template.split(slot)  # text around each mention (one sentence has two)
        total = _encoded(" " + parts[0][:-1]) if parts[0] else 0
        for k, part in enumerate(parts[1:], 1):
            total += _encoded(" " + value) + _encoded(part if k == len(parts) - 1 else part[:-1])
        _KNOWN[key] = total
    return sentence


def _people(chooser: Chooser, k: int) -> list[tuple[str, str]]:
    """``k`` people with distinct first and distinct last names."""
    first, last = _names()
    return list(zip(chooser.sample(first, k), chooser.sample(last, k), strict=True))


def _continue(
    key: str,
    bank: Sequence[str],
    slot: str,
    value: str,
    chooser: Chooser,
    used: set[str] | None = None,
) -> tuple[str, ...]:
    """A key paragraph: the key sentence, then bank sentences about ``value`` until about
    KEY_TOKENS long. Templates in ``used`` are skipped and the ones taken are added, so no
    filler sentence is said of two people in one prompt (a paragraph ends early once the
    bank is spent)."""
    out = [key]
    size = _count(key)
    free = bank if not used else [t for t in bank if t not in used]
    # A short random run is nearly always enough (about five sentences make a paragraph);
    # the rest, in random order too, only once that run is spent.
    order = chooser.sample(free, min(len(free), _RUN))
    at = 0
    while size < KEY_TOKENS - 8:
        if at == len(order):
            if len(order) == len(free):
                break
            taken = set(order)
            rest = [t for t in free if t not in taken]
            order += chooser.sample(rest, len(rest))
        template = order[at]
        at += 1
        if used is not None:
            used.add(template)
        sentence = _filled(template, slot, value)
        out.append(sentence)
        size += _count(" " + sentence)
    return tuple(out)


_RUN = 12  # bank sentences drawn up front for one paragraph
_LOW = 2 * _RUN  # past the paper's lengths, a bank this close to spent starts a new round
PAPER_MAX = 3000  # the paper's longest level: up to it no filler template is used twice


def _mentions(text: str, words: frozenset[str]) -> bool:
    return any(re.search(rf"\b{re.escape(w)}\b", text) for w in words)


class FlenqaTask(Task):
    levels = ("250", "500", "1000", "2000", "3000")
    styles = ("direct", "cot")
    breaks_down = True  # accuracy by input length (breakdown.py)

    def breakdown(self, rows: Sequence[Mapping[str, Any]], *, suites: bool = False) -> Any:
        return length_breakdown(rows, suites=suites)

    banks: ClassVar[tuple[Sequence[str], ...]] = (PERSON_BANK,)  # where fillers come from
    knobs: ClassVar[dict[str, Knob]] = {
        "target_tokens": Knob(
            "target_tokens", int, "prompt length in cl100k tokens (the level)", minimum=100,
            maximum=128_000,
        ),
        "padding": Knob("padding", str, "what fills the length", choices=PADDINGS),
        "position": Knob(
            "position", str, "where the key paragraphs sit in the padding", choices=POSITIONS
        ),
        "padding_corpus": Knob(
            "padding_corpus", str, "prose for 'different' padding: kjv, pydoc or a .txt path"
        ),
    }  # fmt: skip

    # -- levels ------------------------------------------------------------------------------
    def check_level(self, level: str) -> None:
        if not level.isdigit() or not 100 <= int(level) <= 128_000:
            raise UnknownLevel(
                f"unknown level {level!r} for {self.id}; expected a length in tokens, e.g. "
                + ", ".join(self.levels)
            )

    def preset(self, level: str) -> dict[str, Any]:
        self.check_level(level)
        return {
            "target_tokens": int(level),
            "padding": "different",
            "position": "random",
            "padding_corpus": "kjv",
        }

    def stratum(self, params: Mapping[str, Any], index: int) -> int:
        return index % 2  # labels alternate: exactly balanced in every batch of even size

    def identity(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """The logic of the base instance with its people (and rooms) renamed by their
        role (:meth:`template`): the padding, the key paragraphs' order and wording and the
        names do not change the problem, so a base instance is the same problem, in the same
        train/test split, at every length (docs/tasks/splits.md)."""
        return {"template": self.template(problem["logic"])}

    def split_key(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """The part of the template drawn apart from the answer (:meth:`topic`): both answers
        of each relation, property group or rule are in the same split, so within a split
        the topic never tells the answer."""
        return {"topic": self.topic(problem["logic"])}

    @abstractmethod
    def template(self, logic: Mapping[str, Any]) -> Any:
        """The instance's logic with its people (and rooms) renamed by role."""

    @abstractmethod
    def topic(self, logic: Mapping[str, Any]) -> Any:
        """What of the template is drawn before the answer (a function of the template)."""

    # -- the base instance -------------------------------------------------------------------
    @abstractmethod
    def base(self, chooser: Chooser, label: bool, used: set[str] | None = None) -> Base:
        """A base instance whose answer is ``label``; its filler sentences avoid and join
        ``used`` (see :func:`_continue`)."""

    # -- generation --------------------------------------------------------------------------
    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        return self._build(chooser, chooser, params, index)

    def draw(
        self, level: str, seed: int, raw: int, params: Mapping[str, Any], index: int, draw: Draw
    ) -> Generated:
        """The ``draw`` hook (hooks.TaskHooks): the paper's point is the SAME reasoning at
        every length, so the base instance comes from (task, seed, index) alone; the padding
        from the length and kind as well (positions share one padding text, and only the
        key paragraphs move)."""
        base = SampledChooser(derive_seed(self.id, "base", seed, raw), draw)
        pad = SampledChooser(
            derive_seed(
                self.id, params["target_tokens"], params["padding"], params["padding_corpus"],
                seed, raw,
            ),
            draw,
        )  # fmt: skip
        return self._build(base, pad, params, index)

    def _build(
        self, base_chooser: Chooser, chooser: Chooser, params: Mapping[str, Any], index: int
    ) -> Generated:
        label = self.stratum(params, index) == 0
        base = self.base(base_chooser, label)
        target, padding = int(params["target_tokens"]), str(params["padding"])
        position = "first" if padding == "duplicate" else params["position"]
        u1, u2 = sorted((chooser.random(), chooser.random()))  # random position's cuts
        material = SeededChooser(chooser.randint(0, 2**63 - 1))
        if padding == "different":
            corpus.sentences(params["padding_corpus"])  # a bad path fails before any work
        source = self._padding(
            base, padding, params["padding_corpus"], material, recycle=target > PAPER_MAX
        )

        head_text, tail_text = base.head or INTRO, self.tail(base)
        head = _count(f"{head_text}\n\n")
        tail = _count(f"{tail_text}\n{DIRECT}" if tail_text else DIRECT)
        whole = padding == "similar"  # cut between other instances' paragraphs only

        def measure(k: int) -> int:
            """The direct prompt's length with k padding sentences, from cached counts."""
            while k > len(pool):
                pool.append(next(source))
            paragraphs = self._paragraphs(base, pool[:k], position, u1, u2, whole)
            return head + _tokens(paragraphs) + tail

        pool: list[tuple[str, int]] = []
        fixed = measure(0)
        if fixed > target + TOLERANCE:
            raise InvalidArgument(
                f"knob 'target_tokens': {target} is too short; this instance alone is {fixed} "
                f"tokens, so ask for at least {fixed - TOLERANCE}"
            )
        # The split is the base instance's: a draw in the other one stops before its padding
        # (most of the work) is measured out, and is redrawn as it would have been.
        draw_of(chooser).stop_if_other_split({"logic": base.logic})
        # First guess from the sentences' own counts, then a sentence at a time towards the
        # target, so that the two styles' prompts straddle it.
        aim = target - fixed - _cot_extra() // 2
        k, size = 0, 0
        while True:
            if k >= len(pool):
                pool.append(next(source))
            step = _count(" " + pool[k][0])
            if abs(size + step - aim) >= abs(size - aim):
                break
            k, size = k + 1, size + step
        # The per-sentence guess misses by about a token per paragraph break: nothing at the
        # paper's lengths, hundreds of sentences at 128k with short `similar` paragraphs.
        # Jump by the measured miss first (secant steps on exact counts), so the walk below
        # stays a few sentences long at any length.
        for _ in range(8):
            miss = measure(k) + _cot_extra() // 2 - target
            if abs(miss) <= MAX_SENTENCE or k == 0:
                break
            per = max(1.0, (measure(k) - fixed) / k)
            k = max(0, k - round(miss / per))
        best = abs(measure(k) + _cot_extra() // 2 - target)
        for d in (1, -1):
            while k + d >= 0 and (trial := abs(measure(k + d) + _cot_extra() // 2 - target)) < best:
                k, best = k + d, trial

        def render(k: int) -> str:
            paragraphs = self._paragraphs(base, pool[:k], position, u1, u2, whole)
            text = "\n\n".join(" ".join(p) for p in paragraphs)
            # Without a closing question the instruction follows a blank line (RuleTaker).
            return f"{head_text}\n\n{text}\n" + (f"\n{tail_text}" if tail_text else "")

        body = render(k)
        tokens = count(f"{body}\n{DIRECT}")  # the one whole-prompt encode
        if tokens != measure(k):  # the pieces did not add up (odd text): step on exact counts
            for _ in range(60):
                if tokens + _cot_extra() < target - TOLERANCE:
                    k += 1
                elif tokens > target + TOLERANCE and k > 0:
                    k -= 1
                else:
                    break
                measure(k)  # extends the pool
                body = render(k)
                tokens = count(f"{body}\n{DIRECT}")
        problem = {
            "key_sentences": list(base.keys),
            "question": base.question,
            "padding": padding,
            "position": position,
            "target_tokens": target,
            "tokens": tokens,
            "logic": base.logic,
        }
        return Generated(problem=problem, answer=base.answer, body=body)

    def _paragraphs(
        self,
        base: Base,
        pad: Sequence[tuple[str, int]],
        position: str,
        u1: float,
        u2: float,
        whole: bool = False,
    ) -> list[Sequence[str]]:
        """The text as paragraphs of sentences: padding in its own paragraphs, the key
        paragraphs placed. A cut falls between sentences (the paper's injection of key
        paragraphs into prose), or with ``whole`` only between padding paragraphs, so another
        instance's paragraph is never split around a key paragraph."""
        k1, k2 = base.paragraphs
        n = len(pad)
        cuts = (
            [j for j in range(n + 1) if j in (0, n) or pad[j][1] != pad[j - 1][1]]
            if whole and position in ("middle", "random")
            else range(n + 1)
        )
        if position == "first":
            parts: list[Any] = [k1, k2, pad]
        elif position == "last":
            parts = [pad, k1, k2]
        elif position == "middle":  # split where half the padding's tokens are before
            sizes = [_count(" " + sentence) for sentence, _ in pad]
            before = [0]
            for size in sizes:
                before.append(before[-1] + size)
            half = min(cuts, key=lambda j: (abs(before[j] - before[-1] / 2), j))
            parts = [pad[:half], k1, k2, pad[half:]]
        else:

            def nearest(u: float) -> int:
                if not whole:  # every sentence boundary: round, halves down
                    return min(n, math.ceil(u * (n + 1) - 0.5))
                return min(cuts, key=lambda j: (abs(j - u * (n + 1)), j))

            a, b = nearest(u1), nearest(u2)
            parts = [pad[:a], k1, pad[a:b], k2, pad[b:]]
        out: list[Sequence[str]] = []
        for part in parts:
            if part is k1 or part is k2:
                out.append(part)
                continue
            current: list[str] = []
            last = None
            for sentence, para in part:
                if para != last and current:
                    out.append(current)
                    current = []
                current.append(sentence)
                last = para
            if current:
                out.append(current)
        return out

    def _padding(
        self, base: Base, kind: str, corpus_name: str, chooser: Chooser, *, recycle: bool = False
    ) -> Iterator[tuple[str, int]]:
        """An endless stream of (sentence, paragraph number) to pad with. With ``recycle``
        (lengths past the paper's), ``similar`` padding reuses the filler templates once the
        banks run low, never the sample's own."""
        para = 0
        if kind == "duplicate":
            while True:  # the key paragraphs again, alternately
                for paragraph in base.paragraphs:
                    for sentence in paragraph:
                        yield sentence, para
                    para += 1
        if kind == "similar":
            used = set(base.templates)
            while True:  # key paragraphs of other instances that name none of ours
                if recycle and any(
                    len(bank) - len(used.intersection(bank)) < _LOW for bank in self.banks
                ):
                    used = set(base.templates)  # a new round of the banks
                other = self.base(chooser, chooser.random() < 0.5, used)
                if other.entities & base.entities:
                    continue
                for paragraph in chooser.sample(list(other.paragraphs), 2):
                    if _mentions(" ".join(paragraph), base.entities):
                        continue
                    for sentence in paragraph:
                        yield sentence, para
                    para += 1
        paragraphs = corpus.sentences(corpus_name)
        start = chooser.randint(0, len(paragraphs) - 1)
        for step in range(10 * len(paragraphs)):  # a contiguous run, wrapping round
            for sentence in paragraphs[(start + step) % len(paragraphs)]:
                # Sentences are the unit the length is tuned in: a very long one could leave
                # the best cut more than the tolerance away, so those are skipped.
                if _count(" " + sentence) <= MAX_SENTENCE and not _mentions(
                    sentence, base.entities
                ):
                    yield sentence, para
            para += 1
        raise InvalidArgument(f"knob 'padding_corpus': {corpus_name!r} ran out of prose")

    # -- rendering and scoring ---------------------------------------------------------------
    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        return f"{generated.body}\n{COT if style == 'cot' else DIRECT}"

    def score(self, item: Item, response: str) -> Score:
        p = item.problem
        extra: dict[str, Any] = {
            "padding": p["padding"],
            "position": p["position"],
            "target_tokens": p["target_tokens"],
        }
        verdicts = list(_VERDICT.finditer(response))
        if item.style == "cot":
            low = response.lower()
            extra["coverage"] = all(k.lower() in low for k in p["key_sentences"])
            extra["answer_first"] = _answer_first(response, verdicts)
        if not verdicts:
            return Score(False, None, "no_answer", extra=extra)
        predicted = verdicts[-1].group(1).capitalize()
        extra["predicted"] = predicted
        correct = predicted == item.answer
        return Score(correct, predicted, None if correct else "wrong_label", extra=extra)

    def solve(self, item: Item) -> str:
        return solver.solve(self.id, item.prompt)

    prompt_marker = INTRO

    def text_answer(self, prompt: str, *, max_size: int | None = None) -> str | None:
        # The three tasks share the intro, so any of them answers any of their prompts.
        return f"The answer is {solver.solve_any(prompt)}."

    def choices(self, item: Item) -> Sequence[str]:
        return ["True", "False"]

    def tail(self, base: Base) -> str:
        """What follows the text before the answer instruction: the question (PIR asks it
        after the text, MonoRel before and after); empty where the paper asks only before."""
        return f"Question: {base.question}"

    def reference_response(self, item: Item) -> str:
        return self.solve(item)

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        k1, k2 = problem["key_sentences"]
        return f"The text says: {k1} It also says: {k2} {self.reasoning(problem)} Answer: {answer}"

    @abstractmethod
    def reasoning(self, problem: Mapping[str, Any]) -> str:
        """One sentence combining the two key facts."""


def _answer_first(response: str, verdicts: Sequence[re.Match[str]]) -> bool:
    """A chain-of-thought that states True/False in its first sentence, then reasons."""
    if not verdicts:
        return False
    first = re.search(r"[.!?\n]", response.strip())
    end = first.end() if first else len(response)
    rest = response.strip()[end:]
    return (
        verdicts[0].start() < end + (len(response) - len(response.lstrip()))
        and len(rest.split()) >= 5
    )


def _tokens(paragraphs: Sequence[Sequence[str]]) -> int:
    """Exact cl100k length of the paragraphs, each followed by a blank line, from cached
    per-sentence counts. cl100k's pre-tokenizer starts a token at each " word" and never
    carries one across a newline run (a final "." and the newlines may share one token, so the
    last sentence is counted with them): the pieces add up. A test checks this against
    encoding the whole prompt."""
    total = 0
    for p in paragraphs:
        if len(p) == 1:
            total += _count(p[0] + "\n\n")
            continue
        total += _count(p[0]) + sum(_count(" " + s) for s in p[1:-1])
        total += _count(" " + p[-1] + "\n\n")
    return total


@cache
def _cot_extra() -> int:
    """How many tokens longer the cot instruction is than the direct one."""
    return count(f"x\n{COT}") - count(f"x\n{DIRECT}")


def _full(person: tuple[str, str]) -> str:
    return f"{person[0]} {person[1]}"
