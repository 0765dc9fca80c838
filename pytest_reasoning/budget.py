"""A run's budget (``--reasoning-budget usd=5,tokens=2e6``) and its spend: what the calls made
now cost, in dollars (LiteLLM's price of each call, or a ``--llm-config`` entry's own prices)
and in tokens (prompt + completion; providers count reasoning tokens inside completion
tokens, so they are counted once). Answers from the cache cost nothing now. The controller adds
each answered sample's row (``Spend``: the spend line); in each process that calls, a
``Meter`` admits every call against the budget and counts its cost the moment it arrives, so
no call starts once the budget is reached (issue 39)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from .core import Outcome, Reply
from .errors import InvalidArgument, quote

__all__ = ["Budget", "Meter", "Purse", "Spend", "Ticket"]

_UNITS = ("usd", "tokens")


@dataclass(frozen=True)
class Budget:
    usd: float | None = None
    tokens: float | None = None

    @classmethod
    def parse(cls, texts: Iterable[str]) -> Budget:
        """``usd=5``, ``tokens=2e6``, or both (``usd=5,tokens=2e6``, or the option given
        twice); InvalidArgument in one line otherwise."""
        limits: dict[str, float] = {}
        for text in texts:
            for part in str(text).split(","):
                name, sep, value = part.strip().partition("=")
                if not sep or name.strip().lower() not in _UNITS:
                    raise InvalidArgument(
                        f"expected usd=AMOUNT and/or tokens=COUNT (e.g. usd=5,tokens=2e6), "
                        f"got {quote(part.strip(), 60)}"
                    )
                try:
                    number = float(value)
                except ValueError:
                    number = math.nan
                if not math.isfinite(number) or number <= 0:
                    raise InvalidArgument(
                        f"{name.strip()}: expected a positive number, got {quote(value, 40)}"
                    )
                limits[name.strip().lower()] = number
        return cls(limits.get("usd"), limits.get("tokens"))

    def __bool__(self) -> bool:
        return self.usd is not None or self.tokens is not None

    def __str__(self) -> str:
        parts = []
        if self.usd is not None:
            parts.append(f"usd={self.usd:g}")
        if self.tokens is not None:
            parts.append(f"tokens={self.tokens:,.0f}")
        return ",".join(parts)

    def affords(self, spend: Spend, tokens: float, usd: float) -> bool:
        """Whether ``tokens`` and ``usd`` more, on top of ``spend``, stay within the budget
        (a batch is submitted only when the most its requests can cost does)."""
        if self.usd is not None and spend.total_usd + usd > self.usd:
            return False
        return self.tokens is None or spend.total_tokens + tokens <= self.tokens


@dataclass
class Spend:
    """What the calls made now cost, per model."""

    usd: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)

    def add(self, o: Outcome) -> None:
        if o.cached or o.error is not None:  # a failed call is not billed; the cache is free
            return
        self.calls[o.model] = self.calls.get(o.model, 0) + 1
        self.tokens[o.model] = (
            self.tokens.get(o.model, 0) + (o.prompt_tokens or 0) + (o.completion_tokens or 0)
        )
        if o.cost_usd is not None:
            self.usd[o.model] = self.usd.get(o.model, 0.0) + o.cost_usd

    def add_billed(self, model: str, calls: int, tokens: int, usd: float | None) -> None:
        """Calls billed together (a batch's lines, models/batch.py), counted as live ones."""
        self.calls[model] = self.calls.get(model, 0) + calls
        self.tokens[model] = self.tokens.get(model, 0) + tokens
        if usd is not None:
            self.usd[model] = self.usd.get(model, 0.0) + usd

    @property
    def total_usd(self) -> float:
        return sum(self.usd.values())

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())

    def reached(self, budget: Budget) -> str | None:
        """Why no more calls may be made (one line), or None."""
        return _reached(budget, self.total_tokens, self.total_usd)

    def line(self, budget: Budget | None = None) -> str | None:
        """``spent $0.4213 and 123,456 tokens on 120 calls (8% of usd=5)``, or None when no
        call was made."""
        calls = sum(self.calls.values())
        if not calls:
            return None
        money = f"${self.total_usd:.4f} and " if self.usd else ""
        text = f"spent {money}{self.total_tokens:,} tokens on {calls} call(s)"
        if budget:
            shares = []
            if budget.usd is not None:
                shares.append(f"{self.total_usd / budget.usd:.0%} of usd={budget.usd:g}")
            if budget.tokens is not None:
                shares.append(f"{self.total_tokens / budget.tokens:.0%} of tokens")
            text += f" ({', '.join(shares)})"
        return text


