"""The documentation site builds with ``mkdocs build --strict``: a broken link, a missing anchor or a docstring
reference mkdocstrings cannot resolve fails the build, and any other warning fails this test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import docs_index  # noqa: E402
import tables  # noqa: E402


def test_the_site_builds_strictly(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    assert "WARNING" not in log, log
    assert (tmp_path / "site" / "reference" / "index.html").is_file()
    reference = (tmp_path / "site" / "reference" / "index.html").read_text(encoding="utf-8")
    assert "memory_save_many" in reference and "Ranking" in reference  # mkdocstrings rendered the docstrings


def test_the_site_front_page_is_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert (ROOT / "docs" / "index.md").read_text(encoding="utf-8") == docs_index.index_page(readme), (
        "docs/index.md is stale: run python tools/docs_index.py"
    )


def test_every_page_is_in_the_nav():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").glob("**/*.md"))
    assert pages and all(f": {page}" in config for page in pages)


def test_the_images_the_readme_shows_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for image in ("docs/session-simulator.png",):
        assert image in readme and (ROOT / image).is_file()


@pytest.mark.parametrize("name", sorted(tables.TABLES))
def test_a_generated_table_is_what_the_script_writes_for_the_committed_results(name):
    date = tables.results_date(tables.TABLES[name][2])
    path, text = tables.written(name, date)
    committed = path.read_text(encoding="utf-8")
    if date is None:  # outside a git checkout: the date cannot be known, everything else must match
        committed = re.sub(r"committed \d{4}-\d{2}-\d{2}", "committed in this tree", committed)
    assert committed == text, f"{path.relative_to(ROOT)}: table {name} is stale: run python tools/tables.py"


def test_a_table_block_is_replaced_not_appended():
    page = "before\n<!-- table:x -->\nold\n<!-- /table -->\nafter\n"
    assert tables.render(page, "x", "new") == "before\n<!-- table:x -->\nnew\n<!-- /table -->\nafter\n"
    with pytest.raises(ValueError):
        tables.render("no block here", "x", "new")
