"""The kinds of model a run can name, in one registry (as inspect_ai's ``@modelapi``): each
kind is one :class:`ModelAPI` class — its capabilities (does it call a model, does it need the
embedded server, is it priced, can the Batch API answer it, where its reasoning text comes
back, how many calls it takes at once) and the factory of its client — registered with
``@modelapi("name")``. A provider quirk is one subclass and one registration.

A model named on the command line is resolved once per run (:func:`resolve`, honouring the
``--llm-config`` aliases and ``--llm-router`` groups) into a :class:`Model`: its kind, its
entry, its price. The plugin, the evaluator and the CLI ask that object, never the name."""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..core import Item, Reply
from ..errors import ReasoningError
from .base import (
    HOSTED_BUDGET,
    LOCAL_BUDGET,
    RESERVED,
    ChatRequest,
    ModelClient,
    RequestShape,
    TokenBudget,
)
from .endpoints import ModelSpec
from .litellm_client import CapabilityCache, LiteLLMClient, RetryPolicy, cost_usd
from .local import ALIAS
from .router import RouterClient, RouterGroup, RouterHandle

__all__ = [
    "KINDS",
    "ClientContext",
    "Model",
    "ModelAPI",
    "ReferenceClient",
    "TokenBudget",
    "model_kind",
    "modelapi",
    "price_of",
    "resolve",
]


@dataclass
class ClientContext:
    """What a kind builds a client from: the model as named and its entry (a ``--llm-config``
    ModelSpec or a ``--llm-router`` RouterGroup), the run's settings, and what the clients of
    one run share (LiteLLM's capabilities, one Router per file)."""

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
    # The tasks' own solvers (item → its reference reply), handed in by the evaluator: models
    # never import tasks.
    solve: Callable[[Item], str] | None = None


class ModelAPI:
    """One kind of model: what it can do, and how its client is built. Subclass it, set the
    capabilities that differ, override :meth:`client`, and register it with ``@modelapi``."""

    name: str = ""
    doc: str = ""
    # Its answers cost a model call: cached, counted against call budgets, prefetched, timed.
    calls_model: bool = True
    # The embedded llama.cpp server must run for it (started once, by ``open_run``).
    needs_local_server: bool = False
    # LiteLLM's bundled price map may know it by its name (cost columns of the report).
    priced: bool = False
    # The provider's Batch API can answer its requests (``--reasoning-batch``).
    batch: bool = False
    # Calls it takes at once, under --reasoning-concurrency; None: no limit of its own.
    max_concurrency: int | None = None
    # Named by an alias of a --llm-config model_list (its own model, endpoint, key, params).
    configured: bool = False
    # A model group of --llm-router: LiteLLM's Router picks a deployment per call.
    routed: bool = False
    # Model strings it answers for by their prefix (``"deepseek/"``), before plain LiteLLM.
    prefixes: tuple[str, ...] = ()
    # How its client fills in requests (see ``base.RequestShape``).
    asks_litellm: bool = False
    budget: TokenBudget | None = None
    budget_needs_known_model: bool = False
    # The reply's message fields its reasoning text comes back in, first found wins.
    reasoning_fields: tuple[str, ...] = ("reasoning_content",)

    @property
    def shape(self) -> RequestShape:
        return RequestShape(
            asks_litellm=self.asks_litellm,
            budget=self.budget,
            budget_needs_known_model=self.budget_needs_known_model,
            reasoning_fields=self.reasoning_fields,
        )

    def client(self, ctx: ClientContext) -> ModelClient:
        raise ReasoningError(f"{ctx.model!r} is not a language model: it makes no calls")

    def batch_client(self, client: ModelClient) -> LiteLLMClient | None:
        """The client the Batch API phase sends through, or None when this kind has none."""
        return client if self.batch and isinstance(client, LiteLLMClient) else None

    def __repr__(self) -> str:
        return f"<model kind {self.name}>"


