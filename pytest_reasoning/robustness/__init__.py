"""Is a model ranking an artefact of the benchmark's composition? (seed 004)

From the items × models score matrix Q: are performance vectors more alike than chance
(cosine / Jaccard / Hamming, column-permutation tests, KS, spherical k-means silhouettes), and
does the ranking survive other weightings of the items (cluster representatives, distance and
inverse-distance weights, a benchmark grown by most-informative items, 100,000 weight vectors
uniform on the simplex)? numpy and scipy come from the ``[analysis]`` extra and are imported by
this module only.
"""

from .analysis import Analysis, analyze, summary_lines, verdicts, write_outputs
from .matrix import (
    ScoreMatrix,
    build_matrix,
    label_explanation,
    pair_similarity,
    permutation_test,
    similarity_matrix,
)
from .weights import cluster, grow, representatives, reweighting_weights, silhouette, simplex

__all__ = [
    "Analysis",
    "ScoreMatrix",
    "analyze",
    "build_matrix",
    "cluster",
    "grow",
    "label_explanation",
    "pair_similarity",
    "permutation_test",
    "representatives",
    "reweighting_weights",
    "silhouette",
    "similarity_matrix",
    "simplex",
    "summary_lines",
    "verdicts",
    "write_outputs",
]
