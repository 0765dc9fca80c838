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
from ..models.kinds import model_kind

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


def _redis_url(cache: str | None) -> str | None:
    """``--cache redis://…``: the URL, checked (one line otherwise); None for a folder."""
    from ..models.shared_cache import check_redis_url, is_redis_url

    if cache is None or not is_redis_url(cache):
        return None
    try:
        return check_redis_url(cache)
    except InvalidArgument as exc:
        raise ReasoningError(f"--cache: {exc}") from None


def _model_specs(args: argparse.Namespace) -> dict[str, Any]:
    """--llm-param names and headers checked (no secrets on the command line, nothing the run
    sets itself), then the --llm-config aliases (empty without one); each problem one line
    naming its option."""
    from ..models.endpoints import check_param

    for name, value in args.llm_param:
        try:
            check_param(name, value)
        except InvalidArgument as exc:
            raise ReasoningError(f"--llm-param {exc}") from None
    if not args.llm_config:
        return {}
    from ..models.endpoints import load_model_list

    try:
        return dict(load_model_list(args.llm_config))
    except InvalidArgument as exc:
        raise ReasoningError(f"--llm-config {exc}") from None


def _open_evaluator(
    args: argparse.Namespace, stack: contextlib.ExitStack, models: Sequence[str]
) -> Evaluator:
    """The evaluator of a command that calls models: --llm-config aliases, --llm-param values
    (no secrets), the embedded server if a model is ``local``, the response cache."""
    from ..evaluate import EvalConfig, Evaluator

    specs = _model_specs(args)
    kinds = [model_kind(m, specs) for m in models]
    silent = [m for m, k in zip(models, kinds, strict=True) if not k.calls_model]
    if silent:
        raise ReasoningError(f"--llm: {silent[0]!r} writes no text; name a language model")
    local_url = local_identity = None
    if any(k.needs_local_server for k in kinds):
        from ..models.local import LocalServer

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
    try:  # litellm, the cache: one line before any call (as the plugin)
        evaluator.verify(models)
    except StorageFailed as exc:  # damaged or unusable before any work: a usage error
        raise ReasoningError(str(exc)) from None
    return evaluator
