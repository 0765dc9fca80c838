"""Model lists and endpoints: keys never in files or on the command line, headers and
parameters that hold secrets refused, several models on several endpoints, local models known by
their file's hash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis

from conftest import PLAIN
from pytest_reasoning.core import Item
from pytest_reasoning.errors import InvalidArgument
from pytest_reasoning.evaluate import EvalConfig, Evaluator
from pytest_reasoning.models.endpoints import parse_model_list
from pytest_reasoning.models.shared_cache import check_redis_url
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.redis_server import RedisServer
from pytest_reasoning.testing.server import FakeOpenAIServer, key_digest


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_model_list_refuses_keys_in_files_and_takes_everything_else() -> None:
    def entry(**lp: Any) -> dict[str, Any]:
        return {"model_list": [{"model_name": "a", "litellm_params": {"model": "openai/x", **lp}}]}

    specs = parse_model_list(
        entry(
            api_base="http://h:1/v1",
            api_key="os.environ/A_CRED",
            temperature=0.6,
            reasoning_effort="low",
            rpm=10,
            input_cost_per_token=1e-6,  # a price, not a secret, though its name ends in token
        ),
        "m.yaml",
    )
    a = specs["a"]
    assert (a.model, a.api_key_env, a.params) == (
        "openai/x",
        "A_CRED",
        {
            "temperature": 0.6,
            "reasoning_effort": "low",
            "input_cost_per_token": 1e-6,
        },
    )
    assert a.model_id == "a=openai/x@http://h:1/v1"
    bad = {
        "m.yaml: model_list[0].litellm_params.api_key: write os.environ/NAME": entry(
            api_key="sk-1"
        ),
        "m.yaml: model_list[0].litellm_params.num_retries: retries are": entry(num_retries=3),
        "m.yaml: model_list[0].litellm_params.api_base: environment variable NOPE_19": entry(
            api_base="os.environ/NOPE_19"
        ),
        "m.yaml: model_list[1].model_name: duplicate 'a'": {
            "model_list": [entry()["model_list"][0]] * 2
        },
        "m.yaml: expected a mapping with a 'model_list'": {"models": []},
        "m.yaml: model_list[0].litellm_params.aws_secret_access_key: write os.environ": entry(
            aws_secret_access_key="abc"
        ),
        "m.yaml: model_list[0].litellm_params.auth_token: write os.environ": entry(
            auth_token="abc"
        ),
    }
    for message, data in bad.items():
        with pytest.raises(InvalidArgument) as info:
            parse_model_list(data, "m.yaml")
        assert str(info.value).startswith(message), info.value


def test_keys_on_the_command_line_are_refused(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", s="tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n")
    result = pytester.runpytest("--llm", "openai/x", "--llm-param", "api_key=sk-123456789")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--llm-param: api_key: keys stay in the environment*"])
    assert "sk-123456789" not in result.stderr.str()
    fine = pytester.runpytest("--llm", "reference", "--llm-param", "max_tokens=64", "--co")
    assert fine.ret == pytest.ExitCode.OK


def test_local_models_are_known_by_their_file_hash_not_their_size(tmp_path: Path) -> None:
    from pytest_reasoning.models.local import LocalServer

    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    a.write_bytes(b"GGUF" + b"\x00" * 60)
    b.write_bytes(b"GGUF" + b"\x01" * 60)  # the same size
    ids = [LocalServer(model_file=p).identity for p in (a, b)]
    assert ids[0].startswith("local:a.gguf#") and ids[1].startswith("local:b.gguf#")
    assert ids[0].split("#")[1] != ids[1].split("#")[1]


@pytest.mark.e2e
def test_two_models_on_two_endpoints_with_a_baseline_gate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("B_TOKEN", "b-secret-token-0001")
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        pytester.makefile(
            ".yaml",
            s="samples: 8\nseed: 3\ntasks:\n  - task: dyval.arithmetic\n    levels: [D2, D3]\n",
            models=(
                "model_list:\n"
                f"  - {{model_name: cand, litellm_params: {{model: openai/shallow:2, api_base: {a.url}}}}}\n"
                f"  - {{model_name: base, litellm_params: {{model: openai/oracle, api_base: {b.url}, "
                "api_key: os.environ/B_TOKEN, max_tokens: 64}}\n"
            ),
        )
        res = pytester.path / "r.jsonl"
        result = run(
            pytester,
            "--llm-config",
            "models.yaml",
            "--llm",
            "cand",
            "--llm-baseline",
            "base",
            f"--reasoning-results={res}",
        )
        stats_a, stats_b = a.stats(), b.stats()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*REGRESSION dyval.arithmetic D3: cand is worse than base*"])
    assert stats_a["requests"] == {"shallow:2": 16} and stats_b["requests"] == {"oracle": 16}
    assert stats_a["keys"] == {"shallow:2": [key_digest("EMPTY")]}  # never another's key
    assert stats_b["keys"] == {"oracle": [key_digest("b-secret-token-0001")]}
    ids = {(r["model"], r["model_id"]) for r in rows(res)}
    assert ids == {
        ("cand", f"cand=openai/shallow:2@{a.url}"),
        ("base", f"base=openai/oracle@{b.url}"),
    }


SMALL = "seed: 3\nsamples: 3\ntasks:\n  - {task: dyval.arithmetic, levels: [D1, D2]}\n"


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _item(index: int, level: str = "D2") -> Item:
    return make_item(get_task("dyval.arithmetic"), level, 5, index, {}, "direct")


@pytest.fixture
def url(redis_server: RedisServer) -> str:
    redis.Redis.from_url(redis_server.url).flushdb()
    return redis_server.url


def _models(**params: Any) -> dict[str, Any]:
    return {
        "model_list": [{"model_name": "m", "litellm_params": {"model": "openai/oracle", **params}}]
    }


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer sk-live-0123456789abcdef"},
        {"X-Api-Key": "0123456789abcdef"},
        {"X-Anything": "Bearer 0123456789abcdef"},
        {"Cookie": "session=0123456789abcdef"},
    ],
)
def test_a_literal_credential_in_a_header_is_refused(headers: dict[str, str]) -> None:
    """Before: ``extra_headers: {Authorization: Bearer …}`` was accepted and written in plain
    text to .reasoning_cache/capabilities.json."""
    with pytest.raises(InvalidArgument) as info:
        parse_model_list(_models(extra_headers=headers), "m.yaml")
    (line,) = str(info.value).splitlines()
    name = next(iter(headers))
    assert line.startswith(f"m.yaml: model_list[0].litellm_params.extra_headers.{name}: write "
                           "os.environ/NAME")  # fmt: skip
    assert "0123456789abcdef" not in line


def test_a_header_from_the_environment_is_sent_and_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "team-token-0123456789abcdefghij"
    monkeypatch.setenv("TEAM_AUTH", f"Bearer {secret}")
    with FakeOpenAIServer() as server:
        specs = parse_model_list(
            _models(api_base=server.url, extra_headers={"Authorization": "os.environ/TEAM_AUTH",
                                                        "X-Team": "visible-team-name"}),
            "m.yaml",
        )  # fmt: skip
        config = EvalConfig(cache_dir=str(tmp_path), models=specs)
        evaluator = Evaluator(config)
        try:
            outcome = evaluator.answer(_item(0), "m")
            client = evaluator._client("m")
            caps = client.caps  # asked of LiteLLM's map, kept in capabilities.json
        finally:
            evaluator.close()
        keys = server.stats()["keys"]["oracle"]
    assert outcome.correct and keys == [key_digest(secret)]  # read at call time, sent
    assert caps is not None
    written = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    for value in (secret.encode(), b"visible-team-name", b"TEAM_AUTH"):
        assert value not in written, value  # parameter values never reach the disk


@pytest.mark.parametrize(
    ("param", "said"),
    [
        ('extra_headers={"Authorization": "Bearer sk-0123456789abcdef"}',
         "--llm-param: extra_headers.Authorization: write os.environ/NAME"),
        ("messages=[]", "--llm-param: messages: the prompt is the item's own"),
        ("model=openai/other", "--llm-param: model: name the model with --llm"),
        ("timeout=5", "--llm-param: timeout: use --reasoning-timeout"),
    ],
)  # fmt: skip
def test_parameters_the_run_owns_or_that_hold_secrets_are_refused_at_configure(
    pytester: pytest.Pytester, param: str, said: str
) -> None:
    """Before: ``--llm-param messages=[]`` was sent with every request and retried 5 times;
    a literal Authorization header was accepted."""
    pytester.makefile(".yaml", s=SMALL)
    with FakeOpenAIServer() as server:
        result = pytester.runpytest("--llm", "openai/oracle", "--llm-api-base", server.url,
                                    "--llm-param", param, "--reasoning-cache", "off",
                                    PLAIN)  # fmt: skip
        asked = server.stats()["total"]
    assert result.ret == pytest.ExitCode.USAGE_ERROR and asked == 0
    (line,) = _lines(result.stderr.str())
    assert line.startswith(f"ERROR: {said}"), line
    assert "0123456789abcdef" not in line


def test_a_redis_password_in_the_query_is_refused_too() -> None:
    """Before: ``redis://h:6379/0?password=…`` passed the "no password in the URL" rule."""
    for url in ("redis://h:6379/0?password=hunter2hunter2", "unix:///r.sock?PASSWORD=hunter2"):
        with pytest.raises(InvalidArgument) as info:
            check_redis_url(url)
        assert "keep the password out of the URL" in str(info.value)
        assert "hunter2" not in str(info.value)
