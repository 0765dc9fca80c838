"""The response cache: damaged or poisoned caches (SQLite and Redis) stop the run or are
asked again in one line, claims expire, and runs sharing a cache pay once per prompt."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from bounds import within
from hypothesis import strategies as st
from mutations import JSON_VALUES, mutated
from reliability_matrix import record, record_hardened

from conftest import PLAIN, inner_and_sweep
from pytest_reasoning.cli import main
from pytest_reasoning.core import Item
from pytest_reasoning.evaluate import EvalConfig, Evaluator
from pytest_reasoning.models.cache import ResponseCache, new_owner
from pytest_reasoning.models.shared_cache import PREFIX, RedisStore
from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.redis_server import RedisServer
from pytest_reasoning.testing.server import FakeOpenAIServer


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


SMALL = "seed: 3\nsamples: 2\ntasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n"


def _damaged_cache(folder: Path, answers: int = 300) -> bytes:
    """A cache of ``answers`` replies whose pages (not its header) were overwritten."""
    cache = ResponseCache(folder)
    conn = cache._connect()
    conn.executemany(
        "INSERT INTO responses VALUES (?, 'openai/oracle', 0, ?)",
        [(f"{i:064x}", json.dumps({"content": f"<<<{i}>>>"})) for i in range(answers)],
    )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cache.close()
    path = folder / "responses.sqlite3"
    size = path.stat().st_size
    with path.open("r+b") as fh:  # every page after the first: the header and schema intact
        fh.seek(4096)
        fh.write((bytes(range(256)) * 16 * ((size - 4096) // 4096 + 1))[: size - 4096])
    return path.read_bytes()


def test_a_damaged_cache_stops_the_run_before_any_call(pytester: pytest.Pytester) -> None:
    """Before: the start-up check passed, then every item failed with sqlite3.DatabaseError
    (266,011 lines, exit 1)."""
    pytester.makefile(".yaml", s=SMALL)
    folder = pytester.path / "cache"
    before = _damaged_cache(folder)
    with FakeOpenAIServer() as server:
        result = pytester.runpytest("--llm", "openai/oracle", "--llm-api-base", server.url,
                                    "--reasoning-cache", str(folder), PLAIN)  # fmt: skip
        asked = server.stats()["total"]
    assert result.ret == pytest.ExitCode.USAGE_ERROR and asked == 0
    (line,) = _lines(result.stderr.str())
    path = folder / "responses.sqlite3"
    assert line.startswith(f"ERROR: --reasoning-cache: the response cache {path} is damaged (")
    assert f"move its folder aside (mv {folder} {folder}.damaged) and rerun" in line
    assert path.read_bytes() == before  # nothing paid for was touched
    record(
        "damaged",
        "300 answers, every page but the first overwritten: exit 4 at start, one line naming the file and the "
        "`mv` that moves it aside, 0 requests, the file untouched",
    )


def test_damage_met_during_a_run_stops_it_in_one_line(tmp_path: Path) -> None:
    """Damage the start-up check could not see (the check skipped, as past its budget): the
    first read stops the evaluator from asking; the error names the file."""
    _damaged_cache(tmp_path)
    with FakeOpenAIServer() as server:
        evaluator = Evaluator(EvalConfig(api_base=server.url, cache_dir=str(tmp_path)))
        try:
            item = make_item(get_task("dyval.arithmetic"), "D1", 1, 0, {}, "direct")
            outcome = evaluator.answer(item, "openai/oracle")
            second = evaluator.answer(
                make_item(get_task("dyval.arithmetic"), "D1", 1, 1, {}, "direct"), "openai/oracle"
            )
        finally:
            evaluator.close()
        asked = server.stats()["total"]
    assert asked == 0 and outcome.correct is None and second.correct is None
    assert evaluator.storage_error is not None and "is damaged" in evaluator.storage_error
    assert outcome.error is not None and outcome.error.startswith(
        f"not asked: the response cache {tmp_path / 'responses.sqlite3'} is damaged"
    )


def test_frontier_with_a_damaged_cache_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _damaged_cache(tmp_path)
    argv = ["frontier", "--llm", "openai/x", "--llm-api-base", "http://127.0.0.1:9/v1", "--task",
            "dyval.arithmetic", "--knob", "depth", "--min", "1", "--max", "2", "--cache",
            str(tmp_path)]  # fmt: skip
    assert main(argv) == 4  # found before any call: usage, as the plugin's
    (line,) = _lines(capsys.readouterr().err)
    assert line.startswith(f"pytest-reasoning: error: the response cache {tmp_path}")
    assert "is damaged" in line


KILL_SUITE = """\
seed: 9
samples: 60
tasks:
  - {task: dyval.arithmetic, levels: [D1, D2]}
