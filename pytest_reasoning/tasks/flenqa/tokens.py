"""Token counts with the GPT-4 tokenizer (cl100k_base), offline.

tiktoken would download the BPE file on first use; LiteLLM ships it, so we point tiktoken's
cache at LiteLLM's copy, found without importing litellm (that import costs seconds).
"""

from __future__ import annotations

import importlib.util
import os
import threading
from functools import cache
from typing import Any

from ...errors import ReasoningError

__all__ = ["count", "encoder"]

_LOCK = threading.Lock()


@cache
def encoder() -> Any:
    """The cl100k_base encoding (loaded once per process, ~0.3 s)."""
    import tiktoken

    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        raise ReasoningError("litellm is not installed: its bundled cl100k_base file is needed")
    bundled = os.path.join(os.path.dirname(spec.origin), "litellm_core_utils", "tokenizers")
    with _LOCK:  # the variable is read during get_encoding only; restore it for everyone else
        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = bundled
        try:
            return tiktoken.get_encoding("cl100k_base")
        finally:
            if saved is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = saved


def count(text: str) -> int:
    return len(encoder().encode_ordinary(text))
