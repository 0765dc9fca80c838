"""Model calls through LiteLLM over HTTP, with our own retry policy and timeout.

``litellm`` is imported lazily (it costs seconds) with the local cost map forced, so that it
never reaches for the internet; the OpenAI SDK's own retries are turned off (``max_retries=0``)
so that every retry is ours: counted, bounded, jittered and honouring ``Retry-After``.

Before a model's first request we ask LiteLLM, offline, what the model accepts (its bundled
model map: ``supports_reasoning``, ``max_output_tokens``; and a dry run of its parameter
mapping): reasoning models that reject ``temperature=0`` never get it, and every model gets a
``max_tokens`` budget fit for the prompt style (``kinds.TokenBudget``). Errors that retrying
cannot fix (authentication, permission, bad request, unsupported parameter, unknown model,
a compromised litellm) are not retried; they are marked ``stop`` so that the evaluator makes
no further calls to that model.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import random
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..core import Reply
from ..errors import ReasoningError
from .base import (
    MAX_RESPONSE_CHARS,
    ChatRequest,
    RequestShape,
    clip_reasoning,
    error_text,
    normalise_api_base,
)
from .capabilities import Capabilities, CapabilityCache, asks_no_reasoning
from .endpoints import resolve_headers

__all__ = [
    "COMPROMISED_LITELLM",
    "Capabilities",
    "CapabilityCache",
    "LiteLLMClient",
    "RetryPolicy",
    "asks_no_reasoning",
    "capabilities",
    "check_litellm_version",
    "classify_error",
    "cost_usd",
    "import_litellm",
    "import_litellm_soon",
]

# Releases published by an attacker (supply-chain compromise): never import them. Compared
# as versions, so ``1.82.7.0``, ``1.82.7rc1`` or ``1.107`` are refused like ``1.82.7``.
COMPROMISED_LITELLM = ("1.82.7", "1.82.8", "1.107.*")

_NO_RETRY_STATUS = {400, 401, 403, 404, 422}


def _release(version: str) -> tuple[int, ...] | None:
    """The release numbers of a version string, trailing zeros dropped; None if unreadable."""
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:  # packaging comes with pytest and litellm; this is a fallback only
        m = re.match(r"^\s*v?(\d+(?:\.\d+)*)", version)
        if not m:
            return None
        numbers = tuple(int(p) for p in m.group(1).split("."))
    else:
        try:
            numbers = Version(version).release
        except InvalidVersion:
            return None
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers = numbers[:-1]
    return numbers


def check_litellm_version(version: str) -> None:
    """Refuse a compromised litellm release, however its version is spelt (one-line
    ReasoningError); an unreadable version is refused too."""
    release = _release(version)
    if release is None:
        raise ReasoningError(
            f"litellm {version!r}: not a version number; install the pinned litellm==1.106.2"
        )
    for bad in COMPROMISED_LITELLM:
        prefix = bad.endswith(".*")
        wanted = _release(bad[:-2] if prefix else bad) or ()
        if release == wanted or (prefix and release[: len(wanted)] == wanted):
            raise ReasoningError(
                f"litellm {version} is a compromised release ({bad}); install the pinned "
                "litellm==1.106.2 (pip install -e .) and rotate any keys it could have seen"
            )


def check_installed_litellm() -> None:
    """Check the installed litellm from its package metadata, without importing it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        check_litellm_version(version("litellm"))
    except PackageNotFoundError:
        raise ReasoningError("litellm is not installed (pip install -e .)") from None


def import_litellm() -> ModuleType:
    # Checked from the package metadata BEFORE the import: a malicious release does its harm
    # when imported.
    check_installed_litellm()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


def import_litellm_soon() -> threading.Thread:
    """Start importing litellm on a background thread, so that the first call (after
    collection) finds it imported or nearly so. Only after :func:`check_installed_litellm`
    has passed; a failure is left to the real import, which reports it where it happens."""

    def run() -> None:
        with contextlib.suppress(Exception):
            import_litellm()

    thread = threading.Thread(target=run, name="reasoning-import-litellm", daemon=True)
    thread.start()
    return thread


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


# -- what a model accepts ------------------------------------------------------------------------
def _thinking_on(given: Mapping[str, Any]) -> bool:
    thinking = given.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") not in (None, "disabled"):
        return True
    effort = given.get("reasoning_effort")
    return effort is not None and str(effort) not in ("none", "disable", "disabled")


