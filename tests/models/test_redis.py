"""The shared response cache on Redis (issue 22): a real redis-server on 127.0.0.1 (the
``redis_server`` fixture; no fake Redis), the store and the two-layer store, concurrent runs
that pay once per prompt, and Redis down at start or lost mid-run."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from pytest_reasoning.core import Item, Reply
from pytest_reasoning.errors import InvalidArgument, StorageFailed
from pytest_reasoning.evaluate import EvalConfig, Evaluator
from pytest_reasoning.models.base import ChatRequest
from pytest_reasoning.models.cache import ResponseCache, new_owner
from pytest_reasoning.models.shared_cache import (
    PREFIX,
    LayeredStore,
    RedisStore,
    check_redis_url,
    shown_url,
)
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.redis_server import RedisServer
from pytest_reasoning.testing.server import FakeOpenAIServer


@pytest.fixture
def url(redis_server: RedisServer) -> str:
    """The module's server, emptied for each test."""
    redis.Redis.from_url(redis_server.url).flushdb()
    return redis_server.url


def _request(n: int = 0) -> ChatRequest:
    return ChatRequest(model="openai/oracle", messages=(("user", f"question {n}"),))


def _item(index: int) -> Item:
    return make_item(get_task("dyval.arithmetic"), "D2", 5, index, {}, "direct")


# -- the URL ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("redis://:hunter2hunter2@h:6379/0", "keep the password out of the URL"),
        ("redis://user:hunter2hunter2@h:6379/0", "set REASONING_REDIS_PASSWORD instead"),
        ("redis:///0", "expected a host"),
        ("redis://h:6379/zero", "the database is a number"),
        ("redis://h:99999/0", "not a Redis URL"),
        ("unix://", "expected unix:///path/to/redis.sock"),
    ],
)
def test_a_bad_redis_url_is_one_line_and_never_shows_the_password(
    given: str, expected: str
) -> None:
    with pytest.raises(InvalidArgument) as info:
        check_redis_url(given)
    assert expected in str(info.value) and "hunter2" not in str(info.value)
    assert "\n" not in str(info.value)


def test_good_urls_pass_and_show_without_a_password() -> None:
    for good in ("redis://127.0.0.1:6379/0", "rediss://cache.example:6380/2", "unix:///r.sock"):
        assert check_redis_url(good) == good
    assert shown_url("redis://u:secret@h:1/0") == "redis://u@h:1/0"


# -- the store --------------------------------------------------------------------------------
def test_an_answer_is_stored_under_the_request_key_as_the_sqlite_cache_stores_it(url: str) -> None:
    store = RedisStore(url)
    request = _request()
    assert store.get(request) is None
    store.put(request, Reply(content="<<<7>>>", prompt_tokens=5, completion_tokens=2))
    store.put(_request(1), Reply(content=None, error="HTTP 500"))  # failures: never stored
    found = store.get(request)
    assert found is not None and found.content == "<<<7>>>" and found.cached
    raw = redis.Redis.from_url(url)
    assert sorted(raw.keys()) == [f"{PREFIX}answer:{request.key}".encode()]
    value = json.loads(raw.get(f"{PREFIX}answer:{request.key}") or b"")
    assert sorted(value) == ["created", "model", "reply"]  # a SQLite row's columns, no more
    assert value["model"] == "openai/oracle" and value["reply"]["content"] == "<<<7>>>"
    store.close()


def test_claims_are_taken_once_released_by_name_expire_and_pass_from_a_dead_holder(
    url: str,
) -> None:
    store = RedisStore(url)
    me, other = new_owner(), new_owner()
    assert store.claim("k", me, 600) and not store.claim("k", other, 600)
    assert store.claim("k", me, 600)  # already ours
    store.release("k", other)  # not its claim: nothing happens
    assert not store.claim("k", other, 600)
    store.release("k", me)
    assert store.claim("k", other, 0.2)
    time.sleep(0.3)
    assert store.claim("k", me, 600)  # expired
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = me.split("/")[0]
    redis.Redis.from_url(url).set(f"{PREFIX}claim:k", f"{host}/{gone.pid}/1/x")
    assert store.claim("k", other, 600)  # a killed run of this machine: taken over at once
    store.forget(other)
    assert redis.Redis.from_url(url).get(f"{PREFIX}claim:k") is None
    store.close()


