"""The example suites' own pytest settings."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # syrupy (7.0) counts the snapshot of a test that was only collected as unused and fails
    # ``--collect-only`` for it (exit status 1): listing the suites runs no snapshot.
    if config.option.collectonly and config.pluginmanager.has_plugin("syrupy"):
        config.pluginmanager.unregister(name="syrupy")
