"""Screenshot the poisoning lab widget (notebook 07's last cell), in the light and the dark theme.

Usage: python tools/screenshot_poisoning.py

Serves a one-cell notebook with ``memlab classroom --notebook`` (Voila, as tools/screenshot_integrity.py does) and
takes ``docs/images/poisoning-lab-{light,dark}.png`` with headless Chromium (Debian's ``chromium``, driven by
Playwright): the bundled LoCoMo results (``data/results/poison/locomo/poison.csv``), the direct tier at 1% poisoned,
the lexical ranking, k = 10.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
LAB = f"""from memlab import widgets as mw
from memlab.poison import results

lab = mw.poisoning_lab(results({str(ROOT / "data" / "results" / "poison" / "locomo.csv")!r}))
lab.widget.add_class("memlab-poisoning")
lab"""


def main() -> int:
    from playwright.sync_api import sync_playwright

    from memlab.classroom_server import free_port

    folder = Path(tempfile.mkdtemp(prefix="memlab-shot-"))
    notebook = folder / "poisoning.ipynb"
    page = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(LAB)])
    page.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(page, notebook)
    server = subprocess.Popen(
        [sys.executable, "-m", "memlab.cli", "classroom", "--notebook", str(notebook), "--port", str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", server.stdout.readline()).group(0)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            IMAGES.mkdir(parents=True, exist_ok=True)
            for theme in ("light", "dark"):
                shown = browser.new_page(viewport={"width": 1200, "height": 1000})
                shown.goto(url + ("?theme=dark" if theme == "dark" else ""), timeout=120_000)
                shown.locator(".memlab-poisoning svg").first.wait_for(timeout=90_000)
                shown.wait_for_timeout(500)  # the last widget views settle
                shown.locator(".memlab-poisoning").screenshot(path=IMAGES / f"poisoning-lab-{theme}.png")
                shown.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