# The registry: kind name → its one instance.
KINDS: dict[str, ModelAPI] = {}
A = TypeVar("A", bound=type[ModelAPI])


def modelapi(name: str) -> Callable[[A], A]:
    """Register a :class:`ModelAPI` subclass as the kind ``name`` (one line per kind)."""

    def register(cls: A) -> A:
        if name in KINDS:
            raise ValueError(f"model kind {name!r} is registered twice")
        api = cls()
        api.name = name
        KINDS[name] = api
        return cls

    return register


class ReferenceClient:
    """The reference as a client: it answers a request from its item by the task's own solver
    (``ClientContext.solve``), at once; nothing is sent, cached or paid."""

    api_base: str | None = None
    identity: str | None = None
    max_concurrency: int | None = None
    free_wait_s = 0.0

    def __init__(self, name: str, solve: Callable[[Item], str]) -> None:
        self.name = name
        self._solve = solve

    @property
    def model_id(self) -> str:
        return self.name

    def params_for(self, style: str, answer_chars: int) -> dict[str, Any]:
        return {}

    def set_by_user(self, name: str) -> bool:
        return False

    async def acomplete(self, request: ChatRequest) -> Reply:
        if request.item is None:
            return Reply(content=None, error="reference solver: no item to solve")
        try:
            return Reply(content=self._solve(request.item))
        except Exception as exc:  # a solver bug is that item's error, never the run's crash
            return Reply(content=None, error=f"reference solver: {exc}")

    async def aclose(self) -> None:
        return None


@modelapi("reference")
class ReferenceAPI(ModelAPI):
    doc = "the tasks' own independent solvers: no model, no cost, every gate passes"
    calls_model = False  # answered at once: no cache, no budget, no prefetch

    def client(self, ctx: ClientContext) -> ModelClient:
        if ctx.solve is None:
            raise ReasoningError(f"{ctx.model!r} is not a language model: it makes no calls")
        return ReferenceClient(ctx.model, ctx.solve)


@modelapi("local")
class LocalAPI(ModelAPI):
    doc = "the embedded llama.cpp server with the packaged GGUF model"
    needs_local_server = True
    max_concurrency = 1  # the embedded server has one slot
    budget = LOCAL_BUDGET

    def client(self, ctx: ClientContext) -> ModelClient:
        """Through LiteLLM, as an OpenAI-compatible endpoint."""
        if not ctx.local_url:
            raise ReasoningError("model 'local' requested but the local server is not running")
        return LiteLLMClient(
            f"openai/{ALIAS}",
            api_base=ctx.local_url,
            api_key="local",
            timeout_s=ctx.timeout_s,
            retry=RetryPolicy(attempts=ctx.attempts),
            max_concurrency=self.max_concurrency,
            default_params=dict(ctx.params),
            identity=ctx.local_identity,
            kind=self.shape,
            label=ctx.model,
        )


class _Hosted(ModelAPI):
    asks_litellm = True
    budget = HOSTED_BUDGET
    budget_needs_known_model = True


@modelapi("litellm")
class LiteLLMAPI(_Hosted):
    doc = "any LiteLLM model string (hosted, or an OpenAI-compatible endpoint)"
    priced = True
    batch = True

    def client(self, ctx: ClientContext) -> ModelClient:
        """A keyless OpenAI-compatible server (vLLM, llama.cpp) gets the placeholder key
        ``EMPTY`` when no OPENAI_API_KEY is set."""
        keyless = ctx.api_base and ctx.model.startswith("openai/")
        api_key = "EMPTY" if keyless and not os.environ.get("OPENAI_API_KEY") else None
        return LiteLLMClient(
            ctx.model,
            api_base=ctx.api_base,
            api_key=api_key,
            timeout_s=ctx.timeout_s,
            retry=RetryPolicy(attempts=ctx.attempts),
            default_params=dict(ctx.params),
            kind=self.shape,
            capability_cache=ctx.capabilities,
        )


