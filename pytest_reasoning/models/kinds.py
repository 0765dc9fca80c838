"""The kinds of model a run can name, as one table of capabilities: the plugin, the evaluator
and the report ask this table instead of comparing model names. Each kind's client is built by
its factory in ``models.clients``."""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass

__all__ = ["KINDS", "ModelKind", "TokenBudget", "model_kind"]


@dataclass(frozen=True)
class TokenBudget:
    """Default ``max_tokens`` of a request, by the room its prompt style needs.

    ``direct`` asks for the answer alone; every other style (cot, fewshot, oneshot, cot+, …)
    asks the model to reason first. Models that reason before answering (LiteLLM's model map
    says ``supports_reasoning``) spend their hidden reasoning from the same budget.
    """

    short: int  # style "direct"
    long: int  # every other style
    reasoning: int  # a reasoning model, whatever the style

    def tokens(self, style: str, answer_chars: int, *, reasoning: bool) -> int:
        base = self.reasoning if reasoning else self.short if style == "direct" else self.long
        # A long gold answer (a zebra grid as JSON) needs room even asked directly: one token
        # per character of it, twice over, is ample for any spelling of it.
        return max(base, 2 * answer_chars)


@dataclass(frozen=True)
class ModelKind:
    name: str
    # Its answers cost a model call: cached, counted against call budgets, prefetched, timed.
    calls_model: bool
    # The embedded llama.cpp server must run for it (started once, by the controller).
    needs_local_server: bool
    # LiteLLM's bundled price map may know it (cost columns of the report).
    priced: bool
    doc: str
    # Parameters are checked against LiteLLM's model map before they are sent (reasoning
    # models get no temperature they would reject, and a reasoning budget).
    asks_litellm: bool = False
    # Default max_tokens; None: the server's own default.
    budget: TokenBudget | None = None
    # The budget applies only to models LiteLLM's map knows: an unknown model behind an
    # OpenAI-compatible server (vLLM) rejects prompt + max_tokens beyond its context window,
    # and such servers default to the remaining context anyway.
    budget_needs_known_model: bool = False
    # Named by an alias of a --llm-config model_list (its own model, endpoint, key, params).
    configured: bool = False
    # A model group of --llm-router: LiteLLM's Router picks a deployment per call.
    routed: bool = False
# What hosted models get unless told otherwise: a direct answer fits in 1024 tokens, worked
# reasoning in 4096; reasoning models get 32768 (OpenAI advises reserving at least 25,000 for
# reasoning and answer), each clamped to the model's own max_output_tokens.
HOSTED_BUDGET = TokenBudget(short=1024, long=4096, reasoning=32768)
# SmolLM2-135M on two CPU cores generates 40-90 tokens/s: enough for an answer, not a novel.
LOCAL_BUDGET = TokenBudget(short=256, long=1024, reasoning=1024)

KINDS: dict[str, ModelKind] = {
    "reference": ModelKind(
        "reference",
        calls_model=False,
        needs_local_server=False,
        priced=False,
        doc="the tasks' own independent solvers: no model, no cost, every gate passes",
    ),
    "local": ModelKind(
        "local",
        calls_model=True,
        needs_local_server=True,
        priced=False,
        doc="the embedded llama.cpp server with the packaged GGUF model",
        budget=LOCAL_BUDGET,
    ),
    "litellm": ModelKind(
        "litellm",
        calls_model=True,
        needs_local_server=False,
        priced=True,
        doc="any LiteLLM model string (hosted, or an OpenAI-compatible endpoint)",
        asks_litellm=True,
        budget=HOSTED_BUDGET,
        budget_needs_known_model=True,
    ),
    "configured": ModelKind(
        "configured",
        calls_model=True,
        needs_local_server=False,
        priced=False,  # an alias: the price map knows the model behind it, not the name
        doc="an alias from --llm-config (a LiteLLM model_list entry): its own model string, "
        "endpoint, key and parameters",
        asks_litellm=True,
        budget=HOSTED_BUDGET,
        budget_needs_known_model=True,
        configured=True,
    ),
    "router": ModelKind(
        "router",
        calls_model=True,
        needs_local_server=False,
        priced=False,  # a group: which deployment (and price) answered varies
        doc="a model group of --llm-router: LiteLLM's Router spreads its calls over the "
        "group's deployments (rpm/tpm limits, fallbacks, cooldowns); the cache key is the group",
        asks_litellm=True,  # about the group's first model string
        budget=HOSTED_BUDGET,
        budget_needs_known_model=True,
        routed=True,
    ),
}
# Names a model_list may not take: they name built-in kinds.
RESERVED = ("reference", "local")


def model_kind(model: str, aliases: Container[str] = ()) -> ModelKind:
    """The kind of a model named on the command line: a built-in name, an alias of the run's
    --llm-config or a model group of its --llm-router (a mapping's value says which by its
    ``kind``), or else any LiteLLM model string."""
    if model in RESERVED:
        return KINDS[model]
    if model in aliases:
        spec = aliases[model] if isinstance(aliases, Mapping) else None
        return KINDS[getattr(spec, "kind", None) or "configured"]
    return KINDS["litellm"]
