"""Damaged JSON for the fuzz tests of every reader of rows and replies (the cache, dataset
files): a real row with a field replaced, dropped or added, then a few characters changed."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


ROW_FIELDS = ["id", "task", "level", "prompt", "answer", "problem", "seed", "index", "params",
           "style", "system", "meta", "content", "prompt_tokens", "latency_s", "error"]  # fmt: skip


TOKENS = ["[", "]", "{", "}", ",", ":", '"', "\ufeff", "NaN", "Infinity", "1e999", "9" * 5000,
           "null", "\\ud800", "\x00", "\n", "[" * 500]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> str:
    """A real row (or reply) with a field replaced, dropped or added, then maybe a few
    characters of its JSON text changed."""
    row = dict(base)
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(ROW_FIELDS))
        if draw(st.booleans()):
            row[key] = draw(JSON_VALUES)
        else:
            row.pop(key, None)
    text = json.dumps(row)
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at + draw(st.integers(0, 3)) :]
    return text
