"""Reasoning models over real HTTP through LiteLLM to the project's test server: the
parameters each model accepts, replies scored as what they are, reasoning sent apart kept,
clipped and cached."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_reasoning.core import Item, Outcome
from pytest_reasoning.evaluate import EvalConfig, Evaluator
from pytest_reasoning.models.base import MAX_REASONING_CHARS
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def arithmetic(index: int = 0) -> Item:
    return make_item(get_task("dyval.arithmetic"), "D1", 1, index)


def test_parameters_are_what_each_model_accepts() -> None:
    """Asks LiteLLM's bundled model map (offline; imports litellm once)."""
    from pytest_reasoning.models.litellm_client import LiteLLMClient

    def params(model: str, style: str = "direct", **given: Any) -> dict[str, Any]:
        return LiteLLMClient(model, default_params=given).params_for(style, 4)

    assert params("openai/o3-mini") == {"max_tokens": 32768}
    assert params("openai/gpt-5-mini", reasoning_effort="low") == {
        "max_tokens": 32768,
        "reasoning_effort": "low",
    }
    assert params("openai/gpt-4o-mini") == {"temperature": 0, "max_tokens": 1024}
    assert params("openai/gpt-4o-mini", "cot") == {"temperature": 0, "max_tokens": 4096}
    assert params("openai/my-vllm-model") == {"temperature": 0}  # the server's own limit
    thinking = {"type": "enabled", "budget_tokens": 40_000}
    claude = params("anthropic/claude-sonnet-4-20250514", thinking=thinking)
    assert "temperature" not in claude and 40_000 < claude["max_tokens"] <= 64_000


@pytest.mark.parametrize(
    ("params", "off"),
    [
        ({}, False),
        ({"reasoning_effort": "low"}, False),
        ({"thinking": {"type": "enabled", "budget_tokens": 1024}}, False),
        ({"reasoning_effort": "none"}, True),
        ({"thinking": {"type": "disabled"}}, True),
        ({"extra_body": {"chat_template_kwargs": {"enable_thinking": False}}}, True),
        ({"chat_template_kwargs": {"enable_thinking": False}}, True),
    ],
)
def test_which_parameters_turn_reasoning_off(params: dict[str, Any], off: bool) -> None:
    from pytest_reasoning.models.litellm_client import asks_no_reasoning

    assert asks_no_reasoning(params) is off


def _answer_both(config: EvalConfig, item: Item) -> list[Outcome]:
    evaluator = Evaluator(config)
    try:
        return [evaluator.answer(item, m) for m in ("openai/reasoning-content", "openai/think")]
    finally:
        evaluator.close()


def test_reasoning_sent_apart_is_kept_clipped_and_answered_from_the_cache(tmp_path: Path) -> None:
    """The reasoning a provider sends apart (reasoning_content; a leading <think> block, which
    LiteLLM moves there) is the row's reasoning_text, clipped with the cut marked; the cache
    keeps it, so a warm rerun shows it without a request."""
    long = "Carry the one. " * 800  # 12,000 characters
    with FakeOpenAIServer() as server:
        server.control(reasoning=long)
        config = EvalConfig(api_base=server.url, cache_dir=str(tmp_path))
        cold = _answer_both(config, arithmetic())
        asked = server.stats()["total"]
        warm = _answer_both(config, arithmetic())
        asked_again = server.stats()["total"] - asked
    clipped = f"{long[:MAX_REASONING_CHARS]}… [clipped 4,000 characters]"
    expected = [clipped, "A first guess: <<<-1>>>. No, work it out."]
    assert [o.reasoning_text for o in cold] == expected and asked == 2
    assert [o.correct and o.reasoning == "separate" for o in cold] == [True, True]
    assert [o.reasoning_text for o in warm] == expected and asked_again == 0
    assert all(o.cached for o in warm)
    assert [o.to_dict()["reasoning_text"] for o in warm] == expected  # the results row's field


@pytest.mark.parametrize(
    "params",
    [
        {"reasoning_effort": "none"},
        {"extra_body": {"chat_template_kwargs": {"enable_thinking": False}}},
    ],
)
def test_a_run_that_turns_reasoning_off_stores_none(tmp_path: Path, params: dict[str, Any]) -> None:
    """Whatever the provider sends (these models reason unasked), neither the row nor the
    cache keeps reasoning text; that there was some is still recorded (``reasoning``)."""
    with FakeOpenAIServer() as server:
        config = EvalConfig(api_base=server.url, cache_dir=str(tmp_path), params=params)
        outcomes = _answer_both(config, arithmetic())
    assert [(o.correct, o.reasoning, o.reasoning_text) for o in outcomes] == [
        (True, "separate", None), (True, "separate", None)]  # fmt: skip
    assert all("reasoning_text" not in o.to_dict() for o in outcomes)
    db = sqlite3.connect(tmp_path / "responses.sqlite3")
    stored = [json.loads(r) for (r,) in db.execute("SELECT reply FROM responses")]
    db.close()
    assert len(stored) == 2 and all(r["reasoning_text"] is None for r in stored)


