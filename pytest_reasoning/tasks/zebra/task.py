"""ZebraLogic ``zebra.grid``: logic grid puzzles whose clues force exactly one solution."""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...core import Item, Score, canonical_json
from ...errors import InvalidArgument, UnknownLevel
from ...rng import Chooser
from ..base import Generated, Knob, Shortcut, Task
from ..draw import draw_of
from . import herrings, shortcuts, solver
from .breakdown import size_breakdown
from .canon import puzzle_form
from .clues import KINDS, Clue, holds, names, render, true_clues
from .grid import extract_grid, norm
from .pools import FEATURES, NAME, feature, phrase
from .sat import Uniqueness, conflicts, reduce_clues

__all__ = [
    "BUCKETS",
    "DEFAULT_WEIGHTS",
    "EASY_THRESHOLD",
    "MAX_FEATURES",
    "MAX_HERRINGS",
    "MAX_HOUSES",
    "ZebraGridTask",
]

MAX_HOUSES = 10  # every pool has ten values (months twelve)
MAX_FEATURES = len(FEATURES)
EASY_THRESHOLD = -2.334  # log10 of a random 3x3 grid's chance, as the paper rounds it

# How strongly each kind of clue is KEPT: clues are removed in a weighted random order in
# which a clue of weight w goes at rate 1/w, so heavier kinds survive more often and weight 0
# drops the kind. Positional clues are few (N·M found_at against ~N²M² relational ones), so
# they weigh more; with these every kind shows up at 4x4 and up (docs/tasks/zebra.md).
DEFAULT_WEIGHTS: dict[str, float] = {
    "found_at": 3.0,
    "not_at": 2.0,
    "same_house": 1.5,
    "direct_left": 1.0,
    "direct_right": 1.0,
    "side_by_side": 1.0,
    "left_of": 1.0,
    "right_of": 1.0,
    "one_between": 1.0,
    "two_between": 1.0,
}

_LEVEL = re.compile(r"(\d+)x(\d+)")
_ATTEMPTS = 20  # fresh grids tried when max_clues rejects one
_SPLIT_TRIES = 64  # puzzles tried for one in the split being drawn (half are)
MAX_HERRINGS = 8

# The ZebraLogic leaderboard's size buckets (search space (N!)^M below 10^3, below 10^6,
# below 10^10, and above), as levels whose items draw their size from the bucket in turn:
# item i is sizes[i % len(sizes)], so a bucket of 40 puzzles per size is the paper's set.
BUCKETS: dict[str, tuple[str, ...]] = {
    "Small": ("2x2", "2x3", "2x4", "2x5", "2x6", "3x2", "3x3", "4x2"),
    "Medium": ("3x4", "3x5", "3x6", "4x3", "4x4", "5x2", "6x2"),
    "Large": ("4x5", "5x3", "4x6", "5x4", "6x3"),
    "XL": ("5x5", "6x4", "5x6", "6x5", "6x6"),
}


def log10_space(houses: int, features: int) -> float:
    """log10 of the chance that a random grid is right: ``−M·log10(N!)``."""
    return -features * math.log10(math.factorial(houses))


def _size(text: str) -> tuple[int, int] | None:
    m = _LEVEL.fullmatch(text)
    if m is None:
        return None
    n, k = int(m.group(1)), int(m.group(2))
    return (n, k) if 2 <= n <= MAX_HOUSES and 2 <= k <= MAX_FEATURES else None


def _sizes(params: Mapping[str, Any]) -> list[tuple[int, int]]:
    if "sizes" in params:
        return [_size(x) or (0, 0) for x in params["sizes"]]
    return [(params["houses"], params["features"])]


_FORMS: dict[str, str] = {}  # a puzzle's repr -> its canonical form (identity)
_FORMS_KEPT = 64

