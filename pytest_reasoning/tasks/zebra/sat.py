"""The generator's uniqueness prover: an incremental SAT solver (python-sat) and the clue
reduction that calls it.

One solver per puzzle holds the grid's exactly-one constraints, a clause that blocks the gold
grid, and each clue's clauses behind a selector variable. "These clues force exactly one
solution" is then one call: the gold grid satisfies every true clue, so the clues are unique
iff the solver finds no model under their selectors (UNSAT is a proof, not a hope).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .clues import Clue, Ref

__all__ = ["Uniqueness", "conflicts", "reduce_clues"]

# Where pos(b) may be, relative to pos(a), for each relation kind.
_OFFSETS: dict[str, tuple[int, ...]] = {
    "same_house": (0,),
    "direct_left": (1,),
    "direct_right": (-1,),
    "side_by_side": (-1, 1),
    "one_between": (-2, 2),
    "two_between": (-3, 3),
}


class Uniqueness:
    """Decides whether a set of true clues pins the gold grid down as the only solution."""

    def __init__(
        self,
        grid: Sequence[dict[str, str]],
        clues: Sequence[Clue],
        extra: Sequence[Ref] = (),
        *,
        block: bool = True,
    ) -> None:
        """``extra``: values outside the grid (red herring attributes), each in exactly one
        house and free otherwise. Without ``block`` the solver looks for any solution (the
        difficulty measure), not a second one."""
        from pysat.solvers import Solver  # 20 ms to import: only when a puzzle is built

        self.n = n = len(grid)
        self.clues = clues
        self.index: dict[Ref, int] = {}
        for house in grid:
            for f, v in house.items():
                self.index[(f, v)] = len(self.index)
        for ref in extra:
            self.index[ref] = len(self.index)
        # The fixed clauses as lists by index arithmetic, then one bootstrap call (8x8: 11.1 ->
        # 11.5 puzzles a second). Keep the order: MiniSat's conflict count (a puzzle's
        # difficulty, in its problem) depends on it.
        clauses: list[list[int]] = []
        feats = list(grid[0])

        def one_house(a: int) -> None:  # the value with variables a .. a+n-1: one house
            clauses.append(list(range(a, a + n)))
            clauses.extend([-(a + h), -(a + k)] for h in range(n) for k in range(h + 1, n))

        for f in feats:
            bases = [self.index[(f, house[f])] * n + 1 for house in grid]
            for a in bases:  # each value in exactly one house
                one_house(a)
            for h in range(n):  # each house has exactly one value of the feature
                clauses.append([a + h for a in bases])
                clauses.extend(
                    [-(a + h), -(b + h)] for i, a in enumerate(bases) for b in bases[i + 1 :]
                )
        for ref in extra:  # one person has the attribute; any person may have several
            one_house(self.index[ref] * n + 1)
        if block:  # any other grid differs from the gold one in some cell
            clauses.append(
                [
                    -(self.index[(f, house[f])] * n + h + 1)
                    for h, house in enumerate(grid)
                    for f in feats
                ]
            )
        self.solver: Any = Solver(name="minisat22", bootstrap_with=clauses)
        self.next_var = len(self.index) * n + 1
        self.selector = [0] * len(clues)  # clue index -> its selector literal (0: none yet)
        self.calls = 0

    def _selector(self, i: int) -> int:
        s = self.selector[i]
        if not s:
            s = self.selector[i] = self.next_var
            self.next_var += 1
            self.solver.append_formula([[*clause, -s] for clause in self._clauses(self.clues[i])])
        return s

    def _clauses(self, clue: Clue) -> list[list[int]]:
        n, kind = self.n, clue.kind
        a = self.index[clue.a] * n + 1  # var(a, h) = a + h
        if clue.b is None:
            lit = a + (clue.house or 1) - 1
            return [[lit] if kind == "found_at" else [-lit]]
        b = self.index[clue.b] * n + 1
        if kind == "left_of":
            return [[-(a + h), *range(b + h + 1, b + n)] for h in range(n)]
        if kind == "right_of":
            return [[-(a + h), *range(b, b + h)] for h in range(n)]
        if kind == "different_house":
            return [[-(a + h), -(b + h)] for h in range(n)]
        offsets = _OFFSETS[kind]
        return [[-(a + h), *(b + h + d for d in offsets if 0 <= h + d < n)] for h in range(n)]

    def unique(self, active: Sequence[int]) -> bool:
        """Whether the clues at indices ``active`` leave the gold grid as the only solution."""
        self.calls += 1
        sel = self.selector
        return not self.solver.solve(assumptions=[sel[i] or self._selector(i) for i in active])

    def close(self) -> None:
        self.solver.delete()


def conflicts(grid: Sequence[dict[str, str]], clues: Sequence[Clue]) -> int:
    """How many conflicts a fresh MiniSat meets finding the solution of ``clues`` (the
    grid's constraints and the clues; nothing about the gold grid): the difficulty measure
    ZebraLogic takes from Z3. Deterministic: MiniSat's choices depend on the clause order."""
    check = Uniqueness(grid, clues, block=False)
    try:
        found = check.solver.solve(assumptions=[check._selector(i) for i in range(len(clues))])
        if not found:  # true clues of the grid always admit it
            raise AssertionError("the clues contradict their own grid")
        return int(check.solver.accum_stats()["conflicts"])
    finally:
        check.close()


def reduce_clues(check: Uniqueness, order: Sequence[int], min_clues: int = 0) -> list[int]:
    """Remove clues in ``order`` while the rest stay unique; stop at ``min_clues`` left.

    The result is exactly that of trying each clue once, in order, and dropping it when the
    others still force one solution (a test compares the two). It costs a few solver calls per
    clue KEPT, not per clue: between two kept clues ``kept + order[j:]`` is unique for small j
    and not for large j, so the next kept clue is found by galloping from the short end (cheap
    calls on small sets) and bisecting.
    """
    kept: list[int] = []
    n, i = len(order), 0

    def unique_after(j: int) -> bool:  # kept + order[j+1:]: order[i..j] dropped
        return check.unique(kept + list(order[j + 1 :]))

    while i < n:
        stop = n - max(0, min_clues - len(kept))  # order[stop:] must stay for min_clues
        if stop <= i:
            return kept + list(order[i:])
        if unique_after(n - 1):
            first = n  # the kept clues alone suffice
        else:
            hi, step = n - 1, 1  # unique_after(hi) is False; unique_after(i - 1) is True
            lo = i - 1
            while hi - step > i - 1:
                if unique_after(hi - step):
                    lo = hi - step
                    break
                hi, step = hi - step, step * 2
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if unique_after(mid):
                    lo = mid
                else:
                    hi = mid
            first = hi
        if first >= stop:
            return kept + list(order[stop:])
        kept.append(order[first])
        i = first + 1
    return kept
