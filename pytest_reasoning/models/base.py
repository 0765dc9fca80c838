"""The model-client protocol and the request value it takes."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from ..core import Reply, canonical_json, sha256_text

__all__ = ["ChatRequest", "ModelClient", "normalise_api_base", "redact"]


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

    @cached_property
    def key(self) -> str:
        """The cache key; computed once (it hashes every message)."""
        return sha256_text(
            canonical_json(
                {
                    "v": 1,
                    "model": self.model,
                    "api_base": self.identity or normalise_api_base(self.api_base),
                    "messages": [list(m) for m in self.messages],
                    "params": self.params,
                }
            )
        )


class ModelClient(Protocol):
    """Answers one request; never raises for endpoint failures (``Reply.error`` instead)."""

    name: str
    api_base: str | None
    identity: str | None  # cache identity when api_base is ephemeral (the local server)
    default_params: dict[str, Any]  # under the user's --llm-param values
    max_concurrency: int | None

    async def acomplete(self, request: ChatRequest) -> Reply: ...

    async def aclose(self) -> None: ...


_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.I)
_BEARER = re.compile(r"(?i)(bearer\s+|api[_-]?key[\"'=:\s]+)[^\s\"',}]+")
_SK = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")


def redact(text: str) -> str:
    """Remove secrets from a message: env values named like keys, bearer tokens, ``sk-…``.

    HTTP client exceptions can echo request headers; nothing derived from one may reach the
    cache, the results file, a report or a log line unredacted.
    """
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_ENV.search(name) and value in text:
            text = text.replace(value, "***")
    text = _BEARER.sub(lambda m: m.group(1) + "***", text)
    return _SK.sub("sk-***", text)