class ZebraGridTask(Task):
    id = "zebra.grid"
    levels = (*(f"{n}x{m}" for n in range(2, 7) for m in range(2, 7)), *BUCKETS)
    styles = ("direct", "cot", "oneshot")
    example_styles = ("oneshot",)
    partial_credit = True  # cell accuracy
    breaks_down = True  # accuracy by puzzle size (breakdown.py)
    description = "Logic grid puzzles with a proven unique solution; NxM = houses x features."
    knobs: ClassVar[dict[str, Knob]] = {
        # The level names the size; these override it (for frontier searches over size).
        "houses": Knob("houses", int, "houses (N)", minimum=2, maximum=MAX_HOUSES),
        "features": Knob(
            "features", int, "features (M), the name included", minimum=2, maximum=MAX_FEATURES
        ),
        "clue_weights": Knob(
            "clue_weights",
            dict,
            "how strongly each clue kind is kept (0 drops it); unnamed kinds keep the default",
            choices=KINDS,
            minimum=0,
        ),
        "min_clues": Knob("min_clues", int, "stop removing clues at this many", minimum=0),
        "max_clues": Knob(
            "max_clues", int, "redraw puzzles whose minimal clue set is larger", minimum=1
        ),
        "red_herrings": Knob(
            "red_herrings",
            int,
            "true clues about attributes outside the grid (MultiZebraLogic), added to the "
            "minimal set",
            minimum=0,
            maximum=MAX_HERRINGS,
        ),
        "sizes": Knob(
            "sizes",
            list,
            "NxM sizes item i draws from in turn (i mod their count); a bucket level's set",
            item_kind=str,
        ),
    }

    # -- levels ------------------------------------------------------------------------------
    def check_level(self, level: str) -> None:
        if level not in BUCKETS and _size(level) is None:
            raise UnknownLevel(
                f"unknown level {level!r} for {self.id}; expected NxM with 2 <= N <= "
                f"{MAX_HOUSES} houses and 2 <= M <= {MAX_FEATURES} features, e.g. 4x4, or a "
                f"leaderboard bucket: {', '.join(BUCKETS)}"
            )

    def breakdown(self, rows: Sequence[Mapping[str, Any]], *, suites: bool = False) -> Any:
        return size_breakdown(rows, suites=suites)

    def preset(self, level: str) -> dict[str, Any]:
        self.check_level(level)
        common = {"clue_weights": dict(DEFAULT_WEIGHTS), "min_clues": 0, "red_herrings": 0}
        if level in BUCKETS:
            return {"sizes": list(BUCKETS[level]), **common}
        n, m = map(int, level.split("x"))
        return {"houses": n, "features": m, **common}

    def adapt(self, params: dict[str, Any], given: set[str]) -> None:
        if "clue_weights" in given:  # a partial mapping changes only the kinds it names
            params["clue_weights"] = {**DEFAULT_WEIGHTS, **params["clue_weights"]}
        if "sizes" in params:
            both = sorted(given & {"houses", "features"})
            if both:
                raise InvalidArgument(
                    f"knob '{both[0]}': not with 'sizes' (each item's size comes from "
                    "'sizes'; give an NxM level to set the size)"
                )
            params.pop("houses", None)
            params.pop("features", None)

    def check_combination(self, params: Mapping[str, Any]) -> None:
        for text in params.get("sizes", ()):
            if _size(text) is None:
                raise InvalidArgument(
                    f"knob 'sizes': {text!r} is not a size; expected NxM with 2 <= N <= "
                    f"{MAX_HOUSES} and 2 <= M <= {MAX_FEATURES}, e.g. 7x7"
                )
        if not any(params["clue_weights"].values()):
            raise InvalidArgument("knob 'clue_weights': every kind is weighted 0")
        if "max_clues" in params and params["max_clues"] < params["min_clues"]:
            raise InvalidArgument(
                f"knob 'max_clues': {params['max_clues']} is below min_clues {params['min_clues']}"
            )

    # -- generation --------------------------------------------------------------------------
    def identity(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """The puzzle up to renaming the values within each feature and the features
        (:mod:`.canon`: values named by their house in the solution, found by the reference
        solver in well under a millisecond at 6x6), without its red herrings (distractors, as
        DyVal's are): puzzles that are the same up to renaming are one problem for the
        train/test split and the clustering of samples."""
        # One draw asks for the same puzzle's form up to five times (its split, the worked
        # examples' rule, de-duplication), and each costs a solve: the last few are kept, by
        # the problem's text (a function of it, whoever built or changed the dict).
        key = repr(problem)
        form = _FORMS.get(key)
        if form is None:
            solutions = solver.count_solutions(_puzzle(problem), limit=1)
            if not solutions:
                raise InvalidArgument(f"{self.id}: a puzzle whose clues allow no grid")
            form = puzzle_form(problem, solutions[0])
            if len(_FORMS) >= _FORMS_KEPT:
                _FORMS.clear()
            _FORMS[key] = form
        return {"form": form}

    def stratum(self, params: Mapping[str, Any], index: int) -> int:
        return index % len(_sizes(params))  # a bucket's sizes exhaust apart

    def generate(self, chooser: Chooser, params: Mapping[str, Any], index: int) -> Generated:
        sizes = _sizes(params)
        n, m = sizes[index % len(sizes)]
        weights = params["clue_weights"]
        tries, draw = 0, draw_of(chooser)
        for _ in range(_ATTEMPTS):
            while True:
                feats = [NAME, *chooser.sample(FEATURES[1:], m - 1)]
                columns = {
                    f.key: chooser.sample(names() if f is NAME else f.values, n) for f in feats
                }
                grid = [{f: columns[f][h] for f in columns} for h in range(n)]
                seed = chooser.randint(0, 2**32 - 1)
                kept = self._clues(grid, weights, params["min_clues"], seed)
                # The split is the puzzle's (up to renaming), known once its clues are: a
                # draw in the other split is redrawn here, before its difficulty is measured,
                # red herrings proved and clues worded (and past _SPLIT_TRIES by draw_in).
                tries += 1
                skeleton = {"houses": n, "features": _listing(columns),
                            "clues": [c.to_dict() for c in kept]}  # fmt: skip
                if tries >= _SPLIT_TRIES or draw.fits(skeleton):
                    break
            if len(kept) <= params.get("max_clues", len(kept)):
                break
        else:
            raise InvalidArgument(
                f"knob 'max_clues': {params['max_clues']} clues are too few for {n}x{m} "
                f"puzzles here (the last of {_ATTEMPTS} needed {len(kept)})"
            )
        hard = conflicts(grid, kept)
        herring_count = params.get("red_herrings", 0)
        told: list[Clue | herrings.Herring] = list(kept)
        if herring_count:
            extra = herrings.draw(grid, herring_count, _phrase, chooser)
            _prove_with_herrings(grid, kept, extra)
            told += extra
        chooser.shuffle(told)
        clues: list[dict[str, Any]] = []
        lines: list[str] = []
        for clue in told:
            if isinstance(clue, herrings.Herring):
                subject = list(clue.subject) if clue.subject else None
                clues.append(
                    {"kind": RED_HERRING, "herring": clue.kind, "a": subject, "b": None,
                     "house": None, "text": clue.text}
                )  # fmt: skip
                lines.append(clue.text)
                continue
            stated, text = render(clue, chooser)
            clues.append({**stated.to_dict(), "text": text})
            lines.append(text)
        listing = _listing(columns)
        space = log10_space(n, m)
        problem = {
            "houses": n,
            "features": listing,
            "clues": clues,
            "log10_space": round(space, 6),
            "difficulty": "easy" if space > EASY_THRESHOLD else "hard",
            "size": f"{n}x{m}",
            # The paper's two difficulty measures: log10 of the search space (N!)^M, and
            # the conflicts a SAT solver meets finding the solution (MiniSat here, Z3 there).
            "search_space_log10": round(-space, 6),
            "sat_conflicts": hard,
            "red_herrings": herring_count,
        }
        return Generated(
            problem=problem,
            answer=json.dumps(grid, ensure_ascii=False),
            body=self._body(n, listing, lines),
        )

    def _clues(
        self, grid: list[dict[str, str]], weights: Mapping[str, float], min_clues: int, seed: int
    ) -> list[Clue]:
        """Every true clue, then removal in a weighted random order while exactly one
        solution remains (proved by SAT at each step)."""
        pool = true_clues(grid, [k for k in KINDS if weights[k] > 0])
        rng = random.Random(seed)  # one draw from the chooser: Hypothesis shrinks the seed
        keys = [weights[c.kind] * rng.expovariate(1.0) for c in pool]  # removal times
        order = sorted(range(len(pool)), key=keys.__getitem__)
        check = Uniqueness(grid, pool)
        try:
            # found_at (or not_at) clues of every value pin the grid down on their own: only
            # without both must the full pool be proved unique (and encoding it all is slow).
            positional = weights["found_at"] > 0 or weights["not_at"] > 0
            if not positional and not check.unique(order):
                raise InvalidArgument(
                    "knob 'clue_weights': the kinds left cannot force a unique solution"
                )
            kept = reduce_clues(check, order, min_clues)
        finally:
            check.close()
        return [pool[i] for i in sorted(kept)]

    def _body(self, n: int, features: Mapping[str, Sequence[str]], lines: Sequence[str]) -> str:
        out = [
            f"There are {n} houses, numbered 1 to {n} from left to right. Each house is "
            "occupied by a different person. Each house has one value of each feature below, "
            "and no two houses share a value:"
        ]
        for key, values in features.items():
            out.append(f"- {key} ({feature(key).intro.lower()}): {', '.join(values)}")
        out.append("")
        out.append("Clues:")
        out.extend(f"{i}. {line}" for i, line in enumerate(lines, 1))
        return "\n".join(out)

    # -- rendering ---------------------------------------------------------------------------
    def shots(self, params: Mapping[str, Any]) -> int:
        return 1

    def example_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        # The one-shot example is small whatever the item's size, as in the paper (2x3 there),
        # and has no red herrings.
        sizes = _sizes(params)
        return {
            "houses": min(3, *(n for n, _ in sizes)),
            "features": min(3, *(m for _, m in sizes)),
            "clue_weights": dict(DEFAULT_WEIGHTS),
            "min_clues": 0,
        }

    def render(self, generated: Generated, style: str, examples: Sequence[Generated] = ()) -> str:
        features = generated.problem["features"]
        shape = _template(generated.problem["houses"], list(features))
        if style == "direct":
            return (
                f"{generated.body}\n\nFind the value of every feature in every house. Answer "
                f"with only a JSON object of this form, filled in:\n{shape}"
            )
        ask = (
            "Find the value of every feature in every house. Reason step by step first, then "
            "give your answer as a JSON object of this form, filled in:\n"
            + json.dumps({"reasoning": "___", "solution": json.loads(shape)}, ensure_ascii=False)
        )
        if style == "cot" or not examples:
            return f"{generated.body}\n\n{ask}"
        ex = examples[0]
        worked = json.dumps(
            {
                "reasoning": self.explain(ex.problem, ex.answer, json_answer=False),
                "solution": _solution(json.loads(ex.answer)),
            },
            ensure_ascii=False,
        )
        return (
            f"Here is an example puzzle and its solution.\n\n{ex.body}\n\n{worked}\n\n"
            f"Now solve this puzzle the same way.\n\n{generated.body}\n\n{ask}"
        )

    def export_answer(self, answer: str) -> Any:
        return json.loads(answer)

    # -- shortcut audit ----------------------------------------------------------------------
    def shortcuts(self) -> Sequence[Shortcut]:
        return shortcuts.ZEBRA

    def chance(self, item: Item) -> float:
        """The paper's random-guess probability of a whole grid: ``(1/N!)^M``."""
        p = item.problem
        return float(math.factorial(p["houses"])) ** -len(p["features"])

    def cell_chance(self, item: Item) -> float:
        """A uniform guess's share of right cells: one over the houses (the audit's per-cell
        chance)."""
        return 1.0 / int(item.problem["houses"])

    # -- scoring -----------------------------------------------------------------------------
    def score(self, item: Item, response: str) -> Score:
        problem = item.problem
        # The difficulty measures travel with every results row (items exported before
        # issue 33 lack some).
        facts = {k: problem[k] for k in _MEASURES if k in problem}
        gold: list[dict[str, str]] = json.loads(item.answer)
        grid, failure = extract_grid(response, problem["features"], problem["houses"])
        if grid is None:
            return Score(False, None, failure, value=0.0, extra=facts)
        right = sum(
            norm(v) == grid[h].get(f) for h, house in enumerate(gold) for f, v in house.items()
        )
        cells = len(gold) * len(gold[0])
        extracted = canonical_json(grid)
        if right == cells:
            return Score(True, extracted, None, value=1.0, extra=facts)
        # Where the answer puts each value (a value written twice or not at all: unknown).
        pos: dict[tuple[str, str], int] = {}
        seen: set[tuple[str, str]] = set()
        for f, values in problem["features"].items():
            by_norm = {norm(v): v for v in values}
            for h, row in enumerate(grid):
                v = by_norm.get(row.get(f, ""))
                if v is None:
                    continue
                if (f, v) in seen:
                    pos.pop((f, v), None)
                else:
                    pos[(f, v)] = h + 1
                seen.add((f, v))
        for i, c in enumerate(problem["clues"], 1):
            if c["kind"] == RED_HERRING:  # says nothing about the grid
                continue
            clue = Clue(c["kind"], tuple(c["a"]), tuple(c["b"]) if c["b"] else None, c["house"])
            if holds(clue, pos) is False:
                return Score(
                    False,
                    extracted,
                    "contradiction",
                    value=right / cells,
                    extra={**facts, "detail": f"breaks clue {i}: {c['text']}"},
                )
        mode = "partial_grid" if right else "wrong_grid"
        return Score(False, extracted, mode, value=right / cells, extra=facts)

    # -- solving -----------------------------------------------------------------------------
    def solve(self, item: Item) -> str:
        return json.dumps(solver.solve_text(item.prompt), ensure_ascii=False)

    prompt_marker = "houses, numbered 1 to"

    def text_answer(self, prompt: str, *, max_size: int | None = None) -> str | None:
        """The grid as ZebraLogic's protocol asks (a fenced JSON solution per house); beyond
        ``max_size`` houses, the first two houses' names exchanged (wrong, partly right)."""
        grid = solver.solve_text(prompt)
        houses = re.findall(r"There are (\d+) houses, numbered", prompt)
        if max_size is not None and houses and int(houses[-1]) > max_size:
            grid[0]["Name"], grid[1]["Name"] = grid[1]["Name"], grid[0]["Name"]
        solution = {f"House {h}": house for h, house in enumerate(grid, 1)}
        return "```json\n" + json.dumps({"solution": solution}, ensure_ascii=False) + "\n```"

    def reference_response(self, item: Item) -> str:
        grid = json.loads(self.solve(item))
        return json.dumps({"solution": _solution(grid)}, ensure_ascii=False)

    def explain(self, problem: Mapping[str, Any], answer: str, *, json_answer: bool = True) -> str:
        puzzle = _puzzle(problem)
        names_of = {
            (f, v): phrase(feature(f), v) for f, vs in problem["features"].items() for v in vs
        }
        steps = solver.trace(puzzle, names_of)
        text = " ".join(steps)
        if not json_answer:
            return text
        solution = json.dumps({"solution": _solution(json.loads(answer))}, ensure_ascii=False)
        return f"{text}\n{solution}"


def _solution(grid: Sequence[Mapping[str, str]]) -> dict[str, dict[str, str]]:
    return {f"House {h}": dict(house) for h, house in enumerate(grid, 1)}


def _template(n: int, features: Sequence[str]) -> str:
    return json.dumps({f"House {h}": dict.fromkeys(features, "___") for h in range(1, n + 1)})


def _puzzle(problem: Mapping[str, Any]) -> solver.Puzzle:
    return solver.Puzzle(
        houses=problem["houses"],
        features={f: list(vs) for f, vs in problem["features"].items()},
        clues=[
            solver.HERRING
            if c["kind"] == RED_HERRING
            else (c["kind"], tuple(c["a"]), tuple(c["b"]) if c["b"] else None, c["house"])
            for c in problem["clues"]
        ],
    )


RED_HERRING = "red_herring"
_MEASURES = ("size", "search_space_log10", "sat_conflicts", "red_herrings")


def _phrase(ref: tuple[str, str]) -> str:
    return phrase(feature(ref[0]), ref[1])


def _prove_with_herrings(
    grid: Sequence[dict[str, str]], kept: Sequence[Clue], extra: Sequence[herrings.Herring]
) -> None:
    """Prove that the clues with the red herrings still force exactly the gold grid (the
    herring attributes as extra values: one house each, free otherwise)."""
    states = [c for h in extra for c in h.states]
    refs = [r for c in states for r in (c.a, c.b) if r and r[0] == herrings.HERRING]
    every = range(len(kept) + len(states))
    for block in (False, True):  # the gold grid still fits; no other grid does
        check = Uniqueness(grid, [*kept, *states], list(dict.fromkeys(refs)), block=block)
        try:
            if check.unique(every) is not block:  # by construction never
                raise AssertionError("red herrings changed what the clues allow")
        finally:
            check.close()


def _listing(columns: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Each feature's values in alphabetical order (the prompt's listing; the solution's
    arrangement is not in it)."""
    return {f: sorted(columns[f], key=str.lower) for f in columns}
