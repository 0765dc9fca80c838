"""Commands over results files: ``report``, ``gate`` (the verdicts of merged shards) and
``robustness``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ReasoningError, printable
from ..files import write_output
from .common import EXIT_INTERRUPTED, EXIT_USAGE, _check_writable, _error

if TYPE_CHECKING:
    from ..merge import Merge


def report_command(args: argparse.Namespace) -> int:
    from ..core import Outcome
    from ..gates import GateSpec, compare, item_scores
    from ..report import build_report

    files = _report_files(args.results)
    rows = _read_report_rows(files)
    prompts = _filed_prompts(files)
    comparisons = []
    if args.baseline:
        models = {r["model"] for r in rows}
        if args.baseline not in models:
            raise ReasoningError(
                f"--baseline: {args.baseline!r} is not in the files; they hold "
                + ", ".join(sorted(models))
            )
        outcomes = [Outcome.from_dict(r) for r in rows]
        base = item_scores(o for o in outcomes if o.model == args.baseline)
        comparisons = compare(
            (
                (o, GateSpec(o.suite or "", o.entry or o.task, o.level))
                for o in outcomes
                if o.model != args.baseline
            ),
            base,
            args.baseline,
        )
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ReasoningError(f"--out: {args.out} exists and is not a folder")
    try:
        from ..models.kinds import price_of

        report = build_report(
            rows, args.out, comparisons=comparisons, prices=price_of, prompts=prompts
        )
    except OSError as exc:
        raise ReasoningError(
            f"--out: cannot write {exc.filename or args.out}: {exc.strerror}"
        ) from None
    for path in report.files:
        print(f"wrote {path}")
    if report.note:
        sys.stderr.write(f"pytest-reasoning: note: {report.note}\n")
    return 0


def _report_files(paths: Sequence[str]) -> list[str]:
    """Results files named, and every ``*.jsonl`` under a folder named (a CI merge job's
    downloaded shards), as ``gate`` finds them."""
    from ..merge import results_files

    return results_files(paths, option=None)


def _filed_prompts(files: Sequence[str]) -> dict[str, str]:
    """The prompts each run filed beside its results file, by hash (each checked by it)."""
    from ..gates.store import read_prompts

    prompts: dict[str, str] = {}
    for path in files:
        prompts.update(read_prompts(path))
    return prompts


def _read_report_rows(files: Sequence[str]) -> list[dict[str, Any]]:
    """Rows of results files, one per sample (the last file given wins, as
    ``pytest-reasoning gate`` counts them)."""
    from ..gates.rows import row_key
    from ..merge import disambiguate, read_all

    kept: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in disambiguate(read_all(files)):
        kept.pop(row_key(row), None)
        kept[row_key(row)] = row
    return list(kept.values())


def _read_all(paths: Sequence[str]) -> list[dict[str, Any]]:
    from ..merge import disambiguate, read_all

    return disambiguate(read_all(paths))


def gate_command(args: argparse.Namespace) -> int:
    """``pytest-reasoning gate``: the merge job of a CI matrix. Usage errors exit 4 and Ctrl-C
    2, as a pytest run (and every command) would."""
    try:
        return _gate(args)
    except KeyboardInterrupt:
        sys.stderr.write("pytest-reasoning: gate: interrupted\n")
        return EXIT_INTERRUPTED
    except ReasoningError as exc:
        problems = getattr(exc, "problems", (exc,))  # a suite's mistakes: one line each
        for problem in problems[:-1]:
            _error(str(getattr(problem, "line", problem)), EXIT_USAGE)
        last = problems[-1]
        return _error(str(getattr(last, "line", last)), EXIT_USAGE)


def _gate(args: argparse.Namespace) -> int:
    import time
    from dataclasses import replace

    from ..merge import junit_xml, merge
    from ..report import closing_lines, summary_lines
    from ..report.links import gate_link
    from ..report.publish import check_output_dir, publish

    start = time.perf_counter()
    for option, value, low in (
        ("--reasoning-samples", args.reasoning_samples, 0),
        ("--reasoning-repeats", args.reasoning_repeats, 1),
        ("--reasoning-max-errors", args.reasoning_max_errors, 0),
    ):
        if value is not None and value < low:
            raise ReasoningError(f"{option}: must be >= {low}, got {value}")
    seed = None
    if args.reasoning_seed is not None:
        from ..runs import parse_seed  # one seed parser for a run and its commands

        seed, _ = parse_seed(args.reasoning_seed)
    link_base = args.report
    if args.reasoning_report_url is not None:
        from ..errors import InvalidArgument
        from ..report.links import check_report_url

        try:
            link_base = check_report_url(args.reasoning_report_url)
        except InvalidArgument as exc:
            raise ReasoningError(f"--reasoning-report-url: {exc}") from None
    if args.junitxml:  # before the work, not after
        _check_writable("--junitxml", os.path.dirname(os.path.abspath(args.junitxml)))
    problem = check_output_dir("--report", args.report) if args.report else None
    if problem:
        raise ReasoningError(problem)
    if args.from_logs:
        result = _from_logs(args)
    elif not args.results or not args.suites:
        raise ReasoningError(
            "name the suites and --results FILE... (our shards), or --from KIND LOG... (another "
            "harness's logs, docs/harnesses.md)"
        )
    else:
        result = merge(
            args.suites,
            args.results,
            baseline=args.llm_baseline,
            baseline_results=args.reasoning_baseline_results,
            baseline_model=args.reasoning_baseline_model,
            samples=args.reasoning_samples,
            seed=seed,
            repeats=args.reasoning_repeats,
            max_errors=args.reasoning_max_errors,
            allow_partial=args.allow_partial,
            sequential=args.reasoning_sequential,
            drift=args.reasoning_drift,
            drift_max_changed=args.reasoning_drift_max_changed,
        )
    run = result.summary
    gated = len(run.levels)
    read, given = ("results file(s)", "belong to the suites given")
    if args.from_logs:
        read, given = "log(s)", "are gated"
    print(
        f"reasoning gate: {result.rows} rows from {result.files} {read}; "
        f"{len(run.rows)} {given} ({gated} model level(s))"
    )
    for note in result.notes:
        _say(f"reasoning: note: {note}")
    shown = {"passed": "PASSED", "failed": "FAILED", "skipped": "NOT DECIDED"}
    verdicts = [
        # A failed gate's samples, in the terminal and in JUnit (as a pytest run links them).
        replace(v, message=f"{v.message}; samples: {gate_link(link_base, v.subject)}")
        if v.outcome == "failed" and link_base and v.subject is not None
        else v
        for v in result.verdicts
    ]
    for v in verdicts:
        if args.quiet and v.outcome == "passed":
            continue
        tail = "" if v.outcome == "passed" else f" - {v.message}"
        if v.outcome == "passed" and getattr(v.subject, "marginal", False):
            tail = "* (not significant: its 95% interval reaches below min_accuracy)"
        _say(f"{v.nodeid} {shown[v.outcome]}{tail}")
    published = None
    if run.levels:
        print(" reasoning summary ".center(80, "-"))
        for line in summary_lines(run):
            _say(f" {line.text} ".center(80, "-") if line.sep else line.text)
        from ..models.kinds import price_of

        if args.report and args.results:  # the shards' prompts beside their results files
            run = replace(run, prompts=_filed_prompts(_report_files(args.results)))
        published = publish(run, report_dir=args.report, prices=price_of)
        for line in [*published, *closing_lines(run)]:
            _say(f" {line.text} ".center(80, "-") if line.sep else line.text)
    seconds = time.perf_counter() - start
    if args.junitxml:
        try:
            with write_output(args.junitxml) as fh:  # /dev/full fails here, not silently
                fh.write(junit_xml(verdicts, seconds))
        except OSError as exc:
            raise ReasoningError(
                f"--junitxml: cannot write {args.junitxml}: {exc.strerror}"
            ) from None
        print(f"reasoning: JUnit XML {args.junitxml}")
    counts = [
        f"{n} {word}"
        for word, n in (
            ("failed", sum(v.outcome == "failed" for v in result.verdicts)),
            ("passed", sum(v.outcome == "passed" for v in result.verdicts)),
            ("not decided", sum(v.outcome == "skipped" for v in result.verdicts)),
        )
        if n
    ]
    status = result.status
    if published is not None and published.failed and status == 0:
        status = EXIT_USAGE  # an output asked for was not written (docs/verdicts.md)
    print(f"{', '.join(counts) or 'no verdicts'} in {seconds:.2f}s (exit status {status})")
    return status


def _from_logs(args: argparse.Namespace) -> Merge:
    """``gate [THRESHOLDS] --from KIND LOG...``: another harness's logs (docs/harnesses.md)."""
    from ..harnesses import gate_logs

    if args.results:
        raise ReasoningError("--results and --from: give our results files or logs, not both")
    for option, value in (
        ("--reasoning-samples", args.reasoning_samples),
        ("--reasoning-seed", args.reasoning_seed),
        ("--reasoning-repeats", args.reasoning_repeats),
        ("--reasoning-sequential", args.reasoning_sequential or None),
        ("--reasoning-drift", args.reasoning_drift),
    ):
        if value is not None:
            raise ReasoningError(f"{option}: not with --from (a log holds what it ran)")
    if len(args.suites) > 1:
        raise ReasoningError(
            f"--from: one thresholds file, got {len(args.suites)}: {' '.join(args.suites)}"
        )
    kind, *paths = args.from_logs
    misplaced = [p for p in paths if p.endswith((".yaml", ".yml"))]
    if misplaced:  # --from takes every word after it
        raise ReasoningError(
            f"--from {kind}: {misplaced[0]} is no log: put the thresholds file before --from"
        )
    base = args.reasoning_baseline_results
    return gate_logs(
        kind,
        paths,
        thresholds=args.suites[0] if args.suites else None,
        baseline=args.llm_baseline,
        baseline_logs=[base] if base else [],
        baseline_model=args.reasoning_baseline_model,
        max_errors=args.reasoning_max_errors,
        allow_partial=args.allow_partial,
    )


def _say(text: str) -> None:
    """A line of ``gate``'s output: results files are anyone's (a CI artifact), so what they
    say (model names, error text) is shown, never obeyed by the terminal."""
    print(printable(text))


def robustness_command(args: argparse.Namespace) -> int:
    if args.permutations < 1 or args.samples < 1:
        raise ReasoningError("--permutations and --samples: must be >= 1")
    try:
        from .. import robustness
    except ImportError as exc:
        raise ReasoningError(
            f"robustness needs the analysis extra (pip install 'pytest-reasoning[analysis]'): {exc}"
        ) from None
    matrix = robustness.build_matrix(_read_all(args.results))
    try:
        analysis = robustness.analyze(
            matrix, permutations=args.permutations, samples=args.samples, seed=args.seed
        )
    except ValueError as exc:
        raise ReasoningError(str(exc)) from None
    for line in robustness.summary_lines(analysis):
        _say(line)
    if args.out:
        for path in robustness.write_outputs(analysis, args.out):
            print(f"wrote {path}")
    return 0
