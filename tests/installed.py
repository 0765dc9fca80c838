"""pytest-reasoning installed as a user gets it, without the network: the wheel built from
this checkout (``pip wheel``), installed by pip into a fresh virtual environment beside
exactly the distributions its metadata requires (no extras), linked in from the environment
running this code as pip would have laid them out. Nothing of this checkout is on its path.

Used by tests/e2e/test_install.py and benchmarks/plugin_tax.py."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "pytest_reasoning")


def can_build() -> str | None:
    """Why this environment cannot build the wheel offline, or None: ``pip wheel
    --no-build-isolation`` needs setuptools 70.1+ (bdist_wheel built in), which the lock
    (requirements/ci.txt) installs."""
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        version = "none"
    if version != "none" and Version(version) >= Version("70.1"):
        return None
    return (
        f"setuptools {version} cannot build a wheel offline (70.1+ can): "
        "pip install --require-hashes -r requirements/ci.txt"
    )


def build_wheel(out: Path, root: Path = ROOT) -> Path:
    """``pip wheel --no-deps`` of a copy of the sources of the checkout at ``root`` (the
    build leaves its ``build/`` and ``*.egg-info`` there, not in the checkout); the wheel."""
    src = out / "src"
    for name in SOURCES:
        path = root / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            src.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, src / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-q", "-w", str(out / "dist"), str(src)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (wheel,) = (out / "dist").glob("pytest_reasoning-*.whl")
    return wheel


def requires(wheel: Path) -> list[str]:
    """The wheel's ``Requires-Dist``: what pip would install with it."""
    with zipfile.ZipFile(wheel) as zf:
        (meta,) = (n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(zf.read(meta).decode()).get_all("Requires-Dist") or []


def closure(reqs: list[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions that ``reqs`` pull in, transitively, extras they name
    included (``httpx[http2]``)."""
    pending = [(r, "") for r in reqs]  # (requirement, the extra whose list it is on)
    found: dict[str, importlib.metadata.Distribution] = {}
    done: set[tuple[str, str]] = set()
    while pending:
        text, extra = pending.pop()
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        if name not in found:  # PackageNotFoundError: not installed here
            found[name] = importlib.metadata.distribution(name)
        for wanted in ("", *sorted(req.extras)):
            if (name, wanted) not in done:
                done.add((name, wanted))
                pending += [(r, wanted) for r in found[name].requires or []]
    return list(found.values())


def make_env(root: Path, wheel: Path | None = None, reqs: tuple[str, ...] = ()) -> Path:
    """A virtual environment at ``root`` with ``reqs`` and the wheel's requirements linked in,
    and the wheel (if any) installed by pip; its ``python``."""
    venv.EnvBuilder(symlinks=True, with_pip=False).create(root)
    python = root / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    here = Path(sysconfig.get_paths()["purelib"])
    for dist in closure([*reqs, *(requires(wheel) if wheel else [])]):
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            if (here / top).exists() and not (site / top).exists():
                (site / top).symlink_to(here / top)
    if wheel is not None:
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
             "--no-index", "-q", str(wheel)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
    return python


def environ(root: Path) -> dict[str, str]:
    """This process's environment for a command of the environment at ``root``: its ``bin``
    first on PATH, no PYTHONPATH (this checkout) and no other virtual environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(root / "bin"), env.get("PATH", "")])
    return env
