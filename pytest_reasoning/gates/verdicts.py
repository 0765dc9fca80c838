"""Verdicts on gates and comparisons, one copy for both deciders: the plugin's controller (a
pytest run) and ``pytest-reasoning gate`` (a merge of results files, ``merge.py``).

Here: the verdict items' names, what each verdict says (outcome, message, the JUnit
properties), the per-model error tallies, the run-wide error budget, a stored baseline, and
the exit status. Both deciders feed it per-level tallies (:class:`LevelStats`), never a list
of every outcome, and a level is decided only when every one of its samples is in: fewer is
*incomplete*, reported as skipped, never decided on fewer samples."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core import Outcome
from ..errors import ReasoningError, inert_json, printable
from .comparison import Comparison, ItemScore, PairKey, item_scores
from .rows import read_results
from .threshold import GateResult, LevelStats

__all__ = [
    "EXIT_INFRASTRUCTURE",
    "INFRASTRUCTURE_ID",
    "STOPPED_BY_ERROR",
    "UNANSWERED",
    "Tally",
    "Verdict",
    "comparison_name",
    "comparison_verdict",
    "deferred_verdict",
    "drift_name",
    "exit_status",
    "failure_cause",
    "gate_name",
    "gate_properties",
    "gate_verdict",
    "infrastructure_message",
    "load_baseline",
    "unanswered_levels",
    "undecided_verdict",
]

EXIT_INFRASTRUCTURE = 6  # pytest uses 0-5; see README "Exit status"
# Not a collected test: the run-wide error budget is known only at the end.
INFRASTRUCTURE_ID = "reasoning::infrastructure"
Status = Literal["passed", "failed", "skipped"]
# What a sample not asked because its model's own error stopped it says (``evaluate``).
STOPPED_BY_ERROR = " was stopped by an earlier error"


def gate_name(entry: str, level: str, model: str, multi: bool) -> str:
    """``entry[LEVEL-gate]``; with several models ``entry[LEVEL-gate-MODEL]``."""
    return f"{entry}[{level}-gate" + (f"-{model}]" if multi else "]")


def comparison_name(entry: str, level: str, candidate: str, several: bool) -> str:
    """``entry[LEVEL-vs-baseline]``; with several candidates ``…-vs-baseline-MODEL]``."""
    return f"{entry}[{level}-vs-baseline" + (f"-{candidate}]" if several else "]")


def drift_name(entry: str, level: str, model: str, several: bool) -> str:
    """``entry[LEVEL-drift]`` (``--reasoning-drift``); with several models ``…-drift-MODEL]``."""
    return f"{entry}[{level}-drift" + (f"-{model}]" if several else "]")


@dataclass(frozen=True)
class Verdict:
    """One verdict as a test report says it: the verdict item's node id (``suite::name``),
    passed / failed / skipped (not decided), the one-line message, the JUnit properties."""

    nodeid: str
    model: str
    outcome: Status
    message: str
    properties: tuple[tuple[str, str], ...] = ()
    kind: str = "gate"  # "gate" | "comparison" | "infrastructure"
    deferred: bool = False  # left to ``pytest-reasoning gate``
    # What was decided (a GateResult, a Comparison): a report links to its samples.
    subject: GateResult | Comparison | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # Messages quote error text and model names, which may come from a results file or
        # an endpoint: a terminal, JUnit or a log shows them, never obeys them.
        object.__setattr__(self, "message", printable(self.message))
        props = tuple((k, inert_json(v)) for k, v in self.properties)
        object.__setattr__(self, "properties", props)

    @property
    def name(self) -> str:
        return self.nodeid.partition("::")[2] or self.nodeid


def gate_properties(result: GateResult) -> dict[str, Any]:
    """The ``reasoning.gate`` JUnit property: one number, ``value``, the gated measure
    (accuracy, or cell accuracy under ``metric: cell``), as in the failure message."""
    s = result.stats
    return {
        "model": s.model,
        "task": s.task,
        "level": s.spec.level,
        "n": s.n,
        "errors": s.errors,
        "metric": s.spec.rule.metric,
        "value": s.measure,
        "min_accuracy": s.spec.rule.min_accuracy,
        "confidence": s.spec.rule.confidence,
        "passed": result.passed,
        "marginal": result.marginal,  # passed, but its 95% interval reaches below (PASS*)
    }


def gate_verdict(nodeid: str, result: GateResult) -> Verdict:
    """A threshold gate decided on its whole level. Every sample failed for infrastructure:
    skipped (not decided; the error budget fails the run)."""
    s = result.stats
    props = (("reasoning.gate", json.dumps(gate_properties(result))),)
    name = nodeid.partition("::")[2]
    if result.passed is None:
        message = f"{name}: {result.reason} (infrastructure, not the model)"
        return Verdict(nodeid, s.model, "skipped", message, props)
    message = f"GATE FAILED {s.model} {s.task} {s.spec.level}: {result.reason}"
    cause = failure_cause(s) if not result.passed else None
    if cause:
        message += f"; {cause}"
    outcome: Status = "passed" if result.passed else "failed"
    return Verdict(nodeid, s.model, outcome, message, props, subject=result)


# Failure modes that mean no answer could be read at all (NPHardEval's "failure rate").
UNANSWERED = ("truncated", "no_answer", "format", "echo", "scorer_error")
_REMEDY = {
    "truncated": "cut off at the token limit{limit}: raise it with --llm-param {name}=N",
    "no_answer": "gave no answer in the asked format: check the prompt style, or read "
    "\\boxed{{}} and 'the answer is' with --reasoning-lenient",
    "format": "gave an answer that could not be read: see the report's samples, or try "
    "--reasoning-lenient",
    "echo": "echoed the answer template instead of answering",
    "scorer_error": "hit a scorer error (a bug in the task: please report it)",
}


def failure_cause(s: LevelStats) -> str | None:
    """The dominant cause of a level's wrong answers, when one mode makes at least half of
    them, with its remedy: ``6 of 6 cut off at the token limit (max_tokens 1024): raise it
    with --llm-param max_tokens=N``. A limit of ours (the user gave none) says so, and replies
    that were repeating themselves are named for what they are: a higher limit would not
    help them."""
    wrong = s.n - s.correct
    if wrong <= 0 or not s.failure_modes:
        return None
    mode, count = max(s.failure_modes.items(), key=lambda kv: (kv[1], kv[0]))
    if 2 * count < wrong:
        return None
    if mode not in _REMEDY:
        return f"{count} of {s.n} failed as {mode}"
    name, limit = "max_tokens", ""
    if mode == "truncated" and len(s.token_limits) == 1:
        name, value = next(iter(s.token_limits))
        ours = ", pytest-reasoning's default" if s.default_limits == count else ""
        limit = f" ({name} {value}{ours})"
    if mode == "truncated" and 2 * s.repeating >= count:
        return (
            f"{count} of {s.n} cut off at the token limit{limit}, {s.repeating} of them "
            "repeating themselves in a loop that a higher limit would not end"
        )
    what = _REMEDY[mode].format(limit=limit, name=name)
    return f"{count} of {s.n} {what}"


def undecided_verdict(
    nodeid: str, model: str, ran: int, size: int, hint: str, kind: str = "gate"
) -> Verdict:
    """A verdict whose level has fewer samples in than it has: not decided."""
    what = "a gate" if kind == "gate" else "a comparison"
    message = (
        f"{nodeid.partition('::')[2]}: not decided ({ran} of {size or '?'} samples): "
        f"{what} is decided only on its whole level ({hint})"
    )
    return Verdict(nodeid, model, "skipped", message, (), kind)


def deferred_verdict(nodeid: str, model: str, why: str, kind: str = "gate") -> Verdict:
    """A verdict left to ``pytest-reasoning gate`` (``--reasoning-defer-gates``, or a
    comparison in a shard: Holm's correction spans every level)."""
    message = (
        f"{nodeid.partition('::')[2]}: deferred ({why}); decide it with "
        "pytest-reasoning gate SUITE... --results FILE..."
    )
    return Verdict(nodeid, model, "skipped", message, (), kind, deferred=True)


def comparison_verdict(nodeid: str, c: Comparison) -> Verdict:
    return Verdict(
        nodeid,
        c.candidate,
        "failed" if c.regressed else "passed",
        f"{'DRIFT' if c.kind == 'drift' else 'REGRESSION'} {c.task} {c.spec.level}: {c.reason()}",
        (("reasoning.comparison", json.dumps(c.to_dict())),),
        "comparison",
        subject=c,
    )


@dataclass
class Tally:
    """Per model: answered / cached / errors / not_asked, the distinct error messages in the
    order they first came with their counts, and the first error that stopped each model."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)
    error_messages: dict[str, Counter[str]] = field(default_factory=dict)
    stopped: dict[str, str] = field(default_factory=dict)
    # Per model: why its samples were not asked, when not an error of its own (a budget).
    not_asked_why: dict[str, str] = field(default_factory=dict)

    def add(self, o: Outcome) -> str | None:
        """Count one outcome; returns the error when it is the first to stop its model."""
        counts = self.counts.setdefault(o.model, Counter())
        if o.error is None:
            counts["cached" if o.cached else "answered"] += 1
            return None
        kind = o.error_kind or "transient"
        counts["not_asked" if kind == "not_asked" else "errors"] += 1
        if kind != "not_asked":
            self.error_messages.setdefault(o.model, Counter())[o.error] += 1
        elif STOPPED_BY_ERROR not in o.error:  # a budget reached, a cache that failed
            self.not_asked_why.setdefault(o.model, o.error.removeprefix("not asked: "))
        if kind == "stop" and o.model not in self.stopped:
            self.stopped[o.model] = o.error
            return o.error
        return None

    @property
    def not_asked(self) -> dict[str, int]:
        return {m: c["not_asked"] for m, c in self.counts.items() if c["not_asked"]}

    @property
    def messages(self) -> dict[str, list[tuple[str, int]]]:
        return {m: list(c.items()) for m, c in self.error_messages.items()}

    def first_cause(self) -> tuple[str, str] | None:
        stopped = next(iter(self.stopped.items()), None)
        return stopped or next(
            ((m, next(iter(c))) for m, c in self.error_messages.items() if c), None
        )


def unanswered_levels(levels: Iterable[LevelStats]) -> list[LevelStats]:
    """Levels where every sample failed for infrastructure (nothing known of the model)."""
    return [s for s in levels if s.n == 0 and s.errors]


def infrastructure_message(
    levels: Sequence[LevelStats],
    max_errors: int,
    tally: Tally,
    *,
    missing: Mapping[Any, tuple[int, int]] | None = None,
    why: str | None = None,
) -> str | None:
    """The run-wide error budget: ``None`` when it holds, else one line — how many calls
    failed, that it is not the model, and the first cause. ``missing`` (the merge only):
    levels with fewer results rows than samples — ``why``, where the rows say (samples not
    asked, a sequential stop), else a shard that never ran."""
    errors = sum(s.errors for s in levels)
    empty = len(unanswered_levels(levels))
    parts = []
    if errors > max_errors or empty:
        parts.append(
            f"{errors} model call(s) failed (budget --reasoning-max-errors={max_errors})"
            + (f", {empty} level(s) got no answer at all" if empty else "")
            + ": infrastructure, not the model; not counted as wrong answers"
        )
        first = tally.first_cause()
        if first is not None:
            parts.append(f"cause: {first[0]}: {first[1]}")
    if missing:
        absent = sum(size - ran for ran, size in missing.values())
        why = why or "a shard that did not run, or a results file not given"
        parts.append(
            f"{len(missing)} level(s) lack {absent} sample(s) in the results files ({why}): "
            "their verdicts are not decided"
        )
    return "; ".join(parts) or None


def exit_status(failed: int, infrastructure: bool) -> int:
    """pytest's statuses, and one of ours: 1 when a gate, a comparison (or another test)
    failed; 6 when only infrastructure did (the error budget, or missing samples in a merge);
    else 0."""
    if failed:
        return 1
    return EXIT_INFRASTRUCTURE if infrastructure else 0


def load_baseline(
    path: str | os.PathLike[str], name: str | None
) -> tuple[dict[PairKey, ItemScore], str]:
    """A stored baseline (``--reasoning-baseline-results``): its answers per item and prompt
    (:func:`item_scores`: majority vote, right, answered and samples, for comparisons over
    repeats), and the model's name. Raises ValueError with one line naming the option and
    the file."""
    shown = os.fspath(path)
    try:
        rows = list(read_results(path))
    except (OSError, ValueError) as exc:
        raise ValueError(f"--reasoning-baseline-results {shown}: {exc}") from None
    except ReasoningError as exc:  # a row a comparison could miscount: file:line: field
        raise ValueError(f"--reasoning-baseline-results: {exc}") from None
    models = sorted({str(r["model"]) for r in rows})
    if name is None:
        if len(models) != 1:
            raise ValueError(
                f"--reasoning-baseline-results {shown}: holds {len(models)} models "
                f"({', '.join(models) or 'none'}); choose one with --reasoning-baseline-model"
            )
        name = models[0]
    elif name not in models:
        raise ValueError(
            f"--reasoning-baseline-model {name!r}: not in {shown}; it holds {', '.join(models)}"
        )
    return item_scores(Outcome.from_dict(r) for r in rows if r["model"] == name), name
