"""Each model kind's factory: how a client is built for a model of that kind (as inspect_ai's
``@modelapi`` providers do), from the model as named, its ``--llm-config`` entry or
``--llm-router`` group, and the run's settings. The evaluator asks ``build_client`` and never
looks at which kind it got."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ReasoningError
from .base import ModelClient
from .endpoints import ModelSpec
from .kinds import KINDS, ModelKind
from .litellm_client import CapabilityCache, LiteLLMClient, RetryPolicy
from .local import ALIAS
from .router import RouterClient, RouterGroup, RouterHandle

__all__ = ["FACTORIES", "ClientContext", "build_client"]


@dataclass
class ClientContext:
    """What a kind's factory builds a client from: the model as named and its entry (a
    ``--llm-config`` ModelSpec or a ``--llm-router`` RouterGroup), the run's settings, and
    what the clients of one run share (LiteLLM's capabilities, one Router per file)."""

    model: str
    entry: Any = None
    api_base: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    timeout_s: float = 120.0
    attempts: int = 5
    local_url: str | None = None
    local_identity: str | None = None
    capabilities: CapabilityCache | None = None
    routers: dict[str, Any] = field(default_factory=dict)


def _local(ctx: ClientContext) -> ModelClient:
    """The embedded llama.cpp server, through LiteLLM as an OpenAI-compatible endpoint."""
    if not ctx.local_url:
        raise ReasoningError("model 'local' requested but the local server is not running")
    return LiteLLMClient(
        f"openai/{ALIAS}",
        api_base=ctx.local_url,
        api_key="local",
        timeout_s=ctx.timeout_s,
        retry=RetryPolicy(attempts=ctx.attempts),
        max_concurrency=1,
        default_params=dict(ctx.params),
        identity=ctx.local_identity,
        kind=KINDS["local"],
        label=ctx.model,
    )


def _litellm(ctx: ClientContext) -> ModelClient:
    """Any LiteLLM model string; a keyless OpenAI-compatible server (vLLM, llama.cpp) gets
    the placeholder key ``EMPTY`` when no OPENAI_API_KEY is set."""
    keyless = ctx.api_base and ctx.model.startswith("openai/")
    api_key = "EMPTY" if keyless and not os.environ.get("OPENAI_API_KEY") else None
    return LiteLLMClient(
        ctx.model,
        api_base=ctx.api_base,
        api_key=api_key,
        timeout_s=ctx.timeout_s,
        retry=RetryPolicy(attempts=ctx.attempts),
        default_params=dict(ctx.params),
        kind=KINDS["litellm"],
        capability_cache=ctx.capabilities,
    )


def _configured(ctx: ClientContext) -> ModelClient:
    """A ``--llm-config`` alias: its own model, endpoint, key and parameters. An
    OpenAI-compatible endpoint without a key gets the placeholder ``EMPTY``, never the
    ambient OPENAI_API_KEY: a key goes only where the configuration sends it."""
    spec = ctx.entry
    assert isinstance(spec, ModelSpec)
    keyless = spec.api_base and not spec.api_key_env and spec.model.startswith("openai/")
    return LiteLLMClient(
        spec.model,
        api_base=spec.api_base,
        api_key="EMPTY" if keyless else None,
        api_key_env=spec.api_key_env,
        timeout_s=spec.timeout_s or ctx.timeout_s,
        retry=RetryPolicy(attempts=ctx.attempts),
        max_concurrency=spec.max_concurrency,
        # The run's --llm-param values, then the entry's own (it knows its model).
        default_params={**ctx.params, **spec.params},
        kind=KINDS["configured"],
        label=ctx.model,
        env_params=spec.env_params,
        capability_cache=ctx.capabilities,
    )


def _routed(ctx: ClientContext) -> ModelClient:
    """A ``--llm-router`` model group; one Router per file (fallbacks between its groups)."""
    group = ctx.entry
    assert isinstance(group, RouterGroup)
    handle = ctx.routers.get(group.file.path)
    if handle is None:
        handle = ctx.routers[group.file.path] = RouterHandle(group.file)
    return RouterClient(
        group,
        handle,
        timeout_s=ctx.timeout_s,
        retry=RetryPolicy(attempts=ctx.attempts),
        default_params=dict(ctx.params),
        capability_cache=ctx.capabilities,
    )


# Kind name → its factory (``reference`` has none: it calls no model).
FACTORIES: dict[str, Callable[[ClientContext], ModelClient]] = {
    "local": _local,
    "litellm": _litellm,
    "configured": _configured,
    "router": _routed,
}


def build_client(kind: ModelKind, ctx: ClientContext) -> ModelClient:
    factory = FACTORIES.get(kind.name)
    if factory is None:
        raise ReasoningError(f"{ctx.model!r} is not a language model: it makes no calls")
    return factory(ctx)
