"""The docs cannot drift from the code: generated example sections are up to date."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
def test_generated_task_examples_are_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_examples.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_suite_key_table_covers_exactly_the_keys_the_parser_accepts() -> None:
    from pytest_reasoning.config import ENTRY_KEYS, KEY_DOCS, SUITE_KEYS

    assert set(KEY_DOCS) == SUITE_KEYS | ENTRY_KEYS
