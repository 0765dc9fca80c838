"""The ``pytest-reasoning`` command: export schema, streaming, one-line usage errors."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from reliability_matrix import record
from results_rows import PROP_SUITE, _gate, _row, _suite_rows_base, _write

from pytest_reasoning.cli import main
from pytest_reasoning.testing.server import FakeOpenAIServer


def test_export_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "export",
                "dyval.arithmetic",
                "--level",
                "D2",
                "--count",
                "3",
                "--seed",
                "4",
                "--with-steps",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    row = json.loads(lines[1])
    assert list(row) == [
        "id",
        "task",
        "level",
        "seed",
        "index",
        "params",
        "style",
        "prompt",
        "answer",
        "problem",
        "steps",
    ]
    assert row["id"] == "dyval.arithmetic[D2-s4-001]"
    assert row["problem"]["target"] == row["problem"]["nodes"][-1]["name"]
    assert {n["op"] for n in row["problem"]["nodes"]} <= {
        None,
        "+",
        "-",
        "*",
        "/",
        "sqrt",
        "square",
    }
    assert row["steps"].endswith(f"<<<{row['answer']}>>>")


def test_export_param_changes_problem(capsys: pytest.CaptureFixture[str]) -> None:
    main(
        [
            "export",
            "dyval.boolean_logic",
            "--level",
            "D1",
            "--count",
            "1",
            "--param",
            "depth=4",
            "--param",
            "order=reversed",
        ]
    )
    row = json.loads(capsys.readouterr().out)
    assert row["params"]["depth"] == 4 and row["params"]["order"] == "reversed"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "dyval.nope", "--level", "D1"], "unknown task 'dyval.nope'"),
        (["export", "dyval.arithmetic", "--level", "D9"], "unknown level 'D9'"),
        (
            ["export", "dyval.arithmetic", "--level", "D1", "--param", "depth=0"],
            "knob 'depth': must be >= 1, got 0",
        ),
        (["export", "dyval.arithmetic", "--level", "D1", "--param", "oops"], "expected key=value"),
        (["export", "dyval.arithmetic"], "the following arguments are required: --level"),
    ],
)
@pytest.mark.e2e
def test_bad_arguments_are_one_line_usage_errors(argv: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", *argv], capture_output=True, text=True
    )
    assert proc.returncode == 4  # as pytest's usage errors (argparse's would be 2)
    assert proc.stderr.count("\n") == 1 and message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_export_streams() -> None:
    from pytest_reasoning.cli import export_items

    buf = io.StringIO()
    assert export_items("dyval.arithmetic", "D4", 50, 1, {}, "cot", False, buf) == 50
    assert buf.getvalue().count("\n") == 50


@pytest.mark.parametrize(
    ("task", "keys"),
    [
        ("dyval.arithmetic", {"nodes", "target"}),
        ("dyval.linear_equation", {"equations", "nodes"}),
        ("dyval.boolean_logic", {"nodes", "target"}),
        ("dyval.deductive_logic", {"nodes", "target"}),
        ("dyval.abductive_logic", {"nodes", "target", "given", "stated"}),
        ("dyval.reachability", {"edges", "source", "target"}),
        ("dyval.max_sum_path", {"edges", "values", "source", "target"}),
    ],
)
def test_export_problem_schema_per_task(
    task: str, keys: set[str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["export", task, "--level", "D3", "--count", "2", "--param", "order=random"]
    assert main([*args, "--style", "fewshot", "--param", "shots=1", "--with-steps"]) == 0
    for line in capsys.readouterr().out.splitlines():
        row = json.loads(line)
        assert set(row["problem"]) == keys
        assert row["steps"].endswith(f"<<<{row['answer']}>>>")
        assert row["style"] == "fewshot" and row["params"]["order"] == "random"


# Five test problems: 6 items already repeat one, in the inner loop (the draws grow costly as
# the level runs out: 30 items take ~1.6 s of CPU); CI runs the 30 of the sweep as well.
@pytest.mark.parametrize("count", [6, pytest.param(30, marks=pytest.mark.e2e)])
def test_export_says_when_a_small_level_repeats(
    capsys: pytest.CaptureFixture[str], count: int
) -> None:
    assert main(["export", "dyval.boolean_logic", "--level", "D1", "--count", str(count)]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == count
    repeats = count - 5  # five test problems
    assert f"{repeats} of {count} items repeat an earlier problem" in captured.err
    assert "\n" not in captured.err.rstrip("\n")


def test_export_list_knob_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["export", "dyval.arithmetic", "--level", "D2", "--count", "3"]
    assert main([*args, "--param", "ops=[+, -]", "--param", "extra_links=1"]) == 0
    for line in capsys.readouterr().out.splitlines():
        row = json.loads(line)
        assert row["params"]["ops"] == ["+", "-"]
        assert {n["op"] for n in row["problem"]["nodes"]} <= {"+", "-", None}


# Every command with bad arguments: (argv, words the one line must contain). ``{tmp}`` is a
# folder holding ``afile`` (a plain file), ``bad.jsonl`` (no JSON row at all), ``odd.jsonl``
# (JSON that is no results row), ``half.jsonl`` (a row missing fields) and ``ok.jsonl`` (one
# valid row).
BAD = [
    (["nope"], "invalid choice: 'nope'"),
    (["tasks", "--nope"], "unrecognized arguments: --nope"),
    (["tasks", "dyval.reachabilty"], "(did you mean 'dyval.reachability'?)"),
    (["export"], "required: task, --level"),
    (["export", "dyval.arithmetic", "--level", "D1", "--count", "-1"], "--count: must be >= 0"),
    (["export", "dyval.arithmetic", "--level", "D1", "--count", "x"], "invalid int value: 'x'"),
    (["export", "dyval.arithmetic", "--level", "D1", "--workers", "0"], "--workers: must be >= 1"),
    (["export", "dyval.arithmetic", "--level", "D1", "--start", "-1"], "--start: must be >= 0"),
    (["export", "dyval.arithmetic", "--level", "D1", "--start", "5", "--stop", "2"],
     "--stop: must be >= --start (5), got 2"),
    (["export", "dyval.arithmetic", "--level", "D1", "--count", "5", "--stop", "9"],
     "--count and --stop: give one"),
    (["export", "dyval.arithmetic", "--level", "D1", "--seed", "x"], "--seed: invalid int"),
    (["export", "dyval.arithmetic", "--level", "D1", "--style", "nope"], "style 'nope'"),
    (["export", "zebra.grid", "--level", "9x99"], "unknown level '9x99' for zebra.grid"),
    (["export", "flenqa.monorel", "--level", "50"], "unknown level '50' for flenqa.monorel"),
    (["export", "dyval.arithmetic", "--level", "D1", "--param", "depth=x"], "expected int"),
    (["export", "dyval.arithmetic", "--level", "D1", "--param", "nope=1"], "unknown knob 'nope'"),
    (
        ["export", "dyval.arithmetic", "--level", "D1", "--output", "{tmp}/afile/x.jsonl"],
        "--output: cannot write {tmp}/afile/x.jsonl: Not a directory",
    ),
    (["plan", "--drop", "0.05"], "give --drop and --baseline-accuracy (a comparison)"),
    (["plan", "--drop", "2", "--baseline-accuracy", "0.8"], "0 < drop < baseline accuracy"),
    (["plan", "--drop", "0.05", "--baseline-accuracy", "0.8", "--power", "0"], "--power"),
    (["plan", "--drop", "0.05", "--baseline-accuracy", "0.8", "--levels", "0"], "--levels"),
    (
        ["plan", "--drop", "0.05", "--baseline-accuracy", "0.8", "--discordance", "0.01"],
        "--discordance: must be in [drop, 1]",
    ),
    (["frontier", "--llm", "reference"], "required: --task, --knob, --min, --max"),
    (
        [
            "frontier",
            "--llm",
            "reference",
            "--task",
            "dyval.arithmetic",
            "--knob",
            "order",
            "--min",
            "1",
            "--max",
            "3",
        ],
        "'order' is not a numeric knob",
    ),
    (
        [
            "frontier",
            "--llm",
            "reference",
            "--task",
            "dyval.arithmetic",
            "--knob",
            "depth",
            "--min",
            "5",
            "--max",
            "3",
        ],
        "--min: 5 is above --max 3",
    ),
    (
        [
            "frontier",
            "--llm",
            "reference",
            "--task",
            "dyval.nope",
            "--knob",
            "depth",
            "--min",
            "1",
            "--max",
            "3",
        ],
        "unknown task 'dyval.nope'",
    ),
    (
        [
            "frontier",
            "--llm",
            "reference",
            "--task",
            "dyval.arithmetic",
            "--knob",
            "depth",
            "--min",
            "1",
            "--max",
            "3",
            "--target",
            "2",
        ],
        "--target: expected a fraction in (0, 1)",
    ),
    (
        [
            "frontier",
            "--llm",
            "reference",
            "--task",
            "dyval.arithmetic",
            "--knob",
            "depth",
            "--min",
            "1",
            "--max",
            "3",
            "--json",
            "{tmp}/afile/x.json",
        ],
        "--json: {tmp}/afile is not a folder",
    ),
    (["robustness"], "required: results"),
    (["robustness", "{tmp}/missing.jsonl", "{tmp}/ok.jsonl"], "missing.jsonl: cannot read"),
    (["robustness", "{tmp}/bad.jsonl", "{tmp}/ok.jsonl"], "bad.jsonl: no result rows"),
    (["robustness", "{tmp}/odd.jsonl", "{tmp}/ok.jsonl"],
     "odd.jsonl:1: item_id: expected a field every results row has"),
    (["robustness", "{tmp}/ok.jsonl", "{tmp}/ok.jsonl"], "needs at least 2 models"),
    (["robustness", "{tmp}/ok.jsonl", "--permutations", "-5"], "--permutations and --samples"),
    (["audit", "dyval.nope"], "unknown task 'dyval.nope'"),
    (["audit", "dyval.arithmetic", "--level", "D9"], "unknown level 'D9'"),
    (["audit", "--level", "D9"], "--level: no built-in task has a level 'D9'"),
    (["audit", "--count", "0"], "--count: must be >= 1"),
    (["audit", "--jobs", "-1"], "--jobs: must be >= 0"),
    (["report", "{tmp}/ok.jsonl"], "required: --out"),
    (["report", "{tmp}/half.jsonl", "--out", "{tmp}/o"],
     "half.jsonl:1: task: expected a field every results row has"),
    (["report", "{tmp}/ok.jsonl", "--out", "{tmp}/afile"], "--out: {tmp}/afile exists and is"),
    (["report", "{tmp}/ok.jsonl", "--out", "{tmp}/o", "--baseline", "m2"], "--baseline: 'm2'"),
    (["narrate", "musr.murder_mystery", "--level", "L1", "--llm", "x"], "required: --out"),
    (
        ["narrate", "dyval.arithmetic", "--level", "D1", "--llm", "x", "--out", "{tmp}/o.jsonl"],
        "no narrator plan for dyval.arithmetic",
    ),
    (
        [
            "narrate",
            "musr.murder_mystery",
            "--level",
            "L1",
            "--llm",
            "x",
            "--count",
            "-1",
            "--out",
            "{tmp}/o.jsonl",
        ],
        "--count: must be >= 0",
    ),
    (
        [
            "narrate",
            "musr.murder_mystery",
            "--level",
            "L1",
            "--llm",
            "x",
            "--out",
            "{tmp}/afile/o.jsonl",
        ],
        "--out: {tmp}/afile is not a folder",
    ),
    # ``gate`` stands in for a pytest run: its usage errors exit 4, as pytest's do.
    (["gate", "{tmp}/s.yaml"], "name the suites and --results FILE... (our shards), or --from"),
    (["gate", "--from", "inspect"], "--from inspect: name the logs after it"),
    (["gate", "{tmp}/nope.yaml", "--results", "{tmp}/ok.jsonl"], "nope.yaml: no such suite"),
    (["gate", "{tmp}/afile", "--results", "{tmp}/ok.jsonl"], "afile: not a suite file"),
    (["gate", "{tmp}/s.yaml", "--results", "{tmp}/bad.jsonl"], "bad.jsonl: no result rows"),
    (["gate", "{tmp}/s.yaml", "--results", "{tmp}/ok.jsonl", "--reasoning-seed", "x"],
     "--reasoning-seed: expected an integer"),
    (["gate", "{tmp}/s.yaml", "--results", "{tmp}/ok.jsonl", "--llm-baseline", "m2"],
     "--llm-baseline: 'm2' has no rows"),
    (["gate", "{tmp}/s.yaml", "--results", "{tmp}/ok.jsonl", "--junitxml", "{tmp}/afile/j.xml"],
     "--junitxml: {tmp}/afile is not a folder"),
]  # fmt: skip


def test_every_command_is_in_the_bad_arguments_table() -> None:
    from pytest_reasoning.cli import build_parser

    commands = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert commands == {argv[0] for argv, _ in BAD if argv and argv[0] in commands}


@pytest.mark.parametrize(("argv", "words"), BAD, ids=[" ".join(a)[:60] for a, _ in BAD])
def test_bad_arguments_of_every_command_exit_4_in_one_line(
    argv: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "afile").write_text("x")
    (tmp_path / "bad.jsonl").write_text("not json\n")
    (tmp_path / "odd.jsonl").write_text('{"a": 1}\n')
    (tmp_path / "half.jsonl").write_text('{"item_id": "x", "model": "m"}\n')
    row = {"item_id": "i", "model": "m", "task": "dyval.arithmetic", "level": "D1", "seed": 1,
           "prompt_sha256": "h", "response": "<<<1>>>", "extracted": "1", "gold": "1",
           "correct": True, "failure_mode": None, "error": None, "prompt_tokens": 1,
           "completion_tokens": 1, "latency_s": 0.1}  # fmt: skip
    (tmp_path / "ok.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "s.yaml").write_text("tasks:\n  - task: dyval.arithmetic\n    levels: [D1]\n")
    try:  # argparse's own errors exit; ours return the status
        code: object = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 4, err  # pytest's usage status, for every command (docs/cli.md)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pytest-reasoning"), err
    assert words.replace("{tmp}", str(tmp_path)) in lines[0], lines[0]
    assert not (tmp_path / "o").exists()  # a refused report writes nothing


def test_bare_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: pytest-reasoning") and "tasks" in out and "export" in out


def test_tasks_shows_knobs_defaults_ranges_and_styles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "dyval.arithmetic"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "levels: D1 D2 D3 D4"
    assert lines[2] == "styles: direct, cot, fewshot (default: direct)"
    header = lines[4].split()
    assert header[:3] == ["knob", "type", "range"] and header[5:9] == ["D1", "D2", "D3", "D4"]
    depth = next(line.split() for line in lines if line.startswith("depth "))
    assert depth[:7] == ["depth", "int", "1..12", "2", "3", "3", "4"]  # each level's preset
    order = next(line for line in lines if line.startswith("order "))
    assert "topological, reversed, rand" in order
    assert main(["tasks", "musr.murder_mystery"]) == 0
    assert "also regular (= direct)" in capsys.readouterr().out
    assert main(["tasks", "--verbose"]) == 0
    every = capsys.readouterr().out
    from pytest_reasoning.registry import task_ids

    assert every.count("\nlevels: ") + every.startswith("levels: ") == len(task_ids())
    assert "clue_weights" in every and "padding_corpus" in every


def _stderr_on_a_terminal(argv: list[str]) -> str:
    """Run the CLI with stderr on a pseudo-terminal (100 columns), stdout to /dev/null."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_reasoning.cli", *argv],
        stdout=subprocess.DEVNULL,
        stderr=slave,
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=300)
    os.close(master)
    return out.decode("utf-8", "replace")


