"""The robustness analysis (seed 004) on matrices whose structure is known: a 4×3 case worked
by hand, independent columns, planted clusters, and a win confined to one cluster, whose
probability over uniform random weights is known in closed form."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_reasoning.robustness import (
    ScoreMatrix,
    analyze,
    build_matrix,
    cluster,
    permutation_test,
    reweighting_weights,
    similarity_matrix,
    simplex,
    summary_lines,
    verdicts,
    write_outputs,
)

Q4 = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1]], dtype=float)


def test_hand_computed_similarities() -> None:
    s2, s3, s6 = math.sqrt(2), math.sqrt(3), math.sqrt(6)
    cosine = [
        [1, 1 / s2, 0, 2 / s6],
        [1 / s2, 1, 0, 1 / s3],
        [0, 0, 1, 0],  # the all-wrong row: like itself only
        [2 / s6, 1 / s3, 0, 1],
    ]
    jaccard = [[1, 1 / 2, 0, 2 / 3], [1 / 2, 1, 0, 1 / 3], [0, 0, 1, 0], [2 / 3, 1 / 3, 0, 1]]
    hamming = [
        [1, 2 / 3, 1 / 3, 2 / 3],
        [2 / 3, 1, 2 / 3, 1 / 3],
        [1 / 3, 2 / 3, 1, 0],
        [2 / 3, 1 / 3, 0, 1],
    ]
    for metric, want in (("cosine", cosine), ("jaccard", jaccard), ("hamming", hamming)):
        assert np.allclose(similarity_matrix(Q4, metric), want), metric


def test_hand_computed_weights() -> None:
    labels = np.array([0, 0, 1, 0])  # item 2 (all wrong) alone
    w = reweighting_weights(Q4, labels)
    # Cluster 0's representative is item 0: nearest the normalised centroid of its unit rows.
    d1, d3 = 1 - 1 / math.sqrt(2), 1 - 2 / math.sqrt(6)
    assert np.allclose(w["representatives"], [0.5, 0, 0.5, 0])
    dist = [0, d1 / (d1 + d3) * 3 / 4, 1 / 4, d3 / (d1 + d3) * 3 / 4]
    assert np.allclose(w["distance"], dist)
    eps = d3 / 2  # half the smallest positive distance stands in for 0
    inv = {0: 1 / eps, 1: 1 / d1, 3: 1 / d3}
    total0 = sum(inv.values())
    raw = [inv[0] * 3 / total0, inv[1] * 3 / total0, 1.0, inv[3] * 3 / total0]
    assert np.allclose(w["inverse_distance"], np.array(raw) / sum(raw))
    for v in w.values():
        assert math.isclose(v.sum(), 1.0)


def _independent(rng: np.random.Generator, n: int = 60, k: int = 5) -> np.ndarray:
    p = rng.uniform(0.2, 0.8, k)
    return (rng.random((n, k)) < p).astype(float)


# A sweep (many generated items or examples): CI runs it, the inner loop does not.
@pytest.mark.e2e
def test_independent_columns_show_no_correlation() -> None:
    p_values = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        result = permutation_test(_independent(rng), 200, rng)
        p_values.append(result["cosine"]["p_value"]["mean"])
    # Under the null the p-values are roughly uniform: few small ones, centred near 0.5.
    assert sum(p < 0.05 for p in p_values) <= 4
    assert 0.3 < float(np.mean(p_values)) < 0.7


def _planted(rng: np.random.Generator, flip: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    patterns = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1], [1, 0, 1, 0, 1, 0]], dtype=float)
    truth = np.repeat(np.arange(3), 50)
    q = patterns[truth]
    noise = rng.random(q.shape) < flip
    return np.abs(q - noise), truth


def test_planted_clusters_are_found_and_correlation_is_significant() -> None:
    rng = np.random.default_rng(3)
    q, truth = _planted(rng)
    found = cluster(q, rng)
    assert found["k"] == 3
    labels = found["labels"]
    for c in range(3):  # each planted group lands (almost) whole in one found cluster
        _values, counts = np.unique(labels[truth == c], return_counts=True)
        assert counts.max() >= 40  # a flipped cell can sit as near another pattern
    result = permutation_test(q, 200, rng)
    assert result["cosine"]["p_value"]["mean"] < 0.01
    assert result["cosine"]["ks"]["p_value"] < 1e-6
    m = ScoreMatrix([str(i) for i in range(len(q))], list("abcdef"), q, [("t", "l")] * len(q))
    a = analyze(m, permutations=100, samples=2_000, seed=1)
    assert a.figures["clusters"]["silhouette"] > a.figures["clusters"]["permuted_silhouette_mean"]
    assert a.figures["clusters"]["silhouette_p_value"] < 0.1


def _one_cluster_win(wins: int, losses: int, ties: int = 40) -> np.ndarray:
    """A right and B wrong on `wins` items, the reverse on `losses`, equal elsewhere."""
    rows = [[1, 0]] * wins + [[0, 1]] * losses + [[1, 1]] * (ties // 2) + [[0, 0]] * (ties // 2)
    return np.array(rows, dtype=float)


@pytest.mark.parametrize(("wins", "losses"), [(12, 8), (20, 4), (6, 5)])
def test_win_probability_matches_the_closed_form(wins: int, losses: int) -> None:
    """With weights uniform on the simplex, the weight on A's wins against B's wins is
    Beta(wins, losses): P(A beats B) = P(Beta > 1/2)."""
    q = _one_cluster_win(wins, losses)
    out = simplex(q, 100_000, np.random.default_rng(0))
    from scipy.stats import beta  # here, not at import: scipy.stats costs every worker ~1.7 s

    exact = float(beta.sf(0.5, wins, losses))
    assert abs(out["p_beats"][0][1] - exact) < 0.01
    assert abs(out["p_beats"][0][1] + out["p_beats"][1][0] - 1) < 1e-9
    assert out["accuracy_min"][0] < q[:, 0].mean() < out["accuracy_max"][0]


def test_a_win_confined_to_one_cluster_vanishes_with_representatives() -> None:
    q = _one_cluster_win(30, 10)
    labels = np.array([0] * 30 + [1] * 10 + [2] * 20 + [3] * 20)
    w = reweighting_weights(q, labels)
    acc = w["representatives"] @ q
    assert q[:, 0].mean() > q[:, 1].mean()  # A leads under uniform weights...
    assert math.isclose(acc[0], acc[1])  # ...and ties when each cluster counts once


def _rows(model: str, q: list[float], **extra: Any) -> list[dict[str, Any]]:
    return [
        {
            "item_id": f"i{i}",
            "model": model,
            "task": "zebra.grid",
            "level": "3x3",
            "seed": 0,
            "prompt_sha256": "p" + str(i),
            "response": "x",
            "extracted": "x",
            "gold": "x",
            "correct": v == 1.0,
            "score": v,
            "failure_mode": None,
            "error": None,
            "prompt_tokens": 1,
            "completion_tokens": 1,
            "latency_s": 0.0,
            **extra,
        }
        for i, v in enumerate(q)
    ]


def test_build_matrix_uses_partial_credit_and_excludes_what_not_every_model_answered() -> None:
    rows = _rows("a", [1.0, 0.5, 0.0, 1.0]) + _rows("b", [0.25, 1.0, 1.0])
    rows.append(
        {**_rows("b", [0.0, 0, 0, 0])[3], "error": "timeout", "correct": None, "score": None}
    )
    m = build_matrix(rows)
    assert m.models == ["a", "b"] and m.items == ["i0", "i1", "i2"]
    assert m.q.tolist() == [[1.0, 0.25], [0.5, 1.0], [0.0, 1.0]]
    assert m.excluded["error rows"] == 1
    assert m.excluded["items not answered by every model"] == 1
    other = build_matrix([*_rows("a", [1.0]), {**_rows("b", [1.0])[0], "prompt_sha256": "x"}])
    assert other.excluded["items whose prompt differs between models"] == 1 and not other.items


def test_repeats_of_an_item_are_one_item_scored_by_their_mean() -> None:
    """Before: with --reasoning-repeats 3 every repeat was an item of its own, tripling n."""
    rows = [
        {"item_id": f"t[D1-s1-000-r{k}]", "model": m, "task": "t", "level": "D1",
         "prompt_sha256": "p", "correct": c, "error": None, "score": None,
         "repeat": k, "repeats": 3}
        for m, answers in (("a", (True, True, False)), ("b", (False, False, False)))
        for k, c in enumerate(answers)
    ]  # fmt: skip
    m = build_matrix(rows)
    assert m.items == ["t[D1-s1-000]"]
    assert m.q.tolist() == [[pytest.approx(2 / 3), 0.0]]


# A sweep (many generated items or examples): CI runs it, the inner loop does not.
@pytest.mark.e2e
def test_analysis_end_to_end_and_outputs(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    q, truth = _planted(rng, flip=0.2)
    models = list("abcdef")
    m = ScoreMatrix([str(i) for i in range(len(q))], models, q, [("t", str(t)) for t in truth])
    a = analyze(m, permutations=100, samples=5_000, seed=2)
    again = analyze(m, permutations=100, samples=5_000, seed=2)
    assert json.dumps(a.to_json()) == json.dumps(again.to_json())  # deterministic per seed
    lines = summary_lines(a)
    assert any(line.startswith("cosine: mean") for line in lines)
    assert len(verdicts(a)) == len(models) - 1
    assert all(" of reweightings (" in v for v in verdicts(a))
    assert a.figures["labels"]["r2"] > 0.1  # the planted groups are the labels here
    paths = write_outputs(a, str(tmp_path / "out"))
    assert [Path(p).name for p in paths] == [
        "robustness.json", "rank_changes.png", "win_probability.png", "accuracy_ranges.png",
    ]  # fmt: skip
    for p in paths[1:]:
        assert Path(p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(Path(paths[0]).read_text())
    assert set(data["schemes"]) == {
        "uniform", "representatives", "distance", "inverse_distance", "informative_half",
    }  # fmt: skip
    assert data["growth"]["sizes"][-1] == len(q)
    assert np.allclose(data["growth"]["informative"][-1], q.mean(axis=0))


def test_too_little_to_analyse_is_one_line() -> None:
    m = ScoreMatrix(["a"], ["x", "y"], np.array([[1.0, 0.0]]), [("t", "l")])
    with pytest.raises(ValueError, match="at least 2 models and 3 shared items"):
        analyze(m)


@pytest.mark.e2e
def test_cli(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    q = (rng.random((40, 3)) < [0.8, 0.6, 0.55]).astype(float)
    for j, name in enumerate("xyz"):
        lines = [json.dumps(r) for r in _rows(name, q[:, j].tolist())]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    cmd = [sys.executable, "-m", "pytest_reasoning.cli", "robustness"]
    files = [str(tmp_path / f"{n}.jsonl") for n in "xyz"]
    out = subprocess.run(
        [*cmd, *files, "--permutations", "50", "--samples", "2000", "--out", str(tmp_path / "o")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "ranking of x over z holds in" in out.stdout  # accuracies 0.75, 0.475, 0.5
    assert (tmp_path / "o" / "win_probability.png").exists()
    bad = subprocess.run([*cmd, files[0]], capture_output=True, text=True)
    assert bad.returncode == 4
    assert bad.stderr.strip().splitlines() == [
        "pytest-reasoning: error: robustness needs at least 2 models and 3 shared items; got 1 "
        "model(s) and 40 item(s)"
    ]
    missing = subprocess.run([*cmd, str(tmp_path / "nope.jsonl")], capture_output=True, text=True)
    assert missing.returncode == 4 and "nope.jsonl: cannot read" in missing.stderr


@pytest.mark.e2e
def test_in_the_run_summary(pytester: pytest.Pytester, fake_server: Any) -> None:
    pytester.makefile(
        ".yaml",
        s="seed: 1\nsamples: 12\ntasks:\n  - {task: dyval.arithmetic, levels: [D1, D2, D3]}\n",
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--llm", "reference", "--llm", "openai/shallow:2",
        "--llm-api-base", fake_server.url, "--reasoning-cache", "off",
        f"--reasoning-robustness={pytester.path / 'rob'}",
    )  # fmt: skip
    result.stdout.fnmatch_lines(
        [
            "*robustness of the ranking to the items' weights*",
            "*36 items x 2 models*",
            "*ranking of reference over openai/shallow:2 holds in *% of reweightings*",
            "*wrote*rank_changes.png",
        ]
    )


def test_the_0_1_shortcut_agrees_with_the_definitions() -> None:
    from pytest_reasoning.robustness.matrix import _pair_metrics, _pairs, pair_similarity

    rng = np.random.default_rng(4)
    q = (rng.random((120, 7)) < 0.5).astype(float)
    q[[3, 8]] = 0.0  # all-wrong rows
    i, j = _pairs(len(q), rng)
    fast = _pair_metrics(q, i, j)
    for metric in ("cosine", "jaccard", "hamming"):
        assert np.allclose(fast[metric], pair_similarity(q, i, j, metric))
