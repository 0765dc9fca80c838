"""A run's budget (issue 32.2): limits parsed in one line, spend counted on the calls made
now, and a run that reaches its budget stops asking — nothing paid is lost, the rest is not
asked, levels cut short are not decided, and a rerun with a larger budget pays only for what
was not asked. Every request is accounted for (issue 39): the spend line's calls are the
requests the endpoint received, at the default concurrency, with -n 2, repeats and sequential
gates; identical prompts in flight are one request; a budget is overrun by at most the calls
in flight when it was reached. Over real HTTP to the project's test server, which counts."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import re
from pathlib import Path

import pytest

from pytest_reasoning.budget import Budget, Meter, Spend, Ticket
from pytest_reasoning.core import Outcome, Reply
from pytest_reasoning.errors import InvalidArgument
from pytest_reasoning.gates import load_results
from pytest_reasoning.plugin.signals import Signals
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.testing.server import FakeOpenAIServer


def test_budgets_are_parsed_in_one_line() -> None:
    assert Budget.parse(["usd=5,tokens=2e6"]) == Budget(5.0, 2e6)
    assert Budget.parse(["usd=0.5", "tokens=100"]) == Budget(0.5, 100.0)
    assert str(Budget(5.0, 2e6)) == "usd=5,tokens=2,000,000"
    assert not Budget()
    for bad, words in (
        ("eur=5", "expected usd=AMOUNT and/or tokens=COUNT"),
        ("usd=-1", "usd: expected a positive number"),
        ("tokens=nan", "tokens: expected a positive number"),
        ("usd", "expected usd=AMOUNT"),
    ):
        with pytest.raises(InvalidArgument, match=words):
            Budget.parse([bad])


def _outcome(model: str, *, cached: bool = False, cost: float | None = 0.01) -> Outcome:
    return Outcome(
        "t[D1-s1-000]", model, "t", "D1", 1, "h", "<<<1>>>", "1", "1", True, None, None,
        100, 20, 0.1, cached=cached, cost_usd=cost,
    )  # fmt: skip


def test_spend_counts_calls_made_now() -> None:
    spend = Spend()
    spend.add(_outcome("a"))
    spend.add(_outcome("a", cached=True))  # the cache is free
    spend.add(_outcome("b", cost=None))  # an unpriced model: tokens only
    assert spend.total_tokens == 240 and spend.total_usd == pytest.approx(0.01)
    assert spend.reached(Budget(tokens=300)) is None
    # The amount is the spend line's (the final one), never a second figure that differs.
    assert spend.reached(Budget(tokens=240)) == "the budget tokens=240 was reached"
    assert spend.reached(Budget(usd=0.01)) == "the budget usd=0.01 was reached"
    assert spend.line(Budget(usd=1)) == "spent $0.0100 and 240 tokens on 2 call(s) (1% of usd=1)"


SUITE = """\
seed: 3
samples: 12
tasks:
  - task: dyval.arithmetic
    levels:
      D1: {min_accuracy: 0.5}
      D2: {min_accuracy: 0.5}
"""


def _run(pytester: pytest.Pytester, server: FakeOpenAIServer, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "no:randomly", "-p", "no:cacheprovider", "--llm-api-base", server.url,
        "--reasoning-concurrency", "1", *args,
    )  # fmt: skip


@pytest.mark.e2e
def test_a_token_budget_stops_asking_and_a_rerun_pays_only_the_rest(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(".yaml", s=SUITE)
    first = _run(
        pytester, fake_server, "--llm", "openai/oracle", "--reasoning-budget", "tokens=1500",
        "--reasoning-results", "r.jsonl",
    )  # fmt: skip
    out = first.stdout.str()
    assert first.ret == pytest.ExitCode.INTERRUPTED, out
    assert "reasoning: the budget tokens=1,500 was reached" in out
    assert "reasoning: STOPPED: the budget tokens=1,500 was reached" in out
    rows = [json.loads(line) for line in Path(pytester.path, "r.jsonl").read_text().splitlines()]
    asked = [r for r in rows if r["error"] is None]
    not_asked = [r for r in rows if r["error_kind"] == "not_asked"]
    assert asked and not_asked and len(asked) + len(not_asked) == 24
    assert fake_server.stats()["requests"] == {"oracle": len(asked)}  # none past the stop
    assert "cut short by the budget, their gates not decided" in out
    assert "NOT ASKED" not in out and "I" not in out.split("\n\ns.yaml ")[-1].split()[0]
    # A larger budget: the answers paid for come from the cache, only the rest is asked.
    second = _run(
        pytester, fake_server, "--llm", "openai/oracle", "--reasoning-budget", "tokens=1e6"
    )
    assert second.ret == pytest.ExitCode.OK, second.stdout.str()
    assert fake_server.stats()["requests"] == {"oracle": 24}


@pytest.mark.e2e
def test_a_dollar_budget_needs_prices(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(".yaml", s=SUITE)
    refused = _run(pytester, fake_server, "--llm", "openai/oracle", "--reasoning-budget", "usd=1")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--reasoning-budget usd=1: openai/oracle has no price*"])
    assert not fake_server.stats()["requests"]
    pytester.makefile(
        ".yaml",
        models=f"""\
