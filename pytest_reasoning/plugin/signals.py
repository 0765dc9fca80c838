"""What the controller tells every process of a run while it goes: which sequential levels
are settled (their remaining samples are not needed), and that no more calls may be made (the
budget was reached). In one process the controller's own
object is read; under xdist the workers (on this machine) read marker files in a folder the
controller made and handed over, one empty file per settled level — no channel of xdist's is
needed, and a worker checks with one ``stat`` before it asks."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile

__all__ = ["Signals", "level_key"]


def level_key(model: str, suite: str, entry: str, level: str) -> str:
    return "\x1f".join((model, suite, entry, level))


class Signals:
    def __init__(self, folder: str | None = None) -> None:
        self.folder = folder
        self._settled: set[str] = set()
        self._stop: str | None = None
        self._own = False  # the folder was made here (the controller removes it)

    @classmethod
    def for_workers(cls) -> Signals:
        """The controller's side under xdist: a fresh folder for the markers."""
        signals = cls(tempfile.mkdtemp(prefix="reasoning-signals-"))
        signals._own = True
        return signals

    def _path(self, key: str) -> str:
        assert self.folder is not None
        return os.path.join(self.folder, hashlib.sha256(key.encode()).hexdigest()[:32])

    def settle(self, key: str) -> None:
        self._settled.add(key)
        if self.folder is not None:
            with contextlib.suppress(OSError), open(self._path(key), "w"):
                pass  # a lost marker only costs the calls it would have saved

    def settled(self, key: str) -> bool:
        if key in self._settled:
            return True
        if self.folder is not None and os.path.exists(self._path(key)):
            self._settled.add(key)
            return True
        return False

    def stop(self, reason: str) -> None:
        """No more calls anywhere in the run (``reason``: one line)."""
        self._stop = reason
        if self.folder is not None:
            with contextlib.suppress(OSError):
                tmp = os.path.join(self.folder, "stop.tmp")
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(reason)
                os.replace(tmp, os.path.join(self.folder, "stop"))  # read whole or not at all

    def stopped(self) -> str | None:
        if self._stop is None and self.folder is not None:
            with contextlib.suppress(OSError), open(
                os.path.join(self.folder, "stop"), encoding="utf-8"
            ) as fh:
                self._stop = fh.read() or "stopped"
        return self._stop

    def close(self) -> None:
        if self._own and self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
