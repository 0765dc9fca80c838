"""Pytester's ``runpytest_subprocess``, and the xdist workers such a run starts, as forks of
a process that already imported pytest, LiteLLM and this package.

Each of CI's few hundred pytest processes (subprocess runs and their ``-n 2`` workers) paid
about 5 s of CPU importing LiteLLM and 1-2 s importing pytest and this package before its first
line of work: more than a third of the whole test run on a 2-core machine. A fork of a process
that did it once starts in milliseconds and is still a real, separate process (its own pid,
file descriptors, environment, working directory and exit status; LiteLLM talking HTTP to the
test server; nothing of this package mocked). xdist's workers stay separate processes on
pipes: execnet starts ``forkclient.py`` instead of ``python``, which hands its stdin, stdout
and stderr to the forking process (as ``--tx popen//python=...`` would name another
interpreter).

Used only where a fresh interpreter would behave the same: a run whose environment differs from
the forking process's in anything read at import time (``PYTHON*``, ``LITELLM_*``,
``HYPOTHESIS_*``: a different hash seed, say) starts a fresh interpreter as before, and so does
every run of a test marked ``fresh_process`` (one that asserts what a run imports). Forks share
one hash seed: a test that needs runs under different seeds sets ``PYTHONHASHSEED``. The one
visible difference, pytest's warning that LiteLLM imported anyio (a pytest plugin too) before
pytest could rewrite its asserts, is filtered with ``-W``.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

import pytest

# Read once at import by the modules preloaded below (or by the interpreter itself): a run that
# sets any of them differently gets a fresh interpreter.
IMPORT_TIME = ("PYTHON", "LITELLM", "HYPOTHESIS", "LANG", "LC_", "TZ")
# What this package sets before importing LiteLLM where it is unset (so unset and this agree).
DEFAULTS = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}

ZYGOTE = r"""
import importlib, io, json, os, selectors, socket, sys, tempfile
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import pytest, _pytest.pytester, litellm, pytest_reasoning.plugin.session
import pytest_reasoning.report, pytest_reasoning.evaluate, pytest_reasoning.registry
import execnet.gateway_io
# Not the pytest11 plugins: pytest rewrites their asserts as it imports them, and warns
# about any imported before it could.
rfd, wfd = os.dup(0), os.dup(1)
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0)
os.dup2(null, 1)
base_path = [p for p in sys.path[1:]]
main_file = importlib.import_module("pytest.__main__").__file__
sel = selectors.DefaultSelector()
sel.register(rfd, selectors.EVENT_READ, "request")
# xdist's workers of a forked run: execnet starts forkclient.py instead of python, which
# hands its stdin, stdout and stderr to this process over a socket; the worker is a fork too.
sock_path = os.path.join(tempfile.mkdtemp(prefix="forkrun-"), "s")
listener = socket.socket(socket.AF_UNIX)
listener.bind(sock_path)
listener.listen(64)
sel.register(listener, selectors.EVENT_READ, "worker")
_popen_args = execnet.gateway_io.popen_args
client = sys.argv[1]  # forkclient.py

def popen_args(spec):
    args = _popen_args(spec)
    if not spec.python:
        args[0:1] = [sys.executable, "-S", "-E", client]
    return args

execnet.gateway_io.popen_args = popen_args

def reply(obj):
    os.write(wfd, (json.dumps(obj) + "\n").encode())

def enter(cwd, env):
    sel.close()
    listener.close()
    os.close(rfd)
    os.close(wfd)
    os.close(null)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    os.environ["FORKRUN_SOCKET"] = sock_path
    extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [*extra, *[p for p in base_path if p not in extra]]

def run_pytest(req):
    os.dup2(null, 0)
    for fd, path in ((1, req["stdout"]), (2, req["stderr"])):
        got = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(got, fd)
        os.close(got)
    sys.path[:] = [req["cwd"], *enter(req["cwd"], req["env"])]
    # LiteLLM imported anyio, a pytest11 plugin too, before pytest could mark it for
    # rewriting: the one difference from a fresh interpreter, and pytest says so.
    quiet = "ignore:Module already imported so cannot be rewritten; anyio:pytest.PytestAssertRewriteWarning"
    sys.argv = [main_file, "-W", quiet, *req["args"]]
    from _pytest.config import _console_main  # what python -m pytest calls
    sys.exit(_console_main())

def run_worker(req, fds):
    for target, fd in zip((0, 1, 2), fds):
        os.dup2(fd, target)
        os.close(fd)
    sys.path[:] = ["", *enter(req["cwd"], req["env"])]
    argv = req["argv"]  # what python gets from execnet: -u [-B] -c CODE
    sys.dont_write_bytecode = "-B" in argv
    code = argv[argv.index("-c") + 1]
    sys.argv = ["-c"]
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
    for fd, name in ((1, "stdout"), (2, "stderr")):  # -u
        stream = io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), write_through=True)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
    sys.exit(0)

def start_worker():
    conn, _ = listener.accept()
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while chunk := conn.recv(1 << 16):
        msg += chunk
    pid = os.fork()
    if pid == 0:
        conn.close()
        run_worker(json.loads(msg), fds)
    for fd in fds:
        os.close(fd)
    sel.register(os.pidfd_open(pid), selectors.EVENT_READ, (pid, conn))

