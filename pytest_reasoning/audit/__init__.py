"""The shortcut audit: can a task's items be answered WITHOUT the reasoning they test?

For one task x level, distinct problems of the **train** split and of the **test** split are
generated (the splits share no problem: :meth:`Task.split_of`) and a battery of shortcut
baselines, fitted on the train problems, is scored on the test problems, each next to chance
with a Wilson interval:

- ``answer prior``: the most frequent gold answer of the training problems, for every item;
- ``position prior`` (multiple choice): the choice position most often right in training;
- length baselines: ``longest choice`` / ``shortest choice`` (multiple choice with per-choice
  text), ``most mentioned choice`` (the option named most often in the prompt), and
  ``prompt length``: the training majority answer of the prompt's length quartile;
- the family's declared rules (the ``shortcuts`` hook), which read only the prompt;
- ``bag of words``: a binarised multinomial naive Bayes and a logistic regression over word
  unigrams and bigrams, trained on the training prompts (multiple choice with per-choice text:
  on each choice's text, gold against the others);
- ``surface features``: gradient boosting on counts and places (:mod:`.learners`), on the
  whole prompt and per answer option; ``surface counts``: the same on the counts of the
  words most prompts share (the operators, True and False of a DyVal prompt) alone;
- ``numbers rule`` (open numeric answers): the rule over the prompt's numbers (their
  product, sum, largest, end values plus the largest, ...) most often right in training
  (:mod:`.numbers`).

A task with partial credit (zebra's cell accuracy) gets each baseline's mean partial score
too, next to the task's per-cell chance (``cell_chance``, where the task defines it).

Each problem counts once: a level with fewer distinct problems than asked is audited on the
ones it has (``count`` in the result), so the interval is not narrowed by repeats.

The bound every learner and rule must keep (docs/audit.md): accuracy at most
``max(chance, majority) + 0.10``, where majority is the share of the most frequent gold answer
among the test problems (what a constant answer scores).

Chance is the accuracy of a uniform guess: the mean over test items of the ``chance`` hook
(one over the item's choices; zebra the random-grid probability ``(1/N!)^M``). Where a task
has no natural guess space (open numeric answers) chance is the best constant answer's
accuracy on the test items, the share of the most frequent gold answer.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..core import Item, canonical_json, level_key
from ..registry import get_task, task_ids
from ..stats import wilson_interval
from ..tasks import hooks
from ..tasks.base import Task, check_level, resolve_params
from ..tasks.sampler import make_item
from .learners import (
    WORD,
    ChoiceSurface,
    Classifier,
    NaiveBayes,
    classifiers,
    features,
    logistic_available,
    mask_options,
    surface,
)
from .numbers import TOLERANCE, NumbersRule, close, gold_number

__all__ = [
    "BOUND",
    "DEFAULT_COUNT",
    "DEFAULT_TRAIN_COUNT",
    "BaselineResult",
    "LevelAudit",
    "NaiveBayes",
    "audit",
    "audit_dataset",
    "audit_level",
    "distinct",
    "features",
    "summary_rows",
]

DEFAULT_COUNT = 200  # test problems
# Training problems (at least): at 200 a gradient-boosted learner missed what it finds at
# 600 (deductive D3's True-leaf counts: 0.575 trained on 200, 0.705 on 600; issue 41).
DEFAULT_TRAIN_COUNT = 600
BOUND = 0.10  # no baseline may beat max(chance, majority) by more (docs/audit.md)
_WORD = WORD


@dataclass(frozen=True)
class BaselineResult:
    """One shortcut's score on the test items (an abstention counts as wrong)."""

    name: str
    kind: str  # prior | position | length | rule | bow
    doc: str
    correct: int
    n: int
    abstained: int
    low: float
    high: float
    # The mean partial score (zebra: the share of right cells) where the task gives partial
    # credit; None elsewhere.
    partial: float | None = None

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0


