"""Every figure of the robustness analysis (:func:`analyze`), its verdicts, its summary lines
and its outputs (``robustness.json`` and the PNGs)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from .matrix import METRICS, Array, ScoreMatrix, label_explanation, permutation_test, permuted
from .weights import cluster, grow, reweighting_weights, simplex

__all__ = ["Analysis", "analyze", "summary_lines", "verdicts", "write_outputs"]

STABLE = 0.95  # a ranking held in at least this share of reweightings is called stable


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
    perm_sil = [cluster(permuted(q, rng), rng, restarts=2)["silhouette"] for _ in range(20)]
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

    from ..files import write_output, write_output_bytes

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
