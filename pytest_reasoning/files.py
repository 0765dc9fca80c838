"""Files in and out, safely.

- **Inputs** (:func:`open_input`, :func:`read_input`, :func:`read_text_input`): every file
  the tool reads from a suite or an option is opened without blocking and checked on the
  opened descriptor to be a regular file under a size cap before a byte is read: a FIFO would
  hang the run, ``/dev/zero`` would never end. One line otherwise (:class:`InputRefused`).
- **JSON** (:func:`loads_bounded`): nesting bounded, so a hostile document is one line, never
  a RecursionError; NaN and infinities refused (they are not JSON).
- **Outputs** (:func:`write_output`): the one writer. A regular file is written to a temporary
  file beside it and renamed over it only when complete (until then the old file is intact);
  a device, a FIFO or ``-`` is written in place and never replaced. Our temporary and part
  files carry their writer's name (host, pid, start time), so the next run removes those
  whose writer has ended (:func:`remove_stale`).

Nothing here imports more than the standard library: the pytest plugin sniffs suite files
with it on every run.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import stat
import sys
from collections.abc import Iterator
from typing import IO, Any, BinaryIO, TextIO

from .errors import ReasoningError

__all__ = [
    "MAX_JSON_DEPTH",
    "TEMP_PREFIX",
    "BadJSON",
    "InputRefused",
    "loads_bounded",
    "open_input",
    "output_problem",
    "process_gone",
    "process_name",
    "read_input",
    "read_text_head",
    "read_text_input",
    "remove_stale",
    "scratch_folder",
    "temp_file",
    "write_output",
    "write_output_bytes",
]

# Real rows and suites nest a handful of levels (a zebra grid: 4); the C JSON scanner would go
# to the interpreter's recursion limit (about 1,000) and what reads the value after it might
# recurse again.
MAX_JSON_DEPTH = 64
TEMP_PREFIX = ".pytest-reasoning~"
_TEMP_SUFFIXES = (".tmp", ".part")
_HOST = socket.gethostname()
# Paths whose file must be written in place even when it is a regular file: /dev/stdout of a
# shell redirect is the file the shell opened, /proc files cannot be renamed over.
_IN_PLACE_ROOTS = ("/dev/", "/proc/")


class InputRefused(ReasoningError, ValueError):
    """An input that is not a readable regular file under its size cap: ``path: reason``
    (``reason`` alone for callers that name the file their own way)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class BadJSON(ValueError):
    """A JSON text that is malformed, nested deeper than allowed, or holds NaN; ``str(exc)``
    is one line (``not JSON: Expecting value at column 7``)."""


