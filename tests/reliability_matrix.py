"""The matrices of docs/reliability.md quote the last measured run, not a guess: with
REASONING_UPDATE_DOCS set, a test writes what it measured between ``<!-- TABLE:NAME -->`` marks
(TABLE ``hostile``: the hostile-input matrix; ``hardened``: the third round's)."""

from __future__ import annotations

import os
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "reliability.md"


def record(name: str, text: str, table: str = "hostile") -> None:
    """Put ``text`` between ``<!-- TABLE:NAME -->`` marks in docs/reliability.md, when
    REASONING_UPDATE_DOCS is set."""
    if not os.environ.get("REASONING_UPDATE_DOCS"):
        return
    import fcntl

    with DOC.open("r+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # xdist workers may record at the same time
        doc = fh.read()
        start, end = f"<!-- {table}:{name} -->", f"<!-- /{table}:{name} -->"
        a, b = doc.index(start) + len(start), doc.index(end)
        fh.seek(0)
        fh.write(doc[:a] + text + doc[b:])
        fh.truncate()


def record_hardened(name: str, text: str) -> None:
    """``record`` into the third round's matrix."""
    record(name, text, table="hardened")
