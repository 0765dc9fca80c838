"""The docs cannot drift from the code: generated example sections are up to date."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_generated_task_examples_are_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_examples.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
