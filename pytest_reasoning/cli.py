"""``pytest-reasoning``: the command line (``export`` …). Usage errors exit with status 2 and
one line (``gate`` exits like a pytest run: 4); nothing here imports pytest."""

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
from .models.kinds import model_kind
from .registry import get_task, task_ids

if TYPE_CHECKING:
    from .evaluate import Evaluator
    from .narrate import Narration

__all__ = ["export_items", "export_parallel", "main"]

EXIT_USAGE = 2
GATE_USAGE = 4  # ``gate`` answers like the pytest run it stands in for
GATE_INTERRUPTED = 2
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
    start: int = 0,
    note: bool = True,
) -> int:
    """Stream ``count`` items from index ``start`` on as JSON lines (one item in memory at a
    time); with ``progress``, a bar with rate and ETA on stderr once the export takes over a
    second; with ``note``, one line on stderr when items repeat an earlier problem."""
    task = get_task(task_id)
    task.resolve_params(level, params)  # fail before writing anything
    task.check_style(style)
    from .datasets import export_row, write_row

    indices: Iterable[int] = range(start, start + count)
    if progress:
        indices = _bar(indices, total=count, unit="item", desc=f"{task_id} {level}")
    for index in indices:
        item = task.make_item(level, seed, index, params, style)
        row = export_row(task, item, **({"steps": task.steps(item)} if with_steps else {}))
        write_row(out, row)
    if note:
        _repeat_note(task_id, level, seed, params, start, count)
    return count


def _repeat_note(
    task_id: str,
    level: str,
    seed: int,
    params: dict[str, Any],
    start: int,
    count: int,
    repeated: int | None = None,
) -> None:
    """Honest about small levels: D1 boolean logic has ten distinct problems. ``repeated``:
    already counted (by the workers), else counted here."""
    if repeated is None:
        repeated = _repeats_in(task_id, level, seed, params, start, count)
    if repeated:
        sys.stderr.write(
            f"pytest-reasoning: note: {repeated} of {count} items repeat an earlier problem; "
            f"{task_id} {level} has no more distinct problems under these knobs\n"
        )


def _repeats_in(
    task_id: str, level: str, seed: int, params: dict[str, Any], start: int, count: int
) -> int:
    """Items of ``start..start+count-1`` that repeat an earlier problem (free once built)."""
    task = get_task(task_id)
    stop = task.repeated(level, seed, start + count, params)
    return stop - (task.repeated(level, seed, start, params) or 0) if stop else 0


# -- export --workers: contiguous index ranges in processes, concatenated in order ----------
# A task that keeps its problems distinct (``unique``) builds item k after replaying the
# draws of items 0..k-1 (cheaper than building them: no prompt, no row). A worker that starts
# at index b pays that replay first, so later workers get shorter ranges: with R the replay
# cost and E the export cost of an item, every worker's b*R + (its items)*E is made equal.
_PROBE = 100  # items timed to estimate R and E (about 20 ms)


def _boundaries(start: int, stop: int, workers: int, ratio: float) -> list[int]:
    """Range boundaries ``start = b0 < ... < bK = stop`` (K <= workers) that even out each
    worker's ``(b - start)*ratio + length`` (``ratio`` = R/E, 0 when nothing is replayed);
    a worker that would get nothing is left out."""
    n = stop - start

    def ends(t: float) -> list[float]:
        b, out = 0.0, []
        for _ in range(workers):
            b += max(0.0, t - ratio * b)
            out.append(b)
        return out

    low, high = 0.0, float(n)  # the finish time, in items exported
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (low, mid) if ends(mid)[-1] >= n else (mid, high)
    cuts = sorted({min(n, round(e)) for e in ends(high)[:-1]} - {0, n})
    return [start + b for b in (0, *cuts, n)]


