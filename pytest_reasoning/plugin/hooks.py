"""The plugin's door (``pytest11: reasoning``), loaded by every pytest run once the package is
installed, so it costs almost nothing: the options, the fixtures, and a ``pytest_configure``
that registers the run session (``session.py``, every run hook) only when ``--llm`` (or the
``reasoning_llm`` ini key) names a model — as xdist registers ``DSession`` only under
``--dist``. Without a model, a small idle plugin only says how to run the suites it meets."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .fixtures import llm, reasoning_results
from .options import RunOptions, add_options

__all__ = ["llm", "reasoning_results"]  # the fixtures pytest finds on this module

HINT = "--llm MODEL (--llm reference runs the tasks' own solvers: free, no model needed)"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "reasoning: a generated reasoning sample")
    if RunOptions.active(config):
        with _starting(config):  # seconds: the run's modules, the embedded server, checks
            from .session import RunSession

            config.pluginmanager.register(RunSession(config), "reasoning-session")
    else:
        _refuse_named_suites(config)
        config.pluginmanager.register(Idle(), "reasoning-idle")


@contextlib.contextmanager
def _starting(config: pytest.Config) -> Iterator[None]:
    """A line on the terminal while the run starts (before pytest's first line), wiped when
    it has: only on a terminal and not under ``-q``, like the live count, so logs and captured
    output never see it."""
    try:
        shown = sys.stdout.isatty() and config.get_verbosity() >= 0
    except (AttributeError, ValueError):  # stdout replaced or closed
        shown = False
    if shown:
        local = "local" in (config.getoption("reasoning_llm") or config.getini("reasoning_llm"))
        text = "reasoning: starting" + (" the embedded model" if local else "") + "..."
        _raw(text)
    try:
        yield
    finally:
        if shown:
            _raw("\r" + " " * len(text) + "\r")


def _raw(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(text)
        sys.stdout.flush()


def looks_like_suite(path: Path) -> bool:
    """A YAML file with a top-level ``tasks:`` key: the cheap sniff of
    ``config.is_suite_file``, without importing config (which loads the task registry)."""
    if path.suffix not in (".yaml", ".yml"):
        return False
    from ..files import InputRefused, read_text_head  # a FIFO named *.yaml must not hang

    try:  # its head only: a suite too large to load is still one (refused when loaded)
        text = read_text_head(path, 1_000_000, what="a suite file")
    except InputRefused:
        return False
    return re.search(r"^tasks\s*:", text, re.M) is not None


def _refuse_named_suites(config: pytest.Config) -> None:
    """A suite named on the command line without a model: say what it needs, in one line
    (pytest alone would answer "not found")."""
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0])
        if path.suffix in (".yaml", ".yml") and path.is_file() and looks_like_suite(path):
            raise pytest.UsageError(
                f"{arg.split('::', 1)[0]} is a reasoning suite: name the model to run it with "
                f"{HINT}; see pytest --help, group 'reasoning'"
            )


class Idle:
    """Without a model: suite files met during collection are not run; the collection report
    says how to run them."""

    def __init__(self) -> None:
        self.unrun: list[Path] = []

    def pytest_collect_file(self, file_path: Path) -> None:
        if looks_like_suite(file_path):
            self.unrun.append(file_path)

    def pytest_report_collectionfinish(self) -> list[str]:
        if not self.unrun:
            return []
        return [
            f"reasoning: {len(self.unrun)} suite file(s) not run (e.g. {self.unrun[0].name}): "
            f"name a model with {HINT}"
        ]
