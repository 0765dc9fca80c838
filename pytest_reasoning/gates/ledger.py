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

Deferred verdicts (``--reasoning-defer-gates``; comparisons in a shard) are reported as such.
Pure: no pytest, no files; a row read from a file is type-checked before it gets here
(``gates.rows``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..core import Outcome
from .comparison import Comparison, PairAnswer, PairKey, baseline_answers, compare
from .rules import GateSpec
from .threshold import GateResult, LevelStats, decide_gates
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

__all__ = ["Ledger", "StoredBaseline"]

Where = tuple[str, str, str]  # (suite, entry, level)
Key = tuple[str, Where]  # (model, where)
# A stored baseline (--reasoning-baseline-results): its verdict per item and prompt, its name.
StoredBaseline = tuple[Mapping[PairKey, bool | None], str]


@dataclass
class _Level:
    """What one model's level should hold and what it holds so far."""

    spec: GateSpec
    task: str
    size: int = 0  # its samples (0: not known yet)
    ran: int = 0  # samples in
    gate_id: str | None = None
    comparison_id: str | None = None
    stats: LevelStats | None = None

    @property
    def whole(self) -> bool:
        return self.size > 0 and self.ran >= self.size


class Ledger:
    """Decides every verdict of one run or one merge (see the module docstring).

    ``hint`` ends a not-decided verdict's message (what to do: select the whole level, give
    the missing shard's file). ``baseline`` names a live baseline model (its answers are fed
    like any other); ``stored`` is a baseline read from a file instead. ``defer_gates`` /
    ``defer_comparisons``: why those verdicts are left to ``pytest-reasoning gate`` (None: they
    are decided here)."""

    def __init__(
        self,
        *,
        hint: str,
        baseline: str | None = None,
        stored: StoredBaseline | None = None,
        defer_gates: str | None = None,
        defer_comparisons: str | None = None,
        max_errors: int = 0,
    ) -> None:
        self.hint = hint
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

    @property
    def comparing(self) -> bool:
        return self.baseline is not None or self.stored is not None

    def use_stored(self, stored: StoredBaseline) -> None:
        """Compare against a baseline read from a file (read once, before any sample)."""
        self.stored = stored

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
    ) -> None:
        """What ``model``'s level ``spec`` holds: ``size`` samples, the verdict ids of its
        gate and its comparison. Planning again updates it (a live run plans from each
        sample's report)."""
        key = (model, spec.where)
        level = self._levels.get(key)
        if level is None:
            level = self._levels[key] = _Level(spec, task)
        level.size = size or level.size
        for vid, attr in ((gate_id, "gate_id"), (comparison_id, "comparison_id")):
            if vid and getattr(level, attr) is None:
                setattr(level, attr, vid)
                self._verdict_level[vid] = key
                self.order.setdefault(vid, len(self.order))

    @property
    def levels(self) -> dict[Key, LevelStats]:
        """Each level that got at least one sample: its tallies."""
        return {k: lv.stats for k, lv in self._levels.items() if lv.stats is not None}

    def partial(self) -> dict[tuple[str, str, str, str], tuple[int, int]]:
        """``(model, suite, entry, level) → (samples in, samples of the level)`` for every
        planned level with fewer samples than it has."""
        return {
            (model, *where): (lv.ran, lv.size)
            for (model, where), lv in self._levels.items()
            if lv.ran < lv.size
        }

    # -- feeding -----------------------------------------------------------------------------
    def add(self, outcome: Outcome, spec: GateSpec) -> tuple[list[Verdict], str | None]:
        """One answered sample of a planned level (an unplanned one is planned with an
        unknown size). Returns the verdicts decided by it (its level's gate when the level
        is now whole) and, when this sample's error is the first to stop its model, that
        error."""
        key = (outcome.model, spec.where)
        level = self._levels.get(key)
        if level is None:
            level = self._levels[key] = _Level(spec, outcome.task)
        if level.stats is None:
            level.stats = LevelStats(outcome.model, level.spec, outcome.task)
        level.stats.add(outcome)
        level.ran += 1
        stopped = self.tally.add(outcome)
        if self.comparing:
            self.pairs.append((PairAnswer.of(outcome), level.spec))
        gate = level.gate_id
        if gate is not None and level.ran == level.size and self._open(gate):
            return [self._decide(gate, outcome.model, level)], stopped
        return [], stopped

    def _open(self, vid: str) -> bool:
        """A selected verdict not yet reported."""
        return vid not in self.reported and (self.selected is None or vid in self.selected)

    def _decide(self, gate: str, model: str, level: _Level) -> Verdict:
        self.reported.add(gate)
        if self.defer_gates is not None:
            return deferred_verdict(gate, model, self.defer_gates)
        assert level.stats is not None
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
        for gate in self._ids("gate"):
            key = self._verdict_level.get(gate)
            level = self._levels.get(key) if key else None
            model = key[0] if key else self.expected[gate][1]
            self.reported.add(gate)
            if self.defer_gates is not None:
                out.append(deferred_verdict(gate, model, self.defer_gates))
            elif level is not None and level.whole and level.stats is not None:
                out.append(self._decide(gate, model, level))  # planned whole, never fed
            else:
                ran, size = (level.ran, level.size) if level else (0, 0)
                out.append(partial_verdict(gate, model, ran, size, self.hint))
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

    def _compared(self, cid: str) -> tuple[int, int]:
        """(samples in, samples of the level) of a comparison: the candidate's, and with a
        live baseline the fewer of the two (a stored baseline holds what it holds)."""
        key = self._verdict_level.get(cid)
        if key is None:
            return 0, 0
        level = self._levels[key]
        ran, size = level.ran, level.size
        if self.baseline is not None:
            base = self._levels.get((self.baseline, key[1]))
            base_ran = base.ran if base is not None else 0
            base_size = base.size if base is not None else size
            if base_ran < base_size:
                ran = min(ran, base_ran)
        return ran, size

    def _family(self, candidate: str, members: list[str]) -> dict[str, Verdict]:
        """One candidate's comparisons: decided together when every level is whole."""
        counts = {cid: self._compared(cid) for cid in members}
        short = [cid for cid, (ran, size) in counts.items() if not (size and ran >= size)]
        if short:
            out = {}
            for cid in members:
                ran, size = counts[cid]
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
        if self.baseline is not None:
            name = self.baseline
            base: Mapping[PairKey, bool | None] = baseline_answers(
                a for a, _ in self.pairs if a.model == name
            )
        else:
            assert self.stored is not None
            base, name = self.stored
        found = compare(rows, base, name)
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
        return infrastructure_message(
            list(self.levels.values()), self.max_errors, self.tally, missing=missing
        )