model_list:
  - model_name: priced
    litellm_params:
      model: openai/oracle
      api_base: {fake_server.url}
      input_cost_per_token: 0.001
      output_cost_per_token: 0.002
""",
    )
    priced = _run(
        pytester, fake_server, "--llm-config", "models.yaml", "--llm", "priced",
        "--reasoning-budget", "usd=0.5",
    )  # fmt: skip
    out = priced.stdout.str()
    assert "reasoning: the budget usd=0.5 was reached: no more calls" in out, out
    assert re.search(r"reasoning: spent \$0\.5\d+ and [\d,]+ tokens on \d+ call\(s\)", out)
    assert priced.ret == pytest.ExitCode.INTERRUPTED
    assert "cost" in out  # the models table prices what was asked


BAD_PRICES = ["-0.001", ".nan", ".inf", "1e309", "abc", "true", "[0.001]"]


@pytest.mark.parametrize("price", BAD_PRICES)
def test_a_price_that_is_no_price_is_refused_in_one_line(tmp_path: Path, price: str) -> None:
    """Before: a negative, NaN or infinite price switched a dollar budget off (every call
    made, "0% of usd=…"); text failed every call as an infrastructure error (60 of them)."""
    from pytest_reasoning.models.endpoints import check_param, load_model_list
    from pytest_reasoning.models.router import load_router_groups

    entry = ("  - model_name: cand\n    litellm_params:\n      model: openai/x\n"
             f"      input_cost_per_token: 0.001\n      output_cost_per_token: {price}\n")  # fmt: skip
    (tmp_path / "m.yaml").write_text("model_list:\n" + entry)
    with pytest.raises(InvalidArgument) as refused:
        load_model_list(tmp_path / "m.yaml")
    said = str(refused.value)
    assert said.startswith(
        f"{tmp_path / 'm.yaml'}: model_list[0].litellm_params.output_cost_per_token: the price "
        "of model 'cand' must be a finite number >= 0 (dollars), got "
    ) and "\n" not in said, said
    (tmp_path / "r.yaml").write_text("model_list:\n" + entry)
    with pytest.raises(InvalidArgument, match="output_cost_per_token: the price of model 'cand'"):
        load_router_groups(tmp_path / "r.yaml")
    import yaml

    with pytest.raises(InvalidArgument, match=r"^cache_read_input_token_cost: a price must be"):
        check_param("cache_read_input_token_cost", yaml.safe_load(price))


def test_prices_that_are_prices_pass() -> None:
    from pytest_reasoning.models.endpoints import check_param, parse_model_list

    entry = {"model_name": "c", "litellm_params": {"model": "openai/x",
             "input_cost_per_token": 0, "output_cost_per_token": 2e-6}}  # fmt: skip
    assert parse_model_list({"model_list": [entry]}, "m.yaml")["c"].has_prices
    check_param("input_cost_per_token", 1)
    check_param("costume", "not a price")  # a name that merely contains "cost"


@pytest.mark.e2e
def test_a_bad_price_stops_the_run_before_any_call(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer
) -> None:
    pytester.makefile(".yaml", s=SUITE)
    pytester.makefile(
        ".yaml",
        models=f"""\
model_list:
  - model_name: priced
    litellm_params:
      model: openai/oracle
      api_base: {fake_server.url}
      input_cost_per_token: -0.001
      output_cost_per_token: 0.002
""",
    )
    refused = _run(
        pytester, fake_server, "--llm-config", "models.yaml", "--llm", "priced",
        "--reasoning-budget", "usd=0.5",
    )  # fmt: skip
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in refused.stderr.lines if line.strip()]
    assert errors == [
        "ERROR: --llm-config models.yaml: model_list[0].litellm_params.input_cost_per_token: "
        "the price of model 'priced' must be a finite number >= 0 (dollars), got -0.001"
    ]
    assert not fake_server.stats()["requests"]


def test_a_meter_admits_calls_while_the_budget_has_room() -> None:
    """Admission control, as the evaluator's event loop runs it: a model's first call goes
    alone; then each call reserves the mean cost so far, waits while the reservations of
    those in flight leave no room, and none goes once the replies reach the budget."""
    signals = Signals()
    meter = Meter(Budget(tokens=100), signals)
    sent: list[int] = []
    refused: list[str] = []

    async def call(i: int) -> None:
        ticket = await meter.admit("m")
        if ticket.refused is not None:
            refused.append(ticket.refused)
            return
        sent.append(i)
        await asyncio.sleep(0)  # the reply takes a turn of the loop
        meter.done(ticket, Reply(content="x", prompt_tokens=10, completion_tokens=5))

    async def run() -> None:
        await call(0)
        await asyncio.gather(*(call(i) for i in range(1, 40)))

    asyncio.run(run())
    # 15 tokens a call: the 7th reaches 100; never more than 5 in flight near the end.
    assert len(sent) == 7 and signals.spent() == (105, 0.0)
    assert refused == ["the budget tokens=100 was reached"] * 33
    assert signals.stopped() == "the budget tokens=100 was reached"
    meter.done(Ticket("m", "refused"), None)  # a refused ticket gives nothing back


ACCOUNTED = """\
seed: 4
samples: 16
tasks:
  - task: dyval.arithmetic
    levels:
      D1: {min_accuracy: 0.5}
      D2: {min_accuracy: 0.5}
  - task: dyval.boolean_logic   # 10 distinct problems at D1: its prompts repeat
    levels:
      D1: {min_accuracy: 0.5}
