"""Our verdicts for another harness's results: ``pytest-reasoning gate --from KIND LOG...``.

inspect_ai's eval logs (``inspect_log``), lm-evaluation-harness's ``--log_samples`` output
(``lm_eval_log``) and a documented JSONL shape for anything else (``samples``) are read as
data — neither tool is imported — into our results rows, then decided by the one verdict
ledger through ``merge.decide``, as a merge of our own shards is: per-task thresholds from a
small YAML (``thresholds``), the candidate against a baseline paired per sample (McNemar, or
with epochs the per-item mean test, Holm across the candidate's levels), epochs clustered,
the same summary, JUnit XML, HTML report and exit status (docs/harnesses.md).

Samples that exist on one side only, or that asked another prompt there, are named in the
notes and left out of the pairing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..config import EntrySpec, LevelSpec
from ..core import Outcome
from ..errors import ReasoningError, quote
from ..gates.comparison import item_scores
from ..gates.ledger import StoredBaseline
from ..merge import Level, Merge, decide
from .inspect_log import read_inspect
from .lm_eval_log import read_lm_eval
from .samples import HarnessLog, InvalidLog, read_jsonl, to_rows
from .thresholds import Thresholds, load_thresholds

__all__ = [
    "HARNESSES",
    "HarnessLog",
    "InvalidLog",
    "Thresholds",
    "gate_logs",
    "load_thresholds",
    "read_logs",
]

Reader = Callable[[Sequence[str], Mapping[str, str]], HarnessLog]
HARNESSES: dict[str, Reader] = {
    "inspect": read_inspect,
    "lm-eval": read_lm_eval,
    "jsonl": read_jsonl,
}
HINT = "samples missing: a log of a run that did not finish, or a log not given"
SHOWN = 5  # sample ids a note names


def read_logs(kind: str, paths: Sequence[str], scores: Mapping[str, str]) -> HarnessLog:
    """The samples of ``paths``, logs of harness ``kind`` (a key of :data:`HARNESSES`)."""
    reader = HARNESSES.get(kind)
    if reader is None:
        raise ReasoningError(
            f"--from {quote(kind, 40)}: expected one of {', '.join(HARNESSES)}, then the logs"
        )
    if not paths:
        raise ReasoningError(f"--from {kind}: name the logs after it (files or folders)")
    return reader(paths, scores)


def gate_logs(
    kind: str,
    paths: Sequence[str],
    *,
    thresholds: str | None = None,
    baseline: str | None = None,
    baseline_logs: Sequence[str] = (),
    baseline_model: str | None = None,
    max_errors: int = 0,
    allow_partial: bool = False,
) -> Merge:
    """Every gate and comparison of the logs: ``thresholds`` (a file) per task, against
    ``baseline`` (a model of the logs) or the model of ``baseline_logs`` (logs of the same
    harness; ``baseline_model`` where they hold several)."""
    if baseline and baseline_logs:
        raise ReasoningError(
            "--llm-baseline and --reasoning-baseline-results: give one baseline, not both"
        )
    spec = load_thresholds(thresholds) if thresholds else Thresholds()
    log = read_logs(kind, paths, spec.scores)
    rows = to_rows(log)
    notes = list(log.notes)
    models = sorted({str(r["model"]) for r in rows})
    stored: StoredBaseline | None = None
    if baseline_logs:
        theirs = read_logs(kind, baseline_logs, spec.scores)
        base_rows = to_rows(theirs)
        notes += [f"baseline: {n}" for n in theirs.notes]
        name = _baseline_name(base_rows, baseline_model, baseline_logs)
        base_rows = [r for r in base_rows if r["model"] == name]
        label = f"{name} (baseline)" if name in models else name
        stored = (item_scores(Outcome.from_dict(r) for r in base_rows), label)
        for model in models:
            notes += _one_sided([r for r in rows if r["model"] == model], base_rows, label)
    elif baseline is not None:
        if baseline not in models:
            raise ReasoningError(
                f"--llm-baseline: {quote(baseline)} is not in the logs; they hold "
                + (", ".join(models) or "no sample")
            )
        base_rows = [r for r in rows if r["model"] == baseline]
        for model in models:
            if model != baseline:
                mine = [r for r in rows if r["model"] == model]
                notes += _one_sided(mine, base_rows, baseline)
    levels = _levels(log, rows, spec, kind)
    gated = {lv.entry.id for lv in levels}
    for task in sorted(set(spec.rules) - {"*"} - gated):
        notes.append(f"thresholds for task {quote(task, 60)}: no log holds it")
    return decide(
        levels,
        [r for lv in levels for model_rows in lv.rows.values() for r in model_rows.values()],
        notes,
        baseline=baseline,
        baseline_results=None,
        baseline_model=None,
        max_errors=max_errors,
        allow_partial=allow_partial,
        files=len(paths),
        total=len(rows),
        stored=stored,
        hint=HINT,
    )


def _baseline_name(rows: Sequence[dict[str, Any]], name: str | None, paths: Sequence[str]) -> str:
    found = sorted({str(r["model"]) for r in rows})
    shown = " ".join(paths)
    if name is None:
        if len(found) != 1:
            raise ReasoningError(
                f"--reasoning-baseline-results {shown}: holds {len(found)} models "
                f"({', '.join(found) or 'none'}); choose one with --reasoning-baseline-model"
            )
        return found[0]
    if name not in found:
        raise ReasoningError(
            f"--reasoning-baseline-model {quote(name)}: not in {shown}; it holds "
            + ", ".join(found)
        )
    return name


def _levels(
    log: HarnessLog, rows: Iterable[dict[str, Any]], spec: Thresholds, kind: str
) -> list[Level]:
    """One level per (task, scoring), its samples per model as the logs planned them."""
    levels: dict[tuple[str, str], Level] = {}
    for row in rows:
        task, level, model = str(row["task"]), str(row["level"]), str(row["model"])
        lv = levels.get((task, level))
        if lv is None:
            rule = spec.rule(task)
            entry = EntrySpec(id=task, task=task, levels=())
            found = LevelSpec(level, 0, (), "", {}, rule, 1)
            lv = levels[(task, level)] = Level(kind, (kind,), entry, found, {}, {})
        lv.expected.setdefault(str(row["item_id"]), len(lv.expected))
        lv.rows.setdefault(model, {})[str(row["item_id"])] = row
        repeats = max(lv.level.repeats, int(row["repeats"]))
        if repeats != lv.level.repeats:
            lv.level = LevelSpec(level, 0, (), "", {}, lv.level.rule, repeats)
    for (task, level), lv in levels.items():
        for model, mine in lv.rows.items():
            lv.sizes[model] = max(log.planned.get((model, task, level), 0), len(mine))
        _check_passes(lv, task)
    return list(levels.values())


def _check_passes(lv: Level, task: str) -> None:
    """pass@K / pass^K need K epochs of every sample."""
    k = lv.level.rule.gauge.needs_repeats
    if k is None:
        return
    fewest = min(int(r["repeats"]) for mine in lv.rows.values() for r in mine.values())
    if k > fewest:
        raise ReasoningError(
            f"thresholds for task {quote(task, 60)}: metric {lv.level.rule.metric} needs "
            f"{k} epochs of each sample; the logs hold {fewest}"
        )


def _one_sided(
    mine: Sequence[dict[str, Any]], theirs: Sequence[dict[str, Any]], baseline: str
) -> list[str]:
    """Notes naming the samples of one side only, and those asked another prompt there."""
    if not mine:
        return []
    model = str(mine[0]["model"])

    def keys(rows: Sequence[dict[str, Any]]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for r in rows:
            o = Outcome.from_dict(r)
            out.setdefault(o.cluster, set()).add(o.prompt_sha256)
        return out

    a, b = keys(mine), keys(theirs)
    only_mine = sorted(set(a) - set(b))
    only_theirs = sorted(set(b) - set(a))
    other_prompt = sorted(c for c in set(a) & set(b) if not a[c] & b[c])
    notes = []
    for ids, what in (
        (only_mine, f"sample(s) of {model} have no sample of the baseline {baseline}"),
        (only_theirs, f"sample(s) of the baseline {baseline} have none of {model}"),
        (other_prompt, f"sample(s) of {model} asked another prompt than {baseline}'s"),
    ):
        if ids:
            more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
            notes.append(
                f"{len(ids)} {what}: left out of the pairing: "
                + ", ".join(quote(i, 80) for i in ids[:SHOWN])
                + more
            )
    return notes
