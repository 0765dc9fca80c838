"""The page's sample viewer: the manifest (filters' values, one entry per data chunk and per
comparison), the chunks' blobs inline in the page or, past :data:`INLINE_MAX`, in
``data/<key>.js`` files beside it that the page loads per level (script tags: ``file://``
forbids ``fetch``), and the markup the script (``assets/viewer.js``) fills in.

Inline, the samples' lists come before the viewer's script and their texts after it: the
script draws the first page of samples synchronously (JSON only, no inflating), before the
browser parses the plots and texts below it."""

from __future__ import annotations

import base64
import json
import os
import re
import zlib
from importlib import resources
from typing import Any

from ..core import level_key
from ..files import write_output
from .samples import PAIR_KINDS, SampleData, script_json

__all__ = ["INLINE_MAX", "LOAD_LIMIT", "asset", "page_data", "viewer_parts", "write_file"]

INLINE_MAX = 20_000_000  # bytes of blobs the page holds itself; more go to data files
LOAD_LIMIT = 20_000  # samples the page loads at once; more must be narrowed (a level)
DATA = "data"
_OURS = re.compile(r"c\d+[mt]\.js")


def asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def write_file(path: str, text: str) -> None:
    """Replace ``path`` only once the new file is whole (the project's one writer)."""
    with write_output(path) as fh:
        fh.write(text)


def viewer_parts(data: SampleData, out: str) -> tuple[str, str, str, list[str]]:
    """(the viewer's section, the data elements before the viewer's script, those after it,
    data files written). The texts (prompts, replies) come after the script, so the viewer
    starts before the browser has parsed them: they are read only to search or to show."""
    blobs = [(c.key, *c.blobs()) for c in data.chunks]
    size = sum(len(m) + len(t) for _, m, t in blobs)
    inline = size <= INLINE_MAX
    folder = os.path.join(out, DATA)
    stale = [f for f in os.listdir(folder) if _OURS.fullmatch(f)] if os.path.isdir(folder) else []
    for name in stale:  # a previous report's chunks must not mix with this one's
        os.remove(os.path.join(folder, name))
    files: list[str] = []
    scripts: list[str] = []
    late: list[str] = []
    for key, m, t in blobs:
        if inline:  # neither holds a "<": nothing in them can end the element
            scripts.append(f'<script type="application/json" id="pr-{key}m">{m}</script>')
            late.append(f'<script type="application/octet-stream" id="pr-{key}t">{t}</script>')
            continue
        os.makedirs(folder, exist_ok=True)
        for suffix, blob in (("m", m), ("t", t)):
            path = os.path.join(folder, f"{key}{suffix}.js")
            literal = json.dumps(blob, ensure_ascii=False)  # U+2028/2029 escaped already
            write_file(path, f'(window.PR_DATA=window.PR_DATA||{{}})["{key}{suffix}"]={literal};\n')
            files.append(path)
    samples = [s for c in data.chunks for s in c.samples]
    manifest = {
        "dir": DATA,
        "inline": inline,
        "loadLimit": LOAD_LIMIT,
        "total": len(samples),
        "chunks": [c.facets() for c in data.chunks],
        "comparisons": data.comparisons,
        "kinds": list(PAIR_KINDS),
        "models": sorted({s["model"] for s in samples}),
        "suites": sorted({s["suite"] for s in samples}),
        "tasks": sorted({s["entry"] for s in samples}),
        "levels": sorted({s["level"] for s in samples}, key=level_key),
        "modes": sorted({s["mode"] for s in samples if s.get("mode")}),
    }
    scripts.insert(
        0, f'<script type="application/json" id="pr-manifest">{script_json(manifest)}</script>'
    )
    where = (
        "all of them in this page"
        if inline
        else f"in {len(files)} files under {DATA}/ beside this page, loaded a level at a time"
    )
    section = SECTION.format(
        total=f"{len(samples):,}",
        where=where,
        missing=(
            f" {data.prompts_missing:,} sample(s) without their prompt: it could not be "
            "rebuilt here (a task not installed, a generator changed since the run, knobs or "
            "an item index no suite asks, or more items to generate than the report allows)."
            if data.prompts_missing
            else ""
        ),
    )
    return section, "\n".join(scripts), "\n".join(late), files


SECTION = """
<h2 id="samples">Samples</h2>
<p class="muted">Every sample ({total}; {where}): filter, search (prompts, replies, reasoning,
answers), click one to read it. The address bar keeps the view: copy it to share.{missing}</p>
<noscript><p class="warn">The sample viewer needs JavaScript.</p></noscript>
<div class="pr-bar">
 <span class="pr-views"><button type="button" id="pr-v-samples" class="on">Samples</button><button
 type="button" id="pr-v-pairs">Candidate beside baseline</button></span>
 <select id="pr-f-model" aria-label="model"></select>
 <select id="pr-f-suite" aria-label="suite"></select>
 <select id="pr-f-task" aria-label="task"></select>
 <select id="pr-f-level" aria-label="level"></select>
 <select id="pr-f-outcome" aria-label="outcome"></select>
 <select id="pr-f-mode" aria-label="failure mode"></select>
 <select id="pr-f-kind" aria-label="pair" hidden></select>
 <select id="pr-f-sort" aria-label="order"></select>
 <input id="pr-f-q" type="search" placeholder="search text" aria-label="search">
 <button type="button" id="pr-reset">reset</button>
</div>
<p id="pr-status" role="status">Loading the samples…</p>
<section id="pr-detail" hidden>
 <h3><span id="pr-detail-title"></span>
 <button type="button" id="pr-detail-close">close</button></h3>
 <div id="pr-detail-body"></div>
</section>
<div id="pr-samples"></div>
<div id="pr-pairs" hidden></div>
"""


def page_data(folder: str | os.PathLike[str]) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """What a written report's viewer reads: (the manifest, each chunk's meta, each chunk's
    texts), from its page and data files, decoded as the page's script decodes them."""
    with open(os.path.join(folder, "index.html"), encoding="utf-8") as fh:
        page = fh.read()
    found = re.search(r'<script type="application/json" id="pr-manifest">(.*?)</script>', page)
    if found is None:
        raise ValueError(f"{folder}: no sample viewer in index.html")
    manifest = json.loads(found[1])
    inline = r'<script type="application/[a-z-]+" id="pr-(c\d+[mt])">(.*?)</script>'
    blobs = dict(re.findall(inline, page))
    data = os.path.join(folder, DATA)
    for name in sorted(os.listdir(data)) if os.path.isdir(data) else ():
        with open(os.path.join(data, name), encoding="utf-8") as fh:
            held = re.fullmatch(r'.*?\["(c\d+[mt])"\]=(".*");\n', fh.read(), re.S)
        if held:
            blobs[held[1]] = json.loads(held[2])

    def inflate(key: str) -> Any:
        return json.loads(zlib.decompress(base64.b64decode(blobs[key]), -15))

    keys = [c["key"] for c in manifest["chunks"]]
    return manifest, [json.loads(blobs[k + "m"]) for k in keys], [inflate(k + "t") for k in keys]
