"""Sequential gates: a level's verdict after each answer, so that asking stops once it is
settled (pure stdlib; the method, its guarantees and measurements: docs/sequential.md).

Answers come one at a time in collection order. A level settles early by **exact
curtailment** (the fixed-n verdict is certain whatever the remaining answers are) or by an
**anytime-valid test**: a mixture of constant bets ``(1/J) Σ_j Π_i (1 + λ_j (x_i − m))``, a
nonnegative supermartingale under the null that by Ville's inequality ever reaches
``1/alpha`` with chance at most ``alpha``, whatever the stopping rule (Waudby-Smith and
Ramdas 2024, "Estimating means of bounded random variables by betting", JRSS-B 86(1); for
0/1 answers a discrete-prior mixture SPRT, Robbins 1970). At the ``n``-th answer today's
fixed-n rule decides, so no level asks more than ``n``.

Threshold gates test both sides of the line the fixed-n rule draws (the least mean answer
that passes at ``n``). Comparisons bet on ``(1 + baseline right − candidate right) / 2``
against ``(1 + max_drop) / 2`` (with ``max_drop`` 0: a sequential McNemar test on the
discordant pairs) and report a p-value valid wherever the level stopped, so Holm's
correction across levels keeps the family-wise error at ``alpha``.
"""

from .decision import Decision, Expected
from .gate import ThresholdSequence, expected_calls
from .pairs import EARLY_SHARE, PairedSequence, expected_pair_calls

__all__ = [
    "EARLY_SHARE",
    "Decision",
    "Expected",
    "PairedSequence",
    "ThresholdSequence",
    "expected_calls",
    "expected_pair_calls",
]
