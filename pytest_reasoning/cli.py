"""``pytest-reasoning``: the command line (``export`` …). Usage errors exit with status 2 and
one line; nothing here imports pytest."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from .config import parse_param
from .core import Item
from .errors import InvalidArgument, ReasoningError, clip
from .gates import read_results
from .models.kinds import model_kind
from .registry import get_task, task_ids

if TYPE_CHECKING:
    from .evaluate import Evaluator
    from .narrate import Narration

__all__ = ["export_items", "main"]

EXIT_USAGE = 2
T = TypeVar("T")


def show_progress(quiet: bool) -> bool:
    """Progress goes to stderr, and only to a terminal: a pipe or a CI log stays clean."""
    return not quiet and sys.stderr.isatty()


def _bar(items: Iterable[T], **kwargs: Any) -> Iterator[T]:
    """tqdm on stderr (rate, ETA), shown only after a second, so short work prints nothing;
    imported only here (about 40 ms), never by the pytest plugin."""
    from tqdm import tqdm

    yield from tqdm(items, file=sys.stderr, delay=1.0, mininterval=0.5, **kwargs)


def _param(text: str) -> tuple[str, Any]:
    try:
        return parse_param(text)
    except InvalidArgument as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def export_items(
    task_id: str,
    level: str,
    count: int,
    seed: int,
    params: dict[str, Any],
    style: str,
    with_steps: bool,
    out: TextIO,
    *,
    progress: bool = False,
) -> int:
    """Stream ``count`` items as JSON lines (one item in memory at a time); with
    ``progress``, a bar with rate and ETA on stderr once the export takes over a second."""
    task = get_task(task_id)
    task.resolve_params(level, params)  # fail before writing anything
    task.check_style(style)
    from .datasets import export_row, write_row

    indices: Iterable[int] = range(count)
    if progress:
        indices = _bar(indices, total=count, unit="item", desc=f"{task_id} {level}")
    for index in indices:
        item = task.make_item(level, seed, index, params, style)
        row = export_row(task, item, **({"steps": task.steps(item)} if with_steps else {}))
        write_row(out, row)
    repeated = task.repeated(level, seed, count, params)
    if repeated:  # honest about small levels: D1 boolean logic has ten distinct problems
        sys.stderr.write(
            f"pytest-reasoning: note: {repeated} of {count} items repeat an earlier problem; "
            f"{task_id} {level} has no more distinct problems under these knobs\n"
        )
    return count


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, usage exit code
        raise SystemExit(_error(message))


def _error(message: str) -> int:
    """Write the one error line (a quoted value clipped, never a second line); EXIT_USAGE."""
    text = clip(" ".join(message.split()), 1000)
    with contextlib.suppress(OSError):  # stderr itself may be the full disk
        sys.stderr.write(f"pytest-reasoning: error: {text}\n")
        sys.stderr.flush()
    return EXIT_USAGE


def _detach_stdout() -> None:
    """After a failed write to stdout, point it at /dev/null: Python would otherwise retry
    the buffered rest at exit and print a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is not a file (captured, closed)
        pass


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="pytest-reasoning",
        description="Generate and analyse reasoning problems. Suites run under pytest: "
        "pytest example_suites/quick.yaml --llm reference",
    )
    sub = ap.add_subparsers(dest="command", parser_class=_Parser)
    ex = sub.add_parser("export", help="write generated items as JSONL")
    ex.add_argument("task", help="task id, e.g. dyval.arithmetic")
    ex.add_argument("--level", required=True)
    ex.add_argument("--count", type=int, default=10)
    ex.add_argument("--seed", type=int, default=1)
    ex.add_argument("--param", type=_param, action="append", default=[], metavar="KEY=VALUE")
    ex.add_argument("--style", default="direct")
    ex.add_argument(
        "--with-steps",
        action="store_true",
        help="add the step-by-step solution text (for fine-tuning)",
    )
    ex.add_argument("-o", "--output", default="-", help="file to write (default stdout)")
    ex.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    ts = sub.add_parser(
        "tasks",
        help="list the registered tasks and their levels; with a task id or --verbose, their "
        "styles and knobs (type, range, each level's default)",
    )
    ts.add_argument("task", nargs="?", help="one task id, e.g. dyval.arithmetic")
    ts.add_argument("-v", "--verbose", action="store_true", help="styles and knobs of every task")
    pl = sub.add_parser(
        "plan", help="samples per level needed to detect an accuracy drop (paired McNemar)"
    )
    pl.add_argument("--drop", type=float, required=True, help="drop to detect, e.g. 0.05")
    pl.add_argument("--baseline-accuracy", type=float, required=True, help="e.g. 0.85")
    pl.add_argument("--power", type=float, default=0.8)
    pl.add_argument("--alpha", type=float, default=0.05, help="one-sided significance")
    pl.add_argument("--levels", type=int, default=1, help="levels tested (Holm's correction)")
    pl.add_argument(
        "--discordance",
        type=float,
        help="expected share of items exactly one model gets right (default: independent errors)",
    )
    fr = sub.add_parser(
        "frontier", help="the hardest value of one knob at which a model reaches a target"
    )
    fr.add_argument(
        "--llm",
        required=True,
        help="a LiteLLM model string, 'reference', 'local', or an alias of --llm-config",
    )
    fr.add_argument("--llm-api-base", help="OpenAI-compatible endpoint (vLLM, llama.cpp, ...)")
    fr.add_argument(
        "--llm-config",
        help="a LiteLLM model_list (YAML) whose model_name aliases --llm may name",
    )
    fr.add_argument(
        "--llm-param",
        type=_param,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="generation parameter (repeatable)",
    )
    fr.add_argument("--task", required=True)
    fr.add_argument("--knob", required=True, help="a numeric knob, e.g. depth or nodes")
    fr.add_argument("--min", type=int, required=True, dest="low")
    fr.add_argument("--max", type=int, required=True, dest="high")
    fr.add_argument("--target", type=float, default=0.5, help="accuracy to reach (default 0.5)")
    fr.add_argument("--level", help="the level whose preset the other knobs come from")
    fr.add_argument("--param", type=_param, action="append", default=[], metavar="KEY=VALUE")
    fr.add_argument("--seed", type=int, default=0)
    fr.add_argument("--confidence", type=float, default=0.9)
    fr.add_argument("--max-samples", type=int, default=60, help="per probe (default 60)")
    fr.add_argument("--max-calls", type=int, help="for the whole search")
    fr.add_argument("--cache", default=".reasoning_cache", help="response cache ('off': none)")
    fr.add_argument("--json", help="also write the result as JSON to this file")
    fr.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    rb = sub.add_parser(
        "robustness",
        help="does a model ranking survive other weightings of the items? (needs [analysis])",
    )
    rb.add_argument("results", nargs="+", help="results files (JSONL) of two or more models")
    rb.add_argument("--out", help="folder for robustness.json and the PNG plots")
    rb.add_argument("--permutations", type=int, default=1000)
    rb.add_argument("--samples", type=int, default=100_000, help="random weightings")
    rb.add_argument("--seed", type=int, default=0)
    _narrate_parser(sub)
    rp = sub.add_parser("report", help="an HTML report (plots, tables, failing samples)")
    rp.add_argument("results", nargs="+", help="results files (JSONL)")
    rp.add_argument("--out", required=True, help="folder for index.html, summary.json, PNGs")
    rp.add_argument("--baseline", help="a model in the files to compare the others against")
    au = sub.add_parser(
        "audit", help="score shortcut baselines against chance: can items be answered blind?"
    )
    au.add_argument("tasks", nargs="*", metavar="TASK", help="task ids (default: every task)")
    au.add_argument("--level", action="append", help="only this level (repeatable)")
    au.add_argument("--count", type=int, default=200, help="items per seed (default 200)")
    au.add_argument("--seed", type=int, default=1, help="test seed; training uses seed + 1")
    au.add_argument("--jobs", type=int, default=0, help="processes (default: one per CPU)")
    au.add_argument("--json", action="store_true", help="write the results as JSON")
    return ap


