"""Item generation: CPU per item of every built-in task and level, and one digest of the items.

A speed-up of a generator must leave every item byte-identical (same suite + seed, same
bytes): this script hashes ``canonical_json`` of each item's id, problem, messages and answer
for every built-in task (packs left out) x level x split (test, train) x seed x the first
``--count`` items (``--deep`` items at the levels named by ``--deep-levels``), in the default
style and, for the first ``--examples`` items, in each style that shows worked examples (those
draw more train problems). It prints the CPU per item of each (task, level) in the default
style and one overall digest. Run it before and after a change, on the old code with
``PYTHONPATH`` pointing at a checkout of it, and compare the digests:

    PYTHONPATH=/path/to/old python benchmarks/generation.py > before.txt
    PYTHONPATH=$PWD python benchmarks/generation.py > after.txt

``--only TASK[:LEVEL]`` (repeatable) restricts the run; the digest then covers only those.
CPU is ``time.process_time`` of this process: on a shared machine the figures move with the
load, the digest never does.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from collections.abc import Iterator

from pytest_reasoning.core import canonical_json
from pytest_reasoning.registry import get_task, task_ids
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.base import Task
from pytest_reasoning.tasks.draw import SPLITS
from pytest_reasoning.tasks.sampler import make_item

# The levels whose items are many raw draws each (exhausted ``unique`` batches, balanced
# logic): checked further than the others by default.
DEEP_LEVELS = (
    "dyval.abductive_logic:D2",
    "dyval.abductive_logic:D3",
    "dyval.deductive_logic:D2",
    "dyval.deductive_logic:D3",
    "dyval.boolean_logic:D2",
    "dyval.boolean_logic:D3",
)


def _levels(only: list[str]) -> Iterator[tuple[Task, str]]:
    for task_id in task_ids():
        task = get_task(task_id)
        if hooks.is_pack(task):
            continue
        for level in task.levels:
            if not only or task_id in only or f"{task_id}:{level}" in only:
                yield task, level


def _record(item_id: str, problem: object, messages: object, answer: str) -> bytes:
    text = canonical_json(
        {"id": item_id, "problem": problem, "messages": messages, "answer": answer}  # type: ignore[dict-item]
    )
    return hashlib.sha256(text.encode("utf-8")).digest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=20, help="items per (level, split, seed)")
    ap.add_argument("--deep", type=int, default=60, help="items at the --deep-levels")
    ap.add_argument("--deep-levels", nargs="*", default=list(DEEP_LEVELS))
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..N")
    ap.add_argument("--examples", type=int, default=3, help="items also in example styles")
    ap.add_argument("--only", action="append", default=[], help="TASK or TASK:LEVEL")
    args = ap.parse_args()

    total = hashlib.sha256()
    cpu_all = 0.0
    print(f"# PYTHONPATH={os.environ.get('PYTHONPATH', '')}  load {os.getloadavg()[0]:.2f}")
    print(f"{'task':<26} {'level':<7} {'items':>5} {'ms/item':>9}  digest")
    for task, level in _levels(args.only):
        count = args.deep if f"{task.id}:{level}" in args.deep_levels else args.count
        here = hashlib.sha256()
        cpu = 0.0
        items = 0
        for split in SPLITS:
            for seed in range(1, args.seeds + 1):
                t0 = time.process_time()
                for i in range(count):
                    item = make_item(task, level, seed, i, split=split)
                    here.update(_record(item.id, item.problem, item.messages, item.answer))
                cpu += time.process_time() - t0
                items += count
                for style in task.example_styles:
                    if style not in task.styles:
                        continue
                    for i in range(min(args.examples, count)):
                        item = make_item(task, level, seed, i, style=style, split=split)
                        here.update(_record(item.id, item.problem, item.messages, item.answer))
        digest = here.hexdigest()
        total.update(f"{task.id}:{level}:{digest}".encode())
        cpu_all += cpu
        print(f"{task.id:<26} {level:<7} {items:>5} {1000 * cpu / items:>9.2f}  {digest[:16]}")
        sys.stdout.flush()
    print(f"# load {os.getloadavg()[0]:.2f}  default-style CPU {cpu_all:.1f} s")
    print(f"digest {total.hexdigest()}")


if __name__ == "__main__":
    main()
