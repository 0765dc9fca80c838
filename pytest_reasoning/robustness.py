"""Is a model ranking an artefact of the benchmark's composition? (seed 004)

From the items × models score matrix Q: are performance vectors more alike than chance
(cosine / Jaccard / Hamming, column-permutation tests, KS, spherical k-means silhouettes), and
does the ranking survive other weightings of the items (cluster representatives, distance and
inverse-distance weights, a benchmark grown by most-informative items, 100,000 weight vectors
uniform on the simplex)? numpy and scipy come from the ``[analysis]`` extra and are imported by
this module only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .core import cluster_id

__all__ = [
    "Analysis",
    "ScoreMatrix",
    "analyze",
    "build_matrix",
    "cluster",
    "pair_similarity",
    "reweighting_weights",
    "similarity_matrix",
    "simplex",
    "summary_lines",
    "verdicts",
    "write_outputs",
]

Array = npt.NDArray[np.float64]
METRICS = ("cosine", "jaccard", "hamming")
MAX_PAIRS = 50_000  # similarity pairs per permutation: all of them up to n = 316 items
STABLE = 0.95  # a ranking held in at least this share of reweightings is called stable
PARSIMONY = 0.95  # k: the fewest clusters whose silhouette is within 5% of the best


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
        score = r.get("score")
        value = float(r["correct"]) if score is None else float(score)
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
def _unit(q: Array) -> Array:
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
        u = _unit(q)
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


def _permuted(q: Array, rng: np.random.Generator) -> Array:
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
        values_by_metric = _pair_metrics(_permuted(q, rng), i, j)
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


# -- clusters ---------------------------------------------------------------------------------
def _spherical_kmeans(
    x: Array, k: int, rng: np.random.Generator, restarts: int = 4, iterations: int = 50
) -> npt.NDArray[np.intp]:
    """Dhillon and Modha's spherical k-means on unit rows: assign by largest cosine to the
    unit-normalised centroid; k-means++ seeding on cosine distance; best of a few restarts."""
    best: npt.NDArray[np.intp] | None = None
    best_score = -math.inf
    n = len(x)
    for _ in range(restarts):
        centres = [x[rng.integers(n)]]
        for _ in range(1, k):
            d = 1.0 - np.max(x @ np.array(centres).T, axis=1)
            d = np.clip(d, 0, None)
            total = d.sum()
            pick = rng.integers(n) if total <= 0 else rng.choice(n, p=d / total)
            centres.append(x[pick])
        c = np.array(centres)
        labels = np.zeros(n, dtype=np.intp)
        for _ in range(iterations):
            new = np.argmax(x @ c.T, axis=1).astype(np.intp)
            for j in range(k):
                members = x[new == j]
                if len(members) == 0:  # an emptied cluster restarts at the worst-fitted row
                    worst = int(np.argmin(np.max(x @ c.T, axis=1)))
                    new[worst] = j
                    members = x[new == j]
                s = members.sum(axis=0)
                c[j] = s / (np.linalg.norm(s) or 1.0)
            if np.array_equal(new, labels):
                break
            labels = new
        score = float(np.max(x @ c.T, axis=1).sum())
        if score > best_score:
            best, best_score = labels, score
    assert best is not None
    return best


def silhouette(x: Array, labels: npt.NDArray[np.intp]) -> float:
    """Mean silhouette with cosine distance (rows of x are unit vectors)."""
    k = int(labels.max()) + 1
    if k < 2:
        return 0.0
    d = np.clip(1.0 - x @ x.T, 0.0, 2.0)
    onehot = np.eye(k)[labels]
    sums = d @ onehot  # n × k: summed distance to each cluster
    sizes = onehot.sum(axis=0)
    own = labels
    a = sums[np.arange(len(x)), own] / np.maximum(sizes[own] - 1, 1)
    other = sums / np.where(sizes > 0, sizes, np.inf)
    other[np.arange(len(x)), own] = np.inf
    b = other.min(axis=1)
    s = np.where(sizes[own] > 1, (b - a) / np.maximum(np.maximum(a, b), 1e-12), 0.0)
    return float(s.mean())


MAX_SILHOUETTE_ROWS = 2_000


def cluster(
    q: Array, rng: np.random.Generator, max_k: int = 8, restarts: int = 4
) -> dict[str, Any]:
    """Spherical k-means on the non-zero performance vectors, k by mean cosine silhouette
    (the fewest clusters within 5% of the best, see below). Rows where every model scored 0
    have no direction: they form their own cluster (-1 in ``labels``) and are left out of the
    silhouette."""
    nonzero = np.flatnonzero(q.any(axis=1))
    x = _unit(q[nonzero])
    distinct = len({tuple(r) for r in np.round(x, 9)})
    labels = np.full(len(q), -1, dtype=np.intp)
    if distinct < 3:
        labels[nonzero] = 0
        return {"k": 1, "silhouette": 0.0, "labels": labels, "by_k": {}}
    sample = (
        np.arange(len(x))
        if len(x) <= MAX_SILHOUETTE_ROWS
        else np.sort(rng.choice(len(x), MAX_SILHOUETTE_ROWS, replace=False))
    )
    by_k: dict[int, float] = {}
    found: dict[int, npt.NDArray[np.intp]] = {}
    for k in range(2, min(max_k, distinct - 1) + 1):
        found[k] = _spherical_kmeans(x, k, rng, restarts=restarts)
        by_k[k] = silhouette(x[sample], found[k][sample])
    # The fewest clusters within 5% of the best silhouette: with 0/1 scores, rows that share
    # one stray miss are identical and form tiny perfect clusters, which would otherwise pull
    # the choice to the largest k tried.
    best = max(by_k.values())
    k = min(kk for kk, v in by_k.items() if v >= PARSIMONY * best)
    labels[nonzero] = found[k]
    return {"k": k, "silhouette": by_k[k], "labels": labels, "by_k": by_k}


def representatives(q: Array, labels: npt.NDArray[np.intp]) -> dict[int, int]:
    """Each cluster's representative: the row nearest its centroid (cosine)."""
    u = _unit(q)
    out = {}
    for c in sorted(set(labels.tolist())):
        members = np.flatnonzero(labels == c)
        centre = u[members].sum(axis=0)
        norm = np.linalg.norm(centre)
        if norm == 0:
            out[c] = int(members[0])
            continue
        out[c] = int(members[np.argmax(u[members] @ (centre / norm))])
    return out