def audit_command(args: argparse.Namespace) -> int:
    """``pytest-reasoning audit``: every baseline of every task x level, next to chance."""
    from tabulate import tabulate

    from .audit import audit

    if args.count < 1:
        raise ReasoningError("--count: must be >= 1")
    if args.jobs < 0:
        raise ReasoningError("--jobs: must be >= 0 (0: one per CPU)")
    for tid in args.tasks:
        get_task(tid)  # an unknown id fails before any work
    for level in args.level or ():
        if args.tasks:
            for tid in args.tasks:
                get_task(tid).check_level(level)
        elif not any(level in get_task(t).levels for t in task_ids()):
            raise ReasoningError(f"--level: no task has a level {level!r}")

    def show(a: Any) -> None:
        if args.json:
            return
        rows = [
            [
                b.name + (" *" if b is a.best else ""),
                f"{b.accuracy:.3f}",
                f"[{b.low:.3f}, {b.high:.3f}]",
                f"{b.accuracy - a.chance:+.3f}",
                b.abstained or "",
            ]
            for b in a.baselines
        ]
        print(f"{a.task} {a.level}: n={a.count}, chance {a.chance:.3f} ({a.chance_basis})")
        print(
            tabulate(
                rows,
                headers=["baseline", "accuracy", "95% Wilson", "vs chance", "abstained"],
                disable_numparse=True,
            )
        )
        print(flush=True)

    levels = args.level or None
    try:
        results = audit(
            args.tasks or None,
            levels=levels,
            count=args.count,
            seed=args.seed,
            jobs=args.jobs or os.cpu_count() or 1,
            progress=show,
        )
    except ValueError as exc:
        raise ReasoningError(str(exc)) from None
    if args.json:
        json.dump([a.to_dict() for a in results], sys.stdout, indent=1)
        sys.stdout.write("\n")
    return 0


