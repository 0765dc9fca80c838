"""What the test server (``server.py``) answers: its behaviours by model name, and the chat
completions it builds from them (the oracle, reasoning models' habits, a narrator, hostile
text). Pure functions of the request; the server adds latency, faults and counting."""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from typing import Any

from ..tasks import hooks

__all__ = [
    "BEHAVIOURS",
    "chat_reply",
    "completion",
    "drifted",
    "hostile_answers",
    "narrator_reply",
    "oracle_answer",
]

BEHAVIOURS = {
    "oracle": "the correct answer, found by the tasks' independent solvers from the prompt "
    "(MuSR stories get <<<N/A>>>: their answers need commonsense the prompt leaves out)",
    "flaky-oracle": "like oracle, but the first request for each prompt fails with HTTP 500",
    "always-true": "<<<True>>> whatever the question",
    "echo": "the prompt, verbatim",
    "shallow:N": "like oracle on arithmetic DAGs of depth <= N and zebra grids of <= N houses, "
    "wrong beyond (a model whose difficulty frontier is known)",
    "constant:TEXT": "TEXT, verbatim",
    "fail-500": "HTTP 500 every time",
    "fail-429": "HTTP 429 with Retry-After: 0 every time",
    "garbage": "HTTP 200 with an HTML body",
    "empty": "HTTP 200 with empty content",
    # Reasoning models and their providers' habits (issue 19).
    "o1, o3, o3-mini, o4-mini, gpt-5*": "like OpenAI's reasoning models: HTTP 400 for a "
    "temperature other than 1 and for max_tokens (they take max_completion_tokens), else "
    "the oracle's answer with reasoning tokens in usage",
    "think": "the oracle's answer after a <think>…</think> block that mentions a wrong "
    "<<<…>>> answer (DeepSeek-R1, Qwen3 without a reasoning parser)",
    "think-noopen": "as think, without the opening tag (R1's chat template opens the block "
    "in the prompt)",
    "think-unclosed": "an unclosed <think> block that mentions the right <<<…>>> answer, "
    "finish_reason stop",
    "truncated": "the oracle's answer, then more text, cut off: finish_reason length",
    "loop": "one line repeated until cut off, finish_reason length (a small model decoding "
    "greedily: SmolLM2-135M's 'The answer is 1.' until its token limit)",
    "reasoning-content": "the oracle's answer, its reasoning in message.reasoning_content "
    "(vLLM's reasoning parser, DeepSeek's API; the server's `reasoning` text when set), "
    "reasoning tokens in usage",
    "boxed": "the oracle's answer as \\boxed{…} (strict extraction finds nothing)",
    "bad-key": "HTTP 401 whose message echoes the request's key after 200 characters",
    "refuse:TEXT": "HTTP 400 whose error message is TEXT percent-decoded (%1B is an escape): "
    "a hostile endpoint's error body",
    "coin": "the oracle's answer or <<<N/A>>>, at random (the server's seeded RNG): a model "
    "sampled at temperature 1, for repeats",
    "right:K/N": "the oracle's answer to the first K of every N requests for a prompt, "
    "<<<N/A>>> to the rest: with repeats N, every item right on K of them (a model that "
    "lost consistency, whatever the order the repeats arrive in)",
    # Hostile replies (docs/reliability.md): text a careless or malicious endpoint could send.
    "surrogate": 'like oracle, followed by a lone surrogate (the valid JSON string "\\ud800"), '
    "which no UTF-8 file, XML report or xdist channel can carry as is",
    "long:N": "like oracle, after N characters of padding (a long but allowed reply)",
    "hostile:K:PATH": "answer K of hostile_answers(PATH): Python code (for eval, for sympy's "
    "parse_expr, inside a list literal, ...) that would write PATH if a scorer ran it, in "
    "<answer> tags and in <<<...>>>",
    # A narrator for `pytest-reasoning narrate` (issue 23): canned chapters from the facts
    # its prompt lists, and honest answers to the fact-recall questions.
    "narrator": "each chapter states every fact its prompt lists, one sentence each; a "
    "fact-recall question is answered yes exactly when one sentence of the chapter holds "
    "every content word of the fact",
    "narrator-miss": "as narrator, but a chapter's first draft leaves its last fact out (the "
    "retry, which names the failure, states it)",
    "narrator-leak": "as narrator, but every draft also uses the first banned word its prompt "
    "lists",
    "narrator-stranger": "as narrator, but every draft also names a stranger (Zebulon Quimby)",
}
_NARRATORS = ("narrator", "narrator-miss", "narrator-leak", "narrator-stranger")
# OpenAI's reasoning models, by name (what LiteLLM sends for openai/o3-mini or openai/gpt-5).
_OPENAI_REASONING = re.compile(r"^(o[1-9](-mini|-pro)?|gpt-5.*)$")
_DELIMITED = re.compile(r"<<<(.*?)>>>", re.DOTALL)
_REASONING_TOKENS = 64
_REASONING_KINDS = (
    "think",
    "think-noopen",
    "think-unclosed",
    "truncated",
    "reasoning-content",
    "boxed",
)

