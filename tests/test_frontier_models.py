"""Frontier models work on the first try (issue 19): model configuration files, reasoning
models' parameters and replies, causes that reach the terminal at once, repeats. The runs go
over real HTTP through LiteLLM to the project's test server, whose models behave like those
providers (reject temperature 0, think blocks, truncation, reasoning_content, a 401 that echoes
the key)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_reasoning.core import Item, Outcome, Reply
from pytest_reasoning.errors import InvalidArgument, ReasoningError
from pytest_reasoning.evaluate import EvalConfig, Evaluator, score_reply
from pytest_reasoning.gates import GateRule, GateSpec, LevelStats, decide_gates
from pytest_reasoning.gates.clustered import (
    clustered_interval,
    design_effect,
    majority_correct,
    pass_at_k,
    pass_hat_k,
)
from pytest_reasoning.models.base import MAX_REASONING_CHARS, error_text
from pytest_reasoning.models.endpoints import parse_model_list
from pytest_reasoning.models.litellm_client import check_litellm_version
from pytest_reasoning.registry import get_task
from pytest_reasoning.stats import wilson_interval
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer, key_digest


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def arithmetic(index: int = 0) -> Item:
    return make_item(get_task("dyval.arithmetic"), "D1", 1, index)


# -- unit: versions, replies, redaction, statistics, configuration ----------------------------
@pytest.mark.parametrize(
    "version", ["1.82.7.0", "1.82.7rc1", "1.82.8.post2", "1.107", "1.107.0.0", "1.107.5", "v1.107"]
)
def test_every_spelling_of_a_compromised_litellm_is_refused(version: str) -> None:
    with pytest.raises(ReasoningError, match="compromised release"):
        check_litellm_version(version)


@pytest.mark.parametrize("version", ["1.106.2", "1.108", "1.82.70", "1.10.7", "1.82.6.9"])
def test_neighbouring_litellm_versions_are_accepted(version: str) -> None:
    check_litellm_version(version)


def test_a_truncated_reply_is_never_correct_whatever_it_mentions() -> None:
    item = arithmetic()
    right = f"<<<{item.answer}>>>"
    cut = score_reply(item, "m", Reply(content=f"So {right} and", finish_reason="length"))
    unclosed = score_reply(
        item, "m", Reply(content=f"<think>it is {right}, or", finish_reason="stop")
    )
    thought = score_reply(item, "m", Reply(content=f"<think><<<-1>>>?</think>\n{right}"))
    no_open = score_reply(item, "m", Reply(content=f"<<<-1>>>? no.</think> {right}"))
    empty = score_reply(item, "m", Reply(content="", finish_reason="length", reasoning_tokens=900))
    assert [o.failure_mode for o in (cut, unclosed, empty)] == ["truncated"] * 3
    assert not any(o.correct for o in (cut, unclosed, empty))
    assert thought.correct and no_open.correct and thought.reasoning == "tags"
    assert cut.finish_reason == "length" and empty.reasoning_tokens == 900


def test_lenient_extraction_is_opt_in_and_recorded() -> None:
    item = arithmetic()
    reply = Reply(content=f"Thus \\boxed{{{item.answer}}}.")
    strict = score_reply(item, "m", reply)
    lenient = score_reply(item, "m", reply, lenient=True)
    said = score_reply(item, "m", Reply(content=f"The answer is {item.answer}."), lenient=True)
    assert (strict.correct, strict.failure_mode, strict.extraction) == (
        False,
        "no_answer",
        "strict",
    )
    assert lenient.correct and lenient.extraction == "lenient:boxed"
    assert said.correct and said.extraction == "lenient:answer-is"


def test_errors_are_redacted_before_they_are_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    key = "k3y-" + "abcdefghijklmnopqrstuvwx"  # 28 characters, in a variable not named *KEY
    monkeypatch.setenv("MY_CREDS", key)
    from pytest_reasoning.models.base import register_secret_env

    register_secret_env("MY_CREDS")
    message = "AuthenticationError: " + "x" * 255 + f" You passed: {key}."
    assert message.index(key) < 300 < message.index(key) + len(key)  # the cut falls inside it
    assert error_text(message).endswith("You passed: ***.")
    assert error_text(message[:300]) != error_text(message)[:300]  # cutting first would leak


def test_errors_retrying_cannot_fix_stop_the_model() -> None:
    from pytest_reasoning.models.litellm_client import classify_error

    def exc(name: str, message: str = "", status: int | None = None) -> Exception:
        return type(name, (Exception,), {"status_code": status})(message)

    stop = [
        exc("AuthenticationError", "bad key", 401),
        exc("InternalServerError", "OpenAIException - Missing credentials. Please pass", 500),
        exc("NotFoundError", "unknown model", 404),
        exc("UnsupportedParamsError", "temperature=0", 400),
        exc("APIError", "forbidden", 403),
        ReasoningError("litellm 1.82.7 is a compromised release"),
    ]
    assert {classify_error(e, answered_before=True) for e in stop} == {"stop"}
    bad = exc("BadRequestError", "prompt rejected", 400)
    assert classify_error(bad, answered_before=False) == "stop"  # the configuration
    assert classify_error(bad, answered_before=True) == "request"  # this request only
    assert (
        classify_error(exc("ContextWindowExceededError", "too long", 400), answered_before=False)
        == "request"
    )
    for transient in (
        exc("RateLimitError", "slow down", 429),
        exc("Timeout"),
        exc("InternalServerError", "oops", 500),
    ):
        assert classify_error(transient, answered_before=False) == "transient"


def test_clustered_interval_lies_between_items_and_samples() -> None:
    # 20 items x 5 repeats; items are either always right or always wrong: samples of an item
    # carry no more information than the item, so n_eff is the number of items.
    agree = [[1.0] * 5 if i % 2 else [0.0] * 5 for i in range(20)]
    assert design_effect(agree) == pytest.approx(5.0)
    assert clustered_interval(agree) == pytest.approx(wilson_interval(10, 20))
    # Right at random within every item: as informative as 100 independent samples.
    mixed = [[1.0, 0.0, 1.0, 0.0, float(i % 2)] for i in range(20)]
    assert design_effect(mixed) == pytest.approx(1.0)
    hits = sum(map(sum, mixed))
    assert clustered_interval(mixed) == pytest.approx(wilson_interval(hits, 100))
    assert design_effect([[1.0] * 5] * 3) == 5.0  # all right: no spread to learn from


def test_pass_at_k_and_majority_vote() -> None:
    assert pass_at_k(5, 0, 5) == 0.0 and pass_at_k(5, 1, 5) == 1.0
    assert pass_at_k(5, 1, 1) == pytest.approx(0.2)
    assert pass_at_k(10, 3, 2) == pytest.approx(1 - 21 / 45)
    assert majority_correct([("7", True), ("3", False), ("7", True)])
    assert not majority_correct([("3", False), ("7", True)])  # a tie: the first answer given
    assert not majority_correct([(None, False), (None, False), ("7", True)])


def test_pass_hat_k_is_every_one_of_k_samples_right() -> None:
    """pass^k (Yao et al. 2024): C(c, k) / C(n, k), unbiased; 1 - it is not pass@k."""
    assert pass_hat_k(5, 5, 5) == 1.0 and pass_hat_k(5, 4, 5) == 0.0
    assert pass_hat_k(5, 3, 1) == pytest.approx(0.6)  # pass^1 is the accuracy
    assert pass_hat_k(10, 7, 3) == pytest.approx(35 / 120)
    assert pass_hat_k(3, 2, 3) == 0.0 and pass_at_k(3, 2, 3) == 1.0
    with pytest.raises(ValueError, match="pass\\^k needs 0 < k <= n"):
        pass_hat_k(2, 1, 3)
    # A level gated on pass^3: three items right 3/3, 2/3 and 1/3 of the time.
    spec = GateSpec("s.yaml", "t", "L", GateRule(min_accuracy=0.3, metric="pass^3"))
    stats = LevelStats("m", spec, "t")
    for item, right in enumerate((3, 2, 1)):
        for r in range(3):
            stats.add(
                Outcome(f"t[L-{item}-r{r}]", "m", "t", "L", 1, "p", "x", "x", "x",
                        r < right, None, None, None, None, 0.0, repeat=r, repeats=3)
            )  # fmt: skip
    assert stats.pass_all() == pytest.approx(1 / 3) and stats.pass_at() == 1.0
    assert stats.measure == pytest.approx(1 / 3)
    (result,) = decide_gates([stats])
    assert result.passed and result.reason.startswith(
        "pass^3 0.333 (1.0/3 items) >= min_accuracy 0.3"
    )
    assert stats.interval() == pytest.approx(wilson_interval(1.0, 3))  # over items


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


def test_baseline_pairs_items_over_repeats_by_their_means() -> None:
    from pytest_reasoning.gates import GateRule, GateSpec, baseline_answers, compare

    spec = GateSpec("s", "e", "D1", GateRule())

    def sample(model: str, item: int, repeat: int, correct: bool) -> Outcome:
        return Outcome(
            f"e[D1-s1-{item:03d}-r{repeat}]", model, "t", "D1", 1, f"p{item}", "", str(correct),
            "True", correct, None, None, None, None, 0.0, repeat=repeat, repeats=3,
        )  # fmt: skip

    # The candidate is right on items 0-5 in 2 of 3 samples, wrong on 6-9; the baseline
    # (asked once) is right everywhere: 10 items, not 3 x 10 samples. The majority votes
    # (the table) disagree on 4 items; the per-item means, which the test compares, on all
    # 10 (issue 39: majority votes hid lost consistency).
    cand = [sample("c", i, r, i < 6 and r != 2) for i in range(10) for r in range(3)]
    base = baseline_answers([sample("b", i, 0, True) for i in range(10)])
    assert len(base) == 10 and all(base.values())
    (c,) = compare([(o, spec) for o in cand], base, "b")
    assert (c.table.n, c.table.both, c.table.only_baseline) == (10, 6, 4)
    assert c.means is not None and (c.means.worse, c.means.tied) == (10, 0)
    assert c.candidate_accuracy == pytest.approx(0.4) and c.baseline_accuracy == 1.0


def test_results_of_other_styles_repeats_and_models_do_not_overwrite(tmp_path: Path) -> None:
    from pytest_reasoning.gates import read_results

    base = Outcome(
        "x[D1-s1-000]",
        "local",
        "t",
        "D1",
        1,
        "p1",
        "r",
        "1",
        "1",
        True,
        None,
        None,
        None,
        None,
        0.0,
    ).to_dict()
    variants = [
        base,
        {**base, "prompt_sha256": "p2", "style": "cot"},  # the same item, another prompt
        {**base, "model_id": "local=a.gguf#11"},  # another GGUF, also "local"
        {**base, "model_id": "local=b.gguf#22"},
        {**base, "item_id": "x[D1-s1-000-r1]", "repeat": 1, "repeats": 2},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*variants, variants[-1]]))
    kept = list(read_results(path))
    # The older row without model_id gives way to the rows that name the GGUF.
    assert len(kept) == 4 and {r.get("model_id") for r in kept} == {
        None,
        "local=a.gguf#11",
        "local=b.gguf#22",
    }


def test_local_models_are_known_by_their_file_hash_not_their_size(tmp_path: Path) -> None:
    from pytest_reasoning.models.local import LocalServer

    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    a.write_bytes(b"GGUF" + b"\x00" * 60)
    b.write_bytes(b"GGUF" + b"\x01" * 60)  # the same size
    ids = [LocalServer(model_file=p).identity for p in (a, b)]
    assert ids[0].startswith("local:a.gguf#") and ids[1].startswith("local:b.gguf#")
    assert ids[0].split("#")[1] != ids[1].split("#")[1]


def test_report_keeps_two_models_of_one_name_apart(tmp_path: Path) -> None:
    from pytest_reasoning.cli.results import _read_all

    row = {"item_id": "x[D1-s1-000]", "model": "local", "task": "t", "level": "D1", "seed": 1,
           "prompt_sha256": "p", "response": "<<<1>>>", "extracted": "1", "gold": "1",
           "correct": True, "failure_mode": None, "error": None, "prompt_tokens": 1,
           "completion_tokens": 1, "latency_s": 0.1}  # fmt: skip
    for name in ("a", "b"):
        (tmp_path / f"{name}.jsonl").write_text(
            json.dumps({**row, "model_id": f"local=openai/smol@local:{name}.gguf#{name * 4}"})
        )
    got = _read_all([str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")])
    assert sorted(r["model"] for r in got) == [
        "local=openai/smol@local:a.gguf#aaaa",
        "local=openai/smol@local:b.gguf#bbbb",
    ]


def test_a_level_whose_every_sample_failed_is_not_a_failed_gate() -> None:
    from pytest_reasoning.gates import GateRule, GateSpec, LevelStats, decide_gates

    stats = LevelStats("m", GateSpec("s", "e", "D1", GateRule(min_accuracy=0.5)), "t")
    failed = Outcome(
        "i",
        "m",
        "t",
        "D1",
        1,
        "p",
        None,
        None,
        "1",
        None,
        None,
        "HTTP 401",
        None,
        None,
        0.0,
        error_kind="stop",
    )
    stats.add(failed)
    (gate,) = decide_gates([stats])
    assert gate.passed is None and "infrastructure" in gate.reason


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


# -- end to end, over HTTP ------------------------------------------------------------------------
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


CONFIG = """\
model_list:
  - model_name: bad
    litellm_params:
      model: openai/bad-key
      api_base: {url}
      api_key: os.environ/TEAM_CREDS
