"""The embedded local model really runs: llama.cpp's server with SmolLM2 on 127.0.0.1, and the
same prompt gets the same answer whatever was asked before (regression testing needs it)."""

from __future__ import annotations

import asyncio
import sys

import pytest
from terminal import on_a_terminal, screen

from pytest_reasoning.models.base import ChatRequest
from pytest_reasoning.models.litellm_client import LiteLLMClient
from pytest_reasoning.models.local import ALIAS, LocalServer
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item

pytestmark = pytest.mark.needs_local_model


@pytest.mark.e2e
def test_same_prompt_same_answer_under_interleaving() -> None:
    task = get_task("dyval.arithmetic")
    prompts = [make_item(task, "D1", 1, i).prompt for i in range(3)]
    with LocalServer() as server:
        assert server.url.startswith("http://127.0.0.1:")
        client = LiteLLMClient(f"openai/{ALIAS}", api_base=server.url, api_key="local")

        async def ask(prompt: str) -> str:
            reply = await client.acomplete(
                ChatRequest(
                    f"openai/{ALIAS}",
                    (("user", prompt),),
                    {"temperature": 0, "max_tokens": 48},
                    server.url,
                )
            )
            assert reply.error is None, reply.error
            return reply.content or ""

        async def scenario() -> list[list[str]]:
            sequential = [await ask(p) for p in prompts]
            reversed_ = [await ask(p) for p in reversed(prompts)][::-1]
            concurrent = list(await asyncio.gather(*(ask(p) for p in prompts)))
            return [sequential, reversed_, concurrent]

        runs = asyncio.run(scenario())
    assert runs[0] == runs[1] == runs[2]
    assert all(answer.strip() for answer in runs[0])


@pytest.mark.e2e
def test_plugin_runs_suite_on_local_model(pytester: pytest.Pytester) -> None:
    """A newcomer's first run, on an 80-column terminal: the header gives the concurrency the
    embedded server really has, and the failed gate says the token limit was ours (SmolLM2
    repeats a line until it: a higher one would not help)."""
    pytester.makefile(
        ".yaml",
        tiny="samples: 1\ntasks:\n  - task: dyval.boolean_logic\n    levels:\n      D1: {min_accuracy: 1.0}\n",
    )
    raw = on_a_terminal(
        [sys.executable, "-m", "pytest", "tiny.yaml", "--llm", "local", "-p", "no:cacheprovider",
         "-p", "no:randomly", "--reasoning-cache", "off"],
        pytester.path, columns=80,
    )  # fmt: skip
    text = [line for line, _ in screen(raw)]
    assert any(
        line.startswith("reasoning: models local; concurrency 1 (the embedded server answers")
        for line in text
    ), raw
    assert any(line.startswith("local") and "dyval.boolean_logic" in line for line in text), raw
    gate = next(line for line in text if line.startswith("GATE FAILED local dyval.boolean_logic"))
    assert "cut off at the token limit (max_tokens 256, pytest-reasoning's default)" in gate
