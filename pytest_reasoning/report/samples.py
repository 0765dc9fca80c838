"""Every sample of a report as data for the page's viewer (``viewer.js``): one record per
results row (what a person triages with: prompt, reply, reasoning, extracted answer, gold,
failure mode, finish reason, tokens, cost, latency, cache), candidate/baseline pairs per
comparison, all cut into *chunks*: one per (suite entry, level), a large level in parts of at most
:data:`PART` samples (the samples of one item and prompt always in the same part, so a pair
never straddles two).

Each chunk is two blobs: ``meta`` (what the filters and the list read), JSON with every ``<``
escaped, read at once; and ``text`` (prompts, replies, reasoning: read only to search or to
show a sample), JSON compressed with raw DEFLATE and base64-encoded, inflated by the browser's
own ``DecompressionStream`` when needed. Neither holds a ``<``, so no model text can close a
script element or start markup in the page; the page shows it only through ``textContent``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..answers import strip_think
from ..core import clean_text, cluster_id, level_key
from ..gates import Comparison, baseline_answers
from ..gates.rows import row_key
from ..redaction import redactor

__all__ = [
    "PAIR_KINDS",
    "PART",
    "Chunk",
    "SampleData",
    "sample_data",
    "sample_id",
    "script_json",
]

PART = 4000  # samples per chunk at most: a level larger than this is split (by item)
CLIP = 100_000  # characters of a reply (or its reasoning) the page keeps; the results file all

# Pair kinds in the order the page lists them: regressions first.
PAIR_KINDS = (
    "baseline right, candidate wrong",
    "baseline wrong, candidate right",
    "both wrong",
    "both right",
    "a call failed",
    "no baseline answer in these results",
)


def _h(text: str, n: int) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def sample_id(row: Mapping[str, Any]) -> str:
    """A sample's stable id (``#sample=<id>``): a hash of its entry and level (which chunk
    holds it), then a hash of what makes it a distinct sample (item, model, prompt, repeat,
    and the suite: two suites may ask the same item)."""
    suite, entry, level = _where(row)
    key = json.dumps([*row_key(dict(row)), suite, entry], default=str)
    return f"{level_hash(entry, level)}-{_h(key, 10)}"


def level_hash(entry: str, level: str) -> str:
    return _h(f"{entry}\0{level}", 6)


def _texts() -> Callable[[Any], str | None]:
    """Model or harness text as the page may show it: valid Unicode, keys redacted."""
    scrub = redactor()

    def text(value: Any) -> str | None:
        return None if value is None else scrub(clean_text(str(value)))

    return text


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def split_reasoning(response: str | None) -> tuple[str | None, str | None]:
    """(reasoning, reply) of a response: the ``<think>`` part apart from the answer; an
    unclosed block is all reasoning (the model ran out of room mid-thought)."""
    if response is None:
        return None, None
    answer, found = strip_think(response)
    if found is None:
        return None, response
    if found == "unclosed":
        return response, ""
    cut = response.rfind(answer) if answer else len(response)
    return response[:cut].rstrip(), answer


def _reasoning(apart: str | None, tags: str | None) -> str | None:
    """The reasoning a sample shows: the text sent apart (``reasoning_text``, kept since
    issue 42), then any ``<think>`` part of the reply."""
    found = [t for t in (apart, tags) if t]
    return "\n\n".join(found) if found else None


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= CLIP:
        return text
    more = len(text) - CLIP
    return f"{text[:CLIP]}… [{more:,} more characters: the whole text is in the results file]"


def outcome(row: Mapping[str, Any]) -> str:
    if row.get("error") is not None:
        return "error"
    return "correct" if row.get("correct") else "wrong"


def mode(row: Mapping[str, Any]) -> str | None:
    """The failure mode the filters offer: the scorer's, ``wrong`` for an unlabelled wrong
    answer (as the tables count it), ``error (kind)`` for a failed call."""
    kind = outcome(row)
    if kind == "error":
        return f"error ({row.get('error_kind') or 'transient'})"
    if kind == "wrong":
        return str(row.get("failure_mode") or "wrong")
    return None


@dataclass
class Chunk:
    key: str
    entry: str  # the suite entry (the task id unless a suite names its entries)
    level: str
    samples: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    replies: list[str | None] = field(default_factory=list)
    reasoning: list[str | None] = field(default_factory=list)
    answers: dict[int, list[str | None]] = field(default_factory=dict)  # whole, where cut
    pairs: list[list[int]] = field(default_factory=list)  # [comparison, cand, base, kind]

    def facets(self) -> dict[str, Any]:
        count: dict[str, dict[str, int]] = {"outcome": {}, "mode": {}}
        for s in self.samples:
            count["outcome"][s["outcome"]] = count["outcome"].get(s["outcome"], 0) + 1
            if s.get("mode"):
                count["mode"][s["mode"]] = count["mode"].get(s["mode"], 0) + 1
        return {
            "key": self.key,
            "task": self.entry,
            "level": self.level,
            "lh": level_hash(self.entry, self.level),
            "n": len(self.samples),
            "models": sorted({s["model"] for s in self.samples}),
            "suites": sorted({s["suite"] for s in self.samples}),
            **count,
        }

    def blobs(self) -> tuple[str, str]:
        """(meta as JSON, texts as base64 of raw-DEFLATE JSON)."""
        meta = {"samples": self.samples, "pairs": self.pairs}
        text = {
            "prompts": self.prompts,
            "replies": self.replies,
            "reasoning": self.reasoning,
            "answers": self.answers,
        }
        return script_json(meta), _pack(text)


def script_json(data: Any) -> str:
    """JSON with no ``<`` at all (nothing in it can close a script element or open a
    comment) and U+2028/2029 escaped (JavaScript source may hold it too)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _pack(data: Any) -> str:
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    z = zlib.compressobj(6, zlib.DEFLATED, -15)
    return base64.b64encode(z.compress(raw) + z.flush()).decode("ascii")


