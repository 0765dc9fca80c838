"""The pytest plugin (entry point ``pytest11: reasoning``): options, suite collection, items,
outcome transport, gates and the summary. It only wires; the work is done below it.

Importing this module costs almost nothing: everything heavy is imported inside hooks, and
only when ``--llm`` (or the ``reasoning_llm`` ini option) activates the plugin.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import pytest

if TYPE_CHECKING:
    from .comparison import Comparison
    from .config import EntrySpec, LevelSpec
    from .core import Item, Outcome
    from .evaluate import Evaluator
    from .frontier import FrontierResult
    from .profile import FailureProfile
    from .results import GateResult, ResultStore

__all__ = [
    "LLM",
    "ReasoningItem",
    "ReasoningResults",
    "ReasoningSuiteFile",
    "llm",
    "reasoning_results",
]

PROPERTY = "reasoning"
LOOKAHEAD_PER_SLOT = 4


class _State:
    """Per-run state kept in ``config.stash`` (no module globals)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.models: list[str] = _opt_list(config, "reasoning_llm")
        self.baseline: str | None = _opt(config, "reasoning_llm_baseline", str)
        self.baseline_results: str | None = _opt(config, "reasoning_baseline_results", str)
        self.baseline_model: str | None = _opt(config, "reasoning_baseline_model", str)
        if self.baseline and self.baseline_results:
            raise pytest.UsageError(
                "--llm-baseline and --reasoning-baseline-results: give one baseline, not both"
            )
        if self.baseline and self.baseline not in self.models:
            self.models.append(self.baseline)  # it answers the very same items
        self.comparisons: list[Comparison] = []
        self.baseline_rows: tuple[dict[tuple[str, str], bool | None], str] | None = None
        self.is_worker = hasattr(config, "workerinput")
        self.samples = _opt_int(config, "reasoning_samples", minimum=0)
        self.seed, self.seed_source = _resolve_seed(config)
        self.concurrency = _opt_int(config, "reasoning_concurrency", minimum=1) or 8
        self.max_errors = _opt_int(config, "reasoning_max_errors", minimum=0) or 0
        self.attempts = _opt_int(config, "reasoning_retries", minimum=1) or 5
        max_calls = _opt_int(config, "reasoning_max_calls", minimum=1)
        self.max_calls = 200 if max_calls is None else max_calls
        self.local_url: str | None = None
        self.local_identity: str | None = None
        self.local_server: Any = None
        self._evaluator: Evaluator | None = None
        self.store: ResultStore | None = None
        self.order: dict[str, int] = {}
        self.items: list[ReasoningItem] = []
        self.built: dict[str, Item] = {}
        self.gates: list[GateResult] = []
        self.repeats: dict[tuple[str, str, str], int] = {}  # (entry, level, model) → count
        self._worker_queue: Any = None
        self.llm: LLM | None = None

    @property
    def evaluator(self) -> Evaluator:
        if self._evaluator is None:
            from .evaluate import EvalConfig, Evaluator

            cache = _opt(self.config, "reasoning_cache", str) or ".reasoning_cache"
            rootpath = self.config.rootpath
            self._evaluator = Evaluator(
                EvalConfig(
                    api_base=_opt(self.config, "reasoning_llm_api_base", str),
                    params=_parse_params(_opt_list(self.config, "reasoning_llm_params")),
                    cache_dir=None
                    if cache.lower() in ("off", "none", "0")
                    else str(rootpath / cache),
                    concurrency=self.concurrency,
                    timeout_s=float(_opt(self.config, "reasoning_timeout", float) or 120.0),
                    attempts=self.attempts,
                    local_url=self.local_url,
                    local_identity=self.local_identity,
                )
            )
        return self._evaluator

    def upcoming(self, item: ReasoningItem) -> Iterator[ReasoningItem]:
        """The items this process will run next (for concurrent prefetch)."""
        window = self.concurrency * LOOKAHEAD_PER_SLOT
        if not self.is_worker:
            start = self.order.get(item.nodeid, 0)
            yield from self.items[start : start + window]
            return
        yield item
        # Under xdist, peek at the worker's own queue of indices: best effort, read-only.
        if self._worker_queue is None:
            self._worker_queue = next(
                (
                    p
                    for p in self.config.pluginmanager.get_plugins()
                    if type(p).__name__ == "WorkerInteractor"
                ),
                False,
            )
        wi = self._worker_queue
        if not wi:
            return
        try:
            with wi.torun.lock() as queue:
                indices = [wi.nextitem_index, *list(queue)[:window]]
        except Exception:
            return
        all_items = item.session.items
        for i in indices:
            if isinstance(i, int) and 0 <= i < len(all_items):
                other = all_items[i]
                if isinstance(other, ReasoningItem):
                    yield other


