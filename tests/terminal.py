"""Runs a command on a pseudo-terminal of a given width, and reads its output back as a
terminal would show it: what users of the live count and the colours see."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["ESCAPES", "on_a_terminal", "screen"]

# SGR colours and other CSI sequences, and OSC sequences (pytest's terminal progress).
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def on_a_terminal(
    args: Sequence[str], cwd: Path, columns: int = 100, env: dict[str, str] | None = None
) -> str:
    """Run ``args`` with stdout and stderr on a pseudo-terminal ``columns`` wide (and
    ``COLUMNS`` set, as a shell does); its output, escapes and all."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    environ = {**os.environ, **(env or {}), "COLUMNS": str(columns), "LINES": "40"}
    proc = subprocess.Popen(args, stdout=slave, stderr=slave, cwd=cwd, env=environ)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=300)
    os.close(master)
    return out.decode("utf-8", "replace")


def screen(output: str) -> list[tuple[str, int]]:
    """The lines a terminal shows at the end, each with the furthest column its cursor
    reached (past the terminal's width, a real one would have wrapped: the line did not fit).
    Backspace moves left, carriage return to the start; escapes take no room."""
    lines: list[tuple[list[str], list[int]]] = [([], [0])]
    col = 0
    for ch in ESCAPES.sub("", output).replace("\r\n", "\n"):
        line, furthest = lines[-1]
        if ch == "\n":
            lines.append(([], [0]))
            col = 0
        elif ch == "\r":
            col = 0
        elif ch == "\b":
            col = max(0, col - 1)
        else:
            line.extend(" " * (col + 1 - len(line)))
            line[col] = ch
            col += 1
            furthest[0] = max(furthest[0], col)
    return [("".join(line).rstrip(), furthest[0]) for line, furthest in lines]
