"""Other weightings of the items: spherical k-means clusters (silhouettes, a parsimonious k),
their representatives, distance and inverse-distance weights, a benchmark grown by
most-informative items, and weight vectors uniform on the simplex."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .matrix import Array, pair_similarity, unit

__all__ = ["cluster", "grow", "representatives", "reweighting_weights", "silhouette", "simplex"]

PARSIMONY = 0.95  # k: the fewest clusters whose silhouette is within 5% of the best


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
    x = unit(q[nonzero])
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
    u = unit(q)
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
    u = unit(q)
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
