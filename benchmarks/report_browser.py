"""Look at the HTML report as a person would: render it in headless Chromium, take a
screenshot, and check that every plot decoded and the console stayed clean.

Builds the report from a real run (the quick suite against the project's fake server: a model
that fails deeper arithmetic, compared with the reference) unless ``--results`` names files.
Needs Debian's ``chromium`` (``apt-get install chromium``). Writes ``docs/report.png``.

Usage: python benchmarks/report_browser.py [--results R.jsonl ...] [--screenshot PATH]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def render(index: Path, screenshot: Path) -> tuple[str, list[str]]:
    """(DOM after load, console error lines) of ``index`` in headless Chromium."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium not found: apt-get install chromium")
    flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    url = index.resolve().as_uri()
    shot = subprocess.run(
        [chromium, *flags, "--window-size=1280,2200", f"--screenshot={screenshot}",
         "--enable-logging=stderr", "--v=0", url],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    dom = subprocess.run(
        [chromium, *flags, "--virtual-time-budget=5000", "--dump-dom", url],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    console = [
        line
        for line in (shot.stderr + dom.stderr).splitlines()
        if "CONSOLE" in line and re.search(r"error|uncaught", line, re.IGNORECASE)
    ]
    return dom.stdout, console


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", nargs="*")
    ap.add_argument("--screenshot", default=str(ROOT / "docs" / "report.png"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report"
        if args.results:
            cmd = [sys.executable, "-m", "pytest_reasoning.cli", "report", *args.results]
            subprocess.run([*cmd, "--out", str(out)], check=True)
        else:
            from pytest_reasoning.testing.server import FakeOpenAIServer

            with FakeOpenAIServer() as server:
                subprocess.run(
                    [sys.executable, "-m", "pytest", str(ROOT / "example_suites" / "quick.yaml"),
                     "--llm", "openai/shallow:1", "--llm-baseline", "reference",
                     "--llm-api-base", server.url, "--reasoning-cache", "off",
                     f"--reasoning-report={out}", "-p", "no:cacheprovider", "-q"],
                    cwd=tmp, capture_output=True, text=True,
                )  # fmt: skip
        dom, console = render(out / "index.html", Path(args.screenshot))
    images = len(re.findall(r"<img ", dom))
    broken = re.search(r'data-broken-images="(\d+)"', dom)
    print(f"images: {images}, broken: {broken.group(1) if broken else '?'}, "
          f"console errors: {len(console)}, screenshot: {args.screenshot}")  # fmt: skip
    for line in console:
        print(line)
    ok = images >= 3 and broken is not None and broken.group(1) == "0" and not console
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
