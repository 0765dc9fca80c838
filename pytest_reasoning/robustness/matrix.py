"""The items × models score matrix Q from results rows, the similarity of the models'
performance vectors (cosine / Jaccard / Hamming), column-permutation tests of it, and how
much of it the items' own labels explain."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core import cluster_id
from ..gates.metrics import sample_credit

__all__ = [
    "METRICS",
    "Array",
    "ScoreMatrix",
    "build_matrix",
    "label_explanation",
    "pair_similarity",
    "permutation_test",
    "permuted",
    "similarity_matrix",
    "unit",
]

Array = npt.NDArray[np.float64]
METRICS = ("cosine", "jaccard", "hamming")
MAX_PAIRS = 50_000  # similarity pairs per permutation: all of them up to n = 316 items


# -- the matrix -------------------------------------------------------------------------------
@dataclass
class ScoreMatrix:
    """Q: one row per item every model answered, one column per model (0/1 or partial)."""

    items: list[str]
    models: list[str]
    q: Array
    labels: list[tuple[str, str]]  # (task, level) of each item
    excluded: dict[str, int] = field(default_factory=dict)  # why items were left out, counted


def build_matrix(rows: Iterable[Mapping[str, Any]]) -> ScoreMatrix:
    """Q from results rows (``read_results``): an item enters when every model scored it on
    the same prompt; errors and partial coverage are counted in ``excluded``, never guessed."""
    # The repeats of one item (``--reasoning-repeats``) are one item here, scored by their
    # mean: counting each repeat as an item would multiply n without adding independent items.
    sums: dict[str, dict[str, list[float]]] = {}
    prompts: dict[str, set[str]] = {}
    labels: dict[str, tuple[str, str]] = {}
    models: set[str] = set()
    errors = 0
    for r in rows:
        models.add(str(r["model"]))
        if r.get("error") is not None or r.get("correct") is None:
            errors += 1
            continue
        value = sample_credit(bool(r["correct"]), r.get("score"))
        item = cluster_id(str(r["item_id"]), int(r.get("repeat") or 0), int(r.get("repeats") or 1))
        got = sums.setdefault(item, {}).setdefault(str(r["model"]), [0.0, 0.0])
        got[0] += value
        got[1] += 1
        prompts.setdefault(item, set()).add(str(r.get("prompt_sha256")))
        labels[item] = (str(r.get("task")), str(r.get("level")))
    by_item = {i: {m: total / n for m, (total, n) in per.items()} for i, per in sums.items()}
    ordered = sorted(models)
    excluded = {"error rows": errors, "items not answered by every model": 0}
    excluded["items whose prompt differs between models"] = 0
    keep = []
    for item in sorted(by_item):
        if len(by_item[item]) < len(ordered):
            excluded["items not answered by every model"] += 1
        elif len(prompts[item]) > 1:
            excluded["items whose prompt differs between models"] += 1
        else:
            keep.append(item)
    q = np.array([[by_item[i][m] for m in ordered] for i in keep], dtype=np.float64)
    return ScoreMatrix(
        keep, ordered, q.reshape(len(keep), len(ordered)), [labels[i] for i in keep], excluded
    )


# -- similarity of performance vectors --------------------------------------------------------
def unit(q: Array) -> Array:
    norms = np.linalg.norm(q, axis=1, keepdims=True)
    return np.asarray(np.divide(q, norms, out=np.zeros_like(q), where=norms > 0), np.float64)


def pair_similarity(
    q: Array, i: npt.NDArray[np.intp], j: npt.NDArray[np.intp], metric: str
) -> Array:
    """Similarity of rows i[t] and j[t] of Q. Cosine of two all-zero rows is 1 (the same
    vector) and of a zero and a non-zero row 0; Jaccard is the weighted form sum(min)/sum(max)
    (1 for two zero rows); Hamming similarity is 1 - mean |a - b|."""
    a, b = q[i], q[j]
    if metric == "cosine":
        u = unit(q)
        sim = np.einsum("ij,ij->i", u[i], u[j])
        both_zero = (~a.any(axis=1)) & (~b.any(axis=1))
        return np.where(both_zero, 1.0, sim)
    if metric == "jaccard":
        low, high = np.minimum(a, b).sum(axis=1), np.maximum(a, b).sum(axis=1)
        return np.asarray(np.divide(low, high, out=np.ones_like(low), where=high > 0), np.float64)
    if metric == "hamming":
        return np.asarray(1.0 - np.abs(a - b).mean(axis=1), dtype=np.float64)
    raise ValueError(f"unknown metric {metric!r}")


def similarity_matrix(q: Array, metric: str) -> Array:
    """The full n × n similarity matrix T(Q) (diagonal included)."""
    n = len(q)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return pair_similarity(q, i.ravel(), j.ravel(), metric).reshape(n, n)


def _pairs(n: int, rng: np.random.Generator) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """All pairs i < j, or MAX_PAIRS of them drawn at random (the same pairs for the observed
    and every permuted matrix)."""
    if n * (n - 1) // 2 <= MAX_PAIRS:
        i, j = np.triu_indices(n, k=1)
        return i.astype(np.intp), j.astype(np.intp)
    i = rng.integers(0, n, MAX_PAIRS)
    j = rng.integers(0, n - 1, MAX_PAIRS)
    j = j + (j >= i)  # j != i
    return i.astype(np.intp), j.astype(np.intp)


def _stats(values: Array) -> dict[str, float]:
    p75, p95 = np.percentile(values, [75, 95])
    return {"mean": float(values.mean()), "p75": float(p75), "p95": float(p95)}


def permuted(q: Array, rng: np.random.Generator) -> Array:
    """Each model's column shuffled on its own: every model keeps its accuracy, items lose
    whatever tied them together."""
    return np.stack([rng.permutation(q[:, m]) for m in range(q.shape[1])], axis=1)


def _pair_metrics(q: Array, i: npt.NDArray[np.intp], j: npt.NDArray[np.intp]) -> dict[str, Array]:
    """All three similarities of the pairs at once (one gather of the two rows), with the
    same conventions as :func:`pair_similarity`; 0/1 matrices take a shortcut through the
    dot product (min = a·b, max = a + b - a·b, |a - b| = a + b - 2a·b)."""
    if not np.isin(q, (0.0, 1.0)).all():
        return {m: pair_similarity(q, i, j, m) for m in METRICS}
    a, b = q[i].astype(np.float32), q[j].astype(np.float32)
    dot = np.einsum("ij,ij->i", a, b).astype(np.float64)
    sums = q.sum(axis=1)
    sa, sb = sums[i], sums[j]
    norms = np.sqrt(sa * sb)  # for 0/1 rows, the norm is the square root of the count
    cosine = np.divide(dot, norms, out=np.zeros_like(dot), where=norms > 0)
    cosine = np.where((sa == 0) & (sb == 0), 1.0, cosine)
    union = sa + sb - dot
    jaccard = np.divide(dot, union, out=np.ones_like(dot), where=union > 0)
    hamming = 1.0 - (sa + sb - 2 * dot) / q.shape[1]
    return {"cosine": cosine, "jaccard": jaccard, "hamming": hamming}


def permutation_test(q: Array, permutations: int, rng: np.random.Generator) -> dict[str, Any]:
    from scipy.stats import ks_2samp

    i, j = _pairs(len(q), rng)
    observed = _pair_metrics(q, i, j)
    counts = {m: {s: 0 for s in ("mean", "p75", "p95")} for m in METRICS}
    pooled: dict[str, list[Array]] = {m: [] for m in METRICS}
    obs_stats = {m: _stats(observed[m]) for m in METRICS}
    perm_sums = {m: {s: 0.0 for s in ("mean", "p75", "p95")} for m in METRICS}
    keep = max(1, 20_000 // max(1, len(i)))  # permutations pooled for the KS test
    for p in range(permutations):
        values_by_metric = _pair_metrics(permuted(q, rng), i, j)
        for m in METRICS:
            values = values_by_metric[m]
            st = _stats(values)
            for s in st:
                counts[m][s] += st[s] >= obs_stats[m][s] - 1e-12
                perm_sums[m][s] += st[s]
            if p < keep:
                pooled[m].append(values)
    out: dict[str, Any] = {"permutations": permutations, "pairs": len(i)}
    for m in METRICS:
        ks = ks_2samp(observed[m], np.concatenate(pooled[m]))
        out[m] = {
            "observed": obs_stats[m],
            "permuted_mean": {s: perm_sums[m][s] / permutations for s in perm_sums[m]},
            # The share of permutations at least as extreme, counting the observed one.
            "p_value": {s: (1 + counts[m][s]) / (1 + permutations) for s in counts[m]},
            "ks": {"statistic": float(ks.statistic), "p_value": float(ks.pvalue)},
        }
    return out


# -- what explains the similarity -------------------------------------------------------------
def label_explanation(
    q: Array, labels: Sequence[tuple[str, str]], rng: np.random.Generator
) -> dict[str, Any]:
    """How much of the pairwise cosine similarity the items' own labels explain: R² of
    sim ~ same task + same (task, level), and the mean similarity within and across."""
    i, j = _pairs(len(q), rng)
    y = pair_similarity(q, i, j, "cosine")
    task = np.array([t for t, _ in labels])
    both = np.array([f"{t}\x1f{lv}" for t, lv in labels])
    same_task = (task[i] == task[j]).astype(np.float64)
    same_level = (both[i] == both[j]).astype(np.float64)
    x = np.column_stack([np.ones_like(y), same_task, same_level])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ coef
    total = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float((resid**2).sum()) / total if total > 0 else 0.0
    mean = {
        "same_task_and_level": float(y[same_level == 1].mean()) if same_level.any() else None,
        "same_task_other_level": float(y[(same_task == 1) & (same_level == 0)].mean())
        if ((same_task == 1) & (same_level == 0)).any()
        else None,
        "other_task": float(y[same_task == 0].mean()) if (same_task == 0).any() else None,
    }
    return {"r2": r2, "mean_cosine": mean, "pairs": len(y)}
