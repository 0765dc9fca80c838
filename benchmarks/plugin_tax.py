"""What installing pytest-reasoning costs every pytest run of a project, suite or not: the CPU
of a one-assert unrelated test with the package installed, against pytest installed alone,
and each installed pytest plugin's share (the run with ``-p no:NAME``, against the full run).

Two virtual environments, built offline by ``tests/installed.py``: pytest alone (its own
requirements), and the wheel of this checkout installed by pip beside exactly what it requires
(no extras). Both without bytecode caches (``PYTHONDONTWRITEBYTECODE=1``: this machine, and
many CI images) and with them (warmed by one run first). CPU is user + system of the process
(``os.wait4``), medians of interleaved rounds, with the load average.

    python benchmarks/plugin_tax.py [--rounds 7] [--source OTHER_CHECKOUT]

``--source`` builds the wheel from another checkout's sources (``git archive REF | tar -x -C
DIR``), for the same table before a change.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import measure

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import installed

TEST = "def test_one():\n    assert 1 + 1 == 2\n"
PLUGINS = """
import importlib.metadata as md, json
print(json.dumps(sorted({e.name: d.metadata["Name"] for d in md.distributions()
                         for e in d.entry_points if e.group == "pytest11"}.items())))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--source", type=Path, default=installed.ROOT)
    args = ap.parse_args()
    if why := installed.can_build():
        raise SystemExit(why)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        wheel = installed.build_wheel(root / "build", args.source)
        ours = installed.make_env(root / "ours", wheel)
        alone = installed.make_env(root / "alone", reqs=("pytest",))
        project = root / "project"
        project.mkdir()
        (project / "test_one.py").write_text(TEST)
        env = installed.environ(root / "ours")
        plugins = json.loads(
            subprocess.run([str(ours), "-c", PLUGINS], env=env, capture_output=True,
                           text=True, check=True).stdout
        )  # fmt: skip
        runs: dict[str, tuple[Path, list[str]]] = {
            "pytest alone": (alone, []),
            "pytest-reasoning installed": (ours, []),
            "installed, PYTEST_DISABLE_PLUGIN_AUTOLOAD=1": (ours, []),
        }
        for name, dist in plugins:
            runs[f"installed, -p no:{name} ({dist})"] = (ours, ["-p", f"no:{name}"])
        table = []
        for cached in (False, True):
            base = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
            if cached:
                base["PYTHONPYCACHEPREFIX"] = str(root / f"pycache-{len(table)}")
            else:
                base["PYTHONDONTWRITEBYTECODE"] = "1"
            cpu: dict[str, list[float]] = {k: [] for k in runs}
            loads = [measure.load()]
            for r in range(args.rounds + int(cached)):  # with caches: a first run warms them
                for label, (python, extra) in runs.items():
                    run_env = dict(base)
                    if "AUTOLOAD" in label:
                        run_env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
                    got = measure.run([str(python), "-m", "pytest", "-q", "test_one.py", *extra],
                                      cwd=project, env=run_env)  # fmt: skip
                    assert got.rc == 0 and "1 passed" in got.out, got.tail
                    if r >= int(cached):
                        cpu[label].append(got.cpu_s)
            loads.append(measure.load())
            full = statistics.median(cpu["pytest-reasoning installed"])
            alone_s = statistics.median(cpu["pytest alone"])
            for label, values in cpu.items():
                med = statistics.median(values)
                if label == "pytest-reasoning installed":
                    note = f"tax {med - alone_s:+.3f} s"
                elif label.startswith("installed, -p no:"):
                    note = f"this plugin {full - med:+.3f} s"
                else:
                    note = ""
                table.append((cached, label, med, min(values), max(values), note, loads))
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {args.rounds} rounds")
        print("| bytecode caches | run | CPU median | range | |")
        print("|---|---|---|---|---|")
        for cached, label, med, lo, hi, note, loads in table:
            load = f"load {loads[0]:.1f}-{loads[1]:.1f}"
            print(f"| {'yes' if cached else 'no'} ({load}) | {label} | {med:.3f} s | "
                  f"{lo:.3f}-{hi:.3f} | {note} |")  # fmt: skip


if __name__ == "__main__":
    main()
