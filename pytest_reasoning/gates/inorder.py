"""The ledger's sequential levels: answers taken in collection order, item by item; an item
counted once its comparison can read it (a candidate's once the baseline has answered it);
the level settled as soon as its tests have decided, and the run told how far it may ask
(:class:`InOrder`, the ledger's base; :func:`opening`). The method: docs/sequential.md."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..core import Outcome
from .clustered import majority_correct
from .comparison import ItemScore, PairAnswer
from .drift import DriftBaseline
from .levels import Key, PlannedLevel, StoredBaseline, Where, sample_key
from .metrics import sample_credit
from .rules import GateRule, GateSpec
from .sequential import Decision, PairedSequence, ThresholdSequence
from .verdicts import Verdict

__all__ = ["InOrder", "opening"]


class InOrder:
    """Sequential levels fed in collection order (the :class:`~.ledger.Ledger` is one). The
    attributes are the ledger's; :meth:`_decide` is its gate decision."""

    _levels: dict[Key, PlannedLevel]
    baseline: str | None
    stored: StoredBaseline | None
    drift: DriftBaseline | None
    lookahead: int
    selected: set[str] | None
    reported: set[str]
    pairs: list[tuple[PairAnswer, GateSpec]]
    uncounted: set[tuple[Any, ...]]
    discarded: list[Outcome]
    _settled: list[Key]
    _moved: list[tuple[Key, int]]
    _stored_repeated: bool | None

    @property
    def comparing(self) -> bool:
        return self.baseline is not None or self.stored is not None or self.drift is not None

    def _decide(self, gate: str, model: str, level: PlannedLevel) -> Verdict:
        raise NotImplementedError  # the ledger decides a gate

    def _start(self, level: PlannedLevel) -> None:
        """A sequential level's tests, made once its size is known."""
        rule, items = level.spec.rule, level.size // level.repeats
        if level.gate_id and rule.min_accuracy is not None and self._open(level.gate_id):
            level.seq = ThresholdSequence.for_rule(rule, items, repeats=level.repeats)
        if level.comparison_id and self.comparing and self._open(level.comparison_id):
            if self.drift is not None:  # two-sided, on every item asked: no sequential test
                return
            # Over repeats (here, or in a stored baseline) the pairs are per-item means.
            graded = level.repeats > 1 or self._stored_repeats()
            level.pair = PairedSequence.for_rule(rule, items, family=level.family, graded=graded)

    def _stored_repeats(self) -> bool:
        """Whether the stored baseline holds several samples of an item (read once)."""
        if self._stored_repeated is None:
            scores = self.stored[0].values() if self.stored is not None else ()
            self._stored_repeated = any(ItemScore.of(v).samples > 1 for v in scores)
        return self._stored_repeated

    def settled(self) -> list[Key]:
        """Sequential levels settled since the last call: their remaining samples are not
        needed (a level no one asks for any more)."""
        out, self._settled = self._settled, []
        return out

    def moved(self) -> list[tuple[Key, int]]:
        """Sequential levels whose frontier moved since the last call, each with it: the run
        may ask their samples at positions below it (a level not named yet: as far as
        :func:`opening` says)."""
        out, self._moved = self._moved, []
        return out

    def needed(self, model: str, spec: GateSpec, position: int | None) -> bool:
        """Whether the sample at ``position`` of a level is still needed: False once its
        sequential level settled before it (the answer is paid for, never counted)."""
        level = self._levels.get((model, spec.where))
        return (
            level is None
            or position is None
            or not level.sequential
            or level.stop is None
            or position < level.stop * level.repeats
        )

    def not_needed(self, outcome: Outcome, spec: GateSpec) -> None:
        """A paid answer its level did not need (asked ahead of a settled level): counted
        apart, never in a verdict or a figure."""
        level = self._levels.get((outcome.model, spec.where))
        if level is not None:
            level.late += 1

    def sequential_counts(self) -> dict[Key, tuple[int, int, int]]:
        """Per settled sequential level: (samples it needed, samples it has, answers paid for
        after it settled)."""
        return {
            k: (lv.stop * lv.repeats, lv.size, lv.late)
            for k, lv in self._levels.items()
            if lv.sequential and lv.stop is not None
        }

    def _count(self, level: PlannedLevel, outcome: Outcome) -> None:
        assert level.stats is not None
        level.stats.add(outcome)
        if self.comparing:
            self.pairs.append((PairAnswer.of(outcome), level.spec))

    def _take(self, level: PlannedLevel) -> None:
        """Take a sequential level's waiting answers in collection order, item by item."""
        while level.stop is None and level.taken in level.waiting:
            level.current.append(level.waiting.pop(level.taken))
            level.taken += 1
            if len(level.current) == level.repeats:
                item, level.current = level.current, []
                votes = [(o.extracted, bool(o.correct)) for o in item if o.error is None]
                level.items.append(item)
                level.verdicts.append(majority_correct(votes) if votes else None)
                level.counts.append((sum(ok for _, ok in votes), len(votes)))
                level.keys.append((item[0].cluster, item[0].prompt_sha256))
                self._note_problem(level, item[0].problem_cluster)

    @staticmethod
    def _note_problem(level: PlannedLevel, problem: str) -> None:
        """Whether a taken item's problem is new in its level. From the first repeated one
        on, curtailment is off: the fixed-n rule a curtailed verdict equals is then the
        clustered one, which no running count decides (as with ``repeats``)."""
        fresh = problem not in level.asked
        level.asked.add(problem)
        level.fresh.append(fresh)
        if not fresh:
            for test in (level.seq, level.pair):
                if test is not None:
                    test.curtail = False

    def _count_ready(self, where: Where) -> list[Verdict]:
        """Count every taken item of ``where``'s sequential levels that can be counted now —
        a candidate's once the baseline's verdict on the same item is known, the live
        baseline's once every candidate has counted it or settled before it — and settle
        the levels whose tests have decided. Returns the gates decided."""
        out: list[Verdict] = []
        levels = [(m, lv) for (m, w), lv in self._levels.items() if w == where and lv.sequential]
        progress = True
        while progress:
            progress = False
            for model, level in levels:
                while level.stop is None and level.counted_items < len(level.items):
                    i = level.counted_items
                    if model == self.baseline:
                        if not self._baseline_may_count(where, i, level):
                            break
                    elif level.pair is not None and level.pair.decision is Decision.CONTINUE:
                        known, theirs = self._theirs(where, level, i)
                        if not known:
                            break  # the baseline has not answered this item yet
                        mine = level.verdicts[i]
                        if (
                            mine is not None
                            and theirs is not None
                            and theirs.vote is not None
                            and level.fresh[i]
                        ):
                            if level.pair.graded:
                                right, answered = level.counts[i]
                                level.pair.update(
                                    Fraction(right, answered),
                                    theirs.mean,
                                    matched=answered == theirs.answered,
                                )
                            else:
                                level.pair.update(mine, theirs.vote)
                    self._count_item(model, level, i, out)
                    progress = True
        base = self._levels.get((self.baseline or "", where))
        if base is not None and base.sequential and base.stop is None:
            # Its candidates all settled at or before what it counted: it needs no more
            # (without waiting for an answer past their stop, which a run may never ask).
            compared = [lv for (m, w), lv in self._levels.items() if w == where and lv.pair]
            if compared and all(
                lv.stop is not None and lv.stop <= base.counted_items for lv in compared
            ):
                self._settle((self.baseline or "", where), base)
        return out

    def _theirs(self, where: Where, level: PlannedLevel, i: int) -> tuple[bool, ItemScore | None]:
        """(known, the baseline's answers) on a candidate's item ``i``: not known while the
        live baseline has not taken that item; None where a stored one has no such item (a
        vote of None where its calls failed)."""
        if self.baseline is not None:
            base = self._levels.get((self.baseline, where))
            if base is None or len(base.verdicts) <= i:
                return False, None
            right, answered = base.counts[i]
            return True, ItemScore(base.verdicts[i], right, answered, base.repeats)
        assert self.stored is not None
        found = self.stored[0].get(level.keys[i])
        return True, None if found is None else ItemScore.of(found)

    def _baseline_may_count(self, where: Where, i: int, base: PlannedLevel) -> bool:
        """The live baseline's item ``i`` is counted once every candidate compared on it
        has counted it (or settled before it); when all settled before it, it settles."""
        compared = [lv for (m, w), lv in self._levels.items() if w == where and lv.pair]
        if not compared:
            return True
        if all(lv.stop is not None and lv.stop <= i for lv in compared):
            self._settle((self.baseline or "", where), base)
            return False
        return all(lv.counted_items > i or lv.stop is not None for lv in compared)

    def _count_item(self, model: str, level: PlannedLevel, i: int, out: list[Verdict]) -> None:
        """Count item ``i`` of a sequential level: its samples into the tallies and pairs,
        its answer into the gate's test; decide the gate when that test settles (or the
        level is complete), settle the level when every test of it has."""
        item = level.items[i]
        for outcome in item:
            self._count(level, outcome)
        level.counted_items += 1
        answered = [o for o in item if o.error is None and o.correct is not None]
        seq = level.seq
        if seq is not None and seq.decision is Decision.CONTINUE and answered and level.fresh[i]:
            values = [(bool(o.correct), sample_credit(o.correct, o.score)) for o in answered]
            seq.update(level.spec.rule.gauge.item_value(values, level.repeats))
        complete = level.counted_items >= level.total_items
        pair = level.pair
        if complete and pair is not None and pair.decision is Decision.CONTINUE:
            # Every item is in, but repeated problems were not fed: the test has all the
            # pairs it will get, so it ends as at its n (today's fixed-n p-value decides).
            pair.n = max(pair.t, 1)
            pair.decision, pair.how = Decision.FIXED, "fixed-n"
        gate = level.gate_id
        settled = seq is not None and (seq.decision is not Decision.CONTINUE or complete)
        if gate is not None and settled and self._open(gate):
            out.append(self._decide(gate, model, level))
        tests = [t for t in (level.seq, level.pair) if t is not None]
        if tests and not complete and all(t.decision is not Decision.CONTINUE for t in tests):
            self._settle((model, level.spec.where), level)

    def _advance(self, where: Where) -> None:
        """Tell the run how far each open sequential level of ``where`` may now ask: the
        items counted plus the fewest more that could settle it (every test of a level must
        settle, so the most of its tests'); a live baseline's level, as far as its
        candidates' levels (its answers are read only by their comparisons)."""
        items: dict[str, int] = {}
        for (model, w), level in self._levels.items():
            if w == where and level.sequential and level.stop is None:
                items[model] = level.counted_items + _allowance(level, self.lookahead)
        if self.baseline in items:
            compared = [
                upto
                for (m, w), lv in self._levels.items()
                if w == where and lv.pair and (upto := items.get(m)) is not None
            ]
            if compared:
                items[self.baseline] = max(compared)
        for model, upto in items.items():
            level = self._levels[(model, where)]
            frontier = min(upto, level.total_items) * level.repeats
            if frontier != level.frontier:
                level.frontier = frontier
                self._moved.append(((model, where), frontier))

    def _settle(self, key: Key, level: PlannedLevel) -> None:
        """No more of this level is needed: answers taken but not counted were paid for past
        the stop."""
        level.stop = level.counted_items
        past = [o for item in level.items[level.stop :] for o in item]
        past += level.current + [level.waiting[p] for p in sorted(level.waiting)]
        level.late += len(past)
        self.uncounted.update(sample_key(o) for o in past)
        self.discarded += past
        del level.items[level.stop :]
        level.current, level.waiting = [], {}
        self._settled.append(key)

    def _open(self, vid: str) -> bool:
        """A selected verdict not yet reported."""
        return vid not in self.reported and (self.selected is None or vid in self.selected)


