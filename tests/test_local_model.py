"""The embedded local model really runs: llama.cpp's server with SmolLM2 on 127.0.0.1, and the
same prompt gets the same answer whatever was asked before (regression testing needs it)."""

from __future__ import annotations

import asyncio

import pytest

from pytest_reasoning.models.base import ChatRequest
from pytest_reasoning.models.litellm_client import LiteLLMClient
from pytest_reasoning.models.local import ALIAS, LocalServer
from pytest_reasoning.registry import get_task

pytestmark = pytest.mark.needs_local_model


@pytest.mark.e2e
def test_same_prompt_same_answer_under_interleaving() -> None:
    task = get_task("dyval.arithmetic")
    prompts = [task.make_item("D1", 1, i).prompt for i in range(3)]
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
    pytester.makefile(
        ".yaml", tiny="samples: 2\ntasks:\n  - task: dyval.boolean_logic\n    levels: [D1]\n"
    )
    result = pytester.runpytest_subprocess(
        "--llm", "local", "--llm-param", "max_tokens=48", "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*reasoning summary*", "local*dyval.boolean_logic*D1*2*"])
