"""``export``: generated items as JSONL, sequential or over index ranges in worker processes
(byte-identical either way)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import ReasoningError
from ..registry import get_task
from ..tasks import hooks
from ..tasks.base import check_style, resolve_params
from ..tasks.draw import check_split
from ..tasks.sampler import make_item, sampler
from .common import _bar, show_progress

if TYPE_CHECKING:
    pass


def export_items(
    task_id: str,
    level: str,
    count: int,
    seed: int,
    params: dict[str, Any],
    style: str,
    with_steps: bool,
    out: TextIO,
    *,
    progress: bool = False,
    start: int = 0,
    note: bool = True,
    split: str = "test",
) -> int:
    """Stream ``count`` items of ``split`` (``test``, what suites draw; ``train``, problems no
    suite ever tests) from index ``start`` on as JSON lines (one item in memory at a time);
    with ``progress``, a bar with rate and ETA on stderr once the export takes over a second;
    with ``note``, one line on stderr when items repeat an earlier problem."""
    task = get_task(task_id)
    resolve_params(task, level, params)  # fail before writing anything
    check_style(task, style)
    check_split(split)
    from ..datasets import export_row, write_row

    indices: Iterable[int] = range(start, start + count)
    if progress:
        indices = _bar(indices, total=count, unit="item", desc=f"{task_id} {level}")
    for index in indices:
        item = make_item(task, level, seed, index, params, style, split=split)
        row = export_row(task, item, **({"steps": hooks.steps(task, item)} if with_steps else {}))
        write_row(out, row)
    if note:
        _repeat_note(task_id, level, seed, params, start, count, split=split)
    return count


def _repeat_note(
    task_id: str,
    level: str,
    seed: int,
    params: dict[str, Any],
    start: int,
    count: int,
    repeated: int | None = None,
    *,
    split: str = "test",
) -> None:
    """Honest about small levels: D1 boolean logic has ten distinct problems, five in each
    split. ``repeated``: already counted (by the workers), else counted here."""
    if repeated is None:
        repeated = _repeats_in(task_id, level, seed, params, start, count, split)
    if repeated:
        sys.stderr.write(
            f"pytest-reasoning: note: {repeated} of {count} items repeat an earlier problem; "
            f"the {split} split of {task_id} {level} has no more distinct problems under "
            "these knobs (docs/tasks/splits.md)\n"
        )


def _repeats_in(
    task_id: str,
    level: str,
    seed: int,
    params: dict[str, Any],
    start: int,
    count: int,
    split: str = "test",
) -> int:
    """Items of ``start..start+count-1`` that repeat an earlier problem (free once built)."""
    task = get_task(task_id)
    stop = sampler(task).repeated(level, seed, start + count, params, split)
    return stop - (sampler(task).repeated(level, seed, start, params, split) or 0) if stop else 0


# -- export --workers: contiguous index ranges in processes, concatenated in order ----------
# A task that keeps its problems distinct (``unique``) builds item k after replaying the
# draws of items 0..k-1 (cheaper than building them: no prompt, no row). A worker that starts
# at index b pays that replay first, so later workers get shorter ranges: with R the replay
# cost and E the export cost of an item, every worker's b*R + (its items)*E is made equal.
_PROBE = 100  # items timed to estimate R and E (about 20 ms)


def _boundaries(start: int, stop: int, workers: int, ratio: float) -> list[int]:
    """Range boundaries ``start = b0 < ... < bK = stop`` (K <= workers) that even out each
    worker's ``(b - start)*ratio + length`` (``ratio`` = R/E, 0 when nothing is replayed);
    a worker that would get nothing is left out."""
    n = stop - start

    def ends(t: float) -> list[float]:
        b, out = 0.0, []
        for _ in range(workers):
            b += max(0.0, t - ratio * b)
            out.append(b)
        return out

    low, high = 0.0, float(n)  # the finish time, in items exported
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (low, mid) if ends(mid)[-1] >= n else (mid, high)
    cuts = sorted({min(n, round(e)) for e in ends(high)[:-1]} - {0, n})
    return [start + b for b in (0, *cuts, n)]


def _replay_ratio(
    task_id: str, level: str, seed: int, params: dict[str, Any], style: str, split: str
) -> float:
    """R/E for this task: CPU time of replaying an item's draw against building and writing
    it, measured on a stream no worker uses (seed + 1) after one warm-up item."""
    import io
    import time

    from ..datasets import export_row, write_row

    task = get_task(task_id)
    if sampler(task).repeated(level, seed, 0, params, split) is None:  # not ``unique``: no replay
        return 0.0
    probe, sink = seed + 1, io.StringIO()
    make = sampler(task).item
    write_row(sink, export_row(task, make(level, probe, 0, params, style, split=split)))
    t0 = time.process_time()
    sampler(task).repeated(level, probe, 1 + _PROBE, params, split)  # replay only
    t1 = time.process_time()
    for index in range(1 + _PROBE, 1 + 2 * _PROBE):  # fresh items, built and written
        write_row(sink, export_row(task, make(level, probe, index, params, style, split=split)))
    t2 = time.process_time()
    return (t1 - t0) / max(t2 - t1, 1e-9)


def _export_part(
    task_id: str,
    level: str,
    seed: int,
    params: dict[str, Any],
    style: str,
    with_steps: bool,
    start: int,
    count: int,
    path: str,
    split: str = "test",
) -> int:
    """One worker's range, written to its part file; returns how many of its items repeat
    an earlier problem."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        export_items(
            task_id, level, count, seed, params, style, with_steps, fh, start=start,
            note=False, split=split,
        )  # fmt: skip
    return _repeats_in(task_id, level, seed, params, start, count, split)


