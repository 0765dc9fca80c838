"""MuSR generation benchmark (numbers go in the README and docs/tasks/musr.md).

Stories per second per domain and level with the template narrator, single process, through
``make_item`` (trees, validators, narrator, prompt); story length in words; and how alike
the stories are: self-BLEU-4 (each story scored as a hypothesis against all the others as
references; 1.0 = every 4-gram of a story occurs in another) and distinct-4 (unique 4-grams /
all 4-grams) over ``--diversity`` L3 stories per domain, and pair by pair: the 4-gram Jaccard
overlap of a story with its most similar other story (near-duplicates score near 1); and the
paper's rule baselines on 500 L3 stories (longest chapter = murderer; most-named choice =
believed place).

Usage: python benchmarks/musr.py [--count 300] [--diversity 1000]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pytest_reasoning.registry import get_task
from pytest_reasoning.stats import wilson_interval
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.musr import TASKS
from pytest_reasoning.tasks.musr.shortcuts import bag_of_words
from pytest_reasoning.tasks.sampler import make_item

OUT = Path(__file__).resolve().parent / "out"


def speed(count: int, runs: int) -> list[dict[str, Any]]:
    """Stories per second per domain and level: the median of ``runs`` timings of ``count``
    items each (seeds 1..runs, so no run replays another's cache), by the wall clock and by
    this process's CPU time (steadier on a machine shared with other jobs)."""
    rows = []
    for cls in TASKS:
        task = get_task(cls.id)
        make_item(task, "L1", 0, 0)
        for level in task.levels:
            wall, cpu = [], []
            for run in range(1, runs + 1):
                t0, c0 = time.perf_counter(), time.process_time()
                for i in range(count):
                    make_item(task, level, run, i)
                wall.append(count / (time.perf_counter() - t0))
                cpu.append(count / (time.process_time() - c0))
            rows.append({"task": cls.id, "level": level,
                         "stories_per_s": round(statistics.median(wall), 1),
                         "stories_per_cpu_s": round(statistics.median(cpu), 1),
                         "runs_cpu": sorted(round(r) for r in cpu)})  # fmt: skip
            print(rows[-1], flush=True)
    return rows


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def self_bleu(stories: list[str], n_max: int = 4) -> tuple[float, float]:
    """Mean self-BLEU-n_max and distinct-n_max. Leave-one-out clipping in one pass: per n-gram
    keep the two largest per-story counts and whose the largest is."""
    docs = [_tokens(s) for s in stories]
    counts = [
        [Counter(zip(*(d[i:] for i in range(n)), strict=False)) for n in range(1, n_max + 1)]
        for d in docs
    ]
    top: list[dict[tuple[str, ...], tuple[int, int, int]]] = [{} for _ in range(n_max)]
    for k, per_n in enumerate(counts):
        for n, c in enumerate(per_n):
            table = top[n]
            for gram, v in c.items():
                best, owner, second = table.get(gram, (0, -1, 0))
                if v > best:
                    table[gram] = (v, k, best)
                elif v > second:
                    table[gram] = (best, owner, v)
    lengths = sorted(len(d) for d in docs)
    scores = []
    for k, per_n in enumerate(counts):
        logp = 0.0
        for n, c in enumerate(per_n):
            table = top[n]
            matched = 0
            for gram, v in c.items():
                best, owner, second = table[gram]
                matched += min(v, second if owner == k else best)
            logp += math.log(max(matched, 1e-9) / max(sum(c.values()), 1))
        length = len(docs[k])
        closest = min(lengths, key=lambda x: abs(x - length))
        bp = 1.0 if length >= closest else math.exp(1 - closest / max(length, 1))
        scores.append(bp * math.exp(logp / n_max))
    grams = Counter(g for per_n in counts for g in per_n[n_max - 1].elements())
    return sum(scores) / len(scores), len(grams) / max(sum(grams.values()), 1)


def nearest_overlap(stories: list[str], probes: int = 100) -> tuple[float, float]:
    """For the first ``probes`` stories, the 4-gram Jaccard overlap with the most similar other
    story: mean and max (1.0 = a duplicate; what "near-duplicate" means, pair by pair)."""
    grams = [set(zip(*(d[i:] for i in range(4)), strict=False)) for d in map(_tokens, stories)]
    nearest = []
    for k in range(min(probes, len(grams))):
        a = grams[k]
        nearest.append(max(len(a & b) / len(a | b) for j, b in enumerate(grams) if j != k))
    return sum(nearest) / len(nearest), max(nearest)


def baselines(count: int) -> dict[str, float]:
    """The paper's rule baselines on ``count`` L3 stories (chance: 0.5 and 0.25)."""
    murder = [make_item(get_task("musr.murder_mystery"), "L3", 3, i).problem for i in range(count)]
    longest = sum(
        max(p["choices"], key=lambda c, p=p: p["chapters"][c][1] - p["chapters"][c][0])
        == p["choices"][p["answer_index"]]
        for p in murder
    )
    placement = [
        make_item(get_task("musr.object_placement"), "L3", 3, i).problem for i in range(count)
    ]
    named = 0
    for p in placement:
        counts = [
            len(re.findall(rf"(?<!\w){re.escape(c)}(?!\w)", p["story"])) for c in p["choices"]
        ]
        named += counts.index(max(counts)) == p["answer_index"]
    return {"longest_chapter_is_murderer": longest / count, "most_named_is_belief": named / count}


def audit(count: int) -> list[dict[str, Any]]:
    """Every MuSR shortcut rule and the bag-of-words classifier at every level: accuracy on
    ``count`` items of seed 2 (the classifier trained on ``count`` items of seed 1), with a
    95% Wilson interval and chance."""
    rows: list[dict[str, Any]] = []
    for cls in TASKS:
        task = get_task(cls.id)
        for level in task.levels:
            train = [make_item(task, level, 1, i) for i in range(count)]
            test = [make_item(task, level, 2, i) for i in range(count)]
            chance = sum(1 / len(it.problem["choices"]) for it in test) / count
            results = {s.name: sum(s.guess(it) == it.answer for it in test)
                       for s in hooks.shortcuts(task)}  # fmt: skip
            results["bag_of_words"] = bag_of_words(train, test, task.choice_texts)[0]
            for name, hits in results.items():
                low, high = wilson_interval(hits, count)
                rows.append({"task": cls.id, "level": level, "rule": name, "n": count,
                             "accuracy": round(hits / count, 3), "low": round(low, 3),
                             "high": round(high, 3), "chance": round(chance, 3)})  # fmt: skip
                print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--diversity", type=int, default=1000)
    ap.add_argument(
        "--audit",
        type=int,
        default=0,
        metavar="N",
        help="only the shortcut audit, on N items per level",
    )
    ap.add_argument(
        "--speed",
        type=int,
        default=0,
        metavar="RUNS",
        help="only the generation speed: the median of RUNS runs",
    )
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    if args.audit:
        (OUT / "musr_audit.json").write_text(json.dumps(audit(args.audit), indent=2) + "\n")
        return
    if args.speed:
        (OUT / "musr_speed.json").write_text(
            json.dumps(speed(args.count, args.speed), indent=2) + "\n"
        )
        return
    rows: list[dict[str, Any]] = []
    for cls in TASKS:
        task = get_task(cls.id)
        make_item(task, "L1", 0, 0)  # warm: name lists, cached tables
        for level in task.levels:
            t0 = time.perf_counter()
            items = [make_item(task, level, 1, i) for i in range(args.count)]
            dt = time.perf_counter() - t0
            words = [len(_tokens(it.problem["story"])) for it in items]
            rows.append({"task": cls.id, "level": level, "stories_per_s": round(args.count / dt, 1),
                         "words_mean": round(sum(words) / len(words)), "words_min": min(words),
                         "words_max": max(words)})  # fmt: skip
            print(rows[-1], flush=True)
        stories = [make_item(task, "L3", 2, i).problem["story"] for i in range(args.diversity)]
        t0 = time.perf_counter()
        bleu, distinct = self_bleu(stories)
        near_mean, near_max = nearest_overlap(stories)
        rows.append({"task": cls.id, "level": "L3", "stories": args.diversity,
                     "self_bleu4": round(bleu, 3), "distinct4": round(distinct, 3),
                     "nearest_jaccard4_mean": round(near_mean, 3),
                     "nearest_jaccard4_max": round(near_max, 3),
                     "metric_s": round(time.perf_counter() - t0, 1)})  # fmt: skip
        print(rows[-1], flush=True)
    rows.append({"baselines_l3": baselines(500)})
    print(rows[-1], flush=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "musr.json").write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