STATE = pytest.StashKey[_State]()


def _opt(config: pytest.Config, name: str, kind: type) -> Any:
    value = config.getoption(name, None)
    if value is None:
        ini = config.getini(name)
        if ini not in (None, "", []):
            try:
                value = kind(ini)
            except ValueError:
                raise pytest.UsageError(
                    f"ini option {name}: expected {kind.__name__}, got {ini!r}"
                ) from None
    return value


def _resolve_seed(config: pytest.Config) -> tuple[int | None, str | None]:
    """``--reasoning-seed``: an int, or ``auto[:TEXT]`` → a seed derived from TEXT (default
    today's UTC date); returns the seed and the text it came from."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput and workerinput.get("reasoning_seed") is not None:
        # Workers take the controller's seed: "auto" must not straddle midnight.
        return workerinput["reasoning_seed"], workerinput.get("reasoning_seed_source")
    raw = _opt(config, "reasoning_seed", str)
    if raw is None:
        return None, None
    raw = str(raw).strip()
    if raw == "auto" or raw.startswith("auto:"):
        import datetime

        from .rng import derive_seed

        source = raw[5:] or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        return derive_seed("reasoning-seed", source) % 2**31, source
    try:
        return int(raw), None
    except ValueError:
        raise pytest.UsageError(
            f"--reasoning-seed: expected an integer, 'auto' or 'auto:TEXT', got {raw!r}"
        ) from None


def _opt_int(config: pytest.Config, name: str, *, minimum: int) -> int | None:
    value: int | None = _opt(config, name, int)
    if value is not None and value < minimum:
        raise pytest.UsageError(f"--{name.replace('_', '-')}: must be >= {minimum}, got {value}")
    return value


def _opt_list(config: pytest.Config, name: str) -> list[str]:
    value = config.getoption(name, None)
    if value:
        return list(value)
    ini = config.getini(name)
    return [str(v) for v in ini] if ini else []


def _parse_params(pairs: list[str]) -> dict[str, Any]:
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise pytest.UsageError(f"--llm-param {pair!r}: expected key=value")
        out[key.strip()] = yaml.safe_load(raw) if raw.strip() else ""
    return out


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("reasoning", "pytest-reasoning: regression-test LLMs on generated problems")
    g.addoption(
        "--llm",
        action="append",
        dest="reasoning_llm",
        metavar="MODEL",
        help="model to evaluate (repeatable): any LiteLLM model string, 'reference' "
        "(the tasks' own solvers) or 'local' (embedded SmolLM2)",
    )
    g.addoption(
        "--llm-api-base",
        dest="reasoning_llm_api_base",
        metavar="URL",
        help="API base for OpenAI-compatible servers (vLLM, llama.cpp, ...)",
    )
    g.addoption(
        "--llm-param",
        action="append",
        dest="reasoning_llm_params",
        metavar="KEY=VALUE",
        help="generation parameter (repeatable), e.g. max_tokens=256; temperature=0 unless given",
    )
    g.addoption(
        "--reasoning-samples",
        type=int,
        dest="reasoning_samples",
        metavar="N",
        help="override every suite's sample count per level",
    )
    g.addoption(
        "--reasoning-seed",
        dest="reasoning_seed",
        metavar="S",
        help="override every suite's seeds: an integer, or 'auto' (from today's UTC date) or "
        "'auto:TEXT' (from any text, e.g. a git SHA): fresh items per release, replayable",
    )
    g.addoption(
        "--reasoning-cache",
        dest="reasoning_cache",
        metavar="DIR",
        help="response cache directory (default .reasoning_cache; 'off' disables)",
    )
    g.addoption(
        "--reasoning-results",
        dest="reasoning_results",
        metavar="PATH",
        help="append one JSON line per answered sample to PATH",
    )
    g.addoption(
        "--reasoning-concurrency",
        type=int,
        dest="reasoning_concurrency",
        metavar="N",
        help="concurrent model calls per process (default 8)",
    )
    g.addoption(
        "--reasoning-max-errors",
        type=int,
        dest="reasoning_max_errors",
        metavar="N",
        help="unrecovered call errors tolerated before the run fails (default 0)",
    )
    g.addoption(
        "--reasoning-retries",
        type=int,
        dest="reasoning_retries",
        metavar="N",
        help="attempts per call, first included (default 5); backoff with jitter",
    )
    g.addoption(
        "--reasoning-timeout",
        type=float,
        dest="reasoning_timeout",
        metavar="S",
        help="per-request timeout in seconds (default 120)",
    )
    g.addoption(
        "--llm-baseline",
        dest="reasoning_llm_baseline",
        metavar="MODEL",
        help="answer the same items with MODEL too and gate each level on a significant "
        "drop of the --llm models against it (paired, exact McNemar, Holm across levels)",
    )
    g.addoption(
        "--reasoning-baseline-results",
        dest="reasoning_baseline_results",
        metavar="PATH",
        help="compare against a stored results JSONL instead of calling a baseline",
    )
    g.addoption(
        "--reasoning-baseline-model",
        dest="reasoning_baseline_model",
        metavar="NAME",
        help="which model of the stored results is the baseline (if it holds several)",
    )
    g.addoption(
        "--reasoning-max-calls",
        type=int,
        dest="reasoning_max_calls",
        metavar="N",
        help="model calls one test may make through the llm fixture (default 200; "
        "cached answers are free)",
    )
    g.addoption(
        "--reasoning-report",
        dest="reasoning_report",
        metavar="DIR",
        help="write an HTML report (index.html with plots, tables and failing samples, "
        "summary.json, PNGs) to DIR after the run",
    )
    g.addoption(
        "--reasoning-robustness",
        dest="reasoning_robustness",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help="when two or more models answered the same items, test whether their ranking "
        "survives other weightings of the items (seed 004); with DIR, also write JSON and "
        "PNG plots there (needs the [analysis] extra)",
    )
    parser.addini("reasoning_llm", "models to evaluate (as --llm)", type="linelist")
    parser.addini("reasoning_llm_api_base", "as --llm-api-base")
    parser.addini("reasoning_llm_baseline", "as --llm-baseline")
    parser.addini("reasoning_llm_params", "KEY=VALUE lines (as --llm-param)", type="linelist")
    for name in (
        "samples",
        "seed",
        "cache",
        "results",
        "concurrency",
        "max_errors",
        "timeout",
        "retries",
        "max_calls",
        "baseline_results",
        "baseline_model",
    ):
        parser.addini(f"reasoning_{name}", f"as --reasoning-{name.replace('_', '-')}")


class _XdistHooks:
    """Registered only when xdist is present: hands the local server's URL to workers."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["reasoning_local_url"] = self.state.local_url
        node.workerinput["reasoning_local_identity"] = self.state.local_identity
        node.workerinput["reasoning_seed"] = self.state.seed
        node.workerinput["reasoning_seed_source"] = self.state.seed_source


