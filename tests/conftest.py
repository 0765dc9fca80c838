"""Shared fixtures: the project's OpenAI-compatible fake server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# Imported here, before any inline pytester run: pytester restores sys.modules after each run,
# and re-importing PyYAML beside its already-loaded C extension breaks the C loader.
import yaml  # noqa: F401

from pytest_reasoning.testing.server import FakeOpenAIServer


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


SUITE = """\
name: mini
seed: 1
samples: 4
tasks:
  - task: dyval.arithmetic
    levels:
      D1: {min_accuracy: 0.5}
  - task: dyval.boolean_logic
    levels: [D1]
    min_accuracy: 0.5
"""


@pytest.fixture
def mini_suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", mini=SUITE)
    return pytester
