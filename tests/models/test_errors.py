"""Model errors: redacted before they are cut, errors no retry can fix stop the model, a bad
key stops a run at once with its cause."""

from __future__ import annotations

import pytest

from pytest_reasoning.errors import ReasoningError
from pytest_reasoning.models.base import error_text
from pytest_reasoning.testing.server import FakeOpenAIServer, key_digest


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *args)


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
