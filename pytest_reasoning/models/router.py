"""LiteLLM's Router as a model kind: ``--llm-router FILE`` names model groups, each served by
several deployments (LiteLLM's own ``model_list`` and ``router_settings``: rpm/tpm limits,
fallbacks, cooldowns, Redis for limits shared across processes)::

    model_list:
      - model_name: candidate                  # a model group: what --llm names
        litellm_params: {model: openai/Qwen/Qwen3-8B, api_base: http://gpu-a:8000/v1, rpm: 60}
      - model_name: candidate
        litellm_params: {model: openai/Qwen/Qwen3-8B, api_base: http://gpu-b:8000/v1, rpm: 60}
    router_settings:
      routing_strategy: simple-shuffle
      optional_pre_call_checks: [enforce_model_rate_limits]
      redis_host: 10.0.0.5                     # shared rpm/tpm counters across jobs
      redis_password: os.environ/REDIS_PASSWORD

What stays ours: retries (the Router runs with ``num_retries=0``; ours count, back off and
stop), the response cache (keyed by the model group, never by the deployment that answered)
and the timeout. When the Router's own limiter refuses a call (HTTP 429 with ``Retry-After:
60``, before any deployment was asked) we wait for its window — its counters are per UTC
minute — without spending an attempt, for at most ``--reasoning-timeout`` per call; a cooldown
of every deployment is waited out the same way. ``routing_strategy: least-busy`` is refused:
in LiteLLM it sends everything to one deployment (BerriAI/litellm#37622, #39322, open).

The file is checked without importing litellm (one line per mistake, naming the key); the
Router itself is built on the first call, through :func:`.litellm_client.import_litellm`, so
litellm is still imported by that module alone.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..core import canonical_json, sha256_text
from ..errors import InvalidArgument, ReasoningError, quote
from .base import ChatRequest, RequestShape, register_secret_env
from .endpoints import (
    _REFUSED,
    _SECRETISH,
    ENV_PREFIX,
    HEADER_PARAMS,
    check_headers,
    check_price,
    entry_name,
    read_config,
    resolve_headers,
)
from .litellm_client import CapabilityCache, LiteLLMClient, RetryPolicy

__all__ = [
    "LEAST_BUSY",
    "RouterClient",
    "RouterFile",
    "RouterGroup",
    "load_router_groups",
    "parse_router_config",
    "router_refusal",
]

LEAST_BUSY = (
    "routing_strategy least-busy: refused, LiteLLM's least-busy sends every request to one "
    "deployment (BerriAI/litellm#37622 and #39322, open); use simple-shuffle (weighted by "
    "rpm/tpm) or usage-based-routing-v2"
)
STRATEGIES = (
    "simple-shuffle",
    "usage-based-routing",
    "usage-based-routing-v2",
    "latency-based-routing",
    "cost-based-routing",
    "lar1",
)
# router_settings we pass to litellm.Router as they are (its own names and meanings).
_SETTINGS = {
    "routing_strategy",
    "routing_strategy_args",
    "fallbacks",
    "context_window_fallbacks",
    "content_policy_fallbacks",
    "default_fallbacks",
    "max_fallbacks",
    "allowed_fails",
    "allowed_fails_policy",
    "cooldown_time",
    "disable_cooldowns",
    "enable_pre_call_checks",
    "optional_pre_call_checks",
    "default_max_parallel_requests",
    "model_group_alias",
    "redis_url",
    "redis_host",
    "redis_port",
    "redis_password",
    "redis_db",
}
_SETTINGS_REFUSED = {
    "num_retries": "retries are the plugin's own (--reasoning-retries): leave num_retries out "
    "or set it to 0",
    "retry_policy": "retries are the plugin's own (--reasoning-retries)",
    "model_group_retry_policy": "retries are the plugin's own (--reasoning-retries)",
    "retry_after": "retries are the plugin's own (--reasoning-retries)",
    "timeout": "the timeout is the plugin's own (--reasoning-timeout), or a deployment's "
    "litellm_params.timeout",
    "cache_responses": "the response cache is the plugin's own (--reasoning-cache)",
    "cache_kwargs": "the response cache is the plugin's own (--reasoning-cache)",
}
# Proxy sections that configure a server, not a router: ignored, as --llm-config does.
_IGNORED_SECTIONS = {"litellm_settings", "general_settings", "environment_variables"}
# Deployment parameters that say where and how to connect, or how much to send: the Router's
# business, never part of a cache key (a group served from one more endpoint keeps its answers).
_CONNECTION = {
    "api_base",
    "base_url",
    "api_key",
    "api_version",
    "organization",
    "rpm",
    "tpm",
    "weight",
    "order",
    "timeout",
    "stream_timeout",
    "max_parallel_requests",
    "region_name",
    "aws_region_name",
    "vertex_project",
    "vertex_location",
    "input_cost_per_token",
    "output_cost_per_token",
    "tags",
}
_ROUTER_MESSAGES = (
    "Deployment over user-defined ratelimit",
    "Model rate limit exceeded",
    "No deployments available for selected model",
    "Deployment over defined rpm limit",
    "Deployment over defined tpm limit",
)
_LIMITER_METHODS = ("model_rate_limit_check", "tpm_rpm_limits")


@dataclass(frozen=True)
class RouterFile:
    """A checked ``--llm-router`` file: what ``litellm.Router`` is built from."""

    path: str
    model_list: tuple[dict[str, Any], ...]
    settings: dict[str, Any]
    secret_settings: dict[str, str] = field(default_factory=dict)  # setting → env var


@dataclass(frozen=True)
class RouterGroup:
    """One model group of a router file: a model kind of its own (``kinds.RouterAPI``)."""

    name: str
    file: RouterFile
    models: tuple[str, ...]  # the distinct model strings of its deployments
    deployments: int
    params: dict[str, Any]  # generation parameters its deployments share (in the cache key)
    kind: str = "router"  # kinds.model_kind reads this

    @property
    def has_prices(self) -> bool:
        """Whether the group's shared parameters price its calls (a deployment's own prices
        vary with the deployment that answers)."""
        return {"input_cost_per_token", "output_cost_per_token"} <= set(self.params)

    @property
    def identity(self) -> str:
        """What the cache key knows of the group besides its name: the model strings and the
        shared generation parameters, not the endpoints, keys or limits."""
        digest = sha256_text(canonical_json([list(self.models), self.params]))[:16]
        return f"router:{digest}"

    @property
    def model_id(self) -> str:
        return f"{self.name}=router({', '.join(self.models)})"


def _fail(where: str, message: str) -> InvalidArgument:
    return InvalidArgument(f"{where}: {message}")


def _env(value: Any) -> str | None:
    if isinstance(value, str) and value.startswith(ENV_PREFIX):
        return value[len(ENV_PREFIX) :].strip()
    return None


def _deployment(raw: Any, where: str) -> dict[str, Any]:
    name = entry_name(raw, where, "a model group name")
    lp = raw.get("litellm_params")
    if not isinstance(lp, dict):
        raise _fail(f"{where}.litellm_params", "expected a mapping with at least 'model'")
    model = lp.get("model")
    if not isinstance(model, str) or not model.strip():
        raise _fail(f"{where}.litellm_params.model", "missing; expected a LiteLLM model string")
    for key, value in lp.items():
        at = f"{where}.litellm_params.{key}"
        if not isinstance(key, str):
            raise _fail(at, "expected a parameter name")
        env = _env(value)
        if key in _REFUSED:
            raise _fail(at, _REFUSED[key])
        if key == "api_key" and env is None:
            raise _fail(at, "write os.environ/NAME: keys stay in the environment, never in files")
        if env is not None:
            if not env:
                raise _fail(at, "expected os.environ/NAME with a variable name")
            if key == "api_key" or _SECRETISH.search(key):
                register_secret_env(env)  # LiteLLM reads it; we redact it
        elif _SECRETISH.search(key):
            raise _fail(at, "write os.environ/NAME: secrets stay in the environment")
        if key in HEADER_PARAMS:
            check_headers(value, at)
        if env is None:
            check_price(key, value, at, name)
        if key in ("rpm", "tpm", "max_parallel_requests") and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise _fail(at, f"expected an integer >= 1, got {quote(value)}")
        if (
            key == "api_base"
            and env is None
            and (not isinstance(value, str) or not value.startswith(("http://", "https://")))
        ):
            raise _fail(at, f"expected an http(s) URL, got {quote(value)}")
    info = raw.get("model_info", {})
    if not isinstance(info, dict):
        raise _fail(f"{where}.model_info", "expected a mapping")
    params = dict(lp)
    if params.get("api_base") and "api_key" not in params and model.startswith("openai/"):
        # A keyless OpenAI-compatible server (vLLM, llama.cpp): the placeholder, never the
        # ambient OPENAI_API_KEY (as --llm-config does).
        params["api_key"] = "EMPTY"
    return {"model_name": name, "litellm_params": params, "model_info": dict(info)}


def _shared_params(deployments: list[dict[str, Any]], where: str) -> dict[str, Any]:
    """The generation parameters of a group: every deployment must ask alike (a cache key
    cannot depend on which deployment answered)."""
    first: dict[str, Any] | None = None
    for d in deployments:
        lp = d["litellm_params"]
        params = {
            k: v
            for k, v in lp.items()
            if k != "model"
            and k not in _CONNECTION
            and _env(v) is None
            and not _SECRETISH.search(k)
        }
        if first is None:
            first = params
        elif params != first:
            differ = sorted(
                set(params) ^ set(first) | {k for k in params if params.get(k) != first.get(k)}
            )
            raise _fail(
                where,
                f"the deployments of model group {quote(d['model_name'])} differ in "
                f"{quote(differ[0])}: "
                "deployments of one group must answer alike (give the other a group of its own)",
            )
    return first or {}


def _settings(raw: Any, path: str, groups: set[str]) -> tuple[dict[str, Any], dict[str, str]]:
    where = f"{path}: router_settings"
    if raw is None:
        return {}, {}
    if not isinstance(raw, dict):
        raise _fail(where, "expected a mapping of LiteLLM Router settings")
    settings: dict[str, Any] = {}
    secrets: dict[str, str] = {}
    for key, value in raw.items():
        at = f"{where}.{key}"
        if key in _SETTINGS_REFUSED and not (key == "num_retries" and value == 0):
            raise _fail(at, _SETTINGS_REFUSED[key])
        if key == "num_retries":
            continue
        if key not in _SETTINGS:
            import difflib

            near = difflib.get_close_matches(str(key), sorted(_SETTINGS), n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise _fail(at, f"unknown or unsupported router setting{hint}")
        env = _env(value)
        if env is not None:
            if not env:
                raise _fail(at, "expected os.environ/NAME with a variable name")
            secrets[key] = env  # read when the Router is built
            if key in ("redis_password", "redis_url"):
                register_secret_env(env)
            continue
        if key == "redis_password":
            raise _fail(at, "write os.environ/NAME: secrets stay in the environment")
        if key == "redis_url" and isinstance(value, str) and ":" in value.split("@")[0][8:]:
            raise _fail(at, "a password in the URL: write os.environ/NAME for the whole URL")
        if key == "routing_strategy":
            if value == "least-busy":
                raise _fail(path, LEAST_BUSY)
            if value not in STRATEGIES:
                raise _fail(at, f"expected one of {', '.join(STRATEGIES)}, got {quote(value)}")
        if key in ("fallbacks", "context_window_fallbacks", "content_policy_fallbacks"):
            _check_fallbacks(value, at, groups)
        settings[key] = value
    return settings, secrets


def _check_fallbacks(value: Any, at: str, groups: set[str]) -> None:
    if not isinstance(value, list):
        raise _fail(at, "expected a list of {GROUP: [FALLBACK, ...]}")
    for entry in value:
        if not isinstance(entry, dict) or len(entry) != 1:
            raise _fail(at, f"expected {{GROUP: [FALLBACK, ...]}}, got {quote(entry)}")
        ((source, targets),) = entry.items()
        names = [source, *(targets if isinstance(targets, list) else [targets])]
        for name in names:
            if name not in groups:
                raise _fail(at, f"{quote(name)} is not a model group of this file")


def parse_router_config(data: Any, path: str) -> dict[str, RouterGroup]:
    """A parsed router file's model groups by name; InvalidArgument (one line) otherwise."""
    if not isinstance(data, Mapping) or "model_list" not in data:
        raise _fail(path, "expected a mapping with a 'model_list' (LiteLLM's Router format)")
    unknown = sorted(set(data) - {"model_list", "router_settings"} - _IGNORED_SECTIONS, key=str)
    if unknown:
        raise _fail(
            f"{path}: {unknown[0]}", "unknown section; expected model_list, router_settings"
        )
    entries = data["model_list"]
    if not isinstance(entries, list) or not entries:
        raise _fail(f"{path}: model_list", "expected a non-empty list of deployments")
    deployments = [_deployment(raw, f"{path}: model_list[{i}]") for i, raw in enumerate(entries)]
    by_group: dict[str, list[dict[str, Any]]] = {}
    for d in deployments:
        by_group.setdefault(d["model_name"], []).append(d)
    settings, secrets = _settings(data.get("router_settings"), path, set(by_group))
    file = RouterFile(path, tuple(deployments), settings, secrets)
    return {
        name: RouterGroup(
            name=name,
            file=file,
            models=tuple(sorted({d["litellm_params"]["model"].strip() for d in ds})),
            deployments=len(ds),
            params=_shared_params(ds, f"{path}: model_list"),
        )
        for name, ds in by_group.items()
    }


