"""Reading YAML safely: bounded before it is built (size, nesting, expansion, integers),
duplicate keys refused, one-line errors; also the one ``KEY=VALUE`` parser."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from ..errors import (
    InvalidArgument,
    InvalidSuite,
    clip,
    quote,
)
from ..files import InputRefused, read_text_head, read_text_input

# What a suite file may be and expand to, checked on the YAML events before anything is built
# (real suites are a few KB, nested six deep): an alias bomb, a 100,000-deep nesting (which
# crashes PyYAML's C composer) or a 5,000-digit integer is one line, not a hang or a crash.
MAX_SUITE_BYTES = 1_000_000
MAX_DEPTH = 32  # nested collections
MAX_VALUES = 100_000  # values, every alias counted as the values it repeats
MAX_CHARS = 10_000_000  # characters of text values, aliases counted the same way
MAX_INT_DIGITS = 100
MAX_MESSAGE = 500  # an error line; the values it quotes are clipped to fit
_SUITE_MARK = re.compile(r"^tasks\s*:", re.M)


def parse_param(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with a YAML value (``depth=4``, ``ops=[and, or]``); a value YAML cannot
    read stays a string. The one parser of the CLI's ``--param`` and the plugin's
    ``--llm-param``; raises InvalidArgument with one line."""
    import yaml

    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise InvalidArgument(f"expected key=value, got {quote(text)}")
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
    """Cheap sniff: a ``.yaml``/``.yml`` regular file with a top-level ``tasks:`` key in its
    first MAX_SUITE_BYTES (a UTF-8 byte order mark before it allowed). A larger file is a
    suite too, refused when loaded as too large (not "not found"); a FIFO or a device is not
    read (it could hang collection)."""
    if path.suffix not in (".yaml", ".yml"):
        return False
    try:
        text = read_text_head(path, MAX_SUITE_BYTES, what="a suite file")
    except InputRefused:
        return False
    return bool(_SUITE_MARK.search(text))


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
                    f"cannot read {quote(node.value, 60) if node.id == 'scalar' else 'it'}"
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
                raise _DuplicateKey(f"duplicate key {quote(key, 60)} at line {line}")
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


def _load_yaml(p: Path, shown: str) -> Any:
    """The suite file's YAML, bounded (size, nesting, expansion, integers) before it is built;
    InvalidSuite with one line naming the file (and the key, where there is one)."""
    import yaml

    try:
        # A regular file under the cap (/dev/zero would never end, a FIFO never start); a
        # byte order mark is not part of the YAML.
        text = read_text_input(p, MAX_SUITE_BYTES, shown=shown, what="a suite file")
    except InputRefused as exc:
        raise InvalidSuite(shown, "", exc.reason) from None
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
