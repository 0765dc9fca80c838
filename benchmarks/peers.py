"""pytest-reasoning side by side with a bare LiteLLM loop, the HTTP floors and the peer
harnesses (lm-evaluation-harness, promptfoo, inspect_ai), on the same prompts against the same
async loopback server (``loopback.py``), interleaved in rounds, reporting min and median.

    python benchmarks/peers.py --setup          # once: side venvs / npm folder under benchmarks/out
    python benchmarks/peers.py --rounds 3       # 1000 distinct DyVal D2 prompts, 50 ms, 16 at once

Every harness runs as its own process, cache off, concurrency 16; "span" is the server-side
time from the first request to the last reply (what the harness's scheduling achieves once it
calls), "wall" the whole command (start-up, imports and exit included). The server's own
ceiling with a bare aiohttp client is measured and printed first. Peers missing from
benchmarks/out are skipped with a note; nothing here is committed but this script.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import measure
from loopback import Loopback, ceiling

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
VENVS = OUT / "venvs"
NPM = OUT / "promptfoo"
VERSIONS = {"lm-eval": "0.4.13", "inspect-ai": "0.3.285", "promptfoo": "0.121.20"}

Runner = Callable[[Path, str, int], list[str]]  # (workdir, url, concurrency) -> command


def prompts_file(work: Path, count: int) -> Path:
    """``count`` distinct DyVal D2 arithmetic prompts (one JSON object per line)."""
    from pytest_reasoning.cli import export_items

    path = work / "prompts.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        export_items("dyval.arithmetic", "D2", count, 1, {}, "direct", False, fh)
    seen = {json.loads(line)["prompt"] for line in path.read_text().splitlines()}
    assert len(seen) == count, f"only {len(seen)} distinct prompts"
    return path


CLIENT = """
import asyncio, json, sys, time
prompts = [json.loads(l)["prompt"] for l in open(sys.argv[1])]
url, concurrency = sys.argv[2], int(sys.argv[3])
{setup}
async def main():
    sem = asyncio.Semaphore(concurrency)
    {session}
    async def one(p):
        async with sem:
            {call}
    await asyncio.gather(*(one(p) for p in prompts))
    {close}
