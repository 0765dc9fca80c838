"""Every table of the summary and the report, built once as rows of strings; the renderers in
``render.py`` turn a :class:`Table` into terminal text, Markdown or HTML."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import level_key
from ..errors import UnknownTask
from ..gates import Comparison, GateResult, LevelStats
from ..gates.levels import sample_key
from ..gates.verdicts import UNANSWERED, failure_cause
from ..registry import get_task
from ..tasks import hooks
from ..tasks.base import Task
from ..tasks.breakdown import Breakdown

__all__ = [
    "Table",
    "breakdown_table",
    "breakdowns",
    "breaks_down",
    "comparisons_table",
    "failure_modes",
    "fmt",
    "levels_table",
    "models_table",
    "unanswered",
    "underpowered",
    "verdict",
]

# (model, suite, entry, level) → (samples that ran, samples of the level): levels a selection
# ran only in part, whose gates are not decided.
Incomplete = Mapping[tuple[str, str, str, str], tuple[int, int]]


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: list[list[str]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.rows)


def fmt(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


LEVEL_HEADERS = (
    "model",
    "task",
    "level",
    "n",
    "correct",
    "accuracy",
    "95% CI",
    "threshold",
    "gate",
    "unanswered",
    "failure modes",
    "errors",
    "tokens",
    "mean latency",
)


REPEAT_HEADERS = ("k", "pass@k", "pass^k", "majority")


def levels_table(
    levels: Iterable[LevelStats],
    gates: Sequence[GateResult] = (),
    *,
    reasons: bool = False,
    incomplete: Incomplete | None = None,
    suite: bool = False,
) -> Table:
    """One row per (model, suite entry, level): the gated measure, its interval, the verdict
    (``partial k/n`` where a selection ran part of the level: not decided; ``INFRA`` where
    every sample failed for infrastructure). With ``reasons``, the gate's one-line reason is a
    last column; with ``suite``, the suite column is there even for one suite (the HTML
    report)."""
    levels = list(levels)
    incomplete = incomplete or {}
    # Two suites may gate the same task and level differently: their rows stay apart, and
    # the suite is shown whenever more than one ran.
    suites = suite or len({s.spec.suite for s in levels}) > 1
    by_stats = {id(g.stats): g for g in gates}
    # Repeats add pass@k and majority vote (and only then: tables without repeats keep
    # their columns).
    repeated = any(s.repeats > 1 for s in levels)
    rows = []
    ordered = sorted(
        levels, key=lambda s: (s.model, s.spec.suite, s.spec.entry, level_key(s.spec.level))
    )
    for s in ordered:
        gate = by_stats.get(id(s))
        rule = s.spec.rule
        lo, hi = s.interval(0.95)
        thr = rule.min_accuracy
        threshold = (
            "-"
            if thr is None
            else f"{thr:g}" + (f" @{rule.confidence:g}" if rule.confidence else "")
        )
        decided = "-" if gate is None or gate.passed is None else "PASS" if gate.passed else "FAIL"
        if gate is not None and gate.marginal:
            decided = "PASS*"  # not significant: the footnote (MARGINAL_NOTE) says why
        if gate is not None and gate.passed is None and s.n == 0 and s.errors:
            decided = "INFRA"  # every sample failed for infrastructure: not decided
        part = incomplete.get((s.model, *s.spec.where))
        if part is not None and gate is None:
            decided = f"partial {part[0]}/{part[1]}"
        row = [
            s.model,
            *([s.spec.suite] if suites else []),
            s.spec.entry,
            s.spec.level,
            str(s.n),
            str(s.correct),
            fmt(s.measure) + rule.gauge.suffix,
            f"[{lo:.2f}, {hi:.2f}]" if s.n else "-",
            threshold,
            decided,
            unanswered(s),
            failure_modes(s),
            str(s.errors),
            str(s.prompt_tokens + s.completion_tokens),
            _latency(s),
        ]
        if repeated:
            row += [str(s.repeats), fmt(s.pass_at()), fmt(s.pass_all()), fmt(s.majority)]
        if reasons:
            row.append(
                _reason(gate)
                if gate is not None
                else "not decided: part of the level ran"
                if part is not None
                else "-"
            )
        rows.append(row)
    headers = LEVEL_HEADERS + (REPEAT_HEADERS if repeated else ())
    if any(s.cost_usd for s in ordered):  # priced calls: what each level cost now
        headers += ("cost",)
        for row, s in zip(rows, ordered, strict=True):
            at = len(headers) - 1 + int(suites)  # rows hold the suite column already
            row.insert(at, f"${s.cost_usd:.4f}" if s.cost_usd else "-")
    if suites:
        headers = (headers[0], "suite", *headers[1:])
    return Table(headers + (("reason",) if reasons else ()), rows)


def unanswered(s: LevelStats) -> str:
    """The share of answered samples with no readable answer (truncated, none in the asked
    format, unreadable: NPHardEval's "failure rate"), of the gate's own n."""
    if not s.n:
        return "-"
    count = sum(s.failure_modes.get(mode, 0) for mode in UNANSWERED)
    return f"{count / s.n:.2f}" if count else "0"


def failure_modes(s: LevelStats, shown: int = 3) -> str:
    """The level's failure modes with their counts, most frequent first."""
    modes = sorted(s.failure_modes.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{mode} {count}" for mode, count in modes[:shown])
    return text + (f", +{len(modes) - shown} more" if len(modes) > shown else "") or "-"


def _latency(s: LevelStats) -> str:
    """Mean latency of the calls made now; ``cached`` when every answer came from the cache
    (their latency is the original call's, not this run's)."""
    if s.mean_latency is not None:
        return f"{s.mean_latency:.2f}s"
    return "cached" if s.n + s.errors else "-"


MODEL_HEADERS = ("model", "samples", "answered now", "from cache", "errors", "mean latency")


def models_table(levels: Iterable[LevelStats]) -> Table:
    """Per model: samples, how many were answered now and how many came from the response
    cache (free, instant: a warm rerun), call errors, and the mean latency of the calls made."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0, 0.0])
    for s in levels:
        t = totals[s.model]
        t[0] += s.n + s.errors
        t[1] += s.calls
        t[2] += s.errors
        t[3] += s.latency_total
        t[4] += s.cost_usd
    priced = any(t[4] for t in totals.values())
    rows = []
    for model in sorted(totals):
        samples, calls, errors, latency, cost = totals[model]
        rows.append(
            [
                model,
                str(int(samples)),
                str(int(calls)),
                str(int(samples - calls)),
                str(int(errors)),
                f"{latency / calls:.2f}s" if calls else "-",
                *([f"${cost:.4f}" if cost else "-"] if priced else []),
            ]
        )
    return Table(MODEL_HEADERS + (("cost",) if priced else ()), rows)


def underpowered(c: Comparison) -> bool:
    """A level that passed only because its pairs are too few to see a drop: the smallest
    drop they detect with power 0.8 is more than 0.05 above the tolerated ``max_drop``."""
    if c.regressed:
        return False
    drop = c.detectable_drop
    return drop is None or drop > c.spec.rule.max_drop + 0.05


def verdict(c: Comparison) -> str:
    if c.kind == "drift":  # a drift check: moved, or not
        return "DRIFT" if c.regressed else "ok"
    if c.regressed:
        return "REGRESSION"
    if c.improved:
        return "improved"
    return "under-powered" if underpowered(c) else "ok"


COMPARISON_HEADERS = (
    "candidate",
    "task",
    "level",
    "n",
    "both/only base/only cand/neither",
    "candidate",
    "baseline",
    "difference [95% CI]",
    "McNemar p",
    "Holm p (one-sided)",
    "verdict",
)


# With repeats the accuracies are per-item means, the counts are items the candidate did
# worse / better / the same on, and the test is named (McNemar's is a sign-flip test on 0/1).
REPEATED_HEADERS = {
    "both/only base/only cand/neither": "items worse/better/same",
    "McNemar p": "p (two-sided)",
}


DRIFT_HEADERS = {"McNemar p": "McNemar p (two-sided)", "Holm p (one-sided)": "Holm p (drift)"}


def comparisons_table(comparisons: Sequence[Comparison], *, suite: bool = False) -> Table:
    """One row per comparison; with ``suite``, the suite file is the second column. Any
    comparison over repeats (per-item means) gives the table its headers and a test column;
    without, the table is as it always was."""
    repeated = any(c.means is not None for c in comparisons)
    rows = []
    for c in comparisons:
        t, m = c.table, c.means
        if m is not None:
            counts = f"{m.worse}/{m.better}/{m.tied}"
        elif repeated:
            counts = f"{t.only_baseline}/{t.only_candidate}/{t.both + t.neither}"
        else:
            counts = f"{t.both}/{t.only_baseline}/{t.only_candidate}/{t.neither}"
        rows.append(
            [
                c.candidate,
                c.spec.entry,
                c.spec.level,
                str(t.n),
                counts,
                f"{c.candidate_accuracy:.3f}",
                f"{c.baseline_accuracy:.3f}",
                f"{c.difference:+.3f} [{c.low:+.2f}, {c.high:+.2f}]",
                f"{c.p_two_sided:.3g}" + (f" {c.test}" if repeated else ""),
                f"{c.p_adjusted:.3g}",
                verdict(c),
            ]
        )
        if suite:
            rows[-1].insert(1, c.spec.suite)
    headers: tuple[str, ...] = COMPARISON_HEADERS
    if repeated:
        headers = tuple(REPEATED_HEADERS.get(h, h) for h in headers)
    if any(c.kind == "drift" for c in comparisons):  # two tests, two-sided (gates.drift)
        headers = tuple(DRIFT_HEADERS.get(h, h) for h in headers)
    return Table((headers[0], "suite", *headers[1:]) if suite else headers, rows)


def breakdowns(
    rows: Iterable[Mapping[str, Any]], uncounted: Collection[tuple[Any, ...]] = ()
) -> list[Breakdown]:
    """Each task family's own breakdown of its rows (FLenQA by length, ZebraLogic by size:
    the ``breakdown`` hook), in family order; suites told apart when the rows hold several.
    ``uncounted``: the samples no gate counted (``Ledger.uncounted``: answers that arrived
    after a sequential level settled), left out so a table counts what its gate counted."""
    families: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        if uncounted and sample_key(r) in uncounted:
            continue
        families[str(r.get("task", "")).partition(".")[0]].append(r)
    suites = len({r.get("suite") for r in rows_of(families)}) > 1
    out = []
    for _, mine in sorted(families.items()):
        task = _task(str(mine[0]["task"]))
        if task is not None and hooks.breaks_down(task):
            found = hooks.breakdown(task, mine, suites=suites)
            if isinstance(found, Breakdown):
                out.append(found)
    return out


def rows_of(families: Mapping[str, list[Mapping[str, Any]]]) -> Iterable[Mapping[str, Any]]:
    for rows in families.values():
        yield from rows


def breakdown_table(b: Breakdown) -> Table:
    return Table(b.headers, [list(row) for row in b.rows])


def breaks_down(task: str) -> bool:
    """Whether ``task``'s family reads its rows for a breakdown (a run keeps them)."""
    found = _task(task)
    return found is not None and hooks.breaks_down(found)


def _task(task_id: str) -> Task | None:
    try:
        return get_task(task_id)
    except UnknownTask:  # rows of a task not installed here: no breakdown, no crash
        return None


def _reason(gate: GateResult) -> str:
    """A gate's reason as the terminal and JUnit give it: a failed gate's dominant cause (cut
    off at the token limit, looping, no answer) follows its figures."""
    cause = failure_cause(gate.stats) if gate.passed is False else None
    return f"{gate.reason}; {cause}" if cause else gate.reason
