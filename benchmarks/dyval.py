"""DyVal generation benchmarks (numbers go in the README and docs/tasks/dyval.md).

1. Throughput per task at D4, single process, items/s: ours through ``make_item`` (the
   path suites and ``export`` use), with batch de-duplication on (default) and off (raw draws).
2. The same tasks side by side with microsoft/promptbench's DyVal (``--promptbench DIR``: a
   directory holding ``promptbench/dyval``; run with ``--promptbench-python``, a Python with
   numpy, tqdm and nltk). Its DAG module calls ``nltk.download('words')`` and reads the words
   corpus for every DAG; offline, we build that corpus from the ``english-words`` package's
   ``web2`` list (the same Unix word list NLTK ships).
3. Peak memory of ``pytest-reasoning export`` for 1,000 / 10,000 / 100,000 D4 items (a child
   process each; ``ru_maxrss`` from ``os.wait4``).
4. ``--collisions``: repeated prompts among 10,000 D4 items, raw draws and de-duplicated.

Usage: python benchmarks/dyval.py [--count 2000] [--promptbench DIR --promptbench-python PY]
       [--promptbench-count 100] [--memory] [--collisions]
Never vendored: promptbench's code is read from the directory you pass, outside the repo.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.dyval import TASKS
from pytest_reasoning.tasks.sampler import make_item

OUT = Path(__file__).resolve().parent / "out"

# Their dataset_type for each of our tasks, and D4 of the paper in their parameter names.
THEIRS = {
    "dyval.arithmetic": "arithmetic",
    "dyval.linear_equation": "linear_equation",
    "dyval.boolean_logic": "bool_logic",
    "dyval.deductive_logic": "deductive_logic",
    "dyval.abductive_logic": "abductive_logic",
    "dyval.reachability": "reachability",
    "dyval.max_sum_path": "max_sum_path",
}
PROMPTBENCH_D4 = {
    "depth": 4,
    "num_children_per_node": 2,
    "num_nodes_per_sample": 20,
    "min_links_per_node": 1,
    "max_links_per_node": 8,
    "extra_links_per_node": 0,  # our default too (their constructor's default is 1)
}

PROMPTBENCH_SNIPPET = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import dyval  # promptbench/dyval as a top-level package: skips promptbench's heavy __init__
kind, count, params = sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
if sys.argv[5] == "cached":  # load the word list once instead of once per DAG
    from dyval.DAG import dag as D
    forbidden = {w for w in set(D.words.words()) if len(w) < 4}
    def init(self, add_cycles=0):
        self.symbols_set = "abcdefghijklmnopqrstuvwxyz"
        self.forbidden_names = forbidden
        self.name_generator = self._generate_name()
        self.nodes = []
        self.add_cycles = add_cycles
    D.BaseDAG.__init__ = init
if kind == "linear_equation":
    params = {**params, "depth": 4}
t0 = time.perf_counter()
dyval.DyValDataset(kind, num_samples=count, **params)
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""


def ours(count: int, unique: bool) -> dict[str, float]:
    rates = {}
    for cls in TASKS:
        task = type(get_task(cls.id))()  # a fresh instance: no batch cache from earlier runs
        start = time.perf_counter()
        for i in range(count):
            make_item(task, "D4", 1, i, {"unique": unique})
        rates[cls.id] = count / (time.perf_counter() - start)
    return rates


def _words_corpus(python: str) -> Path:
    """An NLTK data dir with the ``words`` corpus built from english-words' web2 list."""
    root = Path(tempfile.gettempdir()) / "pytest_reasoning_nltk_data"
    target = root / "corpora" / "words"
    if not (target / "en").exists():
        target.mkdir(parents=True, exist_ok=True)
        code = (
            "from english_words import get_english_words_set as g;"
            "print('\\n'.join(sorted(g(['web2'], lower=False))))"
        )
        words = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        (target / "en").write_text(words)
        (target / "README").write_text("web2 via english-words, for benchmarks only\n")
    return root


