"""Answer extraction and comparison: pure functions over the model's text.

Extraction looks at the response only, never at the prompt, and never raises: unparsable
text is a ``None`` (a failure mode for the scorer), not an exception.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = [
    "extract_delimited",
    "format_number",
    "normalise_label",
    "parse_number",
    "relative_error",
]

# SmolLM2-class models often close with two brackets (``<<<5>>``); we accept 2 or 3 closing
# brackets, and only exactly three opening ones so that a stray ``<<`` is not an answer.
_DELIMITED = re.compile(r"(?<!<)<<<(?!<)(.*?)>>>?", re.DOTALL)
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def extract_delimited(text: str) -> str | None:
    """The content of the LAST ``<<<…>>>`` in ``text``, stripped; ``None`` if there is none."""
    matches = _DELIMITED.findall(text)
    if not matches:
        return None
    return str(matches[-1]).strip()


def parse_number(text: str) -> float | None:
    """A number written by a model: ``12``, ``-3.5``, ``1,234``, ``1e-3``, ``7/4``; else None."""
    t = text.strip().rstrip(".").replace(",", "").replace(" ", "")
    t = t.replace("−", "-")
    if not t:
        return None
    if _NUMBER.match(t):
        value = float(t)
        return value if math.isfinite(value) else None
    if t.count("/") == 1:
        num, den = t.split("/")
        if _NUMBER.match(num) and _NUMBER.match(den):
            try:
                return float(Fraction(num) / Fraction(den))
            except (ZeroDivisionError, ValueError):
                return None
    return None


def relative_error(pred: float, gold: float, eps: float = 1e-8) -> float:
    """DyVal's ``|pred − gt| / (|gt| + ε)``."""
    return abs(pred - gold) / (abs(gold) + eps)


def normalise_label(text: str) -> str | None:
    """``True`` / ``False`` / ``N/A`` from common spellings; ``None`` otherwise."""
    t = text.strip().strip(".'\"` ").lower()
    if t in {"true", "t", "yes"}:
        return "True"
    if t in {"false", "f", "no"}:
        return "False"
    if t in {"n/a", "na", "n.a.", "unknown", "undetermined", "none"}:
        return "N/A"
    return None


def format_number(value: float | int | Fraction) -> str:
    """A gold number as text: integers exactly, others to 10 significant digits.

    Ten digits keep the rounding error (≤ 5e-10 relative) far below every tolerance we score
    with, and avoid float noise such as ``31.874999999999993``.
    """
    if isinstance(value, Fraction) and value.denominator == 1:
        return str(value.numerator)
    if isinstance(value, int):
        return str(value)
    f = float(value)
    if f.is_integer() and abs(f) < 1e15:
        return str(int(f))
    return f"{f:.10g}"
