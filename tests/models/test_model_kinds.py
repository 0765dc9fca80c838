"""Model kinds (issue 45): one registry of ``ModelAPI`` classes, each kind's capabilities and
client in one place; a model resolved once per run with the run's aliases; nothing outside
``models/`` asks which client class it got; the report gets prices as data."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_reasoning.core import Item
from pytest_reasoning.evaluate import EvalConfig, Evaluator
from pytest_reasoning.models.endpoints import ModelSpec, parse_model_list
from pytest_reasoning.models.kinds import KINDS, ClientContext, LiteLLMAPI, modelapi, resolve
from pytest_reasoning.models.litellm_client import LiteLLMClient, reply_from
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2] / "pytest_reasoning"


def test_each_kind_says_what_it_can_do() -> None:
    caps = {
        name: (api.calls_model, api.needs_local_server, api.priced, api.batch, api.max_concurrency)
        for name, api in KINDS.items()
    }
    assert caps == {
        "reference": (False, False, False, False, None),
        "local": (True, True, False, False, 1),
        "litellm": (True, False, True, True, None),
        "configured": (True, False, False, True, None),
        "router": (True, False, False, False, None),
    }


def test_a_model_is_resolved_with_the_runs_aliases() -> None:
    specs = parse_model_list(
        {"model_list": [{"model_name": "cand", "litellm_params": {"model": "openai/x"}}]}, "m.yaml"
    )
    assert resolve("cand", specs).api is KINDS["configured"]
    assert resolve("cand").api is KINDS["litellm"]  # without the file, a plain model string
    assert resolve("reference", specs).calls_model is False
    assert resolve("local").price(1000, 1000) is None  # not priced: litellm not asked


@pytest.fixture
def quirk() -> Iterator[type[LiteLLMAPI]]:
    @modelapi("acme-test")
    class AcmeAPI(LiteLLMAPI):
        prefixes = ("acme-test/",)
        reasoning_fields = ("reasoning",)

    try:
        yield AcmeAPI
    finally:
        del KINDS["acme-test"]


def test_a_provider_quirk_is_one_class_and_one_registration(quirk: type[LiteLLMAPI]) -> None:
    """A provider that sends its reasoning in ``message.reasoning``: its model strings
    resolve to its kind, and its client reads the reasoning from that field."""
    model = resolve("acme-test/r1")
    assert isinstance(model.api, quirk) and resolve("openai/r1").api is KINDS["litellm"]
    client = model.client(ClientContext("acme-test/r1"))
    message = SimpleNamespace(content="<<<4>>>", reasoning="two and two")
    resp = SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")])
    assert isinstance(client, LiteLLMClient)
    fields = client.kind.reasoning_fields
    assert reply_from(resp, 0.0, reasoning_fields=fields).reasoning_text == "two and two"
    assert reply_from(resp, 0.0).reasoning_text is None  # the default field holds nothing
    # An --llm-config alias of one of its models reads the same field.
    alias = resolve("fast", {"fast": ModelSpec("fast", "acme-test/r1")})
    aliased = alias.client(ClientContext("fast", entry=alias.entry))
    assert isinstance(aliased, LiteLLMClient) and aliased.kind.reasoning_fields == ("reasoning",)
    with pytest.raises(ValueError, match="registered twice"):
        modelapi("acme-test")(quirk)


def test_the_evaluator_resolves_each_model_once(tmp_path: Path) -> None:
    item: Item = make_item(get_task("dyval.arithmetic"), "D1", 1, 0, {}, "direct")
    with FakeOpenAIServer() as server:
        ev = Evaluator(EvalConfig(api_base=server.url, cache_dir=str(tmp_path)))
        try:
            first = ev.model("openai/oracle")
            assert ev.answer(item, "openai/oracle").correct
            assert ev.model("openai/oracle") is first  # the same object, not re-derived
            assert ev.batch_client("openai/oracle") is not None
            assert ev.batch_client("reference") is None
        finally:
            ev.close()


def test_the_reference_is_a_client_that_answers_at_once_and_keeps_nothing(
    tmp_path: Path,
) -> None:
    item: Item = make_item(get_task("dyval.arithmetic"), "D1", 1, 0, {}, "direct")
    ev = Evaluator(EvalConfig(cache_dir=str(tmp_path / "cache")))
    try:
        assert ev.client("reference").model_id == "reference"
        outcome = ev.answer(item, "reference")
        assert outcome.correct and outcome.model_id == "reference" and not outcome.cached
        assert ev.in_flight == 0 and not (tmp_path / "cache").exists()  # no call, no cache
    finally:
        ev.close()


def test_no_client_class_is_sniffed_outside_models() -> None:
    """Capabilities are asked of the model's kind; ``isinstance(x, SomeClient)`` outside
    ``models/`` would bring back the table of special cases."""
    found = []
    for path in ROOT.rglob("*.py"):
        if "models" in path.relative_to(ROOT).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            sniffs = isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance"
            if sniffs and "Client" in ast.unparse(node.args[1]):  # type: ignore[attr-defined]
                found.append(f"{path.name}: {ast.unparse(node)}")
    assert found == []


def test_the_report_imports_neither_the_model_clients_nor_litellm() -> None:
    code = (
        "import sys, pytest_reasoning.report, pytest_reasoning.report.publish\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('pytest_reasoning.models', "
        "'litellm')))\n"
        "print(bad)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip() == "[]"