# -- inputs -------------------------------------------------------------------------------------
def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def open_input(
    path: str | os.PathLike[str],
    max_bytes: int,
    *,
    shown: str | None = None,
    what: str = "an input file",
) -> BinaryIO:
    """``path`` opened for reading (binary), once checked to be a regular file of at most
    ``max_bytes``. The check is made on the opened descriptor (no window between check and
    read), opened non-blocking so that a FIFO without a writer cannot hang it. Raises
    :class:`InputRefused` naming ``shown`` (default: the path) in one line; ``what`` names
    the kind of file in the size message (``a suite file is at most 1,000,000``)."""
    p = os.fspath(path)
    name = shown if shown is not None else p
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except FileNotFoundError:
        raise InputRefused(name, "no such file") from None
    except IsADirectoryError:
        raise InputRefused(name, "a folder, not a file") from None
    except OSError as exc:
        why = "not a regular file (a socket)" if exc.errno == errno.ENXIO else exc.strerror
        raise InputRefused(name, f"cannot read: {why}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputRefused(name, "a folder, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise InputRefused(name, f"not a regular file ({_kind(st.st_mode)})")
        if st.st_size > max_bytes:
            raise InputRefused(
                name, f"too large for {what} ({st.st_size:,} bytes, limit {max_bytes:,})"
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_input(
    path: str | os.PathLike[str],
    max_bytes: int,
    *,
    shown: str | None = None,
    what: str = "an input file",
) -> bytes:
    """The bytes of a checked input (:func:`open_input`); a file that grew past ``max_bytes``
    while it was read is refused too."""
    name = shown if shown is not None else os.fspath(path)
    with open_input(path, max_bytes, shown=name, what=what) as fh:
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise InputRefused(name, f"cannot read: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise InputRefused(name, f"more than {max_bytes:,} bytes (it grew while read)")
    return data


def read_text_input(
    path: str | os.PathLike[str],
    max_bytes: int,
    *,
    shown: str | None = None,
    what: str = "an input file",
    errors: str = "strict",
) -> str:
    """A checked input as UTF-8 text; a byte order mark at the start is dropped (suites,
    datasets and model lists alike). Text that is not UTF-8 is refused in one line, unless
    ``errors="replace"``."""
    name = shown if shown is not None else os.fspath(path)
    data = read_input(path, max_bytes, shown=name, what=what)
    try:
        return data.decode("utf-8-sig", errors=errors)
    except UnicodeDecodeError as exc:
        raise InputRefused(name, f"not UTF-8 text ({exc.reason} at byte {exc.start:,})") from None


def read_text_head(path: str | os.PathLike[str], max_bytes: int, *, what: str) -> str:
    """At most the first ``max_bytes`` of a regular file, as text (a byte order mark dropped,
    bad UTF-8 replaced), whatever its size: a sniff (is this a suite?) that never reads more,
    so a file too large to load is still recognised, and then refused in one line saying so.
    InputRefused for what is not a regular file (a FIFO is never opened for reading)."""
    with open_input(path, sys.maxsize, what=what) as fh:
        try:
            data = fh.read(max_bytes)
        except OSError as exc:
            raise InputRefused(os.fspath(path), f"cannot read: {exc.strerror}") from None
    return data.decode("utf-8-sig", "replace")


# -- JSON ---------------------------------------------------------------------------------------
def _constant(name: str) -> Any:
    raise BadJSON(f"not JSON: {name} is not a JSON number")


def _deeper_than(value: Any, limit: int) -> bool:
    """True when ``value`` (parsed JSON: exact dicts and lists) nests more than ``limit``
    lists or objects; breadth first, without recursion."""
    level, depth = [value], 0
    while level:
        depth += 1
        if depth > limit:
            return True
        deeper = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if type(child) is dict or type(child) is list:
                    deeper.append(child)
        level = deeper
    return False


def loads_bounded(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that never raises anything but :class:`BadJSON` (one line): malformed
    text, a document nested deeper than ``max_depth`` (never a RecursionError), NaN or
    Infinity, an integer of more digits than Python converts."""
    try:
        value = json.loads(text, parse_constant=_constant)
    except BadJSON:
        raise
    except json.JSONDecodeError as exc:
        where = f"column {exc.colno}"
        if exc.lineno > 1:
            where = f"line {exc.lineno}, {where}"
        raise BadJSON(f"not JSON: {exc.msg} at {where}") from None
    except RecursionError:
        raise BadJSON(f"nested deeper than {max_depth} levels") from None
    except (ValueError, TypeError) as exc:  # 5,000 digits; bytes in no JSON encoding
        raise BadJSON(f"not JSON: {str(exc)[:200]}") from None
    if isinstance(value, dict | list):
        # Only a text with that many brackets can nest that deep: real rows skip the walk.
        opened = text.count("[") + text.count("{") if isinstance(text, str) else (
            text.count(b"[") + text.count(b"{")
        )  # fmt: skip
        if opened > max_depth and _deeper_than(value, max_depth):
            raise BadJSON(f"nested deeper than {max_depth} levels")
    return value


# -- who wrote a temporary file (or holds a claim) --------------------------------------------
def _proc(pid: int) -> tuple[str, str] | None:
    """A process's state and start time in clock ticks (Linux ``/proc``: a reused pid is not
    mistaken for the holder, a zombie is dead); None where ``/proc`` cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), fields[19].decode()
    except (OSError, IndexError):
        return None


def process_name() -> str:
    """This process as ``host/pid/start`` (start: its start time in clock ticks, or empty)."""
    pid = os.getpid()
    found = _proc(pid)
    return f"{_HOST}/{pid}/{found[1] if found else ''}"


def process_gone(name: str) -> bool:
    """True only when ``name`` (``host/pid/start…``) is certainly a process of this machine
    that has ended."""
    host, pid_text, start = [*name.split("/"), "", "", ""][:3]
    if host != _HOST or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):  # someone else's process: alive
        pass
    found = _proc(pid)
    if found is None:
        return False
    state, started = found
    return state in ("Z", "X") or (bool(start) and started != start)


# -- outputs ------------------------------------------------------------------------------------
def temp_file(folder: str, name: str, suffix: str = ".tmp", mode: int = 0o600) -> tuple[int, str]:
    """A new empty file in ``folder``, opened for writing, named as ours
    (``.pytest-reasoning~HOST~PID~START~NONCE~NAME.tmp``): the descriptor and the path. The
    next run removes it if its writer has ended (:func:`remove_stale`)."""
    import uuid

    owner = process_name().replace("/", "~")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        path = os.path.join(folder, f"{TEMP_PREFIX}{owner}~{uuid.uuid4().hex[:8]}~{name[:80]}")
        try:
            return os.open(path + suffix, flags, mode), path + suffix
        except FileExistsError:  # pragma: no cover - a 32-bit nonce collision
            continue


def remove_stale(folder: str) -> list[str]:
    """Remove our temporary and part files in ``folder`` whose writer (a process of this
    machine) has ended: what a killed run left. Returns the paths removed."""
    removed: list[str] = []
    try:
        entries = os.scandir(folder or ".")
    except OSError:
        return removed
    with entries:
        for entry in entries:
            if not entry.name.startswith(TEMP_PREFIX) or not entry.name.endswith(_TEMP_SUFFIXES):
                continue
            parts = entry.name[len(TEMP_PREFIX) :].split("~", 4)
            if len(parts) == 5 and process_gone("/".join(parts[:3])):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(entry.path)
    return removed


def _in_place(given: str, target: str) -> bool:
    """Whether ``target`` (``given`` resolved) is written in place: anything that exists and
    is not a regular file, or a path under /dev or /proc. A folder is refused."""
    try:
        st = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):  # a new file (its folder checked apart)
        return False
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", given)
    absolute = os.path.abspath(given)
    return not stat.S_ISREG(st.st_mode) or absolute.startswith(_IN_PLACE_ROOTS)


