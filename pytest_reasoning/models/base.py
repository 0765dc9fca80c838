"""The model-client protocol and the request value it takes."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from ..core import Reply, canonical_json, sha256_text
from ..errors import printable

__all__ = [
    "MAX_REASONING_CHARS",
    "MAX_RESPONSE_CHARS",
    "MAX_STORED_REASONING_CHARS",
    "ChatRequest",
    "ModelClient",
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


_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.I)
_BEARER = re.compile(r"(?i)(bearer\s+|api[_-]?key[\"'=:\s]+)[^\s\"',}]+")
_SK = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")
# Environment variables a model configuration names as keys (``os.environ/NAME``), whatever
# they are called: their values are secrets too.
_SECRET_NAMES: set[str] = set()
MAX_ERROR_CHARS = 300


def register_secret_env(name: str) -> None:
    """Treat the value of environment variable ``name`` as a secret in :func:`redact`."""
    _SECRET_NAMES.add(name)


def secret_env_names() -> tuple[str, ...]:
    """The names (never the values) :func:`register_secret_env` was given."""
    return tuple(sorted(_SECRET_NAMES))


def redact(text: str) -> str:
    """Remove secrets from a message: env values named like keys (or named as keys by a model
    configuration), bearer tokens, ``sk-…``.

    HTTP client exceptions can echo request headers; nothing derived from one may reach the
    cache, the results file, a report or a log line unredacted.
    """
    return redactor()(text)


def redactor() -> Callable[[str], str]:
    """:func:`redact` with the environment's secrets read once, for many texts (a report's
    every sample)."""
    secrets = [
        value
        for name, value in os.environ.items()
        if len(value) >= 8 and (_SECRET_ENV.search(name) or name in _SECRET_NAMES)
    ]

    def scrub(text: str) -> str:
        for value in secrets:
            if value in text:
                text = text.replace(value, "***")
        text = _BEARER.sub(lambda m: m.group(1) + "***", text)
        return _SK.sub("sk-***", text)

    return scrub


def error_text(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """One line of an error message, redacted FIRST and then cut: cutting first could leave a
    key's prefix that no longer matches the secret (a 401 echoing the key past the cut).
    What a server wrote is shown, never obeyed: its escape sequences and bidi controls as
    visible symbols (``errors.printable``)."""
    clean = redact(text)
    first = next((ln for ln in clean.splitlines() if ln.strip()), "")
    line = printable(" ".join(first.split()))
    return line if len(line) <= limit else line[: limit - 1] + "…"