def capabilities(model: str, given: Mapping[str, Any], api_base: str | None = None) -> Capabilities:
    """Ask LiteLLM (offline) what ``model`` accepts, given the parameters the user set."""
    lib = import_litellm()
    try:
        reasoning = bool(lib.supports_reasoning(model=model))
    except Exception:  # an unmapped model: not known to reason
        reasoning = False
    try:
        info = lib.get_model_info(model)
        known, max_out = True, info.get("max_output_tokens")
    except Exception:
        known, max_out = False, None
    # With thinking on, Anthropic accepts only temperature 1 (LiteLLM does not check it);
    # OpenAI's reasoning models reject temperature 0 (LiteLLM's dry run below says so).
    temperature_zero = not _thinking_on(given) and "temperature" not in given
    if temperature_zero:
        temperature_zero = _accepts(lib, model, api_base, {**given, "temperature": 0})
    return Capabilities(
        known=known,
        reasoning=reasoning,
        max_output_tokens=int(max_out) if isinstance(max_out, int) and max_out > 0 else None,
        temperature_zero=temperature_zero,
    )


def _accepts(lib: ModuleType, model: str, api_base: str | None, params: dict[str, Any]) -> bool:
    """A dry run of LiteLLM's parameter mapping (no request): False when it would raise
    UnsupportedParamsError for ``params``."""
    try:
        from litellm.utils import get_optional_params

        name, provider, _, _ = lib.get_llm_provider(model, api_base=api_base)
        accepted = set(inspect.signature(get_optional_params).parameters) - {"model", "kwargs"}
        get_optional_params(
            model=name,
            custom_llm_provider=provider,
            **{k: v for k, v in params.items() if k in accepted},
        )
    except lib.UnsupportedParamsError:
        return False
    except Exception:  # an unknown provider: the call itself will say so
        return True
    return True


# -- retries and errors --------------------------------------------------------------------------
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


# LiteLLM reports missing credentials of some providers as a 500 (InternalServerError).
_NO_CREDENTIALS = re.compile(
    r"missing credentials|api_key client option must be set|no api key|"
    r"missing [a-z ]*api key|invalid api key|incorrect api key",
    re.I,
)
# Exception names (LiteLLM's, the OpenAI SDK's) whose cause is the request itself, for this
# request only: the model may answer the next one.
_REQUEST_ONLY = ("ContextWindowExceededError", "ContentPolicyViolationError")
_STOP = (
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "UnsupportedParamsError",
)


def classify_error(exc: BaseException, *, answered_before: bool) -> str:
    """``stop`` (retrying cannot help, and the next request would fail alike), ``request``
    (not retried, this request only) or ``transient`` (retry)."""
    if isinstance(exc, ReasoningError):  # a compromised or missing litellm, a missing key
        return "stop"
    if isinstance(exc, _TooLarge):
        return "request"
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & set(_REQUEST_ONLY):
        return "request"
    if names & set(_STOP) or _NO_CREDENTIALS.search(str(exc)):
        return "stop"
    status = _status(exc)
    if status in (401, 403, 404):
        return "stop"
    if "BadRequestError" in names or "UnprocessableEntityError" in names or status in (400, 422):
        # Before any answer, a bad request is about the model's configuration (a parameter,
        # the model name): every request would fail alike. After answers, it is this one.
        return "request" if answered_before else "stop"
    return "transient"


def _message(exc: BaseException) -> str:
    if isinstance(exc, ReasoningError | _TooLarge):  # our own: complete sentences
        return error_text(str(exc))
    text = str(exc)
    name = type(exc).__name__
    if text.startswith("litellm."):  # LiteLLM names the exception itself
        text = text[len("litellm.") :]
    elif not text.startswith(name):
        text = f"{name}: {text}"
    # "AuthenticationError: AuthenticationError: OpenAIException - …": say the name once.
    text = re.sub(r"^(\w+): \1: ", r"\1: ", text)
    return error_text(text)


