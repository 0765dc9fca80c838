"""Sequential gates against fixed-n gates on the same simulated answers (issue 32.1).

Threshold gates: a grid of true accuracies 0.05–0.95 × thresholds 0.2–0.9, both gate forms
(accuracy >= min_accuracy; the 95% Wilson lower bound >= min_accuracy), for several ``n``.
Comparisons: a grid of discordance (share of items exactly one model gets right) × accuracy
difference (candidate − baseline), with ``max_drop`` 0, one level and a Holm family of four.
Every run draws all ``n`` answers, so the fixed-n verdict on the very same answers is known.

Reported per cell: mean calls as a fraction of ``n``; the share of runs whose sequential
verdict differs from the fixed-n verdict; the false-pass rate (passed although the accuracy
is below the threshold; for comparisons the false-regression rate at no difference).

The simulation is vectorised with numpy from the module's own stopping boundaries (threshold
gates: :meth:`ThresholdSequence.boundaries`; comparisons: the module's bets and critical
counts), and ``--check`` runs per cell are replayed through the real per-answer state
machines, which must stop at the same answer with the same verdict.

Usage: nice -n 10 python benchmarks/sequential.py [--runs 1000] [--n 50,100,200,500]
       [--check 2] [--out benchmarks/out/sequential.md]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom

from pytest_reasoning.gates.betting import Mixture as _Mixture
from pytest_reasoning.gates.sequential import (
    EARLY_SHARE,
    Decision,
    PairedSequence,
    ThresholdSequence,
)
from pytest_reasoning.gates.tails import _critical_from_top

ALPHA = 0.05
THRESHOLDS = [round(0.2 + 0.1 * i, 1) for i in range(8)]
ACCURACIES = [round(0.05 + 0.05 * i, 2) for i in range(19)]
DISCORDANCE = [0.1, 0.2, 0.3, 0.5]
DIFFERENCES = [-0.3, -0.2, -0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15, 0.2, 0.3]
SHARE = EARLY_SHARE  # of a comparison's alpha spent on early regressions (--early-share)


def kl(p: float, m: float) -> float:
    """Kullback–Leibler divergence of Bernoulli(p) from Bernoulli(m)."""
    out = 0.0
    if p > 0:
        out += p * math.log(p / m)
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - m))
    return out


def wald(p: float, line: float) -> float:
    """Wald's (1945) bound on the expected answers any level-alpha sequential test needs to
    tell accuracy ``p`` from ``line``: log(1/alpha) / KL."""
    divergence = kl(p, line)
    return math.log(1 / ALPHA) / divergence if divergence > 0 else math.inf


def threshold_cell(
    rng: np.random.Generator,
    p: float,
    thr: float,
    n: int,
    conf: float | None,
    runs: int,
    check: int,
) -> dict[str, float]:
    seq = ThresholdSequence(thr, n, confidence=conf, alpha=ALPHA)
    assert seq.decision is Decision.CONTINUE
    lo, hi = (np.array(b) for b in seq.boundaries())
    pass_at_n = np.array([seq.passes(k) for k in range(n + 1)])
    x = rng.random((runs, n)) < p
    s = np.cumsum(x, axis=1)  # s[:, t-1] = right answers after t
    ts = np.arange(1, n)
    early_pass = s[:, :-1] >= hi[ts]
    early_fail = s[:, :-1] <= lo[ts]
    stop = early_pass | early_fail
    any_stop = stop.any(axis=1)
    first = np.where(any_stop, stop.argmax(axis=1), n - 1)  # index t-1 of the stopping answer
    calls = first + 1
    fixed = pass_at_n[s[:, -1]]
    rows = np.arange(runs)
    seq_pass = np.where(any_stop, early_pass[rows, np.minimum(first, n - 2)], fixed)
    for r in range(min(check, runs)):  # the real state machine must agree run for run
        state = ThresholdSequence(thr, n, confidence=conf, alpha=ALPHA)
        for answer in x[r]:
            if state.update(bool(answer)) is not Decision.CONTINUE:
                break
        got = fixed[r] if state.decision is Decision.FIXED else state.decision is Decision.PASS
        assert state.t == calls[r] and got == seq_pass[r], (p, thr, n, conf, r)
    return {
        "calls": float(calls.mean() / n),
        "differs": float((seq_pass != fixed).mean()),
        "seq_pass": float(seq_pass.mean()),
        "fixed_pass": float(fixed.mean()),
        # Passed early by the anytime test, not by curtailment (a certain fixed-n pass).
        "anytime_pass": float((any_stop & seq_pass & ~pass_at_n[s[rows, first]]).mean()),
        "line": seq.line,
    }


def _logsumexp_bets(mix: _Mixture, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    terms = [b * one + c * zero for one, zero in zip(mix._one, mix._zero, strict=True)]
    top = np.maximum.reduce(terms)
    total = sum(np.exp(t - top) for t in terms)
    return np.asarray(top + np.log(total / len(terms)))


def paired_runs(
    rng: np.random.Generator, psi: float, delta: float, n: int, family: int, runs: int
) -> dict[str, np.ndarray]:
    """Vectorised copy of :meth:`PairedSequence.update` (max_drop 0)."""
    share = SHARE
    u = rng.random((runs, n))
    lose, win = (psi - delta) / 2, (psi + delta) / 2
    reg = u < lose
    imp = (u >= lose) & (u < lose + win)
    b = np.cumsum(reg, axis=1)
    c = np.cumsum(imp, axis=1)
    t = np.arange(1, n + 1)
    left = n - t
    probe = PairedSequence(n, alpha=ALPHA, family=family, early_share=share)
    worse = _logsumexp_bets(probe._worse, b, c)
    peak = np.maximum.accumulate(np.maximum(worse, 0.0), axis=1)
    level = ALPHA / family
    crit_level = np.array([_critical_from_top(k, share, level)[0] for k in range(n + 1)])
    crit_alpha = np.array([_critical_from_top(k, share, ALPHA)[0] for k in range(n + 1)])
    pairs = b + c + left
    fail_any = np.exp(-peak) / share < level
    fail_cur = b >= crit_level[pairs]
    best = np.maximum(peak, _logsumexp_bets(probe._worse, b + left, c))
    pass_cur = (b + left < crit_alpha[pairs]) & (np.exp(-best) / share >= ALPHA)
    better = _logsumexp_bets(probe._better, b, c)
    pass_any = (c > b) & (better >= -math.log(ALPHA))
    fail = fail_any | fail_cur
    stop = (fail | pass_cur | pass_any)[:, :-1]
    any_stop = stop.any(axis=1)
    first = np.where(any_stop, stop.argmax(axis=1), n - 1)
    rows = np.arange(runs)
    early_fail = any_stop & fail[rows, first]
    d_n, b_n = b[:, -1] + c[:, -1], b[:, -1]
    p_fixed = np.where(d_n > 0, binom.sf(b_n - 1, d_n, 0.5), 1.0)
    p_anytime = np.minimum(1.0, np.exp(-peak[rows, first]) / share)
    # The exact p-value if the pairs left all favoured the candidate (at n: today's p-value).
    b_at, c_at = b[rows, first], c[rows, first] + left[first]
    p_worst = np.where(b_at + c_at > 0, binom.sf(b_at - 1, b_at + c_at, 0.5), 1.0)
    q = np.minimum(p_anytime, p_worst / (1 - share))
    return {"calls": first + 1, "early_fail": early_fail, "any_stop": any_stop, "q": q,
            "p_fixed": p_fixed, "u": u}  # fmt: skip


def check_paired(out: dict[str, np.ndarray], psi: float, delta: float, n: int, check: int) -> None:
    lose, win = (psi - delta) / 2, (psi + delta) / 2
    for r in range(check):
        state = PairedSequence(n, alpha=ALPHA, early_share=SHARE)
        for u in out["u"][r]:
            if state.update(u >= lose, u < lose or u >= lose + win) is not Decision.CONTINUE:
                break
        assert state.t == out["calls"][r], (psi, delta, n, r, state.t, out["calls"][r])
        if state.decision is not Decision.FIXED:
            assert (state.decision is Decision.FAIL) == out["early_fail"][r]
        assert math.isclose(state.p_value(), out["q"][r], rel_tol=1e-6, abs_tol=1e-12)


def holm(ps: np.ndarray, alpha: float) -> np.ndarray:
    """Rows of p-values -> which are rejected by Holm at alpha."""
    order = np.argsort(ps, axis=1)
    sorted_p = np.take_along_axis(ps, order, axis=1)
    k = ps.shape[1]
    adjusted = np.maximum.accumulate(np.minimum(1.0, (k - np.arange(k)) * sorted_p), axis=1)
    rejected = np.empty_like(ps, dtype=bool)
    np.put_along_axis(rejected, order, adjusted < alpha, axis=1)
    return rejected


def pair_floor(psi: float, delta: float, n: int) -> float:
    """Wald's bound for the comparison, as a fraction of n: the evidence an early verdict
    needs (log 1/alpha for "no regression", log 1/(share·alpha) for "regression") over the
    information per pair (the discordant share times KL of the discordant split from 1/2)."""
    if delta == 0:
        return math.inf
    r = (psi - delta) / (2 * psi)  # chance a discordant pair is a regression
    bar = math.log(1 / (SHARE * ALPHA)) if delta < 0 else math.log(1 / ALPHA)
    return bar / (psi * kl(r, 0.5)) / n


def show_floor(frac: float) -> str:
    return "-" if frac == math.inf else f"{frac:.2f}" if frac <= 1 else "> 1"


def paired_report(
    rng: np.random.Generator, ns: list[int], runs: int, check: int
) -> tuple[list[str], int]:
    report, summary, total = [], [], 0
    for n in ns:
        rows, far, unmet, floor, differs, false_reg = [], [], 0, 0, 0.0, (0.0, 0.0)
        for psi in DISCORDANCE:
            for delta in DIFFERENCES:
                if abs(delta) > psi + 1e-12:
                    continue
                out = paired_runs(rng, psi, delta, n, 1, runs)
                check_paired(out, psi, delta, n, check)
                total += runs
                seq_reg = np.where(out["any_stop"], out["early_fail"], out["q"] < ALPHA)
                fixed_reg = out["p_fixed"] < ALPHA
                calls = out["calls"].mean() / n
                differs = max(differs, float((seq_reg != fixed_reg).mean()))
                if delta >= 0:
                    false_reg = (
                        max(false_reg[0], seq_reg.mean()),
                        max(false_reg[1], fixed_reg.mean()),
                    )
                if abs(delta) >= 0.1 - 1e-9:
                    far.append(calls)
                    if calls > 0.4:
                        unmet += 1
                        floor += pair_floor(psi, delta, n) > 0.4
                rows.append([
                    f"{psi:g}", f"{delta:+.2f}", f"{calls:.2f}",
                    show_floor(pair_floor(psi, delta, n)), f"{seq_reg.mean():.3f}",
                    f"{fixed_reg.mean():.3f}", f"{(seq_reg != fixed_reg).mean():.3f}",
                ])  # fmt: skip
        summary.append([
            str(n), f"{len(far) - unmet}/{len(far)}", f"{floor}/{unmet}",
            f"{max(far):.2f}", f"{differs:.3f}",
            f"{false_reg[0]:.3f} / {false_reg[1]:.3f}",
        ])  # fmt: skip
        report.append(
            f"#### Comparisons, n = {n} pairs, one level (max_drop 0)\n\n"
            + fmt_table(
                ["discordance", "difference", "calls / n", "Wald floor / n",
                 "regression, sequential", "regression, fixed-n", "differs"],
                rows,
            )
        )  # fmt: skip
    report.insert(
        0,
        f"### Comparisons, one level, max_drop 0 (early share {SHARE:g})\n\n"
        + fmt_table(
            ["n", "calls <= 40% where abs(difference) >= 0.1", "rest with Wald floor > 40%",
             "worst calls/n there", "max differs from fixed-n",
             "max false regression, sequential / fixed-n"],
            summary,
        ),
    )  # fmt: skip
    fam_rows = []
    for n in ns:
        for deltas in ([0.0] * 4, [0.0, 0.0, 0.05, 0.1], [0.0, 0.0, -0.1, -0.2]):
            outs = [paired_runs(rng, 0.3, d, n, 4, runs) for d in deltas]
            total += 4 * runs
            seq = holm(np.stack([o["q"] for o in outs], axis=1), ALPHA)
            fixed = holm(np.stack([o["p_fixed"] for o in outs], axis=1), ALPHA)
            null = np.array([d >= 0 for d in deltas])
            calls = np.mean([o["calls"].mean() / n for o in outs])
            fam_rows.append([
                str(n), ", ".join(f"{d:+g}" for d in deltas), f"{calls:.2f}",
                f"{seq[:, null].any(axis=1).mean():.3f}",
                f"{fixed[:, null].any(axis=1).mean():.3f}",
                f"{(seq != fixed).any(axis=1).mean():.3f}",
            ])  # fmt: skip
    report.append(
        "### Comparisons, a Holm family of four levels (discordance 0.3)\n\n"
        + fmt_table(
            ["n", "differences", "calls / n", "family-wise false regression, sequential",
             "same, fixed-n", "any verdict differs"],
            fam_rows,
        )
    )  # fmt: skip
    return report, total


def fmt_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000, help="runs per grid cell")
    ap.add_argument("--n", default="50,100,200,500")
    ap.add_argument("--check", type=int, default=2, help="runs per cell replayed by the state")
    ap.add_argument("--early-share", type=float, default=EARLY_SHARE)
    ap.add_argument("--only", choices=["threshold", "paired"], help="one half of the benchmark")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "sequential.md")
    args = ap.parse_args()
    global SHARE
    SHARE = args.early_share
    ns = [int(v) for v in args.n.split(",")]
    rng = np.random.default_rng(20260)
    started = time.perf_counter()
    report: list[str] = []
    total_runs = 0

    for conf in (None, 0.95) if args.only != "paired" else ():
        form = "accuracy >= min_accuracy" if conf is None else "95% Wilson lower bound >= min"
        summary = []
        for n in ns:
            cells = {
                (thr, p): threshold_cell(rng, p, thr, n, conf, args.runs, args.check)
                for thr in THRESHOLDS
                for p in ACCURACIES
            }
            total_runs += len(cells) * args.runs
            far = [(k, v) for k, v in cells.items() if abs(k[1] - k[0]) >= 0.1 - 1e-9]
            unmet = [(k, v) for k, v in far if v["calls"] > 0.4]
            floor = sum(1 for (_, p), v in unmet if wald(p, v["line"]) > 0.4 * n)
            off_line = [v for (_, p), v in cells.items() if abs(p - v["line"]) >= 0.1 - 1e-9]
            below = [v for (thr, p), v in cells.items() if p < thr]
            summary.append([
                str(n),
                f"{len(far) - len(unmet)}/{len(far)}",
                f"{floor}/{len(unmet)}",
                f"{max(v['calls'] for _, v in far):.2f}",
                f"{sum(v['calls'] <= 0.4 for v in off_line)}/{len(off_line)}",
                f"{max(v['calls'] for v in cells.values()):.2f}",
                f"{max(v['differs'] for v in cells.values()):.3f}",
                f"{max(v['seq_pass'] for v in below):.3f} / "
                f"{max(v['fixed_pass'] for v in below):.3f}",
                f"{max(v['anytime_pass'] for v in below):.4f}",
            ])  # fmt: skip
            table = [
                [f"{p:.2f}"]
                + [
                    f"{cells[thr, p]['calls']:.2f}"
                    + ("*" if abs(p - thr) >= 0.1 - 1e-9 and cells[thr, p]["calls"] > 0.4 else "")
                    for thr in THRESHOLDS
                ]
                for p in ACCURACIES
            ]
            report.append(
                f"#### Calls / n, {form}, n = {n} (rows: true accuracy; columns: "
                "min_accuracy; * = over 40% where |accuracy − min_accuracy| >= 0.1)\n\n"
                + fmt_table(["p \\ min"] + [f"{t:g}" for t in THRESHOLDS], table)
            )
        report.insert(
            len(report) - len(ns),
            f"### Threshold gates, {form}\n\n"
            + fmt_table(
                ["n", "calls <= 40% where abs(p − min) >= 0.1", "rest with Wald floor > 40%",
                 "worst calls/n there", "calls <= 40% where abs(p − line) >= 0.1",
                 "worst calls/n", "max differs from fixed-n",
                 "max false pass, sequential / fixed-n", "max anytime pass below min"],
                summary,
            ),
        )  # fmt: skip

    if args.only != "threshold":
        parts, runs = paired_report(rng, ns, args.runs, args.check)
        report += parts
        total_runs += runs

    seconds = time.perf_counter() - started
    head = (
        f"{total_runs:,} simulated runs, {args.runs} per cell, alpha {ALPHA}, "
        f"{args.check} runs per cell replayed through the state machines; {seconds:.0f} s."
    )
    text = head + "\n\n" + "\n\n".join(report) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
