"""A run's budget (``--reasoning-budget usd=5,tokens=2e6``) and its spend: what the calls made
now cost, in dollars (LiteLLM's price of each call, or a ``--llm-config`` entry's own prices)
and in tokens (prompt + completion; providers count reasoning tokens inside completion
tokens, so they are counted once). Answers from the cache cost nothing now. Pure data: the
controller adds each answered sample and stops the run from asking once a limit is reached."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from .core import Outcome
from .errors import InvalidArgument, quote

__all__ = ["Budget", "Spend"]

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
        if budget.usd is not None and self.total_usd >= budget.usd:
            return f"the budget usd={budget.usd:g} was reached (${self.total_usd:.4f} spent)"
        if budget.tokens is not None and self.total_tokens >= budget.tokens:
            return (
                f"the budget tokens={budget.tokens:,.0f} was reached "
                f"({self.total_tokens:,} tokens spent)"
            )
        return None

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