def hostile_answers(path: str) -> list[str]:
    """Answers that are code writing ``path`` (with an API key, as the attack in issue 44):
    for ``eval``, inside a list literal (what ``binary_matrix`` evaluates), through ``exec``
    of a string, through a lambda, and through sympy's namespace (``parse_expr`` resolves
    ``Symbol`` there; its attributes lead to ``__import__``)."""
    p = repr(path)
    key = "__import__('os').environ.get('OPENAI_API_KEY', 'no key')"
    return [
        f"__import__('pathlib').Path({p}).write_text({key})",
        f"[[__import__('pathlib').Path({p}).write_text('x')]]",
        f"exec(\"open({p}, 'w').write('x')\")",
        f"(lambda: open({p}, 'w').write('x'))()",
        f"Symbol('x').__class__.__init__.__globals__['__builtins__']['open']({p}, 'w')",
    ]


def oracle_answer(prompt: str) -> str:
    """Solve a prompt of any task whose family can answer from the text alone; ``<<<N/A>>>``
    when none can. The registry says which task a prompt belongs to (the ``locate`` hook)."""
    return shallow_answer(prompt, None)


def shallow_answer(prompt: str, limit: int | None) -> str:
    """Right up to a size (the ``text_answer`` hook's ``max_size``): arithmetic DAGs of depth
    <= limit, zebra grids of <= limit houses; other tasks as the oracle."""
    from ..registry import task_for_prompt

    task = task_for_prompt(prompt)
    answer = hooks.text_answer(task, prompt, max_size=limit) if task is not None else None
    return "<<<N/A>>>" if answer is None else answer


def narrator_reply(behaviour: str, prompt: str) -> str:
    """A narrator's reply to a chapter prompt or a fact-recall question (``narrator*``)."""
    from ..narrate.prompts import BANNED_MARK, FACTS_MARK, JUDGE_MARK, REJECTED_MARK

    if prompt.startswith(JUDGE_MARK):
        fact = prompt.split("\nFact: ", 1)[1].split("\n", 1)[0]
        chapter = prompt.split("\n<<<\n", 1)[1].rsplit("\n>>>", 1)[0].lower()
        words = [w for w in re.findall(r"[a-z0-9']+", fact.lower()) if len(w) > 3]
        said = re.split(r"(?<=[.!?])\s+", chapter)
        return "Yes." if any(all(w in s for w in words) for s in said) else "No."
    lines = prompt.split("\n")
    start = lines.index(FACTS_MARK) + 1 if FACTS_MARK in lines else len(lines)
    facts = []
    for line in lines[start:]:
        if not line.startswith("- "):
            break
        facts.append(line[2:].rstrip("."))
    if behaviour == "narrator-miss" and REJECTED_MARK not in prompt:
        facts = facts[:-1]
    told = [f"{f}." for f in facts] + ["The afternoon went on quietly."]
    if behaviour == "narrator-leak":
        banned = next((ln for ln in lines if ln.startswith(BANNED_MARK)), "")
        word = banned.removeprefix(BANNED_MARK).split(",")[0].strip() or "answer"
        told.append(f"Everyone kept coming back to the {word}.")
    elif behaviour == "narrator-stranger":
        told.append("Zebulon Quimby dropped by for a while.")
    return " ".join(told)


def drifted(prompt: str, share: float) -> bool:
    """Whether the server's ``drift`` setting changes the oracle's answer to ``prompt``: the
    prompts whose SHA-256 falls in the first ``share`` of its range (the same prompts every
    run: a model name that now serves another model, for ``--reasoning-drift``)."""
    if share <= 0:
        return False
    return int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) < share * 2**32


# What a chat request gets: (HTTP status, a JSON object or raw HTML bytes, extra headers).
ChatReply = tuple[int, Any, dict[str, str]]


