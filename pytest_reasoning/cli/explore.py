"""Commands that look at tasks and models before a suite is written: ``tasks``, ``plan``,
``frontier`` and ``audit``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from ..config import MAX_SAMPLES
from ..core import Item
from ..errors import ReasoningError
from ..registry import get_task, task_ids
from ..tasks import hooks
from ..tasks.base import check_level
from .common import (
    EXIT_INFRASTRUCTURE,
    EXIT_INTERRUPTED,
    CommandFailed,
    _check_output,
    open_models,
    show_progress,
)

if TYPE_CHECKING:
    from ..evaluate import Evaluator


def audit_command(args: argparse.Namespace) -> int:
    """``pytest-reasoning audit``: every baseline of every task x level, next to chance and
    the bound max(chance, majority) + 0.10."""
    from tabulate import tabulate

    if args.count < 1:
        raise ReasoningError("--count: must be >= 1")
    if args.train_count is not None and args.train_count < 1:
        raise ReasoningError("--train-count: must be >= 1")
    if args.jobs < 0:
        raise ReasoningError("--jobs: must be >= 0 (0: one per CPU)")
    for tid in args.tasks:
        get_task(tid)  # an unknown id fails before any work
    for level in args.level or ():
        if args.tasks:
            for tid in args.tasks:
                check_level(get_task(tid), level)
        elif not any(
            level in get_task(t).levels for t in task_ids() if not hooks.is_pack(get_task(t))
        ):
            raise ReasoningError(
                f"--level: no built-in task has a level {level!r} (a pack's tasks, "
                "gym.<name>, are audited only when named)"
            )

    def show(a: Any) -> None:
        if args.json:
            return
        cells = a.partial_chance is not None
        rows = [
            [
                b.name + (" *" if b is a.best else ""),
                f"{b.accuracy:.3f}",
                f"[{b.low:.3f}, {b.high:.3f}]",
                f"{b.accuracy - a.chance:+.3f}",
                "over" if b.accuracy > a.bound else "",
                *(_cells(b.partial, a.partial_bound) if cells else ()),
                b.abstained or "",
            ]
            for b in a.baselines
        ]
        print(
            f"{a.task} {a.level}: n={a.count}, chance {a.chance:.3f} ({a.chance_basis}), "
            f"majority {a.majority:.3f}, bound {a.bound:.3f}; trained on {a.train_count} "
            "train-split problems"
            + (
                f"; cells: chance {a.partial_chance:.3f}, bound {a.partial_bound:.3f}"
                if cells
                else ""
            )
        )
        print(
            tabulate(
                rows,
                headers=[
                    *("baseline", "accuracy", "95% Wilson", "vs chance", "bound"),
                    *(("cells", "cell bound") if cells else ()),
                    "abstained",
                ],
                disable_numparse=True,
            )
        )
        print(flush=True)

    levels = args.level or None
    if args.dataset is not None:
        from ..audit import audit_dataset

        if args.tasks:
            raise ReasoningError("--dataset: audits the file's own tasks; name no TASK")
        results = audit_dataset(args.dataset, levels=levels)
        for a in results:
            show(a)
        if not results:
            raise ReasoningError(f"--dataset: no items of the levels asked in {args.dataset}")
    else:
        results = _generated(args, levels, show)
    if args.json:
        json.dump([a.to_dict() for a in results], sys.stdout, indent=1)
        sys.stdout.write("\n")
    return 0


def _cells(partial: float | None, bound: float | None) -> tuple[str, str]:
    """A baseline's partial score (zebra: right cells) and whether it beats its bound."""
    if partial is None or bound is None:
        return "", ""
    return f"{partial:.3f}", "over" if partial > bound else ""


def _generated(args: argparse.Namespace, levels: list[str] | None, show: Any) -> list[Any]:
    from ..audit import audit

    try:
        return audit(
            args.tasks or None,
            levels=levels,
            count=args.count,
            seed=args.seed,
            jobs=args.jobs or os.cpu_count() or 1,
            train_count=args.train_count,
            progress=show,
        )
    except ValueError as exc:
        raise ReasoningError(str(exc)) from None


PLAN_EXACT = 10_000  # a threshold gate's expected calls, exact up to here (O(n^1.5): ~2 s)
PLAN_SIMULATED = 3_000  # a comparison's, simulated up to here (20 runs there)
PLAN_UPDATES = 60_000  # pairs simulated per estimate: 200 runs up to 300 items, fewer above