def _cos_distance(q: Array, rows: npt.NDArray[np.intp], rep: int) -> Array:
    rep_rows = np.full(len(rows), rep, dtype=np.intp)
    return np.clip(1.0 - pair_similarity(q, rows, rep_rows, "cosine"), 0.0, None)


def reweighting_weights(q: Array, labels: npt.NDArray[np.intp]) -> dict[str, Array]:
    """The paper's schemes, each a weight vector over items summing to 1:
    ``representatives`` (one item per cluster), ``distance``
    ``w_i = d(p_i, rep_j) / sum_{k in C_j} d(p_k, rep_j) * |C_j| / sum |C|`` and
    ``inverse_distance`` ``w_i = (1 / d_i) * |C_j| / sum_{k in C_j} (1 / d_k)``. Distances of 0
    (items identical to their representative: common with 0/1 scores) become half the
    smallest positive distance, so inverse weights stay finite; a cluster whose items all sit
    on the representative is weighted uniformly."""
    n = len(q)
    reps = representatives(q, labels)
    dist = np.zeros(n)
    for c, rep in reps.items():
        members = np.flatnonzero(labels == c)
        dist[members] = _cos_distance(q, members, rep)
    dist[dist < 1e-9] = 0.0  # 1 - cos of identical rows is rounding noise, not a distance
    positive = dist[dist > 0]
    eps = float(positive.min()) / 2 if len(positive) else 1.0
    w_rep, w_dist, w_inv = np.zeros(n), np.zeros(n), np.zeros(n)
    for c, rep in reps.items():
        members = np.flatnonzero(labels == c)
        share = len(members) / n
        w_rep[rep] = 1.0
        d = dist[members]
        w_dist[members] = d / d.sum() * share if d.sum() > 0 else share / len(members)
        inv = 1.0 / np.maximum(d, eps)
        w_inv[members] = inv * len(members) / inv.sum()
    return {
        "representatives": w_rep / w_rep.sum(),
        "distance": w_dist / w_dist.sum(),
        "inverse_distance": w_inv / w_inv.sum(),
    }


