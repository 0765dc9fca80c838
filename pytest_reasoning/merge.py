"""``pytest-reasoning gate``: every threshold gate and every comparison against a baseline
re-decided from merged results files (the shards of a CI matrix, docs/ci.md), with the suites'
own rules, through the same code as a pytest run (``gates.verdicts``).

Rows are matched to the suites by what each row carries: its suite file (as the shard's
pytest named it, relative to its rootdir), entry and level, and its item id, which must be one
of the level's samples under the same ``--reasoning-samples`` / ``--reasoning-seed`` /
``--reasoning-repeats`` the shards used. A level with fewer rows than samples (a shard that
never ran, a file not given) is *partial*: its verdicts are not decided, and the merge fails as
infrastructure (exit status 6) unless ``allow_partial``. A sample (suite file, entry, level,
model, item id) counts once: the last row given wins, and rows that answered it differently
are named. Every counted row is re-checked against its suite first (``recheck``)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import Address, EntrySpec, LevelSpec, addresses, is_suite_file, load_suite
from .core import Outcome
from .errors import ReasoningError, printable, quote
from .gates import GateSpec, InvalidResults, Ledger, load_results
from .gates.drift import DEFAULT_MAX_CHANGED, load_drift
from .gates.ledger import StoredBaseline
from .gates.rows import row_key
from .gates.store import NOT_NEEDED
from .gates.verdicts import (
    Verdict,
    comparison_name,
    drift_name,
    exit_status,
    gate_name,
    load_baseline,
)
from .recheck import SHOWN, Origin, recheck
from .report import RunSummary
from .report.summary import ledger_summary

__all__ = [
    "MISSING_HINT",
    "Level",
    "Merge",
    "decide",
    "disambiguate",
    "junit_xml",
    "merge",
    "read_all",
    "suite_files",
]

MISSING_HINT = "rows missing: a shard that did not run, or a results file not given"
EXIT_NOTHING = 5  # pytest's "no tests collected": no gate, no level matched


def read_all(paths: Sequence[str], notes: list[str] | None = None) -> list[dict[str, Any]]:
    """Every row of the results files, in order, each type-checked (``gates.rows``); a file
    that cannot be read, is no results file, or holds a row a verdict could miscount is a
    ReasoningError naming ``file:line: field``. Torn lines (a killed run's last row) are
    skipped and, with ``notes``, counted there. Within a file the last row of a sample wins."""
    return [row for row, _ in _read(paths, notes, every=False)]


def _read(
    paths: Sequence[str], notes: list[str] | None, *, every: bool = True
) -> list[tuple[dict[str, Any], Origin]]:
    """:func:`read_all` with where each row was read (``every``: duplicates too)."""
    rows: list[tuple[dict[str, Any], Origin]] = []
    for path in paths:
        try:
            found = load_results(path, every=every)
        except OSError as exc:
            raise ReasoningError(f"{path}: cannot read: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise InvalidResults(f"{path}: not a results file ({exc.reason})") from None
        if not found.rows:
            raise ReasoningError(f"{path}: no result rows (expected a --reasoning-results file)")
        if found.torn and notes is not None:
            lines = ", ".join(map(str, found.torn[:5])) + (" ..." if len(found.torn) > 5 else "")
            notes.append(
                f"{path}: {len(found.torn)} line(s) are no whole row (a killed run's last "
                f"row), skipped: line {lines}"
            )
        rows += [(r, Origin(path, n)) for r, n in zip(found.rows, found.lines, strict=True)]
    return rows


def disambiguate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of one model name that name different models precisely (two GGUFs both run as
    ``local``, one alias on two endpoints) are labelled by their ``model_id``, so they are
    kept apart instead of pooled."""
    ids: dict[str, set[str]] = {}
    for row in rows:
        if row.get("model_id"):
            ids.setdefault(str(row["model"]), set()).add(str(row["model_id"]))
    for row in rows:
        if len(ids.get(str(row["model"]), ())) > 1:
            row["model"] = row["model_id"] or row["model"]
    return rows


def suite_files(paths: Sequence[str]) -> list[Path]:
    """Suite files named, folders searched the way pytest collects them (every YAML file
    with a top-level ``tasks:``)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.y*ml") if is_suite_file(p))
            if not found:
                raise ReasoningError(f"{raw}: no suite file in this folder")
            out += found
        elif path.is_file():
            if not is_suite_file(path):
                raise ReasoningError(f"{raw}: not a suite file (no top-level 'tasks:' key)")
            out.append(path)
        else:
            raise ReasoningError(f"{raw}: no such suite file or folder")
    return out


def results_files(paths: Sequence[str], option: str | None = "--results") -> list[str]:
    """Results files named, and every ``*.jsonl`` under a folder named (a CI job's
    downloaded artifacts), in a stable order. ``option``: how the error line names where the
    folder was given (none for a positional argument)."""
    out: list[str] = []
    for raw in paths:
        if os.path.isdir(raw):
            found = sorted(str(p) for p in Path(raw).rglob("*.jsonl") if p.is_file())
            if not found:
                named = f"{option} {raw}" if option else raw
                raise ReasoningError(f"{named}: no *.jsonl file in this folder")
            out += found
        else:
            out.append(raw)
    return out


@dataclass
class Level:
    """One level of a suite, as the suite defines it, and the rows that answer it."""

    suite: str  # the suite file as the shards' node ids name it
    aliases: tuple[str, ...]  # every name rows give this suite file
    entry: EntrySpec
    level: LevelSpec
    expected: dict[str, int]  # its samples' item ids → their place in collection order
    addresses: dict[str, Address]  # its samples' item ids → their addresses
    rows: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # model → id → row
    read: dict[tuple[str, str], int] = field(default_factory=dict)  # (model, id) → row's place
    # Samples per model where they differ by model (another harness's logs: only the models
    # named here are planned); empty: every model has every expected sample (a suite's level).
    sizes: dict[str, int] = field(default_factory=dict)

    @property
    def spec(self) -> GateSpec:
        return GateSpec(self.suite, self.entry.id, self.level.level, self.level.rule)


@dataclass
class Merge:
    """What ``merge`` decided: the verdicts in collection order, the summary, notes about
    rows left out, and the exit status."""

    verdicts: list[Verdict]
    summary: RunSummary
    status: int
    notes: list[str]
    files: int
    rows: int


def _matches(path: Path, name: str) -> bool:
    """Whether a row's suite (a path relative to the shards' rootdir, or absolute) names
    this suite file."""
    parts = Path(name).parts
    if not parts:
        return False
    if Path(name).is_absolute():
        return Path(name).resolve() == path.resolve()
    return path.resolve().parts[-len(parts) :] == parts


def merge(
    suites: Sequence[str],
    results: Sequence[str],
    *,
    baseline: str | None = None,
    baseline_results: str | None = None,
    baseline_model: str | None = None,
    samples: int | None = None,
    seed: int | None = None,
    repeats: int | None = None,
    max_errors: int = 0,
    allow_partial: bool = False,
    sequential: bool = False,
    drift: str | None = None,
    drift_max_changed: float = DEFAULT_MAX_CHANGED,
) -> Merge:
    """Decide every gate and comparison of ``suites`` from the ``results`` files
    (``sequential``: every level sequential, as the shards' ``--reasoning-sequential``;
    ``drift``: the stored run the shards' ``--reasoning-drift`` named)."""
    if baseline and baseline_results:
        raise ReasoningError(
            "--llm-baseline and --reasoning-baseline-results: give one baseline, not both"
        )
    if drift and (baseline or baseline_results):
        raise ReasoningError(
            "--reasoning-drift: a model against its own stored run, not with a baseline"
        )
    files = suite_files(suites)
    paths = results_files(results)
    notes: list[str] = []
    read = _read(paths, notes)
    rows = disambiguate([row for row, _ in read])
    total = len({row_key(row) for row in rows})  # a rerun's identical rows count once
    names = sorted({str(r["suite"]) for r in rows if r.get("suite")})
    levels: list[Level] = []
    claimed: dict[str, Path] = {}
    for path in files:
        mine = [n for n in names if _matches(path, n)]
        for n in mine:
            if n in claimed and claimed[n] != path:
                raise ReasoningError(
                    f"results rows name the suite {quote(n)}, which matches both {claimed[n]} and "
                    f"{path}: give one of them"
                )
            claimed[n] = path
        shown = mine[0] if mine else _relative(path)
        spec = load_suite(
            path,
            samples=samples,
            seed=seed,
            repeats=repeats,
            display=shown,
            sequential=sequential,
        )
        found: dict[tuple[str, str], dict[str, Address]] = {}
        for a in addresses(spec):
            found.setdefault((a.entry.id, a.level.level), {})[a.sample_id] = a
        for samples_of in found.values():
            a = next(iter(samples_of.values()))
            ids = {sample: k for k, sample in enumerate(samples_of)}
            levels.append(Level(shown, tuple(mine or [shown]), a.entry, a.level, ids, samples_of))
    by_where = {(lv.entry.id, lv.level.level, name): lv for lv in levels for name in lv.aliases}
    unmatched: dict[str, set[tuple[Any, ...]]] = {}
    foreign: dict[tuple[str, str, str], dict[tuple[Any, ...], dict[str, Any]]] = {}
    replaced: list[tuple[int, int]] = []  # (place of a row, place of the later row kept)
    for place, (row, _) in enumerate(read):
        suite, entry_id = row.get("suite"), row.get("entry")
        lv = by_where.get((str(entry_id), str(row["level"]), str(suite)))
        if lv is None:
            where = (
                f"{suite} {entry_id} {row['level']}"
                if suite and entry_id
                else "rows without suite and entry (written before issue 19)"
            )
            unmatched.setdefault(where, set()).add(row_key(row))
            continue
        if row["item_id"] not in lv.expected:
            foreign.setdefault((lv.suite, lv.entry.id, lv.level.level), {})[row_key(row)] = row
            continue
        # One row per sample of the suite file, whatever name the row gives the file.
        sample = (str(row["model"]), str(row["item_id"]))
        if sample in lv.read:
            replaced.append((lv.read[sample], place))
        lv.rows.setdefault(sample[0], {})[sample[1]] = row
        lv.read[sample] = place
    # A sample whose last row is marked not needed (asked ahead of a sequential stop, paid
    # for) counts in no verdict, as in the live run that wrote it.
    not_needed = 0
    for lv in levels:
        for sample, place in list(lv.read.items()):
            if read[place][0].get(NOT_NEEDED):
                del lv.read[sample], lv.rows[sample[0]][sample[1]]
                not_needed += 1
    kept = sorted(place for lv in levels for place in lv.read.values())
    notes += _replaced_notes(read, replaced)
    if not_needed:
        notes.append(
            f"{not_needed} sample(s) asked ahead and not needed (a sequential level settled "
            "first): paid for, in no verdict"
        )
    notes += _unmatched_notes(
        {k: len(v) for k, v in unmatched.items()},
        {k: list(v.values()) for k, v in foreign.items()},
        levels,
    )
    owner = {place: lv for lv in levels for place in lv.read.values()}
    recheck(
        (read[place][0], read[place][1], owner[place].addresses[str(read[place][0]["item_id"])])
        for place in kept
    )
    matched = [read[place][0] for place in kept]
    return decide(
        levels,
        matched,
        notes,
        baseline=baseline,
        baseline_results=baseline_results,
        baseline_model=baseline_model,
        max_errors=max_errors,
        allow_partial=allow_partial,
        files=len(paths),
        total=total,
        drift=drift,
        drift_max_changed=drift_max_changed,
    )


def _relative(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _replaced_notes(
    read: Sequence[tuple[dict[str, Any], Origin]], replaced: Sequence[tuple[int, int]]
) -> list[str]:
    """What the rows of a sample that another row given later replaced say: nothing when they
    agree (a rerun) or the earlier call failed (a retry); otherwise each sample is named, with
    the row kept."""
    conflicts: list[str] = []
    other_file = older_prompt = 0
    for before, after in replaced:
        (old, was), (new, now) = read[before], read[after]
        if old["prompt_sha256"] != new["prompt_sha256"]:
            older_prompt += 1  # another question (an older generator, another style)
        elif old["error"] is None and _answer(old) != _answer(new):
            conflicts.append(
                f"{_shown(new['model'])} {new['item_id']}: {was} ({_verdict(old)}) and "
                f"{now} ({_verdict(new)}), {now} kept"
            )
        elif was.path != now.path:
            other_file += 1
    notes = []
    if other_file:
        notes.append(
            f"{other_file} row(s) answer a sample another file answers too: the last file's "
            "row kept"
        )
    if older_prompt:
        notes.append(
            f"{older_prompt} row(s) answer another prompt of a sample a later row answers "
            "(a run before the generator or the style changed): the later row kept"
        )
    if conflicts:
        more = f"; and {len(conflicts) - SHOWN} more" if len(conflicts) > SHOWN else ""
        notes.append(
            f"{len(conflicts)} row(s) answer their sample otherwise than a row given after "
            "them (a rerun without the response cache, or overlapping shards), the later row "
            "kept: "
            + "; ".join(conflicts[:SHOWN])
            + more
        )
    return notes


def _answer(row: dict[str, Any]) -> tuple[Any, ...]:
    """What a row says about its sample (its wording, tokens and timing may differ)."""
    return (row["correct"], row.get("score"), row["extracted"], row["error"] is None)


def _verdict(row: dict[str, Any]) -> str:
    if row["error"] is not None:
        return "a failed call"
    said = "right" if row["correct"] else "wrong"
    answer = row["extracted"]
    return said if answer is None else f"{quote(answer, 40)}, {said}"


def _shown(text: str) -> str:
    """A name from a results file, as a note shows it: as it is when plain, else quoted."""
    return text if text.isprintable() and len(text) <= 80 else quote(text, 80)


def _unmatched_notes(
    unmatched: dict[str, int],
    foreign: dict[tuple[str, str, str], list[dict[str, Any]]],
    levels: Sequence[Level],
) -> list[str]:
    notes = []
    if unmatched:
        shown = ", ".join(f"{k} ({n})" for k, n in sorted(unmatched.items())[:5])
        more = f" and {len(unmatched) - 5} more" if len(unmatched) > 5 else ""
        notes.append(
            f"{sum(unmatched.values())} row(s) belong to no level of the suites given, left "
            f"out: {shown}{more}"
        )
    for (suite, entry, level), found in sorted(foreign.items()):
        seeds = sorted({int(r["seed"]) for r in found if isinstance(r.get("seed"), int)})
        lv = next(x for x in levels if x.spec.where == (suite, entry, level))
        hint = ""
        if seeds and not set(seeds) & set(lv.level.seeds):
            hint = (
                f"; they have seed {', '.join(map(str, seeds))}, the suite "
                f"{', '.join(map(str, lv.level.seeds))}: pass the shards' --reasoning-seed"
            )
        notes.append(
            f"{suite} {entry} {level}: {len(found)} row(s) are not samples of the level as "
            f"loaded, left out (use the shards' --reasoning-samples / --reasoning-seed / "
            f"--reasoning-repeats){hint}"
        )
    return notes


def decide(
    levels: Sequence[Level],
    rows: list[dict[str, Any]],
    notes: list[str],
    *,
    baseline: str | None,
    baseline_results: str | None,
    baseline_model: str | None,
    max_errors: int,
    allow_partial: bool,
    files: int,
    total: int,
    stored: StoredBaseline | None = None,
    hint: str = MISSING_HINT,
    drift: str | None = None,
    drift_max_changed: float = DEFAULT_MAX_CHANGED,
) -> Merge:
    """Every verdict through the verdict ledger, as a pytest run decides them: the levels
    planned from the suites (every model of the files on every level; a level with
    ``sizes``, its models only), then the rows fed. ``stored``: a baseline read already
    (another harness's log), instead of ``baseline_results``."""
    models = sorted({str(r["model"]) for r in rows})
    if baseline is not None and baseline not in models:
        raise ReasoningError(
            f"--llm-baseline: {quote(baseline)} has no rows for these suites; the files hold "
            + (", ".join(models) or "no matching rows")
        )
    ledger = Ledger(hint=hint, baseline=baseline, max_errors=max_errors, merged=True)
    if baseline_results:
        try:
            ledger.use_stored(load_baseline(baseline_results, baseline_model))
        except ValueError as exc:
            raise ReasoningError(str(exc)) from None
    elif stored is not None:
        ledger.use_stored(stored)
    if drift:
        try:
            ledger.use_drift(load_drift(drift, models, drift_max_changed))
        except ValueError as exc:
            raise ReasoningError(str(exc)) from None
    named = drift_name if drift else comparison_name
    candidates = [m for m in models if m != baseline]
    multi = len(models) > 1
    several = ledger.comparing and len(candidates) > 1
    for lv in levels:
        for model in models:
            if lv.sizes and model not in lv.sizes:
                continue  # no sample of this model on this level
            candidate = model in candidates
            gate = comparison = None
            if candidate and lv.level.rule.min_accuracy is not None:
                gate = f"{lv.suite}::{gate_name(lv.entry.id, lv.level.level, model, multi)}"
            if candidate and ledger.comparing:
                name = named(lv.entry.id, lv.level.level, model, several)
                comparison = f"{lv.suite}::{name}"
            ledger.plan(
                model,
                lv.spec,
                lv.entry.task,
                lv.sizes.get(model, len(lv.expected)),
                gate_id=gate,
                comparison_id=comparison,
                repeats=lv.level.repeats,
                family=len(levels),  # every level of the suites is compared
            )
    verdicts: list[Verdict] = []
    for lv in levels:
        for model_rows in lv.rows.values():
            for row in model_rows.values():
                position = lv.expected[str(row["item_id"])]
                verdicts += ledger.add(Outcome.from_dict(row), lv.spec, position)[0]
    verdicts += ledger.finish(missing_fails=not allow_partial)
    last = len(ledger.order)  # collection order; the error budget's verdict last
    verdicts.sort(key=lambda v: ledger.order.get(v.nodeid, last))
    message = ledger.infrastructure(missing_fails=not allow_partial)
    failed = sum(v.outcome == "failed" and v.kind != "infrastructure" for v in verdicts)
    status = exit_status(failed, message is not None)
    if not rows:
        notes.append("no results row belongs to the suites given: nothing to decide")
        verdicts, status = [], EXIT_NOTHING
    summary = ledger_summary(ledger, rows=rows, answered=len(rows), merged=True)
    return Merge(verdicts, summary, status, notes, files, total)


def _classname(nodeid: str) -> tuple[str, str]:
    """pytest's JUnit ``classname`` and ``name`` for a node id (its ``mangle_test_address``)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".")
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def junit_xml(verdicts: Iterable[Verdict], seconds: float) -> str:
    """The verdicts as pytest's JUnit XML writes them for a run: one ``<testcase>`` each,
    the same class names, names, properties, ``<failure>`` and ``<skipped>``."""
    import datetime
    import platform

    verdicts = list(verdicts)
    suite = ET.Element(
        "testsuite",
        name="pytest",
        errors="0",
        failures=str(sum(v.outcome == "failed" for v in verdicts)),
        skipped=str(sum(v.outcome == "skipped" for v in verdicts)),
        tests=str(len(verdicts)),
        time=f"{seconds:.3f}",
        timestamp=datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(),
        hostname=platform.node(),
    )
    for v in verdicts:
        classname, name = _classname(printable(v.nodeid))  # model names from the rows
        case = ET.SubElement(suite, "testcase", classname=classname, name=name, time="0.000")
        if v.properties:
            props = ET.SubElement(case, "properties")
            for key, value in v.properties:
                ET.SubElement(props, "property", name=key, value=value)
        if v.outcome == "failed":
            ET.SubElement(case, "failure", message=v.message).text = v.message
        elif v.outcome == "skipped":
            path = v.nodeid.partition("::")[0]
            element = ET.SubElement(case, "skipped", type="pytest.skip", message=v.message)
            element.text = f"{path}:None: {v.message}"
    suites = ET.Element("testsuites", name="pytest tests")
    suites.append(suite)
    return '<?xml version="1.0" encoding="utf-8"?>' + ET.tostring(suites, encoding="unicode")
