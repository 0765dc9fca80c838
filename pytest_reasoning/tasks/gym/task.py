"""A reasoning-gym dataset as a task ``gym.<name>``: its curriculum steps as levels ``L0``,
``L1``, ..., its config fields as knobs, its ``score_answer`` as the scorer, its gold answer
for ``--llm reference``.

Items are addressed like every task's: the item's seeded chooser (``derive_seed`` of task,
level, seed and index) draws the seed reasoning-gym generates it from, so an item is never
unseeded and any one can be rebuilt from its id. The prompt is the dataset's question; the
system message is reasoning-gym's default one, which asks for the answer inside
``<answer>...</answer>``, and the scorer reads the last such block as reasoning-gym does (or
the project's ``<<<answer>>>``, as every task accepts).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...core import Item, Score
from ...rng import Chooser
from ..base import Generated, Knob, Task
from . import entries

__all__ = ["GymTask", "make_task"]

# reasoning-gym's answer tags, or the project's own delimiters (the lenient extraction
# re-scores what it finds as <<<answer>>>): the last of either counts.
_ANSWER = re.compile(r"<answer>\s?(.*?)\s?</answer>|<<<(.*?)>>>", re.DOTALL)
COT = "Think step by step before you answer."
_KINDS: dict[str, type] = {"int": int, "float": float, "str": str, "bool": bool, "list": list}


class GymTask(Task):
    """Base of the generated ``gym.<name>`` classes (see :func:`make_task`)."""

    dataset: ClassVar[str]
    partial_credit = True  # verifiers give partial rewards (e.g. a longer answer holding it)
    pack = True  # audited only when named: its generators are reasoning-gym's
    example_styles = ()
    knobs: ClassVar[dict[str, Knob]] = {}
    presets: ClassVar[tuple[dict[str, Any], ...]] = ()

    def preset(self, level: str) -> dict[str, Any]:
        self.check_level(level)
        return dict(self.presets[self.levels.index(level)])

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
        value = entries.score_at(self.dataset, params, int(item.problem["gym_seed"]), answer)
        right = value >= 1.0
        return Score(right, answer, None if right else "wrong_answer", value=max(0.0, value))

    def solve(self, item: Item) -> str:
        """The generator's own gold answer: reasoning-gym's, not re-derived here (see the
        independent checks in docs/tasks/gym.md)."""
        return item.answer

    def reference_response(self, item: Item) -> str:
        return f"<answer>{self.solve(item)}</answer>"

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        return f"<answer>{answer}</answer>"


def make_task(name: str, spec: Mapping[str, Any], system_prompt: str) -> type[GymTask]:
    """The task class of one dataset from its manifest entry."""
    knobs: dict[str, Knob] = {}
    for field, kind in spec["knobs"].items():
        item_kind = _KINDS.get(kind.get("item", "")) if kind["kind"] == "list" else None
        knobs[field] = Knob(field, _KINDS[kind["kind"]], f"reasoning-gym config field '{field}'",
                            item_kind=item_kind)  # fmt: skip
    steps = len(spec["levels"])
    knobs["curriculum_step"] = Knob(
        "curriculum_step",
        int,
        "the curriculum step the fields that are not knobs come from (the level's own)",
        minimum=0,
        maximum=steps - 1,
    )
    attrs: dict[str, Any] = {
        "id": f"gym.{name}",
        "dataset": name,
        "levels": tuple(f"L{k}" for k in range(steps)),
        "knobs": knobs,
        "presets": tuple(spec["levels"]),
        "description": f"reasoning-gym {name}: {spec['description']}",
        "system_prompt": system_prompt,
        "__module__": __name__,
    }
    return type(f"Gym_{name}", (GymTask,), attrs)
