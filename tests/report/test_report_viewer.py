"""The report's sample viewer: every sample in the page (as data the page's script shows),
stable links, candidate beside baseline, hostile model text kept inert, suites kept apart;
and, where Debian's Chromium is installed, the page itself driven in a real browser (marked
e2e: each test starts Chromium)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_reasoning.config import addresses, load_suite
from pytest_reasoning.core import Reply
from pytest_reasoning.errors import InvalidArgument
from pytest_reasoning.evaluate import score_reply
from pytest_reasoning.gates import Ledger, baseline_answers, compare, decide_gates
from pytest_reasoning.report import build_report
from pytest_reasoning.report.links import (
    check_report_url,
    gate_link,
    report_url,
    sample_link,
    samples_link,
)
from pytest_reasoning.report.samples import PAIR_KINDS, sample_id
from pytest_reasoning.testing.browser import Browser, find_chromium

SUITE = """\
seed: 1
samples: {n}
tasks:
  - task: dyval.arithmetic
    levels: {{D1: {{min_accuracy: 0.5}}, D2: {{min_accuracy: 0.9}}}}
"""
FOUR_ENTRIES = """\
seed: 1
samples: {n}
tasks:
  - {{task: dyval.arithmetic, id: a, levels: {{D1: {{}}, D2: {{}}}}}}
  - {{task: dyval.arithmetic, id: b, levels: {{D1: {{}}, D2: {{}}}}}}
  - {{task: dyval.arithmetic, id: c, levels: {{D1: {{}}, D2: {{}}}}}}
  - {{task: dyval.arithmetic, id: d, levels: {{D1: {{}}, D2: {{}}}}}}
"""
# Everything a model could say to break out of the page.
HOSTILE = (
    "<script>window.__pwned = 1</script></script><script>window.__pwned = 2</script>"
    '<img src=x onerror="window.__pwned = 3"> ]]> <!-- --> &amp; \x1b[31mred\x1b[0m NUL:\x00 '
    "lone:\ud800 \u2028 bidi:\u202eLIAM\u2066 c1:\x9b <<<7>>>"
)
SECRET = "sk-test-not-a-real-key-1234567890"


def _report(
    tmp_path: Path,
    *,
    n: int = 4,
    reply: Any = None,
    reasoning: Any = None,
    models: tuple[str, str] = ("cand", "base"),
    suites: tuple[str, ...] = ("s.yaml",),
    suite_text: str = SUITE,
) -> tuple[list[dict[str, Any]], Any, Path]:
    """Rows of two models over a small suite (the candidate wrong on odd items, the baseline
    always right), gated and compared as a run does, and the report built from them.
    ``reply`` and ``reasoning`` (the reasoning sent apart) say what a model said, if given."""
    ledger = Ledger(hint="-")
    outcomes, specs = [], []
    for name in suites:
        path = tmp_path / name
        path.write_text(suite_text.format(n=n))
        for a in addresses(load_suite(path, display=name)):
            item = a.make_item()
            for model in models:
                wrong = model == models[0] and a.index % 2 == 1
                content = reply(item, model, a) if reply else None
                content = content or ("<<<-999>>>" if wrong else f"<<<{item.answer}>>>")
                # A recorded cost: no price map to load (LiteLLM's import is slow).
                said = Reply(content, prompt_tokens=50, completion_tokens=5, cost_usd=2e-5,
                             latency_s=0.5 + a.index, finish_reason="stop",
                             reasoning_text=reasoning(model) if reasoning else None,
                             reasoning_chars=1 if reasoning else None)  # fmt: skip
                if content == "<fail>":
                    said = Reply(None, error="HTTP 500: boom", error_kind="transient")
                o = score_reply(item, model, said)
                outcomes.append(dataclasses.replace(o, suite=a.suite, entry=a.entry.id))
                specs.append(a.gate)
                ledger.add(outcomes[-1], a.gate)
    base = baseline_answers(o for o in outcomes if o.model == models[1])
    pairs = [(o, s) for o, s in zip(outcomes, specs, strict=True)
             if o.model == models[0]]  # fmt: skip
    comparisons = compare(pairs, base, models[1])
    levels = list(ledger.levels.values())
    rows = [o.to_dict() for o in outcomes]
    out = tmp_path / "rep"
    report = build_report(
        rows, str(out), levels=levels, gates=decide_gates(levels), comparisons=comparisons
    )
    return rows, report, out


def _data(out: Path) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """(manifest, meta blobs, text blobs) as the page's script reads them."""
    from pytest_reasoning.report.viewer import page_data

    return page_data(out)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Any, Path]:
    """The report most tests read (built once: a report costs a second or two of plots)."""
    return _report(tmp_path_factory.mktemp("built"))


