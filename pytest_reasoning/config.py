"""Suite files: schema, loading and precise one-line errors (file, key path, expectation).

A suite is a YAML mapping with a top-level ``tasks:`` list; see ``docs/suites.md``. Any other
YAML file is not a suite and is left alone.
"""

from __future__ import annotations

import contextlib
import functools
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .core import Item, repeat_id
from .datasets import Dataset, read_dataset
from .errors import (
    InvalidArgument,
    InvalidDataset,
    InvalidSuite,
    UnknownLevel,
    UnknownTask,
    clip,
    did_you_mean,
)
from .gates import METRICS, GateRule, GateSpec
from .registry import get_task
from .tasks.base import Task, item_id

__all__ = [
    "MAX_SAMPLES",
    "MAX_SUITE_BYTES",
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
# What a suite file may be and expand to, checked on the YAML events before anything is built
# (real suites are a few KB, nested six deep): an alias bomb, a 100,000-deep nesting (which
# crashes PyYAML's C composer) or a 5,000-digit integer is one line, not a hang or a crash.
MAX_SUITE_BYTES = 1_000_000
MAX_DEPTH = 32  # nested collections
MAX_VALUES = 100_000  # values, every alias counted as the values it repeats
MAX_CHARS = 10_000_000  # characters of text values, aliases counted the same way
MAX_INT_DIGITS = 100
MAX_MESSAGE = 500  # an error line; the values it quotes are clipped to fit
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
        raise InvalidArgument(f"expected key=value, got {clip(repr(text))}")
    if not raw.strip():
        return key.strip(), ""
    try:
        problem = _check_shape(raw)
        if problem is not None:
            raise InvalidArgument(f"{key.strip()}: {problem[1]}")
        value = yaml.load(raw, Loader=_loader())
    except yaml.YAMLError:
        value = raw
    except _DuplicateKey as exc:
        raise InvalidArgument(f"{key.strip()}: {exc}") from None
    return key.strip(), value


def is_suite_file(path: Path) -> bool:
    """Cheap sniff: a ``.yaml``/``.yml`` file with a top-level ``tasks:`` key (a UTF-8 byte
    order mark before it allowed; only the first MAX_SUITE_BYTES are read)."""
    if path.suffix not in (".yaml", ".yml"):
        return False
    try:
        with path.open("rb") as fh:
            head = fh.read(MAX_SUITE_BYTES + 1)
    except OSError:
        return False
    return bool(_SUITE_MARK.search(head.decode("utf-8-sig", errors="replace")))


@functools.cache
def _loader() -> type:
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc,valid-type]
        """Safe loader that refuses duplicate keys (PyYAML would keep the last silently) and
        turns a value no constructor can build (``2024-13-45``) into a marked YAML error."""

        def construct_object(self, node: Any, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep=deep)
            except (ValueError, ArithmeticError, TypeError, LookupError, AttributeError) as exc:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"cannot read {clip(repr(node.value), 60) if node.id == 'scalar' else 'it'}"
                    f" as {node.tag.rsplit(':', 1)[-1]} ({clip(str(exc), 100)})",
                    node.start_mark,
                ) from None

    def construct_mapping(loader: Any, node: Any, deep: bool = False) -> dict[Any, Any]:
        loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in out:
                line = key_node.start_mark.line + 1
                raise _DuplicateKey(f"duplicate key {clip(repr(key), 60)} at line {line}")
            out[key] = loader.construct_object(value_node, deep=deep)
        return out

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return StrictLoader


class _DuplicateKey(Exception):
    pass


_DIGITS = re.compile(r"[-+]?[0-9][0-9_]*")


class _Open:
    """A collection the event scan is inside: where it started and the child it is at."""

    __slots__ = ("anchor", "chars", "count", "key", "mapping", "values")

    def __init__(self, mapping: bool, anchor: str | None, values: int, chars: int) -> None:
        self.mapping = mapping
        self.anchor = anchor
        self.values = values  # the running totals when it opened
        self.chars = chars
        self.count = 0  # child nodes seen (a mapping's keys and values alternate)
        self.key = ""  # a mapping's current key


def _key_path(frames: list[_Open]) -> str:
    """``tasks[0].params``: where the scan is, as parse_suite names keys."""
    out = ""
    for f in frames:
        if f.mapping:
            if f.count % 2:  # at a key: the mapping itself is the place
                break
            out += ("." if out else "") + clip(f.key, 40)
        else:
            out += f"[{f.count - 1}]"
    return out


