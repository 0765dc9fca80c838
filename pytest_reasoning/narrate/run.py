"""The narrator's loop: for each problem, each chapter in order is prompted with its facts and
the story so far, validated, and retried with the failure named, up to a bound; a problem whose
chapter cannot pass is dropped, with the validator that stopped it counted.

Every call goes through the evaluator (the run's model configuration, retries, redaction, the
response cache), so a second run with the same arguments and cache makes no call and writes
the same bytes: prompts depend only on the problem and the replies before them, and what is
recorded (hashes, validator results, tokens from the replies) never on the run.
"""

from __future__ import annotations

import concurrent.futures
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import Item, Reply, sha256_text
from ..datasets import export_row, item_from_row
from ..errors import ReasoningError
from ..evaluate import Evaluator
from ..registry import get_task
from .checks import FAILURES, Verdict, inspect, parse_judge
from .plan import Plan, assemble, narrated_item, planner_for
from .prompts import chapter_prompt, clean_chapter, judge_prompt

__all__ = ["NarrateOptions", "Narration", "StoryResult", "Usage", "narrate_items"]


@dataclass(frozen=True)
class NarrateOptions:
    model: str  # the narrator (a LiteLLM model string, ``local``, or a --llm-config alias)
    judge: str | None = None  # who answers the fact-recall questions (default: the narrator)
    attempts: int = 3  # per chapter: the first and up to two retries
    stories_at_once: int = 4  # problems narrated concurrently (chapters are sequential)

    @property
    def judge_model(self) -> str:
        return self.judge or self.model


