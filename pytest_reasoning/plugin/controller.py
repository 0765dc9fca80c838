"""The controller: the process that sees every report (the xdist controller, or the only
process). Outcomes → results store → gates → synthetic test reports → exit status, and the
terminal summary, whose lines are prepared in ``report.summary``.

A gate is decided as soon as the last sample of its level is in (so ``-x`` stops at the first
failed level) and reported under its collected verdict item's node id; a selected gate whose
level ran only in part is reported as skipped ("partial"), never decided on fewer samples.
Comparisons against a baseline are Holm-corrected across levels, so they wait for the end."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import pytest

from .items import payload
from .state import RunState

if TYPE_CHECKING:
    from ..core import Outcome
    from ..gates import Comparison, GateResult, GateSpec, ResultStore

__all__ = ["EXIT_INFRASTRUCTURE", "INFRASTRUCTURE_ID", "Controller"]

EXIT_INFRASTRUCTURE = 6  # pytest uses 0-5; see README "Exit status"
# Not a collected test: the run-wide error budget is known only at the end.
INFRASTRUCTURE_ID = "reasoning::infrastructure"
Where = tuple[str, str, str]


class Controller:
    def __init__(self, state: RunState) -> None:
        from ..gates import ResultStore

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
        # Per model: answered / cached / errors / not_asked, and the distinct error messages
        # in the order they first came, with counts.
        self.counts: dict[str, Counter[str]] = {}
        self.error_messages: dict[str, Counter[str]] = {}
        self.stopped_models: dict[str, str] = {}  # model → the error that stopped its calls

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
        from ..gates import read_results

        path = self.options.baseline_results
        if not path:
            return
        try:
            rows = list(read_results(path))
        except (OSError, ValueError, KeyError) as exc:
            raise pytest.UsageError(f"--reasoning-baseline-results {path}: {exc}") from None
        models = sorted({str(r["model"]) for r in rows})
        name = self.options.baseline_model
        if name is None:
            if len(models) != 1:
                raise pytest.UsageError(
                    f"--reasoning-baseline-results {path}: holds {len(models)} models "
                    f"({', '.join(models) or 'none'}); choose one with --reasoning-baseline-model"
                )
            name = models[0]
        elif name not in models:
            raise pytest.UsageError(
                f"--reasoning-baseline-model {name!r}: not in {path}; it holds {', '.join(models)}"
            )
        from ..core import Outcome
        from ..gates import baseline_answers

        try:
            outcomes = [Outcome.from_dict(r) for r in rows if r["model"] == name]
        except TypeError as exc:  # a row without the fields every results row has
            raise pytest.UsageError(
                f"--reasoning-baseline-results {path}: not a results file ({exc})"
            ) from None
        self.baseline_rows = (baseline_answers(outcomes), name)

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

    def _count(self, o: Any) -> None:
        """Per-model counts and error causes; the first error that stops a model is printed
        at once (the run then ends in seconds: its other items are not asked)."""
        counts = self.counts.setdefault(o.model, Counter())
        if o.error is None:
            counts["cached" if o.cached else "answered"] += 1
            return
        kind = o.error_kind or "transient"
        counts["not_asked" if kind == "not_asked" else "errors"] += 1
        if kind != "not_asked":
            self.error_messages.setdefault(o.model, Counter())[o.error] += 1
        if kind == "stop" and o.model not in self.stopped_models:
            self.stopped_models[o.model] = o.error
            tr = self.state.config.pluginmanager.get_plugin("terminalreporter")
            if tr is not None:
                tr.ensure_newline()
                tr.write_line(
                    f"reasoning: {o.model} stopped (infrastructure, not the model): {o.error}",
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

        assert self.session is not None
        model, where = self.gate_key[gate]
        stats = self.store.levels[(model, _spec(where))]
        result = decide_gates([stats])[0]
        self.gates.append(result)
        self.reported.add(gate)
        s = result.stats
        props = {
            "model": s.model,
            "task": s.task,
            "level": s.spec.level,
            "n": s.n,
            "errors": s.errors,
            # One number: the gated measure (cell accuracy under ``metric: cell``).
            "metric": s.spec.rule.metric,
            "value": s.measure,
            "min_accuracy": s.spec.rule.min_accuracy,
            "confidence": s.spec.rule.confidence,
            "passed": result.passed,
        }
        if result.passed is None:  # every sample failed for infrastructure: not decided
            _emit(
                self.session,
                gate,
                s.model,
                "skipped",
                f"{gate.partition('::')[2]}: {result.reason} (infrastructure, not the model)",
                [("reasoning.gate", json.dumps(props))],
            )
            return
        passed = result.passed
        if not passed:
            self.failed_gates.append(gate)
        _emit(
            self.session,
            gate,
            s.model,
            "passed" if passed else "failed",
            f"GATE FAILED {s.model} {s.task} {s.spec.level}: {result.reason}",
            [("reasoning.gate", json.dumps(props))],
        )
        if not passed and self.session.shouldfail:  # -x / --maxfail: stop the workers too
            from .xdist import stop_workers

            stop_workers(self.session.config, str(self.session.shouldfail))

    # -- the end ------------------------------------------------------------------------------
    def stop(self) -> None:
        """The run loop ended early (``-x``, Ctrl-C): undecided gates stay undecided."""
        self.stopped = True
        self.store.close()

    def finish(self, session: pytest.Session) -> None:
        """The gates not yet reported (partial levels), the comparisons, the error budget."""
        store = self.store
        store.close()
        for gate in self.ready:
            self._decide(gate)
        self.ready = []
        selected = self.selected
        for gate in sorted(self._gate_ids() - self.reported):
            key = self.gate_key.get(gate)
            ran, size = (self.ran.get(key, 0), self.size.get(key, 0)) if key else (0, 0)
            self.partial.append(gate)
            self.reported.add(gate)
            _emit(
                session,
                gate,
                key[0] if key else "",
                "skipped",
                f"{gate.partition('::')[2]}: partial level, {ran} of {size or '?'} samples "
                "ran; a gate is decided only on its whole level (select the gate: -k NAME)",
                [],
            )
        # The baseline's own accuracy is reported, not gated: it is the reference point.
        self.comparisons = self._compare()
        for c in self.comparisons:
            cid = self.comparison_ids.get((c.candidate, c.spec.where))
            if cid is None or (selected is not None and cid not in selected):
                continue
            self.reported.add(cid)
            _emit(
                session,
                cid,
                c.candidate,
                "failed" if c.regressed else "passed",
                f"REGRESSION {c.task} {c.spec.level}: {c.reason()}",
                [("reasoning.comparison", json.dumps(c.to_dict()))],
            )
        if self.infrastructure_failed:
            session.testscollected += 1  # not a collected test: the budget is run-wide
            _emit(session, INFRASTRUCTURE_ID, "", "failed", self.infrastructure_message(), [])

    @property
    def unanswered_levels(self) -> list[Any]:
        """Levels where every sample failed for infrastructure (nothing known of the model)."""
        return [s for s in self.store.levels.values() if s.n == 0 and s.errors]

    @property
    def infrastructure_failed(self) -> bool:
        """More errors than --reasoning-max-errors, or a level with no answer at all."""
        return self.store.errors > self.options.max_errors or bool(self.unanswered_levels)

    def infrastructure_message(self) -> str:
        """One line: how many calls failed, that it is not the model, and the first cause."""
        errors, budget = self.store.errors, self.options.max_errors
        empty = len(self.unanswered_levels)
        parts = [
            f"{errors} model call(s) failed (budget --reasoning-max-errors={budget})"
            + (f", {empty} level(s) got no answer at all" if empty else "")
            + ": infrastructure, not the model; not counted as wrong answers"
        ]
        stopped = next(iter(self.stopped_models.items()), None)
        first = stopped or next(
            ((m, next(iter(c))) for m, c in self.error_messages.items() if c), None
        )
        if first is not None:
            model, message = first
            parts.append(f"cause: {model}: {message}")
        return "; ".join(parts)

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
        """Candidate-vs-baseline comparisons, from the live baseline or the stored one."""
        from ..gates import baseline_answers, compare

        pairs = self.store.pairs
        if self.options.baseline:
            name = self.options.baseline
            base = baseline_answers(a for a, _ in pairs if a.model == name)
        elif self.baseline_rows is not None:
            base, name = self.baseline_rows
        else:
            return []
        return compare([(a, s) for a, s in pairs if a.model != name], base, name)

    def exit_status(self, session: pytest.Session) -> None:
        """Infrastructure errors alone get their own exit status, apart from failed gates."""
        if (
            self.infrastructure_failed
            and session.exitstatus == pytest.ExitCode.TESTS_FAILED
            and session.testsfailed == 1
        ):
            session.exitstatus = EXIT_INFRASTRUCTURE

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
            error_messages={m: list(c.items()) for m, c in self.error_messages.items()},
            not_asked={m: c["not_asked"] for m, c in self.counts.items() if c["not_asked"]},
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