def grow(q: Array, rng: np.random.Generator, points: int = 10) -> dict[str, Any]:
    """Accuracy curves as the benchmark grows from one random item: adding the item with the
    largest mean cosine distance to those chosen (most informative) vs a random one."""
    n = len(q)
    u = _unit(q)
    zero: npt.NDArray[np.bool_] = np.asarray(~q.any(axis=1), dtype=bool)
    start = int(rng.integers(n))
    chosen = [start]
    taken = np.zeros(n, dtype=bool)
    taken[start] = True
    sim_sum = u @ u[start] + (zero & zero[start])  # summed similarity to the chosen items
    for _ in range(n - 1):
        mean = np.where(taken, np.inf, sim_sum)
        nxt = int(np.argmin(mean))
        chosen.append(nxt)
        taken[nxt] = True
        sim_sum += u @ u[nxt] + (zero & zero[nxt])
    random_order = np.concatenate([[start], rng.permutation(np.delete(np.arange(n), start))])
    sizes = sorted({max(1, round(n * f / points)) for f in range(1, points + 1)})
    curves: dict[str, Any] = {"sizes": sizes}
    for name, order in (("informative", np.array(chosen)), ("random", random_order)):
        curves[name] = [q[order[:s]].mean(axis=0).tolist() for s in sizes]
    return curves


# -- the simplex ------------------------------------------------------------------------------
def simplex(q: Array, samples: int, rng: np.random.Generator, chunk: int = 4_096) -> dict[str, Any]:
    """Weighted accuracy under ``samples`` weight vectors uniform on the simplex (normalised
    exponentials: Dirichlet(1, ..., 1)), in chunks so memory stays bounded (a chunk of
    4,096 × 1,200 float32 weights is 20 MB). Returns each model's accuracy and rank ranges and
    P(row model beats column model), ties counted half."""
    n, k = q.shape
    qf = q.astype(np.float32)
    low, high = np.full(k, np.inf), np.full(k, -np.inf)
    rank_low, rank_high = np.full(k, k), np.zeros(k, dtype=np.int64)
    wins = np.zeros((k, k))
    done = 0
    while done < samples:
        m = min(chunk, samples - done)
        w = rng.standard_exponential((m, n), dtype=np.float32)
        w /= w.sum(axis=1, keepdims=True)
        acc = (w @ qf).astype(np.float64)  # m × k
        low, high = np.minimum(low, acc.min(axis=0)), np.maximum(high, acc.max(axis=0))
        ranks = 1 + (acc[:, None, :] > acc[:, :, None]).sum(axis=2)  # 1 = best
        rank_low = np.minimum(rank_low, ranks.min(axis=0))
        rank_high = np.maximum(rank_high, ranks.max(axis=0))
        for a in range(k):
            diff = acc[:, a : a + 1] - acc
            wins[a] += (diff > 1e-12).sum(axis=0) + 0.5 * (np.abs(diff) <= 1e-12).sum(axis=0)
        done += m
    np.fill_diagonal(wins, np.nan)
    return {
        "samples": samples,
        "accuracy_min": low.tolist(),
        "accuracy_max": high.tolist(),
        "rank_best": rank_low.tolist(),
        "rank_worst": rank_high.tolist(),
        "p_beats": (wins / samples).tolist(),
    }


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


# -- everything -------------------------------------------------------------------------------
@dataclass
class Analysis:
    matrix: ScoreMatrix
    figures: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "models": self.matrix.models,
            "items": len(self.matrix.items),
            "excluded": self.matrix.excluded,
            **self.figures,
        }


def _ranks(acc: Array) -> list[int]:
    """1 = best; ties share the better rank."""
    return [int(1 + (acc > a + 1e-12).sum()) for a in acc]