asyncio.run(main())
"""

FLOORS = {
    "floor: openai.AsyncOpenAI": dict(
        setup="import openai",
        session="client = openai.AsyncOpenAI(base_url=url, api_key='x', max_retries=0)",
        call="await client.chat.completions.create(model='bench', messages=[{'role': 'user', 'content': p}])",
        close="await client.close()",
    ),
    "floor: httpx": dict(
        setup="import httpx",
        session="client = httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency))",
        call="(await client.post(url + '/chat/completions', json={'model': 'bench', 'messages': [{'role': 'user', 'content': p}]})).json()",
        close="await client.aclose()",
    ),
    "floor: aiohttp": dict(
        setup="import aiohttp",
        session="client = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency))",
        call="r = await client.post(url + '/chat/completions', json={'model': 'bench', 'messages': [{'role': 'user', 'content': p}]}); await r.json()",
        close="await client.close()",
    ),
    "bare litellm.acompletion": dict(
        setup="import os; os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'; import litellm",
        session="pass",
        call="await litellm.acompletion(model='openai/bench', api_base=url, api_key='x', messages=[{'role': 'user', 'content': p}], temperature=0, max_retries=0, num_retries=0)",
        close="pass",
    ),
}


def floor(name: str) -> Runner:
    code = textwrap.dedent(CLIENT).format(**FLOORS[name])

    def cmd(work: Path, url: str, concurrency: int) -> list[str]:
        return [sys.executable, "-c", code, str(work / "prompts.jsonl"), url, str(concurrency)]

    return cmd


def pytest_reasoning(workers: int, *extra: str) -> Runner:
    def cmd(work: Path, url: str, concurrency: int) -> list[str]:
        suite = work / "bench.yaml"
        count = sum(1 for _ in (work / "prompts.jsonl").open())
        suite.write_text(
            f"samples: {count}\nseed: 1\ntasks:\n  - task: dyval.arithmetic\n    levels: [D2]\n"
        )
        per = concurrency // workers if workers else concurrency
        return [
            sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider",
            "--llm", "openai/bench", "--llm-api-base", url, "--reasoning-cache", "off",
            "--reasoning-concurrency", str(per), "-n", str(workers), *extra,
        ]  # fmt: skip

    return cmd


def lm_eval(work: Path, url: str, concurrency: int) -> list[str]:
    tasks = work / "lmeval_tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "bench.yaml").write_text(
        textwrap.dedent(f"""\
        task: bench
        dataset_path: json
        dataset_kwargs:
          data_files:
            test: {work / "prompts.jsonl"}
        test_split: test
        output_type: generate_until
        doc_to_text: "{{{{prompt}}}}"
        doc_to_target: "{{{{answer}}}}"
        generation_kwargs:
          until: []
          max_gen_toks: 16
        metric_list:
          - metric: exact_match
        """)
    )
    return [
        str(VENVS / "lm-eval" / "bin" / "python"), "-m", "lm_eval", "--model", "local-chat-completions",
        "--model_args", f"model=bench,base_url={url}/chat/completions,num_concurrent={concurrency},"
        "max_retries=1,tokenized_requests=False,tokenizer_backend=None",
        "--tasks", "bench", "--include_path", str(tasks), "--apply_chat_template",
        "--output_path", str(work / "lmeval_out"),
    ]  # fmt: skip


def inspect_ai(work: Path, url: str, concurrency: int) -> list[str]:
    script = work / "inspect_bench.py"
    script.write_text(
        textwrap.dedent(f"""\
        import json
        from inspect_ai import Task, eval
        from inspect_ai.dataset import MemoryDataset, Sample
        from inspect_ai.scorer import match
        from inspect_ai.solver import generate
        rows = [json.loads(l) for l in open({str(work / "prompts.jsonl")!r})]
        task = Task(dataset=MemoryDataset([Sample(input=r["prompt"], target=str(r["answer"])) for r in rows]),
                    solver=generate(), scorer=match())
        eval(task, model="openai-api/bench/bench", max_connections={concurrency},
             log_dir={str(work / "inspect_logs")!r}, display="none", max_retries=1)
        """)
    )
    return [str(VENVS / "inspect-ai" / "bin" / "python"), str(script)]


def promptfoo(work: Path, url: str, concurrency: int) -> list[str]:
    tests = work / "promptfoo_tests.jsonl"
    with tests.open("w") as fh:
        for line in (work / "prompts.jsonl").open():
            fh.write(json.dumps({"vars": {"prompt": json.loads(line)["prompt"]}}) + "\n")
    config = work / "promptfooconfig.yaml"
    config.write_text(
        textwrap.dedent(f"""\
        providers:
          - id: openai:chat:bench
            config:
              apiBaseUrl: {url}
              apiKey: x
              temperature: 0
        prompts:
          - "{{{{prompt}}}}"
        tests: file://{tests}
        """)
    )
    return [
        str(NPM / "node_modules" / ".bin" / "promptfoo"), "eval", "-c", str(config),
        "--max-concurrency", str(concurrency), "--no-cache", "--no-write", "--no-table",
        "--no-progress-bar",
    ]  # fmt: skip


def peers() -> dict[str, tuple[Runner, Path]]:
    """The peer harnesses and the file each needs from ``--setup``."""
    return {
        f"lm-evaluation-harness {VERSIONS['lm-eval']}": (
            lm_eval,
            VENVS / "lm-eval" / "bin" / "python",
        ),
        f"promptfoo {VERSIONS['promptfoo']}": (
            promptfoo,
            NPM / "node_modules" / ".bin" / "promptfoo",
        ),
        f"inspect_ai {VERSIONS['inspect-ai']}": (
            inspect_ai,
            VENVS / "inspect-ai" / "bin" / "python",
        ),
    }


PEERS = peers()


def use_peers_dir(out: Path) -> None:
    """Point the peers at side environments made by ``--setup`` (possibly another checkout's)."""
    global VENVS, NPM, PEERS
    VENVS, NPM = out / "venvs", out / "promptfoo"
    PEERS = peers()


def setup() -> None:
    """Side environments for the peers (network: PyPI and npm)."""
    # lm-eval's API models (local-chat-completions) need its [api] extra (tenacity, tiktoken).
    extras = {"lm-eval": "[api]"}
    for name in ("lm-eval", "inspect-ai"):
        venv = VENVS / name
        if not venv.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [
                str(venv / "bin" / "pip"),
                "install",
                "-q",
                f"{name}{extras.get(name, '')}=={VERSIONS[name]}",
                "openai",
            ],
            check=True,
        )
    NPM.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "npm",
            "install",
            "--silent",
            "--no-audit",
            "--no-fund",
            f"promptfoo@{VERSIONS['promptfoo']}",
        ],
        cwd=NPM,
        check=True,
    )