def _check_shape(text: str) -> tuple[str, str] | None:
    problem = _first_problem(text)
    if problem is None:
        return None
    path, what, mark = problem
    return clip(path, 100), f"{what} (line {mark.line + 1})"


def _first_problem(text: str) -> tuple[str, str, Any] | None:
    """The first thing about a YAML text that a suite must not be: ``(key path, problem,
    mark)``, found in one pass over the parser's events (libyaml's parser is iterative, so any
    nesting is safe here; its composer is not), counting what the document expands to, an
    alias counted as every value it repeats. Nothing is built, and it stops at the first
    problem, so a bomb costs microseconds. A syntax error raises YAMLError (the loader's)."""
    import yaml

    frames: list[_Open] = []
    sizes: dict[str, tuple[int, int]] = {}  # anchor → (values, chars) it stands for
    scalar_anchors: set[str] = set()
    values = chars = 0
    for ev in yaml.parse(text, Loader=_loader()):
        if isinstance(ev, yaml.CollectionEndEvent):
            done = frames.pop()
            if done.anchor:
                sizes[done.anchor] = (values - done.values, chars - done.chars)
            continue
        if not isinstance(ev, yaml.NodeEvent):
            continue
        top = frames[-1] if frames else None
        if top is not None:
            top.count += 1
        if top is not None and top.mapping and top.count % 2:  # a key
            if isinstance(ev, yaml.ScalarEvent):
                top.key = ev.value
            elif not (isinstance(ev, yaml.AliasEvent) and ev.anchor in scalar_anchors):
                return _key_path(frames), "a mapping key must be a plain value", ev.start_mark
        if isinstance(ev, yaml.AliasEvent):
            if ev.anchor not in sizes:  # still open: a value containing itself
                if any(f.anchor == ev.anchor for f in frames):
                    what = f"alias *{clip(str(ev.anchor), 40)} is inside its own anchor"
                    return _key_path(frames), what, ev.start_mark
                continue  # undefined: the loader says so
            n, c = sizes[ev.anchor]
        elif isinstance(ev, yaml.ScalarEvent):
            n, c = 1, len(ev.value)
            quoted = ev.style in ("'", '"') and ev.tag is None
            if c > MAX_INT_DIGITS and not quoted and _DIGITS.fullmatch(ev.value):
                what = f"an integer of {c:,} digits; expected at most {MAX_INT_DIGITS}"
                return _key_path(frames), what, ev.start_mark
            if ev.anchor:
                sizes[ev.anchor] = (n, c)
                scalar_anchors.add(ev.anchor)
        else:  # a sequence or mapping opens
            if len(frames) >= MAX_DEPTH:
                return _key_path(frames), f"nested deeper than {MAX_DEPTH} levels", ev.start_mark
            frames.append(_Open(isinstance(ev, yaml.MappingStartEvent), ev.anchor, values, chars))
            n, c = 1, 0
        values += n
        chars += c
        if values > MAX_VALUES or chars > MAX_CHARS:
            what = (
                f"expands to more than {MAX_VALUES:,} values or {MAX_CHARS:,} characters "
                "(YAML aliases repeat what their anchor holds)"
            )
            return _key_path(frames), what, ev.start_mark
    return None


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
    shown = display or str(path)
    data = _load_yaml(Path(path), shown)
    try:
        return parse_suite(
            data, shown, samples=samples, seed=seed, repeats=repeats, base_dir=Path(path).parent
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


def _load_yaml(p: Path, shown: str) -> Any:
    """The suite file's YAML, bounded (size, nesting, expansion, integers) before it is built;
    InvalidSuite with one line naming the file (and the key, where there is one)."""
    import yaml

    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):  # /dev/zero would never end, a FIFO never start
            raise InvalidSuite(shown, "", "not a regular file")
        size = st.st_size
        if size > MAX_SUITE_BYTES:
            raise InvalidSuite(
                shown, "", f"{size:,} bytes; a suite file is at most {MAX_SUITE_BYTES:,}"
            )
        text = p.read_text(encoding="utf-8-sig")  # a byte order mark is not part of the YAML
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidSuite(shown, "", f"cannot read file ({exc.__class__.__name__})") from None
    try:
        problem = _check_shape(text)
        if problem is not None:
            raise InvalidSuite(shown, *problem)
        return yaml.load(text, Loader=_loader())
    except _DuplicateKey as exc:
        raise InvalidSuite(shown, "", str(exc)) from None
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InvalidSuite(shown, "", f"YAML value error{where}: {exc.problem or ''}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        said = str(getattr(exc, "problem", None) or str(exc).splitlines()[0])
        raise InvalidSuite(shown, "", f"YAML syntax error{where}: {clip(said)}") from None


def _type_name(v: Any) -> str:
    return "null" if v is None else type(v).__name__


def _show(v: Any) -> str:
    """A user's value as an error quotes it: its repr, clipped."""
    return clip(repr(v), 80)


def _int(v: Any, where: str, path: str, *, minimum: int = 0) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise InvalidSuite(path, where, f"expected an integer, got {_type_name(v)} {_show(v)}")
    if v < minimum:
        raise InvalidSuite(path, where, f"expected an integer >= {minimum}, got {v}")
    return v


def _unit(v: Any, where: str, path: str, *, open_interval: bool = False) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise InvalidSuite(
            path, where, f"expected a number in [0, 1], got {_type_name(v)} {_show(v)}"
        )
    ok = 0 < v < 1 if open_interval else 0 <= v <= 1
    if not ok:
        rng = "(0, 1)" if open_interval else "[0, 1]"
        raise InvalidSuite(path, where, f"expected a number in {rng}, got {v}")
    return float(v)


def _keys(d: Mapping[Any, Any], allowed: set[str], where: str, path: str) -> None:
    """Every unknown key at once, each with its closest known key."""
    found = [
        InvalidSuite(
            path,
            f"{where}.{k}" if where else str(k),
            f"unknown key{did_you_mean(k, sorted(allowed))}; expected one of "
            + ", ".join(sorted(allowed)),
        )
        for k in d
        if k not in allowed
    ]
    if found:
        raise InvalidSuite.several(found)


class _Problems:
    """Every problem of a suite, so one run reports them all (one line each, file order)."""

    def __init__(self) -> None:
        self.found: list[InvalidSuite] = []

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Record an InvalidSuite raised in the block and go on with the next check."""
        try:
            yield
        except InvalidSuite as exc:
            self.found.extend(exc.problems)

    def add(self, path: str, key: str, message: str) -> None:
        self.found.append(InvalidSuite(path, key, message))

    def raise_any(self) -> None:
        if self.found:
            unique = list({p.line: p for p in self.found}.values())  # layers repeat a mistake
            raise InvalidSuite.several(unique)


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
    d: Mapping[str, Any],
    where: str,
    path: str,
    inherited: dict[str, Any],
    problems: _Problems | None = None,
) -> dict[str, Any]:
    """Settings that cascade suite → entry → level. With ``problems``, each bad key is
    recorded and keeps its inherited value, so the checks go on."""
    problems = problems if problems is not None else _Problems()
    out = dict(inherited)
    if "samples" in d:
        with problems.guard():
            count = _int(d["samples"], f"{where}samples", path)
            if count > MAX_SAMPLES:
                raise InvalidSuite(
                    path, f"{where}samples", f"expected at most {MAX_SAMPLES} samples, got {count}"
                )
            out["samples"] = count
    if "repeats" in d:
        with problems.guard():
            times = _int(d["repeats"], f"{where}repeats", path, minimum=1)
            if times > MAX_REPEATS:
                raise InvalidSuite(
                    path, f"{where}repeats", f"expected at most {MAX_REPEATS} repeats, got {times}"
                )
            out["repeats"] = times
    with problems.guard():
        seeds = _seeds(d, where, path)
        if seeds is not None:
            out["seeds"] = seeds
    if "style" in d:
        with problems.guard():
            if not isinstance(d["style"], str):
                raise InvalidSuite(
                    path, f"{where}style", f"expected a string, got {_type_name(d['style'])}"
                )
            out["style"] = d["style"]
    if "min_accuracy" in d:
        with problems.guard():
            out["min_accuracy"] = (
                None
                if d["min_accuracy"] is None
                else _unit(d["min_accuracy"], f"{where}min_accuracy", path)
            )
    if "confidence" in d:
        with problems.guard():
            out["confidence"] = (
                None
                if d["confidence"] is None
                else _unit(d["confidence"], f"{where}confidence", path, open_interval=True)
            )
    if "max_drop" in d:
        with problems.guard():
            out["max_drop"] = _unit(d["max_drop"], f"{where}max_drop", path)
    if "alpha" in d:
        with problems.guard():
            out["alpha"] = _unit(d["alpha"], f"{where}alpha", path, open_interval=True)
    if "metric" in d:
        with problems.guard():
            if d["metric"] not in METRICS:
                raise InvalidSuite(
                    path,
                    f"{where}metric",
                    f"expected one of {', '.join(METRICS)}, got {_show(d['metric'])}"
                    + did_you_mean(d["metric"], METRICS),
                )
            out["metric"] = "accuracy" if d["metric"] == "puzzle" else d["metric"]
    if "params" in d:
        with problems.guard():
            out["params"] = {
                **out.get("params", {}),
                **_mapping(d["params"], f"{where}params", path),
            }
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
    suite file's folder; default the working directory).

    Every problem is reported at once (one line each): a check that fails records its line
    and the others go on; only a shape that leaves nothing to check stops early."""
    if data is None:
        raise InvalidSuite(path, "", "empty file; expected a mapping with a 'tasks' list")
    if not isinstance(data, dict):
        raise InvalidSuite(path, "", f"expected a mapping at the top level, got {_type_name(data)}")
    problems = _Problems()
    with problems.guard():
        _keys(data, SUITE_KEYS, "", path)
    base = _common(data, "", path, {**DEFAULTS, **_RULE.to_dict()}, problems)
    name = data.get("name", Path(path).stem)
    if not isinstance(name, str):
        problems.add(path, "name", f"expected a string, got {_type_name(name)}")
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
                _keys(raw, ENTRY_KEYS, where, path)
                spec = _dataset_entry(
                    raw, where, path, base, base_dir=base_dir, samples=samples, repeats=repeats,
                    suite_samples=data.get("samples"),
                )  # fmt: skip
                if spec.id in seen:
                    raise InvalidSuite(
                        path, f"{where}.id",
                        f"duplicate id {spec.id!r}; give repeated tasks distinct 'id's",
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
    problems: _Problems,
    *,
    samples: int | None,
    seed: int | None,
    repeats: int | None = None,
) -> EntrySpec | None:
    """One task entry; its problems go to ``problems`` (None when it cannot be built)."""
    if not isinstance(raw, dict):
        problems.add(path, where, f"expected a mapping, got {_type_name(raw)}")
        return None
    entry: dict[str, Any] = raw
    with problems.guard():
        _keys(entry, ENTRY_KEYS, where, path)
    task: Task | None = None
    task_id = entry.get("task")
    if "task" not in entry:
        problems.add(path, f"{where}.task", "missing; expected a task id")
    elif not isinstance(task_id, str):
        problems.add(path, f"{where}.task", f"expected a task id, got {_type_name(task_id)}")
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
            path, f"{where}.id", f"duplicate id {eid!r}; give repeated tasks distinct 'id's"
        )
    else:
        seen.add(eid)
    settings = _common(entry, f"{where}.", path, base, problems)
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
            f"expected a list or mapping of levels, got {_type_name(levels_raw)}",
        )
        return None
    if not level_items:
        problems.add(path, f"{where}.levels", "expected at least one level")
        return None
    levels: list[LevelSpec] = []
    for lv, body in level_items:
        level = _level(str(lv), body, where, path, task, settings, problems)
        if level is not None:
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
    problems: _Problems,
) -> LevelSpec | None:
    """One level of an entry, every knob checked on its own (all bad knobs at once)."""
    lwhere = f"{where}.levels.{lv}"
    lset = settings
    if body is not None:
        if not isinstance(body, dict):
            problems.add(path, lwhere, f"expected a mapping, got {_type_name(body)}")
            return None
        with problems.guard():
            _keys(body, LEVEL_KEYS, lwhere, path)
        lset = _common(body, f"{lwhere}.", path, settings, problems)
    if task is None:
        return None
    try:
        task.check_level(lv)
    except UnknownLevel as exc:
        problems.add(path, lwhere, str(exc))
        return None
    owner = f"{lwhere}." if body else f"{where}."
    before = len(problems.found)
    for knob, value in lset["params"].items():
        try:
            task.check_knob(str(knob), value)
        except InvalidArgument as exc:
            problems.add(path, f"{owner}params", str(exc))
    if len(problems.found) == before:
        # Validated here so a bad combination fails collection; items resolve again from
        # the user's overrides (the preset stays out of the suite spec).
        try:
            task.resolve_params(lv, lset["params"])
        except InvalidArgument as exc:
            problems.add(path, f"{owner}params", str(exc))
    try:
        task.check_style(lset["style"])
    except InvalidArgument as exc:
        problems.add(path, f"{owner}style", str(exc))
    if lset["metric"] == "cell" and not task.partial_credit:
        problems.add(
            path,
            f"{owner}metric",
            f"'cell' needs a task with partial credit; {task.id} scores 0 or 1",
        )
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
