"""The argument parser of every command."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .common import _param, _Parser, add_model_options
from .narrate import _narrate_parser

if TYPE_CHECKING:
    pass


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="pytest-reasoning",
        description="Generate and analyse reasoning problems. Suites run under pytest: "
        "pytest example_suites/quick.yaml --llm reference",
    )
    sub = ap.add_subparsers(dest="command", parser_class=_Parser)
    ex = sub.add_parser("export", help="write generated items as JSONL")
    ex.add_argument("task", help="task id, e.g. dyval.arithmetic")
    ex.add_argument("--level", required=True)
    ex.add_argument("--count", type=int, help="items to write (default 10)")
    ex.add_argument("--seed", type=int, default=1)
    ex.add_argument(
        "--start", type=int, default=0, help="first item index (default 0): a range of a stream"
    )
    ex.add_argument(
        "--stop", type=int, help="the index after the last item (instead of --count: START+COUNT)"
    )
    ex.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="processes writing contiguous ranges (the same bytes as one; no progress bar)",
    )
    ex.add_argument("--param", type=_param, action="append", default=[], metavar="KEY=VALUE")
    ex.add_argument(
        "--split",
        choices=("test", "train"),
        default="test",
        help="test (default): the problems suites draw; train: problems no suite ever tests "
        "(for fine-tuning; docs/tasks/splits.md)",
    )
    ex.add_argument("--style", default="direct")
    ex.add_argument(
        "--with-steps",
        action="store_true",
        help="add the step-by-step solution text (for fine-tuning)",
    )
    ex.add_argument("-o", "--output", default="-", help="file to write (default stdout)")
    ex.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    ts = sub.add_parser(
        "tasks",
        help="list the registered tasks and their levels; with a task id or --verbose, their "
        "styles and knobs (type, range, each level's default)",
    )
    ts.add_argument("task", nargs="?", help="one task id, e.g. dyval.arithmetic")
    ts.add_argument("-v", "--verbose", action="store_true", help="styles and knobs of every task")
    pl = sub.add_parser(
        "plan",
        help="samples per level needed to detect an accuracy drop (paired McNemar), and the "
        "calls a gate needs fixed-n and sequential",
    )
    pl.add_argument("--drop", type=float, help="drop to detect, e.g. 0.05")
    pl.add_argument("--baseline-accuracy", type=float, help="e.g. 0.85")
    pl.add_argument(
        "--accuracy",
        type=float,
        help="a threshold gate instead: the model's expected accuracy (with --min-accuracy "
        "and --samples): the calls it needs fixed-n and sequential",
    )
    pl.add_argument("--min-accuracy", type=float, help="the threshold gate's min_accuracy")
    pl.add_argument("--samples", type=int, help="the level's samples (fixed n)")
    pl.add_argument("--confidence", type=float, help="the gate's Wilson confidence, if any")
    pl.add_argument("--power", type=float, default=0.8)
    pl.add_argument("--alpha", type=float, default=0.05, help="one-sided significance")
    pl.add_argument("--levels", type=int, default=1, help="levels tested (Holm's correction)")
    pl.add_argument(
        "--discordance",
        type=float,
        help="expected share of items exactly one model gets right (default: independent errors)",
    )
    fr = sub.add_parser(
        "frontier", help="the hardest value of one knob at which a model reaches a target"
    )
    fr.add_argument(
        "--llm",
        required=True,
        help="a LiteLLM model string, 'reference', 'local', or an alias of --llm-config",
    )
    fr.add_argument("--task", required=True)
    fr.add_argument("--knob", required=True, help="a numeric knob, e.g. depth or nodes")
    fr.add_argument("--min", type=int, required=True, dest="low")
    fr.add_argument("--max", type=int, required=True, dest="high")
    fr.add_argument("--target", type=float, default=0.5, help="accuracy to reach (default 0.5)")
    fr.add_argument("--level", help="the level whose preset the other knobs come from")
    fr.add_argument("--param", type=_param, action="append", default=[], metavar="KEY=VALUE")
    fr.add_argument("--seed", type=int, default=0)
    fr.add_argument("--confidence", type=float, default=0.9)
    fr.add_argument("--max-samples", type=int, default=60, help="per probe (default 60)")
    fr.add_argument("--max-calls", type=int, help="for the whole search")
    add_model_options(fr)
    fr.add_argument("--json", help="also write the result as JSON to this file")
    fr.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    rb = sub.add_parser(
        "robustness",
        help="does a model ranking survive other weightings of the items? (needs [analysis])",
    )
    rb.add_argument("results", nargs="+", help="results files (JSONL) of two or more models")
    rb.add_argument("--out", help="folder for robustness.json and the PNG plots")
    rb.add_argument("--permutations", type=int, default=1000)
    rb.add_argument("--samples", type=int, default=100_000, help="random weightings")
    rb.add_argument("--seed", type=int, default=0)
    _narrate_parser(sub)
    rp = sub.add_parser(
        "report",
        help="the HTML report from results files: tables, plots, every sample with filters "
        "and search, candidate beside baseline (a static page: open it, or publish it)",
    )
    rp.add_argument(
        "results", nargs="+", help="results files (JSONL), or folders of *.jsonl (merged shards)"
    )
    rp.add_argument("--out", required=True, help="folder for index.html, summary.json, PNGs")
    rp.add_argument("--baseline", help="a model in the files to compare the others against")
    gt = sub.add_parser(
        "gate",
        help="decide every gate and comparison from merged results files (the shards of a CI "
        "matrix), or from another harness's logs (--from): the same summary, JUnit XML and "
        "exit status as a pytest run",
    )
    gt.add_argument(
        "suites",
        nargs="*",
        metavar="SUITE",
        help="suite files or folders, as the shards ran; with --from, a thresholds file",
    )
    gt.add_argument(
        "--results",
        nargs="+",
        action="extend",
        metavar="FILE",
        help="the shards' --reasoning-results files, or folders of *.jsonl files",
    )
    gt.add_argument(
        "--from",
        nargs="+",
        dest="from_logs",
        metavar=("KIND", "LOG"),
        help="another harness's logs instead: inspect (.eval, .json), lm-eval (--log_samples "
        "folders) or jsonl (docs/harnesses.md), then the files or folders",
    )
    gt.add_argument("--llm-baseline", metavar="MODEL", help="a model of the files: compare to it")
    gt.add_argument(
        "--reasoning-baseline-results", metavar="FILE", help="compare to a stored results file"
    )
    gt.add_argument(
        "--reasoning-baseline-model", metavar="NAME", help="its baseline, if it holds several"
    )
    gt.add_argument(
        "--reasoning-drift",
        metavar="FILE",
        help="the stored run the shards' --reasoning-drift named: decide their drift checks",
    )
    gt.add_argument(
        "--reasoning-drift-max-changed",
        type=float,
        default=0.1,
        metavar="F",
        help="share of changed answers a drift check tolerates (default 0.1), as the shards",
    )
    gt.add_argument("--reasoning-samples", type=int, metavar="N", help="as the shards ran")
    gt.add_argument("--reasoning-seed", metavar="S", help="as the shards ran (S, auto, auto:TEXT)")
    gt.add_argument("--reasoning-repeats", type=int, metavar="N", help="as the shards ran")
    gt.add_argument(
        "--reasoning-max-errors",
        type=int,
        default=0,
        metavar="N",
        help="failed calls tolerated over all the files (default 0)",
    )
    gt.add_argument(
        "--allow-partial",
        action="store_true",
        help="levels with missing rows are not decided, without failing the merge (default: "
        "they fail it as infrastructure, exit status 6)",
    )
    gt.add_argument(
        "--reasoning-sequential",
        action="store_true",
        help="every level sequential, as the shards ran it (--reasoning-sequential)",
    )
    gt.add_argument("--junitxml", metavar="PATH", help="write JUnit XML: one testcase per verdict")
    gt.add_argument("--report", metavar="DIR", help="write the HTML report to DIR")
    gt.add_argument(
        "--reasoning-report-url",
        metavar="URL",
        help="where the report will be published (https://…): the links to a failed gate's "
        "samples (terminal, JUnit) use it instead of file://",
    )
    gt.add_argument(
        "-q", "--quiet", action="store_true", help="list only the verdicts that did not pass"
    )
    au = sub.add_parser(
        "audit", help="score shortcut baselines against chance: can items be answered blind?"
    )
    au.add_argument(
        "tasks",
        nargs="*",
        metavar="TASK",
        help="task ids (default: every built-in task; a pack's gym.<name> only when named)",
    )
    au.add_argument("--level", action="append", help="only this level (repeatable)")
    au.add_argument(
        "--count",
        type=int,
        default=200,
        help="test items (default 200; a repeat counts once)",
    )
    au.add_argument(
        "--train-count",
        type=int,
        default=None,
        help="training items (default: 600, or --count if more)",
    )
    au.add_argument(
        "--seed",
        type=int,
        default=1,
        help="seed of the test and the train items (the splits share no problem)",
    )
    au.add_argument("--jobs", type=int, default=0, help="processes (default: one per CPU)")
    au.add_argument("--json", action="store_true", help="write the results as JSON")
    au.add_argument(
        "--dataset",
        metavar="FILE",
        help="audit the items of a file (export or narrate output) instead of generating: "
        "about half its items (drawn by a hash of the id) train the classifiers, the rest test",
    )
    return ap