def _narrate_parser(sub: Any) -> None:
    na = sub.add_parser(
        "narrate",
        help="MuSR stories written by a model, chapter by chapter, under validators (JSONL)",
    )
    na.add_argument("task", help="a MuSR task id, e.g. musr.murder_mystery")
    na.add_argument("--level", required=True)
    na.add_argument("--count", type=int, default=10, help="problems to narrate (default 10)")
    na.add_argument("--seed", type=int, default=1)
    na.add_argument("--param", type=_param, action="append", default=[], metavar="KEY=VALUE")
    na.add_argument("--style", default="direct", help="the items' prompt style")
    na.add_argument(
        "--llm",
        required=True,
        help="the narrator: a LiteLLM model string, 'local', or an alias of --llm-config",
    )
    na.add_argument("--judge", help="who answers the fact-recall questions (default: --llm)")
    na.add_argument("--llm-api-base", help="OpenAI-compatible endpoint (vLLM, llama.cpp, ...)")
    na.add_argument(
        "--llm-config", help="a LiteLLM model_list (YAML) whose model_name aliases --llm names"
    )
    na.add_argument(
        "--llm-param",
        type=_param,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="generation parameter (repeatable)",
    )
    na.add_argument(
        "--attempts", type=int, default=3, help="tries per chapter before the problem is dropped"
    )
    na.add_argument("--stories-at-once", type=int, default=4, help="problems narrated concurrently")
    na.add_argument("--cache", default=".reasoning_cache", help="response cache ('off': none)")
    na.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="per-request timeout in seconds (default 120; a chapter from a slow local model "
        "can need more)",
    )
    na.add_argument(
        "--price-as",
        action="append",
        default=[],
        metavar="MODEL",
        help="also price the run's tokens as this LiteLLM model (repeatable)",
    )
    na.add_argument("--out", required=True, help="the JSONL file to write")


def _open_evaluator(
    args: argparse.Namespace, stack: contextlib.ExitStack, models: Sequence[str]
) -> Evaluator:
    """The evaluator of a command that calls models: --llm-config aliases, --llm-param values
    (no secrets), the embedded server if a model is ``local``, the response cache."""
    from .evaluate import EvalConfig, Evaluator
    from .models.endpoints import check_not_secret

    for name, _ in args.llm_param:
        try:
            check_not_secret(name)
        except InvalidArgument as exc:
            raise ReasoningError(f"--llm-param {exc}") from None
    specs = {}
    if args.llm_config:
        from .models.endpoints import load_model_list

        try:
            specs = load_model_list(args.llm_config)
        except InvalidArgument as exc:
            raise ReasoningError(f"--llm-config {exc}") from None
    kinds = [model_kind(m, specs) for m in models]
    silent = [m for m, k in zip(models, kinds, strict=True) if not k.calls_model]
    if silent:
        raise ReasoningError(f"--llm: {silent[0]!r} writes no text; name a language model")
    from .models.litellm_client import check_installed_litellm

    check_installed_litellm()
    local_url = local_identity = None
    if any(k.needs_local_server for k in kinds):
        from .models.local import LocalServer

        server = stack.enter_context(LocalServer())  # started by entering
        local_url, local_identity = server.url, server.identity
    cache = None if args.cache.lower() in ("off", "none", "0") else args.cache
    evaluator = Evaluator(
        EvalConfig(
            api_base=args.llm_api_base,
            params=dict(args.llm_param),
            cache_dir=cache,
            timeout_s=getattr(args, "timeout", 120.0),
            local_url=local_url,
            local_identity=local_identity,
            models=specs,
        )
    )
    stack.callback(evaluator.close)
    return evaluator


