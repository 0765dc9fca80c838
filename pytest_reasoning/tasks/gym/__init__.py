"""The reasoning-gym task pack (``pip install 'pytest-reasoning[gym]'``): its procedural
datasets as tasks ``gym.<name>``.

Registered from ``manifest.json`` (written by :mod:`.build` from the pinned reasoning-gym),
so listing tasks costs no import of reasoning-gym; it is imported when an item is generated
or scored. Without reasoning-gym installed the pack registers nothing.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from .task import GymTask, make_task

__all__ = ["TASKS", "GymTask", "load"]


def load() -> tuple[type[GymTask], ...]:
    path = Path(__file__).with_name("manifest.json")
    if importlib.util.find_spec("reasoning_gym") is None or not path.exists():
        return ()  # the manifest is absent only while build.py writes the first one
    manifest = json.loads(path.read_text(encoding="utf-8"))
    prompt = manifest["system_prompt"]
    return tuple(
        make_task(name, spec, prompt) for name, spec in sorted(manifest["datasets"].items())
    )


TASKS = load()
