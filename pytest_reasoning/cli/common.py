"""Shared by the commands: usage errors in one line, progress bars, opening an evaluator."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..config import parse_param
from ..errors import InvalidArgument, ReasoningError, StorageFailed, clip, printable

if TYPE_CHECKING:
    from ..evaluate import Evaluator


# Every command exits as a pytest run does (docs/verdicts.md), so one table reads them all.
EXIT_FAILED = 1  # the work failed: a gate (``gate``), no story kept (``narrate``)
EXIT_INTERRUPTED = 2  # Ctrl-C, or the response cache failed mid-way
EXIT_USAGE = 4  # a bad argument, value or input file, or an output that cannot be written
EXIT_INFRASTRUCTURE = 6  # the model could not be asked (a bad key, an unknown model)
T = TypeVar("T")


class CommandFailed(ReasoningError):
    """The command ran and could not do its work: one line, and its exit status."""

    def __init__(self, message: str, status: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.status = status


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


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, usage exit code (argparse's would be 2)
        raise SystemExit(_error(message, EXIT_USAGE))


def _error(message: str, status: int = EXIT_USAGE) -> int:
    """Write the one error line (a quoted value clipped, never a second line); ``status``."""
    text = clip(printable(" ".join(message.split())), 1000)
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


def _check_writable(option: str, folder: str) -> None:
    if not os.path.isdir(folder):
        raise ReasoningError(f"{option}: {folder} is not a folder")
    if not os.access(folder, os.W_OK):
        raise ReasoningError(f"{option}: cannot write in {folder}")


def _check_output(option: str, path: str) -> None:
    """An output path ``files.write_output`` can write (a file in a writable folder, a
    device, a FIFO, ``-``), checked before the work: one line naming the option otherwise."""
    from ..files import output_problem

    problem = output_problem(path)
    if problem is not None:
        raise ReasoningError(f"{option}: {problem}")


def add_model_options(parser: argparse.ArgumentParser, what: str = "--llm") -> None:
    """The options a command that calls models shares with a pytest run (``runs.RunConfig``):
    the endpoint, the --llm-config aliases, generation parameters, the response cache (a
    folder, 'off', or a shared Redis cache behind a local one), the request timeout."""
    parser.add_argument("--llm-api-base", help="OpenAI-compatible endpoint (vLLM, llama.cpp, ...)")
    parser.add_argument(
        "--llm-config", help=f"a LiteLLM model_list (YAML) whose model_name aliases {what} may name"
    )
    parser.add_argument(
        "--llm-param",
        type=_param,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="generation parameter (repeatable)",
    )
    parser.add_argument(
        "--cache",
        default=".reasoning_cache",
        metavar="DIR|URL",
        help="response cache folder ('off': none), or redis://HOST:PORT/DB: a cache shared by "
        "every run that names it, behind the local one (--cache-local; password from "
        "REASONING_REDIS_PASSWORD), as a run's --reasoning-cache",
    )
    parser.add_argument(
        "--cache-local",
        metavar="DIR",
        help="with a redis:// --cache: the local cache in front of it (default "
        ".reasoning_cache; 'off': Redis alone)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="per-request timeout in seconds (default 120; a slow local model can need more)",
    )


def open_models(
    args: argparse.Namespace,
    stack: contextlib.ExitStack,
    models: Sequence[str],
    *,
    writes_text: bool = True,
    progress: bool = False,
) -> Evaluator:
    """The evaluator of a command that calls models, opened as a pytest run opens one
    (``runs.open_run``: the embedded server if a model is ``local``, the caches, the checks
    before any call); closed with ``stack``. ``writes_text``: every model must be a language
    model (not ``reference``)."""
    from ..runs import RunConfig, open_run

    config = RunConfig.from_args(models, args)
    if writes_text:
        evaluator_models = config.resolved()
        silent = [m.name for m in evaluator_models if not m.calls_model]
        if silent:
            raise ReasoningError(f"--llm: {silent[0]!r} writes no text; name a language model")

    def starting() -> None:
        if progress:
            sys.stderr.write("pytest-reasoning: starting the embedded model ...\n")

    try:
        opened = open_run(config, starting=starting)
    except StorageFailed as exc:  # damaged or unusable before any work: a usage error
        raise ReasoningError(str(exc)) from None
    stack.callback(opened.close)
    return opened.evaluator
