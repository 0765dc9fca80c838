"""FLenQA generation benchmarks (numbers go in docs/benchmarks.md and docs/tasks/flenqa.md).

Default mode: items per second at one target length with one padding, single process, through
``make_item``, and the share of that time spent in the tokenizer (cl100k encode calls,
timed by wrapping the encoder). The padding is chosen from per-sentence counts (each sentence
encoded once and cached), then the whole prompt is encoded once or a few times to land inside
the ±70 tolerance.

``--long``: the long-context table (issue 33). For each length (8k, 32k, 128k by default) and
padding, a fresh process generates ``--count`` items of every task and reports items per
second, seconds per item, its peak RSS, and how often a sentence of the prompt is repeated
verbatim in that prompt (the padding banks' stretch). At the longest length the process runs
again with three times the items: equal peak RSS means memory is flat in the count.

Usage: python benchmarks/flenqa.py [--count 300] [--length 3000] [--padding different]
       python benchmarks/flenqa.py --long [--count 4] [--lengths 8000,32000,128000]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.flenqa import TASKS
from pytest_reasoning.tasks.flenqa.tokens import encoder
from pytest_reasoning.tasks.sampler import make_item

OUT = Path(__file__).resolve().parent / "out"
PADDINGS = ("different", "similar", "duplicate")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def repeats(prompt: str) -> tuple[int, int]:
    """(sentences said again verbatim, sentences) in a prompt's text."""
    sentences = [s for s in _SENTENCE.split(prompt) if len(s.split()) >= 3]
    seen = Counter(sentences)
    return sum(n - 1 for n in seen.values()), len(sentences)


def one(length: int, padding: str, count: int) -> dict[str, Any]:
    """Generate ``count`` items of every task in this process; its peak RSS included."""
    for cls in TASKS:  # imports, tokenizer and corpus loaded out of the timing
        make_item(get_task(cls.id), "250", 0, 0, {"padding": padding})
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    worst = 0.0
    again = total = 0
    for cls in TASKS:
        task = get_task(cls.id)
        for i in range(count):
            t1 = time.process_time()
            item = make_item(task, str(length), 1, i, {"padding": padding})
            worst = max(worst, time.process_time() - t1)
            r, n = repeats(item.prompt)
            again, total = again + r, total + n
    cpu = time.process_time() - t0
    n_items = count * len(TASKS)
    return {
        "length": length,
        "padding": padding,
        "items": n_items,
        "items_per_cpu_s": round(n_items / cpu, 2),
        "cpu_s_per_item": round(cpu / n_items, 3),
        "worst_cpu_s": round(worst, 3),
        "rss_before_mb": round(rss0 / 1024, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "repeated_sentences": round(again / total, 4) if total else 0.0,
    }


def long_table(lengths: list[int], count: int) -> list[dict[str, Any]]:
    rows = []
    for length in lengths:
        for padding in PADDINGS:
            counts = [count, 3 * count] if length == max(lengths) else [count]
            for c in counts:
                proc = subprocess.run(
                    [sys.executable, __file__, "--one", str(length), padding, str(c)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
                print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=None)
    ap.add_argument("--length", default="3000")
    ap.add_argument("--padding", default="different")
    ap.add_argument("--long", action="store_true")
    ap.add_argument("--lengths", default="8000,32000,128000")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(int(args.one[0]), args.one[1], int(args.one[2]))))
        return
    if args.long:
        rows = long_table([int(x) for x in args.lengths.split(",")], args.count or 4)
        OUT.mkdir(exist_ok=True)
        (OUT / "flenqa_long.json").write_text(json.dumps(rows, indent=1) + "\n")
        return
    count = args.count or 300
    enc = encoder()
    original = enc.encode_ordinary
    spent = {"s": 0.0, "calls": 0, "tokens": 0}

    def timed(text: str) -> Any:
        t0 = time.perf_counter()
        out = original(text)
        spent["s"] += time.perf_counter() - t0
        spent["calls"] += 1
        spent["tokens"] += len(out)
        return out

    enc.encode_ordinary = timed
    t0 = time.perf_counter()
    make_item(get_task(TASKS[0].id), args.length, 0, 0, {"padding": args.padding})
    cold = time.perf_counter() - t0
    rows = []
    for cls in TASKS:
        task = get_task(cls.id)
        spent.update(s=0.0, calls=0, tokens=0)
        t0 = time.perf_counter()
        for i in range(count):
            make_item(task, args.length, 1, i, {"padding": args.padding})
        dt = time.perf_counter() - t0
        rows.append(
            {
                "task": cls.id,
                "length": int(args.length),
                "padding": args.padding,
                "items_per_s": round(count / dt, 1),
                "tokenizer_share": round(spent["s"] / dt, 3),
                "encode_calls_per_item": round(spent["calls"] / count, 2),
                "tokens_encoded_per_item": round(spent["tokens"] / count),
            }
        )
        print(rows[-1], flush=True)
    print({"first_item_s (tokenizer + corpus load)": round(cold, 3)})
    OUT.mkdir(exist_ok=True)
    (OUT / f"flenqa_{args.padding}_{args.length}.json").write_text(
        json.dumps({"cold_s": round(cold, 3), "rows": rows}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
