"""A ``unique`` batch's draws, shared by the processes of one run (xdist workers).

Item ``k`` of a ``unique`` batch is the ``k``-th distinct problem of its raw draws, so a
process that runs item ``k`` must know items ``0..k-1`` first. Under xdist a worker runs
every n-th item or so, and without sharing each worker drew the whole batch itself: N draws
per worker whatever its share, a cost per sample that grew with the number of workers. Here
the first process to draw a stretch of a batch appends one record per item (its raw draw,
whether it repeats an earlier problem, its problem's fingerprint) to a file in a folder the
run shares (the plugin's signals folder); the others read the records instead of drawing.
A batch is a pure function of its address, so the records are the same whoever wrote them;
a record that does not follow from the ones before (a damaged file) ends what is read, and
any OSError means drawing as before: sharing only ever saves work.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import struct
from collections.abc import Iterator
from typing import Any

__all__ = [
    "RECORD",
    "Record",
    "adopt",
    "records_after",
    "share_batches",
    "shared_path",
    "write_records",
]

RECORD = struct.Struct("<qB16s")  # raw draw, 1 if a repeat, fingerprint (zeros for a repeat)
Record = tuple[int, int, bytes]

_folder: list[str | None] = [None]


def share_batches(folder: str | None) -> None:
    """Share batches through ``folder`` from now on (None: stop sharing)."""
    _folder[0] = folder


def shared_path(key: tuple[Any, ...]) -> str | None:
    """The file of the batch ``key`` (task id, level, seed, canonical params, split)."""
    folder = _folder[0]
    if folder is None:
        return None
    digest = hashlib.sha256(repr(key).encode("utf-8")).hexdigest()[:32]
    return os.path.join(folder, f"batch-{digest}")


@contextlib.contextmanager
def _locked(path: str, mode: str, how: int) -> Iterator[Any]:
    with open(path, mode) as fh:
        fcntl.flock(fh, how)  # a reader never sees half a record being appended
        try:
            yield fh
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def records_after(path: str, start: int) -> list[Record]:
    """The records from item ``start`` on ([] when none, or the file cannot be read)."""
    try:
        with _locked(path, "rb", fcntl.LOCK_SH) as fh:
            fh.seek(start * RECORD.size)
            data = fh.read()
    except OSError:
        return []
    whole = len(data) - len(data) % RECORD.size
    return [RECORD.unpack_from(data, at) for at in range(0, whole, RECORD.size)]


def write_records(path: str, start: int, records: list[Record]) -> None:
    """Append items ``start..`` where the file holds exactly ``start`` items (else another
    process wrote them first: the same records, nothing to do)."""
    if not records:
        return
    with contextlib.suppress(OSError), _locked(path, "ab", fcntl.LOCK_EX) as fh:
        size = fh.seek(0, os.SEEK_END)
        held = size // RECORD.size
        if size % RECORD.size == 0 and start <= held < start + len(records):
            fh.write(b"".join(RECORD.pack(*r) for r in records[held - start :]))


def adopt(batch: Any, stratum_of: Any, records: list[Record], patience: int) -> None:
    """Extend ``batch`` (a ``tasks.base._Batch``) by ``records`` as if it had drawn them:
    the same raw draws, repeats, fingerprints and patience per stratum (``stratum_of(k)``:
    item ``k``'s answer class) as ``_Batch.get`` leaves. A record that cannot follow the
    ones before ends the adoption (the rest is drawn)."""
    for raw, repeat, fp in records:
        k = len(batch.raw)
        if raw < batch.next_raw or (not repeat and fp in batch.seen):
            return
        stratum = stratum_of(k)
        tried = batch.patience.get(stratum, patience)
        if repeat:
            batch.patience[stratum] = max(5, tried // 2)
        else:
            batch.seen[fp] = k
            batch.patience[stratum] = min(patience, tried * 2)
        batch.raw.append(raw)
        batch.repeats.append(repeat)
        batch.next_raw = raw + 1
