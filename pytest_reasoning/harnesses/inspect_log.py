"""inspect_ai's eval logs read as data (never through inspect_ai): the ``.eval`` zip (a
``header.json`` and one ``samples/ID_epoch_N.json`` per sample; members stored, deflated (older
logs), or zstd-compressed as inspect_ai writes them now, read through whichever zstd module is
installed) and the ``.json`` log (one object, ``samples`` inside).

Each scorer of a sample is a level of its task (default: the log's headline scorer, or the
thresholds file's ``score:``); epochs are repeats. A log that did not finish (status other
than ``success``) plans the samples it set out to run, so its levels are partial (not
decided), never decided on fewer samples. Bounded: the file, each member, the members'
count and their total are capped before anything is decompressed."""

from __future__ import annotations

import io
import os
import struct
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, BinaryIO

from ..errors import quote
from ..files import BadJSON, InputRefused, loads_bounded, open_input, read_input
from .samples import (
    MAX_LOG_BYTES,
    HarnessLog,
    InvalidLog,
    Sample,
    field_dict,
    score_value,
    text_of,
)

__all__ = ["read_inspect"]

MAX_MEMBER_BYTES = 256 << 20  # one sample's JSON (its messages and events) at most
MAX_MEMBERS = 1_000_000
MAX_DEPTH = 512  # events nest state diffs: deeper than our own rows
_ZSTD = 93  # the zip compression method inspect_ai writes (PKWARE APPNOTE 4.4.5)
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def read_inspect(paths: Sequence[str], scores: Mapping[str, str]) -> HarnessLog:
    """The samples of inspect_ai logs (``.eval`` or ``.json`` files, or folders of them);
    ``scores``: the scorer to read per task (``"*"``: every task's default)."""
    log = HarnessLog("inspect")
    for path in _files(paths):
        if path.endswith(".json"):
            header, samples = _json_log(path)
        else:
            header, samples = _eval_log(path)
        _add(log, path, header, samples, scores)
    return log


def _files(paths: Sequence[str]) -> list[str]:
    out: list[str] = []
    for raw in paths:
        if os.path.isdir(raw):
            found = sorted(
                os.path.join(d, f)
                for d, _, names in os.walk(raw)
                for f in names
                if f.endswith((".eval", ".json"))
            )
            if not found:
                raise InvalidLog(f"{raw}: no inspect_ai log (*.eval, *.json) in this folder")
            out += found
        else:
            out.append(raw)
    return list({os.path.realpath(p): p for p in out}.values())  # a file named twice: once


def _json(data: bytes, shown: str) -> Any:
    try:
        return loads_bounded(data.decode("utf-8-sig", "replace"), max_depth=MAX_DEPTH)
    except BadJSON as exc:
        raise InvalidLog(f"{shown}: {exc}") from None


def _json_log(path: str) -> tuple[dict[str, Any], Iterator[Any]]:
    try:
        data = read_input(path, MAX_LOG_BYTES, what="an inspect_ai log")
    except InputRefused as exc:
        raise InvalidLog(str(exc)) from None
    found = _json(data, path)
    if not isinstance(found, dict) or not isinstance(found.get("eval"), dict):
        raise InvalidLog(f"{path}: not an inspect_ai log (no 'eval' object)")
    samples = found.get("samples") or []
    if not isinstance(samples, list):
        raise InvalidLog(f"{path}: samples: expected a list")
    return found, iter(samples)


def _eval_log(path: str) -> tuple[dict[str, Any], Iterator[Any]]:
    try:
        raw = open_input(path, MAX_LOG_BYTES, what="an inspect_ai log")
    except InputRefused as exc:
        raise InvalidLog(str(exc)) from None
    with raw:
        try:
            zf = zipfile.ZipFile(raw)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise InvalidLog(f"{path}: not an inspect_ai .eval log (not a zip: {exc})") from None
        with zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise InvalidLog(f"{path}: more than {MAX_MEMBERS:,} members")
            total = 0
            names = {i.filename: i for i in infos}
            header_name = "header.json" if "header.json" in names else "_journal/start.json"
            if header_name not in names:
                raise InvalidLog(f"{path}: not an inspect_ai .eval log (no header.json)")
            header = _json(_member(raw, zf, names[header_name], path), path)
            if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
                raise InvalidLog(f"{path}: header.json: not an inspect_ai log header")
            samples = []
            for info in infos:
                if not (info.filename.startswith("samples/") and info.filename.endswith(".json")):
                    continue
                total += info.file_size
                if total > MAX_LOG_BYTES:
                    raise InvalidLog(f"{path}: samples over {MAX_LOG_BYTES:,} bytes unpacked")
                samples.append(_json(_member(raw, zf, info, path), f"{path}: {info.filename}"))
            return header, iter(samples)


