"""Screenshot a one-cell notebook as Voila shows it, in the light and the dark theme: what the screenshot scripts
(``tools/screenshot_*.py``) share.

``shoot`` serves the cell with ``memlab classroom --notebook`` (as tests/test_browser.py does), opens it in headless
Chromium (Debian's ``chromium``, driven by Playwright), waits for ``ready`` (a Playwright locator of the page) and
saves the element ``selector`` as ``docs/images/{name}-{light,dark}.png``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"


def shoot(cell: str, name: str, selector: str, ready: Callable, viewport: tuple[int, int] = (1200, 1000)) -> list[Path]:
    """``docs/images/{name}-light.png`` and ``-dark.png`` of ``selector`` once ``ready(page)`` has appeared."""
    from playwright.sync_api import sync_playwright

    from memlab.classroom_server import free_port

    folder = Path(tempfile.mkdtemp(prefix="memlab-shot-"))
    notebook = folder / f"{name}.ipynb"
    page = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    page.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(page, notebook)
    server = subprocess.Popen(
        [sys.executable, "-m", "memlab.cli", "classroom", "--notebook", str(notebook), "--port", str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    written = []
    try:
        url = None
        while url is None:  # the first address the server prints (the lesson's)
            line = server.stdout.readline()
            if not line:
                raise RuntimeError("memlab classroom printed no address")
            found = re.search(r"http://127\.0\.0\.1:\d+/", line)
            url = found.group(0) if found else None
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            IMAGES.mkdir(parents=True, exist_ok=True)
            for theme in ("light", "dark"):
                shown = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
                shown.goto(url + ("?theme=dark" if theme == "dark" else ""), timeout=120_000)
                ready(shown).wait_for(timeout=90_000)
                shown.wait_for_timeout(500)  # the last widget views settle
                written.append(IMAGES / f"{name}-{theme}.png")
                shown.locator(selector).screenshot(path=written[-1])
                shown.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    return written