def narrate_command(args: argparse.Namespace) -> int:
    """Narrate ``--count`` problems; write the kept ones to ``--out`` (atomically)."""
    from .narrate import NarrateOptions, Narration, StoryResult, narrate_items, planner_for

    if args.count < 0:
        raise ReasoningError("--count: must be >= 0")
    if args.attempts < 1 or args.stories_at_once < 1:
        raise ReasoningError("--attempts and --stories-at-once: must be >= 1")
    if not args.timeout > 0 or args.timeout == float("inf"):
        raise ReasoningError(
            f"--timeout: expected a positive number of seconds, got {args.timeout}"
        )
    planner_for(args.task)
    task = get_task(args.task)
    params = dict(args.param)
    task.resolve_params(args.level, params)  # fail before any call
    task.check_style(args.style)
    out = os.path.abspath(args.out)
    _check_writable("--out", os.path.dirname(out))
    if args.price_as:
        from .models.litellm_client import cost_usd

        unknown = [m for m in args.price_as if not cost_usd(m, 1000, 1000)]
        if unknown:
            raise ReasoningError(f"--price-as {unknown[0]}: not in LiteLLM's price map")
    options = NarrateOptions(
        model=args.llm, judge=args.judge, attempts=args.attempts,
        stories_at_once=args.stories_at_once,
    )  # fmt: skip
    summary = Narration()
    items = (
        task.make_item(args.level, args.seed, i, params, args.style) for i in range(args.count)
    )
    done = 0

    def progress(result: StoryResult) -> None:
        nonlocal done
        done += 1
        if result.row is not None:
            what = f"kept ({result.retries} retries)" if result.retries else "kept"
        elif result.dropped is not None:
            from .narrate import FAILURES

            what = f"dropped: chapter {result.chapter!r}, {FAILURES[result.dropped]}"
        else:
            what = f"not finished: {result.error}"
        u = result.usage
        sys.stderr.write(
            f"narrate: {done}/{args.count} {result.item.id} {what} "
            f"[{u.requests} requests, {u.cached} cached]\n"
        )
        sys.stderr.flush()

    tmp = f"{out}.{os.getpid()}.tmp"
    with contextlib.ExitStack() as stack:
        evaluator = _open_evaluator(args, stack, [args.llm, options.judge_model])
        try:
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                from .datasets import write_row

                for result in narrate_items(items, evaluator, options, on_story=progress):
                    summary.add(result)
                    if result.row is not None:
                        write_row(fh, result.row)
            os.replace(tmp, out)
        finally:
            with contextlib.suppress(OSError):
                os.remove(tmp)
        lines = summary.lines()
        lines.append(_narration_cost(summary, args.llm, args.price_as))
    for line in lines:
        print(line)
    print(f"wrote {summary.kept} items to {args.out}")
    return 0


def _narration_cost(summary: Narration, model: str, price_as: Sequence[str]) -> str:
    """The run's cost: what the replies carried (LiteLLM's price map), and the same tokens
    priced as other models (``--price-as``)."""
    from .models.litellm_client import cost_usd

    u = summary.usage
    if u.priced:
        said = f"cost: ${u.cost_usd:.4f} (LiteLLM's price map, {u.priced} of {u.requests} priced)"
    else:
        said = f"cost: not priced ({model} is not in LiteLLM's price map)"
    for other in price_as:
        price = cost_usd(other, u.prompt_tokens, u.completion_tokens)
        said += f"; as {other}: ${price:.4f}"
    return said


