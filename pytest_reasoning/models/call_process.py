"""LiteLLM calls from helper processes (``--reasoning-call-processes N``).

``import litellm`` costs seconds of CPU and every call several milliseconds more; pytest costs
about two per item. In one process they take turns on one interpreter lock, so a run is as
slow as their sum. Here the calls run in a child process on another core: it imports LiteLLM
while pytest collects, and its per-call work runs beside pytest's.

The child keeps no state of the run. It gets a :class:`.LiteLLMClient`'s constructor
arguments and requests, answers them with that client's own ``acomplete`` (retries and error
kinds included) and returns :class:`~pytest_reasoning.core.Reply` values; the cache, claims,
scoring and results stay in the pytest process. Keys cross no pipe: the child reads them from
the environment it inherits, as the client would here. The pipe is a private socket pair
between two processes of ours, so its frames are pickles.

    python -m pytest_reasoning.models.call_process FD     # the child (started by CallProcess)
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import itertools
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from typing import Any

from ..core import Reply
from ..errors import ReasoningError
from .base import ChatRequest, error_text, register_secret_env, secret_env_names
from .litellm_client import Capabilities, LiteLLMClient

__all__ = ["CallProcess", "CallProcessDied", "ProcessClient", "call_processes", "shutdown"]

_HEADER = struct.Struct("!I")
# How long closing waits for the child to leave before it is killed (it exits at once on EOF).
_EXIT_WAIT_S = 10.0


def _frame(message: tuple[Any, ...]) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


class CallProcessDied(ReasoningError):
    """The child exited (or could not start): every pending and later call fails with this."""


class CallProcess:
    """The pytest side of one child: requests out, replies back on a reader thread."""

    def __init__(self) -> None:
        if os.name != "posix":  # the child gets its end of the socket pair by descriptor
            raise CallProcessDied("--reasoning-call-processes needs a POSIX system")
        parent, child = socket.socketpair()
        # The child's stderr, kept to name a crash by its last line (never its output).
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", __name__, str(child.fileno())],
                pass_fds=(child.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._log,
            )
        except OSError as exc:
            parent.close()
            self._log.close()
            raise CallProcessDied(f"the call process could not start: {exc}") from None
        finally:
            child.close()
        self._sock = parent
        self._lock = threading.Lock()
        self._pending: dict[int, concurrent.futures.Future[Any]] = {}
        self._ids = itertools.count(1)
        self.dead: str | None = None
        self.ready = False  # LiteLLM imported there: calls sent now go out at once
        self._closing = False
        self._closed = False
        self._reader = threading.Thread(
            target=self._read, name="reasoning-call-process", daemon=True
        )
        self._reader.start()

    # -- requests ----------------------------------------------------------------------------
    def request(self, kind: str, *args: Any) -> tuple[int, concurrent.futures.Future[Any]]:
        """Send one request; its future gets the child's answer (or CallProcessDied)."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        rid = next(self._ids)
        with self._lock:
            if self.dead is not None:
                future.set_exception(CallProcessDied(self.dead))
                return rid, future
            self._pending[rid] = future
            try:
                self._sock.sendall(_frame((kind, rid, *args)))
            except OSError as exc:
                self._pending.pop(rid, None)
                future.set_exception(CallProcessDied(self._death(f"write failed: {exc}")))
        return rid, future

    def forget(self, rid: int) -> None:
        """A request given up here (cancelled): not outstanding any more."""
        with self._lock:
            self._pending.pop(rid, None)

    def tell(self, kind: str, *args: Any) -> None:
        """Send a message that gets no answer (a cancellation)."""
        with self._lock:
            if self.dead is None:
                with contextlib.suppress(OSError):
                    self._sock.sendall(_frame((kind, 0, *args)))

    # -- replies -----------------------------------------------------------------------------
    def _read(self) -> None:
        stream = self._sock.makefile("rb")
        try:
            while True:
                head = stream.read(_HEADER.size)
                if len(head) < _HEADER.size:
                    break
                (size,) = _HEADER.unpack(head)
                body = stream.read(size)
                if len(body) < size:
                    break
                status, rid, payload = pickle.loads(body)
                if status == "ready":
                    self.ready = True
                    continue
                with self._lock:
                    future = self._pending.pop(rid, None)
                if future is None:  # cancelled here meanwhile
                    continue
                # A cancellation may land between any check and the set: never fatal here.
                with contextlib.suppress(concurrent.futures.InvalidStateError):
                    if status == "ok":
                        future.set_result(payload)
                    else:
                        future.set_exception(CallProcessDied(str(payload)))
        except ConnectionError:
            pass  # it died: named below
        except (OSError, ValueError, pickle.UnpicklingError, EOFError) as exc:
            self._death(f"unreadable reply: {exc}")
        finally:
            stream.close()
            message = self._death("it closed the connection")
            with self._lock:
                pending, self._pending = self._pending, {}
            for future in pending.values():
                with contextlib.suppress(concurrent.futures.InvalidStateError):
                    future.set_exception(CallProcessDied(message))

    def _death(self, why: str) -> str:
        """The one line that names why the child is gone (its exit status, its last words)."""
        if self.dead is not None:
            return self.dead
        if self._closing:
            self.dead = "the call process was closed"
            return self.dead
        code = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = self._proc.wait(timeout=2.0)
        last = ""
        with contextlib.suppress(OSError):
            self._log.seek(0)
            lines = [ln for ln in self._log.read()[-4096:].decode("utf-8", "replace").splitlines()]
            last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
        if code is None:
            status = "still running"
        elif code < 0:
            status = f"killed by signal {-code}"
        else:
            status = f"exit status {code}"
        detail = f": {error_text(last)}" if last else ""
        self.dead = f"the call process stopped ({why}; {status}){detail}"
        return self.dead

    @property
    def outstanding(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._pending)

    def end(self) -> None:
        """EOF to the child: it cancels what is in flight and leaves (see close)."""
        self._closing = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        """End the child, then reap it; once."""
        if self._closed:
            return
        self._closed = True
        self.end()
        try:
            self._proc.wait(timeout=_EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=_EXIT_WAIT_S)
        with contextlib.suppress(OSError):
            self._sock.close()
        self._log.close()