@dataclass
class SampleData:
    chunks: list[Chunk]
    comparisons: list[dict[str, Any]]
    prompts_missing: int  # samples whose prompt could not be rebuilt here


def _where(row: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(row.get("suite") or ""), str(row.get("entry") or row["task"]), str(row["level"]))


def _matches(spec_where: tuple[str, str, str], row: Mapping[str, Any]) -> bool:
    """Whether a row belongs to a comparison's level (rows of files written before suites
    were recorded, and comparisons made from such files, carry no suite)."""
    suite, entry, level = spec_where
    r_suite, r_entry, r_level = _where(row)
    return (
        level == r_level
        and entry in (r_entry, str(row["task"]))
        and (not suite or not r_suite or suite == r_suite)
    )


def _pair_key(row: Mapping[str, Any]) -> tuple[str, str]:
    return (
        cluster_id(str(row["item_id"]), int(row.get("repeat") or 0), int(row.get("repeats") or 1)),
        str(row.get("prompt_sha256") or ""),
    )


class _Answer:
    """A row as :func:`baseline_answers` reads it (the comparisons' own majority vote)."""

    def __init__(self, row: Mapping[str, Any]) -> None:
        self.model = str(row["model"])
        self.task = str(row["task"])
        self.cluster, self.prompt_sha256 = _pair_key(row)
        self.extracted = row.get("extracted")
        self.correct = row.get("correct")
        self.error = row.get("error")
        problem = row.get("problem")
        self.problem_cluster = f"problem:{problem}" if problem else self.cluster


