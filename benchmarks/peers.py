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
import time
from collections.abc import Callable
from pathlib import Path

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


def pytest_reasoning(workers: int) -> Runner:
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
            "--reasoning-concurrency", str(per), "-n", str(workers),
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
        str(VENVS / "lm-eval" / "bin" / "lm_eval"), "--model", "local-chat-completions",
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


PEERS: dict[str, tuple[Runner, Path]] = {
    f"lm-evaluation-harness {VERSIONS['lm-eval']}": (
        lm_eval,
        VENVS / "lm-eval" / "bin" / "lm_eval",
    ),
    f"promptfoo {VERSIONS['promptfoo']}": (promptfoo, NPM / "node_modules" / ".bin" / "promptfoo"),
    f"inspect_ai {VERSIONS['inspect-ai']}": (inspect_ai, VENVS / "inspect-ai" / "bin" / "python"),
}


def setup() -> None:
    """Side environments for the peers (network: PyPI and npm)."""
    for name in ("lm-eval", "inspect-ai"):
        venv = VENVS / name
        if not venv.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", f"{name}=={VERSIONS[name]}", "openai"],
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
    args = ap.parse_args()
    if args.setup:
        setup()
        return
    harnesses: dict[str, Runner] = {
        "pytest-reasoning (cache off, one process)": pytest_reasoning(0),
        "pytest-reasoning -n 2": pytest_reasoning(2),
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
    results: dict[str, dict[str, list[float]]] = {k: {"wall": [], "span": []} for k in harnesses}
    with tempfile.TemporaryDirectory() as tmp, Loopback(args.latency) as server:
        work = Path(tmp)
        prompts = [json.loads(line)["prompt"] for line in prompts_file(work, args.count).open()]
        own = min(ceiling(server, prompts, args.concurrency) for _ in range(3))
        print(
            f"server ceiling (bare aiohttp client, best of 3): {own:.2f} s = {own / ideal:.3f}x "
            f"ideal ({args.count} x {args.latency} s / {args.concurrency} = {ideal:.3f} s)"
        )
        load = [os.getloadavg()[0]]
        env = env_for(server.url)
        for r in range(args.rounds):
            for name, runner in harnesses.items():
                server.reset()
                cmd = runner(work, server.url, args.concurrency)
                start = time.perf_counter()
                proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
                wall = time.perf_counter() - start
                stats = server.stats()
                ok = stats["requests"] >= args.count
                if not ok:
                    tail = (proc.stdout + proc.stderr)[-1500:]
                    print(
                        f"round {r + 1}: {name} made {stats['requests']} requests (rc {proc.returncode}):\n{tail}"
                    )
                    continue
                results[name]["wall"].append(wall)
                results[name]["span"].append(stats["span_s"] or 0.0)
                print(f"round {r + 1}: {name}: wall {wall:.2f} s, span {stats['span_s']:.2f} s")
            load.append(os.getloadavg()[0])
    print()
    print(f"{'harness':44} {'wall min / median':>20} {'x ideal':>8} {'span min / median':>20}")
    table = {}
    for name, got in results.items():
        if not got["wall"]:
            continue
        w, s = got["wall"], got["span"]
        row = {
            "wall_min": min(w), "wall_median": statistics.median(w),
            "span_min": min(s), "span_median": statistics.median(s),
            "ratio_median": statistics.median(w) / ideal,
        }  # fmt: skip
        table[name] = row
        print(
            f"{name:44} {row['wall_min']:8.2f} / {row['wall_median']:6.2f} s "
            f"{row['ratio_median']:7.2f}x {row['span_min']:8.2f} / {row['span_median']:6.2f} s"
        )
    print(f"load average (1 min) during the rounds: {min(load):.2f}–{max(load):.2f}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"ideal_s": ideal, "ceiling_s": own, "load": load, "harnesses": table}, indent=2
            )
        )


if __name__ == "__main__":
    main()