@modelapi("configured")
class ConfiguredAPI(_Hosted):
    doc = (
        "an alias from --llm-config (a LiteLLM model_list entry): its own model string, "
        "endpoint, key and parameters"
    )
    configured = True
    batch = True
    # priced stays False: the price map knows the model behind the alias, not the alias

    def client(self, ctx: ClientContext) -> ModelClient:
        """An OpenAI-compatible endpoint without a key gets the placeholder ``EMPTY``, never
        the ambient OPENAI_API_KEY: a key goes only where the configuration sends it."""
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
            kind=self._shape_of(spec.model),
            label=ctx.model,
            env_params=spec.env_params,
            capability_cache=ctx.capabilities,
        )

    def _shape_of(self, model: str) -> RequestShape:
        """The requests of the kind that claims the model behind the alias (a provider
        quirk registered for its prefix reaches its aliases too)."""
        inner = model_kind(model)
        return inner.shape if inner.asks_litellm else self.shape


@modelapi("router")
class RouterAPI(_Hosted):
    doc = (
        "a model group of --llm-router: LiteLLM's Router spreads its calls over the group's "
        "deployments (rpm/tpm limits, fallbacks, cooldowns); the cache key is the group"
    )
    routed = True  # asks LiteLLM about the group's first model string
    # priced stays False: a group; which deployment (and price) answered varies

    def client(self, ctx: ClientContext) -> ModelClient:
        """One Router per file (fallbacks between its groups)."""
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
            kind=self.shape,
        )


def model_kind(model: str, aliases: Container[str] = ()) -> ModelAPI:
    """The kind of a model named on the command line: a built-in name, an alias of the run's
    --llm-config or a model group of its --llm-router (a mapping's value says which by its
    ``kind``), a model string a registered kind claims by prefix, or else plain LiteLLM."""
    if model in RESERVED:
        return KINDS[model]
    if model in aliases:
        spec = aliases[model] if isinstance(aliases, Mapping) else None
        return KINDS[getattr(spec, "kind", None) or "configured"]
    for api in KINDS.values():
        if api.prefixes and model.startswith(api.prefixes):
            return api
    return KINDS["litellm"]


@dataclass(frozen=True)
class Model:
    """A model as a run knows it, resolved once: its name, its kind and its entry."""

    name: str
    api: ModelAPI
    entry: ModelSpec | RouterGroup | None = None

    @property
    def calls_model(self) -> bool:
        return self.api.calls_model

    def price(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """What that many tokens cost by LiteLLM's bundled price map; None when its kind is
        not priced by name (litellm is imported only for a priced one)."""
        if not self.api.priced:
            return None
        return cost_usd(self.name, prompt_tokens, completion_tokens)

    def unpriced(self) -> bool:
        """Whether its calls have no price in dollars: neither LiteLLM's map nor its entry
        (``input_cost_per_token`` and ``output_cost_per_token``) prices them. ``reference``
        and ``local`` cost nothing."""
        if not self.api.calls_model or self.api.needs_local_server:
            return False
        if self.entry is not None and self.entry.has_prices:
            return False
        names = list(self.entry.models) if self.entry is not None else [self.name]
        return any(cost_usd(name, 1000, 1000) is None for name in names)

    def client(self, ctx: ClientContext) -> ModelClient:
        return self.api.client(ctx)


def resolve(model: str, aliases: Mapping[str, ModelSpec | RouterGroup] | None = None) -> Model:
    """``model`` as a run names it, with the run's ``--llm-config``/``--llm-router`` entries."""
    aliases = aliases or {}
    return Model(model, model_kind(model, aliases), aliases.get(model))


def price_of(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The price of a model named in results files, where no ``--llm-config`` is known (an
    alias is then a plain name; LiteLLM's map prices it only if it knows that name)."""
    return resolve(model).price(prompt_tokens, completion_tokens)
