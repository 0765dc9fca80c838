"""The one verdict ledger: every gate and comparison of a run is decided here, whether the
samples come report by report (a pytest run's controller) or from results files
(``pytest-reasoning gate``), so the two can never disagree.

It is told what each level should hold (:meth:`Ledger.plan`: its size, its gate's and its
comparison's verdict ids), fed one answered sample at a time (:meth:`Ledger.add`), and decides:

- a **gate** as soon as its level is whole (every sample in), on its own tallies; a level with
  fewer samples than planned is *not decided* (``not decided (N of M samples)``), never decided
  on fewer samples;
- the **comparisons** against a baseline at the end, per candidate, Holm-corrected across the
  candidate's compared levels — the *family*. A family is decided only when every one of its
  levels is whole: the family a merge with a missing shard could form is smaller than the full
  run's, and Holm's correction over fewer levels is weaker (a p-value adjusted by 3 instead of
  9), so a verdict on it could pass what the full run fails. Such a family reads "not decided";
- the run-wide **error budget** (infrastructure, not the model).

**Sequential levels** (``sequential: true``, docs/sequential.md) are fed in collection order
(``position``; answers that arrive early wait) to the anytime-valid tests of
``gates.sequential``; a level *settles* as soon as its gate and its comparison are decided,
and is then whole at that point: later answers are counted as paid past the stop, never in a
verdict or a figure, and the run is told (:meth:`Ledger.settled`) so that it stops asking. The
stopping point depends only on the answers in collection order, so a run with or without
``-n``, a shard and a merge settle the same level at the same sample. Until then the run is
told how far it may ask ahead (:meth:`Ledger.moved`): no further than the fewest answers that
could settle the level, so that no answer it asks is one the verdict could do without.

Deferred verdicts (``--reasoning-defer-gates``; comparisons in a shard) are reported as such.
Pure: no pytest, no files; a row read from a file is type-checked before it gets here
(``gates.rows``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..core import Outcome
from .clustered import majority_correct
from .comparison import Comparison, ItemScore, PairAnswer, PairKey, adjust, compare, item_scores
from .drift import DriftBaseline
from .rules import GateRule, GateSpec
from .sequential import Decision, PairedSequence, ThresholdSequence
from .threshold import GateResult, LevelStats, decide_gates, item_value, marginal
from .verdicts import (
    INFRASTRUCTURE_ID,
    Tally,
    Verdict,
    comparison_verdict,
    deferred_verdict,
    gate_verdict,
    infrastructure_message,
    partial_verdict,
)

__all__ = ["Ledger", "StoredBaseline", "opening", "sample_key"]

Where = tuple[str, str, str]  # (suite, entry, level)
Key = tuple[str, Where]  # (model, where)
# A stored baseline (--reasoning-baseline-results): its answers per item and prompt (an
# ItemScore, or a bare verdict: one sample), its name.
StoredBaseline = tuple[Mapping[PairKey, ItemScore | bool | None], str]


def sample_key(sample: Outcome | Mapping[str, Any]) -> tuple[Any, ...]:
    """A sample (an Outcome, or its results row) as :attr:`Ledger.uncounted` names it."""
    if isinstance(sample, Outcome):
        return (sample.model, sample.suite, sample.entry, sample.level, sample.item_id)
    return tuple(sample.get(k) for k in ("model", "suite", "entry", "level", "item_id"))


@dataclass
class _Level:
    """What one model's level should hold and what it holds so far."""

    spec: GateSpec
    task: str
    size: int = 0  # its samples (0: not known yet)
    received: int = 0  # samples in (with a sequential level's waiting and late ones)
    gate_id: str | None = None
    comparison_id: str | None = None
    stats: LevelStats | None = None
    repeats: int = 1  # samples per item
    family: int = 1  # levels under the candidate's Holm correction (sequential comparisons)
    # A sequential level: answers taken in collection order, item by item (``repeats``
    # samples each); an item is *counted* (tallies, pairs, tests) once its comparison can
    # read it, so that what a level counts never depends on the order answers arrived in.
    waiting: dict[int, Outcome] = field(default_factory=dict)  # arrived early
    taken: int = 0  # samples taken in order
    current: list[Outcome] = field(default_factory=list)  # the item being taken
    items: list[list[Outcome]] = field(default_factory=list)  # taken, not yet counted
    verdicts: list[bool | None] = field(default_factory=list)  # per taken item (majority)
    counts: list[tuple[int, int]] = field(default_factory=list)  # per taken item: right, answered
    keys: list[PairKey] = field(default_factory=list)  # per taken item: its pairing key
    # Per taken item: whether its problem (up to renaming) is new in the level. Only new
    # problems are fed to the sequential tests: another item of a problem already fed is not
    # independent evidence (issue 41); it is counted in the tallies, clustered with it.
    fresh: list[bool] = field(default_factory=list)
    asked: set[str] = field(default_factory=set)  # problems taken so far
    counted_items: int = 0
    stop: int | None = None  # items counted when it settled
    late: int = 0  # answers past the stop (paid, counted nowhere else)
    last: int = -1  # the furthest position answered (why a merged level lacks samples)
    not_asked: str | None = None  # the first not-asked sample's error: why it was not asked
    frontier: int = -1  # the samples the run was last told it may ask (see Ledger.moved)
    seq: ThresholdSequence | None = None
    pair: PairedSequence | None = None  # a candidate's comparison

    @property
    def total_items(self) -> int:
        return self.size // self.repeats

    @property
    def sequential(self) -> bool:
        return self.spec.rule.sequential and self.size > 0

    @property
    def whole(self) -> bool:
        """Every sample in — or, sequential, every sample up to where it settled."""
        if self.size <= 0:
            return False
        if self.sequential:
            return self.stop is not None or self.counted_items >= self.total_items
        return self.received >= self.size

    @property
    def counted(self) -> int:
        """Samples its figures and verdicts count (a sequential level: those counted)."""
        return self.counted_items * self.repeats if self.sequential else self.received


