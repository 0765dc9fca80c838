"""The narrator's two prompts, worded by us: a chapter (its scenario facts and the story so far,
as the paper's chaptering has it), and a yes/no question per fact (the paper's fact-recall
check). The marker lines are fixed: the project's test server reads them to act as a narrator.
"""

from __future__ import annotations

import re

from ..answers import strip_think
from .plan import Chapter, Plan

__all__ = [
    "BANNED_MARK",
    "FACTS_MARK",
    "JUDGE_MARK",
    "REJECTED_MARK",
    "chapter_prompt",
    "clean_chapter",
    "judge_prompt",
]

FACTS_MARK = "Facts this chapter must state:"
BANNED_MARK = "Never use these words:"
REJECTED_MARK = "Your previous draft of this chapter was rejected:"
JUDGE_MARK = "Does the chapter below state this fact?"


def chapter_prompt(
    plan: Plan, chapter: Chapter, so_far: str, failures: list[str], attempt: int = 1
) -> str:
    """The prompt for attempt ``attempt`` at a chapter; a retry names what was wrong with the
    last draft (``failures``). The draft itself is not quoted: small models copy it back."""
    lines = [
        f"You are writing {plan.genre}, one chapter at a time.",
        "",
        "The story so far:",
        "<<<",
        so_far,
        ">>>",
        "",
        f"Write the next chapter: {chapter.brief}",
        "",
        FACTS_MARK,
        *(f"- {f}" for f in chapter.facts),
        "",
        "State every one of these facts plainly, in any order and in your own words, and weave "
        "them into the scene with ordinary detail. Do not draw conclusions from them and do not "
        "hint at what they mean: that is for the reader.",
    ]
    if chapter.banned:
        lines += [f"{BANNED_MARK} " + ", ".join(chapter.banned)]
    lines += [
        "Use only these people's names: " + ", ".join(plan.people) + ". Add no other named "
        "people, places or organisations.",
    ]
    if chapter.outside:
        lines += ["Do not mention: " + ", ".join(chapter.outside) + "."]
    lines += [
        f"Write about {chapter.words} words of prose, in the past tense, in one to three "
        "paragraphs. Write only the chapter: no title, no notes, no list.",
    ]
    if failures:
        lines += ["", REJECTED_MARK, *(f"- {f}" for f in failures)]
        lines += [f"This is attempt {attempt}: write the whole chapter again, fixing this."]
    return "\n".join(lines)


def judge_prompt(chapter_text: str, fact: str) -> str:
    """The fact-recall question for one fact (answered yes or no)."""
    return "\n".join(
        [
            JUDGE_MARK,
            f"Fact: {fact}",
            "Chapter:",
            "<<<",
            chapter_text,
            ">>>",
            "Answer with one word, yes or no: does the chapter state the fact, in any wording?",
        ]
    )


_TITLE = re.compile(r"^\s*(?:#+\s.*|\**chapter\b[^\n]{0,60}|\*\*[^*\n]{1,60}\*\*)\s*$", re.I)
_FENCE = re.compile(r"^\s*```\w*\s*$")


def clean_chapter(reply: str) -> str:
    """The chapter a reply holds: reasoning (``<think>``), titles, code fences and the
    prompt's ``<<<``/``>>>`` markers removed, paragraphs joined by one blank line."""
    text, think = strip_think(reply)
    if think == "unclosed":  # cut off while thinking: there is no chapter
        return ""
    lines = [
        ln for ln in text.replace("\r\n", "\n").split("\n")
        if not _TITLE.match(ln) and not _FENCE.match(ln) and ln.strip() not in ("<<<", ">>>")
    ]  # fmt: skip
    paragraphs = re.split(r"\n\s*\n", "\n".join(lines))
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())
