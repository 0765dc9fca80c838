"""The plugin's options: one table (flag, ini key, type, default, help), registered with
pytest, and :class:`RunOptions`, built and validated once at configure time. Each default is
written here once; a bad value is a usage error (one line, exit 4) before any item runs."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..budget import Budget
from .schedulers import MAX_SHARDS

__all__ = ["MAX_SHARDS", "OPTIONS", "Option", "RunOptions", "add_options", "cache_disabled"]



@dataclass(frozen=True)
class Option:
    flag: str
    dest: str
    help: str
    metavar: str | None = None
    default: Any = None
    kind: str = "str"  # str | int | float | list | optional-dir | flag
    minimum: float | None = None
    maximum: float | None = None  # a bound that keeps a typo from becoming a hang
    ini: bool = True  # also an ini key named like ``dest``


OPTIONS: tuple[Option, ...] = (
    Option(
        "--llm",
        "reasoning_llm",
        "model to evaluate (repeatable): any LiteLLM model string, 'reference' "
        "(the tasks' own solvers) or 'local' (embedded SmolLM2)",
        "MODEL",
        kind="list",
    ),
    Option(
        "--llm-config",
        "reasoning_llm_config",
        "a LiteLLM model_list (YAML): --llm and --llm-baseline may name its model_name "
        "aliases, each with its own model, api_base, api_key (os.environ/NAME) and parameters",
        "FILE",
    ),
    Option(
        "--llm-router",
        "reasoning_llm_router",
        "LiteLLM Router settings (YAML: model_list with several deployments per model_name, "
        "router_settings: rpm/tpm, fallbacks, cooldowns, Redis for shared limits): --llm and "
        "--llm-baseline may name its model groups",
        "FILE",
    ),
    Option(
        "--llm-api-base",
        "reasoning_llm_api_base",
        "API base for OpenAI-compatible servers (vLLM, llama.cpp, ...), for plain model "
        "strings (a --llm-config alias has its own)",
        "URL",
    ),
    Option(
        "--llm-param",
        "reasoning_llm_params",
        "generation parameter (repeatable), e.g. reasoning_effort=low; under a --llm-config "
        "entry's own; temperature=0 where the model accepts it, max_tokens by prompt style",
        "KEY=VALUE",
        kind="list",
    ),
    Option(
        "--reasoning-repeats",
        "reasoning_repeats",
        "override every suite's repeats: answer each item N times (pass@k, majority vote, "
        "an interval clustered by item)",
        "N",
        kind="int",
        minimum=1,
    ),
    Option(
        "--reasoning-lenient",
        "reasoning_lenient",
        "when a reply lacks the strict answer format, also read \\boxed{...} and 'the answer "
        "is ...' (recorded per row as extraction: lenient:...)",
        kind="flag",
    ),
    Option(
        "--reasoning-samples",
        "reasoning_samples",
        "override every suite's sample count per level",
        "N",
        kind="int",
        minimum=0,
    ),
    Option(
        "--reasoning-seed",
        "reasoning_seed",
        "override every suite's seeds: an integer, or 'auto' (from today's UTC date) or "
        "'auto:TEXT' (from any text, e.g. a git SHA): fresh items per release, replayable",
        "S",
    ),
    Option(
        "--reasoning-cache",
        "reasoning_cache",
        "response cache directory (default .reasoning_cache; 'off' disables), or "
        "redis://HOST:PORT/DB: a cache shared by every job that names it, behind the local "
        "one (--reasoning-cache-local; password from REASONING_REDIS_PASSWORD)",
        "DIR|URL",
        default=".reasoning_cache",
    ),
    Option(
        "--reasoning-cache-local",
        "reasoning_cache_local",
        "with a redis:// --reasoning-cache: the local cache in front of it (default "
        ".reasoning_cache; 'off': Redis alone)",
        "DIR",
    ),
    Option(
        "--reasoning-results",
        "reasoning_results",
        "append one JSON line per answered sample to PATH",
        "PATH",
    ),
    Option(
        "--reasoning-batch",
        "reasoning_batch",
        "first send the requests of the selected items that have no cached answer through "
        "the provider's Batch API (about half the price, answers within 24 h), then score "
        "the run from the cache; a rerun picks a submitted batch up (docs/models.md)",
        kind="flag",
    ),
    Option(
        "--reasoning-batch-wait",
        "reasoning_batch_wait",
        "seconds --reasoning-batch waits for its batches (default 86400: the 24 h window); "
        "a batch still running then stays recorded, the run stops (exit 2), and the same "
        "command picks it up",
        "S",
        default=86400.0,
        kind="float",
    ),
    Option(
        "--reasoning-concurrency",
        "reasoning_concurrency",
        "concurrent calls per model and process (default 8, at most 1024)",
        "N",
        default=8,
        kind="int",
        minimum=1,
        maximum=1024,
    ),
    Option(
        "--reasoning-max-errors",
        "reasoning_max_errors",
        "unrecovered call errors tolerated before the run fails (default 0)",
        "N",
        default=0,
        kind="int",
        minimum=0,
    ),
    Option(
        "--reasoning-retries",
        "reasoning_retries",
        "attempts per call, first included (default 5, at most 50); backoff with jitter",
        "N",
        default=5,
        kind="int",
        minimum=1,
        maximum=50,
    ),
    Option(
        "--reasoning-timeout",
        "reasoning_timeout",
        "per-request timeout in seconds (default 120)",
        "S",
        default=120.0,
        kind="float",
    ),
    Option(
        "--llm-baseline",
        "reasoning_llm_baseline",
        "answer the same items with MODEL too and gate each level on a significant "
        "drop of the --llm models against it (paired, exact McNemar, Holm across levels)",
        "MODEL",
    ),
    Option(
        "--reasoning-baseline-results",
        "reasoning_baseline_results",
        "compare against a stored results JSONL instead of calling a baseline",
        "PATH",
    ),
    Option(
        "--reasoning-baseline-model",
        "reasoning_baseline_model",
        "which model of the stored results is the baseline (if it holds several)",
        "NAME",
    ),
    Option(
        "--reasoning-drift",
        "reasoning_drift",
        "ask a stored run's items of the same models again, never from the cache, and test "
        "per level whether their answers moved (two-sided McNemar on correctness, and the "
        "share of changed answers against --reasoning-drift-max-changed; docs/upgrades.md)",
        "RESULTS",
    ),
    Option(
        "--reasoning-drift-max-changed",
        "reasoning_drift_max_changed",
        "share of changed answers a drift check tolerates (default 0.1)",
        "F",
        default=0.1,
        kind="float",
    ),
    Option(
        "--reasoning-max-calls",
        "reasoning_max_calls",
        "model calls one test may make through the llm fixture (default 200; "
        "cached answers are free)",
        "N",
        default=200,
        kind="int",
        minimum=1,
    ),
    Option(
        "--reasoning-shard",
        "reasoning_shard",
        "run shard K of N (a CI matrix job; auto: K and N from the scheduler's variables, "
        "auto/N for a Kubernetes Indexed Job of N completions): whole (model, suite entry, "
        "level) groups are assigned by a stable hash, balanced by item count, so every gate "
        "is decided on all its samples; comparisons are deferred to pytest-reasoning gate "
        "(docs/ci.md)",
        "K/N|auto",
    ),
    Option(
        "--reasoning-defer-gates",
        "reasoning_defer_gates",
        "report every gate and comparison as deferred, not decided (shards finer than a "
        "level, e.g. pytest-split); pytest-reasoning gate decides them from the merged "
        "results files (docs/ci.md)",
        kind="flag",
    ),
    Option(
        "--reasoning-budget",
        "reasoning_budget",
        "stop asking once the run's calls cost this much: usd=AMOUNT and/or tokens=COUNT "
        "(e.g. usd=5,tokens=2e6); what was paid is kept, the rest is not asked",
        "LIMITS",
        kind="list",
    ),
    Option(
        "--reasoning-sequential",
        "reasoning_sequential",
        "make every level sequential (as the suite key sequential: true): ask its samples in "
        "order and stop once an anytime-valid test settles its gate and comparison; the rest "
        "are not needed (docs/sequential.md)",
        kind="flag",
    ),
    Option(
        "--reasoning-report",
        "reasoning_report",
        "write an HTML report (index.html with plots, tables and failing samples, "
        "summary.json, PNGs) to DIR after the run",
        "DIR",
        ini=False,
    ),
    Option(
        "--reasoning-report-url",
        "reasoning_report_url",
        "where the report will be published (an http(s) URL: a CI artifact, GitHub Pages): "
        "the links to a failed gate's samples (terminal, JUnit) use it instead of file://",
        "URL",
    ),
    Option(
        "--reasoning-robustness",
        "reasoning_robustness",
        "when two or more models answered the same items, test whether their ranking "
        "survives other weightings of the items (seed 004); with DIR, also write JSON and "
        "PNG plots there (needs the [analysis] extra)",
        "DIR",
        kind="optional-dir",
        ini=False,
    ),
)
_BY_DEST = {o.dest: o for o in OPTIONS}
# The ini help of the keys that are not plain "as --flag".
_INI_HELP = {
    "reasoning_llm": "models to evaluate (as --llm)",
    "reasoning_llm_params": "KEY=VALUE lines (as --llm-param)",
}


def add_options(parser: pytest.Parser) -> None:
    g = parser.getgroup("reasoning", "pytest-reasoning: regression-test LLMs on generated problems")
    for o in OPTIONS:
        kwargs: dict[str, Any] = {"dest": o.dest, "metavar": o.metavar, "help": o.help}
        if o.kind == "list":
            kwargs["action"] = "append"
        elif o.kind == "int":
            kwargs["type"] = int
        elif o.kind == "float":
            kwargs["type"] = float
        elif o.kind == "optional-dir":
            kwargs.update(nargs="?", const="", default=None)
        elif o.kind == "flag":
            kwargs.update(action="store_true", default=None)
            kwargs.pop("metavar")
        g.addoption(o.flag, **kwargs)
    for o in OPTIONS:
        if o.ini and o.kind == "list":
            parser.addini(o.dest, _INI_HELP.get(o.dest, f"as {o.flag}"), type="linelist")
        elif o.ini and o.kind == "flag":
            parser.addini(o.dest, _INI_HELP.get(o.dest, f"as {o.flag}"), type="bool")
        elif o.ini:
            parser.addini(o.dest, _INI_HELP.get(o.dest, f"as {o.flag}"))


def _raw(config: pytest.Config, dest: str) -> Any:
    """The command line's value, else the ini file's (as text), else None."""
    value = config.getoption(dest, None)
    if value is not None and value != []:
        return value
    if not _BY_DEST[dest].ini:
        return None
    ini = config.getini(dest)
    return ini if ini not in (None, "", []) else None


def _typed(config: pytest.Config, dest: str) -> Any:
    o = _BY_DEST[dest]
    value = _raw(config, dest)
    if value is None:
        return o.default
    convert: Callable[[Any], Any] = {"int": int, "float": float}.get(o.kind, str)
    if isinstance(value, str) and o.kind in ("int", "float"):
        try:
            value = convert(value)
        except ValueError:
            from ..errors import quote

            raise pytest.UsageError(
                f"ini option {dest}: expected {convert.__name__}, got {quote(value)}"
            ) from None
    if o.minimum is not None and value < o.minimum:
        raise pytest.UsageError(f"{o.flag}: must be >= {o.minimum:g}, got {value}")
    if o.maximum is not None and value > o.maximum:
        raise pytest.UsageError(f"{o.flag}: must be <= {o.maximum:g}, got {value}")
    return value


def _list(config: pytest.Config, dest: str) -> list[str]:
    value = _raw(config, dest)
    return [str(v) for v in value] if value else []


def cache_disabled(value: str) -> bool:
    return value.lower() in ("off", "none", "0")


@dataclass(frozen=True)
class RunOptions:
    """Every option of a run, typed and checked. Workers build theirs from the same command
    line; the seed comes from the controller (``auto`` must not straddle midnight)."""

    models: tuple[str, ...]
    api_base: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    samples: int | None = None
    seed: int | None = None
    seed_source: str | None = None  # the text an ``auto`` seed was derived from
    cache: str = ".reasoning_cache"  # as given; see cache_dir
    cache_dir: Path | None = None  # resolved against the rootdir; None when 'off'
    cache_url: str | None = None  # a shared cache on Redis (redis://…), behind cache_dir
    results: str | None = None
    concurrency: int = 8
    max_errors: int = 0
    retries: int = 5
    timeout_s: float = 120.0
    baseline: str | None = None
    baseline_results: str | None = None
    baseline_model: str | None = None
    drift: str | None = None  # --reasoning-drift: a stored run of the same models
    drift_max_changed: float = 0.1
    max_calls: int = 200
    report_dir: str | None = None
    report_url: str | None = None  # --reasoning-report-url: the links' address, not file://
    robustness: str | None = None  # None: off; "": terminal only; DIR: also files
    llm_config: str | None = None  # the --llm-config file, as found
    llm_router: str | None = None  # the --llm-router file, as found
    model_specs: dict[str, Any] = field(default_factory=dict)  # alias → models.ModelSpec
    repeats: int | None = None
    lenient: bool = False
    shard: tuple[int, int] | None = None  # (K, N) of --reasoning-shard K/N (or auto)
    shard_source: str | None = None  # what --reasoning-shard auto read, as a header line
    defer_gates: bool = False
    sequential: bool = False  # --reasoning-sequential: every level sequential
    budget: Budget = field(default_factory=Budget)  # --reasoning-budget (empty: none)
    batch: bool = False  # --reasoning-batch: the Batch API first (plugin/batch.py)
    batch_wait_s: float = 86400.0

    @staticmethod
    def active(config: pytest.Config) -> bool:
        """Suites are collected only when a model is named."""
        return bool(_list(config, "reasoning_llm"))

    @classmethod
    def from_config(cls, config: pytest.Config) -> RunOptions:
        from ..config import parse_param
        from ..errors import InvalidArgument
        from ..models.endpoints import check_param
        from .checks import check_api_base, check_llm_param, check_samples, check_text

        params: dict[str, Any] = {}
        for pair in _list(config, "reasoning_llm_params"):
            try:
                key, value = parse_param(pair)
                check_param(key, value)
                check_llm_param(key, value)
            except InvalidArgument as exc:
                raise pytest.UsageError(f"--llm-param: {exc}") from None
            params[key] = value
        models = tuple(_list(config, "reasoning_llm"))
        for model in models:
            check_text("--llm", model)
        api_base = _raw(config, "reasoning_llm_api_base")
        if api_base is not None:
            check_api_base(str(api_base))
        samples = _typed(config, "reasoning_samples")
        if samples is not None:
            check_samples(samples)
        timeout = float(_typed(config, "reasoning_timeout"))
        if not math.isfinite(timeout) or timeout <= 0:
            raise pytest.UsageError(
                f"--reasoning-timeout: expected a positive number of seconds, got {timeout}"
            )
        seed, source = _resolve_seed(config)
        cache = str(_typed(config, "reasoning_cache"))
        baseline = _raw(config, "reasoning_llm_baseline")
        baseline_results = _raw(config, "reasoning_baseline_results")
        if baseline and baseline_results:
            raise pytest.UsageError(
                "--llm-baseline and --reasoning-baseline-results: give one baseline, not both"
            )
        drift = _raw(config, "reasoning_drift")
        if drift and (baseline or baseline_results):
            raise pytest.UsageError(
                "--reasoning-drift: a model against its own stored run, not with a baseline "
                "(--llm-baseline, --reasoning-baseline-results)"
            )
        if drift and _raw(config, "reasoning_batch"):
            raise pytest.UsageError(
                "--reasoning-drift and --reasoning-batch: a batch answers into the response "
                "cache, and a drift check never reads it"
            )
        llm_config, specs = _model_list(config)
        llm_router, groups = _router_groups(config)
        for name in groups:
            if name in specs:
                raise pytest.UsageError(
                    f"--llm-router {llm_router}: model group {name!r} is also an alias of "
                    f"--llm-config {llm_config}: rename one"
                )
        specs = {**specs, **groups}
        cache_dir, cache_url = _cache(config, cache)
        if drift:  # a cached answer never stands in for the new call
            cache_dir, cache_url = None, None
        repeats = _typed(config, "reasoning_repeats")
        from ..config import MAX_REPEATS

        if repeats is not None and repeats > MAX_REPEATS:
            raise pytest.UsageError(f"--reasoning-repeats: must be <= {MAX_REPEATS}, got {repeats}")
        batch = bool(_raw(config, "reasoning_batch"))
        if batch:
            asked = (*models, *([str(baseline)] if baseline else []))
            _check_batch(config, asked, specs, cache if cache_dir is None else None)
        batch_wait = float(_typed(config, "reasoning_batch_wait"))
        if not math.isfinite(batch_wait) or batch_wait <= 0:
            raise pytest.UsageError(
                f"--reasoning-batch-wait: expected a positive number of seconds, got {batch_wait}"
            )
        shard, shard_source = _shard(config)
        return cls(
            batch=batch,
            batch_wait_s=batch_wait,
            shard=shard,
            shard_source=shard_source,
            defer_gates=bool(_raw(config, "reasoning_defer_gates")),
            sequential=bool(_raw(config, "reasoning_sequential")),
            budget=_budget(config),
            llm_config=llm_config,
            llm_router=llm_router,
            model_specs=specs,
            repeats=repeats,
            lenient=bool(_raw(config, "reasoning_lenient")),
            models=models,
            api_base=api_base,
            params=params,
            samples=samples,
            seed=seed,
            seed_source=source,
            cache=cache,
            cache_dir=cache_dir,
            cache_url=cache_url,
            results=_raw(config, "reasoning_results"),
            concurrency=_typed(config, "reasoning_concurrency"),
            max_errors=_typed(config, "reasoning_max_errors"),
            retries=_typed(config, "reasoning_retries"),
            timeout_s=timeout,
            baseline=str(baseline) if baseline else None,
            baseline_results=str(baseline_results) if baseline_results else None,
            baseline_model=_raw(config, "reasoning_baseline_model"),
            drift=str(drift) if drift else None,
            drift_max_changed=float(_typed(config, "reasoning_drift_max_changed")),
            max_calls=_typed(config, "reasoning_max_calls"),
            report_dir=config.getoption("reasoning_report", None),
            report_url=_report_url(config),
            robustness=config.getoption("reasoning_robustness", None),
        )


def _check_batch(
    config: pytest.Config, models: tuple[str, ...], specs: dict[str, Any], no_folder: str | None
) -> None:
    """``--reasoning-batch`` where it cannot work: one line, before anything is asked.
    ``no_folder``: the --reasoning-cache value when it names no cache folder."""
    from ..models.kinds import model_kind

    if no_folder is not None:
        raise pytest.UsageError(
            "--reasoning-batch: needs a cache folder (the batch's answers and its record are "
            f"kept there, then the run scores them); --reasoning-cache {no_folder!r} keeps none"
        )
    dist = str(getattr(config.option, "dist", "no") or "no")
    if getattr(config.option, "numprocesses", None) or dist != "no":
        raise pytest.UsageError(
            "--reasoning-batch: not with -n/--dist (each xdist worker would submit the same "
            "requests): run it without -n (the answers go to the cache), then with -n if you "
            "like"
        )
    for model in models:
        kind = model_kind(model, specs)
        if kind.needs_local_server or kind.routed:
            what = "the embedded server" if kind.needs_local_server else "a --llm-router group"
            raise pytest.UsageError(
                f"--reasoning-batch: {model} is {what}, which has no batch API; run it "
                "without --reasoning-batch"
            )


def _file_option(config: pytest.Config, dest: str) -> str | None:
    """A file named on the command line (as given), else by the ini key (relative to the ini
    file, so a checked-in pytest.ini works from any folder); None when neither names one."""
    value = config.getoption(dest, None)
    if value is not None:
        return str(value)
    ini = config.getini(dest)
    if not ini:
        return None
    base = config.inipath.parent if config.inipath else config.rootpath
    return str(base / str(ini))


def _model_list(config: pytest.Config) -> tuple[str | None, dict[str, Any]]:
    """``--llm-config`` (or the ini key, relative to the ini file): LiteLLM's model_list by
    alias; a bad file is a usage error naming the file and the key."""
    value = _file_option(config, "reasoning_llm_config")
    if value is None:
        return None, {}
    from ..errors import InvalidArgument
    from ..models.endpoints import load_model_list

    try:
        return str(value), load_model_list(value)
    except InvalidArgument as exc:
        raise pytest.UsageError(f"--llm-config {exc}") from None


def _cache(config: pytest.Config, cache: str) -> tuple[Path | None, str | None]:
    """``--reasoning-cache``: a folder (resolved against the rootdir), 'off', or a Redis URL
    with the local layer of ``--reasoning-cache-local`` in front of it."""
    from ..models.shared_cache import is_redis_url

    local = _raw(config, "reasoning_cache_local")
    if not is_redis_url(cache):
        if local is not None:
            raise pytest.UsageError(
                f"--reasoning-cache-local: only with a shared cache (--reasoning-cache "
                f"redis://HOST:PORT/DB); the cache here is {cache!r}"
            )
        return (None if cache_disabled(cache) else config.rootpath / cache), None
    from ..errors import InvalidArgument
    from ..models.shared_cache import check_redis_url

    try:
        url = check_redis_url(cache)
    except InvalidArgument as exc:
        raise pytest.UsageError(f"--reasoning-cache: {exc}") from None
    local = str(local) if local is not None else ".reasoning_cache"
    return (None if cache_disabled(local) else config.rootpath / local), url


def _router_groups(config: pytest.Config) -> tuple[str | None, dict[str, Any]]:
    """``--llm-router`` (or the ini key, relative to the ini file): its model groups by name;
    a bad file is a usage error naming the file and the key."""
    value = _file_option(config, "reasoning_llm_router")
    if value is None:
        return None, {}
    from ..errors import InvalidArgument
    from ..models.router import load_router_groups

    try:
        return str(value), load_router_groups(value)
    except InvalidArgument as exc:
        raise pytest.UsageError(f"--llm-router {exc}") from None


def _resolve_seed(config: pytest.Config) -> tuple[int | None, str | None]:
    """``--reasoning-seed``: an int, or ``auto[:TEXT]`` → a seed derived from TEXT (default
    today's UTC date); returns the seed and the text it came from."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput and workerinput.get("reasoning_seed") is not None:
        return workerinput["reasoning_seed"], workerinput.get("reasoning_seed_source")
    raw = _raw(config, "reasoning_seed")
    if raw is None:
        return None, None
    from ..errors import quote
    from ..rng import SEED_FORMS, resolve_seed

    try:
        return resolve_seed(str(raw))
    except ValueError:
        raise pytest.UsageError(
            f"--reasoning-seed: {SEED_FORMS}, got {quote(str(raw).strip())}"
        ) from None


def _shard(config: pytest.Config) -> tuple[tuple[int, int] | None, str | None]:
    """``--reasoning-shard`` (or the ini key): (K, N), and what ``auto`` read (a line)."""
    raw = _raw(config, "reasoning_shard")
    if raw is None:
        return None, None
    import os

    from .schedulers import ShardRefused, parse_shard

    try:
        k, n, auto = parse_shard(str(raw), os.environ)
    except ShardRefused as exc:
        raise pytest.UsageError(str(exc)) from None
    return (k, n), auto.line() if auto is not None else None


def _report_url(config: pytest.Config) -> str | None:
    """``--reasoning-report-url`` (or the ini key): an http(s) URL, checked once here."""
    raw = _raw(config, "reasoning_report_url")
    if raw is None:
        return None
    from ..errors import InvalidArgument
    from ..report.links import check_report_url

    try:
        return check_report_url(str(raw))
    except InvalidArgument as exc:
        raise pytest.UsageError(f"--reasoning-report-url: {exc}") from None


def _budget(config: pytest.Config) -> Budget:
    from ..errors import InvalidArgument

    try:
        return Budget.parse(_list(config, "reasoning_budget"))
    except InvalidArgument as exc:
        raise pytest.UsageError(f"--reasoning-budget: {exc}") from None
