"""The model-client protocol and the request value it takes."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from ..core import Item, Reply, canonical_json, sha256_text
from ..errors import printable
from ..redaction import redact, redactor, register_secret_env, secret_env_names

__all__ = [
    "HOSTED_BUDGET",
    "LOCAL_BUDGET",
    "MAX_REASONING_CHARS",
    "MAX_RESPONSE_CHARS",
    "MAX_STORED_REASONING_CHARS",
    "RESERVED",
    "ChatRequest",
    "ModelClient",
    "RequestShape",
    "TokenBudget",
    "clip_reasoning",
    "error_text",
    "normalise_api_base",
    "redact",
    "redactor",
    "register_secret_env",
    "secret_env_names",
]


# Longest reply kept (characters), from an endpoint or a cache alike: answers are short, and a
# runaway or hostile reply must not fill the cache, the results file and the report.
MAX_RESPONSE_CHARS = 1_000_000
# Longest reasoning kept (characters; reasoning_content, see clip_reasoning): enough to see
# how a model read the problem and set out, while a 10,000-sample run keeps at most 80 MB of
# reasoning in its results file, not the gigabyte a reasoning model's whole traces can be.
MAX_REASONING_CHARS = 8_000
# A kept reasoning text is at most this long: the first MAX_REASONING_CHARS and the marker.
MAX_STORED_REASONING_CHARS = MAX_REASONING_CHARS + 40


def clip_reasoning(text: str) -> str:
    """``text`` cut to its first MAX_REASONING_CHARS characters, the cut marked at the end
    (``… [clipped 12,345 characters]``); shorter text as it is."""
    if len(text) <= MAX_REASONING_CHARS:
        return text
    return f"{text[:MAX_REASONING_CHARS]}… [clipped {len(text) - MAX_REASONING_CHARS:,} characters]"


def normalise_api_base(url: str | None) -> str:
    """Lower-case scheme and host, no trailing slash, ``localhost`` → ``127.0.0.1``.

    Two spellings of one server share cache entries; two servers never do.
    """
    if not url:
        return ""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if host == "localhost":
        host = "127.0.0.1"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), "", ""))


@dataclass(frozen=True)
class ChatRequest:
    """Everything that determines a model's answer (and so the cache key)."""

    model: str
    messages: tuple[tuple[str, str], ...]
    params: dict[str, Any] = field(default_factory=dict)
    api_base: str | None = None
    identity: str | None = None  # stable endpoint identity when api_base is not (ephemeral)
    repeat: int = 0  # the k-th sample of the same prompt (suite key ``repeats``)
    # The item asked, for a client that answers from it rather than from the prompt (the
    # reference's solvers); never part of the key, never sent.
    item: Item | None = field(default=None, compare=False, repr=False)

    @cached_property
    def key(self) -> str:
        """The cache key; computed once (it hashes every message). The first sample of a
        prompt keeps the key it had before repeats existed, so earlier answers still count."""
        fields: dict[str, Any] = {
            "v": 1,
            "model": self.model,
            "api_base": self.identity or normalise_api_base(self.api_base),
            "messages": [list(m) for m in self.messages],
            "params": self.params,
        }
        if self.repeat:
            fields["repeat"] = self.repeat
        return sha256_text(canonical_json(fields))


# Model names a model_list may not take: they name built-in kinds (``kinds.KINDS``).
RESERVED = ("reference", "local")


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


# What hosted models get unless told otherwise: a direct answer fits in 1024 tokens, worked
# reasoning in 4096; reasoning models get 32768 (OpenAI advises reserving at least 25,000 for
# reasoning and answer), each clamped to the model's own max_output_tokens.
HOSTED_BUDGET = TokenBudget(short=1024, long=4096, reasoning=32768)
# SmolLM2-135M on two CPU cores generates 40-90 tokens/s: enough for an answer, not a novel.
LOCAL_BUDGET = TokenBudget(short=256, long=1024, reasoning=1024)


@dataclass(frozen=True)
class RequestShape:
    """How a LiteLLM client fills in a request: what its provider kind (``kinds.ModelAPI``)
    says, and what a client built on its own (a test's, a notebook's) gets: a hosted model's."""

    # Parameters are checked against LiteLLM's model map before they are sent (reasoning
    # models get no temperature they would reject, and a reasoning budget).
    asks_litellm: bool = True
    # Default max_tokens; None: the server's own default.
    budget: TokenBudget | None = HOSTED_BUDGET
    # The budget applies only to models LiteLLM's map knows: an unknown model behind an
    # OpenAI-compatible server (vLLM) rejects prompt + max_tokens beyond its context window,
    # and such servers default to the remaining context anyway.
    budget_needs_known_model: bool = True
    # The reply's message fields the reasoning text may come back in, first found wins.
    reasoning_fields: tuple[str, ...] = ("reasoning_content",)


class ModelClient(Protocol):
    """Answers one request; never raises for endpoint failures (``Reply.error`` instead)."""

    name: str
    api_base: str | None
    identity: str | None  # cache identity when api_base is ephemeral (the local server)
    max_concurrency: int | None
    # Seconds a call may wait on refusals that sent nothing (a Router's cooldown): a claim on
    # its prompt must outlive them.
    free_wait_s: float

    @property
    def model_id(self) -> str:
        """The model precisely, for results rows (never a key)."""
        ...

    def params_for(self, style: str, answer_chars: int) -> dict[str, Any]:
        """The generation parameters of one request (part of its cache key)."""
        ...

    def set_by_user(self, name: str) -> bool:
        """Whether ``params_for``'s parameter ``name`` is the user's (``--llm-param``, a
        configuration entry's), not a default of ours (a truncation's remedy says which)."""
        ...

    async def acomplete(self, request: ChatRequest) -> Reply: ...

    async def aclose(self) -> None: ...


MAX_ERROR_CHARS = 300


def error_text(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """One line of an error message, redacted FIRST and then cut: cutting first could leave a
    key's prefix that no longer matches the secret (a 401 echoing the key past the cut).
    What a server wrote is shown, never obeyed: its escape sequences and bidi controls as
    visible symbols (``errors.printable``)."""
    clean = redact(text)
    first = next((ln for ln in clean.splitlines() if ln.strip()), "")
    line = printable(" ".join(first.split()))
    return line if len(line) <= limit else line[: limit - 1] + "…"
