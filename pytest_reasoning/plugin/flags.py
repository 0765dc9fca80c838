"""The plugin's options as one table (flag, ini key, type, default, help), registered with
pytest, and how a value is read: the command line's, else the ini file's, typed and bounded.
Each default is written here once; ``options.RunOptions`` builds the run's from them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

__all__ = ["OPTIONS", "Option", "add_options", "raw", "typed", "values"]


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


def raw(config: pytest.Config, dest: str) -> Any:
    """The command line's value, else the ini file's (as text), else None."""
    value = config.getoption(dest, None)
    if value is not None and value != []:
        return value
    if not _BY_DEST[dest].ini:
        return None
    ini = config.getini(dest)
    return ini if ini not in (None, "", []) else None


def typed(config: pytest.Config, dest: str) -> Any:
    o = _BY_DEST[dest]
    value = raw(config, dest)
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


def values(config: pytest.Config, dest: str) -> list[str]:
    value = raw(config, dest)
    return [str(v) for v in value] if value else []