@dataclass
class Usage:
    """The replies a story used (cached or not: the same for every run with the cache)."""

    requests: int = 0
    cached: int = 0  # of those, answered from the cache (this run only; never recorded)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    priced: int = 0  # replies that carried a cost (LiteLLM's price map)

    def add(self, reply: Reply) -> None:
        self.requests += 1
        self.cached += reply.cached
        self.prompt_tokens += reply.prompt_tokens or 0
        self.completion_tokens += reply.completion_tokens or 0
        if reply.cost_usd is not None:
            self.cost_usd += reply.cost_usd
            self.priced += 1

    def merge(self, other: Usage) -> None:
        for name in ("requests", "cached", "prompt_tokens", "completion_tokens", "priced"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cost_usd += other.cost_usd


@dataclass
class StoryResult:
    """One problem's narration: the row written when kept, else why it was not."""

    item: Item  # the template item
    row: dict[str, Any] | None = None
    dropped: str | None = None  # the validator (``checks.FAILURES`` key) its last try failed
    chapter: str | None = None  # the chapter that could not pass
    error: str | None = None  # a call that failed after its retries (not a validator)
    verdicts: list[list[Verdict]] = field(default_factory=list)  # per chapter, per attempt
    usage: Usage = field(default_factory=Usage)

    @property
    def retries(self) -> int:
        return sum(len(v) - 1 for v in self.verdicts if v)


class _CallFailed(Exception):
    """A call failed after its retries: the story is not narrated this run."""


def _checked(model: str, reply: Reply, usage: Usage) -> Reply:
    """The reply, counted; an error that retrying cannot fix ends the run (its cause named),
    any other failed call ends this story's narration for this run."""
    if reply.error is not None or reply.content is None:
        if reply.error_kind in ("stop", "not_asked"):
            raise ReasoningError(f"--llm {model}: {reply.error} (infrastructure, not the model)")
        raise _CallFailed(reply.error or "no content")
    usage.add(reply)
    return reply


def _identity(evaluator: Evaluator, model: str) -> dict[str, str]:
    return {"model": model, "model_id": evaluator.model_id(model)}


def narrate_story(item: Item, evaluator: Evaluator, options: NarrateOptions) -> StoryResult:
    """Narrate one problem, chapter by chapter (see the module docstring)."""
    plan = planner_for(item.task).plan(item)
    result = StoryResult(item)
    texts: list[str] = []
    log: list[dict[str, Any]] = []
    try:
        for chapter in plan.chapters:
            if chapter.fixed:
                texts.append(chapter.fixed)
                continue
            text, attempts, verdicts = _chapter(plan, chapter.name, texts, evaluator, options,
                                                result.usage)  # fmt: skip
            result.verdicts.append(verdicts)
            log.append({"name": chapter.name, "attempts": attempts})
            if text is None:
                result.dropped = verdicts[-1].failures()[0]
                result.chapter = chapter.name
                return result
            texts.append(text)
    except _CallFailed as exc:
        result.error = str(exc)
        return result
    story, spans = assemble(plan, texts)
    told = narrated_item(item, story, spans)
    task = get_task(item.task)
    # The symbolic answer is the template's: Φ over the exported facts says so again.
    solved = task.solve(told)
    if solved != item.answer:
        raise ReasoningError(f"{item.id}: the solver reads {solved!r} after narration, gold is "
                             f"{item.answer!r} (a narrator bug)")  # fmt: skip
    narration = {
        "narrator": _identity(evaluator, options.model),
        "judge": _identity(evaluator, options.judge_model),
        "attempts_allowed": options.attempts,
        "template_prompt_sha256": item.prompt_sha256,
        "chapters": log,
        "retries": result.retries,
        "requests": result.usage.requests,
        "prompt_tokens": result.usage.prompt_tokens,
        "completion_tokens": result.usage.completion_tokens,
    }
    row = export_row(task, told, narration=narration)
    item_from_row(row, path=item.id)  # what is written reads back as an item
    result.row = row
    return result


def _chapter(
    plan: Plan,
    name: str,
    texts: Sequence[str],
    evaluator: Evaluator,
    options: NarrateOptions,
    usage: Usage,
) -> tuple[str | None, list[dict[str, Any]], list[Verdict]]:
    """One chapter's attempts: the accepted text (None when every attempt failed), the
    provenance of each attempt, and their verdicts."""
    chapter = next(c for c in plan.chapters if c.name == name)
    so_far, _ = assemble(plan, texts)
    failures: list[str] = []
    attempts: list[dict[str, Any]] = []
    verdicts: list[Verdict] = []
    for attempt in range(options.attempts):
        prompt = chapter_prompt(plan, chapter, so_far, failures, attempt + 1)
        # Each attempt its own sample (``repeat``): a retry whose prompt came out the same
        # is asked again, never answered from the cache with the draft it rejected.
        fut = evaluator.complete(options.model, [("user", prompt)], style="cot", repeat=attempt)
        reply = _checked(options.model, fut.result(), usage)
        content = reply.content or ""
        text = clean_chapter(content)
        verdict = inspect(text, chapter, plan, cut=reply.finish_reason == "length")
        if verdict.deterministic_ok:  # the paper's check: one yes/no question per fact
            judge = options.judge_model
            asked = [
                evaluator.complete(judge, [("user", judge_prompt(text, f.fact))],
                                   style="direct", answer_chars=3)
                for f in verdict.facts
            ]  # fmt: skip
            for fact, answer in zip(verdict.facts, asked, strict=True):
                fact.judge = parse_judge(_checked(judge, answer.result(), usage).content or "")
        verdicts.append(verdict)
        attempts.append(
            {"prompt_sha256": sha256_text(prompt), "reply_sha256": sha256_text(content),
             **verdict.to_dict()}
        )  # fmt: skip
        if verdict.ok:
            return text, attempts, verdicts
        failures = verdict.feedback()
    return None, attempts, verdicts


@dataclass
class Narration:
    """What a run did: counts for the summary, by story and by validator."""

    problems: int = 0
    kept: int = 0
    kept_first_try: int = 0
    errors: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    chapters: int = 0  # chapters accepted
    attempts: int = 0  # chapter attempts made
    failed: Counter[str] = field(default_factory=Counter)  # failed attempts, by validator
    questions: int = 0
    usage: Usage = field(default_factory=Usage)

    def add(self, result: StoryResult) -> None:
        self.problems += 1
        self.usage.merge(result.usage)
        for verdicts in result.verdicts:
            self.attempts += len(verdicts)
            self.chapters += bool(verdicts and verdicts[-1].ok)
            for v in verdicts:
                self.questions += sum(f.judge is not None for f in v.facts)
                self.failed.update(v.failures())
        if result.row is not None:
            self.kept += 1
            self.kept_first_try += result.retries == 0
        elif result.dropped is not None:
            self.dropped[result.dropped] += 1
        else:
            self.errors += 1

    def lines(self) -> list[str]:
        """The summary, one fact a line."""
        dropped = sum(self.dropped.values())
        why = ", ".join(f"{FAILURES[k]} {n}" for k, n in _ordered(self.dropped))
        out = [
            f"narrated {self.problems} problems: {self.kept} kept ({self.kept_first_try} "
            f"without a retry), {dropped} dropped" + (f" ({why})" if why else "")
            + (f", {self.errors} not finished (a call failed after its retries)"
               if self.errors else ""),
            f"chapters: {self.chapters} accepted in {self.attempts} attempts; "
            f"{self.questions} fact-recall questions asked",
        ]  # fmt: skip
        if self.failed:
            out.append("failed attempts by validator (an attempt can fail several):")
            out += [f"  {FAILURES[k]}: {n}" for k, n in _ordered(self.failed)]
        u = self.usage
        out.append(
            f"requests: {u.requests} ({u.cached} from the cache, {u.requests - u.cached} made "
            f"now); tokens: {u.prompt_tokens:,} prompt + {u.completion_tokens:,} completion"
        )
        return out


def _ordered(counts: Counter[str]) -> list[tuple[str, int]]:
    return [(k, counts[k]) for k in FAILURES if counts[k]]


def narrate_items(
    items: Iterable[Item],
    evaluator: Evaluator,
    options: NarrateOptions,
    *,
    on_story: Callable[[StoryResult], None] | None = None,
) -> Iterator[StoryResult]:
    """Narrate ``items`` (several at once), yielding results in the items' order."""
    if options.attempts < 1:
        raise ReasoningError("--attempts: must be >= 1")
    items = list(items)
    for item in items:
        planner_for(item.task)  # an unnarratable task fails before any call
    pool = concurrent.futures.ThreadPoolExecutor(
        max_workers=max(1, options.stories_at_once), thread_name_prefix="narrate"
    )
    try:
        futures = [pool.submit(narrate_story, item, evaluator, options) for item in items]
        for fut in futures:
            result = fut.result()
            if on_story is not None:
                on_story(result)
            yield result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
