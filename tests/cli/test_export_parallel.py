"""Issue 22: ``export --workers N`` and ``--start/--stop`` write the sequential export's bytes."""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path

import pytest

from pytest_reasoning.cli import main
from pytest_reasoning.cli.export import _boundaries


def export(tmp_path: Path, name: str, *args: str) -> bytes:
    out = tmp_path / name
    assert main(["export", *args, "-q", "-o", str(out)]) == 0
    return out.read_bytes()


# Starts worker processes (e2e): CI runs it, the inner loop does not.
@pytest.mark.e2e
@pytest.mark.parametrize(
    ("task", "level", "count"),
    [
        ("dyval.arithmetic", "D3", 120),  # distinct problems: workers replay their prefix
        ("dyval.boolean_logic", "D1", 40),  # ten problems only: repeats, placed as one process
        ("zebra.grid", "2x3", 30),
    ],
)
def test_workers_write_the_same_bytes(tmp_path: Path, task: str, level: str, count: int) -> None:
    args = (task, "--level", level, "--count", str(count), "--seed", "7")
    one = export(tmp_path, "one.jsonl", *args)
    assert one.count(b"\n") == count
    for workers in ("2", "3"):
        assert export(tmp_path, f"w{workers}.jsonl", *args, "--workers", workers) == one
    assert not list(tmp_path.glob(".pytest-reasoning~*"))  # the part files are gone


# Starts worker processes (e2e): CI runs it, the inner loop does not.
@pytest.mark.e2e
def test_start_stop_is_a_slice_of_the_stream(tmp_path: Path) -> None:
    args = ("dyval.boolean_logic", "--level", "D1", "--seed", "3")
    whole = export(tmp_path, "whole.jsonl", *args, "--count", "30").splitlines(keepends=True)
    part = export(tmp_path, "part.jsonl", *args, "--start", "12", "--stop", "25")
    assert part == b"".join(whole[12:25])
    counted = export(tmp_path, "c.jsonl", *args, "--start", "12", "--count", "13", "--workers", "2")
    assert counted == part


@pytest.mark.parametrize("ratio", [0.0, 0.4, 0.7, 3.0])
@pytest.mark.parametrize("workers", [1, 2, 4, 9])
def test_boundaries_cover_the_range_in_order(ratio: float, workers: int) -> None:
    for start, stop in ((0, 1), (0, 5), (10, 1000), (0, 100_000)):
        b = _boundaries(start, stop, workers, ratio)
        assert b[0] == start and b[-1] == stop and len(b) <= workers + 1
        assert all(x < y for x, y in itertools.pairwise(b))
        if ratio == 0.0 and stop - start >= workers:
            sizes = [y - x for x, y in itertools.pairwise(b)]
            assert max(sizes) - min(sizes) <= 1  # nothing replayed: equal ranges
        if ratio > 0 and len(b) > 2:  # each worker's replay plus export, evened out
            cost = [(x - start) * ratio + (y - x) for x, y in itertools.pairwise(b)]
            assert max(cost) - min(cost) <= 1 + ratio


def _written(folder: Path) -> bool:
    """Some export worker has written rows to its part file."""
    sizes = []
    for part in folder.glob(".pytest-reasoning~*.part"):
        with contextlib.suppress(FileNotFoundError):  # removed since it was listed
            sizes.append(part.stat().st_size)
    return any(sizes)


@pytest.mark.e2e
def test_sigterm_stops_a_parallel_export_and_leaves_no_part_files(tmp_path: Path) -> None:
    """Before: SIGTERM (a cancelled CI job) waited for every worker's range to finish, then
    left the part files behind on a plain kill; now the workers are terminated and the
    ``finally`` that deletes the part files runs."""
    import signal
    import subprocess
    import sys
    import time

    argv = [sys.executable, "-m", "pytest_reasoning.cli", "export", "dyval.arithmetic",
            "--level", "D4", "--count", "1000000", "--workers", "2", "-q", "-o", "out.jsonl"]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    try:
        # Until a worker writes its part. How many parts there are follows the replay cost
        # the export times at its start, which a loaded machine skews: one or two.
        deadline = time.monotonic() + 600  # a cap against a hang, not a speed claim
        while time.monotonic() < deadline and not _written(tmp_path):
            time.sleep(0.1)
        assert _written(tmp_path)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=600)  # a bound against a hang, not a speed check
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert not list(tmp_path.glob(".pytest-reasoning~*")), "part or temporary files left behind"
    assert not (tmp_path / "out.jsonl").exists()  # nothing under the final name