def _check_cache(config: pytest.Config, state: _State) -> None:
    """An unusable cache directory stops the run before any (paid) call, in one line: answers
    that cannot be cached could be lost."""
    cache = _opt(config, "reasoning_cache", str) or ".reasoning_cache"
    if cache.lower() in ("off", "none", "0") or set(state.models) <= {"reference"}:
        return
    from .models.cache import ResponseCache

    path = config.rootpath / cache
    try:
        ResponseCache(path).close()
    except (OSError, sqlite3.Error) as exc:
        raise pytest.UsageError(
            f"--reasoning-cache: cannot use {path} ({type(exc).__name__}: {exc}); give a "
            "writable folder, or 'off' to run without a cache"
        ) from None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "reasoning: a generated reasoning sample")
    if not _opt_list(config, "reasoning_llm"):
        return
    state = _State(config)
    config.stash[STATE] = state
    _check_cache(config, state)
    if state.is_worker:
        workerinput = config.workerinput  # type: ignore[attr-defined]
        state.local_url = workerinput.get("reasoning_local_url")
        state.local_identity = workerinput.get("reasoning_local_identity")
    elif "local" in state.models:
        from .errors import ReasoningError
        from .models.local import LocalServer

        try:
            state.local_server = LocalServer()
            state.local_url = state.local_server.start()
            state.local_identity = state.local_server.identity
        except ReasoningError as exc:
            raise pytest.UsageError(f"--llm local: {exc}") from None
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(state), "reasoning-xdist")
    if not state.is_worker:
        from .results import ResultStore

        results = _opt(config, "reasoning_results", str)
        _load_baseline(state)
        state.store = ResultStore(results)
        if results:
            try:  # fail before any (paid) call, like the cache
                state.store.open()
            except OSError as exc:
                raise pytest.UsageError(
                    f"--reasoning-results: cannot write {results} ({type(exc).__name__}: {exc})"
                ) from None
        config.pluginmanager.register(_Controller(state), "reasoning-controller")