"""


@pytest.mark.e2e
def test_a_bad_key_stops_at_once_prints_the_cause_and_exits_6(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "team-0123456789abcdefghijklmnopq"  # in a variable not named like a key
    monkeypatch.setenv("TEAM_CREDS", secret)
    pytester.makefile(".yaml", s=SUITE, models=CONFIG.format(url=fake_server.url))
    res, junit = pytester.path / "r.jsonl", pytester.path / "j.xml"
    result = run(
        pytester,
        "--llm-config",
        "models.yaml",
        "--llm",
        "bad",
        f"--reasoning-results={res}",
        f"--junitxml={junit}",
    )
    assert result.ret == 6, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*reasoning: bad stopped (infrastructure, not the model): AuthenticationError: *"
            "You passed: ***. (HTTP 401, not retried; no further calls to this model)",
            "*1 model call(s) failed (budget --reasoning-max-errors=0), 1 level(s) got no answer at "
            "all: infrastructure, not the model*cause: bad: AuthenticationError*",
            # The samples after the stop were never asked: their levels are not decided.
            "reasoning: 2 level(s) were cut short: calls stopped after an error, their gates not "
            "decided: *; fix the cause above and rerun*",
            "*errors of bad (*):",
            "*x not asked: an error above stopped calls to bad",
        ]
    )
    # One call: the first call of a model goes alone, and its 401 stops the rest (under
    # xdist, one per worker).
    assert fake_server.stats()["requests"]["bad-key"] == 1
    assert fake_server.stats()["keys"]["bad-key"] == [key_digest(secret)]
    for text in (result.stdout.str(), result.stderr.str(), res.read_text(), junit.read_text()):
        assert secret[:8] not in text and secret[-8:] not in text


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


@pytest.mark.e2e
@pytest.mark.parametrize("sequential", [False, True])
def test_pass_hat_k_gates_a_model_right_on_2_of_3_repeats(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, sequential: bool
) -> None:
    """Model right:2/3 answers every item right 2 times in 3: pass@3 passes, pass^3 fails
    (fixed n, and sequential: a level settled by the anytime test on per-item values)."""
    pytester.makefile(
        ".yaml",
        s="samples: 10\nrepeats: 3\n"
        + f"sequential: {str(sequential).lower()}\n"
        + "tasks:\n"
        + "  - task: dyval.reachability\n"
        + "    levels: {D2: {min_accuracy: 0.5, metric: pass@3}, D3: {min_accuracy: 0.5, metric: pass^k}}\n",
    )
    args = ("--llm", "openai/right:2/3", "--llm-api-base", fake_server.url, "--reasoning-cache", "off")
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines_random(
        [
            "*GATE FAILED openai/right:2/3 dyval.reachability D3: *pass^k 0.000 (0.0*< min_accuracy 0.5*",
            "FAILED s.yaml::dyval.reachability?D3-gate? - *",
        ]
    )
    assert "D2-gate" not in "\n".join(ln for ln in result.outlines if ln.startswith("FAILED"))


@pytest.mark.e2e
@pytest.mark.fresh_process  # asserts that a warm rerun never imports litellm
def test_repeats_give_k_cached_samples_per_item_and_pass_at_k(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(
        ".yaml",
        s="samples: 4\nrepeats: 5\ntasks:\n  - {task: dyval.arithmetic, levels: {D1: {min_accuracy: 0.1, confidence: 0.9}}}\n",
    )
    res = pytester.path / "r.jsonl"
    args = ("--llm", "openai/coin", "--llm-api-base", fake_server.url, f"--reasoning-results={res}")
    first = run(pytester, *args)
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    first.stdout.fnmatch_lines(["*k*pass@k*majority*", "openai/coin*D1*20*5*"])
    got = rows(res)
    assert sorted(r["item_id"][-4:] for r in got) == sorted(
        f"-r{k}]" for k in range(5) for _ in range(4)
    )
    db = pytester.path / ".reasoning_cache" / "responses.sqlite3"
    assert sqlite3.connect(db).execute("select count(*) from responses").fetchone()[0] == 20
    assert fake_server.stats()["total"] == 20  # identical requests, five answers each
    # A warm rerun replays all five, asks nothing, and does not even import litellm (what
    # each model accepts was kept beside the cache).
    pytester.makeconftest(
        "import sys\n"
        "def pytest_unconfigure(config):\n"
        "    open('imported.txt', 'w').write(str('litellm' in sys.modules))\n"
    )
    again = run(pytester, *args)
    assert again.ret == pytest.ExitCode.OK and fake_server.stats()["total"] == 20
    assert (pytester.path / "imported.txt").read_text() == "False"
    # --reasoning-repeats overrides the suite's.
    listed = pytester.runpytest("--llm", "reference", "--reasoning-repeats", "2", "--co", "-q")
    listed.stdout.fnmatch_lines(
        ["s.yaml::dyval.arithmetic[[]D1-s1-000-r1[]]", "9 tests collected*"]
    )


@pytest.mark.e2e
def test_items_are_answered_in_collection_order(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(
        ".yaml", s="samples: 6\ntasks:\n  - task: dyval.arithmetic\n    levels: [D2]\n"
    )
    result = run(
        pytester,
        "--llm",
        "openai/oracle",
        "--llm-api-base",
        fake_server.url,
        "--reasoning-concurrency",
        "1",
        "--reasoning-cache",
        "off",
    )
    assert result.ret == pytest.ExitCode.OK
    task = get_task("dyval.arithmetic")
    expected = [key_digest(make_item(task, "D2", 1, i).prompt) for i in range(6)]
    assert fake_server.stats()["order"] == expected


@pytest.mark.e2e
def test_frontier_cli_takes_a_model_config(tmp_path: Path, fake_server: FakeOpenAIServer) -> None:
    import subprocess
    import sys

    config = tmp_path / "m.yaml"
    config.write_text(
        CONFIG.replace("bad-key", "shallow:3")
        .format(url=fake_server.url)
        .replace("api_key: os.environ/TEAM_CREDS", "max_tokens: 64")
    )
    cmd = [
        sys.executable,
        "-m",
        "pytest_reasoning.cli",
        "frontier",
        "--llm-config",
        str(config),
        "--llm",
        "bad",
        "--task",
        "dyval.arithmetic",
        "--knob",
        "depth",
        "--min",
        "2",
        "--max",
        "5",
        "--max-samples",
        "10",
        "--cache",
        "off",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "frontier: depth = 3" in done.stdout