@pytest.mark.e2e
def test_export_progress_on_a_terminal_only() -> None:
    """A bar with rate and ETA on stderr when it is a terminal and the export takes over a
    second; none under -q, none on a pipe."""
    argv = ["export", "dyval.arithmetic", "--level", "D4", "--count", "6000"]  # about 4 s
    shown = _stderr_on_a_terminal(argv)
    assert re.search(
        r"dyval\.arithmetic D4: +\d+%.*\d+/6000 \[\d\d:\d\d<\d\d:\d\d, +[\d.]+item/s\]", shown
    ), shown
    assert _stderr_on_a_terminal([*argv, "-q"]).strip() == ""
    piped = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning.cli", *argv], capture_output=True, text=True
    )
    assert piped.returncode == 0 and piped.stderr == ""


@pytest.mark.e2e
def test_frontier_progress_on_a_terminal() -> None:
    """The search's calls against the most it can make, the knob value being probed."""
    from pytest_reasoning.testing.server import FakeOpenAIServer

    with FakeOpenAIServer(latency_s=0.2) as server:
        argv = ["frontier", "--llm", "openai/shallow:3", "--llm-api-base", server.url,
                "--task", "dyval.arithmetic", "--knob", "depth", "--min", "2", "--max", "4",
                "--cache", "off", "--max-samples", "12"]  # fmt: skip
        shown = _stderr_on_a_terminal(argv)
        quiet = _stderr_on_a_terminal([*argv, "-q"])
    # 2 + ceil(log2(4 - 2)) = 3 probes of at most 12 samples: at most 36 calls.
    assert re.search(r"\d+/36 \[\d\d:\d\d<\d\d:\d\d, +[\d.]+call/s, depth=\d\]", shown), shown
    assert quiet.strip() == ""


