"""The kinds of model a run can name, as one table of capabilities: the plugin, the evaluator
and the report ask this table instead of comparing model names."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KINDS", "ModelKind", "model_kind"]


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
    ),
    "litellm": ModelKind(
        "litellm",
        calls_model=True,
        needs_local_server=False,
        priced=True,
        doc="any LiteLLM model string (hosted, or an OpenAI-compatible endpoint)",
    ),
}


def model_kind(model: str) -> ModelKind:
    """The kind of a model named on the command line (anything unknown goes to LiteLLM)."""
    return KINDS.get(model, KINDS["litellm"])
