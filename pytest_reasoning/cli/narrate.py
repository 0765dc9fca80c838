"""``narrate``: MuSR stories told by a model, chapter by chapter, checked before they are kept."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ReasoningError, printable
from ..registry import get_task
from ..tasks.base import check_style, resolve_params
from ..tasks.sampler import make_item
from .common import (
    EXIT_INFRASTRUCTURE,
    CommandFailed,
    _check_output,
    _param,
    add_model_options,
    open_models,
)

if TYPE_CHECKING:
    from ..narrate import Narration


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
    na.add_argument(
        "--attempts", type=int, default=3, help="tries per chapter before the problem is dropped"
    )
    na.add_argument("--stories-at-once", type=int, default=4, help="problems narrated concurrently")
    add_model_options(na)
    na.add_argument(
        "--price-as",
        action="append",
        default=[],
        metavar="MODEL",
        help="also price the run's tokens as this LiteLLM model (repeatable)",
    )
    na.add_argument("--out", required=True, help="the JSONL file to write")


def narrate_command(args: argparse.Namespace) -> int:
    """Narrate ``--count`` problems; write the kept ones to ``--out`` (``files.write_output``:
    a regular file is replaced when complete)."""
    from ..narrate import NarrateOptions, Narration, StoryResult, narrate_items, planner_for

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
    resolve_params(task, args.level, params)  # fail before any call
    check_style(task, args.style)
    _check_output("--out", args.out)
    if args.price_as:
        from ..models.litellm_client import cost_usd

        unknown = [m for m in args.price_as if not cost_usd(m, 1000, 1000)]
        if unknown:
            raise ReasoningError(f"--price-as {unknown[0]}: not in LiteLLM's price map")
    options = NarrateOptions(
        model=args.llm, judge=args.judge, attempts=args.attempts,
        stories_at_once=args.stories_at_once,
    )  # fmt: skip
    summary = Narration()
    items = (
        make_item(task, args.level, args.seed, i, params, args.style) for i in range(args.count)
    )
    done = 0

    def progress(result: StoryResult) -> None:
        nonlocal done
        done += 1
        if result.row is not None:
            what = f"kept ({result.retries} retries)" if result.retries else "kept"
        elif result.dropped is not None:
            from ..narrate import FAILURES

            what = f"dropped: chapter {result.chapter!r}, {FAILURES[result.dropped]}"
        else:
            what = f"not finished: {result.error}"
        u = result.usage
        line = f"narrate: {done}/{args.count} {result.item.id} {what} "
        sys.stderr.write(printable(f"{line}[{u.requests} requests, {u.cached} cached]") + "\n")
        sys.stderr.flush()

    with contextlib.ExitStack() as stack:
        evaluator = open_models(args, stack, [args.llm, options.judge_model])
        from ..datasets import write_row
        from ..files import write_output

        # A regular file is replaced only once every story is written (a device or a FIFO
        # is written in place, never replaced).
        with write_output(args.out) as fh:
            try:
                for result in narrate_items(items, evaluator, options, on_story=progress):
                    summary.add(result)
                    if result.row is not None:
                        write_row(fh, result.row)
            except ReasoningError as exc:
                if evaluator.stopped:  # a bad key, an unknown model: infrastructure
                    raise CommandFailed(str(exc), EXIT_INFRASTRUCTURE) from None
                raise
            if args.count and not summary.kept:  # raised inside: an older file stays whole
                raise CommandFailed(
                    f"narrate: no story was kept ({summary.lines()[0]}): nothing written to "
                    f"{args.out}"
                )
        lines = summary.lines()
        lines.append(_narration_cost(summary, args.llm, args.price_as))
    said = sys.stderr if args.out == "-" else sys.stdout  # `--out -`: stdout holds the rows
    for line in lines:
        print(printable(line), file=said)
    print(f"wrote {summary.kept} items to {args.out}", file=said)
    return 0


def _narration_cost(summary: Narration, model: str, price_as: Sequence[str]) -> str:
    """The run's cost: what the replies carried (LiteLLM's price map), and the same tokens
    priced as other models (``--price-as``)."""
    from ..models.litellm_client import cost_usd

    u = summary.usage
    if u.priced:
        said = f"cost: ${u.cost_usd:.4f} (LiteLLM's price map, {u.priced} of {u.requests} priced)"
    else:
        said = f"cost: not priced ({model} is not in LiteLLM's price map)"
    for other in price_as:
        price = cost_usd(other, u.prompt_tokens, u.completion_tokens)
        said += f"; as {other}: ${price:.4f}"
    return said