def report_command(args: argparse.Namespace) -> int:
    from .core import Outcome
    from .gates import GateSpec, baseline_answers, compare
    from .report import build_report

    rows = _read_all(args.results)
    comparisons = []
    if args.baseline:
        models = {r["model"] for r in rows}
        if args.baseline not in models:
            raise ReasoningError(
                f"--baseline: {args.baseline!r} is not in the files; they hold "
                + ", ".join(sorted(models))
            )
        outcomes = [Outcome.from_dict(r) for r in rows]
        base = baseline_answers(o for o in outcomes if o.model == args.baseline)
        comparisons = compare(
            ((o, GateSpec("", o.task, o.level)) for o in outcomes if o.model != args.baseline),
            base,
            args.baseline,
        )
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ReasoningError(f"--out: {args.out} exists and is not a folder")
    try:
        report = build_report(rows, args.out, comparisons=comparisons)
    except OSError as exc:
        raise ReasoningError(
            f"--out: cannot write {exc.filename or args.out}: {exc.strerror}"
        ) from None
    for path in report.files:
        print(f"wrote {path}")
    if report.note:
        sys.stderr.write(f"pytest-reasoning: note: {report.note}\n")
    return 0


# The fields every consumer of a results file relies on (older files lack score and extra).
_NEEDED = ("item_id", "model", "task", "level", "correct", "error")