def test_every_sample_is_in_the_page_with_its_prompt(built: Any) -> None:
    rows, report, out = built
    manifest, metas, texts = _data(out)
    samples = [s for m in metas for s in m["samples"]]
    assert len(samples) == len(rows) == manifest["total"] == 16
    assert sorted(s["id"] for s in samples) == sorted(sample_id(r) for r in rows)
    assert len({s["id"] for s in samples}) == 16
    assert manifest["models"] == ["base", "cand"] and manifest["levels"] == ["D1", "D2"]
    assert manifest["suites"] == ["s.yaml"] and manifest["modes"] == ["wrong_value"]
    by_id = {sample_id(r): r for r in rows}
    for meta, text in zip(metas, texts, strict=True):
        for i, s in enumerate(meta["samples"]):
            row = by_id[s["id"]]
            assert (s["model"], s["level"], s["gold"], s.get("extracted")) == (
                row["model"], row["level"], row["gold"], row["extracted"])  # fmt: skip
            assert s["outcome"] == ("correct" if row["correct"] else "wrong")
            # The prompt, rebuilt from the row's address, is the one that was asked.
            assert text["prompts"][s["prompt"]].startswith("Here is the description")
            assert text["replies"][i] == row["response"]
    # One prompt per item: both models' samples share it.
    assert sum(len(t["prompts"]) for t in texts) == 8
    assert report.summary["samples"] == 16 and report.summary["sample_data"] == "inline"


def test_a_failed_call_shows_its_prompt_and_no_pair_verdict(tmp_path: Path) -> None:
    """A failed call's row keeps no item address: its prompt comes from the other model's
    answered sample of the same prompt; its pair is "a call failed"."""
    _, _, out = _report(
        tmp_path, reply=lambda item, model, a: "<fail>" if model == "cand" and a.index == 0 else None
    )  # fmt: skip
    manifest, metas, texts = _data(out)
    failed = [(s, t) for m, t in zip(metas, texts, strict=True) for s in m["samples"]
              if s["outcome"] == "error"]  # fmt: skip
    assert len(failed) == 2  # item 0 of D1 and of D2
    for s, t in failed:
        assert s["mode"] == "error (transient)" and s["error"] == "HTTP 500: boom"
        assert t["prompts"][s["prompt"]].startswith("Here is the description")
    assert [c["kinds"][PAIR_KINDS.index("a call failed")] for c in manifest["comparisons"]] == [
        1,
        1,
    ]
    assert "without their prompt" not in (out / "index.html").read_text()


def test_the_page_is_the_same_bytes_twice(built: Any, tmp_path: Path) -> None:
    """The same rows give the same page, wherever it is written."""
    _, _, again = _report(tmp_path)
    assert (again / "index.html").read_bytes() == (built[2] / "index.html").read_bytes()


def test_pairs_list_regressions_first(built: Any) -> None:
    _, _, out = built
    manifest, metas, _ = _data(out)
    kinds = {c["level"]: c["kinds"] for c in manifest["comparisons"]}
    # Odd items: the baseline right, the candidate wrong; even ones: both right.
    assert kinds == {lv: [2, 0, 0, 2, 0, 0] for lv in ("D1", "D2")}
    for meta in metas:
        for _, cand, base, kind in meta["pairs"]:
            c, b = meta["samples"][cand], meta["samples"][base]
            assert (c["model"], b["model"]) == ("cand", "base") and c["item"] == b["item"]
            assert PAIR_KINDS[kind] == (
                "baseline right, candidate wrong" if c["outcome"] == "wrong" else "both right"
            )
    verdicts = [c["verdict"] for c in manifest["comparisons"]]
    assert verdicts == ["under-powered", "under-powered"]  # 2 discordant pairs of 4


def test_hostile_text_is_data_not_markup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Model text never reaches the markup: it travels base64-encoded, is valid Unicode
    (a lone surrogate becomes U+FFFD), and keys in it are redacted."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    _, _, out = _report(
        tmp_path, reply=lambda item, model, a: f"{HOSTILE} key={SECRET}",
        models=("evil<script>window.__pwned=4</script>", "base"),
    )  # fmt: skip
    page = (out / "index.html").read_text()
    assert page.count("<script") == page.count("</script>")
    assert "<script>window" not in page and "<img src=x" not in page and "]]>" not in page
    assert "\x00" not in page and "\x1b" not in page and SECRET not in page
    _, metas, texts = _data(out)
    replies = {r for t in texts for r in t["replies"]}
    assert replies == {f"{HOSTILE.replace(chr(0xD800), chr(0xFFFD))} key=***"}
    assert {s["model"] for m in metas for s in m["samples"]} == {
        "evil<script>window.__pwned=4</script>", "base"}  # fmt: skip
    assert SECRET not in json.dumps(texts)


