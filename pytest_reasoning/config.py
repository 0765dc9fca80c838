"""Suite files: schema, loading and precise one-line errors (file, key path, expectation).

A suite is a YAML mapping with a top-level ``tasks:`` list; see ``docs/suites.md``. Any other
YAML file is not a suite and is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .core import Item, repeat_id
from .datasets import Dataset, read_dataset
from .errors import InvalidArgument, InvalidDataset, InvalidSuite, UnknownLevel, UnknownTask
from .gates import METRICS, GateRule, GateSpec
from .registry import get_task
from .tasks.base import item_id

__all__ = [
    "MAX_SAMPLES",
    "Address",
    "EntrySpec",
    "LevelSpec",
    "SuiteSpec",
    "addresses",
    "is_suite_file",
    "load_suite",
    "parse_param",
    "parse_suite",
]

MAX_SAMPLES = 100_000
MAX_REPEATS = 1_000
# What a suite that says nothing gets (the gate keys' defaults are GateRule's own).
DEFAULTS: dict[str, Any] = {
    "samples": 10,
    "seeds": (1,),
    "style": "direct",
    "params": {},
    "repeats": 1,
}
_RULE = GateRule()
# Settings that cascade suite → entry → level; each layer adds its own structural keys.
LEVEL_KEYS = {
    "samples",
    "repeats",
    "seed",
    "seeds",
    "style",
    "params",
    "min_accuracy",
    "confidence",
    "max_drop",
    "alpha",
    "metric",
}

# Every key a suite may use: (where, type, meaning). docs/suites.md's table is generated from
# this (docs/gen_examples.py), and a test checks it covers exactly the keys the parser accepts.
KEY_DOCS: dict[str, tuple[str, str, str]] = {
    "name": ("suite", "string", "a label (default: the file name)"),
    "description": ("suite", "string", "a label"),
    "tasks": ("suite", "non-empty list", "task entries"),
    "task": ("entry", "task id", "see `pytest-reasoning tasks`"),
    "id": (
        "entry",
        "`[A-Za-z0-9_.-]+`",
        "item-id prefix, unique in the file (default: the task id)",
    ),
    "levels": ("entry", "list, or mapping level → overrides", "the task's levels"),
    "dataset": (
        "entry",
        "path of a JSONL file (relative to the suite)",
        "run these items instead of generating (narrated, exported or your own; see "
        "[Frozen datasets](#frozen-datasets)); not with `seed`, `seeds`, `style`, `params`",
    ),
    "samples": (
        "any",
        f"integer 0..{MAX_SAMPLES}",
        f"samples per level and seed (default {DEFAULTS['samples']})",
    ),
    "repeats": (
        "any",
        f"integer 1..{MAX_REPEATS}",
        "samples of each item (default 1): the model answers every item this many times "
        "(for models that run only at temperature 1); accuracy gets an interval clustered "
        "by item, and pass@k and majority vote are reported",
    ),
    "seed": (
        "any",
        "integer",
        f"the generation seed (default {DEFAULTS['seeds'][0]}; not with `seeds`)",
    ),
    "seeds": ("any", "non-empty list of integers", "several generation seeds"),
    "style": ("any", "string", f"prompt style offered by the task (default `{DEFAULTS['style']}`)"),
    "params": ("any", "mapping", "task knobs, merged down the layers (see the task's page)"),
    "min_accuracy": ("any", "number in [0, 1] or null", "gate threshold"),
    "confidence": (
        "any",
        "number in (0, 1) or null",
        "gate on the Wilson lower bound at this confidence",
    ),
    "max_drop": (
        "any",
        f"number in [0, 1], default {_RULE.max_drop:g}",
        "regression gate against a baseline: the accuracy drop tolerated",
    ),
    "alpha": (
        "any",
        f"number in (0, 1), default {_RULE.alpha:g}",
        "that gate's significance (Holm-corrected across levels)",
    ),
    "metric": (
        "any",
        "`accuracy` (default), `puzzle` (the same), `cell`",
        "what `min_accuracy` thresholds: the share of correct samples, or the mean partial "
        "credit (`cell`: zebra's cell accuracy; tasks with partial credit only)",
    ),
}
ENTRY_KEYS = LEVEL_KEYS | {"task", "id", "levels", "dataset"}
# What a dataset's items fix for themselves (a suite-wide default of these is for generated
# entries; on a dataset entry or its levels it is an error).
DATASET_FIXED = ("seed", "seeds", "style", "params")
SUITE_KEYS = LEVEL_KEYS | {"name", "description", "tasks"}
_SUITE_MARK = re.compile(r"^tasks\s*:", re.M)
_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")


@dataclass(frozen=True)
class LevelSpec:
    level: str
    samples: int
    seeds: tuple[int, ...]
    style: str
    params: dict[str, Any]
    rule: GateRule = field(default_factory=GateRule)
    repeats: int = 1


@dataclass(frozen=True)
class EntrySpec:
    id: str
    task: str
    levels: tuple[LevelSpec, ...]
    # A frozen dataset's items (``dataset:``), ids already in the entry's form; None: generate.
    dataset: Dataset | None = None


@dataclass(frozen=True)
class SuiteSpec:
    path: str
    name: str
    entries: tuple[EntrySpec, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Address:
    """One sample of a suite: (entry, level, seed, index). Collection and the
    ``reasoning_results`` fixture both walk a suite through :func:`addresses`."""

    suite: str  # the suite file as named in messages and gate ids
    entry: EntrySpec
    level: LevelSpec
    seed: int
    index: int
    repeat: int = 0  # which sample of the item, with ``repeats`` > 1

    @property
    def sample(self) -> str:
        """``D2-s1-007`` (``D2-s1-007-r3`` with repeats): the level, seed, index (and repeat)
        part of every id (a dataset item's: what its id holds in brackets)."""
        if self.entry.dataset is not None:
            own = self._stored.id
            base = own[own.index("[") + 1 : -1]
        else:
            base = f"{self.level.level}-s{self.seed}-{self.index:03d}"
        return base + (f"-r{self.repeat}" if self.level.repeats > 1 else "")

    @property
    def sample_id(self) -> str:
        """The item id results rows carry: ``dyval.arithmetic[D2-s1-007]``, with the repeat
        index when the level asks each item more than once: ``dyval.arithmetic[D2-s1-007-r3]``.
        A dataset item keeps its own id."""
        if self.entry.dataset is not None:
            base = self._stored.id
        else:
            base = item_id(self.entry.id, self.level.level, self.seed, self.index)
        return repeat_id(base, self.repeat, self.level.repeats)

    @property
    def gate(self) -> GateSpec:
        return GateSpec(self.suite, self.entry.id, self.level.level, self.level.rule)

    @property
    def _stored(self) -> Item:
        assert self.entry.dataset is not None
        return self.entry.dataset.by_level[self.level.level][self.index]

    def make_item(self) -> Item:
        lv = self.level
        if self.entry.dataset is not None:
            item = self._stored
            return item if lv.repeats <= 1 else replace(item, id=self.sample_id)
        return get_task(self.entry.task).make_item(
            lv.level, self.seed, self.index, lv.params, lv.style, id=self.sample_id
        )

    @property
    def repeated_problem(self) -> bool:
        """Whether this generated item repeats an earlier one's problem (an exhausted level);
        a dataset's items are what they are."""
        if self.entry.dataset is not None:
            return False
        lv = self.level
        return get_task(self.entry.task).is_repeat(lv.level, self.seed, self.index, lv.params)


def addresses(suite: SuiteSpec) -> Iterator[Address]:
    """Every sample of a suite, in file order: entry, level, seed, index, repeat."""
    for entry in suite.entries:
        for lv in entry.levels:
            if entry.dataset is not None:  # the file's items, in file order, up to ``samples``
                stored = entry.dataset.by_level[lv.level][: lv.samples]
                for index, item in enumerate(stored):
                    for repeat in range(lv.repeats):
                        yield Address(suite.path, entry, lv, item.seed, index, repeat)
                continue
            for seed in lv.seeds:
                for index in range(lv.samples):
                    for repeat in range(lv.repeats):
                        yield Address(suite.path, entry, lv, seed, index, repeat)


def parse_param(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with a YAML value (``depth=4``, ``ops=[and, or]``); a value YAML cannot
    read stays a string. The one parser of the CLI's ``--param`` and the plugin's
    ``--llm-param``; raises InvalidArgument with one line."""
    import yaml

    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise InvalidArgument(f"expected key=value, got {text!r}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key.strip(), value


def is_suite_file(path: Path) -> bool:
    """Cheap sniff: a ``.yaml``/``.yml`` file with a top-level ``tasks:`` key."""
    if path.suffix not in (".yaml", ".yml"):
        return False
    try:
        return bool(_SUITE_MARK.search(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


def _loader() -> type:
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc,valid-type]
        """Safe loader that refuses duplicate keys (PyYAML would keep the last silently)."""

    def construct_mapping(loader: Any, node: Any, deep: bool = False) -> dict[Any, Any]:
        loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in out:
                line = key_node.start_mark.line + 1
                raise _DuplicateKey(f"duplicate key {key!r} at line {line}")
            out[key] = loader.construct_object(value_node, deep=deep)
        return out

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return StrictLoader


class _DuplicateKey(Exception):
    pass


def load_suite(
    path: str | Path,
    *,
    samples: int | None = None,
    seed: int | None = None,
    display: str | None = None,
    repeats: int | None = None,
) -> SuiteSpec:
    """Read and validate a suite file; raise InvalidSuite with one line on any problem.

    ``display`` is how the file is named in messages (default: ``path`` as given).
    """
    import yaml

    p = Path(path)
    shown = display or str(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidSuite(shown, "", f"cannot read file ({exc.__class__.__name__})") from None
    try:
        data = yaml.load(text, Loader=_loader())
    except _DuplicateKey as exc:
        raise InvalidSuite(shown, "", str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InvalidSuite(shown, "", f"YAML syntax error{where}: {problem}") from None
    return parse_suite(data, shown, samples=samples, seed=seed, repeats=repeats, base_dir=p.parent)


def _type_name(v: Any) -> str:
    return "null" if v is None else type(v).__name__


def _int(v: Any, where: str, path: str, *, minimum: int = 0) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise InvalidSuite(path, where, f"expected an integer, got {_type_name(v)} {v!r}")
    if v < minimum:
        raise InvalidSuite(path, where, f"expected an integer >= {minimum}, got {v}")
    return v


def _unit(v: Any, where: str, path: str, *, open_interval: bool = False) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise InvalidSuite(path, where, f"expected a number in [0, 1], got {_type_name(v)} {v!r}")
    ok = 0 < v < 1 if open_interval else 0 <= v <= 1
    if not ok:
        rng = "(0, 1)" if open_interval else "[0, 1]"
        raise InvalidSuite(path, where, f"expected a number in {rng}, got {v}")
    return float(v)


def _keys(d: Mapping[Any, Any], allowed: set[str], where: str, path: str) -> None:
    for k in d:
        if k not in allowed:
            key = f"{where}.{k}" if where else str(k)
            raise InvalidSuite(
                path, key, "unknown key; expected one of " + ", ".join(sorted(allowed))
            )


def _seeds(d: Mapping[str, Any], where: str, path: str) -> tuple[int, ...] | None:
    if "seed" in d and "seeds" in d:
        raise InvalidSuite(path, f"{where}seeds", "give either 'seed' or 'seeds', not both")
    if "seed" in d:
        return (_int(d["seed"], f"{where}seed", path),)
    if "seeds" in d:
        v = d["seeds"]
        if not isinstance(v, list) or not v:
            raise InvalidSuite(path, f"{where}seeds", "expected a non-empty list of integers")
        return tuple(_int(s, f"{where}seeds[{i}]", path) for i, s in enumerate(v))
    return None


def _mapping(v: Any, where: str, path: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise InvalidSuite(path, where, f"expected a mapping, got {_type_name(v)}")
    return v


def _common(
    d: Mapping[str, Any], where: str, path: str, inherited: dict[str, Any]
) -> dict[str, Any]:
    """Settings that cascade suite → entry → level."""
    out = dict(inherited)
    if "samples" in d:
        out["samples"] = _int(d["samples"], f"{where}samples", path)
        if out["samples"] > MAX_SAMPLES:
            raise InvalidSuite(
                path,
                f"{where}samples",
                f"expected at most {MAX_SAMPLES} samples, got {out['samples']}",
            )
    if "repeats" in d:
        out["repeats"] = _int(d["repeats"], f"{where}repeats", path, minimum=1)
        if out["repeats"] > MAX_REPEATS:
            raise InvalidSuite(
                path,
                f"{where}repeats",
                f"expected at most {MAX_REPEATS} repeats, got {out['repeats']}",
            )
    seeds = _seeds(d, where, path)
    if seeds is not None:
        out["seeds"] = seeds
    if "style" in d:
        if not isinstance(d["style"], str):
            raise InvalidSuite(
                path, f"{where}style", f"expected a string, got {_type_name(d['style'])}"
            )
        out["style"] = d["style"]
    if "min_accuracy" in d:
        out["min_accuracy"] = (
            None
            if d["min_accuracy"] is None
            else _unit(d["min_accuracy"], f"{where}min_accuracy", path)
        )
    if "confidence" in d:
        out["confidence"] = (
            None
            if d["confidence"] is None
            else _unit(d["confidence"], f"{where}confidence", path, open_interval=True)
        )
    if "max_drop" in d:
        out["max_drop"] = _unit(d["max_drop"], f"{where}max_drop", path)
    if "alpha" in d:
        out["alpha"] = _unit(d["alpha"], f"{where}alpha", path, open_interval=True)
    if "metric" in d:
        if d["metric"] not in METRICS:
            raise InvalidSuite(
                path, f"{where}metric", f"expected one of {', '.join(METRICS)}, got {d['metric']!r}"
            )
        out["metric"] = "accuracy" if d["metric"] == "puzzle" else d["metric"]
    if "params" in d:
        out["params"] = {**out.get("params", {}), **_mapping(d["params"], f"{where}params", path)}
    return out


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
    suite file's folder; default the working directory)."""
    if data is None:
        raise InvalidSuite(path, "", "empty file; expected a mapping with a 'tasks' list")
    if not isinstance(data, dict):
        raise InvalidSuite(path, "", f"expected a mapping at the top level, got {_type_name(data)}")
    _keys(data, SUITE_KEYS, "", path)
    if "tasks" not in data:
        raise InvalidSuite(path, "tasks", "missing; expected a list of task entries")
    base = _common(data, "", path, {**DEFAULTS, **_RULE.to_dict()})
    name = data.get("name", Path(path).stem)
    if not isinstance(name, str):
        raise InvalidSuite(path, "name", f"expected a string, got {_type_name(name)}")
    tasks = data["tasks"]
    if not isinstance(tasks, list) or not tasks:
        raise InvalidSuite(path, "tasks", "expected a non-empty list of task entries")
    entries: list[EntrySpec] = []
    seen: set[str] = set()
    for i, raw in enumerate(tasks):
        where = f"tasks[{i}]"
        entry = _mapping(raw, where, path)
        _keys(entry, ENTRY_KEYS, where, path)
        if "dataset" in entry:
            spec = _dataset_entry(
                entry, where, path, base, base_dir=base_dir, samples=samples, repeats=repeats,
                suite_samples=data.get("samples"),
            )  # fmt: skip
            if spec.id in seen:
                raise InvalidSuite(
                    path, f"{where}.id", f"duplicate id {spec.id!r}; give repeated tasks distinct "
                    "'id's",
                )  # fmt: skip
            seen.add(spec.id)
            entries.append(spec)
            continue
        if "task" not in entry:
            raise InvalidSuite(path, f"{where}.task", "missing; expected a task id")
        task_id = entry["task"]
        if not isinstance(task_id, str):
            raise InvalidSuite(
                path, f"{where}.task", f"expected a task id, got {_type_name(task_id)}"
            )
        try:
            task = get_task(task_id)
        except UnknownTask as exc:
            raise InvalidSuite(path, f"{where}.task", str(exc)) from None
        eid = entry.get("id", task_id)
        if not isinstance(eid, str) or not _ID.match(eid):
            raise InvalidSuite(path, f"{where}.id", "expected letters, digits, '.', '_' or '-'")
        if eid in seen:
            raise InvalidSuite(
                path, f"{where}.id", f"duplicate id {eid!r}; give repeated tasks distinct 'id's"
            )
        seen.add(eid)
        settings = _common(entry, f"{where}.", path, base)
        levels_raw = entry.get("levels")
        if levels_raw is None:
            raise InvalidSuite(
                path,
                f"{where}.levels",
                f"missing; expected a list or mapping of {', '.join(task.levels)}",
            )
        if isinstance(levels_raw, list):
            level_items: list[tuple[Any, Any]] = [(lv, None) for lv in levels_raw]
        elif isinstance(levels_raw, dict):
            level_items = list(levels_raw.items())
        else:
            raise InvalidSuite(
                path,
                f"{where}.levels",
                f"expected a list or mapping of levels, got {_type_name(levels_raw)}",
            )
        if not level_items:
            raise InvalidSuite(path, f"{where}.levels", "expected at least one level")
        levels: list[LevelSpec] = []
        for lv, body in level_items:
            lwhere = f"{where}.levels.{lv}"
            lv = str(lv)
            try:
                task.check_level(lv)
            except UnknownLevel as exc:
                raise InvalidSuite(path, lwhere, str(exc)) from None
            lset = settings
            if body is not None:
                body = _mapping(body, lwhere, path)
                _keys(body, LEVEL_KEYS, lwhere, path)
                lset = _common(body, f"{lwhere}.", path, settings)
            owner = f"{lwhere}." if body else f"{where}."
            # Validated here so a bad knob fails collection; items resolve again from the
            # user's overrides (the preset stays out of the suite spec).
            try:
                task.resolve_params(lv, lset["params"])
            except InvalidArgument as exc:
                raise InvalidSuite(path, f"{owner}params", str(exc)) from None
            try:
                task.check_style(lset["style"])
            except InvalidArgument as exc:
                raise InvalidSuite(path, f"{owner}style", str(exc)) from None
            if lset["metric"] == "cell" and not task.partial_credit:
                raise InvalidSuite(
                    path,
                    f"{owner}metric",
                    f"'cell' needs a task with partial credit; {task_id} scores 0 or 1",
                )
            levels.append(
                LevelSpec(
                    level=lv,
                    samples=samples if samples is not None else lset["samples"],
                    seeds=(seed,) if seed is not None else tuple(lset["seeds"]),
                    style=lset["style"],
                    params=dict(lset["params"]),
                    rule=GateRule.from_dict(lset),
                    repeats=repeats if repeats is not None else lset["repeats"],
                )
            )
        entries.append(EntrySpec(id=eid, task=task_id, levels=tuple(levels)))
    return SuiteSpec(path=path, name=name, entries=tuple(entries))


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
                path, f"{where}.task", f"expected a task id, got {_type_name(task_id)}"
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
    settings = _common(entry, f"{where}.", path, base)
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
                path, lwhere, f"{raw} has no {task_id} items at level {lv!r}; it has "
                + ", ".join(available),
            )  # fmt: skip
        lset, lcap = settings, cap
        if body is not None:
            body = _mapping(body, lwhere, path)
            _keys(body, LEVEL_KEYS, lwhere, path)
            fixed = [k for k in DATASET_FIXED if k in body]
            if fixed:
                raise InvalidSuite(
                    path, f"{lwhere}.{fixed[0]}", "not with 'dataset': its items carry their "
                    "own seeds, knobs and prompts",
                )  # fmt: skip
            lset = _common(body, f"{lwhere}.", path, settings)
            if samples is None and "samples" in body:
                lcap = lset["samples"]
        owner = f"{lwhere}." if body else f"{where}."
        if lset["metric"] == "cell" and not task.partial_credit:
            raise InvalidSuite(
                path,
                f"{owner}metric",
                f"'cell' needs a task with partial credit; {task_id} scores 0 or 1",
            )
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
                path, f"{where}.id", f"two items of {raw} run as {item.id!r}; keep the file's "
                "ids (no 'id') or make them distinct",
            )  # fmt: skip
        seen.add(item.id)
        out.append(item)
    return out
