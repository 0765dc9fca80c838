"""Pytester's ``runpytest_subprocess`` runs (and their xdist workers) as forks of a process
that imported pytest, LiteLLM and this package once (5-7 s of CPU for a fresh interpreter);
still separate processes, with their own pid, files, environment and exit status.

This file run as a script is the forking process (the zygote). It forks a run twice, so the
run is a child of the test process (a child subreaper), which waits for it as for any
subprocess: the zygote keeps no state, and its death loses no run. A fork runs only after its
client holds its pid (forkclient.ask), and anything that fails before (no zygote, no answer
in 300 s, a broken socket) gives a fresh interpreter: a run is never lost, run twice or
failed by this module. Runs whose environment differs in what is read at import
(``PYTHON*``, ``LITELLM_*``, ``HYPOTHESIS_*``, locale), and those of tests marked
``fresh_process``, get fresh interpreters."""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import io
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from forkclient import ask

IMPORT_TIME = ("PYTHON", "LITELLM", "HYPOTHESIS", "LANG", "LC_", "TZ")
DEFAULTS = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # what the package sets where unset
# pytest's one complaint about a fork: modules imported before it could rewrite them.
QUIET = [f"-Wignore:Module already imported so cannot be rewritten; {name}:pytest.PytestAssertRewriteWarning" for name in ("anyio", "pytest_reasoning")]


class Forked:
    """The parts of :class:`subprocess.Popen` that ``Pytester.run`` uses, for a child of ours."""

    stdin = None

    def __init__(self, pid: int) -> None:
        os.waitpid(pid, os.WNOHANG)  # ChildProcessError unless it is our child
        self.pid, self.returncode, self._done = pid, None, os.pidfd_open(pid)

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._done], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
            os.close(self._done)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:  # not yet reaped: the pid cannot be another's
            os.kill(self.pid, 9)


