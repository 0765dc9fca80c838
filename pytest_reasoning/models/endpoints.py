"""Models as configuration, in LiteLLM's own format: ``--llm-config FILE`` reads a LiteLLM
``model_list`` (the proxy's config format), so one file names every model of a run, each
with its own endpoint, key and generation parameters::

    model_list:
      - model_name: candidate            # what --llm / --llm-baseline name
        litellm_params:
          model: openai/Qwen/Qwen3-8B     # any LiteLLM model string
          api_base: http://127.0.0.1:8000/v1
          api_key: os.environ/VLLM_KEY    # keys only ever from the environment
          temperature: 0.6                # any generation parameter

Keys stay in the environment: a literal key is refused, the variable is read at call time,
and its value is redacted from every message. So are secrets in HTTP headers
(``extra_headers: {Authorization: os.environ/TEAM_AUTH}``): a header that carries credentials
(by its name, or a ``Bearer …`` value) must name a variable, resolved at call time
(:func:`resolve_headers`). Router and proxy settings (``rpm``, ``tpm``,
``litellm_settings``, ``router_settings``, ``general_settings``, ``environment_variables``) are
ignored: this file only names models.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidArgument, ReasoningError, quote
from ..files import InputRefused, read_text_input
from .base import RESERVED, normalise_api_base, register_secret_env

__all__ = [
    "ENV_PREFIX",
    "HEADER_PARAMS",
    "MAX_CONFIG_BYTES",
    "ModelSpec",
    "check_headers",
    "check_not_secret",
    "check_param",
    "check_price",
    "entry_name",
    "load_model_list",
    "parse_model_list",
    "read_config",
    "resolve_headers",
]

ENV_PREFIX = "os.environ/"
# Router settings of a proxy config: not ours to apply, not sent to the model.
_IGNORED = {"rpm", "tpm", "weight", "order"}
# Retries and streaming are the harness's own (one retry policy, counted and bounded).
_REFUSED = {
    "max_retries": "retries are the plugin's own: use --reasoning-retries",
    "num_retries": "retries are the plugin's own: use --reasoning-retries",
    "stream": "answers are read whole: leave stream out",
    "mock_response": "not a model",
    "messages": "the prompt is the item's own: it is not a parameter",
}
# What a --llm-param may not set besides: the run sets these from its own options.
_OWNED = {
    **_REFUSED,
    "model": "name the model with --llm (or a --llm-config entry)",
    "api_base": "use --llm-api-base (or a --llm-config entry's api_base)",
    "base_url": "use --llm-api-base (or a --llm-config entry's api_base)",
    "timeout": "use --reasoning-timeout",
}
# Parameters holding HTTP headers (LiteLLM's ``extra_headers``; ``headers`` for some providers).
HEADER_PARAMS = ("extra_headers", "headers")
# Headers that carry credentials by name (Authorization, X-Api-Key, Cookie, X-Auth-Token…),
# and values that do whatever the name (``Bearer …``, ``Basic …``, ``sk-…``).
_SECRET_HEADER = re.compile(r"auth|key|secret|token|password|credential|cookie|session", re.I)
_SECRET_VALUE = re.compile(r"^\s*(bearer|basic|token|digest|negotiate)\s+\S|\bsk-\w{8,}", re.I)
# Parameter names that hold secrets (api_key, aws_secret_access_key, auth_token,
# vertex_credentials; not max_tokens, nor a price such as input_cost_per_token).
_SECRETISH = re.compile(r"^(?!.*cost).*(key|secret|password|credentials?|token)$", re.I)
_NAME = re.compile(r"^[A-Za-z0-9_.:/@+\-]+$")
# LiteLLM's custom prices (input_cost_per_token, output_cost_per_second,
# cache_read_input_token_cost…): what a dollar budget counts calls with.
_PRICE = re.compile(r"(^|_)cost(_|$)", re.I)
MAX_CONFIG_BYTES = 1_000_000


@dataclass(frozen=True)
class ModelSpec:
    """One ``model_list`` entry, checked."""

    name: str  # the alias (model_name)
    model: str  # the LiteLLM model string behind it
    api_base: str | None = None
    api_key_env: str | None = None  # read at call time, never stored
    params: dict[str, Any] = field(default_factory=dict)  # generation parameters (cache key)
    env_params: dict[str, str] = field(default_factory=dict)  # param → env var, at call time
    timeout_s: float | None = None
    max_concurrency: int | None = None
    where: str = ""  # "FILE: model_list[i]" for messages

    @property
    def models(self) -> tuple[str, ...]:
        """The LiteLLM model strings behind the alias (one)."""
        return (self.model,)

    @property
    def has_prices(self) -> bool:
        """Whether the entry prices its own calls (``input_cost_per_token`` and
        ``output_cost_per_token``, passed to LiteLLM with each call)."""
        return {"input_cost_per_token", "output_cost_per_token"} <= set(self.params)

    @property
    def model_id(self) -> str:
        """``alias=model@api_base``: what a results row calls this model."""
        base = normalise_api_base(self.api_base)
        return f"{self.name}={self.model}" + (f"@{base}" if base else "")


def check_not_secret(name: str) -> None:
    """Refuse a generation parameter that would carry a secret on the command line or in a
    file (InvalidArgument naming it): keys come only from the environment."""
    if _SECRETISH.search(name):
        raise InvalidArgument(
            f"{name}: keys stay in the environment; use LiteLLM's variable (e.g. "
            "OPENAI_API_KEY) or a --llm-config entry with os.environ/NAME"
        )


def check_param(name: str, value: Any) -> None:
    """A ``--llm-param``: not a parameter the run sets itself (``messages``, ``model``,
    ``timeout``…), no secret in its name (:func:`check_not_secret`) or its headers
    (:func:`check_headers`), a price that is one (:func:`check_price`). InvalidArgument
    naming it, in one line."""
    if name in _OWNED:
        raise InvalidArgument(f"{name}: {_OWNED[name]}")
    check_not_secret(name)
    if name in HEADER_PARAMS:
        check_headers(value, name)
    check_price(name, value, name)


def check_price(name: str, value: Any, where: str, model: str | None = None) -> None:
    """A parameter named like a price (``input_cost_per_token``…) must be a finite number
    >= 0: LiteLLM prices each call with it, and a negative, NaN or infinite price (or text,
    which failed every call) would switch a dollar budget off. InvalidArgument naming
    ``where``, the model and the key."""
    if not _PRICE.search(name):
        return
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and math.isfinite(value) and value >= 0:
        return
    whose = f"the price of model {quote(model)}" if model else "a price"
    raise _fail(where, f"{whose} must be a finite number >= 0 (dollars), got {quote(value)}")


def check_headers(value: Any, where: str) -> dict[str, str]:
    """An ``extra_headers`` mapping, checked: header names and text values; a header that
    carries credentials (by its name or its value) must be ``os.environ/NAME``. Returns the
    headers that name a variable (header → variable), each registered for redaction."""
    if not isinstance(value, Mapping):
        got = type(value).__name__
        raise _fail(where, f"expected a mapping of header names to text, got {got}")
    named: dict[str, str] = {}
    for header, text in value.items():
        at = f"{where}.{header}"
        if not isinstance(header, str) or not header.strip():
            raise _fail(where, f"expected header names, got {header!r:.60}")
        env = _env_name(text)
        if env is not None:
            if not env:
                raise _fail(at, "expected os.environ/NAME with a variable name")
            named[header] = env
            register_secret_env(env)
            continue
        if not isinstance(text, str | int | float) or isinstance(text, bool):
            raise _fail(at, f"expected text, got {type(text).__name__}")
        if _SECRET_HEADER.search(header) or _SECRET_VALUE.search(str(text)):
            raise _fail(
                at,
                "write os.environ/NAME: credentials stay in the environment, never in files, "
                "on the command line or in the cache's records",
            )
    return named


def resolve_headers(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with every ``os.environ/NAME`` header value replaced by the variable's value,
    read now (at call time: never stored). ReasoningError naming the variable if unset."""
    out = dict(params)
    for param in HEADER_PARAMS:
        headers = out.get(param)
        if not isinstance(headers, Mapping):
            continue
        resolved = {}
        for header, text in headers.items():
            env = _env_name(text)
            if env is not None:
                value = os.environ.get(env)
                if value is None:
                    raise ReasoningError(f"{param}.{header}: environment variable {env} is not set")
                text = value
            resolved[header] = text
        out[param] = resolved
    return out


