"""A reasoning-gym dataset as a task ``gym.<name>``: its curriculum steps as levels ``L0``,
``L1``, ..., its config fields as knobs, its ``score_answer`` as the scorer, its gold answer
for ``--llm reference``.

Items are addressed like every task's: the item's seeded chooser (``derive_seed`` of task,
level, seed and index) draws the seed reasoning-gym generates it from, so an item is never
unseeded and any one can be rebuilt from its id. The prompt is the dataset's question; the
system message is reasoning-gym's default one, which asks for the answer inside
``<answer>...</answer>``, and the scorer reads the last such block as reasoning-gym does (or
the project's ``<<<answer>>>``, as every task accepts).

Knobs are bounded when a suite is read (see :func:`knob_ranges`): a number goes as high as
reasoning-gym's curriculum takes it (its last level is checked to make an item in under
2 CPU seconds; one more tower_of_hanoi disk doubles the moves), or ten times the value every
level uses when the curriculum never changes it; text is short and names no path; a list is
at most ten times the curriculum's longest. Knob values a suite sets are then validated by
reasoning-gym's own config (``validate()``), so a rejected combination is a usage error at
collection, not a failure of every sample; so is a dataset its constructor cannot build
(spell_backward's ``data_file`` naming no file). A generator that still fails on an item is
one line naming the dataset.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ...core import Item, Score
from ...errors import InvalidArgument, quote
from ...rng import Chooser
from ..base import Generated, Knob, Task, check_level
from . import entries

__all__ = ["GymKnob", "GymTask", "knob_ranges", "make_task"]

# reasoning-gym's answer tags, or the project's own delimiters (the lenient extraction
# re-scores what it finds as <<<answer>>>): the last of either counts.
_ANSWER = re.compile(r"<answer>\s?(.*?)\s?</answer>|<<<(.*?)>>>", re.DOTALL)
COT = "Think step by step before you answer."
_KINDS: dict[str, type] = {"int": int, "float": float, "str": str, "bool": bool, "list": list}
_BOUND_WORDS = frozenset({"min", "max", "lower", "upper", "lb", "ub"})
MAX_TEXT = 64  # characters of a text knob or a list's text item
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_PATH = re.compile(r"[/\\]|\.\.")  # a text knob may name a file (spell_backward's data_file)
CURRICULUM = "the top of reasoning-gym's curriculum"
HEADROOM = "ten times what every curriculum level uses"


def _group(field: str) -> str:
    """``min_trials`` and ``max_trials`` (``diff_lb``/``diff_ub``, ...) bound one quantity."""
    return "_".join(w for w in field.split("_") if w not in _BOUND_WORDS)


def knob_ranges(spec: Mapping[str, Any]) -> dict[str, tuple[float, float, str]]:
    """Each numeric knob's allowed range and where its top comes from.

    The knobs bounding one quantity (``min_X``/``max_X``) share a range. If the curriculum
    changes the quantity, its top is the highest value the curriculum gives it (the build
    checks the last level is cheap; nothing proves a higher one is: tower_of_hanoi's moves
    double with every disk); otherwise ten times that value (a probability past 1 is left
    to reasoning-gym's own validation). The bottom is 0, or ten times a negative bottom.
    """
    levels = spec["levels"]
    groups: dict[str, list[str]] = defaultdict(list)
    for field, kind in spec["knobs"].items():
        if kind["kind"] in ("int", "float"):
            groups[_group(field)].append(field)
    out: dict[str, tuple[float, float, str]] = {}
    for members in groups.values():
        values = [lv[f] for lv in levels for f in members]
        varies = any(len({lv[f] for lv in levels}) > 1 for f in members)
        bottom, top = min(values), max(values)
        high, why = (top, CURRICULUM) if varies else (max(top, 10 * top), HEADROOM)
        for f in members:
            out[f] = (min(0, 10 * bottom), high, why)
    return out


class GymTask(Task):
    """Base of the generated ``gym.<name>`` classes (see :func:`make_task`)."""

    dataset: ClassVar[str]
    partial_credit = True  # verifiers give partial rewards (e.g. a longer answer holding it)
    pack = True  # audited only when named: its generators are reasoning-gym's
    example_styles = ()
    knobs: ClassVar[dict[str, Knob]] = {}
    presets: ClassVar[tuple[dict[str, Any], ...]] = ()


    def preset(self, level: str) -> dict[str, Any]:
        check_level(self, level)
        return dict(self.presets[self.levels.index(level)])

    def adapt(self, params: dict[str, Any], given: set[str]) -> None:
        """Also reasoning-gym's own validation of knobs a suite set and its dataset built
        with them, once per combination (this imports reasoning-gym: only when a suite sets
        gym knobs)."""
        if given:
            _validated(self.dataset, json.dumps(params, sort_keys=True))

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        seed = chooser.randint(0, 2**31 - 1)
        entry, _ = entries.entry_at(self.dataset, params, seed)
        question = str(entry["question"])
        problem = {
            "dataset": self.dataset,
            "gym_seed": seed,
            "question": question,
            "metadata": entries.jsonable(entry.get("metadata", {})),
        }
        return Generated(problem=problem, answer=str(entry["answer"]), body=question)

    def identity(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """The question: two reasoning-gym seeds that ask the same question are one problem,
        in one train/test split (the seed is only how it was drawn)."""
        return {"question": problem["question"]}

    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        return generated.body if style == "direct" else f"{generated.body}\n\n{COT}"

    def score(self, item: Item, response: str) -> Score:
        found = list(_ANSWER.finditer(response))
        if not found:
            return Score(False, None, "no_answer", value=0.0)
        last = found[-1]
        answer = (last.group(1) if last.group(1) is not None else last.group(2)).strip()
        params = {k: v for k, v in item.params.items()}
        scored = entries.scored_at(self.dataset, params, int(item.problem["gym_seed"]), answer)
        if scored.failure is not None:  # refused or overran: 0, and what happened
            detail = {"detail": scored.detail} if scored.detail else {}
            return Score(False, answer, scored.failure, value=0.0, extra=detail)
        right = scored.value >= 1.0
        mode = None if right else "wrong_answer"
        return Score(right, answer, mode, value=max(0.0, scored.value))

    def solve(self, item: Item) -> str:
        """The generator's own gold answer: reasoning-gym's, not re-derived here (see the
        independent checks in docs/tasks/gym.md)."""
        return item.answer

    def reference_response(self, item: Item) -> str:
        return f"<answer>{self.solve(item)}</answer>"

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        return f"<answer>{answer}</answer>"


@dataclass(frozen=True)
class GymKnob(Knob):
    """A dataset's knob: its range (and where it comes from) and what a text or list may
    hold; every message names the dataset."""

    task: str = ""
    why: str = ""
    longest: int = 1  # a list knob's longest value in the curriculum

    def check(self, value: Any) -> Any:
        low = -math.inf if self.minimum is None else self.minimum
        high = math.inf if self.maximum is None else self.maximum
        number = type(value) in (int, float) and math.isfinite(value)
        if number and not low <= value <= high:
            raise InvalidArgument(
                f"{self.task}: knob '{self.name}' = {quote(value)} is out of range: allowed "
                f"{low:g}..{high:g} ({self.why})"
            )
        try:
            value = super().check(value)
        except InvalidArgument as exc:
            raise InvalidArgument(f"{self.task}: {exc}") from None
        problem = _bad_value(value, 10 * max(self.longest, 1))
        if problem:
            raise InvalidArgument(f"{self.task}: knob '{self.name}': {problem}")
        return value


@functools.lru_cache(maxsize=256)
def _validated(dataset: str, params: str) -> None:
    entries.prepare(dataset, json.loads(params))


def _bad_value(value: Any, longest: int) -> str | None:
    """What is wrong with a text or list knob's value (None: nothing)."""
    items = value if isinstance(value, list) else [value]
    if isinstance(value, list) and len(value) > longest:
        return f"a list of {len(value)} values; at most {longest} (ten times the curriculum's)"
    if isinstance(value, str) and _PATH.search(value):
        return f"text {quote(value, 80)} is not allowed (no '/', '\\' or '..': no paths)"
    for v in items:
        if isinstance(v, str) and (len(v) > MAX_TEXT or _CONTROL.search(v)):
            return (
                f"text {quote(v, 80)} is not allowed (at most {MAX_TEXT} characters, "
                "no control characters)"
            )
        plain = isinstance(v, int | float | str) and not isinstance(v, bool)
        if isinstance(value, list) and not plain:
            return f"list item {quote(v, 80)} is not a number or text"
        if isinstance(v, float) and not math.isfinite(v):
            return f"list item {quote(v)} is not a finite number"
    return None


def make_task(name: str, spec: Mapping[str, Any], system_prompt: str) -> type[GymTask]:
    """The task class of one dataset from its manifest entry."""
    tid = f"gym.{name}"
    knobs: dict[str, Knob] = {}
    ranges = knob_ranges(spec)
    steps = len(spec["levels"])
    for field, kind in spec["knobs"].items():
        listed = kind["kind"] == "list"
        item_kind = _KINDS.get(kind.get("item", "")) if listed else None
        low, high, why = ranges.get(field, (None, None, ""))
        longest = max(len(lv[field]) for lv in spec["levels"]) if listed else 1
        knobs[field] = GymKnob(field, _KINDS[kind["kind"]], f"reasoning-gym config field '{field}'",
                               minimum=low, maximum=high, item_kind=item_kind, task=tid, why=why,
                               longest=longest)  # fmt: skip
    knobs["curriculum_step"] = GymKnob(
        "curriculum_step",
        int,
        "the curriculum step the fields that are not knobs come from (the level's own)",
        minimum=0,
        maximum=steps - 1,
        task=tid,
        why="its levels",
    )
    attrs: dict[str, Any] = {
        "id": tid,
        "dataset": name,
        "levels": tuple(f"L{k}" for k in range(steps)),
        "knobs": knobs,
        "presets": tuple(spec["levels"]),
        "description": f"reasoning-gym {name}: {spec['description']}",
        "system_prompt": system_prompt,
        "__module__": __name__,
    }
    return type(f"Gym_{name}", (GymTask,), attrs)
