"""Suite files as pytest collectors: one test item per (model, suite entry, level, seed,
index), then one *verdict* item per gate (and, with a baseline, per comparison), so
``--collect-only`` lists gates and the counts add up. Each sample's report carries a typed
``SampleReport`` (``sample.py``) to the controller, as JSON in ``user_properties``, which xdist
replays on the controller like any report.

Names: ``entry[LEVEL-sSEED-INDEX]`` (``-MODEL`` appended with several models),
``entry[LEVEL-gate]`` and ``entry[LEVEL-vs-baseline]``. Verdict items never run in the run
loop: the controller decides a gate as soon as the last sample of its level is in and reports
it under the verdict item's node id (see ``controller.py``)."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..config import Address, EntrySpec, LevelSpec, addresses, load_suite
from ..core import Item, Outcome
from ..errors import ReasoningError, clip, inert_json
from ..evaluate import Evaluator
from ..gates.inorder import opening
from ..gates.verdicts import comparison_name, drift_name, gate_name
from .progress import LIVE
from .sample import PROMPT, PROPERTY, LevelRef, SampleReport, UnreadableReport
from .state import STATE, RunState
from .xdist import worker_upcoming

__all__ = [
    "JUNIT_TEXT",
    "LOOKAHEAD_PER_SLOT",
    "NOT_NEEDED",
    "TURN_WAIT_S",
    "ReasoningItem",
    "ReasoningSuiteFile",
    "VerdictItem",
    "complete_levels",
    "domain",
    "lookahead",
    "teststatus",
]

# Characters of any one text (a response, an extracted answer) the JUnit XML keeps of an
# outcome; the results file has them whole.
JUNIT_TEXT = 1_000
LOOKAHEAD_PER_SLOT = 4  # items built and asked ahead, per slot of the concurrency window
TURN_WAIT_S = 300.0  # the longest a worker's sample waits for its sequential level's frontier
# Why a sample of a sequential level was not asked (the report's skip reason).
NOT_NEEDED = "not needed: a sequential test settled its level (docs/sequential.md)"


def domain(name: str, model: str) -> str:
    """The title pytest shows for an item (``-v`` lines, failure headers). It must not be a
    suffix of the node id: pytest would print a suffix's dots as ``::`` (``dyval::arithmetic``),
    an id that selects nothing when pasted back. So the model follows the name."""
    return f"{name} ({model})"


class ReasoningSuiteFile(pytest.File):
    """A suite YAML: per model, each level's samples followed by the level's gate; then, with
    a baseline, one comparison per (candidate, entry, level)."""

    def collect(self) -> Iterator[pytest.Item]:
        state = self.config.stash[STATE]
        rel = (
            self.path.relative_to(self.config.rootpath)
            if self.path.is_relative_to(self.config.rootpath)
            else self.path
        )
        opts = state.options
        suite = load_suite(
            self.path,
            samples=opts.samples,
            seed=opts.seed,
            display=str(rel),
            repeats=opts.repeats,
            sequential=opts.sequential,
        )
        levels: dict[tuple[str, str], tuple[EntrySpec, LevelSpec, list[Address]]] = {}
        for a in addresses(suite):
            levels.setdefault((a.entry.id, a.level.level), (a.entry, a.level, []))[2].append(a)
        models = state.models
        multi = len(models) > 1
        baseline = opts.baseline
        comparing = bool(baseline or opts.baseline_results or opts.drift)
        candidates = [m for m in models if m != baseline] if comparing else []
        several = len(candidates) > 1
        # --reasoning-drift: each model against its own stored run, ``entry[LEVEL-drift]``.
        named = drift_name if opts.drift else comparison_name
        samples: dict[tuple[str, str, str], list[ReasoningItem]] = {}
        for model in models:
            for key, (entry, level, addrs) in levels.items():
                gate = None
                if level.rule.min_accuracy is not None and model != baseline:
                    gate = gate_name(entry.id, level.level, model, multi)
                compared = (
                    [named(entry.id, level.level, model, several)]
                    if model in candidates
                    else [named(entry.id, level.level, c, several) for c in candidates]
                    if model == baseline
                    else []
                )
                mine = samples[(model, *key)] = []
                for a in addrs:
                    name = f"{entry.id}[{a.sample}" + (f"-{model}]" if multi else "]")
                    item = ReasoningItem.from_parent(
                        self,
                        name=name,
                        nodeid=self._child_id(name),
                        model=model,
                        address=a,
                        position=len(mine),
                        level_size=len(addrs),
                        gate_id=self._child_id(gate) if gate else None,
                        comparison_id=(
                            self._child_id(compared[0]) if model in candidates else None
                        ),
                    )
                    # ``-k D1-gate`` (or a gate's name) selects the samples the gate needs;
                    # the results' item id (no model in it) selects the sample of each model.
                    item.extra_keyword_matches.update(
                        n for n in (gate, *compared, a.sample_id) if n
                    )
                    mine.append(item)
                    yield item
                if gate:
                    yield VerdictItem.from_parent(
                        self,
                        name=gate,
                        nodeid=self._child_id(gate),
                        model=model,
                        kind="gate",
                        samples=mine,
                    )
        for model in candidates:
            for key in levels:
                entry, level, _ = levels[key]
                name = named(entry.id, level.level, model, several)
                yield VerdictItem.from_parent(
                    self,
                    name=name,
                    nodeid=self._child_id(name),
                    model=model,
                    kind="comparison",
                    samples=samples[(model, *key)] + samples.get((baseline or "", *key), []),
                )

    def _child_id(self, name: str) -> str:
        """A child's node id, given as text: pytest (9) then reads ``entry[LEVEL-…]`` as a
        name with parameters, the same structure it gives the ids in its ``--lf`` cache, so
        ``--lf`` finds our items (built from the name alone, the two would never match)."""
        return f"{self.nodeid}::{name}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ReasoningError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class ReasoningItem(pytest.Item):
    """One generated sample answered by one model. A wrong answer does not fail the item:
    it is reported as WRONG and counted by the level's gate."""

    def __init__(
        self,
        *,
        model: str,
        address: Address,
        position: int = 0,
        level_size: int = 0,
        gate_id: str | None = None,
        comparison_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.address = address
        self.position = position  # its place in its level's collection order
        self.level_size = level_size  # samples of this (model, entry, level)
        self.gate_id = gate_id
        self.comparison_id = comparison_id
        self.add_marker("reasoning")

    @property
    def sample_id(self) -> str:
        return self.address.sample_id

    def build(self) -> Item:
        built = self.config.stash[STATE].built.pop(self.nodeid, None)
        return built if built is not None else self.address.make_item()

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ReasoningError):  # a bad knob: one line, no traceback
            return f"{self.address.entry.id} {self.address.level.level}: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    @property
    def level(self) -> LevelRef:
        a = self.address
        return LevelRef(self.model, a.suite, a.entry.id, a.level.level)

    @property
    def sequential(self) -> bool:
        return self.address.level.rule.sequential

    def runtest(self) -> None:
        state = self.config.stash[STATE]
        evaluator = state.evaluator
        if self.sequential and state.is_worker and self._may_wait(state):
            self._wait_for_turn(state)
        if self.sequential and state.signals.settled(self.level):
            self._asked_ahead(state, evaluator)
            pytest.skip(NOT_NEEDED)
        a = self.address
        item = self.build()
        # This item's call first, then the look-ahead: collection order is answer order,
        # so the first item is answered first and its row written at once.
        future = evaluator.submit(item, self.model, a.repeat)
        if evaluator.model(self.model).calls_model:  # the reference answers instantly
            for built, other in self._ahead(state, evaluator):
                evaluator.submit(built, other.model, other.address.repeat, needed=_need(other))
        live = self.config.stash.get(LIVE, None)  # the waiting line, on a terminal
        if live is not None and not future.done():
            live.wait(future, self.model)
        outcome = evaluator.answer(item, self.model, a.repeat)
        if live is not None:
            live.answered()
        self._carry(state, evaluator, outcome, item)
        # Readable for JUnit consumers: wrong answers stay passing tests (the gate decides),
        # but a dashboard can tell them apart.
        verdict = "error" if outcome.error else "correct" if outcome.correct else "wrong"
        self.user_properties.append(("reasoning.verdict", verdict))
        if outcome.cached:
            self.user_properties.append(("reasoning.cached", "true"))

    def _may_wait(self, state: RunState) -> bool:
        """Not a free answer (the reference solver's), and not a candidate's sample compared
        with a live baseline: that level counts an item only once the baseline (collected
        after it) answered it, so it never waits for that."""
        live = self.comparison_id is not None and state.options.baseline is not None
        return state.evaluator.model(self.model).calls_model and not live

    def _wait_for_turn(self, state: RunState) -> None:
        """Under xdist, a worker's next sample of a sequential level can lie past what the
        level may ask (the earlier ones are another worker's, not counted yet): it waits
        until the level's frontier reaches it or the level settles (then it is not needed).
        The earliest sample not counted is always inside the frontier, it waits on nothing
        collected after it, and every worker runs its samples in collection order, so some
        worker can always go; past TURN_WAIT_S it asks anyway."""
        delay, waited = 0.01, 0.0
        while waited < TURN_WAIT_S:
            upto = _frontier(state, self)
            if upto is None or self.position < upto:
                return
            time.sleep(delay)
            waited += delay
            delay = min(delay * 2, 0.25)

    def _asked_ahead(self, state: RunState, evaluator: Evaluator) -> None:
        """A sample its settled level does not need: if it was asked ahead and paid for, its
        answer still goes to the controller (the spend, the budget, the results file, marked
        not needed); a call still waiting was not made."""
        if not evaluator.pending(self.sample_id, self.model):
            state.built.pop(self.nodeid, None)
            return
        item = self.build()
        outcome = evaluator.answer(item, self.model, self.address.repeat)
        if not outcome.cached and outcome.error_kind != "not_asked":
            self._carry(state, evaluator, dataclasses.replace(outcome, not_needed=True), item)

    def _carry(self, state: RunState, evaluator: Evaluator, outcome: Outcome, item: Item) -> None:
        """The outcome, and what the controller needs to place it, in the report; the prompt
        too, the first time this process answers it, where the controller files prompts."""
        a = self.address
        report = SampleReport(
            dataclasses.replace(outcome, suite=a.suite, entry=a.entry.id, repeats=a.level.repeats),
            self.level,
            a.level.rule,
            size=self.level_size,
            position=self.position,
            gate_id=self.gate_id,
            comparison_id=self.comparison_id,
            family=state.families.get(self.model, 1) if self.comparison_id else 1,
            notices=tuple(evaluator.notices.items()),
            storage_error=evaluator.storage_error,
        )
        self.user_properties.append((PROPERTY, report.to_json()))
        if state.sends_prompts and outcome.prompt_sha256 not in state.sent_prompts:
            state.sent_prompts.add(outcome.prompt_sha256)
            self.user_properties.append((PROMPT, item.prompt))

    def teardown(self) -> None:
        """JUnit XML writes the properties of the teardown report: give it the outcome with
        long texts clipped. The call report, made before, carried the whole outcome to the
        controller (and through xdist), which writes it to the results file, and the prompt,
        which JUnit XML does not get."""
        self.user_properties[:] = [p for p in self.user_properties if p[0] != PROMPT]
        for i, (name, value) in enumerate(self.user_properties):
            if name != PROPERTY or not isinstance(value, str):
                continue
            if len(value) > 4 * JUNIT_TEXT:
                value = json.dumps(_clipped(json.loads(value)), ensure_ascii=False)
            # Model text as JSON escapes where a viewer of the file would obey it (bidi).
            self.user_properties[i] = (name, inert_json(value))

    def _ahead(
        self, state: RunState, evaluator: Evaluator
    ) -> Iterator[tuple[Item, ReasoningItem]]:
        """Upcoming model-answered items not yet built or in flight (built once, kept until
        they run); of a sequential level, only those below its frontier: never more than the
        fewest answers that could settle it (``gates.ledger``), so none is paid for in vain."""
        frontiers: dict[LevelRef, int | None] = {}
        ready = state.built
        for other in self._upcoming(state):
            # Most of the window was built by an earlier sample's walk: that test first.
            if (
                other is self
                or other.nodeid in ready
                or not evaluator.model(other.model).calls_model
                or evaluator.pending(other.sample_id, other.model)
            ):
                continue
            if other.sequential:
                key = other.level
                if key not in frontiers:
                    frontiers[key] = _frontier(state, other)
                upto = frontiers[key]
                if upto is None or other.position >= upto:
                    continue
            state.built[other.nodeid] = built = other.build()
            yield built, other

    def _upcoming(self, state: RunState) -> Iterator[ReasoningItem]:
        """The samples this process will run next, this one first (for concurrent prefetch)."""
        window = state.options.concurrency * LOOKAHEAD_PER_SLOT
        if not state.is_worker:  # the session's items are the run loop's, in its order
            items = self.session.items
            for i in range(state.order.get(self.nodeid, 0), len(items)):
                other = items[i]
                if isinstance(other, ReasoningItem):
                    yield other
                    window -= 1
                    if not window:
                        return
            return
        yield self
        for other in worker_upcoming(self, window):
            if isinstance(other, ReasoningItem):
                yield other

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, domain(self.name, self.model)