def _member(raw: BinaryIO, zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str) -> bytes:
    """One member's bytes, at most :data:`MAX_MEMBER_BYTES` whatever its header claims."""
    shown = f"{path}: {info.filename}"
    if info.file_size > MAX_MEMBER_BYTES:
        raise InvalidLog(f"{shown}: {info.file_size:,} bytes, over {MAX_MEMBER_BYTES:,}")
    try:
        if info.compress_type == _ZSTD:
            return _unzstd(_raw_member(raw, info, shown), shown)
        with zf.open(info) as fh:
            data = fh.read(MAX_MEMBER_BYTES + 1)
    except NotImplementedError:
        method = info.compress_type
        raise InvalidLog(f"{shown}: compression method {method} not supported") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise InvalidLog(f"{shown}: cannot unpack: {exc}") from None
    if len(data) > MAX_MEMBER_BYTES:
        raise InvalidLog(f"{shown}: more than {MAX_MEMBER_BYTES:,} bytes unpacked")
    return data


def _raw_member(raw: BinaryIO, info: zipfile.ZipInfo, shown: str) -> bytes:
    """A member's compressed bytes (after its local header), for a method zipfile lacks."""
    if info.compress_size > MAX_MEMBER_BYTES:
        raise InvalidLog(f"{shown}: {info.compress_size:,} bytes packed, over {MAX_MEMBER_BYTES:,}")
    raw.seek(info.header_offset)
    head = raw.read(_LOCAL_HEADER.size)
    if len(head) != _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
        raise InvalidLog(f"{shown}: bad local header")
    fields = _LOCAL_HEADER.unpack(head)
    raw.seek(info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1])
    data = raw.read(info.compress_size)
    if len(data) != info.compress_size:
        raise InvalidLog(f"{shown}: truncated")
    return data


def _unzstd(data: bytes, shown: str) -> bytes:
    """zstd-compressed bytes unpacked by whichever zstd module is importable (Python 3.14's
    ``compression.zstd``, ``backports.zstd``, ``zstandard``: inspect_ai's own dependency),
    at most :data:`MAX_MEMBER_BYTES`."""
    cap = MAX_MEMBER_BYTES + 1
    try:
        from compression import zstd  # type: ignore[import-not-found]
    except ImportError:
        try:
            from backports import zstd  # type: ignore[import-not-found]
        except ImportError:
            zstd = None
    try:
        if zstd is not None:
            with zstd.ZstdFile(io.BytesIO(data)) as fh:
                out = bytes(fh.read(cap))
        else:
            try:
                import zstandard  # type: ignore[import-not-found]
            except ImportError:
                raise InvalidLog(
                    f"{shown}: zstd-compressed (as inspect_ai writes .eval logs) and no zstd "
                    "module is installed: pip install zstandard (inspect_ai's own "
                    "dependency), or convert the log with `inspect log convert LOG --to json`"
                ) from None
            reader = zstandard.ZstdDecompressor().stream_reader(
                io.BytesIO(data), read_across_frames=True
            )
            with reader:
                out = reader.read(cap)
    except InvalidLog:
        raise
    except Exception as exc:  # a corrupt frame: each module raises its own error class
        raise InvalidLog(f"{shown}: cannot unpack (zstd): {exc}") from None
    if len(out) > MAX_MEMBER_BYTES:
        raise InvalidLog(f"{shown}: more than {MAX_MEMBER_BYTES:,} bytes unpacked")
    return out


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _add(
    log: HarnessLog,
    path: str,
    header: dict[str, Any],
    samples: Iterator[Any],
    scores: Mapping[str, str],
) -> None:
    ev = header["eval"]
    task, model = ev.get("task"), ev.get("model")
    if not isinstance(task, str) or not task or not isinstance(model, str) or not model:
        raise InvalidLog(f"{path}: eval.task and eval.model: expected text")
    epochs = field_dict(ev, "config").get("epochs")
    epochs = epochs if isinstance(epochs, int) and not isinstance(epochs, bool) else 1
    listed = list(samples)
    for n, sample in enumerate(listed):
        if not isinstance(sample, dict):
            raise InvalidLog(f"{path}: sample {n + 1}: expected an object")
    chosen = scores.get(task) or scores.get("*") or _headline(header)
    if chosen is None:  # the log names none (a run cut short): the first a sample has
        chosen = next((k for s in listed for k in field_dict(s, "scores")), None)
    count = 0
    for n, sample in enumerate(listed):
        found = _sample(sample, task, model, chosen, f"{path}: sample {n + 1}")
        if found is not None:
            log.samples.append(found)
            log.sources.setdefault((model, task, found.level), path)
            count += 1
    if chosen is None:
        log.notes.append(f"{path}: no scored sample: nothing to gate")
        return
    total = field_dict(header, "results").get("total_samples")
    if not isinstance(total, int) or isinstance(total, bool):
        ids = field_dict(ev, "dataset").get("sample_ids")
        total = len(ids) * max(1, epochs) if isinstance(ids, list) else count
    status = header.get("status")
    if status != "success":
        log.notes.append(
            f"{path}: status {quote(status, 30)}: {count} of {total} samples in the log"
        )
    key = (model, task, chosen)
    log.planned[key] = log.planned.get(key, 0) + max(total, count)


