"""Secrets kept out of everything the package writes: environment values named like keys (or
named as keys by a model configuration), bearer tokens, ``sk-…``. Below every room, so the
report scrubs what it shows without knowing the model clients."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

__all__ = ["redact", "redactor", "register_secret_env", "secret_env_names"]

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.I)
_BEARER = re.compile(r"(?i)(bearer\s+|api[_-]?key[\"'=:\s]+)[^\s\"',}]+")
_SK = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")
# Environment variables a model configuration names as keys (``os.environ/NAME``), whatever
# they are called: their values are secrets too.
_SECRET_NAMES: set[str] = set()


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
