"""The audit's learners: bag-of-words classifiers (our naive Bayes, scikit-learn's logistic
regression) and surface-feature gradient boosting, on whole prompts or on each answer choice.

Every learner reads only the prompt text (and, per choice, each option's own text); none knows
a task. The surface features are generic: counts of the frequent words and word pairs (the
operators, True/False, node names of a DyVal prompt), the shape of the text (lines, words,
numbers), and where the question's own words (the asked node, person, item) occur in it.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

__all__ = [
    "MAX_LOGISTIC_CLASSES",
    "ChoiceSurface",
    "Classifier",
    "CountFeatures",
    "NaiveBayes",
    "SurfaceFeatures",
    "classifiers",
    "features",
    "logistic_available",
    "mask_options",
    "option_features",
    "surface",
]

WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")


# -- the classifier ---------------------------------------------------------------------------
def features(text: str) -> set[str]:
    """Word unigrams and bigrams, lower case, as a set (presence, not counts)."""
    words = WORD.findall(text.lower())
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
            binary=True, ngram_range=(1, 2), token_pattern=WORD.pattern, min_df=2
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


def classifiers(texts: Sequence[str], labels: Sequence[str]) -> list[tuple[str, Classifier]]:
    out: list[tuple[str, Classifier]] = [("bag of words (naive Bayes)", _Bayes(texts, labels))]
    classes = len(set(labels))
    if 2 <= classes <= MAX_LOGISTIC_CLASSES and logistic_available():
        # ValueError: no term in two training texts, so nothing to learn from.
        with contextlib.suppress(ValueError):
            out.append(("bag of words (logistic)", _Logistic(texts, labels)))
    return out


OWN, OTHER = "optionself", "optionother"  # what the options' names become in their texts


def mask_options(texts: Mapping[str, str]) -> dict[str, str]:
    """Each option's text with its own name as ``OWN`` and the other options' as ``OTHER``."""
    keys = sorted(texts, key=len, reverse=True)  # "Ann Lee" before "Ann"
    pattern = re.compile(
        "|".join(rf"(?<!\w){re.escape(k)}(?!\w)" for k in keys if k.strip()) or r"(?!)",
        re.IGNORECASE,
    )
    folded = {k.casefold(): k for k in keys}

    def mask(key: str, text: str) -> str:
        def name(m: re.Match[str]) -> str:
            return OWN if folded.get(m.group(0).casefold()) == key else OTHER

        return pattern.sub(name, text)

    return {key: mask(key, text) for key, text in texts.items()}


# -- surface features and gradient boosting ----------------------------------------------------
VOCABULARY = 100  # the most frequent words and word pairs of the training prompts, counted
ENTITIES = 3  # the question's own words whose places are features
_COMMON = 0.5  # a question word in at least this share of training questions is template


def _question(text: str) -> str:
    """The last paragraph: the question (and its answer-format instruction)."""
    return text.rstrip().rsplit("\n\n", 1)[-1]


class SurfaceFeatures:
    """Turns a prompt into numbers, fitted on the training prompts: the counts of their
    ``VOCABULARY`` most frequent words and word pairs; lines, words, characters; how many
    numbers and their least, greatest, sum, mean, first and last; and for the first
    ``ENTITIES`` words of the question that are not its template (the asked node, person or
    item), how often and where (first and last place, first line) the prompt names them."""

    def __init__(self, texts: Sequence[str]) -> None:
        from sklearn.feature_extraction.text import CountVectorizer

        self.vec = CountVectorizer(
            ngram_range=(1, 2), token_pattern=WORD.pattern, max_features=VOCABULARY
        )
        try:
            self.vec.fit(texts)
        except ValueError:  # no words at all
            self.vec = None
        questions = [set(WORD.findall(_question(t).lower())) for t in texts]
        counts = Counter(w for q in questions for w in q)
        self.template = {w for w, k in counts.items() if k >= _COMMON * len(texts)}

    def matrix(self, texts: Sequence[str]) -> list[list[float]]:
        vocab = self.vec.transform(texts).toarray().tolist() if self.vec is not None else None
        rows = []
        for i, text in enumerate(texts):
            rows.append([*(vocab[i] if vocab is not None else []), *self._shape(text)])
        return rows

    def _shape(self, text: str) -> list[float]:
        lines = text.splitlines() or [""]
        low = text.lower()
        words = WORD.findall(low)
        numbers = [float(n) for n in _NUMBER.findall(text)][:10_000]
        shape = [
            float(len(lines)),
            float(len(words)),
            float(len(text)),
            float(len(numbers)),
            *(
                (min(numbers), max(numbers), math.fsum(numbers), math.fsum(numbers) / len(numbers),
                 numbers[0], numbers[-1])
                if numbers else (0.0,) * 6
            ),
        ]  # fmt: skip
        asked: list[str] = []
        for w in WORD.findall(_question(text).lower()):
            if w not in self.template and w not in asked:
                asked.append(w)
        total = max(len(words), 1)
        places: dict[str, list[int]] = {}
        for k, w in enumerate(words):
            places.setdefault(w, []).append(k)
        for slot in range(ENTITIES):
            if slot >= len(asked):
                shape += [0.0, 0.0, -1.0, -1.0, -1.0, 0.0]
                continue
            w = asked[slot]
            where = places.get(w, [])
            line = next((j for j, ln in enumerate(lines) if w in WORD.findall(ln.lower())), -1)
            shape += [
                1.0,
                float(len(where)),
                where[0] / total if where else -1.0,
                where[-1] / total if where else -1.0,
                line / len(lines) if line >= 0 else -1.0,
                float(sum(w in WORD.findall(ln.lower()) for ln in lines)),
            ]
        return shape


SHARED = 0.5  # surface counts: the words and word pairs in at least this share of prompts


class CountFeatures:
    """The counts of the words and word pairs at least ``SHARED`` of the training prompts
    use (up to ``VOCABULARY`` of them: a DyVal prompt's operators, 'is true', 'is false'),
    and the prompt's lines and words: the template's counts alone, without the rarer words
    and the places of :class:`SurfaceFeatures` (issue 41's learner on a DyVal prompt's
    counts of stated True and False leaves and of each operator)."""

    def __init__(self, texts: Sequence[str]) -> None:
        from sklearn.feature_extraction.text import CountVectorizer

        self.vec = CountVectorizer(
            ngram_range=(1, 2), token_pattern=WORD.pattern, max_features=VOCABULARY,
            min_df=SHARED,
        )  # fmt: skip
        try:
            self.vec.fit(texts)
        except ValueError:  # no word is that common
            self.vec = None

    def matrix(self, texts: Sequence[str]) -> list[list[float]]:
        vocab = self.vec.transform(texts).toarray().tolist() if self.vec is not None else None
        return [
            [*(vocab[i] if vocab is not None else []), float(len(t.splitlines())),
             float(len(WORD.findall(t.lower())))]
            for i, t in enumerate(texts)
        ]  # fmt: skip


def _booster() -> object:
    from sklearn.ensemble import GradientBoostingClassifier

    # scikit-learn's exact gradient boosting, not the histogram one: on the audit's few
    # hundred rows it is as fast without OpenMP threads (which spin on a busy machine: 30x
    # slower on 2 shared cores). 50 rounds of depth-3 trees; fixed random_state.
    return GradientBoostingClassifier(n_estimators=50, max_depth=3, random_state=0)


class _Surface(Classifier):
    """Gradient boosting on :class:`SurfaceFeatures`: counts, interactions and thresholds a
    linear bag of words cannot express (e.g. how many leaves are True AND how many rules are
    ORs)."""

    def __init__(
        self, texts: Sequence[str], labels: Sequence[str], counts_only: bool = False
    ) -> None:
        self.features: SurfaceFeatures | CountFeatures = (
            CountFeatures(texts) if counts_only else SurfaceFeatures(texts)
        )
        self.model = _booster()
        self.model.fit(self.features.matrix(texts), list(labels))  # type: ignore[attr-defined]

    def predict(self, texts: Sequence[str]) -> list[str | None]:
        said = self.model.predict(self.features.matrix(texts))  # type: ignore[attr-defined]
        return [str(p) for p in said]

    def gold_odds(self, texts: Sequence[str]) -> list[float]:
        model = self.model
        gold = list(model.classes_).index("gold")  # type: ignore[attr-defined]
        proba = model.predict_proba(self.features.matrix(texts))  # type: ignore[attr-defined]
        return [float(row[gold]) for row in proba]


def _mentions(low: str, option: str) -> list[int]:
    return [m.start() for m in re.finditer(rf"(?<!\w){re.escape(option.lower())}(?!\w)", low)]


def _ranks(values: Sequence[float], descending: bool) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: -values[i] if descending else values[i])
    out = [0.0] * len(values)
    for rank, i in enumerate(order):
        out[i] = float(rank)
    return out


def option_features(
    prompt: str, options: Sequence[str], texts: Sequence[str] | None = None
) -> list[list[float]]:
    """One row per answer option: its place in the list, how often and where the prompt
    names it (first and last place, in the question), its length in words, its own text's
    length (``texts``: e.g. a suspect's chapter), and its rank among the options on each."""
    low = prompt.lower()
    size = max(len(low), 1)
    question_at = len(low) - len(_question(low))
    rows = []
    for i, option in enumerate(options):
        where = _mentions(low, option)
        rows.append(
            [
                float(i),
                float(len(options)),
                float(len(where)),
                where[0] / size if where else 2.0,
                where[-1] / size if where else -1.0,
                float(sum(k >= question_at for k in where)),
                float(len(WORD.findall(option.lower()))),
                float(len(WORD.findall(texts[i].lower()))) if texts is not None else 0.0,
            ]
        )
    for col, descending in ((2, True), (3, False), (4, True), (7, True)):
        for row, rank in zip(rows, _ranks([r[col] for r in rows], descending), strict=True):
            row.append(rank)
    return rows


class ChoiceSurface:
    """Gradient boosting on :func:`option_features`, trained gold against the other
    options; answers the option most like a right one. Generic: it knows no task, only that
    an answer is one of the options the prompt offers."""

    def __init__(
        self,
        prompts: Sequence[str],
        options: Sequence[Sequence[str]],
        golds: Sequence[str],
        texts: Sequence[Sequence[str] | None] | None = None,
    ) -> None:
        rows: list[list[float]] = []
        labels: list[int] = []
        for k, (prompt, opts, gold) in enumerate(zip(prompts, options, golds, strict=True)):
            for row, option in zip(option_features(prompt, opts, texts[k] if texts else None),
                                   opts, strict=True):  # fmt: skip
                rows.append(row)
                labels.append(int(option == gold))
        self.model = _booster()
        self.constant = labels[0] if len(set(labels)) < 2 else None
        if self.constant is None:
            self.model.fit(rows, labels)  # type: ignore[attr-defined]

    def predict(
        self,
        prompts: Sequence[str],
        options: Sequence[Sequence[str]],
        texts: Sequence[Sequence[str] | None] | None = None,
    ) -> list[str | None]:
        """The chosen option of each prompt (one model call for all of them)."""
        rows: list[list[float]] = []
        for k, (prompt, opts) in enumerate(zip(prompts, options, strict=True)):
            rows += option_features(prompt, opts, texts[k] if texts else None)
        if self.constant is not None or not rows:
            return [opts[0] if opts else None for opts in options]
        proba = self.model.predict_proba(rows)  # type: ignore[attr-defined]
        out: list[str | None] = []
        at = 0
        for opts in options:
            odds = [float(p[1]) for p in proba[at : at + len(opts)]]
            at += len(opts)
            out.append(opts[odds.index(max(odds))] if opts else None)
        return out


def surface(
    texts: Sequence[str], labels: Sequence[str], *, counts_only: bool = False
) -> Classifier | None:
    """The whole-prompt surface learner (``counts_only``: on :class:`CountFeatures`), for
    2..``MAX_LOGISTIC_CLASSES`` answers, when scikit-learn is installed."""
    if not 2 <= len(set(labels)) <= MAX_LOGISTIC_CLASSES or not logistic_available():
        return None
    return _Surface(texts, labels, counts_only)
