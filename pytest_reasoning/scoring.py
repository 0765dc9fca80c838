"""Scoring a reply into the results row (an ``Outcome``): errors stay errors, a truncated
reply is ``truncated``, the task's scorer reads the rest. Shared by a live run and ``recheck``."""

from __future__ import annotations

from typing import Any

from .answers import lenient_answer, repeating, strip_think
from .core import Item, Outcome, Reply, Score
from .models.base import error_text
from .registry import get_task, problem_key

__all__ = ["score_reply"]

# Failure modes that mean "no answer could be read" (the lenient reader may find one).
_UNREAD = ("no_answer", "format")


def score_reply(
    item: Item,
    model: str,
    reply: Reply,
    *,
    repeat: int = 0,
    model_id: str | None = None,
    lenient: bool = False,
) -> Outcome:
    """Turn a reply into the results row; errors stay errors, never wrong answers.

    Reasoning in ``<think>…</think>`` is removed before extraction; a reply cut off at its
    token limit (``finish_reason == "length"``) or inside an unclosed think block is the
    failure mode ``truncated``, never a correct answer, whatever it mentions.
    """
    common: dict[str, Any] = dict(
        item_id=item.id,
        model=model,
        task=item.task,
        level=item.level,
        seed=item.seed,
        prompt_sha256=item.prompt_sha256,
        gold=item.answer,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        latency_s=round(reply.latency_s, 6),
        cached=reply.cached,
        style=item.style,
        repeat=repeat,
        model_id=model_id,
        finish_reason=reply.finish_reason,
        reasoning_tokens=reply.reasoning_tokens,
        cost_usd=reply.cost_usd,
        problem=problem_key(item),  # issue 41: samples of one problem are one cluster
        reasoning_text=reply.reasoning_text,  # issue 42: clipped, None when turned off
    )
    # Every row carries its item's address, whatever the outcome: enough to rebuild the prompt
    # later (report drill-downs) and the item's knobs for every table (FLenQA's lengths).
    address = {"index": item.index, "style": item.style, "params": item.params}
    if reply.error is not None or reply.content is None:
        return Outcome(
            response=None,
            extracted=None,
            correct=None,
            failure_mode=None,
            error=error_text(reply.error or "no content", limit=1000),
            error_kind=reply.error_kind or "transient",
            extra={"address": address},
            **common,
        )
    text, think = strip_think(reply.content)
    reasoning = "separate" if reply.reasoning_chars else "tags" if think else None
    if reply.finish_reason == "length" or think == "unclosed" or (not text.strip() and reasoning):
        return Outcome(
            response=reply.content,
            extracted=None,
            correct=False,
            failure_mode="truncated",
            error=None,
            score=0.0,
            # A reply that was looping: the gate's message says a higher limit won't help.
            extra={"address": address, **({"repeating": True} if repeating(reply.content) else {})},
            reasoning=reasoning,
            **common,
        )
    task = get_task(item.task)
    try:
        s = task.score(item, text)
        extraction = "strict"
        if lenient and not s.correct and s.failure_mode in _UNREAD:
            found = lenient_answer(text)
            if found is not None:
                again = task.score(item, f"<<<{found[0]}>>>")
                if again.failure_mode not in _UNREAD:
                    s, extraction = again, f"lenient:{found[1]}"
        _check_score(s)
    except Exception as exc:  # a scorer bug must not lose the (cached) answer
        return Outcome(
            response=reply.content,
            extracted=None,
            correct=False,
            failure_mode="scorer_error",
            error=None,
            score=0.0,
            extra={"scorer_error": f"{type(exc).__name__}: {exc}"},
            reasoning=reasoning,
            **common,
        )
    return Outcome(
        response=reply.content,
        extracted=s.extracted,
        correct=s.correct,
        failure_mode=s.failure_mode,
        error=None,
        score=s.score,
        extra={**s.extra, "address": address},
        reasoning=reasoning,
        extraction=extraction,
        **common,
    )


def _check_score(s: Score) -> None:
    """A (third-party) scorer's Score as a results row needs it: every reader of the row (the
    sample report, ``gate``) refuses anything else, so it is the scorer's error here, with
    the row kept, rather than a row that never reaches the results file."""
    if not isinstance(s, Score):
        raise TypeError(f"score() returned {type(s).__name__}, not a Score")
    if not isinstance(s.correct, bool):
        raise TypeError(f"Score.correct is {s.correct!r:.40}, not True or False")
    value = s.score
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise ValueError(f"Score.value is {value!r:.40}, not a number from 0 to 1")
    for name in ("extracted", "failure_mode"):
        if not isinstance(getattr(s, name), str | None):
            raise TypeError(f"Score.{name} is {getattr(s, name)!r:.40}, not text or None")