def _fail(where: str, message: str) -> InvalidArgument:
    return InvalidArgument(f"{where}: {message}")


def _env_name(value: Any) -> str | None:
    if isinstance(value, str) and value.startswith(ENV_PREFIX):
        return value[len(ENV_PREFIX) :].strip()
    return None


def entry_name(raw: Any, where: str, expected: str) -> str:
    """The ``model_name`` of one ``model_list`` entry (``--llm-config`` and ``--llm-router``
    alike), its keys checked: a name of our own kinds (``reference``…) is refused."""
    if not isinstance(raw, dict):
        raise _fail(where, "expected a mapping with model_name and litellm_params")
    unknown = sorted(set(raw) - {"model_name", "litellm_params", "model_info"}, key=str)
    if unknown:
        raise _fail(
            f"{where}.{unknown[0]}", "unknown key; expected model_name, litellm_params, model_info"
        )
    name = raw.get("model_name")
    if not isinstance(name, str) or not name.strip() or not _NAME.match(name):
        raise _fail(f"{where}.model_name", f"expected {expected}, got {quote(name)}")
    if name in RESERVED:
        raise _fail(f"{where}.model_name", f"{quote(name)} names a built-in model; choose another")
    return name


def _entry(raw: Any, where: str, seen: set[str]) -> ModelSpec:
    name = entry_name(raw, where, "a model name")
    if name in seen:
        raise _fail(
            f"{where}.model_name",
            f"duplicate {quote(name)} (load balancing is not supported: give each a distinct name)",
        )
    seen.add(name)
    lp = raw.get("litellm_params")
    if not isinstance(lp, dict):
        raise _fail(f"{where}.litellm_params", "expected a mapping with at least 'model'")
    model = lp.get("model")
    if not isinstance(model, str) or not model.strip():
        raise _fail(f"{where}.litellm_params.model", "missing; expected a LiteLLM model string")
    params: dict[str, Any] = {}
    env_params: dict[str, str] = {}
    api_base: str | None = None
    api_key_env: str | None = None
    timeout: float | None = None
    parallel: int | None = None
    for key, value in lp.items():
        at = f"{where}.litellm_params.{key}"
        if not isinstance(key, str):
            raise _fail(at, "expected a parameter name")
        env = _env_name(value)
        if key == "model" or key in _IGNORED:
            continue
        if key in _REFUSED:
            raise _fail(at, _REFUSED[key])
        if key == "api_key":
            if env is None:
                raise _fail(
                    at,
                    "write os.environ/NAME: keys stay in the environment, never in files "
                    "(a keyless local server needs no api_key)",
                )
            if not env:
                raise _fail(at, "expected os.environ/NAME with a variable name")
            api_key_env = env
            register_secret_env(env)
        elif key == "api_base":
            if env is not None:
                resolved = os.environ.get(env)
                if not resolved:
                    raise _fail(at, f"environment variable {env} is not set")
                value = resolved
            if not isinstance(value, str) or not value.startswith(("http://", "https://")):
                raise _fail(at, f"expected an http(s) URL, got {quote(value)}")
            api_base = value
        elif key == "timeout":
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise _fail(at, f"expected a positive number of seconds, got {quote(value)}")
            timeout = float(value)
        elif key == "max_parallel_requests":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise _fail(at, f"expected an integer >= 1, got {quote(value)}")
            parallel = value
        elif env is not None:
            if not env:
                raise _fail(at, "expected os.environ/NAME with a variable name")
            env_params[key] = env
            register_secret_env(env)  # read at call time; redacted like a key
        elif _SECRETISH.search(key):  # a string, or a mapping of credentials alike
            raise _fail(at, "write os.environ/NAME: secrets stay in the environment")
        else:
            if key in HEADER_PARAMS:
                check_headers(value, at)
            check_price(key, value, at, name)
            params[key] = value
    return ModelSpec(
        name=name,
        model=model.strip(),
        api_base=api_base,
        api_key_env=api_key_env,
        params=params,
        env_params=env_params,
        timeout_s=timeout,
        max_concurrency=parallel,
        where=where,
    )


