"""Throughput as workers are added (issue 46): pytest-reasoning at ``-n 1/2/4/8/16`` beside
the same number of bare ``litellm.acompletion`` processes splitting the same calls, against
the async loopback server (``loopback.py``, its own process), in one run; and what each
sample costs in CPU: the controller's, a worker's, a bare LiteLLM process's.

    python benchmarks/scaling.py --samples 10000 --workers 1,2,4,8,16 [--out table.md]

Every run asks the same ``--samples`` distinct DyVal D2 arithmetic prompts (seed 1, the
suite's own), cache off, ``--concurrency`` calls in flight per process (8, a user's default,
unless told); ``0`` in ``--workers`` is one pytest process without xdist. Calls are counted
by the server, which also checks that every run asked exactly the prompts it was given. The
CPU of each pytest process (controller, workers) is its own ``getrusage`` at the end,
recorded by a small plugin this script writes (``-p scaling_cpu``); a bare process's is
``wait4``'s. "Worker CPU/sample beyond LiteLLM" is the workers' CPU per sample minus the bare
processes' at the same process count: what the harness adds to each call. ``--floor`` adds,
at each ``-n``, as many empty parametrized tests under pytest and xdist alone (plugin not
loaded): what one pytest item costs whatever it does. Network: none
(the server is on 127.0.0.1). The markdown table goes to stdout, and to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import measure
from loopback import Loopback

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CPU_PLUGIN = '''
"""Each pytest process's own CPU at the end, and the samples it ran (scaling.py)."""
import json, os, resource

_ran = 0


def pytest_runtest_logreport(report):
    global _ran
    if report.when == "call" and any(n == "reasoning" for n, _ in report.user_properties):
        _ran += 1


