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
from typing import Any

from ..core import Outcome
from .comparison import Comparison, ItemScore, PairAnswer, PairKey, adjust, compare, item_scores
from .drift import DriftBaseline
from .inorder import InOrder
from .levels import Key, PlannedLevel, StoredBaseline, sample_key
from .rules import GateSpec
from .sequential import Decision
from .threshold import GateResult, LevelStats, decide_gates, marginal
from .verdicts import (
    INFRASTRUCTURE_ID,
    Tally,
    Verdict,
    comparison_verdict,
    deferred_verdict,
    gate_verdict,
    infrastructure_message,
    undecided_verdict,
)

# ``StoredBaseline`` is in the Ledger's signature (its home is ``gates.levels``).
__all__ = ["Ledger", "StoredBaseline"]


class Ledger(InOrder):
    """Decides every verdict of one run or one merge (see the module docstring).

    ``hint`` ends a not-decided verdict's message (what to do: select the whole level, give
    the missing shard's file). ``baseline`` names a live baseline model (its answers are fed
    like any other); ``stored`` is a baseline read from a file instead. ``defer_gates`` /
    ``defer_comparisons``: why those verdicts are left to ``pytest-reasoning gate`` (None: they
    are decided here). ``merged``: fed from results files, where a level that lacks its last
    samples may have been run sequentially (:meth:`missing`). Its sequential levels are fed in
    collection order by its base, :class:`~.inorder.InOrder`."""

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
        self._levels: dict[Key, PlannedLevel] = {}
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
            level = self._levels[key] = PlannedLevel(spec, task)
        level.size = size or level.size
        level.repeats, level.family = max(1, repeats), max(1, family)
        for vid, attr in ((gate_id, "gate_id"), (comparison_id, "comparison_id")):
            if vid and getattr(level, attr) is None:
                setattr(level, attr, vid)
                self._verdict_level[vid] = key
                self.order.setdefault(vid, len(self.order))
        if level.sequential and level.taken == 0 and level.seq is None and level.pair is None:
            self._start(level)

    @property
    def levels(self) -> dict[Key, LevelStats]:
        """Each level that got at least one sample: its tallies."""
        return {k: lv.stats for k, lv in self._levels.items() if lv.stats is not None}

    def incomplete(self) -> dict[tuple[str, str, str, str], tuple[int, int]]:
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
            level = self._levels[key] = PlannedLevel(spec, outcome.task)
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

    def _decide(self, gate: str, model: str, level: PlannedLevel) -> Verdict:
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
        """Every verdict not yet reported: gates of incomplete levels (not decided), the
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
                out.append(undecided_verdict(gate, model, ran, size, why or self.hint))
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
                    out[cid] = undecided_verdict(cid, candidate, ran, size, self.hint, "comparison")
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
                out[cid] = undecided_verdict(cid, candidate, 0, counts[cid][1], self.hint)
        return out

    def infrastructure(self, *, missing_fails: bool = False) -> str | None:
        """The error budget's one line (None while it holds); with ``missing_fails``, levels
        with fewer samples than planned fail it too."""
        missing = self.incomplete() if missing_fails else None
        causes = self.missing()
        why = None
        if missing and all(k in causes for k in missing):  # the rows say why, for each
            why = "; ".join(dict.fromkeys(causes[k] for k in missing))
        return infrastructure_message(
            list(self.levels.values()), self.max_errors, self.tally, missing=missing, why=why
        )