def analyze(
    matrix: ScoreMatrix, *, permutations: int = 1_000, samples: int = 100_000, seed: int = 0
) -> Analysis:
    """Every figure of the analysis, deterministic for a seed."""
    q = matrix.q
    if q.shape[1] < 2 or q.shape[0] < 3:
        raise ValueError(
            f"robustness needs at least 2 models and 3 shared items; got {q.shape[1]} "
            f"model(s) and {q.shape[0]} item(s)"
        )
    rng = np.random.default_rng(seed)
    uniform = q.mean(axis=0)
    figures: dict[str, Any] = {"accuracy": uniform.tolist(), "rank": _ranks(uniform)}
    figures["correlation"] = permutation_test(q, permutations, rng)
    found = cluster(q, rng)
    # Permuted matrices get fewer restarts: their silhouettes only have to be a baseline.
    perm_sil = [cluster(_permuted(q, rng), rng, restarts=2)["silhouette"] for _ in range(20)]
    figures["clusters"] = {
        "k": found["k"],
        "silhouette": found["silhouette"],
        "silhouette_by_k": {str(k): v for k, v in found["by_k"].items()},
        "permuted_silhouette_mean": float(np.mean(perm_sil)),
        "silhouette_p_value": (1 + sum(s >= found["silhouette"] for s in perm_sil)) / 21,
        "sizes": {
            str(c): int((found["labels"] == c).sum()) for c in sorted(set(found["labels"].tolist()))
        },
    }
    schemes = {"uniform": uniform}
    for name, w in reweighting_weights(q, found["labels"]).items():
        schemes[name] = w @ q
    curves = grow(q, rng)
    half = min(curves["sizes"], key=lambda size: abs(size - len(q) / 2))
    schemes["informative_half"] = np.array(curves["informative"][curves["sizes"].index(half)])
    figures["growth"] = curves
    figures["schemes"] = {
        name: {"accuracy": acc.tolist(), "rank": _ranks(acc), "rank_change": [
            r0 - r for r0, r in zip(_ranks(uniform), _ranks(acc), strict=True)
        ]}
        for name, acc in schemes.items()
    }  # fmt: skip
    figures["simplex"] = simplex(q, samples, rng)
    figures["labels"] = label_explanation(q, matrix.labels, rng)
    return Analysis(matrix, figures)


def verdicts(analysis: Analysis) -> list[str]:
    """One line per pair of models adjacent in the uniform ranking."""
    models = analysis.matrix.models
    acc = analysis.figures["accuracy"]
    order = sorted(range(len(models)), key=lambda m: -acc[m])
    p = analysis.figures["simplex"]["p_beats"]
    lines = []
    for a, b in itertools.pairwise(order):
        share = p[a][b]
        word = "stable" if share >= STABLE else "unstable"
        lines.append(
            f"ranking of {models[a]} over {models[b]} holds in {share:.1%} of reweightings ({word})"
        )
    return lines


def summary_lines(analysis: Analysis) -> list[str]:
    """The terminal report: a table per model, then the tests and the verdicts."""
    from tabulate import tabulate

    f = analysis.figures
    models = analysis.matrix.models
    sx = f["simplex"]
    schemes = ("representatives", "distance", "inverse_distance", "informative_half")
    rows = []
    for m in sorted(range(len(models)), key=lambda m: f["rank"][m]):
        row = [models[m], f"{f['accuracy'][m]:.3f}", str(f["rank"][m])]
        for name in schemes:
            sc = f["schemes"][name]
            row.append(f"{sc['accuracy'][m]:.3f} ({sc['rank_change'][m]:+d})")
        row.append(f"{sx['accuracy_min'][m]:.3f}-{sx['accuracy_max'][m]:.3f}")
        row.append(f"{sx['rank_best'][m]}-{sx['rank_worst'][m]}")
        rows.append(row)
    headers = ["model", "accuracy", "rank", "cluster reps", "distance w.", "inverse-dist. w."]
    headers += ["informative half", "simplex accuracy", "simplex rank"]
    lines = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True).splitlines()
    c = f["correlation"]
    n, k = analysis.matrix.q.shape
    lines.append(
        f"{n} items x {k} models; excluded: "
        + ", ".join(f"{v} {w}" for w, v in analysis.matrix.excluded.items() if v)
        if any(analysis.matrix.excluded.values())
        else f"{n} items x {k} models"
    )
    for metric in METRICS:
        obs, p = c[metric]["observed"], c[metric]["p_value"]
        lines.append(
            f"{metric}: mean {obs['mean']:.3f} (p={p['mean']:.3g}), p75 {obs['p75']:.3f} "
            f"(p={p['p75']:.3g}), p95 {obs['p95']:.3f} (p={p['p95']:.3g}); KS vs permuted "
            f"D={c[metric]['ks']['statistic']:.3f} p={c[metric]['ks']['p_value']:.3g} "
            f"({c['permutations']} permutations)"
        )
    cl = f["clusters"]
    lines.append(
        f"spherical k-means: k={cl['k']}, silhouette {cl['silhouette']:.3f} vs "
        f"{cl['permuted_silhouette_mean']:.3f} permuted (p={cl['silhouette_p_value']:.3g})"
    )
    lab = f["labels"]
    lines.append(
        f"task and level labels explain R^2={lab['r2']:.3f} of the pairwise cosine similarity"
    )
    lines.extend(verdicts(analysis))
    return lines