def parse_model_list(data: Any, path: str) -> dict[str, ModelSpec]:
    """A parsed config file's models by alias; InvalidArgument (one line) on any problem."""
    if not isinstance(data, Mapping) or "model_list" not in data:
        raise _fail(path, "expected a mapping with a 'model_list' (LiteLLM's config format)")
    entries = data["model_list"]
    if not isinstance(entries, list) or not entries:
        raise _fail(f"{path}: model_list", "expected a non-empty list of models")
    seen: set[str] = set()
    specs = [_entry(raw, f"{path}: model_list[{i}]", seen) for i, raw in enumerate(entries)]
    return {s.name: s for s in specs}


def load_model_list(path: str | os.PathLike[str]) -> dict[str, ModelSpec]:
    """Read ``--llm-config``: LiteLLM's ``model_list`` YAML (JSON is YAML too)."""
    return parse_model_list(read_config(path, "a model list"), str(path))


def read_config(path: str | os.PathLike[str], what: str) -> Any:
    """A LiteLLM config file's YAML (``--llm-config``, ``--llm-router``), bounded in size;
    InvalidArgument with one line naming the file."""
    import yaml

    shown = str(path)
    try:
        # A regular file under the cap (a FIFO would hang the run, /dev/zero never end).
        text = read_text_input(path, MAX_CONFIG_BYTES, shown=shown, what=what)
    except InputRefused as exc:
        raise _fail(shown, exc.reason) from None
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise _fail(shown, f"YAML syntax error{at}") from None