def _reached(budget: Budget, tokens: float, usd: float) -> str | None:
    """Which limit of ``budget`` the spend reached (one line, without the amount: the spend
    line says the final one), or None."""
    if budget.usd is not None and usd >= budget.usd:
        return f"the budget usd={budget.usd:g} was reached"
    if budget.tokens is not None and tokens >= budget.tokens:
        return f"the budget tokens={budget.tokens:,.0f} was reached"
    return None


class Purse(Protocol):
    """What every process of a run spent, shared (the plugin's ``Signals``)."""

    def spent(self) -> tuple[float, float]:
        """(tokens, dollars) spent so far by every process."""
        ...

    def pay(self, tokens: int, usd: float) -> None: ...

    def stopped(self) -> str | None: ...

    def stop(self, reason: str) -> None: ...


@dataclass(frozen=True)
class Ticket:
    """A meter's word on one call: go (``refused`` None, its expected cost reserved until the
    reply arrives), or why not."""

    model: str
    refused: str | None = None
    tokens: float = 0.0
    usd: float = 0.0


class Meter:
    """Admission control for a run's budget in one process that calls (on its event loop).

    A call goes while the budget, less what every process has spent and what this process's
    calls in flight are expected to cost (this model's mean cost so far), has room for its
    own expected cost — or when none is in flight here; otherwise it waits for one to come
    back. A reply's cost counts the moment it arrives, and none starts once the budget is
    reached: it is overrun by at most the calls in flight then (the concurrency, per
    process). Reserving a call's maximum cost instead would let a small budget ask one call
    at a time, or none (``max_tokens`` is often far above an answer's length)."""

    def __init__(self, budget: Budget, purse: Purse) -> None:
        self.budget = budget
        self.purse = purse
        self._mean: dict[str, tuple[int, int, float]] = {}  # model → (calls, tokens, usd)
        self._open = 0  # calls admitted here, not back yet
        self._reserved = (0.0, 0.0)
        self._back: asyncio.Event | None = None

    def _over(self) -> str | None:
        return self.purse.stopped() or _reached(self.budget, *self.purse.spent())

    async def admit(self, model: str) -> Ticket:
        while True:
            why = self._over()
            if why is not None:
                return Ticket(model, why)
            calls, tokens, usd = self._mean.get(model, (0, 0, 0.0))
            want = (tokens / calls, usd / calls) if calls else (0.0, 0.0)
            spent = self.purse.spent()
            fits = all(
                limit is None or spent[i] + self._reserved[i] + want[i] <= limit
                for i, limit in enumerate((self.budget.tokens, self.budget.usd))
            )
            if fits or not self._open:
                self._open += 1
                self._reserved = (self._reserved[0] + want[0], self._reserved[1] + want[1])
                return Ticket(model, None, *want)
            if self._back is None:
                self._back = asyncio.Event()
            self._back.clear()
            await self._back.wait()  # a call of this process comes back: look again

    def done(self, ticket: Ticket, reply: Reply | None) -> None:
        """The admitted call came back (``reply`` None: it raised)."""
        if ticket.refused is not None:
            return
        self._open -= 1
        self._reserved = (self._reserved[0] - ticket.tokens, self._reserved[1] - ticket.usd)
        if reply is not None and reply.error is None:
            tokens = (reply.prompt_tokens or 0) + (reply.completion_tokens or 0)
            usd = reply.cost_usd or 0.0
            calls, total, dollars = self._mean.get(ticket.model, (0, 0, 0.0))
            self._mean[ticket.model] = (calls + 1, total + tokens, dollars + usd)
            self.purse.pay(tokens, usd)
            why = _reached(self.budget, *self.purse.spent())
            if why is not None:
                self.purse.stop(why)  # every process stops asking
        if self._back is not None:
            self._back.set()
