"""Rewrite the generated example sections of docs/tasks/*.md from the generators.

``python docs/gen_examples.py`` rewrites; ``--check`` exits 1 if a page is out of date.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_reasoning.registry import get_task
from pytest_reasoning.tasks.dyval import TASKS

BEGIN, END = "<!-- BEGIN GENERATED EXAMPLES -->", "<!-- END GENERATED EXAMPLES -->"
PAGE = Path(__file__).resolve().parent / "tasks" / "dyval.md"


def dyval_examples() -> str:
    parts = []
    for cls in TASKS:
        task = get_task(cls.id)
        parts.append(f"### `{task.id}`\n\n{task.description}\n")
        for index, level in enumerate(task.levels):  # other indices: the classes vary
            item = task.make_item(level, 1, index)
            open_ = " open" if level == "D1" else ""
            parts.append(
                f"<details{open_}><summary>{level} (answer: <code>{item.answer}</code>)"
                f"</summary>\n\n```text\n{item.prompt}\n```\n\n</details>\n"
            )
        item = task.make_item("D1", 1, 0)
        parts.append(f"Steps (`--with-steps`, D1):\n\n```text\n{task.steps(item)}\n```\n")
    return "\n".join(parts)


def render(text: str) -> str:
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{dyval_examples()}{END}{tail}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    current = PAGE.read_text(encoding="utf-8")
    wanted = render(current)
    if args.check:
        if current != wanted:
            sys.stderr.write(f"{PAGE} is out of date: run python docs/gen_examples.py\n")
            return 1
        return 0
    PAGE.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
