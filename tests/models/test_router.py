"""LiteLLM's Router as a model kind (issue 22): ``--llm-router FILE``, model groups spread over
deployments (here the project's test servers on 127.0.0.1), our retries and cache around it,
the Router's own refusals waited out without spending attempts, least-busy refused."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import PLAIN
from pytest_reasoning.core import Item
from pytest_reasoning.errors import InvalidArgument
from pytest_reasoning.evaluate import EvalConfig, Evaluator
from pytest_reasoning.models.kinds import KINDS, model_kind
from pytest_reasoning.models.router import (
    LEAST_BUSY,
    RouterGroup,
    load_router_groups,
    parse_router_config,
    router_refusal,
)
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.redis_server import RedisServer
from pytest_reasoning.testing.server import FakeOpenAIServer


def _deployment(group: str, model: str, url: str, **extra: Any) -> dict[str, Any]:
    return {"model_name": group, "litellm_params": {"model": model, "api_base": url, **extra}}


def _groups(data: dict[str, Any], tmp_path: Path) -> dict[str, RouterGroup]:
    path = tmp_path / "router.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_router_groups(path)


def _item(index: int, level: str = "D2") -> Item:
    return make_item(get_task("dyval.arithmetic"), level, 5, index, {}, "direct")


# -- the file -----------------------------------------------------------------------------------
BASE = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"router_settings": {"routing_strategy": "least-busy"}}, f"f.yaml: {LEAST_BUSY}"),
        (
            {"router_settings": {"num_retries": 3}},
            "f.yaml: router_settings.num_retries: retries are the plugin's own",
        ),
        (
            {"router_settings": {"redis_password": "hunter2hunter2"}},
            "f.yaml: router_settings.redis_password: write os.environ/NAME",
        ),
        (
            {"router_settings": {"cooldown_tme": 5}},
            "f.yaml: router_settings.cooldown_tme: unknown or unsupported router setting "
            "(did you mean cooldown_time?)",
        ),
        (
            {"router_settings": {"fallbacks": [{"g": ["nowhere"]}]}},
            "f.yaml: router_settings.fallbacks: 'nowhere' is not a model group of this file",
        ),
        (
            {"router_settings": {"routing_strategy": "fastest"}},
            "f.yaml: router_settings.routing_strategy: expected one of simple-shuffle",
        ),
        ({"proxy": {}}, "f.yaml: proxy: unknown section; expected model_list, router_settings"),
    ],
)
def test_a_bad_router_file_is_one_line_naming_the_key(
    change: dict[str, Any], expected: str
) -> None:
    data = {"model_list": [_deployment("g", "openai/m", BASE)], **change}
    with pytest.raises(InvalidArgument) as info:
        parse_router_config(data, "f.yaml")
    assert str(info.value).startswith(expected) and "\n" not in str(info.value)
    assert "hunter2" not in str(info.value)


def test_least_busy_is_refused_with_the_upstream_issues_named() -> None:
    assert "BerriAI/litellm#37622" in LEAST_BUSY and "#39322" in LEAST_BUSY


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"api_key": "sk-literal-key-12345"}, "litellm_params.api_key: write os.environ/NAME"),
        ({"rpm": 0}, "litellm_params.rpm: expected an integer >= 1, got 0"),
        ({"num_retries": 2}, "litellm_params.num_retries: retries are the plugin's own"),
    ],
)
def test_a_bad_deployment_is_one_line(entry: dict[str, Any], expected: str) -> None:
    data = {"model_list": [_deployment("g", "openai/m", BASE, **entry)]}
    with pytest.raises(InvalidArgument, match=r"^f\.yaml: model_list\[0\]\.") as info:
        parse_router_config(data, "f.yaml")
    assert expected in str(info.value) and "sk-literal" not in str(info.value)


def test_the_deployments_of_a_group_must_ask_alike() -> None:
    data = {
        "model_list": [
            _deployment("g", "openai/m", BASE, temperature=0.2),
            _deployment("g", "openai/m", "http://127.0.0.1:10/v1", temperature=0.7),
        ]
    }
    with pytest.raises(InvalidArgument, match="differ in 'temperature'"):
        parse_router_config(data, "f.yaml")


def test_groups_are_a_model_kind_keyed_by_group_not_by_endpoint(tmp_path: Path) -> None:
    one = {
        "model_list": [_deployment("g", "openai/m", BASE, rpm=10, api_key="os.environ/K")],
        "litellm_settings": {"drop_params": True},  # a proxy's section: ignored
    }
    two = {
        "model_list": [
            _deployment("g", "openai/m", BASE, rpm=10),
            _deployment("g", "openai/m", "http://127.0.0.1:10/v1", tpm=1000),
        ]
    }
    other_model = {"model_list": [_deployment("g", "openai/other", BASE)]}
    groups = _groups(one, tmp_path)
    assert model_kind("g", groups) is KINDS["router"] and KINDS["router"].routed
    assert groups["g"].deployments == 1 and groups["g"].model_id == "g=router(openai/m)"

    def key(data: dict[str, Any]) -> str:
        evaluator = Evaluator(EvalConfig(cache_dir=None, models=_groups(data, tmp_path)))
        return evaluator.request_for(_item(0), "g").key

    assert key(one) == key(two)  # one more deployment: the same answers
    assert key(one) != key(other_model)  # another model behind the group: asked again


# -- the Router's own refusals ---------------------------------------------------------------------
def test_the_routers_rpm_refusal_is_recognised_from_a_real_router(fake_server: Any) -> None:
    """A real Router (rpm 2, enforced) refuses the third call before asking anyone: that is
    a wait for its minute window, not an attempt; an upstream 429 is not."""
    from pytest_reasoning.models.litellm_client import import_litellm

    lib = import_litellm()

    async def calls(router: Any, upstream: Any) -> tuple[Any, Any]:
        for n in range(2):
            await router.acompletion(model="g", messages=[{"role": "user", "content": f"{n}"}])
        refused = upstream_error = None
        try:
            await router.acompletion(model="g", messages=[{"role": "user", "content": "2"}])
        except Exception as exc:
            refused = exc
        try:
            await upstream.acompletion(model="u", messages=[{"role": "user", "content": "x"}])
        except Exception as exc:
            upstream_error = exc
        return refused, upstream_error

    for _ in range(3):
        router = lib.Router(
            model_list=[_deployment("g", "openai/always-true", fake_server.url, api_key="x", rpm=2)],
            num_retries=0,
            optional_pre_call_checks=["enforce_model_rate_limits"],
        )
        upstream = lib.Router(
            model_list=[_deployment("u", "openai/fail-429", fake_server.url, api_key="x")],
            num_retries=0,
        )
        start, asked = time.time(), fake_server.stats()["total"]
        refused, upstream_error = asyncio.run(calls(router, upstream))
        sent = fake_server.stats()["total"] - asked
        before = time.time()
        wait = router_refusal(refused) if refused is not None else None
        after = time.time()
        if start // 60 == after // 60:
            break
        # The calls straddled a UTC minute's end, where LiteLLM's rpm counts restart (however
        # slow the machine, the verdict must not depend on it): again, in a fresh minute.
        time.sleep(60 - time.time() % 60 + 0.5)
    assert refused is not None and upstream_error is not None
    # The next UTC minute, as it was when the refusal was read, plus 0-2 s of jitter.
    assert wait is not None and 60 - after % 60 <= wait <= 60 - before % 60 + 2
    assert router_refusal(upstream_error) is None
    assert sent == 3  # two answered, the refused one never sent; plus the upstream 429


def test_a_cooldown_of_every_deployment_is_waited_out_without_spending_an_attempt(
    tmp_path: Path,
) -> None:
    """flaky-oracle fails each prompt's first request: the Router then cools its only
    deployment down for a second and refuses the retry itself. With two attempts the call
    still succeeds: the refusal cost no attempt."""
    with FakeOpenAIServer() as server:
        data = {
            "model_list": [_deployment("g", "openai/flaky-oracle", server.url)],
            "router_settings": {"allowed_fails": 0, "cooldown_time": 1},
        }
        config = EvalConfig(cache_dir=None, attempts=2, models=_groups(data, tmp_path))
        evaluator = Evaluator(config)
        try:
            outcome = evaluator.answer(_item(0), "g")
        finally:
            evaluator.close()
        asked = server.stats()["total"]
    assert outcome.error is None and outcome.correct, outcome.error
    assert asked == 2  # the failure and the answer; the refusal in between sent nothing


def test_rpm_limits_are_shared_across_routers_through_redis(
    fake_server: Any, redis_server: RedisServer
) -> None:
    """Two Routers (two jobs) with Redis in router_settings share one rpm budget."""
    from pytest_reasoning.models.litellm_client import import_litellm

    lib = import_litellm()
    settings = {
        "optional_pre_call_checks": ["enforce_model_rate_limits"],
        "redis_host": "127.0.0.1",
        "redis_port": redis_server.port,
    }

    async def calls(routers: list[Any]) -> list[bool]:
        done = []
        for router in (routers[0], routers[0], routers[1], routers[1]):
            try:
                await router.acompletion(
                    model="g", messages=[{"role": "user", "content": f"{len(done)}"}]
                )
                done.append(True)
            except Exception as exc:
                assert router_refusal(exc) is not None
                done.append(False)
        return done

    for _ in range(3):
        if 60 - time.time() % 60 < 8:  # the counters are per UTC minute: start in a fresh one
            time.sleep(60 - time.time() % 60 + 0.5)
        start = time.time()
        routers = [
            lib.Router(
                model_list=[
                    _deployment("g", "openai/always-true", fake_server.url, api_key="x", rpm=3)
                ],
                num_retries=0,
                **settings,
            )
            for _ in range(2)
        ]
        done = asyncio.run(calls(routers))
        if start // 60 == time.time() // 60:
            break
        # A minute's end fell among the calls (a slow machine): its counts restarted. Again,
        # from the start of the next minute, whose counters are fresh.
        time.sleep(60 - time.time() % 60 + 0.5)
    assert done == [True, True, True, False]


# -- an evaluator over two deployments ----------------------------------------------------------
def test_a_group_spreads_calls_over_its_deployments_and_falls_back(tmp_path: Path) -> None:
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b, FakeOpenAIServer() as broken:
        data = {
            "model_list": [
                _deployment("g", "openai/oracle", a.url),
                _deployment("g", "openai/oracle", b.url),
                _deployment("down", "openai/fail-500", broken.url),
            ],
            "router_settings": {"fallbacks": [{"down": ["g"]}]},
        }
        groups = _groups(data, tmp_path)
        config = EvalConfig(cache_dir=str(tmp_path / "c"), models=groups, attempts=1)
        evaluator = Evaluator(config)
        try:
            items = [_item(i) for i in range(24)]
            evaluator.prefetch((i, "g") for i in items)
            outcomes = [evaluator.answer(i, "g") for i in items]
            fell_back = evaluator.answer(_item(0, "D1"), "down")
            model_id = evaluator.model_id("g")
        finally:
            evaluator.close()
        spread = (a.stats()["total"], b.stats()["total"])
        broken_asked = broken.stats()["total"]
    assert all(o.correct for o in outcomes) and sum(spread) == 25
    assert min(spread) >= 3, spread  # both deployments answered (simple-shuffle)
    assert fell_back.correct and broken_asked == 1  # one attempt: the fallback answered it
    assert model_id == "g=router(openai/oracle)" == outcomes[0].model_id
    # A rerun with a third deployment in the group: every answer is cached under the group.
    with FakeOpenAIServer() as c:
        data["model_list"].append(_deployment("g", "openai/oracle", c.url))
        evaluator = Evaluator(
            EvalConfig(cache_dir=str(tmp_path / "c"), models=_groups(data, tmp_path))
        )
        try:
            again = [evaluator.answer(i, "g") for i in items]
        finally:
            evaluator.close()
        assert c.stats()["total"] == 0
    assert all(o.cached and o.correct for o in again)


# -- the plugin ---------------------------------------------------------------------------------
def test_least_busy_is_a_usage_error_before_any_call(mini_suite: pytest.Pytester) -> None:
    (mini_suite.path / "r.yaml").write_text(
        yaml.safe_dump(
            {
                "model_list": [_deployment("g", "openai/oracle", BASE)],
                "router_settings": {"routing_strategy": "least-busy"},
            }
        )
    )
    result = mini_suite.runpytest("--llm-router", "r.yaml", "--llm", "g", PLAIN)
    assert result.ret == 4
    errors = [ln for ln in result.errlines if ln.strip()]
    assert errors == [f"ERROR: --llm-router r.yaml: {LEAST_BUSY}"]


@pytest.mark.e2e
def test_a_run_through_the_router(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "seed: 2\nsamples: 4\ntasks:\n  - {task: dyval.arithmetic, levels: {D1: {min_accuracy: 1}}}\n"
    )
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        (tmp_path / "r.yaml").write_text(
            yaml.safe_dump(
                {
                    "model_list": [
                        _deployment("cand", "openai/oracle", a.url),
                        _deployment("cand", "openai/oracle", b.url),
                    ]
                }
            )
        )
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
             "s.yaml", "--llm-router", "r.yaml", "--llm", "cand", "--reasoning-cache", "off",
             "--reasoning-results", "out.jsonl"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        asked = a.stats()["total"] + b.stats()["total"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "reasoning: models cand (model groups from r.yaml)" in done.stdout
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert asked == len(rows) == 4
    assert {r["model_id"] for r in rows} == {"cand=router(openai/oracle)"}
