"""Step-by-step reasoning that cites what it uses: each step names the story's sentences and
the earlier steps it rests on, the commonsense it applies, and what follows.

The worked reasoning of ``--with-steps`` and of the one-shot example is built from the
reasoning trees (a step per inference, bottom-up) and checked by ``check``: every quoted
sentence is in the story, every cited step comes earlier, nothing is quoted or concluded
twice, and every step is used by a later one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .text import join_names
from .trees import Node

__all__ = ["Step", "check", "render", "tree_steps"]

Cite = tuple[str, str | int]  # ("story", sentence) or ("step", its number)


@dataclass(frozen=True)
class Step:
    uses: tuple[Cite, ...]
    rule: str  # the commonsense applied ("" for plain bookkeeping)
    conclusion: str


def tree_steps(
    node: Node,
    steps: list[Step],
    extra: Sequence[Cite] = (),
    *,
    known: dict[str, int] | None = None,
    when: str = "",
) -> int:
    """Append the steps that infer ``node`` from its tree (children first) and return the
    number of the step that concludes it; ``extra`` adds citations to that last step.

    ``known`` maps background facts already concluded to their step, so a fact that holds
    all story long is inferred once and cited after; ``when`` ("while Ann moved the key")
    is added to what was going on at one moment, which may recur at another moment."""
    if known is not None and node.tense == "before" and node.text in known:
        return known[node.text]
    uses: list[Cite] = []
    for child in node.facts():
        if child.facts():
            uses.append(("step", tree_steps(child, steps, known=known, when=when)))
        else:
            uses.append(("story", child.text))
    moment = f" {when}" if when and node.tense == "scene" else ""
    steps.append(Step((*uses, *extra), node.rule(), node.text + moment))
    if known is not None and node.tense == "before":
        known[node.text] = len(steps)
    return len(steps)


def _cites(uses: Sequence[Cite]) -> str:
    refs = [str(v) for k, v in uses if k == "step"]
    quotes = [f'"{v}"' for k, v in uses if k == "story"]
    parts = []
    if refs:
        parts.append(("From step " if len(refs) == 1 else "From steps ") + join_names(refs))
    if quotes:
        parts.append(("the story says " if parts else "The story says ") + " and ".join(quotes))
    return ", and ".join(parts) + "."


def render(steps: Sequence[Step]) -> list[str]:
    """One line per step: ``3. From steps 1 and 2. Commonsense: … So: ….``"""
    lines = []
    for n, st in enumerate(steps, 1):
        rule = f" Commonsense: {st.rule}" if st.rule else ""
        conclusion = st.conclusion.rstrip(".")
        lines.append(f"{n}. {_cites(st.uses)}{rule} So: {conclusion}.")
    return lines


def _norm(text: str) -> str:
    return " ".join(text.lower().rstrip(".").split())


def check(steps: Sequence[Step], story: str) -> list[str]:
    """What is wrong with ``steps`` as reasoning about ``story`` (empty: nothing)."""
    problems: list[str] = []
    told = _norm(story)
    quoted: dict[str, int] = {}
    concluded: set[str] = set()
    cited: set[int] = set()
    for n, st in enumerate(steps, 1):
        if not st.uses:
            problems.append(f"step {n} cites nothing")
        for kind, value in st.uses:
            if kind == "story":
                quote = _norm(str(value))
                if quote not in told:
                    problems.append(f"step {n} quotes what the story does not say: {value!r}")
                # A statement is cited once for each time the story makes it (a placement
                # witness may be busy with the same task at two moves).
                quoted[quote] = quoted.get(quote, 0) + 1
                if quoted[quote] > told.count(quote):
                    problems.append(f"step {n} quotes {value!r} a second time")
            elif kind == "step" and isinstance(value, int) and 1 <= value < n:
                cited.add(value)
            else:
                problems.append(f"step {n} cites {kind} {value!r}, not an earlier step")
        conclusion = _norm(st.conclusion)
        if conclusion in concluded:
            problems.append(f"step {n} concludes {st.conclusion!r} a second time")
        concluded.add(conclusion)
    for n in range(1, len(steps)):
        if n not in cited:
            problems.append(f"step {n} is never used")
    return problems
