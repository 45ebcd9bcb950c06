"""The repository itself: no tracked file keeps a merge's conflict markers (a merge of two branches that both
touched docs/reference.md once committed them unresolved; the docs built, and no other test read those lines)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)


def conflict_lines(text: str) -> list[int]:
    """The 1-based numbers of ``text``'s lines that open, split or close a git conflict."""
    return [text.count("\n", 0, found.start()) + 1 for found in MARKER.finditer(text)]


def tracked_files() -> list[Path]:
    """Every file git tracks here (every file under the project's folders when this is not a git checkout)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60)
        return [ROOT / name for name in listed.stdout.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        folders = ("memlab", "tests", "docs", "notebooks", "tools", "benchmarks", "data")
        return [path for folder in folders for path in (ROOT / folder).rglob("*") if path.is_file()]


def test_no_tracked_file_keeps_a_merges_conflict_markers():
    found = []
    for path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):  # binary files (images, databases) hold no merge of text
            continue
        found += [f"{path.relative_to(ROOT)}:{line}" for line in conflict_lines(text)]
    assert found == []


def test_the_markers_are_found_and_lookalikes_are_not():
    merged = "a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> helper-a\nb\n"
    assert conflict_lines(merged) == [2, 4, 6]
    assert conflict_lines("title\n=======\n") == [2]  # a setext heading of exactly seven is refused too: none exists
    assert conflict_lines("a <<<<<<< b\n========\n>>>>>>>\n") == []