def _read_all(paths: Sequence[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        try:
            found = list(read_results(path))
        except OSError as exc:
            raise ReasoningError(f"{path}: cannot read: {exc.strerror}") from None
        except (ValueError, KeyError) as exc:
            raise ReasoningError(f"{path}: not a results file ({exc})") from None
        if not found:
            raise ReasoningError(f"{path}: no result rows (expected a --reasoning-results file)")
        for row in found:
            missing = [k for k in _NEEDED if k not in row]
            if missing:
                raise ReasoningError(
                    f"{path}: row {row['item_id']!r} lacks {', '.join(missing)}: not a "
                    "--reasoning-results file"
                )
        rows.extend(found)
    return _disambiguate(rows)


def _disambiguate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of one model name that name different models precisely (two GGUFs both run as
    ``local``, one alias on two endpoints) are labelled by their ``model_id``, so the report
    keeps them apart instead of pooling them."""
    ids: dict[str, set[str]] = {}
    for row in rows:
        if row.get("model_id"):
            ids.setdefault(str(row["model"]), set()).add(str(row["model_id"]))
    for row in rows:
        if len(ids.get(str(row["model"]), ())) > 1:
            row["model"] = row["model_id"] or row["model"]
    return rows


def robustness_command(args: argparse.Namespace) -> int:
    if args.permutations < 1 or args.samples < 1:
        raise ReasoningError("--permutations and --samples: must be >= 1")
    try:
        from . import robustness
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
        print(line)
    if args.out:
        for path in robustness.write_outputs(analysis, args.out):
            print(f"wrote {path}")
    return 0


def plan_command(args: argparse.Namespace) -> int:
    from .gates.paired import samples_to_detect_drop

    if args.levels < 1:
        raise ReasoningError("--levels: must be >= 1")
    try:
        n = samples_to_detect_drop(
            args.baseline_accuracy,
            args.drop,
            power=args.power,
            alpha=args.alpha,
            discordance=args.discordance,
        )
        # Holm's first (smallest) p-value is compared with alpha / levels: plan for that.
        worst = samples_to_detect_drop(
            args.baseline_accuracy,
            args.drop,
            power=args.power,
            alpha=args.alpha / args.levels,
            discordance=args.discordance,
        )
    except ValueError as exc:
        raise ReasoningError(str(exc)) from None
    except ArithmeticError as exc:  # a drop so small its square is 0, a plan past any int
        raise ReasoningError(
            f"--drop {args.drop:g}: no sample size detects it ({exc}); plan for a larger drop"
        ) from None
    candidate = args.baseline_accuracy - args.drop
    psi = args.discordance
    if psi is None:
        b = args.baseline_accuracy
        psi = b * (1 - candidate) + candidate * (1 - b)
    assumed = "given" if args.discordance is not None else "assuming independent errors"
    print(
        f"{n} samples per level detect a drop from {args.baseline_accuracy:g} to {candidate:g} "
        f"with power {args.power:g} (one-sided exact McNemar, alpha {args.alpha:g}; "
        f"discordant share {psi:.3f}, {assumed})"
    )
    if args.levels > 1:
        print(
            f"{worst} per level when Holm's correction spans {args.levels} levels "
            f"(alpha / {args.levels})"
        )
    return 0


def frontier_command(args: argparse.Namespace) -> int:
    """Run the frontier search with a real model through the evaluator."""
    from tabulate import tabulate

    from .evaluate import EvalConfig, Evaluator
    from .frontier import find_frontier

    if args.json:  # before the search spends calls, not after
        _check_writable("--json", os.path.dirname(os.path.abspath(args.json)))
    from .models.endpoints import check_not_secret

    for name, _ in args.llm_param:
        try:
            check_not_secret(name)
        except InvalidArgument as exc:
            raise ReasoningError(f"--llm-param {exc}") from None
    specs = {}
    if args.llm_config:
        from .models.endpoints import load_model_list

        try:
            specs = load_model_list(args.llm_config)
        except InvalidArgument as exc:
            raise ReasoningError(f"--llm-config {exc}") from None
    if model_kind(args.llm, specs).calls_model:
        from .models.litellm_client import check_installed_litellm

        check_installed_litellm()
    progress = show_progress(args.quiet)
    with contextlib.ExitStack() as stack:
        local_url = local_identity = None
        if model_kind(args.llm, specs).needs_local_server:
            from .models.local import LocalServer

            if progress:
                sys.stderr.write("pytest-reasoning: starting the embedded model ...\n")
            server = stack.enter_context(LocalServer())  # started by entering: once
            local_url, local_identity = server.url, server.identity
        cache = None if args.cache.lower() in ("off", "none", "0") else args.cache
        evaluator = Evaluator(
            EvalConfig(
                api_base=args.llm_api_base,
                params=dict(args.llm_param),
                cache_dir=cache,
                local_url=local_url,
                local_identity=local_identity,
                models=specs,
            )
        )
        stack.callback(evaluator.close)
        answer = _answering(evaluator, args, stack) if progress else None
        if evaluator.cache is not None:
            evaluator.cache.verify()  # a damaged cache: one line, before any call
        result = find_frontier(
            args.task,
            args.knob,
            args.low,
            args.high,
            answer or (lambda item: _correct(evaluator, item, args.llm)),
            target=args.target,
            level=args.level,
            params=dict(args.param),
            seed=args.seed,
            confidence=args.confidence,
            max_samples=args.max_samples,
            max_calls=args.max_calls,
        )
        if evaluator.storage_error is not None:  # the cache failed mid-search: it stopped
            raise ReasoningError(evaluator.storage_error)
    rows = [
        [
            p.value,
            p.n,
            p.correct,
            p.errors,
            f"{p.accuracy or 0:.2f}",
            f"[{p.low:.2f}, {p.high:.2f}]",
            p.verdict,
        ]
        for p in result.probes
    ]
    print(
        tabulate(
            rows,
            headers=[args.knob, "n", "correct", "errors", "accuracy", "interval", "verdict"],
            disable_numparse=True,
        )
    )
    print(f"frontier: {result.summary()}")
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(result.to_dict(), fh, indent=2)
        except OSError as exc:
            raise ReasoningError(f"--json: cannot write {args.json}: {exc.strerror}") from None
    return 0


def _correct(evaluator: Evaluator, item: Item, model: str) -> bool | None:
    """An answer's verdict; an error retrying cannot fix ends the search with its cause."""
    outcome = evaluator.answer(item, model)
    if outcome.error_kind in ("stop", "not_asked"):
        raise ReasoningError(f"--llm {model}: {outcome.error} (infrastructure, not the model)")
    return outcome.correct


def _answering(evaluator: Any, args: argparse.Namespace, stack: contextlib.ExitStack) -> Any:
    """The frontier's answer function with a progress bar: calls so far against the most
    the search can make (probes of a bisection × samples per probe), so rate and ETA are an
    upper bound; the knob value being probed beside it."""
    import math

    from tqdm import tqdm

    probes = 2 + max(0, math.ceil(math.log2(max(1, args.high - args.low))))
    most = probes * args.max_samples
    if args.max_calls is not None:
        most = min(most, args.max_calls)
    bar = stack.enter_context(
        tqdm(total=most, file=sys.stderr, unit="call", delay=1.0, mininterval=0.5)
    )

    def answer(item: Any) -> bool | None:
        bar.set_postfix_str(f"{args.knob}={item.params.get(args.knob)}", refresh=False)
        correct = _correct(evaluator, item, args.llm)
        bar.update(1)
        return correct

    return answer


def _describe_task(task_id: str) -> str:
    """``tasks TASK``: levels, styles, and every knob with its type, range or choices, and
    each level's default (the level's preset; a suite's ``params`` override it)."""
    from tabulate import tabulate

    task = get_task(task_id)
    levels = list(task.levels)
    shown = levels if len(levels) <= 6 else [*levels[:3], *levels[-2:]]
    presets = {lv: task.preset(lv) for lv in shown}
    rows = []
    for name, knob in sorted(task.knobs.items()):
        kind = knob.kind.__name__ + (f" of {knob.item_kind.__name__}" if knob.item_kind else "")
        if knob.choices is not None:
            allowed = ", ".join(map(str, knob.choices))
        elif knob.minimum is not None and knob.maximum is not None:
            allowed = f"{knob.minimum:g}..{knob.maximum:g}"
        elif knob.minimum is not None:
            allowed = f">= {knob.minimum:g}"
        elif knob.maximum is not None:
            allowed = f"<= {knob.maximum:g}"
        else:
            allowed = "-"
        defaults = [_short(presets[lv].get(name, "-")) for lv in shown]
        rows.append([name, kind, _short(allowed, 28), *defaults, knob.doc])
    head = [_short(lv, 8) for lv in shown]
    if len(shown) < len(levels):
        head[2] += " …"
    styles = ", ".join(task.styles) + (
        "; also " + ", ".join(f"{a} (= {b})" for a, b in task.style_aliases.items())
        if task.style_aliases
        else ""
    )
    lines = [
        f"{task.id}: {task.description}".rstrip(": "),
        f"levels: {' '.join(levels)}",
        f"styles: {styles} (default: direct)",
        "knobs (the columns under the levels are each level's default):",
        tabulate(rows, headers=["knob", "type", "range / choices", *head, "meaning"],
                 disable_numparse=True),
    ]  # fmt: skip
    return "\n".join(lines)


def _short(value: Any, width: int = 14) -> str:
    if isinstance(value, dict):
        value = ",".join(f"{k}={_short(v)}" for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        value = ",".join(map(str, value))
    elif isinstance(value, float):
        value = f"{value:g}"
    text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def tasks_command(args: argparse.Namespace) -> int:
    if args.task:
        print(_describe_task(args.task))
        return 0
    for n, tid in enumerate(task_ids()):
        if args.verbose:
            print(("\n" if n else "") + _describe_task(tid))
        else:
            t = get_task(tid)
            print(f"{tid}\t{' '.join(t.levels)}\t{t.description}")
    return 0


def _check_writable(option: str, folder: str) -> None:
    if not os.path.isdir(folder):
        raise ReasoningError(f"{option}: {folder} is not a folder")
    if not os.access(folder, os.W_OK):
        raise ReasoningError(f"{option}: cannot write in {folder}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # a bare ``pytest-reasoning``: what it can do
        parser.print_help()
        return 0
    try:
        code = _command(args)
        sys.stdout.flush()  # a full disk behind `>` shows here, not as a traceback at exit
        return code
    except ReasoningError as exc:
        return _error(str(exc))
    except BrokenPipeError:  # `| head` is fine
        _detach_stdout()
        return 0
    except OSError as exc:  # what the commands write: stdout or a file they were given
        _detach_stdout()
        where = exc.filename or "the standard output"
        return _error(f"cannot write {where}: {exc.strerror or exc}")


def _command(args: argparse.Namespace) -> int:
    if args.command == "plan":
        return plan_command(args)
    if args.command == "frontier":
        return frontier_command(args)
    if args.command == "robustness":
        return robustness_command(args)
    if args.command == "report":
        return report_command(args)
    if args.command == "audit":
        return audit_command(args)
    if args.command == "narrate":
        return narrate_command(args)
    if args.command == "tasks":
        return tasks_command(args)
    return export_command(args)


def export_command(args: argparse.Namespace) -> int:
    if args.count < 0:
        raise ReasoningError("--count: must be >= 0")
    export = (
        args.task, args.level, args.count, args.seed, dict(args.param), args.style, args.with_steps
    )  # fmt: skip
    progress = show_progress(args.quiet)
    if args.output == "-":
        export_items(*export, sys.stdout, progress=progress)  # a failed write: see main()
        return 0
    try:
        out = open(args.output, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - see below
    except OSError as exc:
        raise ReasoningError(f"--output: cannot write {args.output}: {exc.strerror}") from None
    try:
        export_items(*export, out, progress=progress)
        out.close()  # the last buffered rows are written here
    except OSError as exc:  # a full disk, /dev/full, a file that takes no writes
        raise ReasoningError(
            f"--output: cannot write {args.output}: {exc.strerror or exc}"
        ) from None
    finally:
        with contextlib.suppress(OSError):  # closed, or its buffer cannot be written either
            out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