def test_the_async_operations_do_the_same(url: str) -> None:
    async def run() -> None:
        store = RedisStore(url)
        me, other = new_owner(), new_owner()
        request = _request()
        assert await store.aget(request) is None
        assert await store.aclaim(request.key, me, 600)
        assert not await store.aclaim(request.key, other, 600)
        await store.aput(request, Reply(content="<<<1>>>"))
        await store.arelease(request.key, me)
        assert await store.aclaim(request.key, other, 600)
        found = await store.aget(request)
        assert found is not None and found.content == "<<<1>>>"
        await store.aclose()

    asyncio.run(run())


def test_the_local_layer_comes_first_and_keeps_what_redis_had(url: str, tmp_path: Path) -> None:
    request = _request()
    RedisStore(url).put(request, Reply(content="<<<3>>>"))
    store = LayeredStore(ResponseCache(tmp_path), RedisStore(url))
    found = store.get(request)
    assert found is not None and found.content == "<<<3>>>" and store.from_shared == 1
    assert ResponseCache(tmp_path).get(request) is not None  # copied: no Redis needed next time
    store.put(_request(2), Reply(content="<<<4>>>"))
    assert RedisStore(url).get(_request(2)) is not None  # written to both
    assert ResponseCache(tmp_path).get(_request(2)) is not None
    store.close()


def test_a_lost_redis_leaves_the_local_layer_working_and_says_so_once(
    own_redis_server: RedisServer, tmp_path: Path
) -> None:
    server = own_redis_server
    store = LayeredStore(ResponseCache(tmp_path), RedisStore(server.url))
    store.put(_request(0), Reply(content="<<<0>>>"))
    server.stop()
    owner = new_owner()
    assert store.get(_request(1)) is None  # a miss, not an error
    assert store.lost is not None and store.shared is None
    assert store.lost.startswith(f"cannot read the shared cache {server.url}: ")
    assert "continuing on the local cache" in store.lost and "\n" not in store.lost
    assert store.claim("k", owner, 600)  # claims go local now
    store.put(_request(1), Reply(content="<<<1>>>"))
    assert store.get(_request(1)) is not None and store.get(_request(0)) is not None
    store.close()


def test_redis_alone_that_fails_stops_like_a_full_disk(own_redis_server: RedisServer) -> None:
    server = own_redis_server
    store = RedisStore(server.url)
    store.ping()
    server.stop()
    with pytest.raises(StorageFailed, match=r"^cannot write the shared cache redis://"):
        store.put(_request(), Reply(content="x"))


# -- evaluators sharing Redis ---------------------------------------------------------------------
def test_four_evaluators_with_their_own_local_caches_pay_once_per_prompt(
    url: str, tmp_path: Path
) -> None:
    """Four runs (here four evaluators with separate local caches, as four CI machines)
    want the same 16 prompts at once: one call per prompt, whoever makes it."""
    with FakeOpenAIServer(latency_s=0.2) as server:
        evaluators = [
            Evaluator(
                EvalConfig(
                    api_base=server.url,
                    cache_dir=str(tmp_path / f"job{n}"),
                    cache_url=url,
                    concurrency=4,
                )
            )
            for n in range(4)
        ]
        try:
            pairs = [(_item(i), "openai/oracle") for i in range(16)]
            for e in evaluators:
                e.prefetch(pairs)
            outcomes = [e.answer(i, m) for i, m in pairs for e in evaluators]
        finally:
            for e in evaluators:
                e.close()
        asked = server.stats()["total"]
    assert asked == 16 and all(o.correct for o in outcomes)
    assert sum(not o.cached for o in outcomes) == 16  # the others took the answer from Redis
    claims = redis.Redis.from_url(url).keys(f"{PREFIX}claim:*")
    assert claims == []  # every run dropped its claims at the end


