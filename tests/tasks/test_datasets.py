"""Frozen datasets: items as JSON lines read back as items (exported, narrated or written by
hand), one-line errors naming the line and the field, and suite entries that run a file
instead of generating, gated per level."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from bounds import within
from hypothesis import strategies as st
from mutations import JSON_VALUES, ROW_FIELDS, mutated
from reliability_matrix import record_hardened

from conftest import inner_and_sweep
from pytest_reasoning.cli import export_items
from pytest_reasoning.config import addresses, is_suite_file, load_suite, parse_suite
from pytest_reasoning.datasets import FIELDS, export_row, read_dataset
from pytest_reasoning.errors import InvalidDataset, InvalidSuite
from pytest_reasoning.registry import get_task, task_ids
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.sampler import make_item

GYM_SAMPLE = [t for t in task_ids() if t.startswith("gym.")][::30]

def _export(task: str, level: str, count: int, seed: int = 1, style: str = "direct") -> str:
    out = io.StringIO()
    export_items(task, level, count, seed, {}, style, False, out)
    return out.getvalue()


# The gym pack: a sample of its datasets (tests/tasks/test_gym.py samples the rest of its promises).
@pytest.mark.parametrize(
    "task_id", [t for t in task_ids() if not t.startswith("gym.")] + GYM_SAMPLE
)
def test_exported_items_read_back_as_the_same_items(task_id: str, tmp_path: Path) -> None:
    task = get_task(task_id)
    level = task.levels[0]
    path = tmp_path / "x.jsonl"
    path.write_text(_export(task_id, level, 3, seed=5), encoding="utf-8")
    items = read_dataset(path).items
    assert items == tuple(make_item(task, level, 5, i) for i in range(3))
    for item in items:  # the answer's JSON form round-trips (zebra grids, team allocations)
        assert hooks.import_answer(task, hooks.export_answer(task, item.answer)) == item.answer


def test_a_users_own_items_need_five_fields(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    rows = [
        {"id": "q1", "task": "dyval.arithmetic", "level": "easy", "prompt": "What is 2+3? "
         "Answer in <<<>>>.", "answer": "5"},
        {"id": "q2", "task": "dyval.arithmetic", "level": 7, "prompt": "What is 2*3?",
         "answer": "6", "meta": {"source": "by hand"}},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    data = read_dataset(path)
    assert [(i.id, i.level, i.seed, i.index, i.style) for i in data.items] == [
        ("q1", "easy", 0, 0, "direct"),
        ("q2", "7", 0, 1, "direct"),
    ]
    assert data.levels() == ["7", "easy"]
    assert get_task("dyval.arithmetic").score(data.items[1], "<<<6>>>").correct


MURDER = json.loads(_export("musr.murder_mystery", "L1", 1))


def _line(**change: Any) -> str:
    row = {**MURDER, **change}
    return json.dumps({k: v for k, v in row.items() if v is not ...})


BAD = [
    ("{not json\n", "d.jsonl:1: not JSON: Expecting property name enclosed in double quotes "
     "at column 2"),
    ("[1, 2]\n", "d.jsonl:1: expected a JSON object, got list"),
    (_line(answer=...) + "\n", "d.jsonl:1: answer: missing"),
    (_line(task="musr.nope") + "\n", "d.jsonl:1: task: unknown task 'musr.nope'; expected one "
     "of "),
    (_line(anwser="x") + "\n", "d.jsonl:1: anwser: unknown field; expected id, task, level, "
     "prompt, answer, problem, seed, index, params, style, system, steps, narration, meta (put your "
     "own under 'meta')"),
    (_line(level="L 1") + "\n", "d.jsonl:1: level: expected letters, digits or . _ : + -, "
     "got 'L 1'"),
    (_line(seed="1") + "\n", "d.jsonl:1: seed: expected an integer, got str '1'"),
    (_line(problem=[]) + "\n", "d.jsonl:1: problem: expected a mapping, got list"),
    (_line(style="haiku") + "\n", "d.jsonl:1: style: style 'haiku' is not offered by "
     "musr.murder_mystery; expected one of direct, cot, cot+, 1shot-cot+"),
    (_line(prompt="") + "\n", "d.jsonl:1: prompt: expected a non-empty string, got str"),
    (_line(answer="Nobody") + "\n", "d.jsonl:1: answer: musr.murder_mystery's scorer does not "
     "accept the gold answer 'Nobody' as correct"),
    (_line(problem={}) + "\n", "d.jsonl:1: problem: musr.murder_mystery's scorer cannot read "
     "this item: KeyError: 'choices'"),
    (_line() + "\n\n" + _line() + "\n", "d.jsonl:3: id: duplicate id "
     "'musr.murder_mystery[L1-s1-000]' (first on line 1)"),
    ("\n", "d.jsonl: no items (expected one JSON object per line)"),
    (None, "d.jsonl: no such file"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), BAD)
def test_a_bad_file_fails_in_one_line_naming_line_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str | None, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    if text is not None:
        Path("d.jsonl").write_text(text, encoding="utf-8")
    with pytest.raises(InvalidDataset) as info:
        read_dataset("d.jsonl")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_every_field_is_documented() -> None:
    assert {"id", "task", "level", "prompt", "answer"} == {k for k, v in FIELDS.items() if v[0]}


# -- suite entries ------------------------------------------------------------------------------
@pytest.fixture
def folder(tmp_path: Path) -> Path:
    text = _export("musr.team_allocation", "L1", 3) + _export("musr.team_allocation", "L2", 2)
    (tmp_path / "teams.jsonl").write_text(text, encoding="utf-8")
    return tmp_path


def _suite(folder: Path, body: str, **kw: Any) -> list[tuple[str, str, int]]:
    (folder / "s.yaml").write_text(body, encoding="utf-8")
    spec = load_suite(folder / "s.yaml", display="s.yaml", **kw)
    return [(a.sample_id, a.gate.entry, a.gate.level == a.make_item().level) for a in
            addresses(spec)]  # fmt: skip


def test_a_dataset_entry_runs_every_item_with_its_own_id(folder: Path) -> None:
    found = _suite(folder, "samples: 50\nseed: 9\ntasks:\n  - dataset: teams.jsonl\n")
    assert found == [
        *((f"musr.team_allocation[L1-s1-00{k}]", "musr.team_allocation", True) for k in range(3)),
        *((f"musr.team_allocation[L2-s1-00{k}]", "musr.team_allocation", True) for k in range(2)),
    ]
    spec = load_suite(folder / "s.yaml")
    item = next(addresses(spec)).make_item()
    assert item == make_item(get_task("musr.team_allocation"), "L1", 1, 0)


def test_samples_caps_levels_select_and_an_id_renames(folder: Path) -> None:
    body = (
        "tasks:\n  - dataset: teams.jsonl\n    id: frozen\n    repeats: 2\n"
        "    levels:\n      L1: {samples: 1, min_accuracy: 0.5}\n"
    )
    assert [s for s, _, _ in _suite(folder, body)] == ["frozen[L1-s1-000-r0]",
                                                       "frozen[L1-s1-000-r1]"]  # fmt: skip
    capped = _suite(folder, "tasks:\n  - dataset: teams.jsonl\n", samples=2)
    assert len(capped) == 4  # --reasoning-samples caps each level


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("tasks:\n  - dataset: teams.jsonl\n    seed: 3\n", "s.yaml: tasks[0].seed: not with "
         "'dataset': its items carry their own seeds, knobs and prompts"),
        ("tasks:\n  - dataset: teams.jsonl\n    levels:\n      L2: {style: cot}\n",
         "s.yaml: tasks[0].levels.L2.style: not with 'dataset'"),
        ("tasks:\n  - dataset: teams.jsonl\n    levels: [L3]\n", "s.yaml: tasks[0].levels.L3: "
         "teams.jsonl has no musr.team_allocation items at level 'L3'; it has L1, L2"),
        ("tasks:\n  - dataset: teams.jsonl\n    task: musr.murder_mystery\n", "s.yaml: "
         "tasks[0].task: teams.jsonl has no items of musr.murder_mystery; it holds "
         "musr.team_allocation"),
        ("tasks:\n  - dataset: missing.jsonl\n", "s.yaml: tasks[0].dataset: missing.jsonl: no "
         "such file"),
        ("tasks:\n  - dataset: 3\n", "s.yaml: tasks[0].dataset: expected the path of a JSONL "
         "file of items"),
        ("tasks:\n  - dataset: teams.jsonl\n    metric: cell\n", "s.yaml: tasks[0].metric: "
         "'cell' needs a task with partial credit"),
        ("tasks:\n  - task: musr.team_allocation\n    levels: [L1]\n  - dataset: teams.jsonl\n",
         "s.yaml: tasks[1].id: duplicate id 'musr.team_allocation'; give repeated tasks "
         "distinct 'id's"),
    ],
)  # fmt: skip
def test_bad_dataset_entries_fail_in_one_line(folder: Path, body: str, message: str) -> None:
    with pytest.raises(InvalidSuite) as info:
        _suite(folder, body)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_a_bad_line_names_the_suite_entry_the_file_and_the_line(folder: Path) -> None:
    lines = (folder / "teams.jsonl").read_text().splitlines()
    lines[3] = lines[3].replace('"answer"', '"answers"')
    (folder / "bad.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidSuite) as info:
        _suite(folder, "tasks:\n  - dataset: bad.jsonl\n")
    assert str(info.value) == (
        "s.yaml: tasks[0].dataset: bad.jsonl:4: answers: unknown field; expected id, task, "
        "level, prompt, answer, problem, seed, index, params, style, system, steps, narration, meta "
        "(put your own under 'meta')"
    )


def test_a_file_of_several_tasks_needs_task(folder: Path) -> None:
    mixed = (folder / "teams.jsonl").read_text() + _export("dyval.arithmetic", "D1", 2)
    (folder / "mixed.jsonl").write_text(mixed)
    with pytest.raises(InvalidSuite, match="holds items of several tasks"):
        _suite(folder, "tasks:\n  - dataset: mixed.jsonl\n")
    only = _suite(folder, "tasks:\n  - dataset: mixed.jsonl\n    task: dyval.arithmetic\n")
    assert [s for s, _, _ in only] == ["dyval.arithmetic[D1-s1-000]", "dyval.arithmetic[D1-s1-001]"]


def test_parse_suite_reads_datasets_relative_to_base_dir(folder: Path) -> None:
    spec = parse_suite({"tasks": [{"dataset": "teams.jsonl"}]}, "x.yaml", base_dir=folder)
    assert [lv.samples for lv in spec.entries[0].levels] == [3, 2]


# -- through pytest -----------------------------------------------------------------------------
def test_a_dataset_entry_is_gated_per_level(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("m.jsonl").write_text(_export("musr.murder_mystery", "L1", 4))
    pytester.makefile(".yaml", frozen="tasks:\n  - dataset: m.jsonl\n    min_accuracy: 0.9\n")
    result = pytester.runpytest(
        "--llm", "reference", "-p", "no:cacheprovider", "--reasoning-results", "r.jsonl"
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*musr.murder_mystery*L1*4*"])
    rows = [json.loads(x) for x in pytester.path.joinpath("r.jsonl").read_text().splitlines()]
    assert [r["item_id"] for r in rows] == [f"musr.murder_mystery[L1-s1-00{k}]" for k in range(4)]
    assert all(r["correct"] for r in rows)


@pytest.mark.e2e
def test_a_dataset_entry_fails_its_gate_over_http(pytester: pytest.Pytester) -> None:
    """A model that always picks choice 1 over real HTTP, on two xdist workers: the items keep
    their ids and gold answers, are scored by the task's scorer, and the level's gate fails
    the run."""
    from pytest_reasoning.testing.server import FakeOpenAIServer

    text = _export("musr.murder_mystery", "L1", 8)
    golds = [json.loads(line)["problem"]["answer_index"] for line in text.splitlines()]
    assert 0 < golds.count(0) < 8
    pytester.path.joinpath("m.jsonl").write_text(text)
    pytester.makefile(".yaml", frozen="tasks:\n  - dataset: m.jsonl\n    min_accuracy: 0.9\n")
    with FakeOpenAIServer() as srv:
        result = pytester.runpytest_subprocess(
            "--llm", "openai/constant:ANSWER: 1", "--llm-api-base", srv.url,
            "-p", "no:cacheprovider", "--reasoning-results", "r.jsonl", "-n", "2",
        )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*musr.murder_mystery[[]L1-gate[]]*"])
    rows = [json.loads(x) for x in pytester.path.joinpath("r.jsonl").read_text().splitlines()]
    rows.sort(key=lambda r: r["item_id"])
    assert [r["correct"] for r in rows] == [g == 0 for g in golds]
    assert {r["gold"] for r in rows} <= {json.loads(x)["answer"] for x in text.splitlines()}


def test_the_schema_table_in_the_docs_lists_every_field() -> None:
    text = (Path(__file__).parents[2] / "docs" / "suites.md").read_text(encoding="utf-8")
    for key, (required, kind, meaning) in FIELDS.items():
        assert f"| `{key}` | {'yes' if required else 'no'} | {kind} | {meaning} |" in text, key


@pytest.fixture
def specials(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "items.fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as fh:  # sparse: 2 GB on paper, nothing on disk
        fh.truncate(2_000_000_000)
    return {"a FIFO": fifo, "/dev/zero": Path("/dev/zero"), "a 2 GB file": huge}


@pytest.mark.parametrize(
    ("which", "said", "name"),
    [
        ("a FIFO", "not a regular file (a FIFO (named pipe))", "fifo"),
        ("/dev/zero", "not a regular file (a character device)", "zero"),
        ("a 2 GB file", "too large for a dataset file (2,000,000,000 bytes, limit 1,000,000,000)", "huge"),
    ],
)
def test_a_dataset_entry_that_is_not_a_file_is_one_line(
    tmp_path: Path, specials: dict[str, Path], which: str, said: str, name: str
) -> None:
    """Before: ``dataset: /dev/zero`` took 10 GB in 15 s; a FIFO hung collection forever."""
    suite = tmp_path / "s.yaml"
    suite.write_text(f"tasks:\n  - dataset: {specials[which]}\n")
    started = time.perf_counter()
    with within(), pytest.raises(InvalidSuite) as info:
        load_suite(suite, display="s.yaml")
    took = time.perf_counter() - started
    (line,) = str(info.value).splitlines()
    assert line == f"s.yaml: tasks[0].dataset: {specials[which]}: {said}", line
    record_hardened(f"dataset-{name}", f"one line in {took * 1000:.1f} ms")


def _rows(n: int = 2) -> list[dict[str, Any]]:
    task = get_task("dyval.arithmetic")
    return [export_row(task, make_item(task, "D1", 1, i)) for i in range(n)]


def test_deep_json_in_a_dataset_is_one_line(tmp_path: Path) -> None:
    """Before: a RecursionError traceback (exit 1, which reads as "a gate failed")."""
    path = tmp_path / "d.jsonl"
    for depth, row in ((100_000, "[" * 100_000 + "]" * 100_000), (200, None)):
        if row is None:  # parses, but nests past what any row needs
            deep: Any = 1
            for _ in range(depth):
                deep = {"k": deep}
            row = json.dumps({**_rows(1)[0], "meta": deep})
        path.write_text(json.dumps(_rows(1)[0]) + "\n" + row + "\n")
        with pytest.raises(InvalidDataset) as info:
            read_dataset(path, display="d.jsonl")
        assert str(info.value) == "d.jsonl:2: nested deeper than 64 levels", depth


def test_a_byte_order_mark_is_accepted_in_datasets_as_in_suites(tmp_path: Path) -> None:
    """Before: a BOM was refused in datasets ("not JSON: Unexpected UTF-8 BOM") but accepted
    in suites."""
    data = tmp_path / "d.jsonl"
    data.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in _rows()).encode())
    assert len(read_dataset(data).items) == 2
    suite = tmp_path / "s.yaml"
    suite.write_bytes(b"\xef\xbb\xbf" + f"tasks:\n  - dataset: {data}\n".encode())
    assert is_suite_file(suite)
    assert len(load_suite(suite).entries[0].levels) == 1


def test_the_bounded_json_loader_and_the_input_check_answer_in_one_line(tmp_path: Path) -> None:
    """What the lead's results reader and every other JSON file reader reuse."""
    from pytest_reasoning.files import BadJSON, InputRefused, loads_bounded, read_text_input

    assert loads_bounded('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    assert loads_bounded("[" * 64 + "]" * 64) is not None  # the limit itself is fine
    for text, said in (
        ("[" * 65 + "]" * 65, "nested deeper than 64 levels"),
        ("[" * 100_000, "nested deeper than 64 levels"),
        ('{"x": NaN}', "not JSON: NaN is not a JSON number"),
        ("9" * 5000, "not JSON: Exceeds the limit"),
        ('{"x": 1', "not JSON: Expecting ',' delimiter at column 8"),
    ):
        with pytest.raises(BadJSON) as info:
            loads_bounded(text)
        assert str(info.value).startswith(said) and "\n" not in str(info.value), info.value
    (tmp_path / "ok.txt").write_bytes(b"\xef\xbb\xbfhello")
    assert read_text_input(tmp_path / "ok.txt", 10) == "hello"  # a BOM dropped
    for path, said in (
        (tmp_path, "a folder, not a file"),
        (tmp_path / "missing", "no such file"),
        (tmp_path / "ok.txt", "too large for an input file (8 bytes, limit 4)"),
    ):
        with pytest.raises(InputRefused) as refused:
            read_text_input(path, 4)
        assert refused.value.reason == said, refused.value
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9")
    with pytest.raises(InputRefused, match="not UTF-8 text"):
        read_text_input(tmp_path / "latin.txt", 10)


def _fuzzed_dataset_files_load_or_fail_in_one_line(fuzz_dir: Path, lines: list[str]) -> None:
    path = fuzz_dir / "d.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    with within():
        try:
            read_dataset(path, display="d.jsonl")
        except InvalidDataset as exc:
            (line,) = str(exc).splitlines()
            assert line.startswith("d.jsonl") and len(line) <= 2000, line


# 10 examples each in the inner loop; the sweeps of 30, which CI runs, keep the old campaign.
(
    test_fuzzed_dataset_files_load_or_fail_in_one_line,
    test_fuzzed_dataset_files_load_or_fail_in_one_line_sweep,
) = inner_and_sweep(
    _fuzzed_dataset_files_load_or_fail_in_one_line,
    10,
    30,
    st.lists(JSON_VALUES.map(json.dumps) | mutated(_rows(1)[0]), min_size=1, max_size=3),
)


@pytest.mark.parametrize("field", ROW_FIELDS)
def test_a_huge_value_in_any_field_of_a_dataset_row_is_quoted_clipped(
    tmp_path: Path, field: str
) -> None:
    """Found by the fuzzer above: a 5,000-digit ``style`` was quoted whole, one line of 5,105
    characters. Every field, each a huge string and a huge number, gives a bounded line (or
    loads, where the field is free text)."""
    path = tmp_path / "d.jsonl"
    for huge in ("9" * 5000, int("9" * 4000)):
        path.write_text(json.dumps({**_rows(1)[0], field: huge}) + "\n")
        try:
            read_dataset(path, display="d.jsonl")
        except InvalidDataset as exc:
            (line,) = str(exc).splitlines()
            assert line.startswith("d.jsonl:1: ") and len(line) <= 2000, (field, len(line))