def _headline(header: Mapping[str, Any]) -> str | None:
    """The scorer inspect_ai headlines (the first one), where the header says."""
    results = header.get("results")
    if isinstance(results, dict):
        headline = results.get("headline")
        if isinstance(headline, dict) and isinstance(headline.get("scorer"), str):
            return str(headline["scorer"])
        found = results.get("scores")
        if isinstance(found, list) and found and isinstance(found[0], dict):
            name = found[0].get("name")
            return name if isinstance(name, str) else None
    return None


def _sample(
    s: dict[str, Any], task: str, model: str, scorer: str | None, shown: str
) -> Sample | None:
    sid = s.get("id")
    if not isinstance(sid, str | int) or isinstance(sid, bool):
        raise InvalidLog(f"{shown}: id: expected text or an integer, got {quote(sid, 40)}")
    shown = f"{shown} (id {quote(str(sid), 60)})"
    epoch = s.get("epoch", 1)
    if not isinstance(epoch, int) or isinstance(epoch, bool) or not 1 <= epoch <= 100_000:
        raise InvalidLog(f"{shown}: epoch: expected an integer >= 1, got {quote(epoch, 40)}")
    attachments = field_dict(s, "attachments")
    error = s.get("error")
    message = None
    if error is not None:
        message = text_of(error.get("message") if isinstance(error, dict) else error, 500)
        message = message or "an error (inspect_ai logged no message)"
    marks = field_dict(s, "scores")
    name = scorer
    if name is None:
        return None  # no sample of the log was scored
    mark = marks.get(name)
    value = None
    if message is None:
        if not isinstance(mark, dict) or "value" not in mark:
            raise InvalidLog(
                f"{shown}: no score by scorer {quote(name, 40)}; it has "
                + (", ".join(quote(k, 40) for k in marks) or "none")
            )
        try:
            value = score_value(mark["value"], f"{shown}: scorer {quote(name, 40)}")
        except ValueError as exc:
            raise InvalidLog(str(exc)) from None
    output = field_dict(s, "output")
    response = _text(output.get("completion"))
    if response is None and isinstance(output.get("choices"), list) and output["choices"]:
        first = output["choices"][0]
        if isinstance(first, dict) and isinstance(first.get("message"), dict):
            response = text_of(first["message"].get("content"))
    usage = _usage(s.get("model_usage"))
    seconds = s.get("working_time", s.get("total_time", 0.0))
    ok = isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds >= 0
    return Sample(
        task=task,
        level=name,
        sample_id=str(sid),
        model=model,
        value=value,
        epoch=epoch,
        prompt=_resolve(text_of(s.get("input", "")), attachments),
        response=None if response is None else _resolve(response, attachments),
        extracted=_text(mark.get("answer")) if isinstance(mark, dict) else None,
        target=text_of(s.get("target", "")),
        error=message,
        no_answer=isinstance(mark, dict) and mark.get("value") == "N",
        prompt_tokens=usage[0],
        completion_tokens=usage[1],
        reasoning_tokens=usage[2],
        seconds=float(seconds) if ok and seconds < 1e9 else 0.0,
    )


def _resolve(text: str, attachments: Mapping[str, Any]) -> str:
    """inspect_ai stores long texts once, as ``attachment://ID`` references."""
    if text.startswith("attachment://"):
        found = attachments.get(text.removeprefix("attachment://"))
        return found if isinstance(found, str) else text
    return text


def _usage(value: Any) -> tuple[int | None, int | None, int | None]:
    """Input, output and reasoning tokens summed over the models a sample called."""
    if not isinstance(value, dict) or not value:
        return None, None, None
    totals: list[int | None] = [None, None, None]
    for usage in value.values():
        if not isinstance(usage, dict):
            continue
        for k, name in enumerate(("input_tokens", "output_tokens", "reasoning_tokens")):
            n = usage.get(name)
            if isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 1 << 53:
                totals[k] = (totals[k] or 0) + n
    return totals[0], totals[1], totals[2]