def pytest_unconfigure(config):
    worker = getattr(config, "workerinput", {}).get("workerid")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    line = {"role": "worker" if worker else "controller", "id": worker or "controller",
            "cpu": usage.ru_utime + usage.ru_stime, "reports": _ran}
    with open(os.environ["SCALING_CPU_OUT"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\\n")
'''

BARE = """
import asyncio, json, os, sys
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
import litellm
prompts = [json.loads(l)["prompt"] for l in open(sys.argv[1])]
url, concurrency = sys.argv[2], int(sys.argv[3])
async def main():
    sem = asyncio.Semaphore(concurrency)
    async def one(p):
        async with sem:
            await litellm.acompletion(model="openai/bench", api_base=url, api_key="x",
                messages=[{"role": "user", "content": p}], temperature=0, max_retries=0,
                num_retries=0)
    await asyncio.gather(*(one(p) for p in prompts))
asyncio.run(main())
"""


def prompts_file(work: Path, count: int) -> list[str]:
    """The suite's own ``count`` prompts (``export`` draws what a suite with seed 1 asks)."""
    from pytest_reasoning.cli import export_items

    path = work / "prompts.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        export_items("dyval.arithmetic", "D2", count, 1, {}, "direct", False, fh)
    prompts = [json.loads(line)["prompt"] for line in path.read_text().splitlines()]
    if len(set(prompts)) != count:
        raise SystemExit(f"only {len(set(prompts))} distinct prompts for {count}")
    return prompts


def env_for(work: Path) -> dict[str, str]:
    return {
        **os.environ,
        "OPENAI_API_KEY": "x",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": os.pathsep.join([str(work), str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "SCALING_CPU_OUT": str(work / "cpu.jsonl"),
    }


def run_plugin(
    work: Path, url: str, workers: int, samples: int, concurrency: int
) -> dict[str, Any]:
    suite = work / "bench.yaml"
    suite.write_text(
        f"samples: {samples}\nseed: 1\ntasks:\n  - task: dyval.arithmetic\n    levels: [D2]\n"
    )
    cpu_file = work / "cpu.jsonl"
    cpu_file.unlink(missing_ok=True)
    cmd = [
        sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider",
        "-p", "no:randomly", "-p", "scaling_cpu", "--llm", "openai/bench",
        "--llm-api-base", url, "--reasoning-cache", "off",
        "--reasoning-concurrency", str(concurrency), "-n", str(workers),
    ]  # fmt: skip
    got = measure.run(cmd, cwd=work, env=env_for(work))
    if got.rc not in (0, 1):  # 1: the loopback's constant answer fails the gate
        raise SystemExit(f"pytest -n {workers} exited {got.rc}:\n{got.tail}")
    return cpu_of(got, cpu_file, workers, f"-n {workers}")


def cpu_of(got: Any, cpu_file: Path, workers: int, what: str) -> dict[str, Any]:
    """A pytest run's wall time and each of its processes' CPU, as ``CPU_PLUGIN`` wrote it."""
    procs = [json.loads(line) for line in cpu_file.read_text().splitlines()]
    controller = [p for p in procs if p["role"] == "controller"]
    workers_ = [p for p in procs if p["role"] == "worker"]
    if workers and len(workers_) != workers:
        raise SystemExit(f"{what}: {len(workers_)} workers reported their CPU")
    return {
        "wall": got.wall_s,
        "cpu_total": got.cpu_s,
        "controller_cpu": sum(p["cpu"] for p in controller),
        # -n 0: the one process calls, so its CPU is the "worker" figure too.
        "worker_cpu": sum(p["cpu"] for p in (workers_ or controller)),
        "reports": sum(p["reports"] for p in (workers_ or controller)),
    }


FLOOR_TESTS = """
import pytest


@pytest.mark.parametrize("i", range({samples}))
def test_empty(i):
    pass
"""


def run_floor(work: Path, workers: int, samples: int) -> dict[str, Any]:
    """pytest and xdist alone: ``samples`` empty parametrized tests, our plugin not loaded
    (``-p no:reasoning``), the same flags and CPU plugin as ``run_plugin``. What one pytest
    item costs the controller and a worker whatever the item does: the floor under the
    per-sample figures while each sample is its own item."""
    tests = work / "test_floor.py"
    tests.write_text(FLOOR_TESTS.format(samples=samples))
    cpu_file = work / "cpu.jsonl"
    cpu_file.unlink(missing_ok=True)
    plugin = work / "scaling_cpu.py"
    # The CPU plugin counts reasoning samples; here every call report is one test.
    every_test = textwrap.dedent(CPU_PLUGIN).replace(
        'and any(n == "reasoning" for n, _ in report.user_properties)', ""
    )
    plugin.write_text(every_test)
    cmd = [
        sys.executable, "-m", "pytest", str(tests), "-q", "-p", "no:cacheprovider",
        "-p", "no:randomly", "-p", "no:reasoning", "-p", "scaling_cpu", "-n", str(workers),
    ]  # fmt: skip
    try:
        got = measure.run(cmd, cwd=work, env=env_for(work))
    finally:
        plugin.write_text(textwrap.dedent(CPU_PLUGIN))
        tests.unlink()
    if got.rc != 0:
        raise SystemExit(f"the floor's pytest -n {workers} exited {got.rc}:\n{got.tail}")
    return cpu_of(got, cpu_file, workers, f"the floor's -n {workers}") | {"calls": 0}


def run_bare(
    work: Path, url: str, prompts: list[str], procs: int, concurrency: int
) -> dict[str, Any]:
    """``procs`` bare LiteLLM processes, each with its share of the prompts, started at once."""
    script = work / "bare.py"
    script.write_text(textwrap.dedent(BARE))
    files = []
    for k in range(procs):
        path = work / f"share{k}.jsonl"
        path.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in prompts[k::procs]))
        files.append(path)
    start = time.perf_counter()
    running = [
        subprocess.Popen(
            [sys.executable, str(script), str(f), url, str(concurrency)],
            env=env_for(work),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for f in files
    ]
    cpu, failed = 0.0, []
    for p in running:
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        cpu += usage.ru_utime + usage.ru_stime
        if p.returncode:
            assert p.stderr is not None
            failed.append(p.stderr.read().decode(errors="replace")[-1500:])
    wall = time.perf_counter() - start
    if failed:
        raise SystemExit(f"a bare process failed:\n{failed[0]}")
    return {"wall": wall, "cpu_total": cpu, "worker_cpu": cpu}


def checked(server: Loopback, samples: int, what: str) -> int:
    stats = server.stats()
    if stats["unexpected_prompts"] or stats["distinct_prompts"] != samples:
        raise SystemExit(
            f"{what}: asked {stats['distinct_prompts']} distinct prompts, "
            f"{stats['unexpected_prompts']} not among the suite's"
        )
    return int(stats["requests"])


def markdown(rows: list[dict[str, Any]], args: argparse.Namespace, load: list[float]) -> str:
    out = [
        f"{args.samples} samples of `dyval.arithmetic` D2, {args.latency * 1000:.0f} ms server "
        f"latency, cache off, concurrency {args.concurrency} per process; {measure.cores()} "
        f"cores, load average {min(load):.1f}–{max(load):.1f}",
        "",
        "| processes | harness | wall | calls (server) | samples/s | wall ÷ bare | "
        "controller CPU/sample | worker CPU/sample | beyond LiteLLM |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["harness"].endswith("no plugin"):  # the floor: no calls, so no sample rate
            ctrl = "—"
            if r["procs_kind"] != "one":
                ctrl = f"{r['controller_cpu'] / args.samples * 1000:.2f} ms"
            out.append(
                f"| {r['procs']} | {r['harness']} | {r['wall']:.1f} s | — | — | — | {ctrl} | "
                f"{r['worker_cpu'] / args.samples * 1000:.2f} ms | — |"
            )
            continue
        ctrl = "—"
        if r["procs_kind"] == "one":
            ctrl = "(the same process)"
        elif r["procs_kind"] == "xdist":
            ctrl = f"{r['controller_cpu'] / args.samples * 1000:.2f} ms"
        extra = "—"
        if r.get("bare_cpu") is not None:
            extra = f"{(r['worker_cpu'] - r['bare_cpu']) / args.samples * 1000:+.2f} ms"
        ratio = f"{r['wall'] / r['bare_wall']:.2f}×" if r.get("bare_wall") else "—"
        out.append(
            f"| {r['procs']} | {r['harness']} | {r['wall']:.1f} s | {r['calls']:,} | "
            f"{args.samples / r['wall']:.0f} | {ratio} | {ctrl} | "
            f"{r['worker_cpu'] / args.samples * 1000:.2f} ms | {extra} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--workers", default="1,2,4,8,16", help="xdist -n values; 0: one process")
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=8, help="calls in flight per process")
    ap.add_argument("--out", type=Path, help="also write the markdown table here")
    ap.add_argument("--json", type=Path, help="also write the raw figures here")
    ap.add_argument(
        "--floor",
        action="store_true",
        help="also run as many empty tests under pytest and xdist alone (no plugin, no calls)",
    )
    args = ap.parse_args()
    counts = [int(w) for w in args.workers.split(",") if w.strip()]
    rows: list[dict[str, Any]] = []
    load = [measure.load()]
    with tempfile.TemporaryDirectory() as tmp, Loopback(args.latency) as server:
        work = Path(tmp)
        (work / "scaling_cpu.py").write_text(textwrap.dedent(CPU_PLUGIN))
        prompts = prompts_file(work, args.samples)
        for n in counts:
            procs = max(1, n)
            server.reset(prompts)
            bare = run_bare(work, server.url, prompts, procs, args.concurrency)
            bare.update(procs=procs, procs_kind="bare", harness=f"bare LiteLLM × {procs}")
            bare["calls"] = checked(server, args.samples, bare["harness"])
            server.reset(prompts)
            name = "pytest-reasoning, one process" if n == 0 else f"pytest-reasoning `-n {n}`"
            ours = run_plugin(work, server.url, n, args.samples, args.concurrency)
            kind = "one" if n == 0 else "xdist"
            ours.update(procs=procs, procs_kind=kind, harness=name, bare_wall=bare["wall"])
            ours["bare_cpu"] = bare["worker_cpu"]
            ours["calls"] = checked(server, args.samples, name)
            if ours["reports"] != args.samples:
                raise SystemExit(f"{name}: {ours['reports']} samples reported")
            rows += [bare, ours]
            if args.floor:
                floor = run_floor(work, n, args.samples)
                floor.update(procs=procs, procs_kind="one" if n == 0 else "xdist")
                floor["harness"] = f"pytest{'' if n == 0 else f' `-n {n}`'}, empty tests, no plugin"
                if floor["reports"] != args.samples:
                    raise SystemExit(f"floor: {floor['reports']} tests reported")
                rows.append(floor)
            load.append(measure.load())
            print(
                f"{name}: wall {ours['wall']:.1f} s (bare {bare['wall']:.1f} s), controller "
                f"CPU {ours['controller_cpu']:.2f} s, workers {ours['worker_cpu']:.2f} s, "
                f"bare {bare['worker_cpu']:.2f} s",
                file=sys.stderr,
                flush=True,
            )
    table = markdown(rows, args, load)
    print(table)
    if args.out:
        args.out.write_text(table + "\n", encoding="utf-8")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "args": vars(args) | {"out": None, "json": None},
                    "cores": measure.cores(),
                    "load": load,
                    "rows": rows,
                },
                indent=2,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
