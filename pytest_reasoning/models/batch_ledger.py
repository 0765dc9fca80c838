"""The record of each batch a run submitted and has not yet collected (``models/batch.py``): one
JSON file per batch in ``<cache folder>/batches/`` (its tag, input file, id once known, model,
endpoint and the requests it covers; never a key), each written whole (temporary file,
fsync, rename).

A record is written *before* its batch is created, under a tag of our own that the create
sends as the batch's metadata: a create whose answer is lost (a timeout, a 502 from a
gateway) may still have made the batch, and the tag finds it in the provider's list, in this
run or the next, instead of paying for a second one. The record gains the batch id once the
create answers (or the list finds it)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ReasoningError, clip
from ..files import BadJSON, InputRefused, loads_bounded, read_input, write_output
from .base import ChatRequest, normalise_api_base

__all__ = ["TAG_KEY", "BatchLedger", "BatchRecord", "new_tag"]

MAX_RECORD_BYTES = 1 << 30  # a record larger than this is not one we wrote
TAG_KEY = "pytest_reasoning_tag"  # the batch metadata key that carries a record's tag


def new_tag() -> str:
    """A tag no other batch carries (random: it names a submission, never decides a result)."""
    return f"pr-{secrets.token_hex(12)}"


@dataclass(frozen=True)
class BatchRecord:
    """A submitted batch not yet collected: enough to collect it from any later run. ``id``
    is "" while its create has not answered (the tag finds it then)."""

    id: str
    model: str  # the LiteLLM model string (ChatRequest.model)
    endpoint: str  # the endpoint identity (as in cache keys); "" for the provider's own
    provider: str
    submitted_at: float
    requests: tuple[ChatRequest, ...]
    tag: str = ""  # "" in records of version 1 (written after the create answered)
    file_id: str = ""  # the uploaded input file

    @property
    def keys(self) -> set[str]:
        return {r.key for r in self.requests}

    @property
    def name(self) -> str:
        """How a line names it: the batch id, or its tag while the id is unknown."""
        return self.id or f"the batch tagged {self.tag}"

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 2,
            "id": self.id,
            "tag": self.tag,
            "file_id": self.file_id,
            "model": self.model,
            "endpoint": self.endpoint,
            "provider": self.provider,
            "submitted_at": self.submitted_at,
            "requests": [
                {
                    "key": r.key,
                    "model": r.model,
                    "messages": [list(m) for m in r.messages],
                    "params": r.params,
                    # Normalised as in the key: a URL's user:password never reaches the disk.
                    "api_base": normalise_api_base(r.api_base) or None,
                    "identity": r.identity,
                    "repeat": r.repeat,
                }
                for r in self.requests
            ],
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> BatchRecord:
        """Check every field (a damaged record must not be half-read); ReasoningError names
        the file and the key."""

        def bad(key: str, expected: str) -> ReasoningError:
            return ReasoningError(
                f"{where}: {key}: expected {expected}; a batch record this program did not "
                "write: delete it (its batch will not be collected)"
            )

        version = data.get("version") if isinstance(data, dict) else None
        if version not in (1, 2):
            raise bad("version", "1 or 2")
        text: dict[str, str] = {}
        names = ["id", "model", "endpoint", "provider"]
        if version == 2:
            names += ["tag", "file_id"]
        for key in names:
            value = data.get(key)
            if not isinstance(value, str):
                raise bad(key, "a string")
            text[key] = value
        if not (text["id"] or text.get("tag")):
            raise bad("id", "a batch id or a tag")
        submitted = data.get("submitted_at")
        if not isinstance(submitted, int | float):
            raise bad("submitted_at", "a number")
        rows = data.get("requests")
        if not isinstance(rows, list) or not rows:
            raise bad("requests", "a list of requests")
        requests = []
        for n, row in enumerate(rows):
            try:
                request = ChatRequest(
                    model=str(row["model"]),
                    messages=tuple((str(r), str(c)) for r, c in row["messages"]),
                    params=dict(row["params"]),
                    api_base=row["api_base"],
                    identity=row["identity"],
                    repeat=int(row["repeat"]),
                )
            except (KeyError, TypeError, ValueError):
                raise bad(f"requests[{n}]", "a request (model, messages, params, …)") from None
            if request.key != row.get("key"):
                raise bad(f"requests[{n}].key", "the key of its request")
            requests.append(request)
        return cls(
            text["id"],
            text["model"],
            text["endpoint"],
            text["provider"],
            submitted,
            tuple(requests),
            tag=text.get("tag", ""),
            file_id=text.get("file_id", ""),
        )


class BatchLedger:
    """The recorded batches, one JSON file each in ``folder`` (``<cache>/batches``), named
    by the record's tag (its id in records of version 1). A file is replaced whole (temporary
    file, fsync, rename), so concurrent runs never see half a record."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def path(self, record: BatchRecord) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", record.tag or record.id)[:200]
        return self.folder / f"{safe}.json"

    def records(self) -> list[BatchRecord]:
        """Every recorded batch, oldest first; ReasoningError (one line) for a damaged one."""
        found = []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else ():
            try:  # a regular file under the cap, bounded JSON (files.py)
                data = loads_bounded(read_input(path, MAX_RECORD_BYTES, what="a batch record"))
            except (InputRefused, BadJSON) as exc:
                why = exc.reason if isinstance(exc, InputRefused) else str(exc)
                raise ReasoningError(
                    f"{path}: unreadable batch record ({clip(why, 120)}): delete it "
                    "(its batch will not be collected)"
                ) from None
            found.append(BatchRecord.from_json(data, str(path)))
        return sorted(found, key=lambda r: r.submitted_at)

    def add(self, record: BatchRecord) -> None:
        """Write (or replace) ``record``'s file."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with write_output(self.path(record), durable=True) as fh:  # the one writer
            json.dump(record.to_json(), fh)

    def remove(self, record: BatchRecord) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(record).unlink()