def test_reasoning_sent_apart_is_shown_as_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row's reasoning_text is the sample's reasoning in the page, made valid Unicode and
    redacted like a reply, never markup; a row that kept none (reasoning turned off, an
    older file) shows none."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    said = {"cand": f"{HOSTILE} key={SECRET}", "base": None}
    rows, _, out = _report(tmp_path, n=2, reasoning=lambda model: said[model])
    assert {r.get("reasoning_text") for r in rows} == {said["cand"].replace("\ud800", "\ufffd"),
                                                        None}  # fmt: skip
    page = (out / "index.html").read_text()
    assert "<script>window" not in page and "<img src=x" not in page and "\x1b" not in page
    _, metas, texts = _data(out)
    shown: dict[str, set[str | None]] = {"cand": set(), "base": set()}
    for meta, text in zip(metas, texts, strict=True):
        for s, reasoning in zip(meta["samples"], text["reasoning"], strict=True):
            shown[s["model"]].add(reasoning)
            assert s["reasoningKind"] == "separate"
    assert shown == {"cand": {f"{HOSTILE.replace(chr(0xD800), chr(0xFFFD))} key=***"},
                     "base": {None}}  # fmt: skip
    assert SECRET not in json.dumps(texts)


# A glyph the plots' font lacks (U+241B for an escape) draws as a box, with no warning: a
# user's run would print matplotlib's for every such label.
@pytest.mark.filterwarnings("error::UserWarning")
def test_bidi_and_control_characters_never_reach_the_markup_raw(tmp_path: Path) -> None:
    """U+202E in a model name or an answer would reverse what follows it (an answer that
    reads as another): the page's own markup shows it as ``\\u202e`` (the viewer's script
    does the same for the texts it shows, see the browser test)."""
    evil = "evil\u202eLIAM\u2066x\x1b[31m\x9b"
    _, _, out = _report(tmp_path, n=1, reply=lambda item, model, a: f"<<<{evil}>>>",
                        models=(evil, "base"))  # fmt: skip
    page = (out / "index.html").read_text()
    markup = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)  # data, never shown raw
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", markup)
    assert "evil\\u202eLIAM\\u2066x␛[31m\\x9b" in markup


def test_long_texts_are_cut_with_a_marker(tmp_path: Path) -> None:
    """A reply past CLIP characters is cut with a marker; a long answer (a zebra grid) is
    short in the list, whole in the texts the sample's view reads."""
    from pytest_reasoning.report.samples import CLIP, SHORT

    answer = "9" * 200
    long = "x" * CLIP + f" <<<{answer}>>>"
    rows, _, out = _report(tmp_path, n=1, reply=lambda item, model, a: long)
    assert {r["extracted"] for r in rows} == {answer}
    _, metas, texts = _data(out)
    more = len(long) - CLIP
    shown = {r for t in texts for r in t["replies"]}
    assert shown == {
        f"{long[:CLIP]}… [{more} more characters: the whole text is in the results file]"
    }
    for meta, text in zip(metas, texts, strict=True):
        for i, s in enumerate(meta["samples"]):
            assert s["extracted"] == answer[:SHORT] + "…"
            assert text["answers"][str(i)] == [answer, s["gold"]]


def test_suites_stay_apart(tmp_path: Path) -> None:
    """Two suites asking the same items: a suite column, separate rows, separate links."""
    rows, report, out = _report(tmp_path, suites=("a.yaml", "b.yaml"))
    page = (out / "index.html").read_text()
    assert "<th>suite</th>" in page
    # 2 models x 2 levels, and the 2 comparisons of the candidate
    assert page.count('<td class="abbr" title="a.yaml">a.yaml</td>') == 6
    assert 'href="#model=cand&amp;suite=b.yaml&amp;task=dyval.arithmetic&amp;level=D2' in page
    assert len({sample_id(r) for r in rows}) == len(rows) == 32
    levels = {(c["suite"], c["model"], c["level"]) for c in report.summary["levels"]}
    assert len(levels) == 8


def test_several_suites_have_a_levels_section_each(tmp_path: Path) -> None:
    """Rows of two suites: a heading and a sortable Levels table per suite, each holding
    only its suite's rows (one suite: one table, no heading, as before)."""
    _, _, out = _report(tmp_path, suites=("a.yaml", "b.yaml"))
    page = (out / "index.html").read_text()
    levels = page[page.index('<h2 id="levels">') : page.index("</table>", page.index('id="levels-2"'))]
    sections = re.split(r'<h3 id="levels-\d">', levels)[1:]
    assert [s[: s.index("</h3>")] for s in sections] == [
        'a.yaml <a class="pr-aside" href="#plots-1">plots</a>',
        'b.yaml <a class="pr-aside" href="#plots-2">plots</a>',
    ]
    for suite, section in zip(("a.yaml", "b.yaml"), sections, strict=True):
        assert section.count('<table class="pr-sortable">') == 1
        suites = re.findall(r'<td class="abbr" title="([^"]*)">', section)
        assert suites == [suite] * 4  # 2 models x 2 levels
    (tmp_path / "one").mkdir()
    one = (_report(tmp_path / "one")[2] / "index.html").read_text()
    assert 'id="levels-' not in one and one.count('class="pr-sortable"') == 1


