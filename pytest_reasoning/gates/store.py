"""The results store: every answered sample appended to a JSONL file as it comes, and in memory
only the rows a run still reads (its summary or report). Verdicts are decided by the ledger
(``gates.ledger``), by the process that saw every outcome (the xdist controller)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ..core import Outcome, sha256_text
from ..errors import StorageFailed
from ..files import InputRefused, open_input, remove_stale, temp_file

__all__ = [
    "NOT_NEEDED",
    "PROMPTS_SUFFIX",
    "REASONING_TEXT",
    "RESULT_FIELDS",
    "ResultStore",
    "files_prompts",
    "prompts_path",
    "read_prompts",
]

# The documented row of the results file, in this order.
RESULT_FIELDS = (
    "item_id",
    "model",
    "task",
    "level",
    "seed",
    "prompt_sha256",
    "response",
    "extracted",
    "gold",
    "correct",
    "failure_mode",
    "error",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "score",
    "extra",
    # Since issue 19 (frontier models); older files lack them.
    "style",
    "suite",
    "entry",
    "repeat",
    "repeats",
    "model_id",
    "finish_reason",
    "reasoning_tokens",
    "reasoning",
    "extraction",
    "error_kind",
    "cost_usd",
    # Since issue 39: whether the answer came from the cache (or an identical request in
    # flight), so that the rows not cached sum to the run's spend.
    "cached",
    # Since issue 41: the problem up to renaming (samples of one problem are one cluster).
    "problem",
)
# Written after those, and only on the rows it marks (issue 39): a paid answer a sequential
# level did not need.
NOT_NEEDED = "not_needed"
# Written last, and only on rows that have it (issue 42): the model's reasoning sent apart,
# clipped (models.base.MAX_REASONING_CHARS).
REASONING_TEXT = "reasoning_text"

# The prompts beside a results file (``r.jsonl.prompts``): one JSON line per distinct prompt
# the run asked, ``{"prompt_sha256": ..., "prompt": ...}``, so that the report shows a
# prompt without generating its item again (20 s of 45 for 10,000 samples). Not ``*.jsonl``:
# a folder of results files is read as every ``*.jsonl`` in it.
PROMPTS_SUFFIX = ".prompts"
MAX_PROMPT_CHARS = 4_000_000  # a longer line in the prompts file is not a prompt of ours
MAX_PROMPTS_BYTES = 4 << 30  # as a results file's (gates.rows.MAX_RESULTS_BYTES)


def prompts_path(results: str | os.PathLike[str]) -> str:
    """Where the prompts of a results file are."""
    return os.fspath(results) + PROMPTS_SUFFIX


def read_prompts(results: str | os.PathLike[str]) -> dict[str, str]:
    """The prompts beside a results file, by hash: only those whose text hashes to the hash
    it is filed under (a damaged or edited line is skipped, and the report generates that
    item again); none if there is no such regular file (a FIFO, a device: not read, so never
    a hang) or it cannot be read. Lines are read bounded: one long line is skipped."""
    out: dict[str, str] = {}
    try:
        raw = open_input(prompts_path(results), MAX_PROMPTS_BYTES, what="a prompts file")
    except InputRefused:
        return out
    try:
        with io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as fh:
            while line := fh.readline(MAX_PROMPT_CHARS + 1):
                if len(line) > MAX_PROMPT_CHARS:  # no prompt of ours: skip the rest of it
                    while line and not line.endswith("\n"):
                        line = fh.readline(MAX_PROMPT_CHARS + 1)
                    continue
                try:
                    entry = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(entry, dict):
                    continue
                sha, text = entry.get("prompt_sha256"), entry.get("prompt")
                if isinstance(sha, str) and isinstance(text, str) and sha_matches(sha, text):
                    out[sha] = text
    except OSError:
        pass
    return out


def sha_matches(sha: str, text: str) -> bool:
    try:
        return sha256_text(text) == sha
    except UnicodeError:  # a lone surrogate from a damaged line
        return False


class ResultStore:
    """Appends answered samples to a JSONL results file as they come, and keeps in memory the
    ones a run still reads (the verdicts are the ledger's: ``gates.ledger``).

    Rows are flushed one by one, so a killed run keeps every row it wrote; a rerun appends
    (rows are idempotent by ``gates.rows.row_key``: readers keep the last). By default every
    outcome is kept (``outcomes``); a long run keeps memory flat instead: ``keep`` says which
    outcomes to keep (those its summary or report still reads); ``count`` counts them all.
    A row marked ``not_needed`` (paid, not counted) is written, never kept: no table reads it;
    one written for a sample kept before takes that sample out of ``outcomes``.

    ``aside`` (a shard's file): the rows go to a part file beside ``path`` (a copy of the old
    file, then this run's rows) that :meth:`close` renames over it, so ``path`` is always a
    whole run's file or absent, and a merge never reads a shard that is still running. A
    killed shard leaves only the part file (the next run there removes it; the response
    cache still holds its answers, so its rerun asks for nothing twice).

    :meth:`add_prompt` files each distinct prompt once in the prompts file beside ``path``
    (:func:`prompts_path`, written the same way, aside or appended), and keeps them in
    ``prompts`` with ``remember_prompts`` (a report will show them).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        keep: Callable[[Outcome], bool] | None = None,
        aside: bool = False,
        remember_prompts: bool = False,
    ) -> None:
        self.path = Path(path) if path else None
        self._remember = remember_prompts
        self._fh: IO[str] | None = None
        self._aside = aside
        self._side: str | None = None  # the part file renamed over ``path`` at close
        self._keep = keep
        self._kept: list[Outcome] = []
        self._dropped: set[tuple[object, ...]] = set()  # kept samples marked not needed after
        self.count = 0  # outcomes added
        self.written = 0  # rows on disk (a failed write is not counted)
        self.prompts: dict[str, str] = {}  # by hash, with ``remember_prompts`` (a report)
        self._filed: set[str] = set()  # the prompts' hashes this run filed
        self._on_disk: set[str] = set()  # those the prompts file held before (a rerun)
        self._prompts_fh: IO[str] | None = None
        self._prompts_side: str | None = None
        self._prompts_off = not files_prompts(path)
        # Absolute now: the file is opened at the first prompt, whatever the cwd is then.
        self._prompts_at = os.path.abspath(prompts_path(path)) if path else ""

    def add_prompt(self, sha: str, text: str) -> None:
        """The prompt an added outcome answered (``sha`` its ``prompt_sha256``), filed once.
        A prompt that cannot be written is not an error: the report generates it again."""
        if sha in self._filed or not sha_matches(sha, text):
            return
        self._filed.add(sha)
        if self._remember:
            self.prompts[sha] = text
        if self._prompts_off:
            return
        try:
            if self._prompts_fh is None:
                where = Path(self._prompts_at)
                if not _regular_or_new(where):  # a FIFO there would block the run's open
                    self._prompts_off = True
                    return
                self._on_disk = set(read_prompts(self._prompts_at[: -len(PROMPTS_SUFFIX)]))
                if self._aside:
                    self._prompts_fh, self._prompts_side = _open_aside(where)
                else:
                    self._prompts_fh = _open_appending(where)
            if sha in self._on_disk:  # a rerun's prompt, filed by the run before
                return
            data = json.dumps({"prompt_sha256": sha, "prompt": text}, ensure_ascii=False)
            _append_whole(self._prompts_fh, (data + "\n").encode("utf-8"))
        except OSError:
            self._prompts_off = True  # the rows matter; the prompts can be generated again

    @property
    def outcomes(self) -> list[Outcome]:
        if self._dropped:
            self._kept = [o for o in self._kept if _key(o) not in self._dropped]
            self._dropped.clear()
        return self._kept

    def add(self, outcome: Outcome, *, again: bool = False) -> None:
        """Write one row (``again``: a second row of a sample added before, not counted)."""
        self.count += not again
        if outcome.not_needed:
            if self._kept:
                self._dropped.add(_key(outcome))
        elif self._keep is None or self._keep(outcome):
            self._kept.append(outcome)
        if self.path is not None:
            row = outcome.to_dict()
            ordered = {k: row[k] for k in RESULT_FIELDS}
            if outcome.not_needed:
                ordered[NOT_NEEDED] = True
            if outcome.reasoning_text is not None:
                ordered[REASONING_TEXT] = outcome.reasoning_text
            data = (json.dumps(ordered, ensure_ascii=False) + "\n").encode("utf-8")
            try:
                _append_whole(self.open(), data)
                self.written += not again
            except OSError as exc:
                raise StorageFailed(f"cannot write the results file {self.path}: {exc}") from None

    def open(self) -> IO[str]:
        """The results file, opened for appending (call early to fail before any model call)."""
        if self._fh is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._aside and (not self.path.exists() or self.path.is_file()):
                self._fh, self._side = _open_aside(self.path)
                return self._fh
            self._fh = _open_appending(self.path)
        return self._fh

    def close(self) -> None:
        # The prompts first: a shard's results file, once in place, has its prompts beside it.
        # Where a rename fails (the folder gone), the part file keeps what was written.
        pfh, self._prompts_fh = self._prompts_fh, None
        pside, self._prompts_side = self._prompts_side, None
        _finish(pfh, pside, self._prompts_at)
        fh, self._fh = self._fh, None
        side, self._side = self._side, None
        # A failed write was already reported; the rows before it are on disk.
        _finish(fh, side, os.fspath(self.path) if self.path is not None else "")


def _finish(fh: IO[str] | None, side: str | None, path: str) -> None:
    """Close an appended file; a part file written aside moves over ``path`` (its target)."""
    if fh is not None:
        with contextlib.suppress(OSError):
            fh.close()
    if side is not None and path:
        with contextlib.suppress(OSError):
            os.replace(side, os.path.realpath(path))


def _open_appending(path: Path) -> IO[str]:
    torn = path.exists() and path.stat().st_size > 0 and not _ends_with_newline(path)
    fh = path.open("a", encoding="utf-8")
    if torn:  # a killed run's half-written last row: start ours on a fresh line
        fh.write("\n")
    return fh


def files_prompts(results: str | os.PathLike[str] | None) -> bool:
    """Whether a run writing its results to ``results`` files prompts beside them: a regular
    file or none yet; not ``-``, a FIFO or a device (the workers send no prompt otherwise)."""
    if results is None or not os.fspath(results):
        return False
    return _regular_or_new(Path(results))


def _regular_or_new(path: Path) -> bool:
    """A results file with a file beside it: a regular file or none yet (not ``-``, a FIFO or
    a device, which are written in place and have no folder of their own)."""
    # As the one writer has it (files.py): under /dev and /proc a path is written in place.
    if os.fspath(path) == "-" or os.path.abspath(path).startswith(("/dev/", "/proc/")):
        return False
    try:
        return path.is_file() or not path.exists()
    except OSError:
        return False


def _open_aside(path: Path) -> tuple[IO[str], str]:
    """A part file beside ``path`` (beside a symlink's target), holding ``path``'s rows (a
    rerun appends, as in place) and opened for appending: the file and its name."""
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    remove_stale(folder)  # what killed shards left here
    fd, side = temp_file(folder, os.path.basename(target), ".part", 0o666)
    try:
        with os.fdopen(os.dup(fd), "wb") as out:
            if os.path.exists(target):
                os.fchmod(fd, os.stat(target).st_mode & 0o7777)
                with open(target, "rb") as old:
                    shutil.copyfileobj(old, out)
                if out.tell() and not _ends_with_newline(Path(target)):
                    out.write(b"\n")  # a killed run's half-written last row: ours on a fresh line
        return os.fdopen(fd, "a", encoding="utf-8"), side
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(side)
        raise


def _key(o: Outcome) -> tuple[object, ...]:
    """A sample, as ``gates.rows.row_key`` names its row."""
    return (o.item_id, o.model, o.model_id, o.prompt_sha256, o.repeat)


def _append_whole(fh: IO[str], data: bytes) -> None:
    """Append one row unbuffered, or nothing: a write the disk refuses part-way is cut back,
    so the file holds exactly the rows counted as written (no buffered rest reaches the disk
    later, when space was freed)."""
    fh.flush()
    fd = fh.fileno()
    size = os.fstat(fd).st_size
    done = 0
    try:
        while done < len(data):
            done += os.write(fd, data[done:])
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        raise


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"
