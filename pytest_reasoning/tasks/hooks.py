"""The optional hooks a task may define beyond :class:`~pytest_reasoning.tasks.base.Task`,
and how the rest of the package reads them.

As with pytest's own hooks, a hook is declared once (:class:`TaskHooks`, its signature and
its meaning) and a task implements the ones it needs by defining a member of that name:
``MusrTask.choice_texts``, ``ZebraGridTask.export_answer``. The functions here read a hook off a
task, or give the default where the task does not define it, so ``Task`` stays the short
contract an author reads (docs/extending.md) and a caller never guesses a default.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, cast

from ..core import Item, canonical_json
from .base import Generated, Shortcut, Task
from .draw import Draw, split_key, split_salt

__all__ = [
    "HOOKS",
    "TaskHooks",
    "breakdown",
    "breaks_down",
    "chance",
    "choice_texts",
    "choices",
    "example_params",
    "export_answer",
    "import_answer",
    "is_pack",
    "locate",
    "misdeclared",
    "problem_key",
    "reference_response",
    "shortcuts",
    "split_key",
    "split_salt",
    "steps",
    "style_aliases",
    "text_answer",
]


class TaskHooks(Protocol):
    """Every optional hook, with what it means (a task defines any of them by name)."""

    # Other names a paper uses for a style (MuSR's "regular" is our "direct").
    style_aliases: Mapping[str, str]
    # A pack's dataset (reasoning-gym's): generators not written here, audited only when
    # named (``pytest-reasoning audit`` with no task audits the built-in families).
    pack: bool
    # Salts the train/test hash. A task whose smallest level lacks an answer class in one
    # split under the default picks another, and says why: changing it reshuffles that
    # task's splits (docs/tasks/splits.md). Default ``"split-1"``.
    split_salt: str
    # A phrase only this task's question carries (the test server's ``oracle``: :meth:`locate`).
    prompt_marker: str | None
    # Whether :meth:`breakdown` reads this task's rows (a run then keeps them in memory).
    breaks_down: bool

    def check_level(self, level: str) -> None:
        """UnknownLevel unless ``level`` is one of this task's, for a task that accepts
        levels beyond its ``levels`` (FLenQA's lengths in tokens, ZebraLogic's sizes)."""
        ...

    def example_params(self, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """The knobs worked examples are drawn with (the item's own by default; ZebraLogic
        shows smaller examples)."""
        ...

    def draw(
        self, level: str, seed: int, raw: int, params: Mapping[str, Any], index: int, draw: Draw
    ) -> Generated:
        """Raw draw ``raw`` of a (level, seed) batch, built as item ``index``, where one
        chooser keyed by ``(task, level, seed, raw)`` will not do (FLenQA keeps one base
        problem across lengths): its choosers are ``SampledChooser``s of ``draw``."""
        ...

    def split_key(self, problem: Mapping[str, Any]) -> Mapping[str, Any]:
        """What the train/test split hashes: ``identity``, or something coarser that is a
        function of it (problems that are the same are then still always in one split).
        FLenQA splits by the part of its template drawn apart from the answer."""
        ...

    def export_answer(self, answer: str) -> Any:
        """The gold answer as the export writes it (JSON for structured answers)."""
        ...

    def import_answer(self, value: Any) -> str:
        """The inverse of :meth:`export_answer`: the gold answer an exported (or a user's)
        item file gives, as the string items carry."""
        ...

    def reference_response(self, item: Item) -> str:
        """What an ideal model would write for this item (default ``<<<solve(item)>>>``)."""
        ...

    def locate(self, prompt: str) -> int:
        """Where this task's last question starts in ``prompt``, or -1 if it is not this
        task's (few-shot prompts show other problems first: the last marker counts)."""
        ...

    def text_answer(self, prompt: str, *, max_size: int | None = None) -> str | None:
        """The reply of a model that solves this task from the prompt TEXT alone (the test
        server's ``oracle``); with ``max_size``, right only up to that size (``shallow:N``).
        ``None``: the prompt alone does not determine the answer."""
        ...

    def breakdown(self, rows: Sequence[Mapping[str, Any]], *, suites: bool = False) -> Any:
        """The family's own table (and chart) over the results rows of its tasks, a
        :class:`~pytest_reasoning.tasks.breakdown.Breakdown`, or None. ``suites``: rows of
        several suites (tell them apart)."""
        ...

    def shortcuts(self) -> Sequence[Shortcut]:
        """The family's declared heuristic rules (see ``pytest-reasoning audit``)."""
        ...

    def choice_texts(self, item: Item) -> Mapping[str, str] | None:
        """For multiple-choice tasks: the text tied to each answer choice (e.g. each
        suspect's chapter), keyed by the answer it stands for, in the prompt's order."""
        ...

    def choices(self, item: Item) -> Sequence[str] | None:
        """The answers a guesser picks among, in the prompt's order (gold format); ``None``
        for open answers. Default: the keys of :meth:`choice_texts`, else the problem's
        ``choices`` list when it holds the gold answer (the MuSR convention)."""
        ...

    def chance(self, item: Item) -> float | None:
        """The probability that a uniform guess answers ``item`` right: one over the number
        of :meth:`choices` by default; ``None`` for an open answer with no guess space."""
        ...


HOOKS: tuple[str, ...] = tuple(
    name for name in (*TaskHooks.__annotations__, *vars(TaskHooks)) if not name.startswith("_")
)


def misdeclared(task: Task) -> str | None:
    """What is wrong with the task's hooks, for the registry's one-line error: a method hook
    that is not callable, or an attribute hook that is (``breaks_down`` written as a method
    would otherwise be read as always true); None when nothing is."""
    for name in HOOKS:
        found = getattr(task, name, None)
        if found is None:
            continue
        method = callable(getattr(TaskHooks, name, None))
        if method != callable(found):
            want = "a method" if method else "a value, not a method"
            return f"{task.id}: hook {name!r} must be {want} (tasks.hooks.TaskHooks)"
    return None


def _hook(task: Task, name: str) -> Callable[..., Any] | None:
    found = getattr(task, name, None)
    return cast("Callable[..., Any] | None", found)


def style_aliases(task: Task) -> Mapping[str, str]:
    return cast("Mapping[str, str]", getattr(task, "style_aliases", {}))


def is_pack(task: Task) -> bool:
    return bool(getattr(task, "pack", False))


def breaks_down(task: Task) -> bool:
    return bool(getattr(task, "breaks_down", False))


def example_params(task: Task, params: Mapping[str, Any]) -> Mapping[str, Any]:
    hook = _hook(task, "example_params")
    return params if hook is None else cast("Mapping[str, Any]", hook(params))


def export_answer(task: Task, answer: str) -> Any:
    hook = _hook(task, "export_answer")
    return answer if hook is None else hook(answer)


def import_answer(task: Task, value: Any) -> str:
    hook = _hook(task, "import_answer")
    if hook is not None:
        return str(hook(value))
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def reference_response(task: Task, item: Item) -> str:
    hook = _hook(task, "reference_response")
    return f"<<<{task.solve(item)}>>>" if hook is None else str(hook(item))


def steps(task: Task, item: Item) -> str:
    """Step-by-step solution of an item, for fine-tuning (``export --with-steps``)."""
    return task.explain(item.problem, item.answer)


def problem_key(task: Task, problem: Mapping[str, Any]) -> str:
    """A short digest of the task's ``identity`` of ``problem``: the cluster a sample's
    results row names (``problem``), so samples of the same problem are one cluster."""
    text = canonical_json(dict(task.identity(problem)))
    return hashlib.sha256(f"{task.id}\x1f{text}".encode()).hexdigest()[:16]


def locate(task: Task, prompt: str) -> int:
    hook = _hook(task, "locate")
    if hook is not None:
        return int(hook(prompt))
    marker = getattr(task, "prompt_marker", None)
    return prompt.rfind(marker) if isinstance(marker, str) and marker else -1


def text_answer(task: Task, prompt: str, *, max_size: int | None = None) -> str | None:
    hook = _hook(task, "text_answer")
    return None if hook is None else cast("str | None", hook(prompt, max_size=max_size))


def breakdown(task: Task, rows: Sequence[Mapping[str, Any]], *, suites: bool = False) -> Any:
    hook = _hook(task, "breakdown")
    return None if hook is None else hook(rows, suites=suites)


def shortcuts(task: Task) -> Sequence[Shortcut]:
    hook = _hook(task, "shortcuts")
    return () if hook is None else cast("Sequence[Shortcut]", hook())


def choice_texts(task: Task, item: Item) -> Mapping[str, str] | None:
    hook = _hook(task, "choice_texts")
    return None if hook is None else cast("Mapping[str, str] | None", hook(item))


def choices(task: Task, item: Item) -> Sequence[str] | None:
    hook = _hook(task, "choices")
    if hook is not None:
        return cast("Sequence[str] | None", hook(item))
    texts = choice_texts(task, item)
    if texts is not None:
        return list(texts)
    listed = item.problem.get("choices")
    if isinstance(listed, list) and item.answer in listed:
        return [str(c) for c in listed]
    return None


def chance(task: Task, item: Item) -> float | None:
    hook = _hook(task, "chance")
    if hook is not None:
        return cast("float | None", hook(item))
    options = choices(task, item) or item.problem.get("choices")
    return 1.0 / len(options) if isinstance(options, Sequence) and options else None