def _allowance(level: PlannedLevel, lookahead: int) -> int:
    """Items past those counted that ``level`` may need at once: its open tests' fewest
    answers to settle (the most of them), or every item left when it has no open test."""
    tests = [
        t for t in (level.seq, level.pair) if t is not None and t.decision is Decision.CONTINUE
    ]
    if not tests:
        return level.total_items - level.counted_items
    return max(t.fewest(lookahead) for t in tests)


def opening(
    rule: GateRule,
    size: int,
    *,
    repeats: int = 1,
    gate: bool = True,
    compared: bool = False,
    family: int = 1,
    lookahead: int = 16,
) -> int:
    """How many samples of a sequential level a run may ask before the ledger has counted
    any (:meth:`Ledger.moved` says the rest): the fewest answers that could settle its
    gate (``gate``) and its comparison (``compared``), the most of the two, in samples."""
    items = size // max(1, repeats)
    if items < 1:
        return size
    tests: list[ThresholdSequence | PairedSequence] = []
    if gate and rule.min_accuracy is not None:
        tests.append(ThresholdSequence.for_rule(rule, items, repeats=repeats))
    if compared:
        tests.append(PairedSequence.for_rule(rule, items, family=family))
    if not tests:
        return size
    allowed = max(t.fewest(lookahead) for t in tests)
    return max(1, allowed) * max(1, repeats)
