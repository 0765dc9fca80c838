"""Rewrite the generated sections of the docs from the code: the example prompts of
docs/tasks/*.md (from the generators), the suite key table of docs/suites.md (from the
schema), docs/cli.md (from the argument parser) and the third-party package of
docs/extending.md (from examples/acme-tasks, which the tests install and run).

``python docs/gen_examples.py`` rewrites; ``--check`` exits 1 if a page is out of date.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks import hooks
from pytest_reasoning.tasks.dyval import TASKS
from pytest_reasoning.tasks.sampler import make_item
from pytest_reasoning.tasks.zebra.clues import TEMPLATES

BEGIN, END = "<!-- BEGIN GENERATED EXAMPLES -->", "<!-- END GENERATED EXAMPLES -->"
DOCS = Path(__file__).resolve().parent


def details(summary: str, prompt: str, *, open_: bool = False, after: str = "") -> str:
    """A collapsible example: the summary line, the prompt as a text block, then ``after``."""
    flag = " open" if open_ else ""
    return (
        f"<details{flag}><summary>{summary}</summary>\n\n```text\n{prompt}\n```\n\n{after}"
        "</details>\n"
    )


def dyval_examples() -> str:
    parts = []
    for cls in TASKS:
        task = get_task(cls.id)
        parts.append(f"### `{task.id}`\n\n{task.description}\n")
        for index, level in enumerate(task.levels):  # other indices: the classes vary
            item = make_item(task, level, 1, index)
            summary = f"{level} (answer: <code>{item.answer}</code>)"
            parts.append(details(summary, item.prompt, open_=level == "D1"))
        item = make_item(task, "D1", 1, 0)
        parts.append(f"Steps (`--with-steps`, D1):\n\n```text\n{hooks.steps(task, item)}\n```\n")
    return "\n".join(parts)


def zebra_examples() -> str:
    task = get_task("zebra.grid")
    parts = [
        "### Clue templates\n",
        "`{A}` and `{B}` name values the same way every time (`Eric`, `the person who keeps a "
        "cat`, `the teacher`, `the jazz fan`); `{H}` is `house 3` or `the third house`.\n",
        "| kind | wordings |",
        "|---|---|",
    ]
    for kind, templates in TEMPLATES.items():
        parts.append(f"| `{kind}` | " + "<br>".join(templates) + " |")
    parts.append("")
    for level, label in (("2x3", "easy"), ("4x4", "hard"), ("6x6", "hard, the largest size")):
        item = make_item(task, level, 1, 0)
        answer = json.dumps(json.loads(item.answer), ensure_ascii=False)
        summary = f"{level} ({label}; {len(item.problem['clues'])} clues)"
        gold = f"Gold answer:\n\n```json\n{answer}\n```\n\n"
        parts.append(details(summary, item.prompt, open_=level == "2x3", after=gold))
    item = make_item(task, "3x3", 1, 0, style="oneshot")
    parts.append(
        details("3x3 in the <code>oneshot</code> style (the paper's protocol)", item.prompt)
    )
    item = make_item(task, "4x4", 1, 0)
    steps = hooks.steps(task, item)
    parts.append(f"Steps (`--with-steps`, the 4x4 above):\n\n```text\n{steps}\n```\n")
    return "\n".join(parts)


def flenqa_examples() -> str:
    from pytest_reasoning.tasks.flenqa import TASKS as FLENQA

    parts = []
    for cls in FLENQA:
        task = get_task(cls.id)
        item = make_item(task, "250", 1, 0)
        summary = (
            f"250 tokens ({item.problem['tokens']} measured; answer: <code>{item.answer}</code>)"
        )
        parts.append(
            f"### `{task.id}`\n\n{task.description}\n\n" + details(summary, item.prompt, open_=True)
        )
    task = get_task("flenqa.people_in_rooms")
    for padding, position in (
        ("duplicate", "first"),
        ("similar", "middle"),
        ("different", "random"),
    ):
        item = make_item(task, "500", 1, 1, {"padding": padding, "position": position}, "cot")
        summary = (
            f"<code>flenqa.people_in_rooms</code> at 500 tokens, padding <code>{padding}</code>, "
            f"position <code>{position}</code>, style <code>cot</code> "
            f"({item.problem['tokens']} tokens measured)"
        )
        parts.append(details(summary, item.prompt))
    item = make_item(task, "500", 1, 1)
    parts.append(f"Steps (`--with-steps`):\n\n```text\n{hooks.steps(task, item)}\n```\n")
    return "\n".join(parts)


def musr_examples() -> str:
    from pytest_reasoning.tasks.musr import TASKS as MUSR

    parts = []
    for cls in MUSR:
        task = get_task(cls.id)
        parts.append(f"### `{task.id}`\n\n{task.description}\n")
        for level in task.levels:
            item = make_item(task, level, 1, 0, style="cot+")
            words = len(item.problem["story"].split())
            answer = f"<code>{item.answer}</code>"
            summary = f"{level}, style <code>cot+</code> ({words} words; answer: {answer})"
            parts.append(details(summary, item.prompt, open_=level == "L1"))
        item = make_item(task, "L1", 1, 0)
        parts.append(f"Steps (`--with-steps`, L1):\n\n```text\n{hooks.steps(task, item)}\n```\n")
        shot = make_item(task, "L1", 1, 0, style="1shot-cot+").prompt
        example = shot.split("\n\nNow the story to solve.")[0]
        parts.append(details("The hand-written solved example that opens <code>1shot-cot+</code>",
                             example))  # fmt: skip
    return "\n".join(parts)


def suite_keys() -> str:
    from pytest_reasoning.config import KEY_DOCS

    lines = ["| key | where | type | meaning |", "|---|---|---|---|"]
    for key, (where, kind, meaning) in KEY_DOCS.items():
        lines.append(f"| `{key}` | {where} | {kind} | {meaning} |")
    return "\n".join(lines) + "\n"


def cli_reference() -> str:
    import os

    from pytest_reasoning.cli import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: fix it, or the page drifts
    parser = build_parser()
    parts = ["```text", parser.format_help().rstrip(), "```", ""]
    sub = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    assert isinstance(sub.choices, dict)
    for name, command in sub.choices.items():
        parts += [f"## `pytest-reasoning {name}`", "", "```text", command.format_help().rstrip()]
        parts += ["```", ""]
    return "\n".join(parts)


def acme_package() -> str:
    """examples/acme-tasks, file by file, as the page shows it."""
    root = DOCS.parent / "examples" / "acme-tasks"
    parts = []
    for name, lang in (
        ("pyproject.toml", "toml"),
        ("acme_tasks/__init__.py", "python"),
        ("acme.yaml", "yaml"),
    ):
        text = (root / name).read_text(encoding="utf-8").rstrip()
        parts += [f"`examples/acme-tasks/{name}`:", "", f"```{lang}", text, "```", ""]
    return "\n".join(parts)


PAGES: dict[str, Callable[[], str]] = {
    "tasks/dyval.md": dyval_examples,
    "tasks/flenqa.md": flenqa_examples,
    "tasks/musr.md": musr_examples,
    "tasks/zebra.md": zebra_examples,
    "suites.md": suite_keys,
    "cli.md": cli_reference,
    "extending.md": acme_package,
}


def render(text: str, examples: str) -> str:
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{examples}{END}{tail}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    stale = []
    for name, make in PAGES.items():
        page = DOCS / name
        current = page.read_text(encoding="utf-8")
        wanted = render(current, make())
        if current != wanted:
            stale.append(page)
            if not args.check:
                page.write_text(wanted, encoding="utf-8")
    if args.check and stale:
        for page in stale:
            sys.stderr.write(f"{page} is out of date: run python docs/gen_examples.py\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
