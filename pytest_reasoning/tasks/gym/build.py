"""Write ``manifest.json``: what the gym pack registers, read from the installed
reasoning-gym so that listing tasks never imports it (2 s).

For every dataset with a curriculum: its levels (curriculum steps), the knobs (config fields
whose values are JSON numbers, strings, booleans or lists of them) with each level's values,
a description, and the checks that decide whether it is registered. Checked at the first
and the last step, three items each, in two processes under different ``PYTHONHASHSEED``s:

- the items are the same bytes in both (no hash-order or global-state dependence);
- every item has a gold answer, and the dataset's own ``score_answer`` gives it 1.0 (read as
  data under the scoring guard, as a model's answer is: a verifier that would run it as code
  is excluded);
- an item takes at most ``SLOW`` CPU seconds (and never hangs past ``HANG``).

A dataset failing any check is listed under ``excluded`` with the reason, never dropped
silently. Usage: ``python -m pytest_reasoning.tasks.gym.build`` (run with the pinned
reasoning-gym; a test compares the result with the shipped file).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .entries import config_for, entry_at, jsonable, version

__all__ = ["MANIFEST", "build", "check_dataset", "describe"]

MANIFEST = Path(__file__).with_name("manifest.json")
SLOW = 2.0  # CPU seconds an item may take
HANG = 20  # wall seconds before an item counts as hung
_SEEDS = (11, 22, 33)
_SKIP_FIELDS = ("seed", "size")


def _knob_kind(values: list[Any]) -> dict[str, str] | None:
    """The knob type of a field from its values across levels; None: not a knob."""
    kinds: set[str] = set()
    items: set[str] = set()
    # Exact types: an enum member that is also a str would come back from JSON as a plain
    # string, which its generator does not take.
    plain = {bool: "bool", int: "int", float: "float", str: "str"}
    for v in values:
        if type(v) in plain:
            kinds.add(plain[type(v)])
        elif type(v) in (list, tuple) and v and all(type(x) in (str, int, float) for x in v):
            kinds.add("list")
            items |= {type(x).__name__ for x in v}
        else:
            return None
    if kinds == {"int", "float"}:
        kinds = {"float"}
    if len(kinds) != 1 or len(items) > 1:
        return None
    kind = kinds.pop()
    return {"kind": kind, "item": items.pop()} if kind == "list" else {"kind": kind}


def describe(name: str) -> dict[str, Any]:
    """Levels, knobs and description of one dataset, from its curriculum."""
    import dataclasses

    from reasoning_gym.factory import DATASETS, create_curriculum

    dataset_cls, config_cls = DATASETS[name]
    curriculum = create_curriculum(name)
    steps = max((len(a.levels) for a in curriculum.attributes.values()), default=1)
    configs = []
    for step in range(steps):
        curriculum.set_global_level(step)
        config = curriculum.generate_configuration({"seed": 0, "size": 1})
        try:
            if hasattr(config, "validate"):
                config.validate()
        except (AssertionError, ValueError, TypeError):
            break  # the curriculum's later steps break its own config's rules: not levels
        configs.append(config)
    if not configs:
        raise ValueError("its first curriculum step breaks its own config's rules")
    fields = [f.name for f in dataclasses.fields(config_cls) if f.name not in _SKIP_FIELDS]
    knobs: dict[str, dict[str, str]] = {}
    for field in fields:
        kind = _knob_kind([getattr(c, field) for c in configs])
        if kind is not None:
            knobs[field] = kind
    levels = [
        {k: jsonable(getattr(c, k)) for k in knobs} | {"curriculum_step": step}
        for step, c in enumerate(configs)
    ]
    doc = (dataset_cls.__doc__ or name).strip().splitlines()[0].strip()
    out = {"description": doc, "knobs": knobs, "levels": levels}
    if len(configs) < steps:
        out["note"] = f"curriculum steps {len(configs)}-{steps - 1} break its config's own rules"
    return out


class _Hung(Exception):
    pass


def _alarm(*_: Any) -> None:
    raise _Hung


def check_dataset(name: str, spec: dict[str, Any]) -> tuple[str | None, str]:
    """(why it fails or None, a digest of its checked items)."""
    digest = hashlib.sha256()
    signal.signal(signal.SIGALRM, _alarm)
    spec = json.loads(json.dumps(spec))  # the knob values exactly as the manifest holds them
    for level in {0, len(spec["levels"]) - 1}:
        params = spec["levels"][level]
        try:
            config_for(name, params)
        except Exception as exc:  # a curriculum step its own config rejects
            return f"step {level}: config rejected ({type(exc).__name__}: {exc})"[:200], ""
        for seed in _SEEDS:
            t0 = time.process_time()
            signal.alarm(HANG)
            try:
                entry, score = entry_at(name, params, seed, check=True)
            except _Hung:
                return f"step {level}: an item hung past {HANG} s", ""
            except Exception as exc:
                return f"step {level}: generation failed ({type(exc).__name__}: {exc})"[:200], ""
            finally:
                signal.alarm(0)
            spent = time.process_time() - t0
            if spent > SLOW:
                return f"step {level}: an item took {spent:.1f} CPU s (limit {SLOW:g})", ""
            if entry.get("answer") is None:
                return f"step {level}: items have no gold answer (several answers are valid)", ""
            assert score is not None
            if score.failure is not None:  # e.g. a scorer that evaluates text no reader covers
                why = f"{score.failure}: {score.detail}"
                return f"step {level}: its verifier, reading the gold answer, hit {why}"[:200], ""
            if score.value != 1.0:
                return f"step {level}: its own verifier scores the gold answer {score.value}", ""
            digest.update(json.dumps(jsonable(entry), sort_keys=True).encode())
    return None, digest.hexdigest()


def _child(names: list[str]) -> None:
    """Describe and check datasets; one JSON line each (run in a child process)."""
    for name in names:
        try:
            spec = describe(name)
        except Exception as exc:
            print(json.dumps({"name": name, "why": f"curriculum failed: {exc}"[:200]}), flush=True)
            continue
        why, digest = check_dataset(name, spec)
        print(json.dumps({"name": name, "spec": spec, "why": why, "digest": digest}), flush=True)


def _run_children(names: list[str], hash_seed: str) -> dict[str, dict[str, Any]]:
    """Every dataset's line from child processes; one that kills its process is recorded
    as such and the rest go on in a fresh one."""
    done: dict[str, dict[str, Any]] = {}
    left = list(names)
    while left:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest_reasoning.tasks.gym.build", "--child", *left],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        for row in map(json.loads, proc.stdout.splitlines()):
            done[row["name"]] = row
        left = [n for n in left if n not in done]
        if left and proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
            done[left[0]] = {"name": left[0], "why": f"killed its process: {tail}"[:200]}
            left = left[1:]
    return done


def build(names: list[str] | None = None) -> dict[str, Any]:
    from reasoning_gym.factory import CURRICULA, DATASETS
    from reasoning_gym.utils import SYSTEM_PROMPTS

    names = names or sorted(CURRICULA)
    runs = [_run_children(names, seed) for seed in ("1", "2")]
    datasets: dict[str, Any] = {}
    excluded: dict[str, str] = {}
    for name in names:
        a, b = runs[0].get(name), runs[1].get(name)
        if a is None or b is None:
            excluded[name] = "the check process died on it"
        elif a["why"] or b["why"]:
            excluded[name] = a["why"] or b["why"]
        elif a["digest"] != b["digest"] or a["spec"] != b["spec"]:
            excluded[name] = "items differ between processes (hash order or global state)"
        else:
            datasets[name] = a["spec"]
    for name in sorted(set(DATASETS) - set(CURRICULA)):
        excluded[name] = "no curriculum (no levels to register)"
    return {
        "reasoning_gym": version(),
        "system_prompt": SYSTEM_PROMPTS["default"],
        "datasets": datasets,
        "excluded": excluded,
    }


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2:])
        return
    manifest = build(sys.argv[1:] or None)
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(manifest['datasets'])} datasets, {len(manifest['excluded'])} excluded")


if __name__ == "__main__":
    main()