SUITE = """\
samples: 3
seed: 2
tasks:
  - task: dyval.arithmetic
    levels:
      D1: {min_accuracy: 0.6}
  - task: zebra.grid
    levels: [2x3]
"""


@pytest.mark.e2e
def test_openai_reasoning_models_answer_every_item(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    """The server refuses temperature != 1 and max_tokens like OpenAI does: every item is
    answered, so neither was sent (LiteLLM mapped max_tokens to max_completion_tokens)."""
    pytester.makefile(".yaml", s=SUITE)
    res = pytester.path / "r.jsonl"
    args = ("--llm", "openai/o3-mini", "--llm", "openai/gpt-5-mini", "--llm-api-base")
    result = run(pytester, *args, fake_server.url, f"--reasoning-results={res}")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    got = rows(res)
    assert len(got) == 12 and all(r["correct"] for r in got)
    assert {r["reasoning_tokens"] for r in got} == {128}
    assert {r["finish_reason"] for r in got} == {"stop"}
    assert fake_server.stats()["requests"] == {"o3-mini": 6, "gpt-5-mini": 6}


@pytest.mark.e2e
def test_reasoning_replies_are_scored_as_what_they_are(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(
        ".yaml", s="samples: 2\ntasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n"
    )
    res = pytester.path / "r.jsonl"
    models = ["think", "think-noopen", "think-unclosed", "truncated", "reasoning-content", "boxed"]
    llm = [a for m in models for a in ("--llm", f"openai/{m}")]
    result = run(
        pytester,
        *llm,
        "--llm-api-base",
        fake_server.url,
        "--reasoning-lenient",
        f"--reasoning-results={res}",
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    seen = {(r["model"][7:], r["failure_mode"], r["reasoning"], r["extraction"]) for r in rows(res)}
    assert seen == {
        ("think", None, "separate", "strict"),  # LiteLLM moves a leading block out itself
        ("think-noopen", None, "tags", "strict"),
        ("think-unclosed", "truncated", "tags", None),
        ("truncated", "truncated", None, None),
        ("reasoning-content", None, "separate", "strict"),
        ("boxed", None, None, "lenient:boxed"),
    }
    # Reasoning sent apart is kept; reasoning in tags stays where it was, in the response.
    kept = {r["model"][7:]: r.get("reasoning_text") for r in rows(res)}
    assert kept == {"think": "A first guess: <<<-1>>>. No, work it out.", "think-noopen": None,
                    "think-unclosed": None, "truncated": None, "boxed": None,
                    "reasoning-content": "Worked out step by step."}  # fmt: skip


@pytest.mark.e2e
def test_a_reasoning_models_reasoning_is_in_the_results_the_cache_and_the_page(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    """Through LiteLLM over HTTP: the row keeps the reasoning, a warm rerun shows it from the
    cache without a request, the page holds it as data; hostile reasoning reaches neither the
    terminal nor the page's markup raw."""
    from pytest_reasoning.report.viewer import page_data

    hostile = "<script>window.__pwned = 1</script> \x1b[31mred\x1b[0m \x1b]0;title\x07 bidi:\u202e"
    fake_server.control(reasoning=hostile)
    pytester.makefile(
        ".yaml", s="samples: 2\ntasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n"
    )
    common = ("--llm", "openai/reasoning-content", "--llm-api-base", fake_server.url, "-v")
    first = run(pytester, *common, "--reasoning-results=a.jsonl", "--reasoning-report=rep")
    asked = fake_server.stats()["total"]
    again = run(pytester, *common, "--reasoning-results=b.jsonl")
    assert first.ret == again.ret == pytest.ExitCode.OK, first.stdout.str()
    assert fake_server.stats()["total"] == asked >= 1  # the rerun asked nothing
    for result in (first, again):
        out = result.stdout.str() + result.stderr.str()
        assert "\x1b]0;" not in out and "\x1b[31m" not in out and "<script>" not in out
    cold, warm = rows(pytester.path / "a.jsonl"), rows(pytester.path / "b.jsonl")
    assert [(r["reasoning_text"], r["cached"]) for r in cold] == [(hostile, False)] * 2
    assert [(r["reasoning_text"], r["cached"]) for r in warm] == [(hostile, True)] * 2
    page = (pytester.path / "rep" / "index.html").read_text()
    assert "<script>window" not in page and "\x1b" not in page
    _, _, texts = page_data(pytester.path / "rep")
    assert [r for t in texts for r in t["reasoning"]] == [hostile] * 2
