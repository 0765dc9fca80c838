"""A run's budget over its batches (``models/batch.py``): what each batch billed, added to the
run's spend (``budget.Spend``) line by line as the endpoint reported it, and what the batches
not yet collected can still cost at most, so that a batch holds only what the budget can pay
for. The estimates use LiteLLM's token counter and batch prices, through the module the batch
runner hands in (litellm is imported by the client module only)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..budget import Budget, Spend
from .base import ChatRequest

__all__ = ["BatchPurse", "Bill", "batch_price", "is_count", "is_price", "most_tokens", "usage_of"]

Most = Callable[[ChatRequest], tuple[int, float]]  # the most a request can cost: tokens, $
_PRICES = ("input_cost_per_token", "output_cost_per_token")  # a --llm-config entry's own


@dataclass
class BatchPurse:
    """The run's budget over its batches. ``spend`` is the run's own: each batch's bill is
    added to it when the batch is collected, and the live calls that follow count against the
    same. ``held`` is the most the requests of batches not yet collected can still cost. A
    request is submitted only when its most, on top of both, stays within ``budget``."""

    budget: Budget = field(default_factory=Budget)
    spend: Spend = field(default_factory=Spend)
    held: dict[str, tuple[int, float]] = field(default_factory=dict)  # request key → most
    # model → (requests, their most tokens, their most dollars) its last try left unsubmitted
    refused: dict[str, tuple[int, int, float]] = field(default_factory=dict)

    def take(self, label: str, requests: Sequence[ChatRequest], most: Most) -> list[ChatRequest]:
        """The longest run of ``requests``, from the first, that the budget can pay for at
        their most (``most``); they are held until their batch is billed."""
        if not self.budget:
            return list(requests)
        tokens = sum(t for t, _ in self.held.values())
        usd = sum(u for _, u in self.held.values())
        taken: list[ChatRequest] = []
        for request in requests:
            t, u = most(request)
            if not self.budget.affords(self.spend, tokens + t, usd + u):
                break
            tokens, usd = tokens + t, usd + u
            self.held[request.key] = (t, u)
            taken.append(request)
        rest = [most(r) for r in requests[len(taken) :]]
        self.refused[label] = (len(rest), sum(t for t, _ in rest), sum(u for _, u in rest))
        return taken

    def hold(self, requests: Sequence[ChatRequest], most: Most) -> None:
        """Requests of a batch submitted before (by a run that stopped): in flight already."""
        if self.budget:
            for request in requests:
                self.held.setdefault(request.key, most(request))

    def bill(
        self, label: str, keys: set[str], calls: int, tokens: int, usd: float | None
    ) -> None:
        """A batch collected: what its lines billed replaces what its requests held."""
        for key in keys:
            self.held.pop(key, None)
        self.spend.add_billed(label, calls, tokens, usd)

    def refusal(self) -> str | None:
        """The budget line when requests were left unsubmitted, or None."""
        count = sum(n for n, _, _ in self.refused.values())
        if not count:
            return None
        costs = []
        if self.budget.usd is not None:
            costs.append(f"${sum(u for _, _, u in self.refused.values()):.4f}")
        if self.budget.tokens is not None:
            costs.append(f"{sum(t for _, t, _ in self.refused.values()):,} tokens")
        return (
            f"the budget {self.budget} was reached: {count} batch request(s) not submitted, "
            f"which could cost up to {' and '.join(costs)} more (at batch prices, with all "
            "the output each allows)"
        )


@dataclass
class Bill:
    """What a batch's lines billed: each line the endpoint ran (it has a response; an expired
    line has none) is a call, its usage the tokens billed."""

    calls: int = 0
    tokens: int = 0
    usd: float | None = None
    seen: set[str] = field(default_factory=set)

    def add(
        self,
        line: str,
        status: int | None,
        body: Any,
        price: Callable[[int, int], float | None],
    ) -> None:
        """A row of the output or error file: ``line`` its custom id, ``status`` the HTTP
        status the endpoint answered it with (None: never run), ``body`` that answer."""
        if status is None or line in self.seen:  # a line is one request, however reported
            return
        self.seen.add(line)
        self.calls += 1
        tokens = usage_of(body)
        if tokens is not None:
            self.tokens += sum(tokens)
            cost = price(*tokens)
            if cost is not None:
                self.usd = (self.usd or 0.0) + cost


def usage_of(body: Any) -> tuple[int, int] | None:
    """(prompt, completion) tokens a line's body reports, or None."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if is_count(prompt, zero=True) and is_count(completion, zero=True):
        return int(prompt or 0), int(completion or 0)
    return None


def is_count(value: Any, *, zero: bool = False) -> bool:
    """A token count: an int (not a bool), positive (or zero, where ``zero``)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= (0 if zero else 1)


def is_price(value: Any) -> bool:
    """A price per token: a finite number, not negative."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def most_tokens(
    lib: ModuleType, model: str, request: ChatRequest, known_limit: int | None
) -> tuple[int, int] | None:
    """The most tokens ``request`` can bill: its prompt's, counted offline by LiteLLM's
    token counter, and all the output it allows (``max_completion_tokens`` or ``max_tokens``,
    else ``known_limit``, the model's in LiteLLM's map; times ``n``). None when nothing bounds
    the output."""
    params = request.params
    limit = next(
        (v for k in ("max_completion_tokens", "max_tokens") if is_count(v := params.get(k))),
        known_limit,
    )
    if not limit:
        return None
    limit *= params["n"] if is_count(params.get("n")) else 1
    messages = [{"role": r, "content": c} for r, c in request.messages]
    try:
        prompt = int(lib.token_counter(model=model, messages=messages))
    except Exception:  # no tokenizer: a token is at least one byte
        prompt = sum(len(c.encode()) + 8 for _, c in request.messages)
    return prompt, int(limit)


def batch_price(
    lib: ModuleType,
    model: str,
    provider: str,
    request: ChatRequest,
    prompt: int,
    completion: int,
) -> float | None:
    """What ``prompt`` and ``completion`` tokens of ``request`` cost in a batch: the model's
    batch rates in LiteLLM's map, else half its ``--llm-config`` prices or its live ones
    (LiteLLM's own rule for batches); None when unpriced."""
    given = {k: request.params[k] for k in _PRICES if is_price(request.params.get(k))}
    try:
        usage = lib.Usage(
            prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
        )
        cost = sum(
            lib.cost_calculator.batch_cost_calculator(
                usage=usage, model=model, custom_llm_provider=provider, model_info=given or None
            )
        )
    except Exception:  # unpriced models (custom endpoints)
        return None
    return float(cost) if math.isfinite(cost) and cost > 0 else None
