"""What a model accepts, as LiteLLM's bundled map said (``Capabilities``), kept beside the
response cache (``CapabilityCache``) so that a warm rerun never imports litellm to ask again;
and whether a request's parameters turn reasoning off."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ..core import canonical_json, sha256_text
from ..errors import ReasoningError
from ..files import BadJSON, loads_bounded, read_input, write_output
from .base import normalise_api_base

__all__ = ["Capabilities", "CapabilityCache", "asks_no_reasoning"]


@dataclass(frozen=True)
class Capabilities:
    """What LiteLLM's bundled model map says about a model (offline)."""

    known: bool  # in the map
    reasoning: bool  # supports_reasoning: it thinks before answering
    max_output_tokens: int | None
    temperature_zero: bool  # a temperature=0 default would be accepted


class CapabilityCache:
    """What LiteLLM said about each model, kept as JSON beside the response cache: a warm
    rerun makes no call, and must not import litellm (seconds) only to ask again. Keyed by a
    SHA-256 of litellm's version, the model, its endpoint and the user's parameters (their
    values never reach the file: a header or a parameter may be sensitive); best effort (a
    missing, unreadable or invalid file or entry means asking LiteLLM)."""

    MAX_BYTES = 10_000_000  # about 100,000 entries

    def __init__(self, directory: str | os.PathLike[str] | None) -> None:
        self.path = Path(directory) / "capabilities.json" if directory else None
        self._data: dict[str, Any] | None = None

    @staticmethod
    def key(model: str, api_base: str | None, given: Mapping[str, Any]) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version("litellm")
        except PackageNotFoundError:
            installed = "-"
        return sha256_text(
            canonical_json([installed, model, normalise_api_base(api_base), dict(given)])
        )

    def _load(self) -> dict[str, Any]:
        if self._data is None:
            self._data = {}
            if self.path is not None and self.path.exists():
                with contextlib.suppress(ReasoningError, BadJSON):
                    loaded = loads_bounded(read_input(self.path, self.MAX_BYTES))
                    if isinstance(loaded, dict):
                        # Entries keyed by plain text (older versions wrote parameter values
                        # into the key) are dropped: the next write leaves only hashes.
                        self._data = {k: v for k, v in loaded.items() if _HASH.fullmatch(k)}
        return self._data

    def get(self, key: str) -> Capabilities | None:
        found = self._load().get(key)
        if not isinstance(found, dict) or set(found) != {f.name for f in fields(Capabilities)}:
            return None
        flags = (found["known"], found["reasoning"], found["temperature_zero"])
        limit = found["max_output_tokens"]
        if not all(isinstance(f, bool) for f in flags) or not (
            limit is None or (type(limit) is int and limit > 0)
        ):
            return None  # an entry no version wrote: ask LiteLLM again
        return Capabilities(**found)

    def put(self, key: str, caps: Capabilities) -> None:
        data = self._load()
        data[key] = asdict(caps)
        if self.path is None:
            return
        # Whole-file replace: concurrent workers may drop each other's entry (asked again
        # next time), never corrupt the file.
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with write_output(self.path) as fh:
                fh.write(json.dumps(data, sort_keys=True))


_HASH = re.compile(r"[0-9a-f]{64}")


_OFF = ("none", "disable", "disabled")


def asks_no_reasoning(params: Mapping[str, Any]) -> bool:
    """Whether a request's parameters turn reasoning off: ``reasoning_effort: none``,
    Anthropic's ``thinking: {type: disabled}``, or a chat template's ``enable_thinking:
    false`` (vLLM, SGLang: ``chat_template_kwargs``, also under ``extra_body``). Such a
    run stores no reasoning text, whatever the provider sends."""
    thinking = params.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") == "disabled":
        return True
    if str(params.get("reasoning_effort")) in _OFF:
        return True
    extra = params.get("extra_body")
    for holder in (params, extra if isinstance(extra, Mapping) else {}):
        template = holder.get("chat_template_kwargs")
        if isinstance(template, Mapping) and template.get("enable_thinking") is False:
            return True
    return False
