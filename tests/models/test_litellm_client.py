"""The LiteLLM client: compromised LiteLLM releases are refused in every spelling."""

from __future__ import annotations

import pytest

from pytest_reasoning.errors import ReasoningError
from pytest_reasoning.models.litellm_client import check_litellm_version


@pytest.mark.parametrize(
    "version", ["1.82.7.0", "1.82.7rc1", "1.82.8.post2", "1.107", "1.107.0.0", "1.107.5", "v1.107"]
)
def test_every_spelling_of_a_compromised_litellm_is_refused(version: str) -> None:
    with pytest.raises(ReasoningError, match="compromised release"):
        check_litellm_version(version)


@pytest.mark.parametrize("version", ["1.106.2", "1.108", "1.82.70", "1.10.7", "1.82.6.9"])
def test_neighbouring_litellm_versions_are_accepted(version: str) -> None:
    check_litellm_version(version)