def _frontier(state: RunState, item: ReasoningItem) -> int | None:
    """The positions of ``item``'s sequential level that may be asked (below the number;
    None: it settled): the controller's word, or before it, the level's opening."""
    key = item.level
    if state.signals.settled(key):
        return None
    upto = state.signals.frontier(key)
    if upto is None:
        upto = state.openings.get(key)
    if upto is None:
        a, opts = item.address, state.options
        baseline = item.model == opts.baseline
        upto = state.openings[key] = opening(
            a.level.rule,
            item.level_size,
            repeats=a.level.repeats,
            gate=item.gate_id is not None,
            compared=item.comparison_id is not None or (baseline and bool(state.families)),
            family=state.families.get(item.model, 1),
            lookahead=lookahead(opts.concurrency),
        )
    return upto


def _need(item: ReasoningItem) -> Callable[[], bool] | None:
    """A sample asked ahead, checked just before its call goes out: a sample of a
    sequential level is not needed once the level settled."""
    if not item.sequential:
        return None
    signals, key = item.config.stash[STATE].signals, item.level
    return lambda: not signals.settled(key)


def lookahead(concurrency: int) -> int:
    """How many items past those counted a sequential level may ask: two windows of the
    concurrency (more could not be in flight at once)."""
    return 2 * max(1, concurrency)