def test_frontier_takes_a_runs_cache_options_and_shares_a_redis_cache(
    redis_server: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``frontier`` opens its model as a run does (``runs.open_run``): ``--cache redis://…``
    with ``--cache-local off`` keeps every answer in Redis alone, so the same search again
    asks nothing and finds the same frontier."""
    import redis

    from pytest_reasoning.testing.server import FakeOpenAIServer

    url = redis_server.url  # type: ignore[attr-defined]
    redis.Redis.from_url(url).flushdb()
    with FakeOpenAIServer() as server:
        argv = ["frontier", "--llm", "openai/shallow:3", "--llm-api-base", server.url,
                "--task", "dyval.arithmetic", "--knob", "depth", "--min", "2", "--max", "4",
                "--max-samples", "8", "--cache", url, "--cache-local", "off", "-q"]  # fmt: skip
        assert main(argv) == 0
        first = capsys.readouterr().out
        calls = server.stats()["total"]
        assert calls > 0
        assert main(argv) == 0
        assert server.stats()["total"] == calls  # zero HTTP requests: Redis answered
    assert capsys.readouterr().out == first
    assert main([*argv[:-5], "--cache", "off", "--cache-local", "x"]) == 4  # one line, usage
    assert "--cache-local: only with a shared cache" in capsys.readouterr().err


CONFIG = """\
model_list:
  - model_name: bad
    litellm_params:
      model: openai/bad-key
      api_base: {url}
      api_key: os.environ/TEAM_CREDS
"""


@pytest.mark.e2e
def test_frontier_cli_takes_a_model_config(tmp_path: Path, fake_server: FakeOpenAIServer) -> None:
    import subprocess
    import sys

    config = tmp_path / "m.yaml"
    config.write_text(
        CONFIG.replace("bad-key", "shallow:3")
        .format(url=fake_server.url)
        .replace("api_key: os.environ/TEAM_CREDS", "max_tokens: 64")
    )
    cmd = [
        sys.executable,
        "-m",
        "pytest_reasoning.cli",
        "frontier",
        "--llm-config",
        str(config),
        "--llm",
        "bad",
        "--task",
        "dyval.arithmetic",
        "--knob",
        "depth",
        "--min",
        "2",
        "--max",
        "5",
        "--max-samples",
        "10",
        "--cache",
        "off",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "frontier: depth = 3" in done.stdout


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("target", "reason"),
    [("/dev/full", "No space left on device"), ("/proc/version", None)],
)
def test_export_to_an_unwritable_file_is_one_line(
    capsys: pytest.CaptureFixture[str], target: str, reason: str | None
) -> None:
    if not Path(target).exists():
        pytest.skip(f"{target} is Linux-only")
    assert main(["export", "dyval.arithmetic", "--level", "D1", "--count", "50", "-o", target]) == 4
    (line,) = _lines(capsys.readouterr().err)
    assert line.startswith(f"pytest-reasoning: error: --output: cannot write {target}: ")
    assert reason is None or line.endswith(reason)


@pytest.mark.e2e
@pytest.mark.parametrize("argv", [["export", "dyval.arithmetic", "--level", "D1"], ["tasks"],
                                  ["plan", "--drop", "0.1", "--baseline-accuracy", "0.8"]])  # fmt: skip
def test_a_full_stdout_is_one_line_and_exit_4(argv: list[str]) -> None:
    """``> /dev/full``: before, a traceback and exit 1 (or 120 at interpreter exit)."""
    if not Path("/dev/full").exists():
        pytest.skip("/dev/full is Linux-only")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "pytest_reasoning.cli", *argv],
                              stdout=full, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert done.returncode == 4  # an output that cannot be written: usage, as pytest's report
    assert _lines(done.stderr) == [
        "pytest-reasoning: error: cannot write the standard output: No space left on device"
    ]
    record("export", "`-o /dev/full`, `-o /proc/version`, `> /dev/full` (export, tasks, plan): "
                     "exit 4, one line each")  # fmt: skip


@pytest.fixture
def suite_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "prop.yaml").write_text(PROP_SUITE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_outputs_that_cannot_be_written_fail_the_gate(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(suite_dir / "r.jsonl", [_row(b, "m", True) for b in _suite_rows_base(str(suite_dir))])
    base = ["prop.yaml", "--results", "r.jsonl"]
    code, out, err = _gate([*base, "--junitxml", "/dev/full"], capsys)
    assert code == 4 and "--junitxml: cannot write /dev/full" in err
    assert "JUnit XML /dev/full" not in out
    (suite_dir / "file").write_text("")
    code, _, err = _gate([*base, "--report", "file/sub"], capsys)
    assert code == 4 and "--report: cannot create file/sub" in err
    code, out, _ = _gate(base, capsys)
    assert code == 0 and "3 passed" in out


def test_a_missing_local_model_file_is_one_line_naming_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both doors open a run through ``runs.open_run``: the embedded model's file not found
    is one line that names the model it was for (the plugin turns it into a usage error)."""
    from pytest_reasoning.errors import ReasoningError
    from pytest_reasoning.runs import RunConfig, open_run

    missing = tmp_path / "none.gguf"
    monkeypatch.setenv("REASONING_LOCAL_MODEL", str(missing))
    with pytest.raises(ReasoningError) as info:
        open_run(RunConfig(models=("local",), cache_dir=None))
    assert str(info.value) == f"--llm local: REASONING_LOCAL_MODEL={missing}: no such file"