def write_outputs(analysis: Analysis, out: str) -> list[str]:
    """``robustness.json`` with every figure, and three PNGs: the rank changes per scheme,
    the win-probability matrix and the weighted-accuracy ranges. Returns the paths written."""
    import json
    import os

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .files import write_output, write_output_bytes

    os.makedirs(out, exist_ok=True)
    f = analysis.figures
    models = analysis.matrix.models
    order = sorted(range(len(models)), key=lambda m: f["accuracy"][m])  # the paper's figure 2
    names = [models[m] for m in order]
    paths = [os.path.join(out, "robustness.json")]
    with write_output(paths[0]) as fh:  # the one writer: replaced only when whole
        json.dump(analysis.to_json(), fh, indent=1, sort_keys=True)

    schemes = [s for s in f["schemes"] if s != "uniform"]
    changes = np.array([[f["schemes"][s]["rank_change"][m] for m in order] for s in schemes])
    fig, ax = plt.subplots(figsize=(1.2 + 0.7 * len(models), 1 + 0.5 * len(schemes)))
    lim = max(1, int(np.abs(changes).max()))
    ax.imshow(changes, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(schemes)), schemes)
    for (r, c), v in np.ndenumerate(changes):
        ax.text(c, r, f"{v:+d}" if v else "0", ha="center", va="center", fontsize=8)
    ax.set_title("Rank change vs uniform weights (+ = up)", fontsize=10)
    fig.tight_layout()
    paths.append(os.path.join(out, "rank_changes.png"))
    with write_output_bytes(paths[-1]) as image:
        fig.savefig(image, dpi=120, format="png")
    plt.close(fig)

    p = np.array(f["simplex"]["p_beats"], dtype=float)[np.ix_(order[::-1], order[::-1])]
    fig, ax = plt.subplots(figsize=(1.5 + 0.6 * len(models), 1.2 + 0.6 * len(models)))
    ax.imshow(np.nan_to_num(p, nan=0.5), cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(len(names)), names[::-1], rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names[::-1])
    for (r, c), v in np.ndenumerate(p):
        if not np.isnan(v):
            ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7,
                    color="k" if v > 0.6 else "w")  # fmt: skip
    ax.set_title("P(row beats column), random weights", fontsize=10)
    fig.tight_layout()
    paths.append(os.path.join(out, "win_probability.png"))
    with write_output_bytes(paths[-1]) as image:
        fig.savefig(image, dpi=120, format="png")
    plt.close(fig)

    sx = f["simplex"]
    fig, ax = plt.subplots(figsize=(6, 1 + 0.4 * len(models)))
    for y, m in enumerate(order):
        ax.plot([sx["accuracy_min"][m], sx["accuracy_max"][m]], [y, y], lw=4, color="#9ab")
        ax.plot(f["accuracy"][m], y, "o", color="#234")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("weighted accuracy (dot: uniform weights)")
    ax.set_title(f"Accuracy range over {sx['samples']:,} random weightings", fontsize=10)
    fig.tight_layout()
    paths.append(os.path.join(out, "accuracy_ranges.png"))
    with write_output_bytes(paths[-1]) as image:
        fig.savefig(image, dpi=120, format="png")
    plt.close(fig)
    return paths
