"""The controller: the process that sees every report (the xdist controller, or the only
process). Outcomes → results store → gates → synthetic test reports → exit status, and the
terminal summary, whose lines are prepared in ``report.summary``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import pytest

from .items import payload
from .state import RunState

if TYPE_CHECKING:
    from ..gates import Comparison, GateResult, ResultStore

__all__ = ["EXIT_INFRASTRUCTURE", "Controller"]

EXIT_INFRASTRUCTURE = 6  # pytest uses 0-5; see README "Exit status"


class Controller:
    def __init__(self, state: RunState) -> None:
        from ..gates import ResultStore

        self.state = state
        self.options = state.options
        self.store: ResultStore = ResultStore(self.options.results)
        self.gates: list[GateResult] = []
        self.comparisons: list[Comparison] = []
        self.baseline_rows: tuple[dict[tuple[str, str], bool | None], str] | None = None
        self.repeats: dict[tuple[str, str, str], int] = {}  # (entry, level, model) → count

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
        self.baseline_rows = (
            {
                (str(r["item_id"]), str(r["prompt_sha256"])): r.get("correct")
                for r in rows
                if r["model"] == name
            },
            name,
        )

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
        try:
            self.store.add(Outcome.from_dict(data), spec)
        except StorageFailed as exc:
            _stop_for_storage(
                f"{exc} (the rows before are intact: free space or fix the path, then rerun)"
            )
        if data.get("storage_error"):
            _stop_for_storage(str(data["storage_error"]))
        if data.get("repeat"):
            key = (spec.entry, spec.level, str(data["model"]))
            self.repeats[key] = self.repeats.get(key, 0) + 1

    # -- the end ------------------------------------------------------------------------------
    def finish(self, session: pytest.Session) -> None:
        """Decide every gate and report each as a test."""
        from ..gates import decide_gates

        store = self.store
        store.close()
        # The baseline's own accuracy is reported, not gated: it is the reference point.
        baseline = self.options.baseline
        self.gates = decide_gates(s for s in store.levels.values() if s.model != baseline)
        multi = len({s.model for s in store.levels.values()}) > 1
        self.comparisons = self._compare()
        max_errors = self.options.max_errors
        # Gates are reported as tests; count them so progress ends at 100%, not beyond.
        session.testscollected += sum(g.passed is not None for g in self.gates)
        session.testscollected += len(self.comparisons)
        session.testscollected += store.errors > max_errors
        for gate in self.gates:
            if gate.passed is None:
                continue
            s = gate.stats
            name = f"{s.spec.entry}[{s.spec.level}-gate" + (f"-{s.model}]" if multi else "]")
            props = {
                "model": s.model,
                "task": s.task,
                "level": s.spec.level,
                "n": s.n,
                "correct": s.correct,
                "errors": s.errors,
                "accuracy": s.accuracy,
                "min_accuracy": s.spec.rule.min_accuracy,
                "confidence": s.spec.rule.confidence,
                "passed": gate.passed,
            }
            _emit(
                session,
                s.spec.suite,
                name,
                gate.passed,
                f"GATE FAILED {s.model} {s.task} {s.spec.level}: {gate.reason}",
                [("reasoning.gate", json.dumps(props))],
            )
        candidates = {c.candidate for c in self.comparisons}
        for c in self.comparisons:
            name = f"{c.spec.entry}[{c.spec.level}-vs-baseline" + (
                f"-{c.candidate}]" if len(candidates) > 1 else "]"
            )
            _emit(
                session,
                c.spec.suite,
                name,
                not c.regressed,
                f"REGRESSION {c.task} {c.spec.level}: {c.reason()}",
                [("reasoning.comparison", json.dumps(c.to_dict()))],
            )
        if store.errors > max_errors:
            _emit(
                session,
                "reasoning",
                "infrastructure",
                False,
                f"{store.errors} model call(s) failed after retries (budget "
                f"--reasoning-max-errors={max_errors}): infrastructure errors, not wrong "
                "answers; see the 'errors' column",
                [],
            )

    def _compare(self) -> list[Comparison]:
        """Candidate-vs-baseline comparisons, from the live baseline or the stored one."""
        from ..gates import baseline_answers, compare

        store = self.store
        if self.options.baseline:
            name = self.options.baseline
            base = baseline_answers(o for o in store.outcomes if o.model == name)
        elif self.baseline_rows is not None:
            base, name = self.baseline_rows
        else:
            return []
        rows = [(o, s) for o, s in zip(store.outcomes, store.specs, strict=True) if o.model != name]
        return compare(rows, base, name)

    def exit_status(self, session: pytest.Session) -> None:
        """Infrastructure errors alone get their own exit status, apart from failed gates."""
        infra = self.store.errors > self.options.max_errors
        if (
            infra
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
            answered=store.written if store.path else len(store.outcomes),
            interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
            saved_to=str(store.path) if store.path else None,
            repeats=self.repeats,
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
            )
        except Exception as exc:  # a report must never turn a run's verdict into a crash
            tr.write_line(
                f"reasoning: could not write the report to {report_dir}: "
                f"{type(exc).__name__}: {exc}",
                red=True,
            )
        else:
            tr.write_line(f"reasoning: report {os.path.join(report.out, 'index.html')}")


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


def _emit(
    session: pytest.Session,
    path: str,
    name: str,
    passed: bool,
    message: str,
    props: Sequence[tuple[str, object]],
) -> None:
    """Report a synthetic test (a gate) through the normal hooks, so the terminal, JUnit XML
    and the exit status all see it like any other test."""
    nodeid = f"{path}::{name}"
    location = (path, None, name)
    hook = session.config.hook
    hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
    for when in ("setup", "call", "teardown"):
        outcome: Literal["passed", "failed"] = "passed" if when != "call" or passed else "failed"
        rep = pytest.TestReport(
            nodeid=nodeid,
            location=location,
            keywords={name: 1},
            outcome=outcome,
            longrepr=message if outcome == "failed" else None,
            when=when,
            user_properties=list(props) if when == "teardown" else [],
            duration=0.0,
        )
        hook.pytest_runtest_logreport(report=rep)
    hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
