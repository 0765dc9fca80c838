"""The plugin's :class:`RunOptions`, built and validated once at configure time from the
option table (``flags.py``); what a run shares with the commands (parameters, aliases, the
cache, seeds) is parsed by ``runs.py``. A bad value is a usage error (one line, exit 4)
before any item runs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..budget import Budget
from ..errors import ReasoningError
from ..runs import load_model_specs, parse_cache, parse_seed
from .flags import add_options, raw, typed, values

__all__ = ["RunOptions", "add_options"]


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
        return bool(values(config, "reasoning_llm"))

    @classmethod
    def from_config(cls, config: pytest.Config) -> RunOptions:
        from ..config import parse_param
        from ..errors import InvalidArgument
        from ..models.endpoints import check_param
        from .checks import check_api_base, check_llm_param, check_samples, check_text

        params: dict[str, Any] = {}
        for pair in values(config, "reasoning_llm_params"):
            try:
                key, value = parse_param(pair)
                check_param(key, value)
                check_llm_param(key, value)
            except InvalidArgument as exc:
                raise pytest.UsageError(f"--llm-param: {exc}") from None
            params[key] = value
        models = tuple(values(config, "reasoning_llm"))
        for model in models:
            check_text("--llm", model)
        api_base = raw(config, "reasoning_llm_api_base")
        if api_base is not None:
            check_api_base(str(api_base))
        samples = typed(config, "reasoning_samples")
        if samples is not None:
            check_samples(samples)
        timeout = float(typed(config, "reasoning_timeout"))
        if not math.isfinite(timeout) or timeout <= 0:
            raise pytest.UsageError(
                f"--reasoning-timeout: expected a positive number of seconds, got {timeout}"
            )
        seed, source = _resolve_seed(config)
        cache = str(typed(config, "reasoning_cache"))
        baseline = raw(config, "reasoning_llm_baseline")
        baseline_results = raw(config, "reasoning_baseline_results")
        if baseline and baseline_results:
            raise pytest.UsageError(
                "--llm-baseline and --reasoning-baseline-results: give one baseline, not both"
            )
        drift = raw(config, "reasoning_drift")
        if drift and (baseline or baseline_results):
            raise pytest.UsageError(
                "--reasoning-drift: a model against its own stored run, not with a baseline "
                "(--llm-baseline, --reasoning-baseline-results)"
            )
        if drift and raw(config, "reasoning_batch"):
            raise pytest.UsageError(
                "--reasoning-drift and --reasoning-batch: a batch answers into the response "
                "cache, and a drift check never reads it"
            )
        llm_config = _file_option(config, "reasoning_llm_config")
        llm_router = _file_option(config, "reasoning_llm_router")
        try:
            specs = load_model_specs(llm_config, llm_router)
        except ReasoningError as exc:
            raise pytest.UsageError(str(exc)) from None
        cache_dir, cache_url = _cache(config, cache)
        if drift:  # a cached answer never stands in for the new call
            cache_dir, cache_url = None, None
        repeats = typed(config, "reasoning_repeats")
        from ..config import MAX_REPEATS

        if repeats is not None and repeats > MAX_REPEATS:
            raise pytest.UsageError(f"--reasoning-repeats: must be <= {MAX_REPEATS}, got {repeats}")
        batch = bool(raw(config, "reasoning_batch"))
        if batch:
            asked = (*models, *([str(baseline)] if baseline else []))
            _check_batch(config, asked, specs, cache if cache_dir is None else None)
        batch_wait = float(typed(config, "reasoning_batch_wait"))
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
            defer_gates=bool(raw(config, "reasoning_defer_gates")),
            sequential=bool(raw(config, "reasoning_sequential")),
            budget=_budget(config),
            llm_config=llm_config,
            llm_router=llm_router,
            model_specs=specs,
            repeats=repeats,
            lenient=bool(raw(config, "reasoning_lenient")),
            models=models,
            api_base=api_base,
            params=params,
            samples=samples,
            seed=seed,
            seed_source=source,
            cache=cache,
            cache_dir=cache_dir,
            cache_url=cache_url,
            results=raw(config, "reasoning_results"),
            concurrency=typed(config, "reasoning_concurrency"),
            max_errors=typed(config, "reasoning_max_errors"),
            retries=typed(config, "reasoning_retries"),
            timeout_s=timeout,
            baseline=str(baseline) if baseline else None,
            baseline_results=str(baseline_results) if baseline_results else None,
            baseline_model=raw(config, "reasoning_baseline_model"),
            drift=str(drift) if drift else None,
            drift_max_changed=float(typed(config, "reasoning_drift_max_changed")),
            max_calls=typed(config, "reasoning_max_calls"),
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
        if kind.calls_model and not kind.batch:  # the kind says whether it has a Batch API
            what = {"local": "the embedded server", "router": "a --llm-router group"}.get(
                kind.name, f"a {kind.name} model"
            )
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


def _resolve_seed(config: pytest.Config) -> tuple[int | None, str | None]:
    """``--reasoning-seed`` (runs.parse_seed); a worker takes its controller's."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput and workerinput.get("reasoning_seed") is not None:
        return workerinput["reasoning_seed"], workerinput.get("reasoning_seed_source")
    seed = raw(config, "reasoning_seed")
    if seed is None:
        return None, None
    try:
        return parse_seed(str(seed))
    except ReasoningError as exc:
        raise pytest.UsageError(str(exc)) from None


def _cache(config: pytest.Config, cache: str) -> tuple[Path | None, str | None]:
    """``--reasoning-cache`` (runs.parse_cache), its folders against the rootdir."""
    local = raw(config, "reasoning_cache_local")
    try:
        return parse_cache(cache, None if local is None else str(local), root=config.rootpath)
    except ReasoningError as exc:
        raise pytest.UsageError(str(exc)) from None


def _shard(config: pytest.Config) -> tuple[tuple[int, int] | None, str | None]:
    """``--reasoning-shard`` (or the ini key): (K, N), and what ``auto`` read (a line)."""
    given = raw(config, "reasoning_shard")
    if given is None:
        return None, None
    import os

    from .schedulers import ShardRefused, parse_shard

    try:
        k, n, auto = parse_shard(str(given), os.environ)
    except ShardRefused as exc:
        raise pytest.UsageError(str(exc)) from None
    return (k, n), auto.line() if auto is not None else None


def _report_url(config: pytest.Config) -> str | None:
    """``--reasoning-report-url`` (or the ini key): an http(s) URL, checked once here."""
    given = raw(config, "reasoning_report_url")
    if given is None:
        return None
    from ..errors import InvalidArgument
    from ..report.links import check_report_url

    try:
        return check_report_url(str(given))
    except InvalidArgument as exc:
        raise pytest.UsageError(f"--reasoning-report-url: {exc}") from None


def _budget(config: pytest.Config) -> Budget:
    from ..errors import InvalidArgument

    try:
        return Budget.parse(values(config, "reasoning_budget"))
    except InvalidArgument as exc:
        raise pytest.UsageError(f"--reasoning-budget: {exc}") from None
