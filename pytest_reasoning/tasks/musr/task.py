"""MuSR's three domains as tasks: ``musr.murder_mystery``, ``musr.object_placement`` and
``musr.team_allocation`` (levels L1-L3), multiple choice, four prompt styles."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...core import Item, Score
from ...rng import Chooser
from ..base import Generated, Knob, Shortcut, Task, check_level
from ..names import gendered_first_names
from . import shortcuts, solver
from .examples import solved
from .murder import generate_murder
from .placement import generate_placement
from .reasoning import Step, render, tree_steps
from .story import (
    Story,
    be,
    describe_allocation,
    murder_story,
    placement_story,
    start_sentence,
    teams_story,
)
from .teams import generate_teams
from .trees import Node

__all__ = [
    "MurderMysteryTask",
    "MusrTask",
    "ObjectPlacementTask",
    "TeamAllocationTask",
    "extract_choice",
]

STYLES = ("direct", "cot", "cot+", "1shot-cot+")

# Our own words for each domain's reasoning strategy (the cot+ styles).
STRATEGY = {
    "murder": "How to reason: a murderer needs three things — the means (access to the weapon "
    "and the ability to use it), a motive (a reason to want the victim dead) and the "
    "opportunity (a chance to be at the scene at the time, unseen). Exactly one suspect has all "
    "three; the other has two of them proven, not the third. Evidence can look like the third "
    "without proving it, so check that it concerns this weapon, this victim, this place and "
    "this time. Either suspect may have done something that only looks bad. Check each suspect "
    "for each of the three, using everyday knowledge to connect the facts.",
    "placement": "How to reason: a person believes an item is where they last saw it being put. "
    "If they never saw it move, they believe it is still where it was at the start; whoever "
    "moves an item knows where they put it. For each move of the item, decide from the story "
    "whether the person could have seen it: were they beside the mover and free, or busy, "
    "away, or on the phone?",
    "teams": "How to reason: score each possible allocation. Add how well each person would do "
    "the job they are given, judged from their experience, and how well the two people sharing "
    "a job would cooperate, judged from their history together. Choose the allocation with the "
    "highest total.",
}
_ANSWER_LINE = "End your response with a line of the form 'ANSWER: <number>'."


class MusrTask(Task):
    """What the three domains share: levels, styles, rendering and multiple-choice scoring."""

    domain: ClassVar[str]
    question: ClassVar[str]
    levels = ("L1", "L2", "L3")
    styles = STYLES
    style_aliases: ClassVar[Mapping[str, str]] = {"regular": "direct"}  # the paper's name
    example_styles = ()  # the one-shot example is fixed, hand-written (see examples.py)
    depth_knob = Knob(
        "depth", int, "reasoning-tree depth (inference steps per gold fact)", minimum=1, maximum=3
    )

    def preset(self, level: str) -> dict[str, Any]:
        check_level(self, level)
        return dict(self.presets[level])

    presets: ClassVar[Mapping[str, Mapping[str, Any]]]

    # -- generation --------------------------------------------------------------------------
    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        facts, story, options, answer = self.build(chooser, params)
        problem = {**self.export(facts), "story": story.text, "chapters": story.chapters,
                   "choices": options, "answer_index": answer}  # fmt: skip
        body = (
            f"{story.text}\n\n{self.ask(facts)}\n\nPick one of the following choices:\n"
            + "\n".join(f"{n} - {self.option_text(facts, o)}" for n, o in enumerate(options, 1))
        )
        return Generated(problem, self.option_text(facts, options[answer]), body)

    def build(
        self, ch: Chooser, params: Mapping[str, Any]
    ) -> tuple[dict[str, Any], Story, list[Any], int]:
        raise NotImplementedError

    # -- what makes two problems the same ----------------------------------------------------
    def identity(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """The problem with its people renamed by role (:meth:`people`, in that order) and
        without its narration (the story and its chapter offsets, which move with the names'
        lengths): the facts, their reasoning trees and the choices are the problem, whoever
        they are about (docs/tasks/splits.md)."""
        kept = {k: v for k, v in problem.items() if k not in ("story", "chapters")}
        return {"template": _renamed(kept, self.people(problem))}

    def people(self, problem: Mapping[str, Any]) -> list[str]:
        """The people of a problem, in the order their roles are renamed."""
        return [str(p) for p in problem.get("people", ())]

    def export(self, facts: Mapping[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def ask(self, facts: Mapping[str, Any]) -> str:
        return self.question

    def option_text(self, facts: Mapping[str, Any], option: Any) -> str:
        return str(option)

    def reasoning(self, problem: Mapping[str, Any]) -> list[Step]:
        """The steps that solve an exported problem (computed on demand, not stored)."""
        raise NotImplementedError

    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        parts = []
        if style == "1shot-cot+":
            parts.append(solved(self.domain).prompt)
        parts.append(generated.body)
        if style in ("cot+", "1shot-cot+"):
            parts.append(STRATEGY[self.domain])
        if style == "direct":
            parts.append("Answer with the number of your choice. " + _ANSWER_LINE)
        else:
            parts.append("Think it through step by step, then give your choice. " + _ANSWER_LINE)
        return "\n\n".join(parts)

    # -- scoring -----------------------------------------------------------------------------
    def aliases(self, problem: Mapping[str, Any]) -> list[list[str]]:
        """Texts that name each option in a reply (the option text first)."""
        return [[str(o)] for o in problem["choices"]]

    def score(self, item: Item, response: str) -> Score:
        problem = item.problem
        aliases = self.aliases(problem)
        got = extract_choice(response, aliases)
        gold = int(problem["answer_index"])
        extra: dict[str, Any] = {"chance": round(1 / len(aliases), 4)}
        if got is None:
            return Score(False, None, "no_answer", extra=extra)
        extra["choice"] = got + 1
        if got == gold:
            return Score(True, aliases[got][0], extra=extra)
        return Score(False, aliases[got][0], self.failure(problem, got), extra=extra)

    def failure(self, problem: Mapping[str, Any], got: int) -> str:
        return "wrong_choice"

    def reference_response(self, item: Item) -> str:
        return f"ANSWER: {self.solve_index(item.problem) + 1}"

    def solve(self, item: Item) -> str:
        return self.aliases(item.problem)[self.solve_index(item.problem)][0]

    def solve_index(self, problem: Mapping[str, Any]) -> int:
        raise NotImplementedError

    def explain(self, problem: Mapping[str, Any], answer: str) -> str:
        """The worked reasoning (``--with-steps``), rebuilt from the exported facts and trees:
        one numbered step per inference, each citing what it uses (``reasoning.check``)."""
        lines = render(self.reasoning(problem))
        return "\n".join([*lines, f"ANSWER: {int(problem['answer_index']) + 1}"])


_ELEMENTS = ("means", "motive", "opportunity")
_AGAIN = {2: " the second time", 3: " the third time", 4: " the fourth time"}


def _renamed(value: Any, people: Sequence[str]) -> Any:
    """``value`` (JSON) with every whole-word mention of a person, in text and in keys,
    replaced by ``<P{k}>``, k the person's place in ``people``."""
    role: dict[str, str] = {}
    for name in people:
        role.setdefault(name, f"<P{len(role)}>")
    if not role:
        return value
    names = sorted(role, key=len, reverse=True)  # "Ann Lee" before "Ann"
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return pattern.sub(lambda m: role[m.group(0)], v)
        if isinstance(v, Mapping):
            return {walk(str(k)): walk(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        return v

    return walk(value)


def _and(words: Sequence[str]) -> str:
    return " and ".join(words)


def _names() -> tuple[tuple[str, str], ...]:
    # Names that are also story words would read oddly ("Will", "Page").
    return gendered_first_names(_BANNED_NAMES)


_BANNED_NAMES = frozenset({"will", "page", "grant", "june", "may", "april", "august", "rose",
                           "summer", "autumn", "dawn", "hope", "faith", "joy", "mark", "bill",
                           "art", "chase", "cash", "guy", "sky", "river", "iris"})  # fmt: skip


class MurderMysteryTask(MusrTask):
    id = "musr.murder_mystery"
    domain = "murder"
    question = "Who is the most likely murderer?"
    description = (
        "MuSR murder mysteries: two suspects, find the one with means, motive and opportunity."
    )
    knobs: ClassVar[dict[str, Knob]] = {"depth": MusrTask.depth_knob}
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {
        "L1": {"depth": 1},
        "L2": {"depth": 2},
        "L3": {"depth": 3},
    }

    def build(
        self, ch: Chooser, params: Mapping[str, Any]
    ) -> tuple[dict[str, Any], Story, list[Any], int]:
        facts = generate_murder(ch, params["depth"], _names())
        story = murder_story(facts, ch)
        options = [s["name"] for s in facts["suspects"]]
        return facts, story, options, facts["murderer"]

    def export(self, facts: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "victim": facts["victim"], "scene": facts["scene"], "day": facts["day"],
            "hour": facts["hour"], "weapon": facts["weapon"], "detective": facts["detective"],
            "suspects": [{"name": s["name"], "means": s["means"], "motive": s["motive"],
                          "opportunity": s["opportunity"],
                          "trees": {k: t.to_dict() for k, t in s["trees"].items()}}
                         for s in facts["suspects"]],
        }  # fmt: skip

    def reasoning(self, problem: Mapping[str, Any]) -> list[Step]:
        steps: list[Step] = []
        verdicts = []
        for s in problem["suspects"]:
            roots = [("step", tree_steps(Node.from_dict(t), steps)) for t in s["trees"].values()]
            have = [e for e in _ELEMENTS if s[e]]
            lacking = [e for e in _ELEMENTS if not s[e]]
            verdict = (f"{s['name']} has {_and(have)}, but no proven {lacking[0]}" if lacking
                       else f"{s['name']} has means, motive and opportunity")  # fmt: skip
            rule = ("A murderer needs the means, a motive and the opportunity; an odd habit "
                    "proves none of them.")  # fmt: skip
            steps.append(Step(tuple(roots), rule, verdict))
            verdicts.append(("step", len(steps)))
        name = problem["choices"][problem["answer_index"]]
        steps.append(Step(tuple(verdicts), "Only a suspect with all three can be the murderer.",
                          f"{name} is the most likely murderer"))  # fmt: skip
        return steps

    def solve_index(self, problem: Mapping[str, Any]) -> int:
        return solver.solve_murder(problem)

    def failure(self, problem: Mapping[str, Any], got: int) -> str:
        return "accused_innocent"

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.MURDER_SHORTCUTS

    def people(self, problem: Mapping[str, Any]) -> list[str]:
        suspects = [str(x["name"]) for x in problem.get("suspects", ())]
        return [str(problem.get("victim", "")), str(problem.get("detective", "")), *suspects]

    def choice_texts(self, item: Item) -> Mapping[str, str]:
        return shortcuts.murder_texts(item)


class ObjectPlacementTask(MusrTask):
    id = "musr.object_placement"
    domain = "placement"
    question = ""
    description = (
        "MuSR object placements: where does a person believe an item is, after moves they may "
        "not have seen?"
    )
    knobs: ClassVar[dict[str, Knob]] = {
        "depth": MusrTask.depth_knob,
        "people": Knob("people", int, "people in the story", minimum=2, maximum=5),
        "items": Knob("items", int, "items that start in places", minimum=1, maximum=5),
        "moves": Knob("moves", int, "moves told in the story", minimum=1, maximum=12),
        "see_prob": Knob(
            "see_prob", float, "chance each other person sees a move", minimum=0.0, maximum=1.0
        ),
    }
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {
        "L1": {"depth": 1, "people": 3, "items": 2, "moves": 3, "see_prob": 0.33},
        "L2": {"depth": 2, "people": 3, "items": 3, "moves": 4, "see_prob": 0.33},
        "L3": {"depth": 3, "people": 4, "items": 3, "moves": 5, "see_prob": 0.33},
    }

    def build(
        self, ch: Chooser, params: Mapping[str, Any]
    ) -> tuple[dict[str, Any], Story, list[Any], int]:
        facts = generate_placement(ch, params["depth"], params["people"], params["items"],
                                   params["moves"], params["see_prob"], _names())  # fmt: skip
        story = placement_story(facts, ch)
        options = list(facts["choices"])
        return facts, story, options, options.index(facts["answer"])

    def ask(self, facts: Mapping[str, Any]) -> str:
        q = facts["query"]
        return (
            f"Which location is the most likely place {q['person']} would look to find "
            f"{q['item']}, given the story?"
        )

    def export(self, facts: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "setting": facts["setting"], "people": facts["people"], "roles": facts["roles"],
            "locations": facts["locations"], "start": facts["start"],
            "moves": [{"person": m["person"], "item": m["item"], "to": m["to"],
                       "seen_by": m["seen_by"], "told": m["told"],
                       "trees": {k: t.to_dict() for k, t in m["trees"].items()}}
                      for m in facts["moves"]],
            "query": facts["query"], "true_place": facts["true_place"],
        }  # fmt: skip

    def reasoning(self, problem: Mapping[str, Any]) -> list[Step]:
        who, item = problem["query"]["person"], problem["query"]["item"]
        where = problem["locations"]
        steps: list[Step] = []
        moves: list[tuple[str, str | int]] = []
        known: dict[str, int] = {}  # background facts already inferred (true all day)
        seen: dict[str, int] = {}  # the same move made twice is told apart
        for m in problem["moves"]:
            if m["item"] != item:
                continue
            told = ("story", m["told"].rstrip("."))
            if m["person"] == who:
                place = f"{where[m['to']]} {m['to']}"
                steps.append(Step((told,), "Whoever moves an item knows where they put it.",
                                  f"{who} knew {item} {be(item)} {place}"))  # fmt: skip
                moves.append(("step", len(steps)))
            else:
                when = f"while {m['person']} put {item} {where[m['to']]} {m['to']}"
                seen[when] = seen.get(when, 0) + 1
                when += _AGAIN.get(seen[when], "")
                tree = Node.from_dict(m["trees"][who])
                moves.append(("step", tree_steps(tree, steps, (told,), known=known, when=when)))
        first = problem["start"][item]
        start = ("story", start_sentence(item, where[first], first).rstrip("."))
        rule = ("A person looks for an item where they last saw it put, or put it themselves; "
                "if they saw none of its moves, where it was at the start.")  # fmt: skip
        answer = problem["choices"][problem["answer_index"]]
        steps.append(Step((start, *moves), rule,
                          f"{who} would look for {item} {where[answer]} {answer}"))  # fmt: skip
        return steps

    def solve_index(self, problem: Mapping[str, Any]) -> int:
        return solver.solve_placement(problem)

    def aliases(self, problem: Mapping[str, Any]) -> list[list[str]]:
        return [[o, o.removeprefix("the ")] for o in problem["choices"]]

    def failure(self, problem: Mapping[str, Any], got: int) -> str:
        picked = problem["choices"][got]
        if picked == problem["true_place"]:
            return "true_location"  # where the item is, not where the person thinks it is
        if picked == problem["start"][problem["query"]["item"]]:
            return "start_location"
        return "other_location"

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.PLACEMENT_SHORTCUTS

    def choice_texts(self, item: Item) -> Mapping[str, str]:
        return shortcuts.placement_texts(item)


class TeamAllocationTask(MusrTask):
    id = "musr.team_allocation"
    domain = "teams"
    question = ("Given the story, how would you uniquely allocate each person to make sure both "
                "jobs are done as well as possible?")  # fmt: skip
    description = "MuSR team allocations: give two jobs to three people by skill and teamwork."
    knobs: ClassVar[dict[str, Knob]] = {
        "depth": MusrTask.depth_knob,
        "margin": Knob(
            "margin", int, "points the best allocation beats every other by", minimum=1, maximum=4
        ),
    }
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {
        "L1": {"depth": 1, "margin": 2},
        "L2": {"depth": 2, "margin": 2},
        "L3": {"depth": 3, "margin": 2},
    }

    def build(
        self, ch: Chooser, params: Mapping[str, Any]
    ) -> tuple[dict[str, Any], Story, list[Any], int]:
        facts = generate_teams(ch, params["depth"], params["margin"], _names())
        story = teams_story(facts, ch)
        options = [[list(g) for g in o] for o in facts["options"]]
        best = [list(g) for g in facts["best"]]
        return facts, story, options, options.index(best)

    def option_text(self, facts: Mapping[str, Any], option: Any) -> str:
        return describe_allocation(facts["tasks"], option)

    def export(self, facts: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "people": facts["people"], "tasks": facts["tasks"], "skills": facts["skills"],
            "teamwork": [{"pair": k.split(" & "), "score": v}
                         for k, v in facts["teamwork"].items()],
            "margin": facts["margin"],
            "trees": {p: [t.to_dict() for t in ts] for p, ts in facts["trees"].items()},
            "team_pairs": facts["team_pairs"],
        }  # fmt: skip

    def reasoning(self, problem: Mapping[str, Any]) -> list[Step]:
        options = problem["choices"]
        teamwork = {frozenset(t["pair"]): t["score"] for t in problem["teamwork"]}
        # Only what the choices need: a person's skill at a job no choice gives them, or a
        # pair no choice puts together, is never cited (every step must be used).
        needed: set[tuple[str, int]] = set()
        pairs: set[frozenset[str]] = set()
        for option in options:
            for j, group in enumerate(option):
                needed.update((p, j) for p in group)
                if len(group) == 2:
                    pairs.add(frozenset(group))
        steps: list[Step] = []
        skill: dict[tuple[str, int], int] = {}  # (person, job) -> the step that rates it
        team: dict[frozenset[str], int] = {}
        for p, trees in problem["trees"].items():
            for n, tree in enumerate(trees):
                pair = frozenset(problem["team_pairs"][p])
                if n < 2 and (p, n) in needed:
                    skill[(p, n)] = tree_steps(Node.from_dict(tree), steps)
                elif n == 2 and pair in pairs:  # the third tree of a chapter: a pair's history
                    team[pair] = tree_steps(Node.from_dict(tree), steps)
        rule = ("Very well counts 2, passably 1 and badly 0, for a person's work and for a "
                "pair's teamwork alike.")  # fmt: skip
        scored = []
        for k, option in enumerate(options, 1):
            uses: list[tuple[str, str | int]] = []
            points: list[int] = []
            for j, group in enumerate(option):
                for p in group:
                    uses.append(("step", skill[(p, j)]))
                    points.append(problem["skills"][p][j])
                if len(group) == 2:
                    uses.append(("step", team[frozenset(group)]))
                    points.append(teamwork[frozenset(group)])
            total = " + ".join(map(str, points)) + f" = {sum(points)}"
            desc = describe_allocation(problem["tasks"], option)
            steps.append(Step(tuple(uses), rule if k == 1 else "",
                              f"Choice {k} ({desc}) scores {total}"))  # fmt: skip
            scored.append(("step", len(steps)))
        number = problem["answer_index"] + 1
        steps.append(Step(tuple(scored), "The best allocation scores highest.",
                          f"Choice {number} is the best allocation"))  # fmt: skip
        return steps

    def aliases(self, problem: Mapping[str, Any]) -> list[list[str]]:
        return [[describe_allocation(problem["tasks"], o)] for o in problem["choices"]]

    def solve_index(self, problem: Mapping[str, Any]) -> int:
        return solver.solve_teams(problem)

    def export_answer(self, answer: str) -> Any:
        # "the bake sale: Ann and Bo; the raffle: Cy" → {"the bake sale": ["Ann", "Bo"], ...}
        out: dict[str, list[str]] = {}
        for part in answer.split("; "):
            task, _, people = part.rpartition(": ")
            out[task] = re.split(r", and |, | and ", people)
        return out

    def import_answer(self, value: Any) -> str:
        # {"the bake sale": ["Ann", "Bo"], ...} → "the bake sale: Ann and Bo; ..."
        if isinstance(value, dict):
            return describe_allocation(list(value), [list(g) for g in value.values()])
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    def failure(self, problem: Mapping[str, Any], got: int) -> str:
        return "suboptimal"

    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.TEAMS_SHORTCUTS

    def choice_texts(self, item: Item) -> Mapping[str, str]:
        return shortcuts.teams_texts(item)


_NUMBER = re.compile(
    r"^\W*(?:(?:choice|option|number|no\.?|#)\s*)?\(?(\d+)\)?(?![\d.]\d)", re.IGNORECASE
)
_MARKER = re.compile(r"answer\s*(?:is|:|=|-)?\s*(?::)?", re.IGNORECASE)


def extract_choice(response: str, aliases: Sequence[Sequence[str]]) -> int | None:
    """The option a reply chooses: after the last 'answer' marker (or in ``<<<…>>>``, or on the
    last line), a number 1..k, else the one option whose text or name it mentions."""
    text = response.replace("*", "").replace("`", "")
    candidates: list[str] = []
    boxed = re.findall(r"<<<(.*?)>>>", text, re.DOTALL)
    if boxed:
        candidates.append(boxed[-1])
    # Every "answer" marker, the last first: "Answer: 2 ... hope this answer helps" is a 2.
    for marker in reversed(list(_MARKER.finditer(text))):
        candidates.append(text[marker.end() :].split("\n\n")[0])
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if lines:
        candidates.append(lines[-1])
    for chunk in candidates:
        got = _choice_in(chunk, aliases)
        if got is not None:
            return got
    return None


def _choice_in(chunk: str, aliases: Sequence[Sequence[str]]) -> int | None:
    m = _NUMBER.match(chunk)
    if m and 1 <= int(m.group(1)) <= len(aliases):
        return int(m.group(1)) - 1
    low = chunk.lower()
    hits = {
        n
        for n, names in enumerate(aliases)
        if any(re.search(rf"(?<!\w){re.escape(a.lower())}(?!\w)", low) for a in names if a)
    }
    # A longer option containing a shorter one ("the desk" in "the front desk") wins.
    if len(hits) > 1:
        longest = {n for n in hits if not any(
            a.lower() in b.lower() and a.lower() != b.lower()
            for m in hits if m != n for a in aliases[n] for b in aliases[m])}  # fmt: skip
        hits = longest
    return hits.pop() if len(hits) == 1 else None