def _levels_rows(page: str) -> list[list[str]]:
    table = re.search(r'<h2 id="levels">Levels</h2>\n<table class="pr-sortable">(.*?)</table>', page)
    assert table is not None
    rows = re.findall(r"<tr>(.*?)</tr>", table[1])[1:]
    return [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in rows]


def test_the_levels_table_lists_failed_levels_then_candidates_first(built: Any) -> None:
    """Failed levels first, the candidate's rows before the baseline's (built sorted by
    model name: "base" came first)."""
    _, _, out = built
    rows = _levels_rows((out / "index.html").read_text())
    assert [(r[0], r[3], r[9]) for r in rows] == [
        ("cand", "D2", "FAIL"), ("cand", "D1", "PASS*"), ("base", "D1", "PASS"),
        ("base", "D2", "PASS*"),
    ]  # fmt: skip


def test_tall_plots_are_cut_into_pages_of_bounded_height(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past BARS levels a bar chart (past PANEL_ROWS rows of panels the accuracy figure) is
    cut into pages as even as can be, each its own PNG and figure in the page: no figure's
    height grows with the levels (192 level rows made one 7,400 px tall)."""
    from pytest_reasoning.report import plots

    monkeypatch.setattr(plots, "BARS", 3)
    monkeypatch.setattr(plots, "PANEL_ROWS", 1)
    _, report, out = _report(tmp_path, n=2, suite_text=FOUR_ENTRIES)
    # 16 level rows (2 models x 4 entries x 2 levels), 8 comparisons, 4 panels: one suite,
    # its files named as they always were.
    assert report.summary["plots"] == [
        "accuracy_by_level.png", "accuracy_by_level_2.png",
        *(f"failure_modes{s}.png" for s in ("", "_2", "_3", "_4", "_5", "_6")),
        "baseline.png", "baseline_2.png", "baseline_3.png",
    ]  # fmt: skip
    page = (out / "index.html").read_text()
    assert '(2 of 6) (<a href="failure_modes_2.png">PNG</a>)</figcaption>' in page
    assert 'id="plots-' not in page  # one suite: no sections
    heights = {}
    for name in report.summary["plots"]:
        head = (out / name).read_bytes()[16:24]  # a PNG's IHDR: width, height
        heights[name] = int.from_bytes(head[4:], "big")
    assert max(heights.values()) < 1200, heights


def test_bar_chart_labels_stay_inside_their_figure(tmp_path: Path) -> None:
    """Long entry and model names: a bar chart's labels (its own texts, laid out with the
    figure) lie inside it, so each PNG's left and right columns of pixels are the white
    background, no label drawn to the edge and cut (the axis title under narrowed bars
    included)."""
    from matplotlib.image import imread

    long = "an_entry_whose_name_goes_on_and_on_past_any_reasonable_width"
    _, report, out = _report(
        tmp_path, n=2, models=("openai/" + "candidate-model-" * 4, "base"),
        suite_text=FOUR_ENTRIES.replace("id: a,", f"id: {long},"),
    )  # fmt: skip
    charts = [n for n in report.summary["plots"] if n.startswith(("failure_modes", "baseline"))]
    assert charts == ["failure_modes.png", "baseline.png"]
    for name in charts:
        pixels = imread(out / name)[..., :3]
        assert (pixels[:, 0] > 0.99).all() and (pixels[:, -1] > 0.99).all(), name
        assert (pixels[:, 1:60] < 0.5).any(), name  # the longest label reaches near the edge


def test_bars_of_long_labels_stand_apart_in_pages_of_bounded_height(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Labels wrapped on three lines (a long entry and model name): each bar is as tall as
    its label's lines at matplotlib's spacing, so labels do not overlap, and a page holds
    fewer bars, so its height stays within the budget of BARS one-line bars."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.image import imread

    from pytest_reasoning.report import plots

    monkeypatch.setattr(plots, "BARS", 8)
    fig = Figure(dpi=plots.DPI)
    renderer = FigureCanvasAgg(fig).get_renderer()
    for lines in range(1, 7):
        label = "\n".join(["Xg"] * lines)  # a label's ascent and descent, as matplotlib lays it
        tall = fig.text(0, 0, label, fontsize=6).get_window_extent(renderer).height / plots.DPI
        assert plots._bar_height([label]) > tall, lines
    long = "an_entry_whose_name_goes_on_and_on_past_any_reasonable_width"
    _, report, out = _report(
        tmp_path, n=2, models=("openai/" + "candidate-model-" * 4, "base"),
        suite_text=FOUR_ENTRIES.replace("id: a,", f"id: {long},"),
    )  # fmt: skip
    pages = [n for n in report.summary["plots"] if n.startswith("failure_modes")]
    assert len(pages) == 4  # 16 bars of three-line labels, 4 a page (not 2 pages of 8)
    budget = (8 * plots.BAR_IN + 1.2) * plots.DPI
    for name in pages:
        assert imread(out / name).shape[0] <= budget + 2, name


@pytest.mark.e2e
def test_a_panel_of_many_levels_widens_so_its_labels_stay_apart(
    pytester: pytest.Pytester,
) -> None:
    """ZebraLogic's 25 sizes in one panel: the panel widens to 0.2 in a level, where the
    level labels at 45° no longer overlap (at the usual 4.2 in they did); 61 FLenQA lengths
    beside it: no wider than PANEL_MAX_IN a panel (every other length named)."""
    from matplotlib.image import imread

    from pytest_reasoning.report.plots import DPI, PANEL_MAX_IN

    sizes = ", ".join(f"{n}x{m}" for n in range(2, 7) for m in range(2, 7))
    lengths = ", ".join(str(n) for n in range(250, 851, 10))
    pytester.makefile(".yaml", z=f"seed: 1\nsamples: 1\ntasks:\n"
                      f"  - {{task: zebra.grid, levels: [{sizes}]}}\n"
                      f"  - {{task: flenqa.ruletaker, levels: [{lengths}]}}\n")  # fmt: skip
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--llm", "reference", "--reasoning-report=rep"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    width = imread(pytester.path / "rep" / "accuracy_by_level.png").shape[1]
    assert 2 * 25 * 0.2 * DPI <= width <= 2 * PANEL_MAX_IN * DPI + 2


def test_several_suites_have_a_plot_section_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows of two suites: under Plots, a heading per suite (linking back to its Levels
    section) over that suite's figures only, its own files, paged within the suite."""
    from pytest_reasoning.report import plots

    monkeypatch.setattr(plots, "BARS", 3)
    _, report, out = _report(tmp_path, n=2, suites=("a.yaml", "b.yaml"))
    # Each suite: 4 level rows (two pages of 2 bars, not one of 3 and one spanning the
    # suites), 2 comparisons, one panel.
    each = ["accuracy_by_level.png", "failure_modes.png", "failure_modes_2.png", "baseline.png"]
    assert report.summary["plots"] == [f"suite{n}_{name}" for n in (1, 2) for name in each]
    page = (out / "index.html").read_text()
    plotted = page[page.index('<h2 id="plots">') : page.index('<h2 id="models">')]
    sections = re.split(r'<h3 id="plots-(\d)">', plotted)[1:]
    assert sections[0::2] == ["1", "2"]
    for n, (suite, section) in enumerate(zip(("a.yaml", "b.yaml"), sections[1::2], strict=True), 1):
        assert section.startswith(f'{suite} <a class="pr-aside" href="#levels-{n}">levels</a></h3>')
        files = re.findall(r'\(<a href="([^"]+)">PNG</a>\)', section)
        assert files == [f"suite{n}_{name}" for name in each]
        assert section.count("<figure>") == 4 and "(2 of 2)" in section
    assert 'id="levels-1"' in page and 'id="levels-2"' in page


