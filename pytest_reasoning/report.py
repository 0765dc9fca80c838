"""Tables for people: the run summary (tabulate)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from .comparison import Comparison
from .core import Outcome, level_key
from .results import GateResult, LevelStats, ResultStore

__all__ = ["length_table", "markdown_summary", "summary_rows", "summary_table"]

HEADERS = (
    "model",
    "task",
    "level",
    "n",
    "correct",
    "accuracy",
    "95% CI",
    "threshold",
    "gate",
    "errors",
    "tokens",
    "mean latency",
)


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def summary_rows(gates: Sequence[GateResult], store: ResultStore) -> list[list[str]]:
    by_stats = {id(g.stats): g for g in gates}
    rows = []
    levels: list[LevelStats] = sorted(
        store.levels.values(),
        key=lambda s: (s.model, s.spec.suite, s.spec.entry, level_key(s.spec.level)),
    )
    for s in levels:
        gate = by_stats.get(id(s))
        lo, hi = s.interval(0.95)
        thr = s.spec.min_accuracy
        threshold = (
            "-"
            if thr is None
            else (f"{thr:g}" + (f" @{s.spec.confidence:g}" if s.spec.confidence else ""))
        )
        verdict = (
            "-" if gate is None or gate.passed is None else ("PASS" if gate.passed else "FAIL")
        )
        latency = s.mean_latency
        rows.append(
            [
                s.model,
                s.spec.entry,
                s.spec.level,
                str(s.n),
                str(s.correct),
                _fmt(s.measure) + (" cell" if s.spec.metric == "cell" else ""),
                f"[{lo:.2f}, {hi:.2f}]" if s.n else "-",
                threshold,
                verdict,
                str(s.errors),
                str(s.prompt_tokens + s.completion_tokens),
                "-" if latency is None else f"{latency:.2f}s",
            ]
        )
    return rows


def summary_table(gates: Sequence[GateResult], store: ResultStore) -> str:
    from tabulate import tabulate

    return str(
        tabulate(
            summary_rows(gates, store), headers=HEADERS, tablefmt="simple", disable_numparse=True
        )
    )


def length_rows(outcomes: Iterable[Outcome]) -> tuple[list[str], list[list[str]]]:
    """FLenQA's figure 1 as a table: accuracy per target length for each (model, task,
    padding, position), then the label bias (share of False answers against the balanced
    truth's 0.50) and, for chain-of-thought, the answer-first and key-sentence coverage shares.
    Empty when no FLenQA sample was answered."""
    cells: dict[tuple[str, str, str, str], dict[int, list[bool]]] = defaultdict(
        lambda: defaultdict(list)
    )
    flags: dict[tuple[str, str, str, str], list[Outcome]] = defaultdict(list)
    lengths: set[int] = set()
    for o in outcomes:
        if not o.task.startswith("flenqa.") or o.error is not None or "padding" not in o.extra:
            continue
        key = (o.model, o.task, str(o.extra["padding"]), str(o.extra["position"]))
        length = int(o.extra["target_tokens"])
        lengths.add(length)
        cells[key][length].append(bool(o.correct))
        flags[key].append(o)
    order = sorted(lengths)
    headers = ["model", "task", "padding", "position", *map(str, order)]
    headers += ["False share", "answer first", "coverage"]
    rows = []
    for key in sorted(cells):
        row = list(key)
        for length in order:
            hits = cells[key].get(length, [])
            row.append(f"{sum(hits) / len(hits):.2f} ({len(hits)})" if hits else "-")
        outs = flags[key]
        said = [o.extracted for o in outs if o.extracted in ("True", "False")]
        row.append(f"{said.count('False') / len(said):.2f}" if said else "-")
        cot = [o for o in outs if "coverage" in o.extra]
        for flag in ("answer_first", "coverage"):
            row.append(f"{sum(bool(o.extra[flag]) for o in cot) / len(cot):.2f}" if cot else "-")
        rows.append(row)
    return headers, rows


def length_table(outcomes: Iterable[Outcome], fmt: str = "simple") -> str:
    from tabulate import tabulate

    headers, rows = length_rows(outcomes)
    if not rows:
        return ""
    return str(tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True))


def markdown_summary(
    gates: Sequence[GateResult], store: ResultStore, comparisons: Sequence[Comparison]
) -> str:
    """The run summary as Markdown tables (for ``$GITHUB_STEP_SUMMARY``)."""
    from tabulate import tabulate

    failed = sum(g.passed is False for g in gates) + sum(c.regressed for c in comparisons)
    parts = [
        "## pytest-reasoning",
        "",
        f"**{failed} gate(s) failed.**" if failed else "All gates passed.",
        "",
        str(
            tabulate(
                summary_rows(gates, store),
                headers=HEADERS,
                tablefmt="github",
                disable_numparse=True,
            )
        ),
    ]
    lengths = length_table(store.outcomes, "github")
    if lengths:
        parts += ["", "### Accuracy by input length (FLenQA)", "", lengths]
    if comparisons:
        rows = [
            [
                c.candidate,
                c.spec.entry,
                c.spec.level,
                str(c.table.n),
                f"{c.table.candidate_accuracy:.3f}",
                f"{c.table.baseline_accuracy:.3f}",
                f"{c.table.difference:+.3f} [{c.low:+.2f}, {c.high:+.2f}]",
                f"{c.p_adjusted:.3g}",
                "**REGRESSION**" if c.regressed else ("improved" if c.improved else "ok"),
            ]
            for c in comparisons
        ]
        parts += [
            "",
            f"### Candidate vs baseline ({comparisons[0].baseline})",
            "",
            str(
                tabulate(
                    rows,
                    headers=[
                        "candidate",
                        "task",
                        "level",
                        "n",
                        "candidate",
                        "baseline",
                        "difference [95% CI]",
                        "Holm p",
                        "verdict",
                    ],
                    tablefmt="github",
                    disable_numparse=True,
                )
            ),
        ]
    return "\n".join(parts) + "\n"
