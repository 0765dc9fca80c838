"""The plugin's options: a bad option is one line before any item, and every check is recorded."""

from __future__ import annotations

import pytest
from reliability_matrix import record

from conftest import PLAIN
from pytest_reasoning.testing.server import FakeOpenAIServer


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


SMALL = "seed: 3\nsamples: 2\ntasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n"


BAD_OPTIONS = [
    (["--llm-param", "x"], "--llm-param: expected key=value, got 'x'"),
    (["--llm-param", "temperature=["], "--llm-param: temperature: expected a number, got '['"),
    (["--llm-param", "max_tokens=1.5"], "--llm-param: max_tokens: expected an integer, got 1.5"),
    (["--llm-param", "temperature=.nan"], "--llm-param: temperature: expected a finite number, got nan"),
    (["--llm-param", "when=2024-01-01"], "--llm-param: when: date datetime.date(2024, 1, 1) is not a JSON value; quote it"),
    (["--llm-api-base", "http://[::1"], "--llm-api-base: 'http://[::1': Invalid IPv6 URL"),
    (["--llm-api-base", "http://h:99999/v1"], "--llm-api-base: 'http://h:99999/v1': Port out of range 0-65535"),
    (["--llm-api-base", "localhost:8000"], "--llm-api-base: expected an http(s) URL such as http://127.0.0.1:8000/v1, got 'localhost:8000'"),
    (["--reasoning-samples", "1" + "0" * 21], "--reasoning-samples: expected at most 100,000, got 1,000,000,000,000,000,000,000"),
    (["--reasoning-timeout", "-1"], "--reasoning-timeout: expected a positive number of seconds, got -1.0"),
    (["--reasoning-timeout", "0"], "--reasoning-timeout: expected a positive number of seconds, got 0.0"),
    (["--reasoning-timeout", "nan"], "--reasoning-timeout: expected a positive number of seconds, got nan"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"), BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS]
)
def test_bad_options_are_one_line_before_any_item(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    """Before: a traceback per item (1,886 lines), a hang (1e21 samples collected), or
    accepted. Now exit 4 and one line, and the endpoint is never asked."""
    pytester.makefile(".yaml", s=SMALL)
    with FakeOpenAIServer() as server:
        argv = ["--llm", "openai/oracle", "--llm-api-base", server.url, *args]
        result = pytester.runpytest(*argv, "--reasoning-cache", "off", PLAIN)
        asked = server.stats()["total"]
    assert result.ret == pytest.ExitCode.USAGE_ERROR and asked == 0
    assert _lines(result.stderr.str()) == [f"ERROR: {message}"]


def test_the_option_checks_are_recorded() -> None:
    record(
        "options",
        f"{len(BAD_OPTIONS)} bad values (`--llm-param x`, `temperature=[`, `max_tokens=1.5`, "
        "a date, NaN, `http://[::1`, port 99999, no scheme, 10²¹ samples, timeouts −1, 0, "
        "NaN; the timeouts were already refused since issue 18): each exit 4, one line, "
        "0 requests",
    )
