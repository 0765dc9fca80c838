"""Writers never destroy: a failed write leaves the old file whole and no temporary
file, devices and FIFOs are written in place, what a killed run or export left is removed
by the next."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from bounds import within
from reliability_matrix import record_hardened

from pytest_reasoning.cli import main
from pytest_reasoning.models.cache import new_owner
from pytest_reasoning.testing.server import FakeOpenAIServer


def test_a_failed_write_leaves_the_old_file_whole_and_no_temporary_file(tmp_path: Path) -> None:
    from pytest_reasoning.files import write_output

    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    out.chmod(0o640)
    with pytest.raises(RuntimeError), write_output(out) as fh:
        fh.write("half a row")
        raise RuntimeError("killed here")
    assert out.read_text() == "old\n" and os.listdir(tmp_path) == ["out.jsonl"]
    with write_output(out) as fh:
        fh.write("new\n")
        assert out.read_text() == "old\n"  # replaced only at the end
    assert out.read_text() == "new\n" and stat.S_IMODE(out.stat().st_mode) == 0o640
    link = tmp_path / "link.jsonl"
    link.symlink_to(out)
    with write_output(link) as fh:
        fh.write("through the link\n")
    assert link.is_symlink() and out.read_text() == "through the link\n"


def test_a_device_and_a_fifo_are_written_in_place_never_replaced(tmp_path: Path) -> None:
    """Before: ``narrate --out /dev/full`` as root replaced the device node with a regular
    file (a temporary file renamed onto it); /dev/null would have gone the same way. Here on a
    null device of the test's own (mknod) and a FIFO, through narrate itself."""
    from pytest_reasoning.files import write_output

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    with within(), FakeOpenAIServer() as server:
        code = main(["narrate", "musr.object_placement", "--level", "L1", "--count", "1",
                     "--llm", "openai/narrator", "--llm-api-base", server.url, "--cache", "off",
                     "--out", str(fifo)])  # fmt: skip
        reader.join()
    assert code == 0 and stat.S_ISFIFO(fifo.stat().st_mode)
    assert json.loads(got[0])["task"] == "musr.object_placement"
    if os.geteuid() == 0:  # a device node needs root
        null = tmp_path / "null"
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        with write_output(null) as fh:
            fh.write("gone\n")
        assert stat.S_ISCHR(null.stat().st_mode)
        record_hardened(
            "writers-fifo",
            "`narrate --out FIFO`: the rows read from the FIFO, still a FIFO; a null device of "
            "the test's own (mknod, as root) written through the writer: still a character "
            "device; nothing else left in the folder",
        )
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["pipe"] + (["null"] if os.geteuid() == 0 else [])
    )


def _stale(folder: Path, name: str) -> Path:
    """A temporary file as a killed writer of this machine leaves it (its pid is gone)."""
    import socket

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    path = folder / f".pytest-reasoning~{socket.gethostname()}~{gone.pid}~1~abcd1234~{name}"
    path.write_text("half")
    return path


def test_the_next_run_removes_what_a_killed_one_left(tmp_path: Path) -> None:
    """Before: ``export --workers 2`` left ``.export-*.part`` orphans after a kill, narrate
    its ``.tmp``; nothing ever removed them."""
    part = _stale(tmp_path, "export-0.part")
    tmp = _stale(tmp_path, "out.jsonl.tmp")
    live = tmp_path / f".pytest-reasoning~{new_owner().replace('/', '~')}~x.tmp"
    live.write_text("a live writer's")  # this process: kept
    out = tmp_path / "out.jsonl"
    assert main(["export", "dyval.arithmetic", "--level", "D1", "--count", "4",
                 "--workers", "2", "-o", str(out)]) == 0  # fmt: skip
    assert not part.exists() and not tmp.exists() and live.exists()
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, "out.jsonl"])
    assert len(out.read_text().splitlines()) == 4


@pytest.mark.e2e
def test_an_export_killed_midway_leaves_the_old_file_whole(tmp_path: Path) -> None:
    """Before: ``export -o FILE`` truncated the file at start: a kill left a torn file under
    the final name."""
    out = tmp_path / "items.jsonl"
    assert (
        main(["export", "dyval.arithmetic", "--level", "D1", "--count", "3", "-o", str(out)]) == 0
    )
    old = out.read_bytes()
    cmd = [sys.executable, "-m", "pytest_reasoning.cli", "export", "dyval.arithmetic",
           "--level", "D3", "--count", "1000000", "-o", str(out)]  # fmt: skip
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600  # a cap against a hang, not a speed claim
    while time.monotonic() < deadline:  # until its temporary file holds rows
        temps = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        if temps and temps[0].stat().st_size > 100_000:
            break
        time.sleep(0.05)
    proc.kill()
    assert temps and proc.wait() == -9  # killed midway, not finished
    proc.wait()
    assert out.read_bytes() == old
    assert (
        main(["export", "dyval.arithmetic", "--level", "D1", "--count", "2", "-o", str(out)]) == 0
    )
    assert os.listdir(tmp_path) == ["items.jsonl"]  # the killed run's temporary file: gone
    record_hardened(
        "writers",
        "`export -o FILE` killed (SIGKILL) with 100 kB of new rows written: FILE byte for byte "
        "the old one; the next export removed the dead run's temporary file",
    )
