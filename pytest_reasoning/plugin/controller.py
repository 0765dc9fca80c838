"""The controller: the process that sees every report (the xdist controller, or the only
process). Each sample's report feeds the results file and the verdict ledger
(``gates.ledger``, shared with ``pytest-reasoning gate``); the verdicts the ledger decides are
reported as synthetic test reports under their collected verdict items' node ids, then the
exit status and the terminal summary (its lines are prepared in ``report.summary``).

A gate is decided as soon as the last sample of its level is in (so ``-x`` stops at the first
failed level); a selected gate whose level ran only in part is reported as skipped ("not
decided"), never decided on fewer samples. Comparisons against a baseline are Holm-corrected
across levels, so they wait for the end. With ``--reasoning-defer-gates`` every verdict is
reported as deferred, and in a shard (``--reasoning-shard K/N``, N > 1) the comparisons are
(Holm's family spans every level): ``pytest-reasoning gate`` decides them from the merged
results files."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, Literal, NoReturn

import pytest

from ..budget import Spend
from ..core import Outcome
from ..errors import StorageFailed, printable
from ..gates import Ledger, ResultStore
from ..gates.drift import load_drift
from ..gates.verdicts import (
    EXIT_INFRASTRUCTURE,
    INFRASTRUCTURE_ID,
    Verdict,
    exit_status,
    load_baseline,
)
from ..report import closing_lines, summary_lines, summary_reads
from ..report.links import gate_link
from ..report.publish import check_output_dir, publish
from ..report.summary import ledger_summary
from .items import domain, lookahead
from .sample import LevelRef, SampleReport, UnreadableReport, sent_prompt
from .state import RunState
from .xdist import stop_workers

__all__ = ["Controller"]

# What a not-decided verdict of a pytest run advises (a merge advises otherwise).
PARTIAL_HINT = "select the whole level: -k NAME, or paste the verdict's id"


class Controller:
    def __init__(self, state: RunState) -> None:
        self.state = state
        self.options = o = state.options
        # A shard's results file is whole or absent: a merge job may look before it ends.
        aside = o.shard is not None or o.defer_gates
        self.store = ResultStore(
            o.results, keep=self._keeps(), aside=aside, remember_prompts=bool(o.report_dir)
        )
        defer_comparisons = None
        if o.defer_gates:
            defer_comparisons = "--reasoning-defer-gates"
        elif o.shard is not None and o.shard[1] > 1:
            defer_comparisons = "a shard: Holm's correction spans the levels of every shard"
        self.ledger = Ledger(
            hint=PARTIAL_HINT,
            baseline=o.baseline,
            defer_gates="--reasoning-defer-gates" if o.defer_gates else None,
            defer_comparisons=defer_comparisons,
            max_errors=o.max_errors,
            lookahead=lookahead(o.concurrency),
        )
        self.session: pytest.Session | None = None
        self.gate_samples: dict[str, list[str]] = {}  # gate id → its samples' node ids
        self.ready: list[Verdict] = []  # decided by a report, shown after it (logfinish)
        self.undecided: list[str] = []  # selected gates of levels that ran in part: not decided
        self.soft_failures: list[str] = []  # wrong or errored samples (for --lf)
        self.failed_gates: list[str] = []
        self.stopped = False  # -x / --maxfail or Ctrl-C stopped the run loop
        self.previous_lastfailed: set[str] = set()
        self.deferred = 0  # verdicts reported as deferred (left to pytest-reasoning gate)
        self.notices: dict[str, str] = {}  # kind → a one-line notice, printed once (a lost Redis)
        self.spend = Spend()  # what the calls made now cost (--reasoning-budget stops at it)
        self.budget_reached: str | None = None

    def _keeps(self) -> Callable[[Outcome], bool] | None:
        """Which outcomes stay in memory (the rest are tallied and written, then let go, so a
        run's memory does not grow with its rows): every one for a report or the robustness
        analysis, else only those the summary reads."""
        if self.options.report_dir or self.options.robustness is not None:
            return None
        step = bool(os.environ.get("GITHUB_STEP_SUMMARY"))
        return lambda o: summary_reads(o.task, o.error, o.correct, step)

    # -- start --------------------------------------------------------------------------------
    def start(self) -> None:
        """Everything that can fail before the first (paid) call: a stored baseline (read once:
        a bad file is a usage error, not a late crash), the results file."""
        for option, folder in (
            ("--reasoning-report", self.options.report_dir),
            ("--reasoning-robustness", self.options.robustness),
        ):
            problem = check_output_dir(option, folder) if folder else None
            if problem:
                raise pytest.UsageError(problem)
        path = self.options.baseline_results
        if path:
            try:
                self.ledger.use_stored(load_baseline(path, self.options.baseline_model))
            except ValueError as exc:
                raise pytest.UsageError(str(exc)) from None
        if self.options.drift:  # --reasoning-drift: each model against its own stored run
            try:
                self.ledger.use_drift(
                    load_drift(
                        self.options.drift, self.options.models, self.options.drift_max_changed
                    )
                )
            except ValueError as exc:
                raise pytest.UsageError(str(exc)) from None
        if self.options.results:
            try:
                self.store.open()
            except OSError as exc:
                raise pytest.UsageError(
                    f"--reasoning-results: cannot write {self.options.results} "
                    f"({type(exc).__name__}: {exc})"
                ) from None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session
        cache = getattr(session.config, "cache", None)
        if cache is not None:
            self.previous_lastfailed = set(cache.get("cache/lastfailed", {}))

    def select(
        self, ids: Iterable[str], verdicts: Mapping[str, tuple[str, str]] | None = None
    ) -> None:
        """The node ids that will run (after every plugin's selection); ``verdicts`` names
        the verdict items among them (``id → (kind, model)``) where the collection is at hand
        (not under xdist)."""
        self.ledger.select(ids, verdicts)

    @property
    def selected(self) -> set[str] | None:
        return self.ledger.selected

    # -- during the run -----------------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        try:
            sample = SampleReport.read(report.user_properties)
        except UnreadableReport as exc:  # not counted: its level stays not decided
            self._line(f"reasoning: {report.nodeid}: its report cannot be read: {exc}", red=True)
            return
        if sample is None:
            return
        outcome, position = sample.outcome, sample.position
        spec = sample.level.gate(sample.rule)
        # Planned first, so that a stop on this very report still names its level as not
        # decided (a worker's prefetched answers can fill its cache before its first report).
        self.ledger.plan(
            outcome.model,
            spec,
            outcome.task,
            sample.size,
            gate_id=sample.gate_id,
            comparison_id=sample.comparison_id,
            repeats=outcome.repeats,
            family=sample.family,
        )
        if not self.ledger.needed(outcome.model, spec, position):  # in after its level settled
            outcome = replace(outcome, not_needed=True)
        self._write(outcome)  # the row first: a paid answer is on disk before anything else
        prompt = sent_prompt(report.user_properties)
        if prompt is not None:  # filed if it hashes to the row's prompt_sha256
            self.store.add_prompt(outcome.prompt_sha256, prompt)
        for kind, text in sample.notices:
            self._notice(kind, text)
        self._pay(outcome)
        if sample.gate_id:
            self.gate_samples.setdefault(sample.gate_id, []).append(report.nodeid)
        if outcome.not_needed:  # paid for, counted in the spend, never in a verdict
            self.ledger.not_needed(outcome, spec)
            return
        if outcome.error is not None or not outcome.correct:
            self.soft_failures.append(report.nodeid)
        decided, stopped = self.ledger.add(outcome, spec, position)
        self.ready += decided
        for model, where in self.ledger.settled():  # the rest of the level is not needed
            self.state.signals.settle(LevelRef.of(model, where))
        for (model, where), frontier in self.ledger.moved():  # how far each may ask ahead
            self.state.signals.allow(LevelRef.of(model, where), frontier)
        discarded, self.ledger.discarded = self.ledger.discarded, []
        for late in discarded:  # rows written before their level settled: marked after
            self._write(replace(late, not_needed=True), again=True)
        if stopped is not None:
            self._line(
                f"reasoning: {outcome.model} stopped (infrastructure, not the model): {stopped}",
                red=True,
                bold=True,
            )
        if sample.storage_error:  # the worker's cache failed; this row is kept and counted
            _stop_for_storage(sample.storage_error)

    def batch_billed(self, refused: str | None) -> None:
        """After the batch phase (plugin/batch.py), whose bill is in ``spend`` already: a
        budget it reached, or batch requests it could not pay for (``refused``: the budget
        line), stop the run as a live call reaching the budget does."""
        budget = self.options.budget
        if budget and self.budget_reached is None:
            self._stop_at_budget(refused or self.spend.reached(budget))

    def _write(self, outcome: Outcome, *, again: bool = False) -> None:
        try:
            self.store.add(outcome, again=again)
        except StorageFailed as exc:
            _stop_for_storage(
                f"{exc} (the rows before are intact: free space or fix the path, then rerun)"
            )

    def _pay(self, outcome: Outcome) -> None:
        """Count what a call made now cost; the budget reached: every process stops asking
        (the processes that call stop sooner, as each reply arrives: ``budget.Meter``)."""
        self.spend.add(outcome)
        budget = self.options.budget
        if budget and self.budget_reached is None:
            self._stop_at_budget(self.spend.reached(budget))

    def _stop_at_budget(self, reached: str | None) -> None:
        self.budget_reached = reached
        if reached is not None:  # the rest is not asked, live or batched
            self.state.signals.stop(reached)
            self._line(
                f"reasoning: {reached}: no more calls; what was paid is kept, the rest is not "
                "asked",
                yellow=True,
                bold=True,
            )

    def _notice(self, kind: str, text: str) -> None:
        """A worker's notice (the shared cache lost mid-run): printed once per kind, at once."""
        if kind not in self.notices:
            self.notices[kind] = text
            self._line(f"reasoning: {text}", yellow=True, bold=True)

    def _line(self, text: str, **markup: bool) -> None:
        tr = self.state.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.ensure_newline()
            tr.write_line(printable(text), **markup)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        """After the sample that completes a level has been shown: its gate."""
        ready, self.ready = self.ready, []
        for verdict in ready:
            self._emit(verdict)
            if verdict.outcome == "failed" and self.session and self.session.shouldfail:
                stop_workers(self.session.config, str(self.session.shouldfail))  # -x

    def _emit(self, verdict: Verdict) -> None:
        assert self.session is not None
        # Where the report will be published, else where this run writes it.
        report = self.options.report_url or self.options.report_dir
        if verdict.outcome == "failed" and report and verdict.subject is not None:
            # The report is written at the end; its link is known now (terminal, JUnit).
            link = gate_link(report, verdict.subject)
            verdict = replace(verdict, message=f"{verdict.message}; samples: {link}")
        self.deferred += verdict.deferred
        if verdict.kind == "gate" and verdict.outcome == "failed":
            self.failed_gates.append(verdict.nodeid)
        elif verdict.kind == "gate" and verdict.outcome == "skipped" and not verdict.deferred:
            self.undecided.append(verdict.nodeid)
        elif verdict.kind == "infrastructure":
            self.session.testscollected += 1  # not a collected test: the budget is run-wide
        _emit(self.session, verdict)

    # -- the end ------------------------------------------------------------------------------
    def stop(self) -> None:
        """The run loop ended early (``-x``, Ctrl-C): undecided gates stay undecided."""
        self.stopped = True
        self.store.close()

    def finish(self, session: pytest.Session) -> None:
        """Every verdict not yet reported: gates of levels that ran in part, the comparisons,
        the error budget."""
        self.store.close()
        ready, self.ready = self.ready, []
        for verdict in [*ready, *self.ledger.finish()]:
            self._emit(verdict)

    @property
    def infrastructure_failed(self) -> bool:
        """More errors than --reasoning-max-errors, or a level with no answer at all."""
        return self.ledger.infrastructure() is not None

    def update_lastfailed(self, config: pytest.Config) -> None:
        """``--lf`` semantics for gated suites: rerun the wrong and errored samples and the
        whole level of every failed gate (a gate is only decided on its whole level); keep a
        failed gate that was only reported partial this time; drop the run-wide
        infrastructure entry (it is no collected test)."""
        cache = getattr(config, "cache", None)
        if cache is None:
            return
        lastfailed: dict[str, bool] = dict(cache.get("cache/lastfailed", {}))
        before = dict(lastfailed)
        for nodeid in self.soft_failures:
            lastfailed[nodeid] = True
        for gate in self.failed_gates:
            for nodeid in self.gate_samples.get(gate, ()):
                lastfailed[nodeid] = True
        for gate in self.undecided:
            if gate in self.previous_lastfailed:
                lastfailed[gate] = True
        lastfailed.pop(INFRASTRUCTURE_ID, None)
        if lastfailed != before:
            cache.set("cache/lastfailed", lastfailed)

    def exit_status(self, session: pytest.Session) -> None:
        """Infrastructure errors alone get their own exit status, apart from failed gates;
        a budget reached stops the run like an interruption (2), unless a gate failed."""
        if session.exitstatus == pytest.ExitCode.TESTS_FAILED and self.infrastructure_failed:
            session.exitstatus = exit_status(session.testsfailed - 1, True)
        if self.reached and session.exitstatus in (pytest.ExitCode.OK, EXIT_INFRASTRUCTURE):
            session.exitstatus = pytest.ExitCode.INTERRUPTED

    @property
    def reached(self) -> str | None:
        """Why the run stopped asking, its budget reached (a process that calls stops on the
        replies as they arrive, which the reports may not all show: ``budget.Meter``)."""
        if not self.options.budget:
            return None
        return self.budget_reached or self.state.signals.stopped()

    def summary(self, tr: Any, exitstatus: int) -> None:
        """The terminal summary: prepared lines, then the published outputs (report,
        robustness, step summary), then the closing lines."""
        ledger, store = self.ledger, self.store
        if not ledger.levels and not ledger.incomplete():
            return
        run = ledger_summary(
            ledger,
            rows=[o.to_dict() for o in store.outcomes],
            # Rows really in the results file (a full disk may have refused the last ones).
            answered=store.written if store.path else store.count,
            interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
            saved_to=str(store.path) if store.path else None,
            stopped=self.stopped,
            undecided=ledger.undecided(),
            deferred=self.deferred,
            spend=self.spend.line(self.options.budget),
            budget_reached=self.reached,
            prompts=store.prompts,
        )
        tr.section("reasoning summary")
        for line in summary_lines(run):
            _write(tr, line)
        published = publish(
            run,
            report_dir=self.options.report_dir,
            robustness=self.options.robustness,
            prices=self.state.evaluator.price,  # each model asked for its own price
        )
        for line in published:
            _write(tr, line)
        if published.failed and self.session and self.session.exitstatus == pytest.ExitCode.OK:
            self.session.exitstatus = pytest.ExitCode.USAGE_ERROR  # asked for, not written
        for line in closing_lines(run):
            _write(tr, line)


def _write(tr: Any, line: Any) -> None:
    if line.sep:
        tr.write_sep("-", printable(line.text))
    else:
        tr.write_line(printable(line.text), **line.markup)


def _stop_for_storage(message: str) -> NoReturn:
    """Disk full, read-only or a damaged cache mid-run: stop (exit status 2, interrupted)
    rather than pay for answers that cannot be kept. ``message`` names the file and what to
    do; everything written before the failure stays usable."""
    pytest.exit(
        f"pytest-reasoning: {printable(message)}; stopped asking the model (answers it cannot "
        "keep would be paid for twice)",
        returncode=pytest.ExitCode.INTERRUPTED,
    )


def _emit(session: pytest.Session, verdict: Verdict) -> None:
    """Report a verdict (a gate, a comparison) through the normal hooks under its collected
    node id, so the terminal, JUnit XML, ``--lf`` and the exit status all see it like any
    other test. Skipped means "not decided" (a level that ran in part)."""
    nodeid, model, message = verdict.nodeid, verdict.model, verdict.message
    path, _, name = nodeid.partition("::")
    location = (path, None, domain(name, model) if model else name)
    hook = session.config.hook
    hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
    for when in ("setup", "call", "teardown"):
        phase: Literal["passed", "failed", "skipped"] = (
            verdict.outcome if when == "call" else "passed"
        )
        longrepr: Any = None
        if phase == "failed":
            longrepr = message
        elif phase == "skipped":
            longrepr = (path, None, f"Skipped: {message}")
        rep = pytest.TestReport(
            nodeid=nodeid,
            location=location,
            keywords={name: 1},
            outcome=phase,
            longrepr=longrepr,
            when=when,
            user_properties=list(verdict.properties) if when == "teardown" else [],
            duration=0.0,
        )
        hook.pytest_runtest_logreport(report=rep)
    hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