def test_a_level_past_the_page_budget_goes_to_data_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_reasoning.report import viewer

    monkeypatch.setattr(viewer, "INLINE_MAX", 0)
    _, _, out = _report(tmp_path)
    files = sorted(p.name for p in (out / "data").iterdir())
    assert files == ["c0m.js", "c0t.js", "c1m.js", "c1t.js"]
    assert 'id="pr-c0m"' not in (out / "index.html").read_text()
    manifest, metas, _ = _data(out)
    assert manifest["inline"] is False and sum(len(m["samples"]) for m in metas) == 16
    monkeypatch.setattr(viewer, "INLINE_MAX", 10**9)  # inline again: the old files go
    _report(tmp_path)
    assert list((out / "data").iterdir()) == []


def test_links(built: Any) -> None:
    rows, _, out = built
    index = out / "index.html"
    assert report_url(out) == index.resolve().as_uri() == report_url(str(out) + "/")
    assert report_url("https://o.github.io/r/") == "https://o.github.io/r/"
    assert samples_link("https://x/", model="a b", level="D1", outcome="wrong") == (
        "https://x/#model=a%20b&level=D1&outcome=wrong"
    )
    assert sample_link(index, rows[0]).endswith(f"#sample={sample_id(rows[0])}")
    ledger = Ledger(hint="-")
    for a in addresses(load_suite(out.parent / "s.yaml", display="s.yaml")):
        item = a.make_item()
        ledger.add(score_reply(item, "m", Reply("<<<-999>>>", latency_s=0.1)), a.gate)
    gate = decide_gates(ledger.levels.values())[0]
    assert gate.passed is False
    assert gate_link("r/index.html", gate) == (
        f"{report_url('r/index.html')}#model=m&suite=s.yaml&task=dyval.arithmetic&level=D1"
        "&outcome=not-correct"
    )


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (" https://o.github.io/r/ ", None),
        ("http://ci.example:8080/artifacts/index.html?run=7", None),
        ("file:///tmp/report", "expected an http(s) URL"),
        ("report/", "expected an http(s) URL"),
        ("https://x:99999/", "expected an http(s) URL"),
        ("https://o.github.io/r/#level=D1", "without a #fragment"),
        ("https://o.github.io/r/\x1b[2J", "without spaces or control characters"),
        ("https://o.github.io/a b/", "without spaces or control characters"),
        ("https://o.github.io/\u202er/", "without spaces or control characters"),
    ],
)
def test_the_published_address_is_checked(url: str, problem: str | None) -> None:
    if problem is None:
        assert check_report_url(url) == url.strip()
        assert samples_link(check_report_url(url), level="D1").endswith("#level=D1")
        return
    with pytest.raises(InvalidArgument) as caught:
        check_report_url(url)
    assert problem in str(caught.value) and "\n" not in str(caught.value)
    assert "\x1b" not in str(caught.value) and "\u202e" not in str(caught.value)