def _worker_signals() -> None:
    """In an export worker: SIGTERM ends it (not the command's own handler, inherited by the
    fork, which unwinds the main process), and Ctrl-C is left to the main process, which
    terminates the workers."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def export_parallel(
    task_id: str,
    level: str,
    count: int,
    seed: int,
    params: dict[str, Any],
    style: str,
    with_steps: bool,
    out: TextIO,
    *,
    start: int = 0,
    workers: int = 2,
    folder: str | None = None,
    split: str = "test",
) -> int:
    """``export_items`` over ``workers`` processes, byte for byte the same output: each
    writes a contiguous range to a part file in ``folder`` (``files.scratch_folder`` of the
    output), copied to ``out`` in order and deleted. Part files a killed export left there
    are removed first (``files.remove_stale``)."""
    import itertools
    import multiprocessing
    import shutil
    import tempfile

    from ..files import remove_stale, temp_file

    folder = folder or tempfile.gettempdir()
    remove_stale(folder)
    task = get_task(task_id)
    resolve_params(task, level, params)  # fail before starting anything
    check_style(task, style)
    check_split(split)
    ratio = _replay_ratio(task_id, level, seed, params, style, split)
    bounds = _boundaries(start, start + count, workers, ratio)
    parts: list[str] = []
    try:
        # multiprocessing's Pool, not concurrent.futures: on Ctrl-C or SIGTERM it can end its
        # workers at once (terminate) instead of waiting for every range. Normally it is
        # closed and joined (the workers finish and exit); terminate is only for a stop.
        pool = multiprocessing.Pool(processes=len(bounds) - 1, initializer=_worker_signals)
        try:
            pending = []
            for lo, hi in itertools.pairwise(bounds):
                fd, path = temp_file(folder, f"export-{lo}", ".part")
                os.close(fd)
                parts.append(path)
                pending.append(
                    pool.apply_async(
                        _export_part,
                        (
                            *(task_id, level, seed, params, style, with_steps),
                            *(lo, hi - lo, path, split),
                        ),
                    )
                )
            repeated = sum(job.get() for job in pending)  # a worker's error, in order
            pool.close()
        except BaseException:
            pool.terminate()
            raise
        finally:
            pool.join()
        for path in parts:
            with open(path, encoding="utf-8", newline="\n") as fh:
                shutil.copyfileobj(fh, out, 1 << 20)
    finally:
        for path in parts:
            with contextlib.suppress(OSError):
                os.unlink(path)
    _repeat_note(task_id, level, seed, params, start, count, repeated, split=split)
    return count


def export_command(args: argparse.Namespace) -> int:
    if args.start < 0:
        raise ReasoningError("--start: must be >= 0")
    if args.stop is not None and args.count is not None:
        raise ReasoningError("--count and --stop: give one (--stop is START+COUNT)")
    if args.stop is not None and args.stop < args.start:
        raise ReasoningError(f"--stop: must be >= --start ({args.start}), got {args.stop}")
    count = args.stop - args.start if args.stop is not None else args.count
    count = 10 if count is None else count
    if count < 0:
        raise ReasoningError("--count: must be >= 0")
    if args.workers < 1:
        raise ReasoningError(f"--workers: must be >= 1, got {args.workers}")
    export = (
        args.task, args.level, count, args.seed, dict(args.param), args.style, args.with_steps
    )  # fmt: skip
    progress = show_progress(args.quiet)
    parallel = args.workers > 1 and count > 1

    def write(out: TextIO, folder: str | None) -> None:
        if parallel:
            export_parallel(
                *export, out, start=args.start, workers=args.workers, folder=folder,
                split=args.split,
            )  # fmt: skip
        else:
            export_items(*export, out, progress=progress, start=args.start, split=args.split)

    if args.output == "-":
        write(sys.stdout, None)  # a failed write: see main()
        return 0
    from ..files import scratch_folder, write_output

    # A regular file is replaced only when the export is complete (a kill or a full disk
    # leaves the old one whole); a device or a FIFO is written in place, never replaced.
    try:
        with write_output(args.output) as out:
            write(out, scratch_folder(args.output))
    except OSError as exc:  # a full disk, /dev/full, a file that takes no writes
        raise ReasoningError(
            f"--output: cannot write {args.output}: {exc.strerror or exc}"
        ) from None
    return 0