# -- the client ----------------------------------------------------------------------------------
def reply_from(
    resp: Any,
    latency_s: float,
    *,
    keep_reasoning: bool = True,
    reasoning_fields: tuple[str, ...] = ("reasoning_content",),
) -> Reply:
    """A chat completion (LiteLLM's ModelResponse, a live call's or a batch line's) as a Reply,
    checked: an empty reply raises ``_EmptyReply`` (malformed: retried), one over
    MAX_RESPONSE_CHARS ``_TooLarge`` (not retried). The reasoning sent apart
    (``reasoning_content``, where LiteLLM also puts a leading ``<think>`` block) is kept
    clipped (``clip_reasoning``) unless ``keep_reasoning`` is false (:func:`asks_no_reasoning`);
    its length is counted either way. ``reasoning_fields``: where the provider puts that text
    (its kind's ``reasoning_fields``), the first one present wins."""
    choice = resp.choices[0] if resp.choices else None
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    finish = getattr(choice, "finish_reason", None)
    reasoning_text = None
    for name in reasoning_fields:
        reasoning_text = getattr(message, name, None)
        if reasoning_text:
            break
    reasoning_chars = len(reasoning_text) if isinstance(reasoning_text, str) else None
    if not content:
        # A reasoning model cut off while thinking, or one that thought and never answered,
        # did reply: that is scored (truncated), not retried as an empty body.
        if finish != "length" and not reasoning_chars:
            raise _EmptyReply("endpoint returned an empty completion")
        content = ""
    if not isinstance(content, str):
        raise _EmptyReply(f"endpoint returned {type(content).__name__} content, not text")
    if len(content) > MAX_RESPONSE_CHARS:
        raise _TooLarge(
            f"response too large: {len(content):,} characters (limit {MAX_RESPONSE_CHARS:,})"
        )
    usage = getattr(resp, "usage", None)
    details = getattr(usage, "completion_tokens_details", None)
    reasoning_tokens = getattr(details, "reasoning_tokens", None)
    hidden = getattr(resp, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    prompt_tokens = getattr(usage, "prompt_tokens", None)
    completion_tokens = getattr(usage, "completion_tokens", None)
    return Reply(
        content=content,
        prompt_tokens=prompt_tokens if isinstance(prompt_tokens, int) else None,
        completion_tokens=completion_tokens if isinstance(completion_tokens, int) else None,
        latency_s=latency_s,
        finish_reason=str(finish) if finish is not None else None,
        reasoning_tokens=reasoning_tokens if isinstance(reasoning_tokens, int) else None,
        reasoning_chars=reasoning_chars or None,
        cost_usd=float(cost) if isinstance(cost, int | float) and cost > 0 else None,
        reasoning_text=(
            clip_reasoning(reasoning_text)
            if keep_reasoning and isinstance(reasoning_text, str) and reasoning_text
            else None
        ),
    )


class LiteLLMClient:
    """One model string (+ api_base, key, parameters) through ``litellm.acompletion``."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        max_concurrency: int | None = None,
        default_params: dict[str, Any] | None = None,
        identity: str | None = None,
        kind: RequestShape | None = None,
        label: str | None = None,
        env_params: Mapping[str, str] | None = None,
        capability_cache: CapabilityCache | None = None,
    ) -> None:
        self.name = model
        self.api_base = api_base
        self.identity = identity
        # How requests are filled in: the provider kind's shape (a hosted model's alone).
        self.kind: RequestShape = kind or RequestShape()
        self.label = label  # the alias or built-in name the run knows it by
        # The user's parameters (--llm-param, then the config entry's): every request's.
        self.given: dict[str, Any] = dict(default_params or {})
        # Only ever a placeholder for keyless local servers; real keys come from the
        # environment (LiteLLM's conventions, or the config's os.environ/NAME, read at call
        # time) and are never stored here.
        self._api_key = api_key
        self._api_key_env = api_key_env
        self._env_params = dict(env_params or {})
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.max_concurrency = max_concurrency
        self._rng = random.Random()  # jitter only: never influences what is asked or scored
        self._litellm: ModuleType | None = None
        self._caps: Capabilities | None = None
        self._capability_cache = capability_cache
        self.answered = 0  # successful replies (a later bad request is about that request)
        # The model string LiteLLM's map is asked about (a Router group: its first model).
        self.caps_model = model
        # Seconds per call this client may wait, spending no attempt, on refusals made before
        # any request was sent (a Router's own rpm limiter); part of the claim's expiry.
        self.free_wait_s = 0.0

    @property
    def model_id(self) -> str:
        where = self.identity or normalise_api_base(self.api_base)
        name = f"{self.label}={self.name}" if self.label and self.label != self.name else self.name
        return name + (f"@{where}" if where else "")

    def _lib(self) -> ModuleType:
        if self._litellm is None:
            self._litellm = import_litellm()
        return self._litellm

    @property
    def caps(self) -> Capabilities:
        if self._caps is None:
            if self.kind.asks_litellm:
                store = self._capability_cache or CapabilityCache(None)
                key = store.key(self.caps_model, self.api_base, self.given)
                self._caps = store.get(key)
                if self._caps is None:
                    self._caps = self._ask_capabilities()
                    store.put(key, self._caps)
            else:  # our own server: llama.cpp takes temperature 0 and any max_tokens
                self._caps = Capabilities(True, False, None, "temperature" not in self.given)
        return self._caps

    def _ask_capabilities(self) -> Capabilities:
        """Ask LiteLLM what this model accepts (a call process asks its child instead)."""
        return capabilities(self.caps_model, self.given, self.api_base)

    def params_for(self, style: str, answer_chars: int) -> dict[str, Any]:
        """Defaults the model accepts (``temperature=0`` where it is supported, a max_tokens
        budget for the style), under the user's parameters."""
        params: dict[str, Any] = {}
        budget = self.kind.budget
        caps = self.caps if (self.kind.asks_litellm or budget is not None) else None
        if caps is not None and caps.temperature_zero:
            params["temperature"] = 0
        if (
            budget is not None
            and caps is not None
            and not {"max_tokens", "max_completion_tokens"} & set(self.given)
            and (caps.known or not self.kind.budget_needs_known_model)
        ):
            tokens = budget.tokens(style, answer_chars, reasoning=caps.reasoning)
            thinking = self.given.get("thinking")
            if isinstance(thinking, Mapping) and isinstance(thinking.get("budget_tokens"), int):
                # Anthropic counts the thinking budget inside max_tokens.
                tokens = max(
                    tokens,
                    thinking["budget_tokens"] + budget.tokens(style, answer_chars, reasoning=False),
                )
            if caps.max_output_tokens:
                tokens = min(tokens, caps.max_output_tokens)
            params["max_tokens"] = tokens
        params.update(self.given)
        return params

    def set_by_user(self, name: str) -> bool:
        return name in self.given

    def _credentials(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self._api_key_env:
            key = os.environ.get(self._api_key_env)
            if not key:
                raise ReasoningError(
                    f"no key: environment variable {self._api_key_env} is not set "
                    f"(api_key: os.environ/{self._api_key_env})"
                )
            kwargs["api_key"] = key
        elif self._api_key:
            kwargs["api_key"] = self._api_key
        for param, env in self._env_params.items():
            value = os.environ.get(env)
            if value is None:
                raise ReasoningError(f"{param}: environment variable {env} is not set")
            kwargs[param] = value
        return kwargs

    def connection(self) -> dict[str, Any]:
        """Where and as whom to call (``api_base``, a key read from the environment now),
        for calls that are not chat requests (the batch API, models/batch.py)."""
        kwargs: dict[str, Any] = {"api_base": self.api_base} if self.api_base else {}
        kwargs.update(self._credentials())
        return kwargs

    def _request_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        # Header values naming a variable (os.environ/NAME) are read now, never stored.
        kwargs: dict[str, Any] = resolve_headers(request.params)
        if request.api_base:
            kwargs["api_base"] = request.api_base
        kwargs.update(self._credentials())
        return kwargs

    async def _send(self, lib: ModuleType, request: ChatRequest, kwargs: dict[str, Any]) -> Any:
        return await lib.acompletion(
            model=request.model,
            messages=[{"role": r, "content": c} for r, c in request.messages],
            timeout=self.timeout_s,
            max_retries=0,
            num_retries=0,
            **kwargs,
        )

    def _refused(self, exc: BaseException) -> float | None:
        """Seconds to wait, spending no attempt, when ``exc`` refused the call before any
        request was sent; None for everything else (see models/router.py)."""
        return None

    async def _call_once(self, request: ChatRequest) -> Reply:
        lib = self._lib()
        kwargs = self._request_kwargs(request)
        started = time.perf_counter()
        resp = await self._send(lib, request, kwargs)
        keep = not asks_no_reasoning(request.params)
        return reply_from(
            resp,
            time.perf_counter() - started,
            keep_reasoning=keep,
            reasoning_fields=self.kind.reasoning_fields,
        )

    async def acomplete(self, request: ChatRequest) -> Reply:
        last = ""
        attempt = 0
        waited = 0.0  # on refusals that sent nothing (free_wait_s at most)
        while attempt < self.retry.attempts:
            try:
                reply = await self._call_once(request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                free = self._refused(exc)
                if free is not None and waited + free <= self.free_wait_s:
                    waited += free
                    await asyncio.sleep(free)
                    continue
                attempt += 1
                kind = classify_error(exc, answered_before=self.answered > 0)
                last = _message(exc)
                status = _status(exc)
                http = f"HTTP {status}, " if status else ""
                if kind == "stop":
                    return Reply(
                        content=None,
                        error=f"{last} ({http}not retried; no further calls to this model)",
                        error_kind="stop",
                    )
                if kind == "request" or status in _NO_RETRY_STATUS:
                    return Reply(
                        content=None, error=f"{last} ({http}not retried)", error_kind="request"
                    )
                if attempt < self.retry.attempts:
                    await asyncio.sleep(self.retry.delay(attempt - 1, _retry_after(exc), self._rng))
            else:
                self.answered += 1
                return reply
        return Reply(
            content=None,
            error=f"{last} (after {self.retry.attempts} attempts)",
            error_kind="transient",
        )

    async def aclose(self) -> None:
        return None


class _TooLarge(RuntimeError):
    """A reply over MAX_RESPONSE_CHARS."""


class _EmptyReply(RuntimeError):
    """A 200 with no content: malformed, so retried like a 5xx."""