"""


def _item(index: int) -> Item:
    return make_item(get_task("dyval.arithmetic"), "D2", 5, index, {}, "direct")


def test_two_evaluators_sharing_a_cache_pay_once_per_prompt(tmp_path: Path) -> None:
    """Two runs (here two evaluators, as two processes would) want the same 12 prompts at
    once: the second waits for the first's answers instead of paying again."""
    with FakeOpenAIServer(latency_s=0.2) as server:
        config = EvalConfig(api_base=server.url, cache_dir=str(tmp_path), concurrency=4)
        first, second = Evaluator(config), Evaluator(config)
        try:
            pairs = [(_item(i), "openai/oracle") for i in range(12)]
            first.prefetch(pairs)
            second.prefetch(pairs)
            outcomes = [e.answer(i, m) for i, m in pairs for e in (first, second)]
        finally:
            first.close()
            second.close()
        asked = server.stats()["total"]
    assert asked == 12 and all(o.correct for o in outcomes)
    assert sum(o.cached for o in outcomes) >= 12  # one of each pair came from the other


def test_a_claim_is_taken_over_from_a_dead_holder_at_once_and_from_a_live_one_never(
    tmp_path: Path,
) -> None:
    cache = ResponseCache(tmp_path)
    me, other = new_owner(), new_owner()
    assert cache.claim("k", me, 600) and not cache.claim("k", other, 600)  # live: wait
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host, _pid, *_ = me.split("/")
    dead = f"{host}/{gone.pid}/1/x"
    cache._connect().execute("UPDATE claims SET owner = ? WHERE key = 'k'", (dead,))
    assert cache.claim("k", other, 600)  # a killed run's claim: taken over, no waiting
    cache._connect().execute("UPDATE claims SET expires = 0 WHERE key = 'k'")
    assert cache.claim("k", me, 600)  # an expired one too
    cache.release("k", me)
    assert cache.claim("k", other, 600)  # a released one
    cache.forget(other)
    assert cache._connect().execute("SELECT count(*) FROM claims").fetchone()[0] == 0
    cache.close()


@pytest.mark.e2e
def test_two_concurrent_runs_sharing_a_cache_pay_once_per_prompt(tmp_path: Path) -> None:
    """Before: two runs sharing one cache made 479 calls for 276 prompts."""
    (tmp_path / "k.yaml").write_text(KILL_SUITE.replace("samples: 60", "samples: 10"))
    with FakeOpenAIServer(latency_s=0.1) as server:
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "k.yaml",
               "--llm", "openai/oracle", "--llm-api-base", server.url,
               "--reasoning-cache", "shared", "--reasoning-concurrency", "4"]  # fmt: skip
        runs = [subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, text=True)
                for _ in range(2)]  # fmt: skip
        outputs = [run.communicate(timeout=600)[0] for run in runs]
        asked = server.stats()["total"]
    assert [run.returncode for run in runs] == [0, 0], outputs[0][-2000:] + outputs[1][-2000:]
    db = sqlite3.connect(tmp_path / "shared" / "responses.sqlite3")
    prompts = db.execute("SELECT count(*) FROM responses").fetchone()[0]
    db.close()
    assert asked == prompts, (asked, prompts)  # one call per distinct prompt
    record(
        "claims",
        f"two runs at once on one cache, {prompts} distinct prompts: {asked} calls",
    )