class Ledger:
    """Decides every verdict of one run or one merge (see the module docstring).

    ``hint`` ends a not-decided verdict's message (what to do: select the whole level, give
    the missing shard's file). ``baseline`` names a live baseline model (its answers are fed
    like any other); ``stored`` is a baseline read from a file instead. ``defer_gates`` /
    ``defer_comparisons``: why those verdicts are left to ``pytest-reasoning gate`` (None: they
    are decided here). ``merged``: fed from results files, where a level that lacks its last
    samples may have been run sequentially (:meth:`missing`)."""

    def __init__(
        self,
        *,
        hint: str,
        baseline: str | None = None,
        stored: StoredBaseline | None = None,
        defer_gates: str | None = None,
        defer_comparisons: str | None = None,
        max_errors: int = 0,
        merged: bool = False,
        lookahead: int = 16,
    ) -> None:
        self.hint = hint
        self.merged = merged
        self.lookahead = lookahead  # the most items a level may ask ahead of those counted
        self.baseline = baseline
        self.stored = stored
        self.defer_gates = defer_gates
        self.defer_comparisons = defer_comparisons
        self.max_errors = max_errors
        self._levels: dict[Key, _Level] = {}
        self._verdict_level: dict[str, Key] = {}  # gate or comparison id → its level
        # The collection's verdict ids (kind, model), known before any sample arrives.
        self.expected: dict[str, tuple[str, str]] = {}
        self.selected: set[str] | None = None  # None: every verdict counts as selected
        self.order: dict[str, int] = {}  # verdict id → the order it was planned in
        self.reported: set[str] = set()
        self.gates: list[GateResult] = []
        self.comparisons: list[Comparison] = []
        self.pairs: list[tuple[PairAnswer, GateSpec]] = []  # kept only when comparing
        self.tally = Tally()
        self._settled: list[Key] = []  # sequential levels settled since last asked
        # Answers past a sequential level's stop (``sample_key``): paid for, in no verdict,
        # and so in no table or figure either (a family's breakdown leaves them out).
        self.uncounted: set[tuple[Any, ...]] = set()
        self._stored_repeated: bool | None = None  # the stored baseline has repeats
        self._moved: list[tuple[Key, int]] = []  # frontiers moved since last asked
        # Outcomes taken in but not counted when their level settled (paid, not needed).
        self.discarded: list[Outcome] = []
        self.drift: DriftBaseline | None = None  # --reasoning-drift: each model's stored run

    @property
    def comparing(self) -> bool:
        return self.baseline is not None or self.stored is not None or self.drift is not None

    def use_drift(self, drift: DriftBaseline) -> None:
        """Check each model against its own stored run (``gates.drift``) instead of comparing
        it with a baseline: its comparisons are drift verdicts, decided at the end."""
        self.drift = drift

    def use_stored(self, stored: StoredBaseline) -> None:
        """Compare against a baseline read from a file (read once, before any sample)."""
        self.stored = stored
        self._stored_repeated = None

    # -- what the run holds ------------------------------------------------------------------
    def select(
        self, ids: Iterable[str], expected: Mapping[str, tuple[str, str]] | None = None
    ) -> None:
        """The node ids that will run (after every selection); ``expected``: the verdict
        items among them, ``id → (kind, model)``, where the collection is at hand."""
        self.selected = set(ids)
        for vid, kind_model in (expected or {}).items():
            self.expected[vid] = kind_model
            self.order.setdefault(vid, len(self.order))

    def plan(
        self,
        model: str,
        spec: GateSpec,
        task: str,
        size: int,
        *,
        gate_id: str | None = None,
        comparison_id: str | None = None,
        repeats: int = 1,
        family: int = 1,
    ) -> None:
        """What ``model``'s level ``spec`` holds: ``size`` samples (``repeats`` per item),
        the verdict ids of its gate and its comparison (``family``: how many levels that
        comparison's Holm correction spans). Planning again updates it (a live run plans from
        each sample's report)."""
        key = (model, spec.where)
        level = self._levels.get(key)
        if level is None:
            level = self._levels[key] = _Level(spec, task)
        level.size = size or level.size
        level.repeats, level.family = max(1, repeats), max(1, family)
        for vid, attr in ((gate_id, "gate_id"), (comparison_id, "comparison_id")):
            if vid and getattr(level, attr) is None:
                setattr(level, attr, vid)
                self._verdict_level[vid] = key
                self.order.setdefault(vid, len(self.order))
        if level.sequential and level.taken == 0 and level.seq is None and level.pair is None:
            self._start(level)

    def _start(self, level: _Level) -> None:
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

    @property
    def levels(self) -> dict[Key, LevelStats]:
        """Each level that got at least one sample: its tallies."""
        return {k: lv.stats for k, lv in self._levels.items() if lv.stats is not None}

    def partial(self) -> dict[tuple[str, str, str, str], tuple[int, int]]:
        """``(model, suite, entry, level) → (samples in, samples of the level)`` for every
        planned level that is not whole."""
        return {
            (model, *where): (lv.counted, lv.size)
            for (model, where), lv in self._levels.items()
            if lv.size and not lv.whole
        }

    def missing(self) -> dict[tuple[str, str, str, str], str]:
        """Per level that is not whole, why, where its samples say: samples not asked (a
        budget reached, a model stopped) or, merged, a level whose last samples have no row
        (the shards ran it sequentially and it settled early, or a run stopped). Levels the
        samples say nothing of are left to the ledger's ``hint``."""
        out = {}
        for (model, where), lv in self._levels.items():
            if not lv.size or lv.whole:
                continue
            if lv.not_asked is not None:
                count = lv.stats.not_asked if lv.stats else 0
                why = lv.not_asked.removeprefix("not asked: ")
                out[(model, *where)] = f"{count} not asked: {why}"
            elif self.merged and not lv.sequential and lv.received and lv.last + 1 < lv.size:
                out[(model, *where)] = (
                    f"no row after sample {lv.last + 1} of {lv.size}: a sequential level that "
                    "settled early (merge it with --reasoning-sequential, or the suite's "
                    "`sequential: true`), a run that stopped, or a results file not given"
                )
        return out

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

    # -- feeding -----------------------------------------------------------------------------
    def add(
        self, outcome: Outcome, spec: GateSpec, position: int | None = None
    ) -> tuple[list[Verdict], str | None]:
        """One answered sample of a planned level (an unplanned one is planned with an
        unknown size); ``position``: its place in the level's collection order (a sequential
        level needs it). Returns the verdicts decided by it (its level's gate when the level
        is now whole, or settled) and, when this sample's error is the first to stop its
        model, that error."""
        key = (outcome.model, spec.where)
        level = self._levels.get(key)
        if level is None:
            level = self._levels[key] = _Level(spec, outcome.task)
        if level.stats is None:
            level.stats = LevelStats(outcome.model, level.spec, outcome.task)
        stopped = self.tally.add(outcome)
        if outcome.error_kind == "not_asked":  # never asked: its level is not whole
            level.stats.add(outcome)
            level.not_asked = level.not_asked or outcome.error
            return [], stopped
        level.received += 1
        level.last = max(level.last, -1 if position is None else position)
        if not level.sequential or position is None:
            self._count(level, outcome)
            gate = level.gate_id
            if gate is not None and level.received == level.size and self._open(gate):
                return [self._decide(gate, outcome.model, level)], stopped
            return [], stopped
        if level.stop is not None and position >= level.stop * level.repeats:
            level.late += 1  # paid for before the run heard the level had settled
            self.uncounted.add(sample_key(outcome))
            return [], stopped
        level.waiting[position] = outcome
        self._take(level)
        decided = self._count_ready(spec.where)
        self._advance(spec.where)
        return decided, stopped

    def _count(self, level: _Level, outcome: Outcome) -> None:
        assert level.stats is not None
        level.stats.add(outcome)
        if self.comparing:
            self.pairs.append((PairAnswer.of(outcome), level.spec))

    def _take(self, level: _Level) -> None:
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
    def _note_problem(level: _Level, problem: str) -> None:
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

    def _theirs(self, where: Where, level: _Level, i: int) -> tuple[bool, ItemScore | None]:
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

    def _baseline_may_count(self, where: Where, i: int, base: _Level) -> bool:
        """The live baseline's item ``i`` is counted once every candidate compared on it
        has counted it (or settled before it); when all settled before it, it settles."""
        compared = [lv for (m, w), lv in self._levels.items() if w == where and lv.pair]
        if not compared:
            return True
        if all(lv.stop is not None and lv.stop <= i for lv in compared):
            self._settle((self.baseline or "", where), base)
            return False
        return all(lv.counted_items > i or lv.stop is not None for lv in compared)

    def _count_item(self, model: str, level: _Level, i: int, out: list[Verdict]) -> None:
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
            values = [
                (bool(o.correct), o.score if o.score is not None else float(bool(o.correct)))
                for o in answered
            ]
            seq.update(item_value(level.spec.rule, values, level.repeats))
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

    def _settle(self, key: Key, level: _Level) -> None:
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

    def _decide(self, gate: str, model: str, level: _Level) -> Verdict:
        self.reported.add(gate)
        if self.defer_gates is not None:
            return deferred_verdict(gate, model, self.defer_gates)
        assert level.stats is not None
        seq = level.seq
        if seq is not None and seq.decision in (Decision.PASS, Decision.FAIL):
            # A curtailed pass is the fixed-n rule's, marked as it would be; an anytime pass
            # is significant by construction (its anytime lower bound cleared the line).
            passed = seq.decision is Decision.PASS
            weak = passed and seq.how == "curtailed" and marginal(level.stats)
            result = GateResult(level.stats, passed, seq.reason, weak)
        else:
            result = decide_gates([level.stats])[0]
        self.gates.append(result)
        return gate_verdict(gate, result)

    def undecided(self) -> int:
        """Selected gates not reported yet (a run stopped early leaves them undecided)."""
        return len(self._ids("gate"))

    # -- the end -----------------------------------------------------------------------------
    def finish(self, *, missing_fails: bool = False) -> list[Verdict]:
        """Every verdict not yet reported: gates of partial levels (not decided), the
        comparisons, and the error budget's verdict when it is exceeded. ``missing_fails``
        (a merge): levels with fewer samples than planned fail the run as infrastructure."""
        out: list[Verdict] = []
        missing = self.missing()
        for gate in self._ids("gate"):
            key = self._verdict_level.get(gate)
            level = self._levels.get(key) if key else None
            model = key[0] if key else self.expected[gate][1]
            if self.defer_gates is not None:
                self.reported.add(gate)
                out.append(deferred_verdict(gate, model, self.defer_gates))
            elif level is not None and level.whole and level.stats is not None:
                out.append(self._decide(gate, model, level))  # planned whole, never fed
            else:
                self.reported.add(gate)
                ran, size = (level.counted, level.size) if level else (0, 0)
                why = missing.get((model, *key[1])) if key else None
                out.append(partial_verdict(gate, model, ran, size, why or self.hint))
        out += self._finish_comparisons()
        message = self.infrastructure(missing_fails=missing_fails)
        if message is not None:
            out.append(Verdict(INFRASTRUCTURE_ID, "", "failed", message, (), "infrastructure"))
        return out

    def _ids(self, kind: str) -> list[str]:
        """The open verdicts of ``kind``, in planning order."""
        attr = "gate_id" if kind == "gate" else "comparison_id"
        ids = {getattr(lv, attr) for lv in self._levels.values()} - {None}
        ids |= {v for v, (k, _) in self.expected.items() if k == kind}
        open_ids = [v for v in ids if v is not None and self._open(v)]
        return sorted(open_ids, key=lambda v: self.order.get(v, len(self.order)))

    def _finish_comparisons(self) -> list[Verdict]:
        ids = self._ids("comparison")
        if not ids:
            return []
        if self.defer_comparisons is not None:
            self.reported.update(ids)
            return [
                deferred_verdict(c, self._model(c), self.defer_comparisons, "comparison")
                for c in ids
            ]
        families: dict[str, list[str]] = {}
        for cid in ids:
            families.setdefault(self._model(cid), []).append(cid)
        decided: dict[str, Verdict] = {}
        for candidate, members in families.items():
            decided.update(self._family(candidate, members))
        self.reported.update(ids)
        return [decided[c] for c in ids]

    def _model(self, vid: str) -> str:
        key = self._verdict_level.get(vid)
        return key[0] if key else self.expected.get(vid, ("", ""))[1]

    def _compared(self, cid: str) -> tuple[int, int, bool]:
        """(samples in, samples of the level, whole) of a comparison: the candidate's, and
        with a live baseline the baseline's too (a stored baseline holds what it holds)."""
        key = self._verdict_level.get(cid)
        if key is None:
            return 0, 0, False
        level = self._levels[key]
        ran, size, whole = level.counted, level.size, level.whole
        if self.baseline is not None:
            base = self._levels.get((self.baseline, key[1]))
            if base is None or not base.whole:
                ran = min(ran, base.counted if base is not None else 0)
                whole = False
        return ran, size, whole

    def _family(self, candidate: str, members: list[str]) -> dict[str, Verdict]:
        """One candidate's comparisons: decided together when every level is whole."""
        counts = {cid: self._compared(cid) for cid in members}
        short = [cid for cid, (_, _, whole) in counts.items() if not whole]
        if short:
            out = {}
            for cid in members:
                ran, size, _ = counts[cid]
                if cid in short:
                    out[cid] = partial_verdict(cid, candidate, ran, size, self.hint, "comparison")
                    continue
                names = ", ".join(c.partition("::")[2] or c for c in short[:3])
                more = f" and {len(short) - 3} more" if len(short) > 3 else ""
                out[cid] = Verdict(
                    cid,
                    candidate,
                    "skipped",
                    f"{cid.partition('::')[2] or cid}: not decided: Holm's correction spans "
                    f"the {len(members)} compared level(s) of {candidate}, and {len(short)} "
                    f"of them are not whole ({names}{more}); a smaller family would correct "
                    f"less than the full run ({self.hint})",
                    (),
                    "comparison",
                )
            return out
        wheres = {self._verdict_level[cid][1]: cid for cid in members}
        rows = [(a, s) for a, s in self.pairs if a.model == candidate and s.where in wheres]
        found: list[Comparison]
        if self.drift is not None:  # each model against its own stored run
            found = list(self.drift.check(rows, candidate))
        else:
            if self.baseline is not None:
                name = self.baseline
                base: Mapping[PairKey, ItemScore | bool | None] = item_scores(
                    a for a, _ in self.pairs if a.model == name
                )
            else:
                assert self.stored is not None
                base, name = self.stored
            found = compare(rows, base, name)
        for c in found:  # a sequential level's p-value stays valid where it stopped
            pair = self._levels[(candidate, c.spec.where)].pair
            if pair is not None:
                fixed = c.p_regression if pair.decision is Decision.FIXED else None
                c.p_regression = pair.p_value(fixed)
                if pair.decision is not Decision.FIXED:
                    c.settled = pair.reason
        adjust(found)
        self.comparisons += found
        out = {wheres[c.spec.where]: comparison_verdict(wheres[c.spec.where], c) for c in found}
        for cid in members:  # a level whose samples all failed pairs with nothing
            if cid not in out:
                out[cid] = partial_verdict(cid, candidate, 0, counts[cid][1], self.hint)
        return out

    def infrastructure(self, *, missing_fails: bool = False) -> str | None:
        """The error budget's one line (None while it holds); with ``missing_fails``, levels
        with fewer samples than planned fail it too."""
        missing = self.partial() if missing_fails else None
        causes = self.missing()
        why = None
        if missing and all(k in causes for k in missing):  # the rows say why, for each
            why = "; ".join(dict.fromkeys(causes[k] for k in missing))
        return infrastructure_message(
            list(self.levels.values()), self.max_errors, self.tally, missing=missing, why=why
        )


def _allowance(level: _Level, lookahead: int) -> int:
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