def chat_reply(
    model: str,
    prompt: str,
    body: dict[str, Any],
    *,
    bearer: str = "",
    heads: bool = True,
    first: bool = False,
    asked: int = 0,
    drift: float = 0.0,
    reasoning: str | None = None,
) -> ChatReply:
    """The behaviour ``model`` names (``BEHAVIOURS``), answering ``prompt``: shared by the
    chat endpoint and the batch runner (``testing/batches.py``). ``heads`` is the coin's
    toss; ``first`` says this prompt was never asked before (``flaky-oracle``); ``asked``,
    how many times it was asked before (``right:K/N``); ``drift``, the server's share of
    prompts whose oracle answer changed (:func:`drifted`); ``reasoning``, the text
    ``reasoning-content`` sends (None: a line of its own)."""
    if model == "fail-500":
        return 500, {"error": {"message": "injected failure", "type": "server_error"}}, {}
    if model == "fail-429":
        return 429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"}
    if model == "garbage":
        return 200, b"<html><body>Bad gateway</body></html>", {}
    if model == "flaky-oracle" and first:
        return 500, {"error": {"message": "flaky first attempt"}}, {}
    if model == "bad-key":
        message = (
            "Incorrect API key provided. You can find your API key in your account settings; "
            "keys are rotated every 90 days and a revoked key stops working at once. Check the "
            f"environment of the process that sent this request. You passed: {bearer}."
        )
        error = {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}
        return 401, {"error": error}, {}
    if model.startswith("refuse:"):
        message = urllib.parse.unquote(model.split(":", 1)[1])
        return 400, {"error": {"message": message, "type": "invalid_request_error"}}, {}
    if _OPENAI_REASONING.match(model):
        return _reasoning_model(model, prompt, body)
    if model in _REASONING_KINDS:
        return 200, _reasoning_habit(model, prompt, reasoning), {}
    if model in ("oracle", "flaky-oracle"):
        content = "<<<N/A>>>" if drifted(prompt, drift) else oracle_answer(prompt)
    elif model.startswith("shallow:"):
        content = shallow_answer(prompt, int(model.split(":", 1)[1]))
    elif model == "always-true":
        content = "<<<True>>>"
    elif model == "coin":
        content = oracle_answer(prompt) if heads else "<<<N/A>>>"
    elif model.startswith("right:"):
        k, _, every = model.split(":", 1)[1].partition("/")
        content = oracle_answer(prompt) if asked % int(every) < int(k) else "<<<N/A>>>"
    elif model == "echo":
        content = prompt
    elif model in _NARRATORS:
        content = narrator_reply(model, prompt)
    elif model.startswith("constant:"):
        content = model.split(":", 1)[1]
    elif model == "empty":
        content = ""
    elif model == "loop":
        return 200, completion(model, prompt, "The answer is 1.\n\n" * 16, "length"), {}
    elif model == "surrogate":
        content = oracle_answer(prompt) + " \ud800"
    elif model.startswith("hostile:"):
        index, path = model.split(":", 2)[1:]
        answer = hostile_answers(path)[int(index)]
        content = f"<answer>{answer}</answer> <<<{answer}>>>"
    elif model.startswith("long:"):
        content = "x" * int(model.split(":", 1)[1]) + " " + oracle_answer(prompt)
    else:
        return 404, {"error": {"message": f"unknown model {model}"}}, {}
    return 200, completion(model, prompt, content), {}


def _reasoning_model(model: str, prompt: str, body: dict[str, Any]) -> ChatReply:
    """OpenAI's o-series and gpt-5: what they refuse, and reasoning tokens in usage."""
    if body.get("temperature", 1) != 1:
        return _bad_request(
            "temperature",
            f"Unsupported value: 'temperature' does not support {body['temperature']} with "
            "this model. Only the default (1) value is supported.",
        )
    if "max_tokens" in body:
        return _bad_request(
            "max_tokens",
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
        )
    return 200, completion(model, prompt, oracle_answer(prompt), reasoning_tokens=128), {}


def _bad_request(param: str, message: str) -> ChatReply:
    error = {"message": message, "type": "invalid_request_error", "param": param}
    return 400, {"error": {**error, "code": "unsupported_parameter"}}, {}


def _reasoning_habit(model: str, prompt: str, reasoning: str | None) -> dict[str, Any]:
    right = oracle_answer(prompt)
    if model == "think":
        content = f"<think>A first guess: <<<-1>>>. No, work it out.</think>\n\n{right}"
    elif model == "think-noopen":
        content = f"A first guess: <<<-1>>>. No, work it out.</think>\n\n{right}"
    elif model == "think-unclosed":
        content = f"<think>Working it out, I would say {right} but let me check again"
    elif model == "truncated":
        return completion(model, prompt, f"{right} And to double-check, ", "length")
    elif model == "reasoning-content":
        return completion(
            model,
            prompt,
            right,
            reasoning="Worked out step by step." if reasoning is None else reasoning,
            reasoning_tokens=_REASONING_TOKENS,
        )
    else:  # boxed
        inner = _DELIMITED.findall(right)
        content = f"So the result is \\boxed{{{inner[-1] if inner else right}}}."
    return completion(model, prompt, content)


def completion(
    model: str,
    prompt: str,
    content: str,
    finish_reason: str = "stop",
    *,
    reasoning: str | None = None,
    reasoning_tokens: int | None = None,
) -> dict[str, Any]:
    """A chat.completion object (usage counted in words, like a tokenizer would roughly)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    tokens = len(content.split()) + (reasoning_tokens or 0)
    usage: dict[str, Any] = {
        "prompt_tokens": len(prompt.split()),
        "completion_tokens": tokens,
        "total_tokens": len(prompt.split()) + tokens,
    }
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
        "usage": usage,
    }
