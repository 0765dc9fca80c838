"""The documented install (README "Set up", docs/ci.md): the wheel built from this checkout,
installed by pip into a clean virtual environment beside only what it requires, runs the quick
suite from outside the repository; its files, entry points and package data are the wheel's."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import installed
import pytest

ROOT = Path(__file__).resolve().parents[2]

# Run by the environment's python, from the project folder: what it imports and finds.
PROBE = """
import importlib.metadata as md, importlib.resources as res, json, sys
import pytest_reasoning
from pytest_reasoning.registry import task_ids
dists = [d for d in md.distributions() if d.metadata["Name"] == "pytest-reasoning"]
eps = {g: sorted(f"{e.name}={e.value}" for e in dists[0].entry_points if e.group == g)
       for g in ("pytest11", "console_scripts", "pytest_reasoning.tasks")}
report = res.files("pytest_reasoning.report") / "assets"
print(json.dumps({
    "module": pytest_reasoning.__file__, "dists": [str(d.locate_file("")) for d in dists],
    "entry_points": eps, "prefix": sys.prefix, "tasks": task_ids(),
    "manifest": json.loads((res.files("pytest_reasoning.tasks.gym") / "manifest.json").read_text())["system_prompt"] != "",
    "assets": sorted(p.name for p in report.iterdir()),
    "plugins": sorted(e.name for d in md.distributions() for e in d.entry_points if e.group == "pytest11"),
}))
"""


@pytest.mark.e2e
def test_the_built_wheel_runs_the_quick_suite_from_outside_the_repository(tmp_path: Path) -> None:
    if why := installed.can_build():
        pytest.skip(why)
    wheel = installed.build_wheel(tmp_path / "build")
    with zipfile.ZipFile(wheel) as zf:
        files = set(zf.namelist())
    assert "pytest_reasoning/tasks/gym/manifest.json" in files  # package data
    assert {f"pytest_reasoning/report/assets/viewer.{x}" for x in ("js", "css")} <= files
    assert not any(name.startswith(("tests/", "benchmarks/")) for name in files)

    python = installed.make_env(tmp_path / "venv", wheel)
    env = installed.environ(tmp_path / "venv")
    project = tmp_path / "project"  # a project of the user's: no conftest, no checkout
    project.mkdir()
    shutil.copy(ROOT / "example_suites" / "quick.yaml", project)
    probe = subprocess.run([str(python), "-c", PROBE], cwd=project, env=env,
                           capture_output=True, text=True)  # fmt: skip
    assert probe.returncode == 0, probe.stderr[-3000:]
    found = json.loads(probe.stdout)
    site = Path(found["prefix"])
    assert Path(found["module"]).is_relative_to(site), found  # the wheel's, not this checkout
    assert len(found["dists"]) == 1 and Path(found["dists"][0]).is_relative_to(site), found
    assert found["entry_points"] == {
        "pytest11": ["reasoning=pytest_reasoning.plugin.hooks"],
        "console_scripts": ["pytest-reasoning=pytest_reasoning.cli:main"],
        "pytest_reasoning.tasks": [f"{n}=pytest_reasoning.tasks.{n}:TASKS"
                                   for n in ("dyval", "flenqa", "gym", "musr", "zebra")],
    }  # fmt: skip
    assert {"dyval.arithmetic", "zebra.grid", "flenqa.monorel", "musr.murder_mystery"} <= set(found["tasks"])
    assert found["manifest"] and found["assets"] == ["viewer.css", "viewer.js"]
    # Every pytest plugin an install brings loads on every pytest run of the project
    # (benchmarks/plugin_tax.py): ours, and those of what we require, no more.
    assert found["plugins"] == ["anyio", "reasoning", "syrupy", "xdist", "xdist.looponfail"]
    fuzz = subprocess.run([str(python), "-c", "import pytest_reasoning.strategies"], cwd=project,
                          env=env, capture_output=True, text=True)  # fmt: skip
    assert fuzz.returncode == 1 and fuzz.stderr.strip().splitlines()[-1] == (
        "ImportError: pytest_reasoning.strategies needs Hypothesis: "
        "pip install 'pytest-reasoning[fuzzing]'"
    ), fuzz.stderr  # the extra, named (Hypothesis is not a dependency: its plugin's cost)

    run = subprocess.run(
        [str(python), "-m", "pytest", "quick.yaml", "--llm", "reference", "-p", "no:cacheprovider",
         "--reasoning-report", "report"],
        cwd=project, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "reasoning: 28 samples, 6 gate(s)" in run.stdout and "34 passed" in run.stdout
    script = (ROOT / "pytest_reasoning" / "report" / "assets" / "viewer.js").read_text()
    assert script.strip()[:200] in (project / "report" / "index.html").read_text()  # inlined

    cli = subprocess.run([str(tmp_path / "venv" / "bin" / "pytest-reasoning"), "tasks"],
                         cwd=project, env=env, capture_output=True, text=True)  # fmt: skip
    assert cli.returncode == 0 and "dyval.arithmetic" in cli.stdout, cli.stderr[-3000:]