# -- whole runs ---------------------------------------------------------------------------------
SUITE = """\
seed: 3
samples: 6
tasks:
  - {task: dyval.arithmetic, levels: [D1, D2]}
"""


def _cmd(server: FakeOpenAIServer, cache: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
            "s.yaml", "--llm", "openai/oracle", "--llm-api-base", server.url,
            "--reasoning-cache", cache, *args]  # fmt: skip


@pytest.mark.e2e
def test_concurrent_runs_on_a_shared_redis_pay_once_per_prompt_and_store_no_key(
    url: str, tmp_path: Path
) -> None:
    (tmp_path / "s.yaml").write_text(SUITE)
    env = {**os.environ, "OPENAI_API_KEY": "sk-planted-key-0123456789abcdef"}
    with FakeOpenAIServer(latency_s=0.1) as server:
        runs = [
            subprocess.Popen(
                _cmd(server, url, "--reasoning-cache-local", f"local{n}"),
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            for n in range(2)
        ]
        outputs = [run.communicate(timeout=600)[0] for run in runs]
        asked = server.stats()["total"]
    assert [run.returncode for run in runs] == [0, 0], "\n".join(o[-1500:] for o in outputs)
    assert f"reasoning: cache {tmp_path / 'local0'} first, then {url} (shared)" in outputs[0]
    raw = redis.Redis.from_url(url)
    answers = raw.keys(f"{PREFIX}answer:*")
    assert asked == len(answers) == 12  # one call per distinct prompt, across the two runs
    values = b"".join(raw.get(k) or b"" for k in answers)
    assert b"sk-planted" not in values and b"0123456789abcdef" not in values
    for n in range(2):  # and each run's local layer holds every answer it used
        db = sqlite3.connect(tmp_path / f"local{n}" / "responses.sqlite3")
        assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == 12
        db.close()


@pytest.mark.e2e
def test_redis_down_at_start_stops_the_run_before_any_call(
    own_redis_server: RedisServer, tmp_path: Path
) -> None:
    (tmp_path / "s.yaml").write_text(SUITE)
    gone = own_redis_server
    gone.stop()
    with FakeOpenAIServer() as server:
        done = subprocess.run(_cmd(server, gone.url), cwd=tmp_path, capture_output=True,
                              text=True, timeout=600)  # fmt: skip
        asked = server.stats()["total"]
    assert done.returncode == 4 and asked == 0
    errors = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith(
        f"ERROR: --reasoning-cache: cannot reach the shared cache {gone.url}: "
    )
    assert "Connection refused" in errors[0] and errors[0].endswith(
        "(start Redis or fix the URL; a folder, or 'off', runs without sharing answers)"
    )


@pytest.mark.e2e
def test_redis_lost_mid_run_goes_on_with_the_local_cache_and_says_so_once(
    own_redis_server: RedisServer, tmp_path: Path
) -> None:
    (tmp_path / "s.yaml").write_text(SUITE.replace("samples: 6", "samples: 20"))
    shared = own_redis_server
    with FakeOpenAIServer(latency_s=0.1) as server:
        run = subprocess.Popen(
            _cmd(server, shared.url, "--reasoning-concurrency", "2"),
            cwd=tmp_path, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 600  # a cap against a hang, not a speed claim
        while server.stats()["total"] < 6 and time.monotonic() < deadline:
            time.sleep(0.02)
        shared.stop()
        out = run.communicate(timeout=600)[0]
        asked = server.stats()["total"]
    assert run.returncode == 0, out[-3000:]
    notices = [ln for ln in out.splitlines() if "continuing on the local cache" in ln]
    assert len(notices) == 1, out[-3000:]
    assert notices[0].startswith("reasoning: cannot ")
    assert f"the shared cache {shared.url}: " in notices[0]
    db = sqlite3.connect(tmp_path / ".reasoning_cache" / "responses.sqlite3")
    kept = db.execute("SELECT count(*) FROM responses").fetchone()[0]
    db.close()
    assert asked == kept == 40  # every answer paid for is kept locally, none asked twice
