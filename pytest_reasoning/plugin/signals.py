"""What the controller tells every process of a run while it goes: which sequential levels
are settled (their remaining samples are not needed), how far each may ask ahead, and that no
more calls may be made (the budget was reached); and what every process has spent (the
budget's ``Purse``). In one process the controller's own object is read; under xdist the
workers (on this machine) read files in a folder the controller made and handed over: one
empty file per settled level, one number per level's frontier, one spend per process — no
channel of xdist's is needed, and a worker checks with one ``stat`` or read before it asks."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile

from .sample import LevelRef

__all__ = ["Signals"]


class Signals:
    def __init__(self, folder: str | None = None) -> None:
        self.folder = folder
        self._settled: set[LevelRef] = set()
        self._frontiers: dict[LevelRef, int] = {}
        self._spent = (0, 0.0)  # this process's (tokens, dollars)
        self._stop: str | None = None
        self._own = False  # the folder was made here (the controller removes it)

    @classmethod
    def for_workers(cls) -> Signals:
        """The controller's side under xdist: a fresh folder for the markers."""
        signals = cls(tempfile.mkdtemp(prefix="reasoning-signals-"))
        signals._own = True
        return signals

    def _path(self, level: LevelRef) -> str:
        assert self.folder is not None
        return os.path.join(self.folder, hashlib.sha256(level.key.encode()).hexdigest()[:32])

    def settle(self, key: LevelRef) -> None:
        self._settled.add(key)
        if self.folder is not None:
            with contextlib.suppress(OSError), open(self._path(key), "w"):
                pass  # a lost marker only costs the calls it would have saved

    def settled(self, key: LevelRef) -> bool:
        if key in self._settled:
            return True
        if self.folder is not None and os.path.exists(self._path(key)):
            self._settled.add(key)
            return True
        return False

    def allow(self, key: LevelRef, frontier: int) -> None:
        """The samples of a sequential level at positions below ``frontier`` may be asked."""
        self._frontiers[key] = frontier
        if self.folder is not None:
            self._write(self._path(key) + ".ahead", str(frontier))

    def frontier(self, key: LevelRef) -> int | None:
        """How far a level may ask (None: no word yet, see ``gates.ledger.opening``)."""
        if self.folder is not None:
            with contextlib.suppress(OSError, ValueError), open(self._path(key) + ".ahead") as fh:
                self._frontiers[key] = int(fh.read())
        return self._frontiers.get(key)

    def pay(self, tokens: int, usd: float) -> None:
        """What a call of this process cost, the moment its reply arrived."""
        self._spent = (self._spent[0] + tokens, self._spent[1] + usd)
        if self.folder is not None:
            folder = os.path.join(self.folder, "spent")
            with contextlib.suppress(OSError):
                os.makedirs(folder, exist_ok=True)
            tokens, usd = self._spent
            self._write(os.path.join(folder, str(os.getpid())), f"{tokens} {usd!r}")

    def spent(self) -> tuple[float, float]:
        """(tokens, dollars) every process of the run has spent on calls so far."""
        if self.folder is None:
            return self._spent
        tokens, usd = 0.0, 0.0
        folder = os.path.join(self.folder, "spent")
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                if not name.isdigit():  # a spend being replaced (its .tmp)
                    continue
                with contextlib.suppress(OSError, ValueError), open(
                    os.path.join(folder, name), encoding="utf-8"
                ) as fh:
                    t, u = fh.read().split()
                    tokens, usd = tokens + float(t), usd + float(u)
        return tokens, usd

    def _write(self, path: str, text: str) -> None:
        """Replace ``path`` whole (readers see the old text or the new, never a part)."""
        with contextlib.suppress(OSError):
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)

    def stop(self, reason: str) -> None:
        """No more calls anywhere in the run (``reason``: one line)."""
        self._stop = reason
        if self.folder is not None:
            self._write(os.path.join(self.folder, "stop"), reason)

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