def test_report_command_reads_shards(
    built: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pytest-reasoning report FOLDER``: every shard's file, a sample in two files once."""
    from pytest_reasoning.cli import main

    rows = built[0]
    shards = tmp_path / "results"
    (shards / "a").mkdir(parents=True)
    half = len(rows) // 2
    for name, part in (("a/s1.jsonl", rows[:half]), ("s2.jsonl", rows[half - 2 :])):
        (shards / name).write_text("".join(json.dumps(r) + "\n" for r in part))
    out = tmp_path / "from-files"
    assert main(["report", str(shards), "--out", str(out), "--baseline", "base"]) == 0
    manifest, _, _ = _data(out)
    assert manifest["total"] == len(rows) == 16
    assert [c["kinds"][0] for c in manifest["comparisons"]] == [2, 2]  # paired per level
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "--out", str(out)]) == 4
    empty = tmp_path / "empty"  # named as given: a positional argument, not gate's --results
    assert capsys.readouterr().err.strip() == (
        f"pytest-reasoning: error: {empty}: no *.jsonl file in this folder"
    )
    suite = tmp_path / "g.yaml"
    suite.write_text("seed: 1\nsamples: 1\ntasks:\n  - {task: dyval.arithmetic, levels: [D1]}\n")
    assert main(["gate", str(suite), "--results", str(empty)]) == 4
    assert capsys.readouterr().err.strip().endswith(
        f"--results {empty}: no *.jsonl file in this folder"
    )


# -- in Chromium -----------------------------------------------------------------------------
CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)"
)
READY = "document.documentElement.dataset.viewer === 'ready'"
ROWS = "document.querySelectorAll('#pr-samples tbody tr').length"


def _after(page: Any, action: Any) -> None:
    """Do ``action`` and wait until the viewer has drawn what it caused."""
    n = int(page.evaluate("document.documentElement.dataset.rendered"))
    action()
    page.wait_for(f"Number(document.documentElement.dataset.rendered) > {n}")
    page.wait_for("document.getElementById('pr-status').textContent !== ''")


@needs_chromium
@pytest.mark.e2e
def test_filters_search_and_links_in_a_browser(tmp_path: Path) -> None:
    rows, _, out = _report(tmp_path, n=6)
    wrong = [r for r in rows if not r["correct"]]
    with Browser() as browser:
        page = browser.open((out / "index.html").as_uri(), ready=READY)
        assert page.evaluate(ROWS) == len(rows) == 24
        _after(page, lambda: page.choose("#pr-f-outcome", "wrong"))
        assert page.evaluate(ROWS) == len(wrong) == 6
        _after(page, lambda: page.choose("#pr-f-level", "D2"))
        assert page.evaluate(ROWS) == 3
        assert "outcome=wrong" in page.evaluate("location.hash")  # the view is shareable
        _after(page, lambda: page.click("#pr-reset"))
        assert page.evaluate(ROWS) == 24
        _after(page, lambda: page.choose("#pr-f-sort", "slowest"))
        latencies = page.evaluate(
            "[...document.querySelectorAll('#pr-samples tbody td:nth-child(13)')]"
            ".map(td => parseFloat(td.textContent))"
        )
        assert latencies == sorted(latencies, reverse=True) and latencies[0] == 5.5
        # Search reads the replies: only the candidate's wrong answers say -999.
        _after(page, lambda: page.type("#pr-f-q", "-999"))
        assert page.evaluate(ROWS) == 6
        # A click opens the sample: its prompt, its reply, its link.
        _after(page, lambda: page.click("#pr-samples tbody tr:first-child a"))
        shown = page.evaluate("document.querySelector('#pr-detail .pr-reply').textContent")
        assert shown == "<<<-999>>>"
        first = page.evaluate("location.hash")
        assert "sample=" in first
        assert page.problems() == []
    # Links from outside: one sample; a failed gate's samples.
    target = wrong[-1]
    gate = next(g for g in _gates(rows) if g.stats.spec.level == target["level"])
    with Browser() as browser:
        page = browser.open(sample_link(out, target), ready=READY)
        page.wait_for("!document.getElementById('pr-detail').hidden")
        title = page.evaluate("document.getElementById('pr-detail-title').textContent")
        assert title == f"{target['item_id']} · cand"
        page = browser.open(gate_link(out, gate), ready=READY)
        page.wait_for("document.getElementById('pr-status').textContent.includes('match')")
        assert page.evaluate(ROWS) == 3  # the level's wrong answers
        assert page.requests() and all(u.startswith(("file:", "data:")) for u in page.requests())
        assert page.problems() == []