def load_router_groups(path: str | os.PathLike[str]) -> dict[str, RouterGroup]:
    """Read ``--llm-router``: LiteLLM's ``model_list`` and ``router_settings`` (YAML)."""
    return parse_router_config(read_config(path, "a router file"), str(path))


# -- the Router's own refusals ---------------------------------------------------------------------
def _window_s(now: float | None = None) -> float:
    """Seconds to the next UTC minute: LiteLLM counts rpm/tpm per minute (``%H-%M`` keys), so
    that is when a refused call can pass (its ``Retry-After: 60`` is an upper bound)."""
    t = time.time() if now is None else now
    return 60.0 - (t % 60.0)


def router_refusal(exc: BaseException, rng: random.Random | None = None) -> float | None:
    """Seconds to wait when ``exc`` is the Router refusing a call itself — its rpm/tpm
    limiter, or every deployment cooling down — before any deployment was asked; None for
    anything else (an upstream 429 is the policy's, as always)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    text = str(exc)
    jitter = (rng or random).uniform(0.0, 2.0)  # spread the jobs waiting for one window
    if names & {"RouterRateLimitError", "RouterRateLimitErrorBasic"}:
        cooldown = getattr(exc, "cooldown_time", None)
        if isinstance(cooldown, int | float) and cooldown > 0:
            return float(cooldown) + jitter / 4
        return 1.0 + jitter / 4
    if "RateLimitError" not in names:
        return None
    response = getattr(exc, "response", None)
    method = getattr(getattr(response, "request", None), "method", None)
    if method in _LIMITER_METHODS or any(m in text for m in _ROUTER_MESSAGES):
        return _window_s() + jitter
    return None


# -- the client ------------------------------------------------------------------------------------
class RouterHandle:
    """One ``litellm.Router`` per router file and evaluator, built on the first call (fallbacks
    between groups need them in one Router)."""

    def __init__(self, file: RouterFile) -> None:
        self.file = file
        self._router: Any = None
        self._lock = threading.Lock()

    def get(self, lib: ModuleType) -> Any:
        with self._lock:
            if self._router is None:
                self._router = self._build(lib)
            return self._router

    def _build(self, lib: ModuleType) -> Any:
        kwargs = dict(self.file.settings)
        for key, env in self.file.secret_settings.items():
            value = os.environ.get(env)
            if value is None:
                raise ReasoningError(
                    f"--llm-router {self.file.path}: router_settings.{key}: environment "
                    f"variable {env} is not set"
                )
            kwargs[key] = int(value) if key in ("redis_port", "redis_db") else value
        # Header values naming a variable are read now (LiteLLM resolves top-level ones only).
        model_list = [
            {k: dict(v) if isinstance(v, dict) else v for k, v in d.items()}
            for d in self.file.model_list
        ]
        for d in model_list:
            d["litellm_params"] = resolve_headers(d["litellm_params"])
        try:
            return lib.Router(model_list=model_list, num_retries=0, **kwargs)
        except Exception as exc:  # LiteLLM's own checks of the settings
            raise ReasoningError(
                f"--llm-router {self.file.path}: {type(exc).__name__}: {exc}"
            ) from None


class RouterClient(LiteLLMClient):
    """A model group through ``Router.acompletion``: our retries, timeout and cache around
    LiteLLM's routing, limits, fallbacks and cooldowns."""

    def __init__(
        self,
        group: RouterGroup,
        handle: RouterHandle,
        *,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        default_params: dict[str, Any] | None = None,
        capability_cache: CapabilityCache | None = None,
        kind: RequestShape | None = None,
    ) -> None:
        super().__init__(
            group.name,
            timeout_s=timeout_s,
            retry=retry,
            # The run's --llm-param values, then what the group's deployments are asked.
            default_params={**(default_params or {}), **group.params},
            identity=group.identity,
            kind=kind,
            label=group.name,
            capability_cache=capability_cache,
        )
        self.group = group
        self._handle = handle
        # Parameters as LiteLLM's map knows the group's (first) model.
        self.caps_model = group.models[0]
        # Waiting out the Router's own limits spends no attempt, at most this long per call.
        self.free_wait_s = timeout_s

    @property
    def model_id(self) -> str:
        return self.group.model_id

    def _request_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        return resolve_headers(request.params)  # endpoints and keys are the deployments'

    async def _send(self, lib: ModuleType, request: ChatRequest, kwargs: dict[str, Any]) -> Any:
        router = self._handle.get(lib)
        return await router.acompletion(
            model=request.model,
            messages=[{"role": r, "content": c} for r, c in request.messages],
            timeout=self.timeout_s,
            num_retries=0,
            **kwargs,
        )

    def _refused(self, exc: BaseException) -> float | None:
        return router_refusal(exc, self._rng)