def plan_command(args: argparse.Namespace) -> int:
    from ..gates.paired import samples_to_detect_drop
    from ..gates.sequential import expected_pair_calls

    if args.accuracy is not None:
        return _plan_gate(args)
    if args.drop is None or args.baseline_accuracy is None:
        raise ReasoningError(
            "plan: give --drop and --baseline-accuracy (a comparison), or --accuracy, "
            "--min-accuracy and --samples (a threshold gate)"
        )
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
    size = worst if args.levels > 1 else n
    if size > MAX_SAMPLES:  # a level cannot hold it, and simulating it would not end
        raise ReasoningError(
            f"--drop {args.drop:g}: detecting it needs {size:.3g} samples per level, more than "
            f"a level holds ({MAX_SAMPLES}); plan for a larger drop"
        )
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
    # What a sequential level (sequential: true) would ask of those samples, on average:
    # simulated, so bounded (200 runs up to 500 items, fewer above, none past a cap).
    if size > PLAN_SIMULATED:
        print(
            f"sequential: not simulated above {PLAN_SIMULATED} paired items (plan's time "
            "bound); a level this large settles early mostly on clear regressions"
        )
        return 0
    runs = min(200, max(20, PLAN_UPDATES // size))
    for label, cand in (("with that drop", candidate), ("with no drop", args.baseline_accuracy)):
        try:
            got = expected_pair_calls(
                args.baseline_accuracy,
                cand,
                size,
                discordance=psi if label == "with that drop" else None,
                alpha=args.alpha,
                family=args.levels,
                runs=runs,
            )
        except ValueError as exc:
            raise ReasoningError(str(exc)) from None
        print(
            f"sequential, {label}: {got.calls:.0f} paired items of {size} on average "
            f"({got.calls / size:.0%}; {runs} simulated runs), fixed-n: {size}"
        )
    return 0


def _plan_gate(args: argparse.Namespace) -> int:
    """The calls a threshold gate needs: fixed n, and sequential on average (computed
    exactly, docs/sequential.md)."""
    from ..gates.sequential import expected_calls

    if args.min_accuracy is None or args.samples is None:
        raise ReasoningError("plan --accuracy: give --min-accuracy and --samples too")
    if not 1 <= args.samples <= MAX_SAMPLES:
        raise ReasoningError(f"--samples: must be in 1..{MAX_SAMPLES} (a level's most)")
    for flag, value in (("--accuracy", args.accuracy), ("--min-accuracy", args.min_accuracy)):
        if not 0.0 <= value <= 1.0:
            raise ReasoningError(f"{flag}: must be in [0, 1], got {value:g}")
    if not 0.0 < args.alpha < 1.0 or not 0.0 < (args.confidence or 0.5) < 1.0:
        raise ReasoningError("--alpha, --confidence: must be in (0, 1)")
    head = (
        f"a level of {args.samples} samples at accuracy {args.accuracy:g} against "
        f"min_accuracy {args.min_accuracy:g}: fixed-n asks {args.samples}; "
    )
    if args.samples > PLAN_EXACT:  # exact expected calls cost O(n^1.5): bounded
        print(head + f"sequential: not computed above {PLAN_EXACT} samples (plan's time bound)")
        return 0
    try:
        got = expected_calls(
            args.accuracy,
            args.min_accuracy,
            args.samples,
            confidence=args.confidence,
            alpha=args.alpha,
        )
    except ValueError as exc:
        raise ReasoningError(str(exc)) from None
    print(
        head + f"sequential asks {got.calls:.1f} on average ({got.calls / args.samples:.0%}), "
        f"settling early as a pass in {got.early_pass:.0%} and as a fail in "
        f"{got.early_fail:.0%} of runs"
    )
    return 0


def frontier_command(args: argparse.Namespace) -> int:
    """Run the frontier search with a real model through the evaluator."""
    from tabulate import tabulate

    from ..frontier import find_frontier

    if args.json:  # before the search spends calls, not after
        _check_output("--json", args.json)
    progress = show_progress(args.quiet)
    with contextlib.ExitStack() as stack:
        # litellm, the cache, Redis: one line, before any call
        evaluator = open_models(args, stack, [args.llm], writes_text=False, progress=progress)
        answer = _answering(evaluator, args, stack) if progress else None
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
            raise CommandFailed(evaluator.storage_error, EXIT_INTERRUPTED)
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
        from ..files import write_output

        try:
            with write_output(args.json) as fh:
                json.dump(result.to_dict(), fh, indent=2)
        except OSError as exc:
            raise ReasoningError(f"--json: cannot write {args.json}: {exc.strerror}") from None
    return 0


def _correct(evaluator: Evaluator, item: Item, model: str) -> bool | None:
    """An answer's verdict; an error retrying cannot fix ends the search with its cause."""
    outcome = evaluator.answer(item, model)
    if outcome.error_kind in ("stop", "not_asked"):
        raise CommandFailed(
            f"--llm {model}: {outcome.error} (infrastructure, not the model)", EXIT_INFRASTRUCTURE
        )
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
        "; also " + ", ".join(f"{a} (= {b})" for a, b in hooks.style_aliases(task).items())
        if hooks.style_aliases(task)
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
