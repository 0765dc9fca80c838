"""Checks of the plugin's option values that need more than a type and a minimum: generation
parameters, the API base URL, the sample count, text that must be UTF-8. Imported by
``RunOptions.from_config`` only (so a pytest run without ``--llm`` never loads it); each check
raises one line: InvalidArgument for a parameter, pytest.UsageError for a flag."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from ..errors import InvalidArgument, quote

__all__ = ["NUMERIC_PARAMS", "check_api_base", "check_llm_param", "check_samples", "check_text"]

# Generation parameters LiteLLM passes on as numbers: a value that is not one would fail every
# call (per item, after the run has started), so it fails here, once. (name → integer?)
NUMERIC_PARAMS: dict[str, bool] = {
    "temperature": False,
    "top_p": False,
    "presence_penalty": False,
    "frequency_penalty": False,
    "repetition_penalty": False,
    "min_p": False,
    "max_tokens": True,
    "max_completion_tokens": True,
    "n": True,
    "seed": True,
    "top_k": True,
    "top_logprobs": True,
}
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


def check_llm_param(key: str, value: Any) -> None:
    """One ``--llm-param``: a name, a value a JSON request can carry (text, a finite number,
    true/false, null, or lists and mappings of those), a number where LiteLLM expects one.
    Raises InvalidArgument naming the parameter."""
    if not _PARAM_NAME.fullmatch(key):
        raise InvalidArgument(f"{quote(key, 60)} is not a parameter name")
    problem = _not_json(value)
    if problem:
        raise InvalidArgument(f"{key}: {problem}")
    integer = NUMERIC_PARAMS.get(key)
    if integer is None:
        return
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or (integer and not isinstance(value, int)):
        kind = "an integer" if integer else "a number"
        raise InvalidArgument(f"{key}: expected {kind}, got {quote(value, 60)}")


def _not_json(value: Any, depth: int = 0) -> str | None:
    """Why ``value`` cannot go into a request as JSON, or None."""
    if depth > 16:
        return "nested too deep"
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"expected a finite number, got {value}"
    if isinstance(value, str):
        return None if _utf8(value) else "not valid UTF-8"
    if isinstance(value, list):
        return next((p for v in value if (p := _not_json(v, depth + 1))), None)
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return "mapping keys must be text"
        return next((p for v in value.values() if (p := _not_json(v, depth + 1))), None)
    return f"{type(value).__name__} {quote(value, 60)} is not a JSON value; quote it"


def check_api_base(url: str) -> None:
    """``--llm-api-base``: an http(s) URL with a host (and a valid port), parsed once here
    rather than failing every request."""
    from urllib.parse import urlsplit

    check_text("--llm-api-base", url)
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise pytest.UsageError(f"--llm-api-base: {quote(url, 100)}: {exc}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise pytest.UsageError(
            f"--llm-api-base: expected an http(s) URL such as http://127.0.0.1:8000/v1, "
            f"got {quote(url, 100)}"
        )


def check_samples(samples: int) -> None:
    from ..config import MAX_SAMPLES

    if samples > MAX_SAMPLES:
        raise pytest.UsageError(
            f"--reasoning-samples: expected at most {MAX_SAMPLES:,}, got {samples:,}"
        )


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(flag: str, value: str) -> None:
    """Bytes that are not UTF-8 on the command line arrive as lone surrogates, which no
    results file or report can hold: refuse them here."""
    if not _utf8(value):
        raise pytest.UsageError(f"{flag}: {ascii(value)[:100]} is not valid UTF-8")
