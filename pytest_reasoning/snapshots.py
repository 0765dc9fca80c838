"""A syrupy extension for failure-mode profiles: one readable text file per snapshot.

    from pytest_reasoning.snapshots import FailureProfileExtension

    def test_failure_modes(reasoning_results, snapshot):
        profile = reasoning_results.profile("example_suites/quick.yaml")
        assert profile == snapshot(extension_class=FailureProfileExtension)

``pytest --snapshot-update`` records the profile (keyed by task and level, naming no model); a
later run with another model fails with the modes and accuracies that moved. syrupy (>= 7)
locks its files, so this works under ``-n 2``.
"""

from __future__ import annotations

from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from .profile import FailureProfile

__all__ = ["FailureProfileExtension"]


class FailureProfileExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "txt"

    def serialize(self, data: Any, **kwargs: Any) -> Any:
        if isinstance(data, FailureProfile):
            return data.text
        return super().serialize(data, **kwargs)
