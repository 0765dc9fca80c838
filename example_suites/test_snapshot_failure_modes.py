"""Snapshot a model's failure modes, then diff them when the model changes.

    pytest example_suites/test_snapshot_failure_modes.py --llm MODEL --snapshot-update  # record
    pytest example_suites/test_snapshot_failure_modes.py --llm NEW_MODEL                 # diff

The profile of ``quick.yaml`` (accuracy and failure-mode shares per task and level, bucketed to
5 points; no model name, no example items) is stored as a text file under ``__snapshots__``; a
changed model shows the modes that moved. Answers come from the response cache when the suite
already ran. The recorded snapshot is the ``reference`` model's (no failures), so
``pytest example_suites --llm reference`` passes it.
"""

from __future__ import annotations

from pathlib import Path

from syrupy.assertion import SnapshotAssertion

from pytest_reasoning.plugin import ReasoningResults
from pytest_reasoning.snapshots import FailureProfileExtension

SUITE = Path(__file__).with_name("quick.yaml")


def test_failure_modes(reasoning_results: ReasoningResults, snapshot: SnapshotAssertion) -> None:
    profile = reasoning_results.profile(SUITE)
    assert profile == snapshot(extension_class=FailureProfileExtension)