buf = b""
while True:
    for key, _ in sel.select():
        if key.data == "worker":
            start_worker()
        elif key.data == "request":
            chunk = os.read(rfd, 1 << 16)
            if not chunk:
                os.unlink(sock_path)
                os.rmdir(os.path.dirname(sock_path))
                sys.exit(0)
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                pid = os.fork()
                if pid == 0:
                    run_pytest(json.loads(line))
                sel.register(os.pidfd_open(pid), selectors.EVENT_READ, (pid, None))
                reply({"started": pid})
        else:
            pid, conn = key.data
            sel.unregister(key.fd)
            os.close(key.fd)
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            if conn is None:
                reply({"exited": pid, "rc": code})
            else:
                conn.sendall(str(code).encode())
                conn.close()
"""


class Exit(threading.Event):
    """Set when a forked process has exited; ``code`` as ``Popen.returncode`` gives it."""

    code = -9  # what a run gets if the zygote dies under it


class Forked:
    """The parts of :class:`subprocess.Popen` that ``Pytester.run`` uses."""

    stdin = None

    def __init__(self, pid: int, ended: Exit) -> None:
        self.pid = pid
        self._exit = ended  # its own: the kernel reuses pids (pid_max is 32768 here)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and self._exit.is_set():
            self.returncode = self._exit.code
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._exit.wait(timeout):
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
        code = self.poll()
        assert code is not None
        return code

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    """One forking process per test process, started on first use with the environment the
    test process started with."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()
        self.started: queue.Queue[tuple[int, Exit]] = queue.Queue()
        self.running: dict[int, Exit] = {}

    def _start(self) -> subprocess.Popen[bytes]:
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", ZYGOTE, str(Path(__file__).with_name("forkclient.py"))],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=self.env,
                cwd=Path(__file__).parent,
            )
            threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
        return self.proc

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            msg = json.loads(line)
            if "started" in msg:  # the zygote reports a pid's exit before its reuse
                self.running[msg["started"]] = ended = Exit()
                self.started.put((msg["started"], ended))
            else:
                ended = self.running.pop(msg["exited"])
                ended.code = msg["rc"]
                ended.set()
        for ended in self.running.values():  # the zygote died: no run waits forever
            ended.set()

    def eligible(self, env: dict[str, str]) -> bool:
        """A fork would behave as a fresh interpreter under ``env`` (and the test allows it)."""
        keys = set(env) | set(self.env)
        return ENABLED and not any(
            env.get(k, DEFAULTS.get(k)) != self.env.get(k, DEFAULTS.get(k))
            for k in keys
            if k != "PYTHONPATH" and k.startswith(IMPORT_TIME)
        )

    def spawn(
        self, args: list[str], env: dict[str, str], stdout: str, stderr: str, cwd: str | None = None
    ) -> Forked:
        req = {
            "args": args,
            "env": env,
            "cwd": cwd or os.getcwd(),
            "stdout": stdout,
            "stderr": stderr,
        }
        with self.lock:
            proc = self._start()
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(req) + "\n").encode())
            proc.stdin.flush()
            pid, ended = self.started.get(timeout=120)
        return Forked(pid, ended)

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


ZYG = Zygote(dict(os.environ))
ENABLED = True  # False while a test marked fresh_process runs


def install() -> None:
    """Route ``Pytester.popen`` of ``python -mpytest ...`` through the zygote."""
    original = pytest.Pytester.popen

    def popen(
        self: pytest.Pytester,
        cmdargs: Any,
        stdout: Any = subprocess.PIPE,
        stderr: Any = subprocess.PIPE,
        stdin: Any = pytest.Pytester.CLOSE_STDIN,
        **kw: Any,
    ) -> Any:
        args = [os.fspath(a) for a in cmdargs]
        env = os.environ.copy()
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH", "")]))
        if (
            not kw
            and stdin is pytest.Pytester.CLOSE_STDIN
            and args[:2] == [sys.executable, "-mpytest"]
            and _named(stdout)
            and _named(stderr)
            and ZYG.eligible(env)
        ):
            return ZYG.spawn(args[2:], env, stdout.name, stderr.name)
        return original(self, cmdargs, stdout=stdout, stderr=stderr, stdin=stdin, **kw)

    pytest.Pytester.popen = popen  # type: ignore[method-assign]


def run(
    cmd: list[str], *, cwd: str | os.PathLike[str], **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kwargs)``, a fork for
    ``python -m pytest ...`` where eligible (``env`` and ``timeout`` are the only kwargs a fork
    takes; any other, ``preexec_fn`` say, gets a fresh interpreter)."""
    env = dict(kwargs.get("env") or os.environ)
    timeout = kwargs.get("timeout")
    if not (
        set(kwargs) <= {"env", "timeout"}
        and cmd[:3] == [sys.executable, "-m", "pytest"]
        and ZYG.eligible(env)
    ):
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kwargs)
    with tempfile.TemporaryDirectory() as tmp:
        out, err = Path(tmp, "out"), Path(tmp, "err")
        out.touch()
        err.touch()
        proc = ZYG.spawn(cmd[3:], env, str(out), str(err), cwd=os.fspath(cwd))
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
        return subprocess.CompletedProcess(cmd, code, out.read_text(), err.read_text())


def _named(f: IO[Any] | Any) -> bool:
    return isinstance(getattr(f, "name", None), str) and os.path.isfile(f.name)