class VerdictItem(pytest.Item):
    """A level's gate, or a comparison against the baseline. It is collected (so selection,
    ``--collect-only`` and the counts see it) but never run in the run loop: the controller
    reports it once its samples are in. Selecting it selects its samples."""

    def __init__(
        self, *, model: str, kind: str, samples: list[ReasoningItem], **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.kind = kind  # "gate" | "comparison"
        self.samples = samples
        self.add_marker("reasoning")

    def runtest(self) -> None:
        """Reported by the controller (``pytest_runtest_protocol`` skips verdict items)."""

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, domain(self.name, self.model)


def complete_levels(items: list[pytest.Item]) -> tuple[int, int]:
    """After every plugin's selection: a selected verdict none of whose samples were
    selected (a pasted gate id, an older ``--lf`` entry) brings its whole level back, just
    before it. A verdict selected with part of its level stays partial: the controller
    reports it as skipped, never decided on fewer samples. Returns (samples added, partial
    verdicts)."""
    present = {id(i) for i in items}
    out: list[pytest.Item] = []
    added = partial = 0
    for item in items:
        if isinstance(item, VerdictItem):
            missing = [s for s in item.samples if id(s) not in present]
            if missing and len(missing) == len(item.samples):
                out += missing
                present.update(id(s) for s in missing)
                added += len(missing)
            elif missing:
                partial += 1
        out.append(item)
    items[:] = out
    return added, partial


def _clipped(value: Any) -> Any:
    if isinstance(value, str):
        return clip(value, JUNIT_TEXT)
    if isinstance(value, list):
        return [_clipped(v) for v in value]
    if isinstance(value, dict):
        return {k: _clipped(v) for k, v in value.items()}
    return value


def teststatus(report: pytest.TestReport) -> tuple[str, str, str | tuple[str, Any]] | None:
    """``W``/``WRONG`` for a wrong answer, ``I``/``INFRA-ERROR`` for a failed call; answers
    from the response cache say so under ``-v`` (``PASSED (cached)``). The report passed (the
    gate decides), but pytest would colour it green: a wrong answer is yellow, like a skip,
    and a failed call red."""
    if report.when == "call" and report.skipped and NOT_NEEDED in str(report.longrepr):
        return "not needed", "n", "NOT NEEDED"
    if report.when != "call" or not report.passed:
        return None
    try:
        sample = SampleReport.read(report.user_properties)
    except UnreadableReport:  # the controller says so, once (controller.py)
        return None
    if sample is None:
        return None
    outcome = sample.outcome
    cached = " (cached)" if outcome.cached else ""
    if outcome.error_kind == "not_asked":  # no call made: a stopped model, a budget
        return "not asked", "-", ("NOT ASKED", {"yellow": True})
    if outcome.error is not None:
        return "infra error", "I", ("INFRA-ERROR", {"red": True})
    if not outcome.correct:
        return "wrong", "W", ("WRONG" + cached, {"yellow": True})
    return ("passed", ".", "PASSED" + cached) if cached else None