def theirs(directory: str, python: str, count: int, mode: str) -> dict[str, float]:
    env = {**os.environ, "NLTK_DATA": str(_words_corpus(python))}
    rates = {}
    for ours_id, kind in THEIRS.items():
        proc = subprocess.run(
            [
                python,
                "-c",
                PROMPTBENCH_SNIPPET,
                str(Path(directory) / "promptbench"),
                kind,
                str(count),
                json.dumps(PROMPTBENCH_D4),
                mode,
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        if proc.returncode != 0:
            print(f"promptbench {kind}: failed: {proc.stderr.strip().splitlines()[-1]}")
            continue
        seconds = json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]
        rates[ours_id] = count / seconds
    return rates


def export_memory(
    counts: tuple[int, ...] = (1_000, 10_000, 100_000),
) -> dict[int, dict[str, float]]:
    out = {}
    for count in counts:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest_reasoning.cli",
                "export",
                "dyval.arithmetic",
                "--level",
                "D4",
                "--count",
                str(count),
                "-o",
                os.devnull,
            ]
        )
        _, status, usage = os.wait4(proc.pid, 0)
        assert status == 0, status
        out[count] = {
            "peak_rss_mib": usage.ru_maxrss / 1024,
            "seconds": time.perf_counter() - start,
        }
    return out


def collisions(
    count: int = 10_000, seeds: tuple[int, ...] = (1, 2, 3)
) -> dict[str, dict[str, list[int]]]:
    out: dict[str, dict[str, list[int]]] = {}
    for cls in TASKS:
        task = type(get_task(cls.id))()
        row: dict[str, list[int]] = {"raw": [], "unique": []}
        for seed in seeds:
            for mode in ("raw", "unique"):
                prompts = [
                    make_item(task, "D4", seed, i, {"unique": mode == "unique"}).prompt
                    for i in range(count)
                ]
                row[mode].append(len(prompts) - len(set(prompts)))
        out[cls.id] = row
        print(f"{cls.id:24s} raw {row['raw']}  unique {row['unique']}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--promptbench")
    ap.add_argument("--promptbench-python", default=sys.executable)
    ap.add_argument("--promptbench-count", type=int, default=100)
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--collisions", action="store_true")
    args = ap.parse_args()
    results: dict[str, object] = {"python": sys.version.split()[0]}
    if args.collisions:
        results["collisions"] = collisions()
    else:
        dedup, raw = ours(args.count, True), ours(args.count, False)
        pb: dict[str, float] = {}
        pbc: dict[str, float] = {}
        if args.promptbench:
            py, n = args.promptbench_python, args.promptbench_count
            pb = theirs(args.promptbench, py, n, "as-is")
            pbc = theirs(args.promptbench, py, n, "cached")
        results.update(
            ours_unique=dedup,
            ours_raw=raw,
            promptbench=pb,
            promptbench_words_cached=pbc,
            count=args.count,
            promptbench_count=args.promptbench_count,
        )
        print(
            "| task (D4) | ours, items/s | ours, raw draws | promptbench | promptbench, "
            "word list cached | ours ÷ promptbench (as is / cached) |"
        )
        print("|---|---|---|---|---|---|")
        for tid in dedup:
            a, b = pb.get(tid), pbc.get(tid)
            ratio = f"{dedup[tid] / a:.0f}× / {dedup[tid] / b:.0f}×" if a and b else "—"
            shown = f"{a:.1f} | {b:.0f}" if a and b else "— | —"
            print(f"| {tid} | {dedup[tid]:.0f} | {raw[tid]:.0f} | {shown} | {ratio} |")
        if args.memory:
            results["export_memory"] = mem = export_memory()
            for count, row in mem.items():
                print(
                    f"export {count:>7} D4 arithmetic items: peak RSS "
                    f"{row['peak_rss_mib']:.1f} MiB, {row['seconds']:.1f} s"
                )
    OUT.mkdir(exist_ok=True)
    name = "dyval_collisions.json" if args.collisions else "dyval.json"
    (OUT / name).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