IN_SIGHT = """((sel) => { const e = document.querySelector(sel); if (!e) return null;
  const r = e.getBoundingClientRect(), bar = document.querySelector('.pr-bar');
  const covered = parseFloat(getComputedStyle(bar).top) + bar.offsetHeight;
  return {top: r.top, bottom: r.bottom, covered, height: innerHeight, scrolled: scrollY,
          id: e.dataset.id || null}; })"""


def _in_sight(page: Any, selector: str) -> dict[str, Any]:
    """Where the element is, asserted to start inside the viewport below the sticky bars
    (its first 40 px in sight: a pair may be taller than the window)."""
    box: dict[str, Any] = page.evaluate(f"{IN_SIGHT}({json.dumps(selector)})")
    assert box is not None, f"no {selector}"
    top, bottom = box["top"], min(box["bottom"], box["top"] + 40)
    assert box["covered"] <= top and bottom <= box["height"], box
    return box


@needs_chromium
@pytest.mark.e2e
def test_links_land_on_their_first_sample_in_a_browser(tmp_path: Path) -> None:
    """A terminal link (a failed gate's), a Levels table link and a comparison's link open
    the view filtered and scrolled: its first sample (or pair) inside the viewport, below
    the sticky bars; before, the page stayed at its top, the list thousands of px down."""
    rows, _, out = _report(tmp_path, n=6, suites=("s.yaml", "t.yaml", "u.yaml", "v.yaml"))
    gate = next(g for g in _gates(rows) if g.stats.spec.level == "D2")
    first = next(
        sample_id(r)
        for r in sorted(rows, key=lambda r: r["item_id"])
        if r["suite"] == "s.yaml" and r["level"] == "D2" and r["model"] == "cand"
        and not r["correct"]
    )  # fmt: skip
    with Browser(height=600) as browser:
        page = browser.open(gate_link(out, gate), ready=READY)
        box = _in_sight(page, "#pr-samples tbody tr")
        assert box["id"] == first and box["scrolled"] > 0
        # A Levels table (the first suite's: a section each) sorts by a click on a header,
        # the other way on a second click.
        column = "[...document.querySelector('table.pr-sortable').rows].slice(1).map(r => r.cells[3].textContent)"
        page.click("table.pr-sortable th:nth-child(4)")  # level
        assert page.evaluate(column) == ["D1"] * 2 + ["D2"] * 2
        page.click("table.pr-sortable th:nth-child(4)")
        assert page.evaluate(column) == ["D2"] * 2 + ["D1"] * 2
        # A link of the Levels table, clicked in the page (the hash changes).
        page.evaluate("scrollTo(0, 0)")
        link = "#levels-4 + table a[href*='model=cand'][href*='suite=v.yaml'][href*='level=D1']"
        _after(page, lambda: page.click(link))
        page.wait_for("location.hash.includes('v.yaml')")
        assert page.evaluate(ROWS) == 3
        _in_sight(page, "#pr-samples tbody tr")
        # A comparison's pairs, from the table.
        page.evaluate("scrollTo(0, 0)")
        _after(page, lambda: page.click("#baseline + table a[href*='view=pairs']"))
        _in_sight(page, "article.pr-pair")
        # Each pair shows where the two replies (and extracted answers) differ, word by word.
        diffs = page.evaluate(
            "[...document.querySelectorAll('article.pr-pair:first-child pre.pr-diff')].map(p =>"
            " [...p.childNodes].map(n => [n.nodeName, n.textContent]))"
        )
        gold = page.evaluate(
            "document.querySelector('article.pr-pair:first-child .pr-side dd').textContent"
        )
        assert diffs == [[["DEL", gold], ["INS", "-999"]],
                         [["DEL", f"<<<{gold}>>>"], ["INS", "<<<-999>>>"]]]  # fmt: skip
        assert page.problems() == []