def scratch_folder(path: str | os.PathLike[str]) -> str:
    """Where temporary work for the output ``path`` goes (part files): beside a regular file
    (the same file system; the next run there removes what a killed one left), the system's
    temporary folder for ``-``, a device or a FIFO."""
    import tempfile

    given = os.fspath(path)
    if given != "-":
        target = os.path.realpath(given)
        with contextlib.suppress(OSError):
            if not _in_place(given, target):
                return os.path.dirname(target)
    return tempfile.gettempdir()


def output_problem(path: str | os.PathLike[str]) -> str | None:
    """Why :func:`write_output` could not write ``path``, checked before any work is done (a
    long run should not end on an unwritable path); None when it looks writable. A device
    or FIFO needs write permission on itself, a regular file on its folder."""
    given = os.fspath(path)
    if given == "-":
        return None
    target = os.path.realpath(given)
    try:
        if _in_place(given, target):
            return None if os.access(target, os.W_OK) else f"cannot write {given}"
    except IsADirectoryError:
        return f"{given} is a folder, not a file"
    except OSError as exc:
        return f"cannot write {given}: {exc.strerror}"
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        return f"{os.path.dirname(given) or folder} is not a folder"
    if not os.access(folder, os.W_OK):
        return f"cannot write in {os.path.dirname(given) or folder}"
    return None


def _named(exc: OSError, path: str, *, always: bool = False) -> OSError:
    """``exc`` with the file named (a failed write on a file object names none)."""
    if (exc.filename is not None and not always) or exc.errno is None:
        return exc
    return type(exc)(exc.errno, exc.strerror, path)


@contextlib.contextmanager
def write_output(path: str | os.PathLike[str], *, durable: bool = False) -> Iterator[TextIO]:
    """The one writer of output files: ``with write_output(path) as fh: fh.write(...)``.

    - ``-``: the standard output (flushed at the end, never closed);
    - a device, a FIFO, a path under /dev or /proc: opened in place (no create, no rename) and
      written; it is never replaced;
    - a regular file (or a new one): written to a temporary file beside it (beside a
      symlink's target), renamed over it when the block ends without an exception; on an
      exception, or a kill, the old file is untouched. The temporary file gets the old
      file's permissions (a new one the umask's). Stale temporary files of ended runs in
      that folder are removed first.

    Text is UTF-8 with ``\\n`` line ends (:func:`write_output_bytes` for bytes). Errors are
    OSError naming the path (a full disk shows when the file is written or closed, before
    anything is renamed). ``durable``: the file's data is synced to disk before the rename
    (a record that must survive a power cut; a kill needs no sync)."""
    yield from _write(os.fspath(path), binary=False, durable=durable)


@contextlib.contextmanager
def write_output_bytes(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """:func:`write_output` for bytes (an image, a binary format)."""
    yield from _write(os.fspath(path), binary=True)


def _write(given: str, *, binary: bool, durable: bool = False) -> Iterator[Any]:
    if given == "-":
        stream: IO[Any] = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    target = os.path.realpath(given)
    try:
        in_place = _in_place(given, target)
    except OSError as exc:
        raise _named(exc, given) from None
    if in_place:
        yield from _write_in_place(given, target, binary)
        return
    folder = os.path.dirname(target)
    remove_stale(folder)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mode = None
    try:
        fd, tmp = temp_file(folder, os.path.basename(target), ".tmp", 0o666)
    except OSError as exc:  # named as the output, not as our temporary file
        raise _named(exc, given, always=True) from None
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        fh = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="\n")
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:
        yield fh
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
        fh.close()  # the last buffered bytes are written here: a full disk shows now
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            fh.close()
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _named(exc, given) from None
        raise


def _write_in_place(given: str, target: str, binary: bool) -> Iterator[IO[Any]]:
    # No O_CREAT, no rename: the node stays what it is. A regular file reached through
    # /dev/stdout is truncated as the shell's `>` would.
    try:
        regular = stat.S_ISREG(os.stat(target).st_mode)
        flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | (os.O_TRUNC if regular else 0)
        fd = os.open(given, flags)
    except OSError as exc:
        raise _named(exc, given) from None
    fh = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="\n")
    try:
        yield fh
        fh.close()
    except OSError as exc:
        with contextlib.suppress(OSError):
            fh.close()
        raise _named(exc, given) from None
    finally:
        with contextlib.suppress(OSError):
            fh.close()
