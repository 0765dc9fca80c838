"""The shortcut audit: can a task's items be answered WITHOUT the reasoning they test?

For one task x level, items of a training seed and a test seed are generated and a battery of
shortcut baselines is scored on the test items, each next to chance with a Wilson interval:

- ``answer prior``: the most frequent gold answer of the training seed, for every item;
- ``position prior`` (multiple choice): the choice position most often right in training;
- length baselines: ``longest choice`` / ``shortest choice`` (multiple choice with per-choice
  text), ``most mentioned choice`` (the option named most often in the prompt), and
  ``prompt length``: the training majority answer of the prompt's length quartile;
- the family's declared rules (:meth:`Task.shortcuts`), which read only the prompt;
- ``bag of words``: a binarised multinomial naive Bayes over word unigrams and bigrams, trained
  on the training seed's prompts (multiple choice with per-choice text: on each choice's text,
  gold against the others) and tested on the test seed's.

Chance is the accuracy of a uniform guess: the mean over test items of :meth:`Task.chance`
(one over the item's choices; zebra the random-grid probability ``(1/N!)^M``). Where a task
has no natural guess space (open numeric answers) chance is the best constant answer's
accuracy on the test items, the share of the most frequent gold answer.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .core import Item, level_key
from .registry import get_task, task_ids
from .stats import wilson_interval
from .tasks.base import Task

__all__ = [
    "DEFAULT_COUNT",
    "BaselineResult",
    "LevelAudit",
    "NaiveBayes",
    "audit",
    "audit_dataset",
    "audit_level",
    "summary_rows",
]

DEFAULT_COUNT = 200  # items per seed: test and training sets each
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


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
        best = self.best
        out["best"] = None if best is None else best.name
        out["excess"] = round(self.excess, 4)
        return out


# -- the classifier ---------------------------------------------------------------------------
def features(text: str) -> set[str]:
    """Word unigrams and bigrams, lower case, as a set (presence, not counts)."""
    words = _WORD.findall(text.lower())
    out = set(words)
    out.update(f"{a} {b}" for a, b in itertools.pairwise(words))
    return out


class NaiveBayes:
    """Multinomial naive Bayes over binarised features with add-one smoothing: the classic
    strong text baseline (Wang and Manning 2012), in pure Python; deterministic (ties go to
    the class that sorts first)."""

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = alpha
        self.prior: dict[str, float] = {}
        self.weights: dict[str, dict[str, float]] = {}
        self.default: dict[str, float] = {}

    def fit(self, docs: Sequence[set[str]], labels: Sequence[str]) -> NaiveBayes:
        classes = sorted(set(labels))
        vocab = set().union(*docs) if docs else set()
        counts: dict[str, Counter[str]] = {c: Counter() for c in classes}
        ndocs = Counter(labels)
        for doc, label in zip(docs, labels, strict=True):
            counts[label].update(doc)
        for c in classes:
            total = sum(counts[c].values()) + self.alpha * len(vocab)
            self.prior[c] = math.log(ndocs[c] / len(labels))
            self.default[c] = math.log(self.alpha / total)
            self.weights[c] = {f: math.log((k + self.alpha) / total) for f, k in counts[c].items()}
        self.vocab = vocab
        return self

    def log_scores(self, doc: set[str]) -> dict[str, float]:
        """Log joint probability per class (features outside the training vocabulary are
        ignored)."""
        seen = doc & self.vocab
        return {
            c: self.prior[c] + sum(w.get(f, self.default[c]) for f in seen)
            for c, w in self.weights.items()
        }

    def predict(self, doc: set[str]) -> str | None:
        scores = self.log_scores(doc)
        return max(sorted(scores), key=scores.__getitem__) if scores else None


# -- the battery ------------------------------------------------------------------------------
Guess = Callable[[Item], "str | None"]


def _score(
    name: str, kind: str, doc: str, guess: Guess, items: Sequence[Item], confidence: float
) -> BaselineResult:
    correct = abstained = 0
    for item in items:
        try:
            answer = guess(item)
        except Exception:  # a rule that cannot read an item abstains; the audit goes on
            answer = None
        if answer is None:
            abstained += 1
        elif answer == item.answer:
            correct += 1
    low, high = wilson_interval(correct, len(items), confidence)
    return BaselineResult(name, kind, doc, correct, len(items), abstained, low, high)


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

    def add(name: str, kind: str, doc: str, guess: Guess) -> None:
        rows.append(_score(name, kind, doc, guess, test, confidence))

    prior = _mode(i.answer for i in train)
    add("answer prior", "prior", "the training seed's most frequent answer", lambda _i: prior)

    choices = {i.id: task.choices(i) for i in (*train, *test)}
    texts = {i.id: task.choice_texts(i) for i in (*train, *test)}
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

    for rule in task.shortcuts():
        add(rule.name, "rule", rule.doc, rule.guess)

    if all(texts[i.id] for i in (*train, *test)):
        docs, labels = [], []
        for i in train:
            for key, text in (texts[i.id] or {}).items():
                docs.append(text)
                labels.append("gold" if key == i.answer else "other")
        for name, model in _classifiers(docs, labels):

            def per_choice(item: Item, model: Classifier = model) -> str | None:
                t = texts[item.id] or {}
                keys = list(t)
                odds = model.gold_odds([t[k] for k in keys])
                return keys[odds.index(max(odds))] if keys else None

            add(
                f"{name} (per choice)",
                "bow",
                f"{name} on each option's own text, trained on "
                "another seed: the option most like a right answer",
                per_choice,
            )
    prompts, answers = [i.prompt for i in train], [i.answer for i in train]
    for name, model in _classifiers(prompts, answers):
        said = model.predict([i.prompt for i in test])
        predicted = {i.id: p for i, p in zip(test, said, strict=True)}

        def whole(item: Item, predicted: dict[str, str | None] = predicted) -> str | None:
            return predicted[item.id]

        add(name, "bow", f"{name} on the whole prompt, trained on another seed", whole)
    return rows


class Classifier:
    """A bag-of-words classifier trained on texts: predicts labels, or scores how much each
    text looks like the class ``gold``."""

    def predict(self, texts: Sequence[str]) -> list[str | None]:
        raise NotImplementedError

    def gold_odds(self, texts: Sequence[str]) -> list[float]:
        raise NotImplementedError


class _Bayes(Classifier):
    def __init__(self, texts: Sequence[str], labels: Sequence[str]) -> None:
        self.nb = NaiveBayes().fit([features(t) for t in texts], labels)

    def predict(self, texts: Sequence[str]) -> list[str | None]:
        return [self.nb.predict(features(t)) for t in texts]

    def gold_odds(self, texts: Sequence[str]) -> list[float]:
        out = []
        for t in texts:
            s = self.nb.log_scores(features(t))
            out.append(s.get("gold", 0.0) - s.get("other", 0.0))
        return out


class _Logistic(Classifier):
    """scikit-learn's L2 logistic regression over binary unigram+bigram counts (terms in at
    least two training texts: a word seen once cannot generalise, and long padded prompts
    would otherwise bring 100,000 of them)."""

    def __init__(self, texts: Sequence[str], labels: Sequence[str]) -> None:
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.linear_model import LogisticRegression

        self.vec = CountVectorizer(
            binary=True, ngram_range=(1, 2), token_pattern=_WORD.pattern, min_df=2
        )
        # liblinear is several times faster on wide sparse data but handles two classes only.
        solver = "liblinear" if len(set(labels)) == 2 else "lbfgs"
        self.model = LogisticRegression(max_iter=2000, solver=solver, random_state=0)
        self.model.fit(self.vec.fit_transform(texts), list(labels))

    def predict(self, texts: Sequence[str]) -> list[str | None]:
        return [str(p) for p in self.model.predict(self.vec.transform(texts))]

    def gold_odds(self, texts: Sequence[str]) -> list[float]:
        gold = list(self.model.classes_).index("gold")
        return [float(row[gold]) for row in self.model.predict_proba(self.vec.transform(texts))]


MAX_LOGISTIC_CLASSES = 10  # open answers (hundreds of numbers) get naive Bayes only


def logistic_available() -> bool:
    """Whether scikit-learn (the ``analysis`` extra) is installed for the stronger classifier."""
    import importlib.util

    return importlib.util.find_spec("sklearn") is not None


def _classifiers(texts: Sequence[str], labels: Sequence[str]) -> list[tuple[str, Classifier]]:
    out: list[tuple[str, Classifier]] = [("bag of words (naive Bayes)", _Bayes(texts, labels))]
    classes = len(set(labels))
    if 2 <= classes <= MAX_LOGISTIC_CLASSES and logistic_available():
        # ValueError: no term in two training texts, so nothing to learn from.
        with contextlib.suppress(ValueError):
            out.append(("bag of words (logistic)", _Logistic(texts, labels)))
    return out


def _chance(task: Task, test: Sequence[Item]) -> tuple[float, str]:
    values = [task.chance(i) for i in test]
    if test and all(v is not None for v in values):
        options = {len(c) for i in test if (c := task.choices(i))}
        basis = (
            f"uniform over {options.pop()} answers"
            if len(options) == 1
            else ("uniform over each item's choices" if options else "task-defined")
        )
        return sum(v for v in values if v is not None) / len(test), basis
    top = Counter(i.answer for i in test).most_common(1)
    return (top[0][1] / len(test) if top else 0.0), "best constant answer (open answers)"


def audit_level(
    task_id: str | Task,
    level: str,
    *,
    count: int = DEFAULT_COUNT,
    seed: int = 1,
    train_seed: int | None = None,
    params: Mapping[str, Any] | None = None,
    confidence: float = 0.95,
) -> LevelAudit:
    """Run the battery on ``count`` test items (seed ``seed``) with baselines trained on
    ``count`` items of ``train_seed`` (default ``seed + 1``), in the ``direct`` style.
    ``task_id`` may be a :class:`Task` object (one not registered)."""
    task = task_id if isinstance(task_id, Task) else get_task(task_id)
    task.resolve_params(level, params)  # a bad level or knob fails before any work
    train_seed = seed + 1 if train_seed is None else train_seed
    if train_seed == seed:
        raise ValueError("train_seed must differ from seed: the classifier would see the test")
    test = [task.make_item(level, seed, i, params) for i in range(count)]
    train = [task.make_item(level, train_seed, i, params) for i in range(count)]
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
    return LevelAudit(
        task=task.id,
        level=level,
        seed=seed,
        train_seed=train_seed,
        count=len(test),
        params=dict(params or {}),
        chance=chance,
        chance_basis=basis,
        baselines=tuple(_batteries(task, train, confidence, test)) if test else (),
    )


def audit_dataset(
    path: str, *, levels: Sequence[str] | None = None, confidence: float = 0.95
) -> list[LevelAudit]:
    """Audit a file of items (``export`` or ``narrate`` output, or a user's own items): per
    task x level, the classifiers train on about half the items and are tested on the rest,
    both halves from the same source (a narrated file's stories keep their narrator's habits,
    which is what this measures). The halves are drawn by a hash of each item's id, not by
    position: generators balance answers by index, so alternate items would put one answer
    in each half. ``seed`` and ``train_seed`` of the results are -1: items name their own."""
    import hashlib

    from .datasets import read_dataset

    def trains(item: Item) -> bool:
        return hashlib.sha256(item.id.encode("utf-8")).digest()[0] % 2 == 0

    data = read_dataset(path)
    out: list[LevelAudit] = []
    for tid in data.tasks:
        task = get_task(tid)
        for level in data.levels(tid):
            if levels and level not in levels:
                continue
            items = [i for i in data.items if i.task == tid and i.level == level]
            test = [i for i in items if not trains(i)]
            train = [i for i in items if trains(i)]
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
) -> list[LevelAudit]:
    """Audit every level of each task (all registered tasks by default), in ``jobs``
    processes; results come in task and level order. ``levels`` limits the levels: a named
    task lacking one is an error; over all tasks, each keeps its own."""
    work: list[tuple[str, str]] = []
    for tid in tasks or task_ids():
        task = get_task(tid)
        wanted = list(levels) if levels else sorted(task.levels, key=level_key)
        if tasks is None:  # every task: only the levels a task has
            wanted = [lv for lv in wanted if lv in task.levels]
        for level in wanted:
            task.check_level(level)
        work.extend((tid, level) for level in wanted)
    out: list[LevelAudit] = []
    if jobs <= 1 or len(work) <= 1:
        results: Iterable[LevelAudit] = (
            audit_level(t, lv, count=count, seed=seed) for t, lv in work
        )
        for result in results:
            out.append(result)
            if progress is not None:
                progress(result)
        return out
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    run = partial(_audit_pair, count=count, seed=seed)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for result in pool.map(run, work):
            out.append(result)
            if progress is not None:
                progress(result)
    return out


def _audit_pair(pair: tuple[str, str], *, count: int, seed: int) -> LevelAudit:
    return audit_level(pair[0], pair[1], count=count, seed=seed)


def summary_rows(audits: Sequence[LevelAudit]) -> list[list[str]]:
    """task, level, chance, best shortcut, its accuracy and interval, excess over chance."""
    rows = []
    for a in audits:
        best = a.best
        if best is None:
            continue
        rows.append(
            [
                a.task,
                a.level,
                f"{a.chance:.3f}",
                best.name,
                f"{best.accuracy:.3f}",
                f"[{best.low:.3f}, {best.high:.3f}]",
                f"{a.excess:+.3f}",
            ]
        )
    return rows