def _replay_ratio(task_id: str, level: str, seed: int, params: dict[str, Any], style: str) -> float:
    """R/E for this task: CPU time of replaying an item's draw against building and writing
    it, measured on a stream no worker uses (seed + 1) after one warm-up item."""
    import io
    import time

    from .datasets import export_row, write_row

    task = get_task(task_id)
    if task.repeated(level, seed, 0, params) is None:  # not ``unique``: nothing to replay
        return 0.0
    probe, sink = seed + 1, io.StringIO()
    write_row(sink, export_row(task, task.make_item(level, probe, 0, params, style)))
    t0 = time.process_time()
    task.repeated(level, probe, 1 + _PROBE, params)  # replay only
    t1 = time.process_time()
    for index in range(1 + _PROBE, 1 + 2 * _PROBE):  # fresh items, built and written
        write_row(sink, export_row(task, task.make_item(level, probe, index, params, style)))
    t2 = time.process_time()
    return (t1 - t0) / max(t2 - t1, 1e-9)


def _export_part(
    task_id: str,
    level: str,
    seed: int,
    params: dict[str, Any],
    style: str,
    with_steps: bool,
    start: int,
    count: int,
    path: str,
) -> int:
    """One worker's range, written to its part file; returns how many of its items repeat
    an earlier problem."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        export_items(
            task_id, level, count, seed, params, style, with_steps, fh, start=start, note=False
        )
    return _repeats_in(task_id, level, seed, params, start, count)


def export_parallel(
    task_id: str,
    level: str,
    count: int,
    seed: int,
    params: dict[str, Any],
    style: str,
    with_steps: bool,
    out: TextIO,
    *,
    start: int = 0,
    workers: int = 2,
    folder: str | None = None,
) -> int:
    """``export_items`` over ``workers`` processes, byte for byte the same output: each
    writes a contiguous range to a part file in ``folder`` (the output's), copied to ``out``
    in order and deleted."""
    import itertools
    import shutil
    import tempfile
    from concurrent.futures import ProcessPoolExecutor

    task = get_task(task_id)
    task.resolve_params(level, params)  # fail before starting anything
    task.check_style(style)
    ratio = _replay_ratio(task_id, level, seed, params, style)
    bounds = _boundaries(start, start + count, workers, ratio)
    parts: list[str] = []
    try:
        with ProcessPoolExecutor(max_workers=len(bounds) - 1) as pool:
            futures = []
            for lo, hi in itertools.pairwise(bounds):
                fd, path = tempfile.mkstemp(prefix=".export-", suffix=".part", dir=folder)
                os.close(fd)
                parts.append(path)
                futures.append(
                    pool.submit(
                        _export_part, task_id, level, seed, params, style, with_steps, lo,
                        hi - lo, path,
                    )
                )  # fmt: skip
            repeated = sum(future.result() for future in futures)  # a worker's error, in order
        for path in parts:
            with open(path, encoding="utf-8", newline="\n") as fh:
                shutil.copyfileobj(fh, out, 1 << 20)
    finally:
        for path in parts:
            with contextlib.suppress(OSError):
                os.unlink(path)
    _repeat_note(task_id, level, seed, params, start, count, repeated)
    return count


class _Parser(argparse.ArgumentParser):
    usage_status = EXIT_USAGE

    def error(self, message: str) -> Any:  # one line, usage exit code
        raise SystemExit(_error(message, self.usage_status))


def _error(message: str, status: int = EXIT_USAGE) -> int:
    """Write the one error line (a quoted value clipped, never a second line); ``status``."""
    text = clip(" ".join(message.split()), 1000)
    with contextlib.suppress(OSError):  # stderr itself may be the full disk
        sys.stderr.write(f"pytest-reasoning: error: {text}\n")
        sys.stderr.flush()
    return status


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
    ex.add_argument("--count", type=int, help="items to write (default 10)")
    ex.add_argument("--seed", type=int, default=1)
    ex.add_argument(
        "--start", type=int, default=0, help="first item index (default 0): a range of a stream"
    )
    ex.add_argument(
        "--stop", type=int, help="the index after the last item (instead of --count: START+COUNT)"
    )
    ex.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="processes writing contiguous ranges (the same bytes as one; no progress bar)",
    )
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
    fr.add_argument(
        "--cache",
        default=".reasoning_cache",
        help="response cache ('off': none; redis://HOST:PORT/DB: shared, .reasoning_cache first)",
    )
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
    gt = sub.add_parser(
        "gate",
        help="decide every gate and comparison from merged results files (the shards of a CI "
        "matrix): the same summary, JUnit XML and exit status as a pytest run",
    )
    gt.usage_status = GATE_USAGE
    gt.add_argument(
        "suites", nargs="+", metavar="SUITE", help="suite files or folders, as the shards ran"
    )
    gt.add_argument(
        "--results",
        nargs="+",
        action="extend",
        required=True,
        metavar="FILE",
        help="the shards' --reasoning-results files, or folders of *.jsonl files",
    )
    gt.add_argument("--llm-baseline", metavar="MODEL", help="a model of the files: compare to it")
    gt.add_argument(
        "--reasoning-baseline-results", metavar="FILE", help="compare to a stored results file"
    )
    gt.add_argument(
        "--reasoning-baseline-model", metavar="NAME", help="its baseline, if it holds several"
    )
    gt.add_argument("--reasoning-samples", type=int, metavar="N", help="as the shards ran")
    gt.add_argument("--reasoning-seed", metavar="S", help="as the shards ran (S, auto, auto:TEXT)")
    gt.add_argument("--reasoning-repeats", type=int, metavar="N", help="as the shards ran")
    gt.add_argument(
        "--reasoning-max-errors",
        type=int,
        default=0,
        metavar="N",
        help="failed calls tolerated over all the files (default 0)",
    )
    gt.add_argument(
        "--allow-partial",
        action="store_true",
        help="levels with missing rows are not decided, without failing the merge (default: "
        "they fail it as infrastructure, exit status 6)",
    )
    gt.add_argument("--junitxml", metavar="PATH", help="write JUnit XML: one testcase per verdict")
    gt.add_argument("--report", metavar="DIR", help="write the HTML report to DIR")
    gt.add_argument(
        "-q", "--quiet", action="store_true", help="list only the verdicts that did not pass"
    )
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


def _read_all(paths: Sequence[str]) -> list[dict[str, Any]]:
    from .merge import disambiguate, read_all

    return disambiguate(read_all(paths))


def gate_command(args: argparse.Namespace) -> int:
    """``pytest-reasoning gate``: the merge job of a CI matrix. Usage errors exit 4 and Ctrl-C
    2, as a pytest run would."""
    try:
        return _gate(args)
    except KeyboardInterrupt:
        sys.stderr.write("pytest-reasoning: gate: interrupted\n")
        return GATE_INTERRUPTED
    except ReasoningError as exc:
        problems = getattr(exc, "problems", (exc,))  # a suite's mistakes: one line each
        for problem in problems[:-1]:
            _error(str(getattr(problem, "line", problem)), GATE_USAGE)
        last = problems[-1]
        return _error(str(getattr(last, "line", last)), GATE_USAGE)


def _gate(args: argparse.Namespace) -> int:
    import time

    from .merge import junit_xml, merge
    from .report import build_report, closing_lines, markdown_summary, summary_lines

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
        from .rng import SEED_FORMS, resolve_seed

        try:
            seed, _ = resolve_seed(args.reasoning_seed)
        except ValueError:
            raise ReasoningError(
                f"--reasoning-seed: {SEED_FORMS}, got {clip(repr(args.reasoning_seed.strip()))}"
            ) from None
    if args.junitxml:  # before the work, not after
        _check_writable("--junitxml", os.path.dirname(os.path.abspath(args.junitxml)))
    if args.report and os.path.exists(args.report) and not os.path.isdir(args.report):
        raise ReasoningError(f"--report: {args.report} exists and is not a folder")
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
    )
    run = result.summary
    gated = len(run.levels)
    print(
        f"reasoning gate: {result.rows} rows from {result.files} results file(s); "
        f"{len(run.rows)} belong to the suites given ({gated} model level(s))"
    )
    for note in result.notes:
        print(f"reasoning: note: {note}")
    shown = {"passed": "PASSED", "failed": "FAILED", "skipped": "NOT DECIDED"}
    for v in result.verdicts:
        if args.quiet and v.outcome == "passed":
            continue
        tail = "" if v.outcome == "passed" else f" - {v.message}"
        print(f"{v.nodeid} {shown[v.outcome]}{tail}")
    if run.levels:
        print(" reasoning summary ".center(80, "-"))
        for line in summary_lines(run):
            print(f" {line.text} ".center(80, "-") if line.sep else line.text)
        report_lines: list[str] = []
        if args.report:
            try:
                report = build_report(
                    run.rows,
                    args.report,
                    levels=run.levels,
                    gates=run.gates,
                    comparisons=run.comparisons,
                    partial=run.partial,
                )
            except OSError as exc:
                raise ReasoningError(
                    f"--report: cannot write {exc.filename or args.report}: {exc.strerror}"
                ) from None
            report_lines.append(f"reasoning: report {os.path.join(report.out, 'index.html')}")
            if report.note:
                report_lines.append(f"reasoning: report: {report.note}")
        for text in report_lines:
            print(text)
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if step_summary:  # GitHub Actions renders this file on the run's page
            try:
                with open(step_summary, "a", encoding="utf-8") as fh:
                    fh.write(markdown_summary(run))
            except OSError as exc:
                print(f"reasoning: could not write GITHUB_STEP_SUMMARY: {exc}")
        for line in closing_lines(run):
            print(line.text)
    seconds = time.perf_counter() - start
    if args.junitxml:
        try:
            with open(args.junitxml, "w", encoding="utf-8") as fh:
                fh.write(junit_xml(result.verdicts, seconds))
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
    print(f"{', '.join(counts) or 'no verdicts'} in {seconds:.2f}s (exit status {result.status})")
    return result.status


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
        cache_url = _redis_url(cache)
        if cache_url is not None:
            cache = ".reasoning_cache"  # the local layer before the shared one
        evaluator = Evaluator(
            EvalConfig(
                api_base=args.llm_api_base,
                params=dict(args.llm_param),
                cache_dir=cache,
                cache_url=cache_url,
                local_url=local_url,
                local_identity=local_identity,
                models=specs,
            )
        )
        stack.callback(evaluator.close)
        answer = _answering(evaluator, args, stack) if progress else None
        evaluator.verify_cache()  # a damaged cache or no Redis: one line, before any call
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
    if args.command == "gate":
        return gate_command(args)
    if args.command == "narrate":
        return narrate_command(args)
    if args.command == "tasks":
        return tasks_command(args)
    return export_command(args)


def export_command(args: argparse.Namespace) -> int:
    if args.start < 0:
        raise ReasoningError("--start: must be >= 0")
    if args.stop is not None and args.count is not None:
        raise ReasoningError("--count and --stop: give one (--stop is START+COUNT)")
    if args.stop is not None and args.stop < args.start:
        raise ReasoningError(f"--stop: must be >= --start ({args.start}), got {args.stop}")
    count = args.stop - args.start if args.stop is not None else args.count
    count = 10 if count is None else count
    if count < 0:
        raise ReasoningError("--count: must be >= 0")
    if args.workers < 1:
        raise ReasoningError(f"--workers: must be >= 1, got {args.workers}")
    export = (
        args.task, args.level, count, args.seed, dict(args.param), args.style, args.with_steps
    )  # fmt: skip
    progress = show_progress(args.quiet)
    parallel = args.workers > 1 and count > 1

    def write(out: TextIO, folder: str | None) -> None:
        if parallel:
            export_parallel(*export, out, start=args.start, workers=args.workers, folder=folder)
        else:
            export_items(*export, out, progress=progress, start=args.start)

    if args.output == "-":
        write(sys.stdout, None)  # a failed write: see main()
        return 0
    try:
        out = open(args.output, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - see below
    except OSError as exc:
        raise ReasoningError(f"--output: cannot write {args.output}: {exc.strerror}") from None
    try:
        write(out, os.path.dirname(os.path.abspath(args.output)))
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


def _redis_url(cache: str | None) -> str | None:
    """``--cache redis://…``: the URL, checked (one line otherwise); None for a folder."""
    from .models.shared_cache import check_redis_url, is_redis_url

    if cache is None or not is_redis_url(cache):
        return None
    try:
        return check_redis_url(cache)
    except InvalidArgument as exc:
        raise ReasoningError(f"--cache: {exc}") from None
