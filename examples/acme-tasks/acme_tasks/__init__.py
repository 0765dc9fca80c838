"""acme-tasks: a complete third-party task family for pytest-reasoning.

Two tasks: ``acme.letter_count`` (a new family: how often does a letter occur in a string?)
and ``acme.arithmetic_terse`` (DyVal's arithmetic with our own prompt template and a system
prompt). ``TASKS`` is what the ``pytest_reasoning.tasks`` entry point names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pytest_reasoning.tasks import Chooser, Generated, Item, Knob, Score, Task, extract_delimited
from pytest_reasoning.tasks.dyval import ArithmeticTask

LETTERS = "abcdefghijklmnopqrstuvwxyz"


class LetterCount(Task):
    """Count one letter in a random string; longer strings over more letters are harder."""

    id = "acme.letter_count"
    levels = ("L1", "L2", "L3")
    styles = ("direct", "cot")
    example_styles = ()  # no worked-example style
    description = "How often does a letter occur in a random string?"
    knobs: ClassVar[Mapping[str, Knob]] = {
        "length": Knob("length", int, "characters in the string", minimum=1, maximum=500),
        "alphabet": Knob("alphabet", int, "distinct letters drawn from", minimum=2, maximum=26),
    }
    PRESETS: ClassVar[dict[str, dict[str, int]]] = {
        "L1": {"length": 10, "alphabet": 3},
        "L2": {"length": 40, "alphabet": 6},
        "L3": {"length": 160, "alphabet": 12},
    }

    def preset(self, level: str) -> dict[str, Any]:
        return dict(self.PRESETS[level])

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        # Every random choice comes from ``chooser``: same (level, seed, index), same item.
        letters = LETTERS[: params["alphabet"]]
        text = "".join(chooser.choice(letters) for _ in range(params["length"]))
        letter = chooser.choice(letters)
        return Generated(
            problem={"text": text, "letter": letter},
            answer=str(text.count(letter)),
            body=f"How many times does the letter '{letter}' occur in this string?\n\n{text}",
        )

    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        ask = "Think step by step, then give" if style == "cot" else "Give"
        return f"{generated.body}\n\n{ask} the count as <<<N>>>."

    def score(self, item: Item, response: str) -> Score:
        said = extract_delimited(response)
        if said is None:
            return Score(correct=False, extracted=None, failure_mode="no_answer")
        correct = said == item.answer
        return Score(correct, said, None if correct else "wrong_count")

    def solve(self, item: Item) -> str:
        # Written apart from the generator (a regex scan, not str.count): the reference model
        # answers with this, so a generator bug shows up as a failed gate.
        found = re.findall(re.escape(item.problem["letter"]), item.problem["text"])
        return str(len(found))


class TerseArithmetic(ArithmeticTask):
    """DyVal's arithmetic problems in our own template, after a system prompt."""

    id = "acme.arithmetic_terse"
    styles = ("direct",)  # our template has no chain-of-thought or few-shot variant
    system_prompt = "You are a careful calculator. Reply with the number only, as <<<N>>>."

    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        return f"{generated.body}\n\nAnswer: <<<"


TASKS = (LetterCount, TerseArithmetic)
