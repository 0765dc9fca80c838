"""The controller: the process that sees every report (the xdist controller, or the only
process). Outcomes → results store → gates → synthetic test reports → exit status, and the
terminal summary, whose lines are prepared in ``report.summary``.

A gate is decided as soon as the last sample of its level is in (so ``-x`` stops at the first
failed level) and reported under its collected verdict item's node id; a selected gate whose
level ran only in part is reported as skipped ("partial"), never decided on fewer samples.
Comparisons against a baseline are Holm-corrected across levels, so they wait for the end.
With ``--reasoning-defer-gates`` every verdict is reported as deferred, and in a shard
(``--reasoning-shard K/N``, N > 1) the comparisons are (Holm's family spans every level):
``pytest-reasoning gate`` decides them from the merged results files. What each verdict says,
the error budget and the exit status come from ``gates.verdicts``, shared with that command."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import pytest

from .items import payload
from .state import RunState

if TYPE_CHECKING:  # gates load with the controller, never on an unrelated pytest run
    from ..core import Outcome
    from ..gates import Comparison, GateResult, GateSpec, ResultStore
    from ..gates.verdicts import Verdict

__all__ = ["Controller"]

Where = tuple[str, str, str]
# What a partial verdict of a pytest run advises (a merge advises otherwise).
PARTIAL_HINT = "select the gate: -k NAME"


class Controller:
    def __init__(self, state: RunState) -> None:
        from ..gates import ResultStore
        from ..gates.verdicts import Tally

        self.state = state
        self.options = state.options
        self.store: ResultStore = ResultStore(
            self.options.results,
            keep=self._keeps(),
            pairing=bool(self.options.baseline or self.options.baseline_results),
        )
        self.gates: list[GateResult] = []
        self.comparisons: list[Comparison] = []
        self.baseline_rows: tuple[dict[tuple[str, str], bool | None], str] | None = None
        self.repeats: dict[tuple[str, str, str], int] = {}  # (entry, level, model) → count
        self.session: pytest.Session | None = None
        # The collected verdict items' ids (None: not known, every gate counts as selected).
        self.selected: set[str] | None = None
        self.verdicts: dict[str, str] = {}  # verdict id → "gate" | "comparison" (if known)
        self.ran: dict[tuple[str, Where], int] = {}  # (model, where) → samples in
        self.size: dict[tuple[str, Where], int] = {}  # (model, where) → samples of the level
        self.gate_key: dict[str, tuple[str, Where]] = {}  # gate id → (model, where)
        self.gate_samples: dict[str, list[str]] = {}  # gate id → its samples' node ids
        self.comparison_ids: dict[tuple[str, Where], str] = {}
        self.ready: list[str] = []  # gates whose level is complete, reported at logfinish
        self.reported: set[str] = set()
        self.partial: list[str] = []  # selected gates reported as skipped (partial level)
        self.soft_failures: list[str] = []  # wrong or errored samples (for --lf)
        self.failed_gates: list[str] = []
        self.stopped = False  # -x / --maxfail or Ctrl-C stopped the run loop
        self.previous_lastfailed: set[str] = set()
        self.tally = Tally()  # per-model counts, error causes, the errors that stopped models
        self.deferred = 0  # verdicts reported as deferred (left to pytest-reasoning gate)
        self.notices: dict[str, str] = {}  # kind → a one-line notice, printed once (a lost Redis)

    def _keeps(self) -> Callable[[Outcome], bool] | None:
        """Which outcomes stay in memory (the rest are tallied and written, then let go, so a
        run's memory does not grow with its rows): every one for a report or the robustness
        analysis, else only those the summary reads."""
        if self.options.report_dir or self.options.robustness is not None:
            return None
        from ..report import summary_reads

        step = bool(os.environ.get("GITHUB_STEP_SUMMARY"))
        return lambda o: summary_reads(o.task, o.error, o.correct, step)

    # -- start --------------------------------------------------------------------------------
    def start(self) -> None:
        """Everything that can fail before the first (paid) call: the results file, a stored
        baseline."""
        self._load_baseline()
        if self.options.results:
            try:
                self.store.open()
            except OSError as exc:
                raise pytest.UsageError(
                    f"--reasoning-results: cannot write {self.options.results} "
                    f"({type(exc).__name__}: {exc})"
                ) from None

    def _load_baseline(self) -> None:
        """Read a stored baseline once, at start: a bad file is a usage error, not a late crash."""
        from ..gates.verdicts import load_baseline

        path = self.options.baseline_results
        if not path:
            return
        try:
            self.baseline_rows = load_baseline(path, self.options.baseline_model)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session
        cache = getattr(session.config, "cache", None)
        if cache is not None:
            self.previous_lastfailed = set(cache.get("cache/lastfailed", {}))

    def select(self, ids: Iterable[str], verdicts: Mapping[str, str] | None = None) -> None:
        """The node ids that will run (after every plugin's selection); ``verdicts`` names
        the verdict items among them where the collection is at hand (not under xdist)."""
        self.selected = set(ids)
        if verdicts is not None:
            self.verdicts = dict(verdicts)

    # -- during the run -----------------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        data = payload(report)
        if data is None:
            return
        from ..core import Outcome
        from ..errors import StorageFailed
        from ..gates import GateSpec

        spec = GateSpec.from_dict(data["gate"])
        outcome = Outcome.from_dict(data)
        try:
            self.store.add(outcome, spec)
        except StorageFailed as exc:
            _stop_for_storage(
                f"{exc} (the rows before are intact: free space or fix the path, then rerun)"
            )
        if data.get("storage_error"):
            _stop_for_storage(str(data["storage_error"]))
        for kind, text in (data.get("notices") or {}).items():
            self._notice(str(kind), str(text))
        if data.get("repeated_problem"):
            key = (spec.entry, spec.level, str(data["model"]))
            self.repeats[key] = self.repeats.get(key, 0) + 1
        self._count(outcome)
        if outcome.error is not None or not outcome.correct:
            self.soft_failures.append(report.nodeid)
        level = (outcome.model, spec.where)
        self.ran[level] = self.ran.get(level, 0) + 1
        self.size[level] = int(data.get("level_size") or 0)
        if data.get("comparison_id"):
            self.comparison_ids[level] = str(data["comparison_id"])
        gate = data.get("gate_id")
        if gate:
            self.gate_key[gate] = level
            self.gate_samples.setdefault(gate, []).append(report.nodeid)
            if (
                self.ran[level] == self.size[level]
                and (self.selected is None or gate in self.selected)
                and gate not in self.reported
            ):
                self.ready.append(gate)

    def _notice(self, kind: str, text: str) -> None:
        """A worker's notice (the shared cache lost mid-run): printed once per kind, at once."""
        if kind in self.notices:
            return
        self.notices[kind] = text
        tr = self.state.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.ensure_newline()
            tr.write_line(f"reasoning: {text}", yellow=True, bold=True)

    def _count(self, o: Any) -> None:
        """Per-model counts and error causes; the first error that stops a model is printed
        at once (the run then ends in seconds: its other items are not asked)."""
        stopped = self.tally.add(o)
        if stopped is not None:
            tr = self.state.config.pluginmanager.get_plugin("terminalreporter")
            if tr is not None:
                tr.ensure_newline()
                tr.write_line(
                    f"reasoning: {o.model} stopped (infrastructure, not the model): {stopped}",
                    red=True,
                    bold=True,
                )

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        """After the sample that completes a level has been shown: its gate."""
        ready, self.ready = self.ready, []
        for gate in ready:
            self._decide(gate)

    def _decide(self, gate: str) -> None:
        from ..gates import decide_gates
        from ..gates.verdicts import deferred_verdict, gate_verdict

        assert self.session is not None
        model, where = self.gate_key[gate]
        self.reported.add(gate)
        if self.options.defer_gates:
            self._emit(deferred_verdict(gate, model, "--reasoning-defer-gates"))
            return
        stats = self.store.levels[(model, _spec(where))]
        result = decide_gates([stats])[0]
        self.gates.append(result)
        verdict = gate_verdict(gate, result)
        if verdict.outcome == "failed":
            self.failed_gates.append(gate)
        self._emit(verdict)
        if verdict.outcome == "failed" and self.session.shouldfail:  # -x / --maxfail
            from .xdist import stop_workers  # stop the workers too

            stop_workers(self.session.config, str(self.session.shouldfail))

    def _emit(self, verdict: Verdict) -> None:
        assert self.session is not None
        self.deferred += verdict.deferred
        _emit(
            self.session,
            verdict.nodeid,
            verdict.model,
            verdict.outcome,
            verdict.message,
            verdict.properties,
        )

    # -- the end ------------------------------------------------------------------------------
    def stop(self) -> None:
        """The run loop ended early (``-x``, Ctrl-C): undecided gates stay undecided."""
        self.stopped = True
        self.store.close()

    def finish(self, session: pytest.Session) -> None:
        """The gates not yet reported (partial levels), the comparisons, the error budget."""
        from ..gates.verdicts import INFRASTRUCTURE_ID, Verdict, deferred_verdict, partial_verdict

        self.store.close()
        for gate in self.ready:
            self._decide(gate)
        self.ready = []
        for gate in sorted(self._gate_ids() - self.reported):
            key = self.gate_key.get(gate)
            model = key[0] if key else ""
            ran, size = (self.ran.get(key, 0), self.size.get(key, 0)) if key else (0, 0)
            self.reported.add(gate)
            if self.options.defer_gates:
                self._emit(deferred_verdict(gate, model, "--reasoning-defer-gates"))
                continue
            self.partial.append(gate)
            self._emit(partial_verdict(gate, model, ran, size, PARTIAL_HINT))
        self._finish_comparisons()
        message = self.infrastructure_message()
        if message is not None:
            session.testscollected += 1  # not a collected test: the budget is run-wide
            self._emit(Verdict(INFRASTRUCTURE_ID, "", "failed", message, (), "infrastructure"))

    def _finish_comparisons(self) -> None:
        """Each selected comparison: decided on whole levels (the candidate's, and a live
        baseline's), Holm-corrected across those; partial otherwise; deferred in a shard or
        with ``--reasoning-defer-gates``. The baseline's own accuracy is reported, not gated:
        it is the reference point."""
        from ..gates.verdicts import comparison_verdict, deferred_verdict, partial_verdict

        where_of = {cid: key for key, cid in self.comparison_ids.items()}
        ids = set(where_of) | {v for v, kind in self.verdicts.items() if kind == "comparison"}
        if self.selected is not None:
            ids &= self.selected
        why = self._defer_comparisons()
        if why is not None:
            for cid in sorted(ids):
                self.reported.add(cid)
                model = where_of[cid][0] if cid in where_of else ""
                self._emit(deferred_verdict(cid, model, why, "comparison"))
            return
        self.comparisons = self._compare()
        for c in self.comparisons:
            found = self.comparison_ids.get((c.candidate, c.spec.where))
            if found is None or found not in ids:
                continue
            self.reported.add(found)
            self._emit(comparison_verdict(found, c))
        for cid in sorted(ids - self.reported):
            self.reported.add(cid)
            key = where_of.get(cid)
            ran, size = (self.ran.get(key, 0), self.size.get(key, 0)) if key else (0, 0)
            model = key[0] if key else ""
            self._emit(partial_verdict(cid, model, ran, size, PARTIAL_HINT, "comparison"))

    def _defer_comparisons(self) -> str | None:
        if self.options.defer_gates:
            return "--reasoning-defer-gates"
        shard = self.options.shard
        if shard is not None and shard[1] > 1:
            return "a shard: Holm's correction spans the levels of every shard"
        return None

    def _whole(self, model: str, where: Where) -> bool:
        """Whether every sample of the model's level is in."""
        size = self.size.get((model, where), 0)
        return size > 0 and self.ran.get((model, where), 0) >= size

    def infrastructure_message(self) -> str | None:
        """One line when the run-wide error budget is exceeded (or a level got no answer):
        how many calls failed, that it is not the model, and the first cause; else None."""
        from ..gates.verdicts import infrastructure_message

        return infrastructure_message(
            list(self.store.levels.values()), self.options.max_errors, self.tally
        )

    @property
    def infrastructure_failed(self) -> bool:
        """More errors than --reasoning-max-errors, or a level with no answer at all."""
        return self.infrastructure_message() is not None

    def _gate_ids(self) -> set[str]:
        """The selected gates: known from the collection (not under xdist) or from the
        samples that named them."""
        gates = set(self.gate_key) | {v for v, kind in self.verdicts.items() if kind == "gate"}
        return gates if self.selected is None else gates & self.selected

    def levels_partial(self) -> dict[tuple[str, str, str, str], tuple[int, int]]:
        """(model, suite, entry, level) → (samples that ran, samples of the level), for the
        levels that ran only in part (their gates are not decided)."""
        return {
            (model, *where): (ran, self.size[(model, where)])
            for (model, where), ran in self.ran.items()
            if ran < self.size.get((model, where), 0)
        }

    def update_lastfailed(self, config: pytest.Config) -> None:
        """``--lf`` semantics for gated suites: rerun the wrong and errored samples and the
        whole level of every failed gate (a gate is only decided on its whole level); keep a
        failed gate that was only reported partial this time; drop the run-wide
        infrastructure entry (it is no collected test)."""
        from ..gates.verdicts import INFRASTRUCTURE_ID

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
        for gate in self.partial:
            if gate in self.previous_lastfailed:
                lastfailed[gate] = True
        lastfailed.pop(INFRASTRUCTURE_ID, None)
        if lastfailed != before:
            cache.set("cache/lastfailed", lastfailed)

    def _compare(self) -> list[Comparison]:
        """Candidate-vs-baseline comparisons on whole levels, from the live baseline or the
        stored one."""
        from ..gates import baseline_answers, compare

        pairs = self.store.pairs
        live = self.options.baseline
        if live:
            name = live
            base = baseline_answers(a for a, _ in pairs if a.model == name)
        elif self.baseline_rows is not None:
            base, name = self.baseline_rows
        else:
            return []
        rows = [
            (a, s)
            for a, s in pairs
            if a.model != name
            and self._whole(a.model, s.where)
            and (not live or self._whole(name, s.where))
        ]
        return compare(rows, base, name)

    def exit_status(self, session: pytest.Session) -> None:
        """Infrastructure errors alone get their own exit status, apart from failed gates."""
        from ..gates.verdicts import EXIT_INFRASTRUCTURE, exit_status

        infrastructure = self.infrastructure_failed
        if session.exitstatus == pytest.ExitCode.TESTS_FAILED and infrastructure:
            status = exit_status(session.testsfailed - 1, infrastructure)
            if status == EXIT_INFRASTRUCTURE:
                session.exitstatus = status

    def summary(self, tr: Any, exitstatus: int) -> None:
        """The terminal summary: prepared lines, then the report, robustness, step summary."""
        if not self.store.levels:
            return
        from ..report import RunSummary, closing_lines, summary_lines

        store = self.store
        run = RunSummary(
            levels=list(store.levels.values()),
            gates=self.gates,
            comparisons=self.comparisons,
            rows=[o.to_dict() for o in store.outcomes],
            errors=store.errors,
            # Rows really in the results file (a full disk may have refused the last ones).
            answered=store.written if store.path else store.count,
            interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
            saved_to=str(store.path) if store.path else None,
            repeats=self.repeats,
            partial=self.levels_partial(),
            stopped=self.stopped,
            undecided=len(self._gate_ids() - self.reported),
            error_messages=self.tally.messages,
            not_asked=self.tally.not_asked,
            deferred=self.deferred,
        )
        tr.section("reasoning summary")
        for line in summary_lines(run):
            _write(tr, line)
        robustness = self.options.robustness
        if robustness is not None:
            _robustness_summary(tr, run.rows, robustness)
        if self.options.report_dir:
            self._write_report(tr, run.rows, robustness)
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if step_summary:  # GitHub Actions renders this file on the run's page
            from ..report import markdown_summary

            try:
                with open(step_summary, "a", encoding="utf-8") as fh:
                    fh.write(markdown_summary(run))
            except OSError as exc:
                tr.write_line(f"reasoning: could not write GITHUB_STEP_SUMMARY: {exc}", yellow=True)
        for line in closing_lines(run):
            _write(tr, line)

    def _write_report(
        self, tr: Any, rows: Sequence[Mapping[str, Any]], robustness: str | None
    ) -> None:
        from ..report import build_report

        report_dir = self.options.report_dir
        assert report_dir
        extra = []
        if robustness:  # the robustness plots join the report
            for name in ("rank_changes", "win_probability", "accuracy_ranges"):
                path = os.path.join(robustness, f"{name}.png")
                if os.path.exists(path):
                    extra.append((f"Robustness: {name.replace('_', ' ')}", path))
        try:
            report = build_report(
                rows,
                report_dir,
                levels=list(self.store.levels.values()),
                gates=self.gates,
                comparisons=self.comparisons,
                extra_images=extra,
                partial=self.levels_partial(),
            )
        except Exception as exc:  # a report must never turn a run's verdict into a crash
            tr.write_line(
                f"reasoning: could not write the report to {report_dir}: "
                f"{type(exc).__name__}: {exc}",
                red=True,
            )
        else:
            tr.write_line(f"reasoning: report {os.path.join(report.out, 'index.html')}")
            if report.note:
                tr.write_line(f"reasoning: report: {report.note}", yellow=True)


def _write(tr: Any, line: Any) -> None:
    if line.sep:
        tr.write_sep("-", line.text)
    else:
        tr.write_line(line.text, **line.markup)


def _robustness_summary(tr: Any, rows: Sequence[Mapping[str, Any]], out: str) -> None:
    """The distributional-robustness analysis over the models that answered the same items."""
    tr.write_sep("-", "robustness of the ranking to the items' weights (seed 004)")
    if len({r["model"] for r in rows}) < 2:
        tr.write_line("reasoning: robustness needs two or more models; skipped")
        return
    try:
        from .. import robustness
    except ImportError as exc:
        tr.write_line(
            f"reasoning: robustness needs the [analysis] extra ({exc}); skipped", yellow=True
        )
        return
    try:
        analysis = robustness.analyze(robustness.build_matrix(rows))
    except ValueError as exc:
        tr.write_line(f"reasoning: robustness skipped: {exc}", yellow=True)
        return
    for line in robustness.summary_lines(analysis):
        tr.write_line(line)
    if out:
        for path in robustness.write_outputs(analysis, out):
            tr.write_line(f"reasoning: wrote {path}")


def _stop_for_storage(message: str) -> NoReturn:
    """Disk full, read-only or a damaged cache mid-run: stop (exit status 2, interrupted)
    rather than pay for answers that cannot be kept. ``message`` names the file and what to
    do; everything written before the failure stays usable."""
    pytest.exit(
        f"pytest-reasoning: {message}; stopped asking the model (answers it cannot keep would "
        "be paid for twice)",
        returncode=pytest.ExitCode.INTERRUPTED,
    )


def _spec(where: Where) -> GateSpec:
    from ..gates import GateSpec

    return GateSpec(*where)


def _emit(
    session: pytest.Session,
    nodeid: str,
    model: str,
    outcome: Literal["passed", "failed", "skipped"],
    message: str,
    props: Sequence[tuple[str, object]],
) -> None:
    """Report a verdict (a gate, a comparison) through the normal hooks under its collected
    node id, so the terminal, JUnit XML, ``--lf`` and the exit status all see it like any
    other test. Skipped means "not decided" (a partial level)."""
    from .items import domain

    path, _, name = nodeid.partition("::")
    location = (path, None, domain(name, model) if model else name)
    hook = session.config.hook
    hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
    for when in ("setup", "call", "teardown"):
        phase: Literal["passed", "failed", "skipped"] = outcome if when == "call" else "passed"
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
            user_properties=list(props) if when == "teardown" else [],
            duration=0.0,
        )
        hook.pytest_runtest_logreport(report=rep)
    hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