# 40 fresh caches (320 opens: about 3 failures expected before the fix) in the inner loop;
# the 150 of the sweep, which CI runs, make a regression all but certain to show.
@pytest.mark.parametrize("caches", [40, pytest.param(150, marks=pytest.mark.e2e)])
def test_threads_opening_a_fresh_cache_at_once_all_get_it(tmp_path: Path, caches: int) -> None:
    """Before: switching a fresh file to WAL took an exclusive lock that SQLite refused at
    once while another connection opened it ("database is locked", not waited out: 4 of 480
    opens failed in a script of 60 fresh caches x 8 threads; CI once failed a narrate test on
    it). The mode is now asked first and a refusal retried."""
    failed: list[BaseException] = []

    def open_one(folder: Path) -> None:
        try:
            ResponseCache(folder)._connect()
        except BaseException as exc:  # the test counts every failure, whatever it is
            failed.append(exc)

    for k in range(caches):
        folder = tmp_path / str(k)
        threads = [threading.Thread(target=open_one, args=(folder,)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failed, failed[:3]


SMALL_TWO_LEVELS = "seed: 3\nsamples: 3\ntasks:\n  - {task: dyval.arithmetic, levels: [D1, D2]}\n"


def _item_at_level(index: int, level: str = "D2") -> Item:
    return make_item(get_task("dyval.arithmetic"), level, 5, index, {}, "direct")


def _valid(**change: Any) -> dict[str, Any]:
    base = {"content": "<<<1>>>", "error": None, "prompt_tokens": 30, "completion_tokens": 4,
            "latency_s": 0.2, "finish_reason": "stop", "cost_usd": None}  # fmt: skip
    return {**base, **change}


# What the probe and a careless writer put into caches; each is a miss, asked again.
POISONS: dict[str, str] = {
    "prompt_tokens 'NaN'": json.dumps(_valid(prompt_tokens="NaN")),
    "content 42": json.dumps(_valid(content=42)),
    "content a list": json.dumps(_valid(content=["<<<1>>>"])),
    "latency NaN": json.dumps(_valid(latency_s=float("nan"))),
    "negative tokens": json.dumps(_valid(completion_tokens=-3)),
    "an error stored": json.dumps(_valid(error="HTTP 500", content=None)),
    "a 1,000,001-character reply": json.dumps(_valid(content="x" * 1_000_001)),
    "reasoning_text 7": json.dumps(_valid(reasoning_text=7)),
    "reasoning_text never clipped": json.dumps(_valid(reasoning_text="x" * 50_000)),
    "not JSON": "{'content': '<<<1>>>'",
    "JSON 5,000 deep": "[" * 5000 + "]" * 5000,
    "a list": "[1, 2, 3]",
}


def _poison_sqlite(folder: Path, keys: list[str], values: list[str]) -> None:
    ResponseCache(folder).close()  # the tables
    db = sqlite3.connect(folder / "responses.sqlite3")
    db.executemany(
        "INSERT OR REPLACE INTO responses VALUES (?, 'openai/oracle', 0, ?)",
        zip(keys, values, strict=True),
    )
    db.commit()
    db.close()


def test_poisoned_answers_in_the_sqlite_cache_are_asked_again_and_overwritten(
    tmp_path: Path,
) -> None:
    """Before: ``prompt_tokens: "NaN"`` and a ``content`` of the wrong type came back as
    cached replies (an INTERNALERROR and 5 tracebacks of ~1,000 lines in a run), replayed on
    every rerun."""
    items = [_item_at_level(i) for i in range(len(POISONS))]
    with FakeOpenAIServer() as server:
        config = EvalConfig(api_base=server.url, cache_dir=str(tmp_path))
        first = Evaluator(config)
        keys = [first.request_for(i, "openai/oracle").key for i in items]
        _poison_sqlite(tmp_path, keys, list(POISONS.values()))
        try:
            outcomes = [first.answer(i, "openai/oracle") for i in items]
            notices = first.cache.notices  # type: ignore[union-attr]
        finally:
            first.close()
        asked = server.stats()["total"]
        again = Evaluator(config)
        try:
            rerun = [again.answer(i, "openai/oracle") for i in items]
        finally:
            again.close()
        asked_again = server.stats()["total"] - asked
    assert asked == len(POISONS), asked  # each poisoned answer asked again, once
    assert all(o.correct and not o.cached and isinstance(o.prompt_tokens, int) for o in outcomes)
    assert all(o.cached and o.correct for o in rerun) and asked_again == 0  # overwritten
    (text,) = notices.values()  # named once, whatever the count
    assert "\n" not in text and "asked again and overwritten" in text, text
    record_hardened(
        "poisoned-sqlite",
        f"{len(POISONS)} poisoned answers ({', '.join(POISONS)}): no traceback, each a miss "
        f"asked again ({asked} requests) and overwritten, named once; the rerun took all "
        f"{len(items)} from the cache ({asked_again} requests)",
    )


def test_a_run_over_a_poisoned_cache_finishes(pytester: pytest.Pytester) -> None:
    """Before: the first poisoned answer read (``prompt_tokens: "NaN"``) ended the run with
    an INTERNALERROR, exit 3, after 2 of 31 samples."""
    pytester.makefile(".yaml", s=SMALL_TWO_LEVELS)
    folder = pytester.path / "cache"
    with FakeOpenAIServer() as server:
        common = ["--llm", "openai/oracle", "--llm-api-base", server.url,
                  "--reasoning-cache", str(folder), PLAIN]  # fmt: skip
        assert pytester.runpytest(*common).ret == 0
        db = sqlite3.connect(folder / "responses.sqlite3")
        kinds = list(POISONS.values())
        for n, (key,) in enumerate(db.execute("SELECT key FROM responses").fetchall()):
            db.execute("UPDATE responses SET reply = ? WHERE key = ?", (kinds[n % 3], key))
        db.commit()
        poisoned = db.execute("SELECT count(*) FROM responses").fetchone()[0]
        db.close()
        before = server.stats()["total"]
        result = pytester.runpytest(*common, "--reasoning-results=r.jsonl")
        asked = server.stats()["total"] - before
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert asked == poisoned == 6
    rows = [json.loads(x) for x in (pytester.path / "r.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["correct"] and not r.get("cached") for r in rows)


@pytest.fixture
def url(redis_server: RedisServer) -> str:
    redis.Redis.from_url(redis_server.url).flushdb()
    return redis_server.url


def test_poisoned_values_in_a_shared_redis_are_asked_again_and_overwritten(url: str) -> None:
    """Before: a value of the wrong types came back as a reply, a 50 MB value became a 250 MB
    results file, and a key of another Redis type (WRONGTYPE) stopped every job sharing it."""
    raw = redis.Redis.from_url(url)
    items = [_item_at_level(i, "D1") for i in range(len(POISONS) + 2)]
    with FakeOpenAIServer() as server:
        config = EvalConfig(api_base=server.url, cache_dir=None, cache_url=url)
        evaluator = Evaluator(config)
        keys = [evaluator.request_for(i, "openai/oracle").key for i in items]
        wrapped = [f'{{"model": "openai/oracle", "created": 0, "reply": {v}}}'
                   for v in POISONS.values()]  # fmt: skip
        for key, value in zip(keys, wrapped, strict=False):
            raw.set(f"{PREFIX}answer:{key}", value)
        raw.set(f"{PREFIX}answer:{keys[-2]}", "x" * 13_000_000)  # past any reply's size
        raw.rpush(f"{PREFIX}answer:{keys[-1]}", "not a string")  # WRONGTYPE for GET
        try:
            outcomes = [evaluator.answer(i, "openai/oracle") for i in items]
            notices = evaluator.cache.notices  # type: ignore[union-attr]
        finally:
            evaluator.close()
        asked = server.stats()["total"]
    assert asked == len(items) and all(o.correct and not o.cached for o in outcomes)
    store = RedisStore(url)
    try:
        found = [store.get(evaluator.request_for(i, "openai/oracle")) for i in items]
    finally:
        store.close()
    assert all(f is not None and f.cached for f in found)  # every value overwritten
    (text,) = notices.values()
    assert "\n" not in text and "asked again and overwritten" in text
    record_hardened(
        "poisoned-redis",
        f"the same {len(POISONS)} poisons, a 13 MB value and a list under an answer's key "
        f"(WRONGTYPE): {asked} requests, every value overwritten, the run never stopped",
    )


def test_a_claim_without_an_expiry_gets_one_and_its_holder_is_named(tmp_path: Path) -> None:
    """Before: a claim stored with no usable expiry (infinity, text) was waited on forever, in
    silence."""
    cache = ResponseCache(tmp_path)
    me = new_owner()
    db = cache._connect()
    for key, expires in (("inf", float("inf")), ("text", "never"), ("far", time.time() + 1e9)):
        db.execute("INSERT INTO claims VALUES (?, 'ci-7/4242/1/x', ?)", (key, expires))
        assert not cache.claim(key, me, 0.3)  # a live holder elsewhere: wait…
        holder = cache.holder(key)
        # <= 0.3 s left: ours (on a loaded machine it may be over already, never longer)
        assert holder is not None and holder[0] == "ci-7/4242/1/x" and holder[1] <= 0.3
    (text,) = cache.notices.values()
    assert "claimed by pid 4242 on ci-7" in text and "expiring in 0s" in text
    time.sleep(0.4)
    assert all(cache.claim(key, me, 600) for key in ("inf", "text", "far"))  # …then take over
    cache.close()


def test_a_redis_claim_without_a_ttl_gets_one(url: str) -> None:
    """Before: ``SET claim:KEY holder`` without PX (by hand, or a tool) blocked every run."""
    raw = redis.Redis.from_url(url)
    raw.set(f"{PREFIX}claim:k", "ci-7/4242/1/x")  # no expiry
    store = RedisStore(url)
    me = new_owner()
    try:
        assert not store.claim("k", me, 60)  # 60 s: still there to read on a loaded machine
        assert 0 < raw.pttl(f"{PREFIX}claim:k") <= 60_000
        holder = store.holder("k")
        assert holder is not None and holder[0] == "ci-7/4242/1/x"
        assert "claimed by pid 4242 on ci-7" in store.notices["cache-claim"]
        raw.pexpire(f"{PREFIX}claim:k", 1)  # its end, without waiting a minute
        time.sleep(0.01)
        assert store.claim("k", me, 600)
    finally:
        store.close()


def _fuzzed_cache_values_are_an_answer_or_a_miss(fuzz_dir: Path, value: str) -> None:
    """Whatever a cache row holds, reading it gives a valid reply or a miss (named once):
    never an exception, never a reply a run cannot use."""
    from pytest_reasoning.models.base import ChatRequest

    cache = ResponseCache(fuzz_dir / "cache")
    request = ChatRequest(model="openai/m", messages=(("user", "q"),))
    db = cache._connect()
    db.execute("INSERT OR REPLACE INTO responses VALUES (?, 'm', 0, ?)", (request.key, value))
    try:
        with within():
            found = cache.get(request)
    finally:
        cache.close()
    if found is None:
        (text,) = cache.notices.values()
        assert "\n" not in text
    else:
        assert isinstance(found.content, str) and found.error is None and found.cached
        for n in (found.prompt_tokens, found.completion_tokens):
            assert n is None or (isinstance(n, int) and n >= 0)
        json.dumps(found.to_dict(), allow_nan=False)  # a results row can hold it


(
    test_fuzzed_cache_values_are_an_answer_or_a_miss,
    test_fuzzed_cache_values_are_an_answer_or_a_miss_sweep,
) = inner_and_sweep(
    _fuzzed_cache_values_are_an_answer_or_a_miss,
    10,
    30,
    JSON_VALUES.map(json.dumps) | mutated(_valid()) | st.sampled_from(list(POISONS.values())),
)