class _Controller:
    """Hooks of the process that sees every report (the xdist controller, or the only one)."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        data = _payload(report)
        if data is None or self.state.store is None:
            return
        from .core import Outcome
        from .errors import StorageFailed
        from .results import GateSpec

        spec = GateSpec.from_dict(data["gate"])
        try:
            self.state.store.add(Outcome.from_dict(data), spec)
        except StorageFailed as exc:
            _stop_for_storage(str(exc))
        if data.get("storage_error"):
            _stop_for_storage(str(data["storage_error"]))
        if data.get("repeat"):
            key = (spec.entry, spec.level, str(data["model"]))
            self.state.repeats[key] = self.state.repeats.get(key, 0) + 1


def _stop_for_storage(message: str) -> NoReturn:
    """Disk full or read-only mid-run: stop (exit status 2, interrupted) rather than pay for
    answers that cannot be kept. Everything written before the failure stays usable."""
    pytest.exit(
        f"pytest-reasoning: {message}; stopped asking the model (answers it cannot keep would "
        "be paid for twice); everything saved before is intact: free space or fix the path, "
        "then rerun",
        returncode=pytest.ExitCode.INTERRUPTED,
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    if state._evaluator is not None:
        state._evaluator.close()
    if state.store is not None:
        state.store.close()
    if state.local_server is not None:
        state.local_server.stop()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    state = config.stash.get(STATE, None)
    if state is None:
        return None
    seed = f", seed override {state.seed}" if state.seed is not None else ""
    if state.seed_source is not None:
        seed += f" (auto from {state.seed_source!r}; replay with --reasoning-seed {state.seed})"
    return [f"reasoning: models {', '.join(state.models)}; concurrency {state.concurrency}{seed}"]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if STATE not in parent.config.stash:
        return None
    from .config import is_suite_file

    if is_suite_file(file_path):
        return ReasoningSuiteFile.from_parent(parent, path=file_path)
    return None


class ReasoningSuiteFile(pytest.File):
    """A suite YAML: one test item per (model, entry, level, seed, index)."""

    def collect(self) -> Iterator[pytest.Item]:
        from .config import load_suite

        state = self.config.stash[STATE]
        rel = (
            self.path.relative_to(self.config.rootpath)
            if self.path.is_relative_to(self.config.rootpath)
            else self.path
        )
        suite = load_suite(self.path, samples=state.samples, seed=state.seed, display=str(rel))
        multi = len(state.models) > 1
        for model in state.models:
            for entry in suite.entries:
                for lv in entry.levels:
                    for seed in lv.seeds:
                        for index in range(lv.samples):
                            sample = f"{lv.level}-s{seed}-{index:03d}"
                            name = (
                                f"{entry.id}[{sample}-{model}]"
                                if multi
                                else f"{entry.id}[{sample}]"
                            )
                            yield ReasoningItem.from_parent(
                                self,
                                name=name,
                                model=model,
                                entry=entry,
                                level=lv,
                                seed=seed,
                                index=index,
                                suite=str(rel),
                            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from .errors import ReasoningError

        if isinstance(excinfo.value, ReasoningError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class ReasoningItem(pytest.Item):
    """One generated sample answered by one model. A wrong answer does not fail the item:
    it is reported as WRONG and counted by the level's gate."""

    def __init__(
        self,
        *,
        model: str,
        entry: EntrySpec,
        level: LevelSpec,
        seed: int,
        index: int,
        suite: str,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.entry = entry
        self.level = level
        self.seed = seed
        self.index = index
        self.suite = suite
        self.add_marker("reasoning")

    @property
    def sample_id(self) -> str:
        from .tasks.base import item_id

        return item_id(self.entry.id, self.level.level, self.seed, self.index)

    def build(self) -> Item:
        state = self.config.stash[STATE]
        built = state.built.pop(self.nodeid, None)
        if built is not None:
            return built
        from .registry import get_task

        return get_task(self.entry.task).make_item(
            self.level.level,
            self.seed,
            self.index,
            self.level.params,
            self.level.style,
            id=self.sample_id,
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from .errors import ReasoningError

        if isinstance(excinfo.value, ReasoningError):  # a bad knob: one line, no traceback
            return f"{self.entry.id} {self.level.level}: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def runtest(self) -> None:
        from .registry import get_task
        from .results import GateSpec

        state = self.config.stash[STATE]
        evaluator = state.evaluator
        if self.model != "reference":  # the reference answers instantly: nothing to overlap
            evaluator.prefetch(self._ahead(state, evaluator))
        outcome = evaluator.answer(self.build(), self.model)
        payload = outcome.to_dict()
        if evaluator.storage_error is not None:
            payload["storage_error"] = evaluator.storage_error
        task = get_task(self.entry.task)
        if task.is_repeat(self.level.level, self.seed, self.index, self.level.params):
            payload["repeat"] = True
        payload["gate"] = GateSpec(
            self.suite,
            self.entry.id,
            self.level.level,
            self.level.min_accuracy,
            self.level.confidence,
            self.level.max_drop,
            self.level.alpha,
            self.level.metric,
        ).to_dict()
        self.user_properties.append((PROPERTY, json.dumps(payload, ensure_ascii=False)))

    def _ahead(self, state: _State, evaluator: Evaluator) -> Iterator[tuple[Item, str]]:
        """Upcoming model-answered items not yet built or in flight (built once, kept until
        they run)."""
        for other in state.upcoming(self):
            if (
                other is self
                or other.model == "reference"
                or other.nodeid in state.built
                or evaluator.pending(other.sample_id, other.model)
            ):
                continue
            state.built[other.nodeid] = built = other.build()
            yield built, other.model

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


def _payload(report: pytest.TestReport) -> dict[str, Any] | None:
    for name, value in getattr(report, "user_properties", ()):
        if name == PROPERTY and isinstance(value, str):
            data: dict[str, Any] = json.loads(value)
            return data
    return None


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    if report.when != "call" or not report.passed:
        return None
    data = _payload(report)
    if data is None:
        return None
    if data.get("error") is not None:
        return "infra error", "I", "INFRA-ERROR"
    if not data.get("correct"):
        return "wrong", "W", "WRONG"
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    state.items = [i for i in items if isinstance(i, ReasoningItem)]
    state.order = {i.nodeid: n for n, i in enumerate(state.items)}


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Iterator[None]:
    result = yield
    state = session.config.stash.get(STATE, None)
    if state is not None and not state.is_worker and state.store is not None:
        _finish(session, state)
    return result


def _finish(session: pytest.Session, state: _State) -> None:
    from .results import decide_gates

    store = state.store
    assert store is not None
    store.close()
    # The baseline's own accuracy is reported, not gated: it is the reference point.
    state.gates = decide_gates(s for s in store.levels.values() if s.model != state.baseline)
    multi = len({s.model for s in store.levels.values()}) > 1
    state.comparisons = _compare(state, store)
    # Gates are reported as tests; count them so progress ends at 100%, not beyond.
    session.testscollected += sum(g.passed is not None for g in state.gates)
    session.testscollected += len(state.comparisons)
    session.testscollected += store.errors > state.max_errors
    for gate in state.gates:
        if gate.passed is None:
            continue
        s = gate.stats
        name = f"{s.spec.entry}[{s.spec.level}-gate" + (f"-{s.model}]" if multi else "]")
        props = [
            (
                "reasoning.gate",
                json.dumps(
                    {
                        "model": s.model,
                        "task": s.task,
                        "level": s.spec.level,
                        "n": s.n,
                        "correct": s.correct,
                        "errors": s.errors,
                        "accuracy": s.accuracy,
                        "min_accuracy": s.spec.min_accuracy,
                        "confidence": s.spec.confidence,
                        "passed": gate.passed,
                    }
                ),
            )
        ]
        _emit(
            session,
            s.spec.suite,
            name,
            gate.passed,
            f"GATE FAILED {s.model} {s.task} {s.spec.level}: {gate.reason}",
            props,
        )
    candidates = {c.candidate for c in state.comparisons}
    for c in state.comparisons:
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
    if store.errors > state.max_errors:
        _emit(
            session,
            "reasoning",
            "infrastructure",
            False,
            f"{store.errors} model call(s) failed after retries (budget "
            f"--reasoning-max-errors={state.max_errors}): infrastructure errors, not wrong "
            "answers; see the 'errors' column",
            [],
        )


EXIT_INFRASTRUCTURE = 6  # pytest uses 0-5; see README "Exit status"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Infrastructure errors alone get their own exit status, apart from failed gates."""
    state = session.config.stash.get(STATE, None)
    if state is None or state.is_worker or state.store is None:
        return
    infra = state.store.errors > state.max_errors
    if infra and exitstatus == pytest.ExitCode.TESTS_FAILED and session.testsfailed == 1:
        session.exitstatus = EXIT_INFRASTRUCTURE


def _compare(state: _State, store: ResultStore) -> list[Comparison]:
    """Candidate-vs-baseline comparisons, from the live baseline or the stored one."""
    from .comparison import baseline_answers, compare

    if state.baseline:
        base = baseline_answers(o for o in store.outcomes if o.model == state.baseline)
        name = state.baseline
    elif state.baseline_rows is not None:
        base, name = state.baseline_rows
    else:
        return []
    rows = [(o, s) for o, s in zip(store.outcomes, store.specs, strict=True) if o.model != name]
    return compare(rows, base, name)


def _load_baseline(state: _State) -> None:
    """Read a stored baseline once, at start: a bad file is a usage error, not a late crash."""
    from .results import read_results

    path = state.baseline_results
    if not path:
        return
    try:
        rows = list(read_results(path))
    except (OSError, ValueError, KeyError) as exc:
        raise pytest.UsageError(f"--reasoning-baseline-results {path}: {exc}") from None
    models = sorted({str(r["model"]) for r in rows})
    name = state.baseline_model
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
    state.baseline_rows = (
        {
            (str(r["item_id"]), str(r["prompt_sha256"])): r.get("correct")
            for r in rows
            if r["model"] == name
        },
        name,
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


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or state.store is None or not state.store.levels:
        return
    from .report import length_table, summary_table

    tr = terminalreporter
    tr.section("reasoning summary")
    for line in summary_table(state.gates or [], state.store).splitlines():
        tr.write_line(line)
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        saved = f" (in {state.store.path})" if state.store.path else ""
        tr.write_line(
            f"reasoning: INTERRUPTED: gates not decided; {len(state.store.outcomes)} answers "
            f"recorded{saved}; rerun the same command: cached answers are not asked again",
            yellow=True,
            bold=True,
        )
    failed = [g for g in state.gates if g.passed is False]
    if failed:
        tr.write_line(
            f"reasoning: {len(failed)} of {sum(g.passed is not None for g in state.gates)}"
            " gates FAILED",
            red=True,
            bold=True,
        )
        for g in failed:
            s = g.stats
            tr.write_line(f"  FAILED {s.model} {s.spec.entry} {s.spec.level}: {g.reason}", red=True)
    lengths = length_table(state.store.outcomes)
    if lengths:
        tr.write_sep("-", "accuracy by input length (FLenQA)")
        for line in lengths.splitlines():
            tr.write_line(line)
    if state.comparisons:
        _comparison_summary(tr, state.comparisons)
    wanted = config.getoption("reasoning_robustness", None)
    if wanted is not None:
        _robustness_summary(tr, state.store, wanted)
    report_dir = config.getoption("reasoning_report", None)
    if report_dir:
        from .htmlreport import build_report

        extra = []
        if wanted:  # the robustness plots join the report
            for name in ("rank_changes", "win_probability", "accuracy_ranges"):
                path = os.path.join(wanted, f"{name}.png")
                if os.path.exists(path):
                    extra.append((f"Robustness: {name.replace('_', ' ')}", path))
        try:
            report = build_report(
                [o.to_dict() for o in state.store.outcomes],
                report_dir,
                gates=state.gates or [],
                comparisons=state.comparisons or [],
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
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:  # GitHub Actions renders this file on the run's page
        from .report import markdown_summary

        try:
            with open(step_summary, "a", encoding="utf-8") as fh:
                fh.write(markdown_summary(state.gates, state.store, state.comparisons))
        except OSError as exc:
            tr.write_line(f"reasoning: could not write GITHUB_STEP_SUMMARY: {exc}", yellow=True)
    for (entry, level, model), count in sorted(state.repeats.items()):
        tr.write_line(
            f"reasoning: {entry} {level} ({model}): {count} sample(s) repeat an earlier problem;"
            " the level has fewer distinct problems than samples, so its interval is optimistic",
            yellow=True,
        )
    if state.store.errors:
        tr.write_line(
            f"reasoning: {state.store.errors} infrastructure error(s) (not counted as "
            "wrong answers)",
            yellow=True,
        )


def _robustness_summary(tr: Any, store: ResultStore, out: str) -> None:
    """The distributional-robustness analysis over the models that answered the same items."""
    tr.write_sep("-", "robustness of the ranking to the items' weights (seed 004)")
    rows = [o.to_dict() for o in store.outcomes]
    if len({r["model"] for r in rows}) < 2:
        tr.write_line("reasoning: robustness needs two or more models; skipped")
        return
    try:
        from . import robustness
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


def _comparison_summary(tr: Any, comparisons: Sequence[Comparison]) -> None:
    from tabulate import tabulate

    rows = []
    for c in comparisons:
        t = c.table
        verdict = "REGRESSION" if c.regressed else ("improved" if c.improved else "ok")
        rows.append(
            [
                c.candidate,
                c.spec.entry,
                c.spec.level,
                str(t.n),
                f"{t.both}/{t.only_baseline}/{t.only_candidate}/{t.neither}",
                f"{t.candidate_accuracy:.3f}",
                f"{t.baseline_accuracy:.3f}",
                f"{t.difference:+.3f} [{c.low:+.2f}, {c.high:+.2f}]",
                f"{c.p_two_sided:.3g}",
                f"{c.p_adjusted:.3g}",
                verdict,
            ]
        )
    tr.write_line("")
    tr.write_line(
        f"candidate vs baseline ({comparisons[0].baseline}), paired on identical prompts:"
    )
    headers = [
        "candidate",
        "task",
        "level",
        "n",
        "both/only base/only cand/neither",
        "candidate",
        "baseline",
        "difference [95% CI]",
        "McNemar p",
        "Holm p (one-sided)",
        "verdict",
    ]
    for line in tabulate(rows, headers=headers, disable_numparse=True).splitlines():
        tr.write_line(line)
    missing = sum(c.missing for c in comparisons)
    if missing:
        tr.write_line(
            f"reasoning: {missing} candidate sample(s) have no baseline answer for the same "
            "prompt: not compared",
            yellow=True,
        )
    for c in comparisons:
        if c.regressed:
            continue
        drop = c.detectable_drop
        if drop is None or drop > c.spec.max_drop + 0.05:
            shown = "no drop up to 0.5" if drop is None else f"only drops of {drop:g} or more"
            tr.write_line(
                f"reasoning: {c.spec.entry} {c.spec.level}: under-powered: {c.table.n} paired "
                f"samples detect {shown} with power 0.8 (see pytest-reasoning plan)",
                yellow=True,
            )


class LLM:
    """The ``llm`` fixture: answer generated items with the ``--llm`` models from a test.

    ``llm.solve(item)`` returns the scored :class:`~pytest_reasoning.core.Outcome` (cached
    like suite items); ``llm.frontier(...)`` searches the difficulty frontier. Each test may
    make at most ``--reasoning-max-calls`` uncached calls (Hypothesis shrinking included).
    """

    def __init__(self, state: _State) -> None:
        self._state = state
        self.models = list(state.models)
        self.budget = state.max_calls
        self.calls: dict[str, int] = {}
        self.current = ""

    @property
    def model(self) -> str:
        """The first ``--llm`` model (the one ``solve`` uses unless told otherwise)."""
        return self.models[0]

    def solve(self, item: Item, model: str | None = None) -> Outcome:
        """The scored answer; a call that failed after retries raises ``ModelCallFailed``
        (infrastructure, never a wrong answer for Hypothesis to shrink)."""
        from .errors import ModelCallFailed

        outcome = self._answer(item, model)
        if outcome.error is not None:
            raise ModelCallFailed(f"{outcome.model}: {outcome.error}")
        return outcome

    def _answer(self, item: Item, model: str | None) -> Outcome:
        from .errors import CallBudgetExceeded

        used = self.calls.get(self.current, 0)
        if used >= self.budget:
            raise CallBudgetExceeded(
                f"{self.current or 'this test'}: the call budget of {self.budget} is spent "
                "(--reasoning-max-calls); lower max_examples or raise the budget"
            )
        outcome = self._state.evaluator.answer(item, model or self.model)
        if not outcome.cached and (model or self.model) != "reference":
            self.calls[self.current] = used + 1
        return outcome

    def frontier(
        self,
        task: str,
        knob: str,
        low: int,
        high: int,
        *,
        target: float = 0.5,
        model: str | None = None,
        **options: Any,
    ) -> FrontierResult:
        """The hardest ``knob`` value in ``[low, high]`` where the model reaches ``target``;
        options as :func:`pytest_reasoning.frontier.find_frontier`."""
        from .frontier import find_frontier

        def answer(item: Item) -> bool | None:
            return self._answer(item, model).correct  # None for an error: counted apart

        return find_frontier(task, knob, low, high, answer, target=target, **options)


@pytest.fixture(scope="session")
def llm(request: pytest.FixtureRequest) -> LLM:
    """Answer generated items with the ``--llm`` models (skips the test without ``--llm``)."""
    state = request.config.stash.get(STATE, None)
    if state is None:
        pytest.skip("no --llm given: the llm fixture needs a model")
    fixture = LLM(state)
    state.llm = fixture
    return fixture


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    state = item.config.stash.get(STATE, None)
    if state is not None and state.llm is not None:
        state.llm.current = item.nodeid  # the budget is per test
    return (yield)


class ReasoningResults:
    """The ``reasoning_results`` fixture: outcomes of whole suites, for snapshots and checks.

    ``evaluate(suite)`` answers every item of a suite file with a model (``--llm`` first by
    default) through the run's evaluator, so answers already in the cache — from the suite's
    own items in this session or an earlier run — cost nothing; ``profile(suite)`` turns them
    into a :class:`~pytest_reasoning.profile.FailureProfile`. Because it reads the cache rather
    than other tests' reports, it is complete under xdist and whatever order tests run in.
    """

    def __init__(self, state: _State, root: Path) -> None:
        self._state = state
        self._root = root

    def evaluate(self, suite: str | os.PathLike[str], model: str | None = None) -> list[Outcome]:
        from .config import load_suite
        from .registry import get_task
        from .tasks.base import item_id

        path = Path(suite)
        if not path.is_absolute():
            path = self._root / path
        spec = load_suite(path, samples=self._state.samples, seed=self._state.seed)
        name = model or self._state.models[0]
        evaluator = self._state.evaluator
        items = [
            get_task(entry.task).make_item(
                level.level,
                seed,
                index,
                level.params,
                level.style,
                id=item_id(entry.id, level.level, seed, index),  # as the suite's own items
            )
            for entry in spec.entries
            for level in entry.levels
            for seed in level.seeds
            for index in range(level.samples)
        ]
        evaluator.prefetch((item, name) for item in items)
        return [evaluator.answer(item, name) for item in items]

    def profile(
        self, suite: str | os.PathLike[str], model: str | None = None, **options: Any
    ) -> FailureProfile:
        from .profile import FailureProfile

        return FailureProfile.from_outcomes(self.evaluate(suite, model), **options)


@pytest.fixture(scope="session")
def reasoning_results(request: pytest.FixtureRequest) -> ReasoningResults:
    """Outcomes and failure profiles of suite files (skips the test without ``--llm``)."""
    state = request.config.stash.get(STATE, None)
    if state is None:
        pytest.skip("no --llm given: reasoning_results needs a model")
    return ReasoningResults(state, request.config.rootpath)
