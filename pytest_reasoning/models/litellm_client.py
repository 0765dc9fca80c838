"""Model calls through LiteLLM over HTTP, with our own retry policy and timeout.

``litellm`` is imported lazily (it costs seconds) with the local cost map forced, so that it
never reaches for the internet; the OpenAI SDK's own retries are turned off (``max_retries=0``)
so that every retry is ours: counted, bounded, jittered and honouring ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..core import Reply
from ..errors import ReasoningError
from .base import ChatRequest, redact

__all__ = [
    "COMPROMISED_LITELLM",
    "LiteLLMClient",
    "RetryPolicy",
    "check_litellm_version",
    "cost_usd",
    "import_litellm",
]

# Releases published by an attacker (supply-chain compromise): never import them.
COMPROMISED_LITELLM = ("1.82.7", "1.82.8", "1.107.*")

_NO_RETRY_STATUS = {400, 401, 403, 404, 422}
# Longest reply kept (characters): answers are short, and a runaway or hostile endpoint must
# not fill the cache, the results file and memory. Longer replies are errors, not retried.
MAX_RESPONSE_CHARS = 1_000_000


def check_litellm_version(version: str) -> None:
    """Refuse a compromised litellm release (one-line ReasoningError)."""
    for bad in COMPROMISED_LITELLM:
        if version == bad or (bad.endswith(".*") and version.startswith(bad[:-1])):
            raise ReasoningError(
                f"litellm {version} is a compromised release ({bad}); install the pinned "
                "litellm==1.106.2 (pip install -e .) and rotate any keys it could have seen"
            )


def import_litellm() -> ModuleType:
    from importlib.metadata import PackageNotFoundError, version

    # Checked from the package metadata BEFORE the import: a malicious release does its harm
    # when imported.
    try:
        check_litellm_version(version("litellm"))
    except PackageNotFoundError:
        raise ReasoningError("litellm is not installed (pip install -e .)") from None
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """What a call cost by LiteLLM's bundled price map (offline); None for unpriced models
    (local servers, ``reference``, custom endpoints)."""
    litellm = import_litellm()
    try:
        prompt, completion = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception:  # LiteLLM raises several types for an unknown model
        return None
    return float(prompt) + float(completion)


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, capped; ``Retry-After`` wins when given."""

    attempts: int = 5
    base_s: float = 0.5
    cap_s: float = 30.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.cap_s)
        return rng.uniform(0, min(self.cap_s, self.base_s * 2**attempt))


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def _retry_after(exc: BaseException) -> float | None:
    headers: Any = getattr(exc, "headers", None) or getattr(exc, "litellm_response_headers", None)
    if not headers:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except AttributeError:
        return None
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


class LiteLLMClient:
    """One model string (+ api_base) through ``litellm.acompletion``."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        max_concurrency: int | None = None,
        default_params: dict[str, Any] | None = None,
        identity: str | None = None,
    ) -> None:
        self.name = model
        self.api_base = api_base
        self.identity = identity
        self.default_params = {"temperature": 0, **(default_params or {})}
        # Only ever a placeholder for keyless local servers; real keys come from the
        # environment through LiteLLM's own conventions and are never stored here.
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.max_concurrency = max_concurrency
        self._rng = random.Random()  # jitter only: never influences what is asked or scored
        self._litellm: ModuleType | None = None

    def _lib(self) -> ModuleType:
        if self._litellm is None:
            self._litellm = import_litellm()
        return self._litellm

    async def _call_once(self, request: ChatRequest) -> Reply:
        lib = self._lib()
        kwargs: dict[str, Any] = dict(request.params)
        if request.api_base:
            kwargs["api_base"] = request.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        started = time.perf_counter()
        resp = await lib.acompletion(
            model=request.model,
            messages=[{"role": r, "content": c} for r, c in request.messages],
            timeout=self.timeout_s,
            max_retries=0,
            num_retries=0,
            **kwargs,
        )
        latency = time.perf_counter() - started
        content = resp.choices[0].message.content if resp.choices else None
        if not content:
            raise _EmptyReply("endpoint returned an empty completion")
        if len(content) > MAX_RESPONSE_CHARS:
            raise _TooLarge(
                f"response too large: {len(content):,} characters (limit {MAX_RESPONSE_CHARS:,})"
            )
        usage = getattr(resp, "usage", None)
        return Reply(
            content=content,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            latency_s=latency,
        )

    async def acomplete(self, request: ChatRequest) -> Reply:
        last = ""
        for attempt in range(self.retry.attempts):
            try:
                return await self._call_once(request)
            except asyncio.CancelledError:
                raise
            except _TooLarge as exc:
                return Reply(content=None, error=f"{exc} (not retried)")
            except Exception as exc:
                status = _status(exc)
                last = redact(f"{type(exc).__name__}: {exc}".splitlines()[0][:300])
                if status in _NO_RETRY_STATUS:
                    return Reply(content=None, error=f"{last} (HTTP {status}, not retried)")
                if attempt + 1 < self.retry.attempts:
                    await asyncio.sleep(self.retry.delay(attempt, _retry_after(exc), self._rng))
        return Reply(content=None, error=f"{last} (after {self.retry.attempts} attempts)")

    async def aclose(self) -> None:
        return None


class _TooLarge(RuntimeError):
    """A reply over MAX_RESPONSE_CHARS."""


class _EmptyReply(RuntimeError):
    """A 200 with no content: malformed, so retried like a 5xx."""