"""


def _spend_line(out: str) -> tuple[int, int]:
    found = re.search(r"reasoning: spent ([\d,]+) tokens on (\d+) call\(s\)", out)
    assert found is not None, out
    return int(found.group(1).replace(",", "")), int(found.group(2))


@pytest.mark.e2e
@pytest.mark.parametrize(
    "args",
    [
        (),
        ("-n", "2"),
        ("--reasoning-sequential",),
        ("--reasoning-sequential", "-n", "2"),
        ("--reasoning-sequential", "--reasoning-repeats", "3"),
    ],
    ids=["fixed", "fixed-n2", "sequential", "sequential-n2", "sequential-repeats3"],
)
def test_the_spend_line_counts_every_request_the_endpoint_received(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, args: tuple[str, ...]
) -> None:
    """At the default concurrency (8), with the default cache: answers asked ahead and not
    needed, and prompts asked twice at once, included. The results file sums to the same."""
    pytester.makefile(".yaml", s=ACCOUNTED)
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "-p", "no:cacheprovider", "--llm", "openai/oracle",
        "--llm-api-base", fake_server.url, "--reasoning-results", "r.jsonl", *args,
    )  # fmt: skip
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.OK, out
    tokens, calls = _spend_line(out)
    received = fake_server.stats()["total"]
    assert calls == received, out
    found = load_results(Path(pytester.path, "r.jsonl"))
    paid = [r for r in found.rows + found.not_needed if not r["cached"]]
    assert len(paid) == received
    assert sum(r["prompt_tokens"] + r["completion_tokens"] for r in paid) == tokens


@pytest.mark.e2e
@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["concurrency8", "n2"])
def test_a_token_budget_is_overrun_by_at_most_the_calls_in_flight(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, args: tuple[str, ...]
) -> None:
    """tokens=1500 on calls of about 80 tokens: at most the calls that reach it at the
    cheapest call's cost, plus the concurrency (8) per process; the spend line and the stop
    line say one amount."""
    pytester.makefile(".yaml", s=SUITE.replace("samples: 12", "samples: 100"))
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "-p", "no:cacheprovider", "--llm", "openai/oracle",
        "--llm-api-base", fake_server.url, "--reasoning-results", "r.jsonl",
        "--reasoning-budget", "tokens=1500", *args,
    )  # fmt: skip
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, out
    tokens, calls = _spend_line(out)
    received = fake_server.stats()["total"]
    paid = [r for r in load_results(Path(pytester.path, "r.jsonl")).rows if r["error"] is None]
    cheapest = min(r["prompt_tokens"] + r["completion_tokens"] for r in paid)
    processes = 2 if args else 1
    assert calls == received == len(paid)
    assert received <= math.ceil(1500 / cheapest) + 8 * processes
    assert tokens >= 1500
    stop = next(t for t in out.splitlines() if t.startswith("reasoning: STOPPED:"))
    assert "the budget tokens=1,500 was reached (the calls then in flight" in stop
    assert not re.search(r"\d+ tokens spent", out)  # no second, older figure


@pytest.mark.e2e
def test_identical_prompts_in_flight_share_one_request_counted_once(tmp_path: Path) -> None:
    """Two samples whose prompts are the same, asked at once (a small level repeats a
    problem): one request; the second sample has it as from the cache, so the spend counts
    it once — with a cache and without."""
    from pytest_reasoning.evaluate import EvalConfig, Evaluator
    from pytest_reasoning.registry import get_task

    item = make_item(get_task("dyval.arithmetic"), "D1", 1, 0, {}, "direct")
    twin = dataclasses.replace(item, id=item.id.replace("-000]", "-001]"))
    model = "openai/oracle"
    for cache in (str(tmp_path), None):
        with FakeOpenAIServer(latency_s=1.0) as server:  # the first is still in flight
            evaluator = Evaluator(EvalConfig(api_base=server.url, cache_dir=cache))
            try:
                evaluator.prefetch([(item, model), (twin, model)])
                outcomes = [evaluator.answer(i, model) for i in (item, twin)]
            finally:
                evaluator.close()
            received = server.stats()["total"]
        spend = Spend()
        for o in outcomes:
            spend.add(o)
        assert received == 1 and spend.calls == {model: 1}
        assert [o.cached for o in outcomes] == [False, True]
        assert all(o.correct for o in outcomes)