_POOL: list[CallProcess] = []
_POOL_LOCK = threading.Lock()


def call_processes(count: int) -> list[CallProcess]:
    """This process's ``count`` children, started on first use (``--reasoning-call-processes``)."""
    with _POOL_LOCK:
        if len(_POOL) != count:
            for process in _POOL:
                process.close()
            _POOL.clear()
            if not _REGISTERED:
                atexit.register(shutdown)
                _REGISTERED.append(True)
            # Started together: their imports of litellm run side by side.
            _POOL.extend(CallProcess() for _ in range(max(1, count)))
        return list(_POOL)


_REGISTERED: list[bool] = []


def shutdown() -> None:
    """Close the children if any were started (the session's end; atexit as a last resort)."""
    with _POOL_LOCK:
        pool = list(_POOL)
        _POOL.clear()
    for process in pool:
        process.end()  # each is told at once; the waits overlap
    for process in pool:
        process.close()


class ProcessClient(LiteLLMClient):
    """A :class:`.LiteLLMClient` whose capabilities and calls are answered by the children.

    Everything that shapes a request (parameters, cache key, identity) is computed here, by
    the same code as in-process; only ``litellm`` itself runs there. Each call goes to the
    child with the fewest calls outstanding among those that have imported LiteLLM.
    """

    def __init__(self, model: str, *, processes: int = 1, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        kwargs.pop("capability_cache", None)  # kept here: the children never ask twice
        self._spec = (model, kwargs)
        self._count = max(1, processes)
        self._remote: dict[CallProcess, int] = {}  # child → this client's id there
        self._limit = 1

    def queue_in_child(self, limit: int) -> None:
        """The children keep ``limit`` calls in flight between them; more may queue there."""
        self._limit = limit

    def drop_queued(self) -> None:
        """Queued calls not yet sent are answered unsent (``not_asked``)."""
        with _POOL_LOCK:
            pool = list(_POOL)
        for process in pool:
            cid = self._remote.get(process)
            if cid is not None:
                process.tell("drop", cid)

    def _child(self, index: int | None = None) -> tuple[CallProcess, int, int]:
        """A child (the least busy unless ``index``), this client's id there, its window."""
        # A window smaller than the pool uses as many children as it has slots: each child
        # keeps at least one call in flight.
        pool = call_processes(self._count)[: max(1, self._limit)]
        if index is None:
            # Children still importing LiteLLM would hold calls back: the ready ones first.
            ready = [i for i, p in enumerate(pool) if p.ready] or range(len(pool))
            index = min(ready, key=lambda i: pool[i].outstanding)
        process = pool[index]
        cid = self._remote.get(process)
        if cid is None:
            # The names of the environment variables that hold keys (never their values), so
            # that the child redacts them before it cuts an error message.
            cid, _ = process.request("client", self._spec, secret_env_names())
            self._remote[process] = cid  # the child names the client by the request that made it
        share, extra = divmod(self._limit, len(pool))
        return process, cid, max(1, share + (index < extra))

    def _ask_capabilities(self) -> Capabilities:
        process, cid, _ = self._child(0)
        _, future = process.request("caps", cid)
        caps = future.result()
        assert isinstance(caps, Capabilities)
        return caps

    async def acomplete(self, request: ChatRequest) -> Reply:
        try:
            process, cid, window = self._child()
        except CallProcessDied as exc:
            return Reply(content=None, error=str(exc), error_kind="stop")
        # Whether this model answered before (in any child): a bad request is then about that
        # request, not the model, as in-process.
        rid, future = process.request("call", cid, request, window, self.answered > 0)
        try:
            reply = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            process.forget(rid)
            process.tell("cancel", rid)
            raise
        except CallProcessDied as exc:
            return Reply(content=None, error=f"{exc} (no further calls)", error_kind="stop")
        if reply is None:  # dropped unsent in the child
            return Reply(content=None, error="not sent", error_kind="not_asked")
        assert isinstance(reply, Reply)
        if reply.error is None:
            self.answered += 1
        return reply


# -- the child -----------------------------------------------------------------------------------
async def _serve(fd: int) -> None:
    from .litellm_client import capabilities

    reader, writer = await asyncio.open_connection(sock=socket.socket(fileno=fd))
    writer.write(_frame(("ready", 0, None)))
    clients: dict[int, LiteLLMClient] = {}
    windows: dict[int, asyncio.Semaphore] = {}
    dropped: set[int] = set()  # clients whose queued calls go unsent
    tasks: dict[int, asyncio.Task[None]] = {}

    def answer(status: str, rid: int, payload: Any) -> None:
        writer.write(_frame((status, rid, payload)))

    async def call(rid: int, cid: int, request: ChatRequest, answered_before: bool) -> None:
        try:
            async with windows[cid]:
                if cid in dropped:
                    reply = None
                else:
                    client = clients[cid]
                    if answered_before and not client.answered:
                        client.answered = 1
                    reply = await client.acomplete(request)
                    if reply.error_kind == "stop":  # what the pytest process will do too
                        dropped.add(cid)
        except asyncio.CancelledError:
            return
        except Exception as exc:  # acomplete answers endpoint failures; this is ours
            answer("err", rid, error_text(f"{type(exc).__name__}: {exc}"))
        else:
            try:
                answer("ok", rid, reply)
            except Exception as exc:  # an answer that cannot be sent is still answered
                answer("err", rid, error_text(f"{type(exc).__name__}: {exc}"))
        finally:
            tasks.pop(rid, None)
        await writer.drain()

    while True:
        try:
            (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
            kind, rid, *args = pickle.loads(await reader.readexactly(size))
        except asyncio.IncompleteReadError:
            break  # the pytest process is done (or gone)
        try:
            if kind == "client":
                (model, kwargs), secret_names = args
                for name in secret_names:
                    register_secret_env(name)
                clients[rid] = LiteLLMClient(model, **kwargs)
                answer("ok", rid, None)
            elif kind == "caps":
                client = clients[args[0]]
                answer("ok", rid, capabilities(client.caps_model, client.given, client.api_base))
            elif kind == "call":
                cid, request, limit, answered_before = args
                if cid not in windows:  # the window the pytest process asked for
                    windows[cid] = asyncio.Semaphore(max(1, int(limit)))
                tasks[rid] = asyncio.create_task(call(rid, cid, request, answered_before))
            elif kind == "drop":
                dropped.add(args[0])
            elif kind == "cancel":
                task = tasks.get(args[0])
                if task is not None:
                    task.cancel()
        except Exception as exc:
            answer("err", rid, error_text(f"{type(exc).__name__}: {exc}"))
    for task in list(tasks.values()):
        task.cancel()
    await asyncio.gather(*tasks.values(), return_exceptions=True)


def main(argv: list[str]) -> None:
    # Ctrl-C reaches the whole process group: the pytest process decides, then closes us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from .litellm_client import import_litellm

    try:
        import_litellm()  # at once: the pytest process is still collecting
    except ReasoningError as exc:
        print(exc, file=sys.stderr)
        sys.stderr.flush()
        os._exit(2)
    asyncio.run(_serve(int(argv[0])))
    sys.stdout.flush()
    sys.stderr.flush()
    # Our own process, with no user code in it: LiteLLM's exit handlers close clients whose
    # sockets the kernel closes anyway (about a second of CPU), so they are skipped.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