def sample_data(
    rows: Sequence[Mapping[str, Any]],
    comparisons: Sequence[Comparison],
    *,
    prompt: Callable[[Mapping[str, Any]], str | None],
    cost: Mapping[int, float],
    verdicts: Sequence[str] = (),
) -> SampleData:
    """The viewer's data: ``prompt`` rebuilds a row's prompt (None where it cannot),
    ``cost`` is each uncached row's price by its index, ``verdicts`` each comparison's."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, r in enumerate(rows):
        groups[_where(r)[1:]].append(k)
    chunks: list[Chunk] = []
    where: dict[int, tuple[int, int]] = {}  # row index → (chunk, position)
    missing = 0
    _text = _texts()
    seen: dict[str, int] = {}  # the current part's prompts, each stored once
    # Each prompt looked up once, by its hash: every model's sample of an item shares it, and
    # a failed call's row (which keeps no item address to rebuild it) gets it from another.
    prompts: dict[str, str | None] = {}
    for r in rows:
        sha = str(r.get("prompt_sha256") or "")
        if prompts.get(sha) is None:
            prompts[sha] = _text(prompt(r))
    for entry, level in sorted(groups, key=lambda g: (g[0], level_key(g[1]))):
        members = groups[(entry, level)]
        by_item: dict[tuple[str, str], list[int]] = defaultdict(list)
        for k in members:
            by_item[_pair_key(rows[k])].append(k)

        def order(k: int) -> tuple[Any, ...]:
            r = rows[k]
            return (*_where(r), str(r["item_id"]), str(r["model"]), int(r.get("repeat") or 0))

        items = sorted(by_item.values(), key=lambda ks: min(order(k) for k in ks))
        part: Chunk | None = None
        for ks in items:
            if part is None or (part.samples and len(part.samples) + len(ks) > PART):
                part = Chunk(f"c{len(chunks)}", entry, level)
                chunks.append(part)
                seen = {}
            for k in sorted(ks, key=order):
                r = rows[k]
                p = prompts.get(str(r.get("prompt_sha256") or ""))
                missing += p is None
                pi = -1 if p is None else seen.setdefault(p, len(seen))
                if p is not None and pi == len(part.prompts):
                    part.prompts.append(p)
                tags, reply = split_reasoning(_text(r.get("response")))
                reasoning = _clip(_reasoning(_text(r.get("reasoning_text")), tags))
                reply = _clip(reply)
                where[k] = (len(chunks) - 1, len(part.samples))
                part.samples.append(_record(r, k, pi, cost, _text))
                whole = [_text(r.get("extracted")), _text(r.get("gold"))]
                if any(a is not None and len(a) > SHORT for a in whole):
                    part.answers[len(part.samples) - 1] = whole
                part.replies.append(reply)
                part.reasoning.append(reasoning)
    listed = _pairs(rows, comparisons, chunks, where, verdicts)
    return SampleData(chunks, listed, missing)


def _record(
    r: Mapping[str, Any],
    k: int,
    pi: int,
    cost: Mapping[int, float],
    _text: Callable[[Any], str | None],
) -> dict[str, Any]:
    """The sample as the list reads it: fields with nothing to say left out (the page reads a
    missing field as empty), answers longer than :data:`SHORT` cut (whole in the texts)."""
    extra = r.get("extra") or {}
    suite, entry, level = _where(r)
    record = {
        "id": sample_id(r),
        "item": _text(r["item_id"]),
        "model": _text(r["model"]),
        "suite": _text(suite),
        "entry": _text(entry),
        "task": _text(r["task"]),
        "level": _text(level),
        "outcome": outcome(r),
        "mode": mode(r),
        "detail": _text(extra.get("detail") or extra.get("scorer_error")),
        "extracted": _short(_text(r.get("extracted"))),
        "gold": _short(_text(r.get("gold"))),
        "score": _number(r.get("score")),
        "finish": _text(r.get("finish_reason")),
        "error": _text(r.get("error")),
        "promptTokens": _number(r.get("prompt_tokens")),
        "completionTokens": _number(r.get("completion_tokens")),
        "reasoningTokens": _number(r.get("reasoning_tokens")),
        "reasoningKind": _text(r.get("reasoning")),
        "cost": cost.get(k),
        "latency": _number(r.get("latency_s")),
        "cached": bool(r.get("cached")),
        "style": _text(r.get("style")),
        "extraction": _text(r.get("extraction")),
        "repeat": int(r.get("repeat") or 0),
        "prompt": pi,
    }
    if record["task"] == record["entry"]:
        del record["task"]
    if not record["repeat"]:
        del record["repeat"]
    return {
        k: v for k, v in record.items() if k == "suite" or not (v is None or v is False or v == "")
    }


SHORT = 120  # characters of an extracted or gold answer in the list (a zebra grid is long)


def _short(text: str | None) -> str | None:
    return text if text is None or len(text) <= SHORT else text[:SHORT] + "…"


def _pairs(
    rows: Sequence[Mapping[str, Any]],
    comparisons: Sequence[Comparison],
    chunks: list[Chunk],
    where: Mapping[int, tuple[int, int]],
    verdicts: Sequence[str],
) -> list[dict[str, Any]]:
    """Each comparison's pairs, into the chunk that holds them, and its manifest entry."""
    listed = []
    # Rows by (model, level): each comparison reads its level's rows, not every row of its
    # models (a report of 183 comparisons read 915,000 rows for 10,000).
    by_level: dict[tuple[str, str], list[int]] = defaultdict(list)
    if comparisons:
        for k, r in enumerate(rows):
            by_level[(str(r["model"]), str(r["level"]))].append(k)
    for ci, c in enumerate(comparisons):
        cand: dict[tuple[str, str], list[int]] = defaultdict(list)
        base: dict[tuple[str, str], list[int]] = defaultdict(list)
        for k in by_level.get((c.candidate, c.spec.level), ()):
            if _matches(c.spec.where, rows[k]):
                cand[_pair_key(rows[k])].append(k)
        for k in by_level.get((c.baseline, c.spec.level), ()):
            base[_pair_key(rows[k])].append(k)
        said_c = baseline_answers(_Answer(rows[k]) for ks in cand.values() for k in ks)
        said_b = baseline_answers(_Answer(rows[k]) for ks in base.values() for k in ks)
        kinds = [0] * len(PAIR_KINDS)
        keys: set[str] = set()
        for key, ks in sorted(cand.items()):
            first = min(ks, key=lambda k: int(rows[k].get("repeat") or 0))
            chunk, ci_pos = where[first]
            b = base.get(key)
            if not b:
                kind, bi = 5, -1
            else:
                bfirst = min(b, key=lambda k: int(rows[k].get("repeat") or 0))
                bchunk, bi = where[bfirst]
                if bchunk != chunk:  # cannot happen: an item and prompt share a chunk
                    bi = -1
                vc, vb = said_c.get(key), said_b.get(key)
                if vc is None or vb is None:
                    kind = 4
                else:
                    kind = 0 if vb and not vc else 1 if vc and not vb else 2 if not vc else 3
            kinds[kind] += 1
            chunks[chunk].pairs.append([ci, ci_pos, bi, kind])
            keys.add(chunks[chunk].key)
        suite, entry, level = c.spec.where
        held = sorted(keys, key=lambda key: int(key[1:]))
        listed.append(
            {
                "candidate": c.candidate,
                "baseline": c.baseline,
                "suite": suite,
                "entry": entry,
                "task": c.task,
                "level": level,
                "verdict": verdicts[ci] if ci < len(verdicts) else "",
                "kinds": kinds,
                "chunks": held,
            }
        )
    return listed