@dataclass(frozen=True)
class LevelAudit:
    """The battery's results for one task x level."""

    task: str
    level: str
    seed: int
    train_seed: int
    count: int
    params: dict[str, Any]
    chance: float
    chance_basis: str
    baselines: tuple[BaselineResult, ...] = field(default=())
    majority: float = 0.0  # the most frequent gold answer's share of the test problems
    train_count: int = 0  # distinct training problems
    # A uniform guess's partial score (zebra: one over the houses, per cell), where the task
    # defines ``cell_chance``; None elsewhere.
    partial_chance: float | None = None

    @property
    def partial_bound(self) -> float | None:
        """``partial_chance + BOUND``: what no baseline's partial score may beat."""
        return None if self.partial_chance is None else self.partial_chance + BOUND

    @property
    def bound(self) -> float:
        """``max(chance, majority) + BOUND``: what no baseline may beat."""
        return max(self.chance, self.majority) + BOUND

    @property
    def best(self) -> BaselineResult | None:
        """The most accurate baseline (the first listed among equals)."""
        return max(self.baselines, key=lambda b: b.accuracy, default=None)

    @property
    def excess(self) -> float:
        """How far the best baseline's accuracy lies above chance."""
        best = self.best
        return 0.0 if best is None else best.accuracy - self.chance

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for row, b in zip(out["baselines"], self.baselines, strict=True):
            row["accuracy"] = round(b.accuracy, 4)
            row["low"], row["high"] = round(b.low, 4), round(b.high, 4)
        out["chance"] = round(self.chance, 6)
        out["majority"] = round(self.majority, 6)
        out["bound"] = round(self.bound, 6)
        for row, b in zip(out["baselines"], self.baselines, strict=True):
            row["partial"] = None if b.partial is None else round(b.partial, 4)
        if self.partial_chance is not None:
            out["partial_chance"] = round(self.partial_chance, 6)
            out["partial_bound"] = round(self.partial_chance + BOUND, 6)
        best = self.best
        out["best"] = None if best is None else best.name
        out["excess"] = round(self.excess, 4)
        return out


# -- the battery ------------------------------------------------------------------------------
Guess = Callable[[Item], "str | None"]


Right = Callable[[Item, str], bool]
Partial = Callable[[Item, str], float]


def _score(
    name: str,
    kind: str,
    doc: str,
    guess: Guess,
    items: Sequence[Item],
    confidence: float,
    right: Right | None = None,
    partial: Partial | None = None,
) -> BaselineResult:
    correct = abstained = 0
    credit = 0.0
    for item in items:
        try:
            answer = guess(item)
        except Exception:  # a rule that cannot read an item abstains; the audit goes on
            answer = None
        if answer is None:
            abstained += 1
            continue
        if answer == item.answer if right is None else right(item, answer):
            correct += 1
        if partial is not None:
            credit += partial(item, answer)
    low, high = wilson_interval(correct, len(items), confidence)
    share = credit / len(items) if partial is not None and items else None
    return BaselineResult(name, kind, doc, correct, len(items), abstained, low, high, share)


def _mode(values: Iterable[str]) -> str | None:
    counts = Counter(values)
    if not counts:
        return None
    top = max(counts.values())
    return min(v for v, k in counts.items() if k == top)


def _mentions(prompt: str, option: str) -> int:
    return len(re.findall(rf"(?<!\w){re.escape(option.lower())}(?!\w)", prompt.lower()))