class Zygote:
    """This test process's zygote, started on first use with its starting environment."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env, self.proc, self.folder, self.broken = env, None, "", False
        self.lock = threading.Lock()

    def eligible(self, env: dict[str, str]) -> bool:
        keys = {k for k in {*env, *self.env} if k.startswith(IMPORT_TIME) and k != "PYTHONPATH"}
        same = all(env.get(k, DEFAULTS.get(k)) == self.env.get(k, DEFAULTS.get(k)) for k in keys)
        return ENABLED and not self.broken and same

    def spawn(self, args: list[str], env: dict[str, str], cwd: str, fds: list[int]) -> Any:
        with self.lock:
            try:
                if self.proc is None:
                    self._start()
                req = {"args": args, "env": env, "cwd": cwd}
                proc, conn = ask(os.path.join(self.folder, "s"), req, fds, Forked)
                os.close(conn)
                return proc
            except (OSError, ValueError) as exc:
                print(f"forkrun: {exc!r}; fresh interpreters from now on", file=sys.stderr)
                self.broken = True
                self.close()
                return None

    def _start(self) -> None:
        if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0):  # PR_SET_CHILD_SUBREAPER
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
        self.folder = tempfile.mkdtemp(prefix="forkrun-")
        with socket.socket(socket.AF_UNIX) as listener:  # then only the zygote holds it
            listener.bind(os.path.join(self.folder, "s"))
            listener.listen(64)
            fd = listener.fileno()
            self.proc = subprocess.Popen(
                [sys.executable, __file__, str(fd)], stdin=subprocess.PIPE, env=self.env,
                stdout=subprocess.DEVNULL, cwd=Path(__file__).parent, pass_fds=[fd],
            )  # fmt: skip

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()  # its end of file: the zygote exits
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


ZYG = Zygote(dict(os.environ))
ENABLED = True  # False while a test marked fresh_process runs


def _fork(cmd: list[str], env: dict[str, str], cwd: str, out: Any, err: Any) -> Any:
    args = [os.fspath(a) for a in cmd]
    prefix = 2 if args[1:2] == ["-mpytest"] else 3 if args[1:3] == ["-m", "pytest"] else 0
    if args[:1] != [sys.executable] or not prefix or not ZYG.eligible(env):
        return None
    with open(os.devnull, "rb") as null:
        return ZYG.spawn(args[prefix:], env, cwd, [null.fileno(), out.fileno(), err.fileno()])


def install() -> None:
    """Route ``Pytester.popen`` of ``python -mpytest ...`` to a fork where eligible."""
    original = pytest.Pytester.popen

    def popen(self: pytest.Pytester, cmdargs: Any, stdout: Any = subprocess.PIPE,
              stderr: Any = subprocess.PIPE, stdin: Any = pytest.Pytester.CLOSE_STDIN,
              **kw: Any) -> Any:  # fmt: skip
        env = os.environ.copy()  # as Pytester.popen makes it
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH", "")]))
        files = all(isinstance(f, io.IOBase) for f in (stdout, stderr))
        plain = not kw and stdin is pytest.Pytester.CLOSE_STDIN and files
        forked = plain and _fork(list(cmdargs), env, os.getcwd(), stdout, stderr)
        return forked or original(self, cmdargs, stdout=stdout, stderr=stderr, stdin=stdin, **kw)

    pytest.Pytester.popen = popen  # type: ignore[method-assign]


def run(cmd: list[str], *, cwd: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kwargs)``, forked for
    ``python -m pytest ...`` where eligible (``env`` and ``timeout`` are the kwargs a fork takes)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        env = dict(kwargs.get("env") or os.environ)
        ok = set(kwargs) <= {"env", "timeout"}
        proc = ok and _fork(cmd, env, os.fspath(cwd), out, err)
        if not proc:
            return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kwargs)
        try:
            code = proc.wait(kwargs.get("timeout"))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(cmd, code, out.read(), err.read())


def serve(listener: socket.socket) -> tuple[dict[str, Any], list[int], socket.socket]:
    """The zygote: a fork (twice) for each request until its stdin ends; returns in a fork."""
    import execnet.gateway_io  # xdist starts workers with it: a forked run's are forks too

    args, client = execnet.gateway_io.popen_args, str(Path(__file__).with_name("forkclient.py"))
    execnet.gateway_io.popen_args = lambda spec: args(spec) if spec.python else [sys.executable, "-S", "-E", client, *args(spec)[1:]]  # fmt: skip
    while True:
        ready = select.select([0, listener], [], [])[0]
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:  # workers that have ended
                pass
        if 0 in ready and not os.read(0, 64):
            with contextlib.suppress(ChildProcessError):
                while True:  # the rest, so their CPU time counts as the test process's
                    os.wait()
            sys.exit(0)  # the test process closed our stdin, or has gone
        if listener in ready and (job := _receive(listener)) and _fork_for(*job):
            listener.close()
            return job


def _receive(listener: socket.socket) -> tuple[dict[str, Any], list[int], socket.socket] | None:
    conn = listener.accept()[0]
    try:
        conn.settimeout(60)
        msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        while not msg.endswith(b"\n") and (chunk := conn.recv(1 << 20)):
            msg += chunk
        return json.loads(msg), fds, conn
    except (OSError, ValueError) as exc:  # its client gets no pid: a fresh interpreter
        print(f"forkrun zygote: {exc!r}", file=sys.stderr)
        conn.close()
        return None


def _fork_for(req: dict[str, Any], fds: list[int], conn: socket.socket) -> bool:
    """True in the fork. A run is forked twice: its parent exits at once, so it becomes a
    child of the test process (which waits for it); a worker stays ours (reaped in serve)."""
    r, w = os.pipe()
    if (pid := os.fork()) == 0:  # never unwinds into the zygote's loop: only _exit
        if "args" in req:
            try:
                pid = os.fork()
            except BaseException:
                os._exit(1)
            if pid:
                try:
                    os.write(w, str(pid).encode())
                finally:
                    os._exit(0)
        os.close(r)
        os.close(w)
        return True
    os.close(w)
    try:
        if "args" in req:
            os.waitpid(pid, 0)
            pid = int(os.read(r, 64))
        conn.sendall(f"{pid}\n".encode())
    except (OSError, ValueError) as exc:  # the fork gets no "go" and exits; its client falls back
        print(f"forkrun zygote: {exc!r}", file=sys.stderr)
    for fd in (r, *fds):
        os.close(fd)
    conn.close()
    return False


def become(req: dict[str, Any], fds: list[int], conn: socket.socket, sock: str) -> None:
    """The fork: once its client says "go", the pytest run or xdist worker it asked for."""
    conn.settimeout(None)
    if conn.recv(1) != b"g":
        os._exit(1)  # the client gave up on us and starts a fresh interpreter
    conn.detach()  # held open until we exit: a worker's forkclient.py waits for its end
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"], FORKRUN_SOCKET=sock)
    extra = [p for p in req["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    path = [*extra, *[p for p in BASE if p not in extra]]
    if "args" in req:  # python -m pytest ARGS
        sys.path[:] = [req["cwd"], *path]
        sys.argv = [importlib.import_module("pytest.__main__").__file__ or "", *QUIET, *req["args"]]
        from _pytest.config import _console_main

        sys.exit(_console_main())
    argv = req["argv"]  # a worker: what python gets from execnet, -u [-B] -c CODE
    sys.path[:] = ["", *path]
    sys.dont_write_bytecode = "-B" in argv
    sys.argv = ["-c"]
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
    for fd, name in ((1, "stdout"), (2, "stderr")):  # -u
        stream = io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), write_through=True)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    exec(compile(argv[argv.index("-c") + 1], "<string>", "exec"), {"__name__": "__main__"})
    sys.exit(0)


if __name__ == "__main__":  # the zygote: what every run would import, imported once
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for name in ("_pytest.pytester", "litellm", "pytest_reasoning.plugin.session",
                 "pytest_reasoning.report", "pytest_reasoning.evaluate", "pytest_reasoning.registry"):  # fmt: skip
        importlib.import_module(name)  # not the pytest11 plugins: pytest rewrites those
    BASE = sys.path[1:]  # sys.path[0] is this folder, which a run does not see
    listening = socket.socket(fileno=int(sys.argv[1]))
    sock = listening.getsockname()
    become(*serve(listening), sock=sock)
