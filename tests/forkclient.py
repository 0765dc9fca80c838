"""The client side of tests/forkrun.py's zygote, and what execnet starts instead of ``python``
for an xdist worker of a forked run: the zygote forks the worker on this process's stdin,
stdout and stderr, and this process waits for its end. Where no fork can be had, it becomes
the worker itself: ``python`` with the same arguments."""

import json
import os
import socket
import sys
from typing import Any


def ask(path: str, req: dict[str, Any], fds: list[int], child: Any = int) -> Any:
    """A fork from the zygote listening at ``path``, on ``fds`` as its stdin, stdout and
    stderr: ``child(pid)`` must succeed before the fork may run (without our "go" it exits,
    and nothing ran). Any failure raises OSError or ValueError."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(300)  # a fresh zygote's imports under load; a cap, not a speed claim
        conn.connect(path)
        socket.send_fds(conn, [json.dumps(req).encode() + b"\n"], fds)
        answer = b""
        while not answer.endswith(b"\n") and (chunk := conn.recv(64)):
            answer += chunk
        proc = child(int(answer))  # ValueError where the zygote failed before the fork
        conn.sendall(b"g")
        return proc, conn.detach()


if __name__ == "__main__":
    req = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
    try:
        _, fd = ask(os.environ["FORKRUN_SOCKET"], req, [0, 1, 2])
    except (OSError, KeyError, ValueError):
        os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
    with socket.socket(fileno=fd) as conn:
        conn.settimeout(None)
        while conn.recv(64):  # the worker holds the other end until it exits
            pass