def _gates(rows: list[dict[str, Any]]) -> Any:
    from pytest_reasoning.core import Outcome
    from pytest_reasoning.gates import GateRule, GateSpec

    ledger = Ledger(hint="-")
    for r in rows:
        if r["model"] == "cand":
            rule = GateRule(min_accuracy=0.9)
            ledger.add(Outcome.from_dict(r), GateSpec("s.yaml", r["entry"], r["level"], rule))
    return decide_gates(ledger.levels.values())


@needs_chromium
@pytest.mark.e2e
def test_hostile_text_stays_inert_in_a_browser(tmp_path: Path) -> None:
    _, _, out = _report(
        tmp_path, n=2, reply=lambda item, model, a: HOSTILE, reasoning=lambda model: HOSTILE,
        models=("evil<script>window.__pwned=4</script>", "base"),
    )  # fmt: skip
    with Browser() as browser:
        page = browser.open((out / "index.html").as_uri(), ready=READY)
        _after(page, lambda: page.type("#pr-f-q", "script"))
        assert page.evaluate(ROWS) == 8
        _after(page, lambda: page.click("#pr-samples tbody tr:first-child a"))
        reply = page.evaluate("document.querySelector('#pr-detail .pr-reply').textContent")
        # Every character shown as text: markup as written, control characters as symbols.
        expected = (HOSTILE.replace("\x1b", "\u241b").replace("\x00", "\u2400")
                    .replace("\ud800", "\ufffd").replace("\u202e", "\\u202e")
                    .replace("\u2066", "\\u2066").replace("\x9b", "\\x9b"))  # fmt: skip
        assert reply == expected
        # The reasoning sent apart: folded (a closed <details>), shown as text alike.
        folded = "document.querySelector('#pr-detail details.pr-reasoning')"
        assert page.evaluate(f"{folded}.open") is False
        assert page.evaluate(f"{folded}.querySelector('pre').textContent") == expected
        _after(page, lambda: page.click("#pr-v-pairs"))
        assert page.evaluate("document.querySelectorAll('article.pr-pair').length") == 4
        assert page.evaluate("window.__pwned === undefined")
        assert page.evaluate("document.querySelectorAll('img[src=x], script:not([nonce]):not([type])')"
                             ".length") == 0  # fmt: skip
        assert page.problems() == []
        assert all(u.startswith(("file:", "data:")) for u in page.requests())


@needs_chromium
@pytest.mark.e2e
def test_pairs_and_levels_loaded_on_demand_in_a_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the page's budget the data lives in files loaded a level at a time; the pairs
    view lists regressions first."""
    from pytest_reasoning.report import viewer

    monkeypatch.setattr(viewer, "INLINE_MAX", 0)
    monkeypatch.setattr(viewer, "LOAD_LIMIT", 12)
    _, _, out = _report(tmp_path, n=6)
    with Browser() as browser:
        page = browser.open((out / "index.html").as_uri(), ready=READY)
        assert page.evaluate(ROWS) == 2  # the level picker: D1, D2 (24 samples > 12)
        assert not any("/data/" in u for u in page.requests())
        _after(page, lambda: page.click("#pr-samples tbody tr:last-child a"))
        assert page.evaluate(ROWS) == 12
        assert [u.rsplit("/", 1)[1] for u in page.requests() if "/data/" in u] == ["c1m.js"]
        _after(page, lambda: page.click("#pr-v-pairs"))
        kinds = page.evaluate("[...document.querySelectorAll('.pr-kind')].map(e => e.textContent)")
        assert kinds == ["baseline right, candidate wrong"] * 3 + ["both right"] * 3
        assert page.problems() == []


@needs_chromium
@pytest.mark.e2e
def test_a_level_larger_than_the_load_limit_still_opens_in_a_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the load limit the page asks for a level; a level itself past the limit must
    open too (before: the picker again, for ever — a 25,000-sample level could not be read)."""
    from pytest_reasoning.report import viewer

    monkeypatch.setattr(viewer, "INLINE_MAX", 0)
    monkeypatch.setattr(viewer, "LOAD_LIMIT", 12)
    _, _, out = _report(tmp_path, n=8)  # 16 samples a level
    with Browser() as browser:
        page = browser.open((out / "index.html").as_uri(), ready=READY)
        assert page.evaluate(ROWS) == 2  # the level picker: D1, D2 (32 samples > 12)
        _after(page, lambda: page.click("#pr-samples tbody tr:first-child a"))
        assert page.evaluate(ROWS) == 16  # the whole level, past the limit
        status = page.evaluate("document.getElementById('pr-status').textContent")
        assert status.startswith("16 samples of 16 match"), status
        _after(page, lambda: page.click("#pr-v-pairs"))
        assert page.evaluate("document.querySelectorAll('article.pr-pair').length") == 8
        assert page.problems() == []
