"""Validating a suite's YAML into specs: every problem found at once, each one line (file,
key path, expectation)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core import Item
from ..datasets import Dataset, read_dataset
from ..errors import (
    InvalidArgument,
    InvalidDataset,
    InvalidSuite,
    UnknownLevel,
    UnknownTask,
    clip,
    quote,
)
from ..gates import GateRule
from ..registry import get_task
from ..tasks.base import Task, check_knob, check_level, check_style, resolve_params
from .schema import (
    _ID,
    _RULE,
    DATASET_FIXED,
    DEFAULTS,
    ENTRY_KEYS,
    LEVEL_KEYS,
    SUITE_KEYS,
    EntrySpec,
    LevelSpec,
    SuiteSpec,
)
from .values import (
    Problems,
    as_mapping,
    check_credit,
    check_keys,
    check_repeats,
    common_settings,
    type_name,
)
from .yamlfile import MAX_MESSAGE, _load_yaml


def load_suite(
    path: str | Path,
    *,
    samples: int | None = None,
    seed: int | None = None,
    display: str | None = None,
    repeats: int | None = None,
    sequential: bool = False,
) -> SuiteSpec:
    """Read and validate a suite file; raise InvalidSuite with one line on any problem.

    ``display`` is how the file is named in messages (default: ``path`` as given);
    ``sequential`` makes every level sequential (``--reasoning-sequential``).
    """
    shown = display or str(path)
    data = _load_yaml(Path(path), shown)
    try:
        spec = parse_suite(
            data, shown, samples=samples, seed=seed, repeats=repeats, base_dir=Path(path).parent
        )
        if not sequential:
            return spec
        return replace(
            spec,
            entries=tuple(
                replace(
                    e,
                    levels=tuple(
                        replace(lv, rule=replace(lv.rule, sequential=True)) for lv in e.levels
                    ),
                )
                for e in spec.entries
            ),
        )
    except InvalidSuite as exc:  # every quoted value (a knob's, a key's) stays short
        if all(len(p.line) <= MAX_MESSAGE for p in exc.problems):
            raise
        raise InvalidSuite.several(
            [
                InvalidSuite(p.path, clip(p.key, 100), clip(p.message, MAX_MESSAGE))
                for p in exc.problems
            ]
        ) from None


def parse_suite(
    data: Any,
    path: str,
    *,
    samples: int | None = None,
    seed: int | None = None,
    repeats: int | None = None,
    base_dir: Path | None = None,
) -> SuiteSpec:
    """Validate parsed YAML. ``samples``/``seed``/``repeats`` override every count, seed and
    repeat count (CLI options). ``base_dir``: where a ``dataset:`` path is relative to (the
    suite file's folder; default the working directory).

    Every problem is reported at once (one line each): a check that fails records its line
    and the others go on; only a shape that leaves nothing to check stops early."""
    if data is None:
        raise InvalidSuite(path, "", "empty file; expected a mapping with a 'tasks' list")
    if not isinstance(data, dict):
        raise InvalidSuite(path, "", f"expected a mapping at the top level, got {type_name(data)}")
    problems = Problems()
    with problems.guard():
        check_keys(data, SUITE_KEYS, "", path)
    base = common_settings(data, "", path, {**DEFAULTS, **_RULE.to_dict()}, problems)
    name = data.get("name", Path(path).stem)
    if not isinstance(name, str):
        problems.add(path, "name", f"expected a string, got {type_name(name)}")
    tasks = data.get("tasks")
    if "tasks" not in data:
        problems.add(path, "tasks", "missing; expected a list of task entries")
    elif not isinstance(tasks, list) or not tasks:
        problems.add(path, "tasks", "expected a non-empty list of task entries")
    if not isinstance(tasks, list):
        problems.raise_any()
        tasks = []
    entries: list[EntrySpec] = []
    seen: set[str] = set()
    for i, raw in enumerate(tasks):
        where = f"tasks[{i}]"
        if isinstance(raw, dict) and "dataset" in raw:
            with problems.guard():
                check_keys(raw, ENTRY_KEYS, where, path)
                spec = _dataset_entry(
                    raw, where, path, base, base_dir=base_dir, samples=samples, repeats=repeats,
                    suite_samples=data.get("samples"),
                )  # fmt: skip
                if spec.id in seen:
                    raise InvalidSuite(
                        path, f"{where}.id",
                        f"duplicate id {quote(spec.id)}; give repeated tasks distinct 'id's",
                    )  # fmt: skip
                seen.add(spec.id)
                entries.append(spec)
            continue
        entry = _entry(
            raw, where, path, base, seen, problems, samples=samples, seed=seed, repeats=repeats
        )
        if entry is not None:
            entries.append(entry)
    problems.raise_any()
    return SuiteSpec(path=path, name=name, entries=tuple(entries))


def _entry(
    raw: Any,
    where: str,
    path: str,
    base: dict[str, Any],
    seen: set[str],
    problems: Problems,
    *,
    samples: int | None,
    seed: int | None,
    repeats: int | None = None,
) -> EntrySpec | None:
    """One task entry; its problems go to ``problems`` (None when it cannot be built)."""
    if not isinstance(raw, dict):
        problems.add(path, where, f"expected a mapping, got {type_name(raw)}")
        return None
    entry: dict[str, Any] = raw
    with problems.guard():
        check_keys(entry, ENTRY_KEYS, where, path)
    task: Task | None = None
    task_id = entry.get("task")
    if "task" not in entry:
        problems.add(path, f"{where}.task", "missing; expected a task id")
    elif not isinstance(task_id, str):
        problems.add(path, f"{where}.task", f"expected a task id, got {type_name(task_id)}")
    else:
        try:
            task = get_task(task_id)
        except UnknownTask as exc:
            problems.add(path, f"{where}.task", str(exc))
    eid = entry.get("id", task_id)
    if "id" not in entry and not isinstance(task_id, str):
        pass  # no id to check: the task's own problem is reported above
    elif not isinstance(eid, str) or not _ID.match(eid):
        problems.add(path, f"{where}.id", "expected letters, digits, '.', '_' or '-'")
    elif eid in seen:
        problems.add(
            path, f"{where}.id", f"duplicate id {quote(eid)}; give repeated tasks distinct 'id's"
        )
    else:
        seen.add(eid)
    settings = common_settings(entry, f"{where}.", path, base, problems)
    levels_raw = entry.get("levels")
    if levels_raw is None:
        expected = f"a list or mapping of {', '.join(task.levels)}" if task else "levels"
        problems.add(path, f"{where}.levels", f"missing; expected {expected}")
        return None
    if isinstance(levels_raw, list):
        level_items: list[tuple[Any, Any]] = [(lv, None) for lv in levels_raw]
    elif isinstance(levels_raw, dict):
        level_items = list(levels_raw.items())
    else:
        problems.add(
            path,
            f"{where}.levels",
            f"expected a list or mapping of levels, got {type_name(levels_raw)}",
        )
        return None
    if not level_items:
        problems.add(path, f"{where}.levels", "expected at least one level")
        return None
    levels: list[LevelSpec] = []
    for lv, body in level_items:
        level = _level(str(lv), body, where, path, task, settings, problems)
        if level is not None:
            with problems.guard():
                owner = f"{where}.levels.{lv}." if body is not None else f"{where}."
                times = repeats if repeats is not None else level.repeats
                check_repeats(level.rule.metric, times, f"{owner}metric", path)
            levels.append(
                LevelSpec(
                    level=level.level,
                    samples=samples if samples is not None else level.samples,
                    seeds=(seed,) if seed is not None else level.seeds,
                    style=level.style,
                    params=level.params,
                    rule=level.rule,
                    repeats=repeats if repeats is not None else level.repeats,
                )
            )
    if task is None or not isinstance(eid, str) or len(levels) != len(level_items):
        return None
    return EntrySpec(id=eid, task=task.id, levels=tuple(levels))


def _level(
    lv: str,
    body: Any,
    where: str,
    path: str,
    task: Task | None,
    settings: dict[str, Any],
    problems: Problems,
) -> LevelSpec | None:
    """One level of an entry, every knob checked on its own (all bad knobs at once)."""
    lwhere = f"{where}.levels.{lv}"
    lset = settings
    if body is not None:
        if not isinstance(body, dict):
            problems.add(path, lwhere, f"expected a mapping, got {type_name(body)}")
            return None
        with problems.guard():
            check_keys(body, LEVEL_KEYS, lwhere, path)
        lset = common_settings(body, f"{lwhere}.", path, settings, problems)
    if task is None:
        return None
    try:
        check_level(task, lv)
    except UnknownLevel as exc:
        problems.add(path, lwhere, str(exc))
        return None
    owner = f"{lwhere}." if body else f"{where}."
    before = len(problems.found)
    for knob, value in lset["params"].items():
        try:
            check_knob(task, str(knob), value)
        except InvalidArgument as exc:
            problems.add(path, f"{owner}params", str(exc))
    if len(problems.found) == before:
        # Validated here so a bad combination fails collection; items resolve again from
        # the user's overrides (the preset stays out of the suite spec).
        try:
            resolve_params(task, lv, lset["params"])
        except InvalidArgument as exc:
            problems.add(path, f"{owner}params", str(exc))
    try:
        check_style(task, lset["style"])
    except InvalidArgument as exc:
        problems.add(path, f"{owner}style", str(exc))
    with problems.guard():
        check_credit(lset["metric"], task, f"{owner}metric", path)
    return LevelSpec(
        level=lv,
        samples=lset["samples"],
        seeds=tuple(lset["seeds"]),
        style=lset["style"],
        params=dict(lset["params"]),
        rule=GateRule.from_dict(lset),
        repeats=lset["repeats"],
    )


# -- frozen datasets (``dataset:``) ------------------------------------------------------------
def _dataset_entry(
    entry: Mapping[str, Any],
    where: str,
    path: str,
    base: dict[str, Any],
    *,
    base_dir: Path | None = None,
    samples: int | None = None,
    repeats: int | None = None,
    suite_samples: Any = None,
) -> EntrySpec:
    """A suite entry that names ``dataset: FILE.jsonl``: its items, checked (``datasets``),
    grouped by the levels they carry and gated per level like generated ones.

    ``samples`` caps the items per level (the first in file order) when the entry, its level,
    the suite or ``--reasoning-samples`` sets it; by default every item runs. An entry ``id``
    renames the items' id prefix (``narrated[L1-s1-000]``); without one, ids are kept (a bare
    ``q17`` runs as ``TASK[q17]``, so repeats and clusters keep working)."""
    raw = entry["dataset"]
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidSuite(path, f"{where}.dataset", "expected the path of a JSONL file of items")
    fixed = [k for k in DATASET_FIXED if k in entry]
    if fixed:
        raise InvalidSuite(
            path, f"{where}.{fixed[0]}", "not with 'dataset': its items carry their own seeds, "
            "knobs and prompts",
        )  # fmt: skip
    file = Path(raw)
    if not file.is_absolute() and base_dir is not None:
        file = base_dir / file
    try:
        dataset = read_dataset(file, display=raw)
    except InvalidDataset as exc:
        raise InvalidSuite(path, f"{where}.dataset", str(exc)) from None
    if "task" in entry:
        task_id = entry["task"]
        if not isinstance(task_id, str):
            raise InvalidSuite(
                path, f"{where}.task", f"expected a task id, got {type_name(task_id)}"
            )
        if task_id not in dataset.tasks:
            raise InvalidSuite(
                path, f"{where}.task", f"{raw} has no items of {task_id}; it holds "
                + ", ".join(dataset.tasks),
            )  # fmt: skip
    elif len(dataset.tasks) > 1:
        raise InvalidSuite(
            path, f"{where}.task", f"missing: {raw} holds items of several tasks ("
            + ", ".join(dataset.tasks) + "); name one",
        )  # fmt: skip
    else:
        task_id = dataset.tasks[0]
    task = get_task(task_id)
    items = [i for i in dataset.items if i.task == task_id]
    prefix = items[0].id.split("[", 1)[0]
    eid = entry.get("id", prefix if _ID.match(prefix) and items[0].id.endswith("]") else task_id)
    if not isinstance(eid, str) or not _ID.match(eid):
        raise InvalidSuite(path, f"{where}.id", "expected letters, digits, '.', '_' or '-'")
    items = _entry_ids(items, eid, renamed="id" in entry, where=where, path=path, raw=raw)
    stored = Dataset(raw, tuple(items))
    available = stored.levels()
    levels_raw = entry.get("levels")
    if levels_raw is None:
        level_items: list[tuple[Any, Any]] = [(lv, None) for lv in available]
    elif isinstance(levels_raw, list) and levels_raw:
        level_items = [(lv, None) for lv in levels_raw]
    elif isinstance(levels_raw, dict) and levels_raw:
        level_items = list(levels_raw.items())
    else:
        raise InvalidSuite(
            path, f"{where}.levels", "expected a non-empty list or mapping of the file's "
            "levels (or no 'levels': all of them)",
        )  # fmt: skip
    settings = common_settings(entry, f"{where}.", path, base)
    cap = samples
    if cap is None and "samples" in entry:
        cap = settings["samples"]
    elif cap is None and suite_samples is not None:
        cap = base["samples"]
    levels: list[LevelSpec] = []
    for lv, body in level_items:
        lwhere = f"{where}.levels.{lv}"
        lv = str(lv)
        if lv not in available:
            raise InvalidSuite(
                path, lwhere, f"{raw} has no {task_id} items at level {quote(lv)}; it has "
                + ", ".join(available),
            )  # fmt: skip
        lset, lcap = settings, cap
        if body is not None:
            body = as_mapping(body, lwhere, path)
            check_keys(body, LEVEL_KEYS, lwhere, path)
            fixed = [k for k in DATASET_FIXED if k in body]
            if fixed:
                raise InvalidSuite(
                    path, f"{lwhere}.{fixed[0]}", "not with 'dataset': its items carry their "
                    "own seeds, knobs and prompts",
                )  # fmt: skip
            lset = common_settings(body, f"{lwhere}.", path, settings)
            if samples is None and "samples" in body:
                lcap = lset["samples"]
        owner = f"{lwhere}." if body else f"{where}."
        check_credit(lset["metric"], task, f"{owner}metric", path)
        times = repeats if repeats is not None else lset["repeats"]
        check_repeats(lset["metric"], times, f"{owner}metric", path)
        count = len(stored.by_level[lv])
        levels.append(
            LevelSpec(
                level=lv,
                samples=count if lcap is None else min(count, lcap),
                seeds=(),
                style="",
                params={},
                rule=GateRule.from_dict(lset),
                repeats=repeats if repeats is not None else lset["repeats"],
            )
        )
    return EntrySpec(id=eid, task=task_id, levels=tuple(levels), dataset=stored)


def _entry_ids(
    items: list[Item], eid: str, *, renamed: bool, where: str, path: str, raw: str
) -> list[Item]:
    """Items with ids of the form ``PREFIX[inner]``: kept as they are unless the entry gives
    its own ``id`` (which becomes the prefix); a bare id becomes ``ENTRY[id]``."""
    out: list[Item] = []
    seen: set[str] = set()
    for item in items:
        own = item.id
        bracketed = "[" in own and own.endswith("]") and own.index("[") > 0
        if renamed or not bracketed:
            inner = own[own.index("[") + 1 : -1] if bracketed else own
            item = replace(item, id=f"{eid}[{inner}]")
        if item.id in seen:
            raise InvalidSuite(
                path, f"{where}.id", f"two items of {raw} run as {quote(item.id)}; keep the file's "
                "ids (no 'id') or make them distinct",
            )  # fmt: skip
        seen.add(item.id)
        out.append(item)
    return out