def _batteries(
    task: Task, train: Sequence[Item], confidence: float, test: Sequence[Item]
) -> list[BaselineResult]:
    rows: list[BaselineResult] = []

    def credit(item: Item, answer: str) -> float:
        try:
            return task.score(item, answer).score
        except Exception:  # a guess the scorer cannot read earns nothing
            return 0.0

    partial = credit if task.partial_credit else None

    def add(name: str, kind: str, doc: str, guess: Guess, right: Right | None = None) -> None:
        rows.append(_score(name, kind, doc, guess, test, confidence, right, partial))

    prior = _mode(i.answer for i in train)
    add("answer prior", "prior", "the training problems' most frequent answer", lambda _i: prior)

    choices = {i.id: hooks.choices(task, i) for i in (*train, *test)}
    texts = {i.id: hooks.choice_texts(task, i) for i in (*train, *test)}
    per_item = len({tuple(c) for c in choices.values() if c}) > 1
    if per_item and all(choices[i.id] for i in test):
        positions = Counter(
            opts.index(i.answer)
            for i in train
            if (opts := choices[i.id]) is not None and i.answer in opts
        )
        best_pos = min(p for p, k in positions.items() if k == max(positions.values()))

        def by_position(item: Item) -> str | None:
            opts = choices[item.id]
            return opts[best_pos] if opts and best_pos < len(opts) else None

        add(
            "position prior",
            "position",
            "the choice position most often right in training",
            by_position,
        )

        def mentioned(item: Item, most: bool) -> str | None:
            opts = choices[item.id] or []
            counts = [_mentions(item.prompt, o) for o in opts]
            target = max(counts) if most else min(counts)
            return opts[counts.index(target)] if opts else None

        add(
            "most mentioned choice",
            "length",
            "the option the prompt names most often",
            lambda i: mentioned(i, True),
        )

    if all(texts[i.id] for i in test):

        def by_length(item: Item, longest: bool) -> str | None:
            t = texts[item.id] or {}
            sizes = {k: len(_WORD.findall(v.lower())) for k, v in t.items()}
            pick = max if longest else min
            return pick(sizes, key=sizes.__getitem__) if sizes else None

        add(
            "longest choice",
            "length",
            "the option whose own text is longest",
            lambda i: by_length(i, True),
        )
        add(
            "shortest choice",
            "length",
            "the option whose own text is shortest",
            lambda i: by_length(i, False),
        )

    lengths = sorted(len(_WORD.findall(i.prompt.lower())) for i in train)
    cuts = [lengths[len(lengths) * q // 4] for q in (1, 2, 3)] if lengths else []

    def quartile(item: Item) -> int:
        size = len(_WORD.findall(item.prompt.lower()))
        return sum(size >= c for c in cuts)

    by_bin: dict[int, list[str]] = {}
    for i in train:
        by_bin.setdefault(quartile(i), []).append(i.answer)
    majority = {b: _mode(answers) for b, answers in by_bin.items()}
    add(
        "prompt length",
        "length",
        "the training majority answer of the prompt's length quartile",
        lambda i: majority.get(quartile(i), prior),
    )

    for rule in hooks.shortcuts(task):
        add(rule.name, "rule", rule.doc, rule.guess)

    if all(texts[i.id] for i in (*train, *test)):
        # Each option's own text with the options' names masked: a name is drawn afresh
        # for every story, so left as it is it only hides the words around it (issue 41:
        # "<the option> punched a wall after a call with <another>" told murder L3's
        # innocent at 0.655 once the suspects' names were masked, 0.535 before).
        texts = {k: mask_options(t) if t else t for k, t in texts.items()}
        docs, labels = [], []
        for i in train:
            for key, text in (texts[i.id] or {}).items():
                docs.append(text)
                labels.append("gold" if key == i.answer else "other")
        per_text = classifiers(docs, labels)
        if logistic_available() and len(set(labels)) == 2:
            found = surface(docs, labels)
            per_text += [("surface features", found)] if found is not None else []
        for name, model in per_text:

            def per_choice(item: Item, model: Classifier = model) -> str | None:
                t = texts[item.id] or {}
                keys = list(t)
                odds = model.gold_odds([t[k] for k in keys])
                return keys[odds.index(max(odds))] if keys else None

            add(
                f"{name} (per choice)",
                "bow" if name.startswith("bag") else "surface",
                f"{name} on each option's own text, trained on the train split: the option "
                "most like a right answer",
                per_choice,
            )
    if all(choices[i.id] for i in (*train, *test)) and logistic_available():
        listed = {i.id: list(choices[i.id] or ()) for i in (*train, *test)}

        def own(i: Item) -> list[str] | None:
            ct = texts[i.id]
            keys = listed[i.id]
            return [ct[k] for k in keys] if ct and all(k in ct for k in keys) else None

        booster = ChoiceSurface(
            [i.prompt for i in train], [listed[i.id] for i in train], [i.answer for i in train],
            [own(i) for i in train],
        )  # fmt: skip
        said = booster.predict([i.prompt for i in test], [listed[i.id] for i in test],
                               [own(i) for i in test])  # fmt: skip
        chosen = {i.id: p for i, p in zip(test, said, strict=True)}
        add(
            "surface features (per option)",
            "surface",
            "gradient boosting on where and how often the prompt names each option, its place "
            "and length: the option most like a right answer",
            lambda i: chosen[i.id],
        )
    prompts, answers = [i.prompt for i in train], [i.answer for i in train]
    numeric = all(gold_number(a) is not None for a in answers)
    if numeric and not any(choices[i.id] for i in train):
        numbers = NumbersRule(prompts, answers)
        add(
            f"numbers rule ({numbers.label})",
            "numbers",
            f"the rule over the description's numbers most often right in training "
            f"({numbers.label}: {numbers.trained} of {len(train)}), within a relative "
            f"{TOLERANCE:g} of the gold",
            lambda i: _number_text(numbers.guess(i.prompt)),
            lambda i, said: close(float(said), gold_number(i.answer)),
        )
    whole_prompt = classifiers(prompts, answers)
    found = surface(prompts, answers)
    whole_prompt += [("surface features", found)] if found is not None else []
    counted = surface(prompts, answers, counts_only=True)
    whole_prompt += [("surface counts", counted)] if counted is not None else []
    for name, model in whole_prompt:
        said = model.predict([i.prompt for i in test])
        predicted = {i.id: p for i, p in zip(test, said, strict=True)}

        def whole(item: Item, predicted: dict[str, str | None] = predicted) -> str | None:
            return predicted[item.id]

        add(
            name,
            "bow" if name.startswith("bag") else "surface",
            f"{name} on the whole prompt, trained on the train split",
            whole,
        )
    return rows


def _number_text(value: float | None) -> str | None:
    return None if value is None else repr(value)


def _chance(task: Task, test: Sequence[Item]) -> tuple[float, str]:
    values = [hooks.chance(task, i) for i in test]
    if test and all(v is not None for v in values):
        options = {len(c) for i in test if (c := hooks.choices(task, i))}
        basis = (
            f"uniform over {options.pop()} answers"
            if len(options) == 1
            else ("uniform over each item's choices" if options else "task-defined")
        )
        return sum(v for v in values if v is not None) / len(test), basis
    top = Counter(i.answer for i in test).most_common(1)
    return (top[0][1] / len(test) if top else 0.0), "best constant answer (open answers)"


def distinct(items: Iterable[Item], task: Task) -> list[Item]:
    """Each problem once (:meth:`Task.identity`), first item kept."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = canonical_json(dict(task.identity(item.problem)))
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def audit_level(
    task_id: str | Task,
    level: str,
    *,
    count: int = DEFAULT_COUNT,
    seed: int = 1,
    train_seed: int | None = None,
    params: Mapping[str, Any] | None = None,
    confidence: float = 0.95,
    train_count: int | None = None,
) -> LevelAudit:
    """Run the battery on the distinct problems among ``count`` test-split items (seed
    ``seed``) with baselines fitted on those among ``train_count`` train-split items (default
    ``max(count, DEFAULT_TRAIN_COUNT)``; seed ``train_seed``, default ``seed``: the splits
    share no problem whatever the seeds), in the ``direct`` style. ``task_id`` may be a
    :class:`Task` object (one not registered)."""
    task = task_id if isinstance(task_id, Task) else get_task(task_id)
    resolve_params(task, level, params)  # a bad level or knob fails before any work
    train_seed = seed if train_seed is None else train_seed
    train_count = max(count, DEFAULT_TRAIN_COUNT) if train_count is None else train_count
    test = distinct((make_item(task, level, seed, i, params) for i in range(count)), task)
    train = distinct(
        (make_item(task, level, train_seed, i, params, split="train") for i in range(train_count)),
        task,
    )
    return _audit(task, level, test, train, seed, train_seed, params, confidence)


def _audit(
    task: Task,
    level: str,
    test: Sequence[Item],
    train: Sequence[Item],
    seed: int,
    train_seed: int,
    params: Mapping[str, Any] | None,
    confidence: float,
) -> LevelAudit:
    chance, basis = _chance(task, test)
    top = Counter(i.answer for i in test).most_common(1)
    cell = getattr(task, "cell_chance", None)
    cells = [float(cell(i)) for i in test] if callable(cell) and test else []
    return LevelAudit(
        task=task.id,
        level=level,
        seed=seed,
        train_seed=train_seed,
        count=len(test),
        params=dict(params or {}),
        chance=chance,
        chance_basis=basis,
        baselines=tuple(_batteries(task, train, confidence, test)) if test and train else (),
        majority=top[0][1] / len(test) if top else 0.0,
        train_count=len(train),
        partial_chance=sum(cells) / len(cells) if cells else None,
    )


def audit_dataset(
    path: str, *, levels: Sequence[str] | None = None, confidence: float = 0.95
) -> list[LevelAudit]:
    """Audit a file of items (``export`` or ``narrate`` output, or a user's own items): per
    task x level, the learners train on about half the problems and are tested on the rest,
    both halves from the same source (a narrated file's stories keep their narrator's habits,
    which is what this measures). The halves are drawn by a hash of each item's problem
    (:meth:`Task.identity`), so a problem the file holds twice is in one half, and not by
    position: generators balance answers by index, so alternate items would put one answer
    in each half. ``seed`` and ``train_seed`` of the results are -1: items name their own."""
    from ..datasets import read_dataset

    def trains(task: Task, item: Item) -> bool:
        key = canonical_json(dict(task.identity(item.problem))) if item.problem else item.id
        return hashlib.sha256(f"audit half\x1f{key}".encode()).digest()[0] % 2 == 0

    data = read_dataset(path)
    out: list[LevelAudit] = []
    for tid in data.tasks:
        task = get_task(tid)
        for level in data.levels(tid):
            if levels and level not in levels:
                continue
            items = distinct((i for i in data.items if i.task == tid and i.level == level), task)
            test = [i for i in items if not trains(task, i)]
            train = [i for i in items if trains(task, i)]
            out.append(_audit(task, level, test, train, -1, -1, None, confidence))
    return out


def audit(
    tasks: Sequence[str] | None = None,
    *,
    levels: Sequence[str] | None = None,
    count: int = DEFAULT_COUNT,
    seed: int = 1,
    jobs: int = 1,
    progress: Callable[[LevelAudit], None] | None = None,
    train_count: int | None = None,
) -> list[LevelAudit]:
    """Audit every level of each task (by default every built-in one: a pack's datasets,
    the ``pack`` hook, only when named), in ``jobs`` processes; results come in task and level
    order. ``levels`` limits the levels: a named task lacking one is an error; over all
    tasks, each keeps its own."""
    work: list[tuple[str, str]] = []
    for tid in tasks or [t for t in task_ids() if not hooks.is_pack(get_task(t))]:
        task = get_task(tid)
        wanted = list(levels) if levels else sorted(task.levels, key=level_key)
        if tasks is None:  # every task: only the levels a task has
            wanted = [lv for lv in wanted if lv in task.levels]
        for level in wanted:
            check_level(task, level)
        work.extend((tid, level) for level in wanted)
    out: list[LevelAudit] = []
    if jobs <= 1 or len(work) <= 1:
        results: Iterable[LevelAudit] = (
            audit_level(t, lv, count=count, seed=seed, train_count=train_count)
            for t, lv in work
        )
        for result in results:
            out.append(result)
            if progress is not None:
                progress(result)
        return out
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    run = partial(_audit_pair, count=count, seed=seed, train_count=train_count)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for result in pool.map(run, work):
            out.append(result)
            if progress is not None:
                progress(result)
    return out


def _audit_pair(
    pair: tuple[str, str], *, count: int, seed: int, train_count: int | None
) -> LevelAudit:
    return audit_level(pair[0], pair[1], count=count, seed=seed, train_count=train_count)


def summary_rows(audits: Sequence[LevelAudit]) -> list[list[str]]:
    """task, level, problems, chance, bound, best shortcut, its accuracy and interval, excess
    over chance, and ``over`` where it beats the bound."""
    rows = []
    for a in audits:
        best = a.best
        if best is None:
            continue
        rows.append(
            [
                a.task,
                a.level,
                str(a.count),
                f"{a.chance:.3f}",
                f"{a.bound:.3f}",
                best.name,
                f"{best.accuracy:.3f}",
                f"[{best.low:.3f}, {best.high:.3f}]",
                f"{a.excess:+.3f}",
                "over" if best.accuracy > a.bound else "",
            ]
        )
    return rows
