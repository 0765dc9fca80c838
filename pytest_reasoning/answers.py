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
    "lenient_answer",
    "normalise_label",
    "parse_number",
    "relative_error",
    "repeating",
    "strip_think",
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


def repeating(text: str) -> bool:
    """Whether a reply cut off at its token limit was going round in a loop, as small models
    decoding greedily do (SmolLM2-135M writes ``The answer is 1.`` until the limit): its
    last quarter (32 characters at least) occurred earlier, or half of its lines (8 or more)
    repeat an earlier line. A higher limit only makes such a reply longer."""
    text = text.strip()
    if len(text) < 64:
        return False
    tail = text[-max(32, len(text) // 4) :]
    if text.find(tail) < len(text) - len(tail):
        return True
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return len(lines) >= 8 and 2 * (len(lines) - len(set(lines))) >= len(lines)


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


# Reasoning models that write their thoughts into the reply (DeepSeek-R1, Qwen3, QwQ without a
# reasoning parser) wrap them in <think>…</think>; R1's chat template opens the block in the
# prompt, so a reply may hold only the closing tag.
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.I)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.I)


def strip_think(text: str) -> tuple[str, str | None]:
    """The reply without its reasoning, and what was found: ``(text, None)`` without think
    tags, ``(answer, "closed")`` when every block closed, ``(text, "unclosed")`` when a block
    never closed (the model ran out of room mid-thought: there is no answer to extract)."""
    closes = list(_THINK_CLOSE.finditer(text))
    opens = list(_THINK_OPEN.finditer(text))
    if not closes and not opens:
        return text, None
    if opens and (not closes or opens[-1].start() > closes[-1].start()):
        return text, "unclosed"
    # Everything up to the last closing tag is reasoning (an opening tag may be in the prompt).
    return text[closes[-1].end() :].strip(), "closed"


_BOXED = re.compile(r"\\boxed\s*\{")
_ANSWER_IS = re.compile(
    r"(?:final answer|the answer)\s*(?:is|:|=)\s*:?\s*(.+?)\s*(?:\.\s|\.?$|\n)",
    re.I | re.M,
)
_LATEX = [
    (re.compile(r"\\d?frac\{([^{}]*)\}\{([^{}]*)\}"), r"\1/\2"),
    (re.compile(r"\\(?:text|mathrm|textbf|mathbf)\{([^{}]*)\}"), r"\1"),
]


def _balanced(text: str, start: int) -> str | None:
    """The text inside the braces opened just before ``start``; None if they never close."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i]
    return None


def lenient_answer(text: str) -> tuple[str, str] | None:
    """The answer of a reply that ignored the ``<<<…>>>`` format but answered the way frontier
    models do: the last ``\\boxed{…}``, else the last "the answer is …" / "final answer: …".
    Returns ``(answer, how)`` with ``how`` in ``boxed``, ``answer-is``; None if neither."""
    boxed = [b for m in _BOXED.finditer(text) if (b := _balanced(text, m.end())) is not None]
    if boxed:
        found, how = boxed[-1], "boxed"
    else:
        said = _ANSWER_IS.findall(text)
        if not said:
            return None
        found, how = said[-1], "answer-is"
    for pattern, repl in _LATEX:
        found = pattern.sub(repl, found)
    found = found.strip().strip("*`$ ").strip()
    return (found, how) if found else None
