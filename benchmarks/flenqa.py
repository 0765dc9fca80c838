"""FLenQA generation benchmark (numbers go in the README and docs/tasks/flenqa.md).

Items per second at a target length with ``different`` padding (the KJV corpus), single process,
through ``Task.make_item``, and the share of that time spent in the tokenizer (cl100k encode
calls, timed by wrapping the encoder). The padding is chosen from per-sentence counts (each
sentence encoded once and cached), then the whole prompt is encoded once or a few times to
land inside the ±70 tolerance.

Usage: python benchmarks/flenqa.py [--count 300] [--length 3000]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.flenqa import TASKS
from pytest_reasoning.tasks.flenqa.tokens import encoder

OUT = Path(__file__).resolve().parent / "out"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--length", default="3000")
    ap.add_argument("--padding", default="different")
    args = ap.parse_args()
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
    get_task(TASKS[0].id).make_item(args.length, 0, 0, {"padding": args.padding})
    cold = time.perf_counter() - t0
    rows = []
    for cls in TASKS:
        task = get_task(cls.id)
        spent.update(s=0.0, calls=0, tokens=0)
        t0 = time.perf_counter()
        for i in range(args.count):
            task.make_item(args.length, 1, i, {"padding": args.padding})
        dt = time.perf_counter() - t0
        rows.append(
            {
                "task": cls.id,
                "length": int(args.length),
                "padding": args.padding,
                "items_per_s": round(args.count / dt, 1),
                "tokenizer_share": round(spent["s"] / dt, 3),
                "encode_calls_per_item": round(spent["calls"] / args.count, 2),
                "tokens_encoded_per_item": round(spent["tokens"] / args.count),
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
