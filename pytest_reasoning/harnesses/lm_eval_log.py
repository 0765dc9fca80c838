"""lm-evaluation-harness's ``--log_samples`` output read as data (never through lm_eval):
``results_DATE.json`` (the model, the samples each task ran) beside one
``samples_TASK_DATE.jsonl`` per task, a line per document and filter.

A task's metric (default: the first the samples list, or the thresholds file's ``score:``)
under each filter is a level, named as lm-eval names its results (``exact_match,strict``).
A document's repeats (``repeats:`` in a task) are scored together by lm-eval: one sample."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import quote
from ..files import BadJSON, InputRefused, loads_bounded, read_input
from .samples import (
    HarnessLog,
    InvalidLog,
    Sample,
    field_dict,
    json_lines,
    score_value,
    text_of,
)

__all__ = ["read_lm_eval"]

MAX_RESULTS_BYTES = 64 << 20


def read_lm_eval(paths: Sequence[str], scores: Mapping[str, str]) -> HarnessLog:
    """The samples of lm-evaluation-harness output folders (or samples files);
    ``scores``: the metric to read per task (``"*"``: every task's default)."""
    log = HarnessLog("lm-eval")
    runs: dict[str, tuple[str, dict[str, Any]]] = {}  # samples file → (model, its results)
    files: list[str] = []
    for raw in paths:
        if os.path.isdir(raw):
            found = []
            for folder, _, names in sorted(os.walk(raw)):
                for name in sorted(names):
                    full = os.path.join(folder, name)
                    if name.startswith("samples_") and name.endswith(".jsonl"):
                        found.append(full)
                    elif name.startswith("results_") and name.endswith(".json"):
                        _results(full, names, folder, runs)
            if not found:
                raise InvalidLog(
                    f"{raw}: no samples_*.jsonl in this folder (run lm_eval with --log_samples)"
                )
            files += found
        elif not os.path.isfile(raw):
            raise InvalidLog(f"{raw}: no such file or folder")
        else:
            folder, name = os.path.split(raw)
            for other in sorted(os.listdir(folder or ".")):
                if other.startswith("results_") and other.endswith(".json"):
                    _results(os.path.join(folder, other), [name], folder, runs)
            files.append(raw)
    for path in list({os.path.realpath(p): p for p in files}.values()):
        _samples(log, path, runs.get(path), scores)
    return log


def _results(
    path: str, names: Sequence[str], folder: str, runs: dict[str, tuple[str, dict[str, Any]]]
) -> None:
    """A results file: its model, for the samples files of the same run (same date)."""
    date = os.path.basename(path)[len("results_") : -len(".json")]
    mine = [n for n in names if n.startswith("samples_") and n.endswith(f"_{date}.jsonl")]
    if not mine:
        return
    try:
        found = loads_bounded(read_input(path, MAX_RESULTS_BYTES, what="lm-eval results"))
    except (InputRefused, BadJSON) as exc:
        raise InvalidLog(f"{path}: {getattr(exc, 'reason', exc)}") from None
    if not isinstance(found, dict):
        raise InvalidLog(f"{path}: not lm-evaluation-harness results (no JSON object)")
    model = found.get("model_name")
    if not isinstance(model, str) or not model:
        model = field_dict(found, "config").get("model")
    if not isinstance(model, str):
        model = None
    if not model:
        raise InvalidLog(f"{path}: model_name: expected text")
    for name in mine:
        runs[os.path.join(folder, name)] = (model, found)


def _samples(
    log: HarnessLog,
    path: str,
    run: tuple[str, dict[str, Any]] | None,
    scores: Mapping[str, str],
) -> None:
    base = os.path.basename(path)[len("samples_") : -len(".jsonl")]
    task = base.rsplit("_", 1)[0] if "_" in base else base
    if run is None:
        raise InvalidLog(
            f"{path}: no results_DATE.json of the same run beside it (it names the model)"
        )
    model, results = run
    counts: dict[str, int] = {}
    for shown, row in json_lines(path, "an lm-eval samples file"):
        if isinstance(row, BadJSON):
            log.notes.append(f"{shown}: not a whole JSON line (a killed run's last): skipped")
            continue
        sample = _sample(row, task, model, scores.get(task) or scores.get("*"), shown)
        log.samples.append(sample)
        log.sources.setdefault((model, task, sample.level), path)
        counts[sample.level] = counts.get(sample.level, 0) + 1
    n = results.get("n-samples")
    effective = n.get(task) if isinstance(n, dict) else None
    size = effective.get("effective") if isinstance(effective, dict) else None
    for level, count in counts.items():
        planned = size if isinstance(size, int) and not isinstance(size, bool) else count
        log.planned[(model, task, level)] = max(planned, count)


def _sample(row: Any, task: str, model: str, metric: str | None, shown: str) -> Sample:
    if not isinstance(row, dict):
        raise InvalidLog(f"{shown}: expected a JSON object (a sample)")
    doc = row.get("doc_id")
    if not isinstance(doc, int | str) or isinstance(doc, bool):
        raise InvalidLog(f"{shown}: doc_id: expected an integer, got {quote(doc, 40)}")
    named = row.get("metrics")
    names = [m for m in named if isinstance(m, str)] if isinstance(named, list) else []
    metric = metric or (names[0] if names else None)
    if metric is None or metric not in row:
        raise InvalidLog(
            f"{shown}: no metric {quote(metric, 40)}; the sample has "
            + (", ".join(quote(m, 40) for m in names) or "none named")
            + " (choose with `score:` in the thresholds file)"
        )
    try:
        value = score_value(row[metric], f"{shown}: {metric}")
    except ValueError as exc:
        raise InvalidLog(str(exc)) from None
    filtered = row.get("filter")
    level = f"{metric},{filtered}" if isinstance(filtered, str) else metric
    resps = row.get("resps")
    first = resps[0] if isinstance(resps, list) and resps else None
    response = first[0] if isinstance(first, list) and first else first
    picked = row.get("filtered_resps")
    extracted = picked[0] if isinstance(picked, list) and picked else picked
    digest = row.get("prompt_hash")
    return Sample(
        task=task,
        level=level,
        sample_id=str(doc),
        model=model,
        value=value,
        prompt=text_of(row.get("arguments", "")),
        response=response if isinstance(response, str) else None,
        extracted=extracted if isinstance(extracted, str) else None,
        target=text_of(row.get("target", "")),
        prompt_sha256=digest if isinstance(digest, str) and len(digest) <= 128 else None,
    )