def env_for(url: str) -> dict[str, str]:
    return {
        **os.environ,
        "BENCH_API_KEY": "x",
        "BENCH_BASE_URL": url,
        "OPENAI_API_KEY": "x",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "INSPECT_DISPLAY": "none",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--setup", action="store_true", help="create the peers' side environments")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", action="append", help="run only harnesses whose name contains this")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument(
        "--peers-dir",
        type=Path,
        default=OUT,
        help="where --setup put the side environments (default benchmarks/out; read only)",
    )
    args = ap.parse_args()
    use_peers_dir(args.peers_dir)
    if args.setup:
        setup()
        return
    harnesses: dict[str, Runner] = {
        "pytest-reasoning (cache off, one process)": pytest_reasoning(0),
        "pytest-reasoning -n 2": pytest_reasoning(2),
        "pytest-reasoning -n 4": pytest_reasoning(4),
        # Without bytecode caches pytest compiles the installed plugins' modules every run
        # (about 1.2 s of CPU here); --assert=plain skips that (suites use no assert).
        "pytest-reasoning --assert=plain (one process)": pytest_reasoning(0, "--assert=plain"),
        **{name: floor(name) for name in FLOORS},
    }
    for name, (runner, needs) in PEERS.items():
        if needs.exists():
            harnesses[name] = runner
        else:
            print(f"skipped {name}: not set up (python benchmarks/peers.py --setup)")
    if args.only:
        harnesses = {k: v for k, v in harnesses.items() if any(o in k for o in args.only)}
    ideal = args.count * args.latency / args.concurrency
    results: dict[str, list[dict[str, float]]] = {k: [] for k in harnesses}
    problems: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp, Loopback(args.latency) as server:
        work = Path(tmp)
        prompts = [json.loads(line)["prompt"] for line in prompts_file(work, args.count).open()]
        own = min(ceiling(server, prompts, args.concurrency) for _ in range(3))
        print(
            f"server ceiling (bare aiohttp client, best of 3): {own:.2f} s = {own / ideal:.3f}x "
            f"ideal ({args.count} x {args.latency} s / {args.concurrency} = {ideal:.3f} s)"
        )
        load = [measure.load()]
        env = env_for(server.url)
        for r in range(args.rounds):
            for name, runner in harnesses.items():
                server.reset(prompts)
                got = measure.run(runner(work, server.url, args.concurrency), cwd=work, env=env)
                stats = server.stats()
                wrong = check(stats, got.rc, args.count, args.concurrency)
                if wrong:
                    problems[name] = wrong
                    print(f"round {r + 1}: {name}: {wrong}\n{got.tail}")
                    continue
                row = {
                    "wall": got.wall_s,
                    "span": stats["span_s"],
                    "first_request": stats["first_at"] - got.started,
                    "cpu": got.cpu_s,
                    "rss": got.max_rss_mb,
                    "peak": stats["peak_in_flight"],
                }
                results[name].append(row)
                print(
                    f"round {r + 1}: {name}: wall {got.wall_s:.2f} s, span {row['span']:.2f} s, "
                    f"first request at {row['first_request']:.2f} s, CPU {got.cpu_s:.2f} s, "
                    f"{row['peak']} in flight at most",
                    flush=True,
                )
            load.append(measure.load())
    table = summarise(results, ideal)
    print()
    print(markdown(table, args, ideal, own, load))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "count": args.count,
                    "latency_s": args.latency,
                    "concurrency": args.concurrency,
                    "ideal_s": ideal,
                    "ceiling_s": own,
                    "load": load,
                    "cores": measure.cores(),
                    "harnesses": table,
                    "problems": problems,
                },
                indent=2,
            )
        )


def check(stats: dict[str, Any], rc: int, count: int, concurrency: int) -> str | None:
    """Why a harness's run does not count (None: it asked exactly the prompts it was given,
    each once, never more than ``concurrency`` at a time, and exited cleanly)."""
    if rc != 0:
        return f"exit status {rc}"
    if stats["requests"] != count:
        return f"made {stats['requests']} requests for {count} prompts"
    if stats["unexpected_prompts"] or stats["distinct_prompts"] != count:
        return (
            f"asked {stats['distinct_prompts']} distinct prompts, "
            f"{stats['unexpected_prompts']} not among those given"
        )
    if stats["peak_in_flight"] > concurrency:
        return f"{stats['peak_in_flight']} requests in flight at once (limit {concurrency})"
    return None


def summarise(
    results: dict[str, list[dict[str, float]]], ideal: float
) -> dict[str, dict[str, float]]:
    table = {}
    for name, rows in results.items():
        if not rows:
            continue

        def med(key: str, rows: list[dict[str, float]] = rows) -> float:
            return statistics.median(r[key] for r in rows)

        table[name] = {
            "rounds": len(rows),
            "wall_min": min(r["wall"] for r in rows),
            "wall_median": med("wall"),
            "ratio_median": med("wall") / ideal,
            "span_median": med("span"),
            "first_request_median": med("first_request"),
            "cpu_median": med("cpu"),
            "rss_max_mb": max(r["rss"] for r in rows),
            "peak_in_flight": max(r["peak"] for r in rows),
        }
    return table


def markdown(
    table: dict[str, dict[str, float]],
    args: argparse.Namespace,
    ideal: float,
    ceiling_s: float,
    load: list[float],
) -> str:
    """The README's table, as measured."""
    lines = [
        f"{args.count} distinct DyVal D2 prompts, {args.latency * 1000:g} ms server latency, "
        f"concurrency {args.concurrency}, cache off; ideal {ideal:.3f} s; the loopback server "
        f"alone (bare aiohttp client) {ceiling_s:.2f} s = {ceiling_s / ideal:.2f}x ideal; "
        f"{min(r['rounds'] for r in table.values()) if table else 0} interleaved rounds, "
        f"medians; {measure.cores()} cores, load average {min(load):.1f}-{max(load):.1f}",
        "",
        "| harness | wall (min / median) | x ideal | span of calls (server) "
        "| first request after start | CPU | peak RSS |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in table.items():
        lines.append(
            f"| {name} | {row['wall_min']:.2f} / {row['wall_median']:.2f} s "
            f"| {row['ratio_median']:.2f}x | {row['span_median']:.2f} s "
            f"| {row['first_request_median']:.2f} s | {row['cpu_median']:.2f} s "
            f"| {row['rss_max_mb']:.0f} MB |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
