"""docs/reference.md's "Where things live" is the layout: every module of memlab/ is named there (itself, or the
package holding it), and every path named there exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _named() -> list[str]:
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    section = text[text.index("## Where things live") : text.index("## The store and its sessions")]
    return re.findall(r"^\| `([^`]+)` \|", section, re.MULTILINE)


def test_every_path_named_exists():
    named = _named()
    assert len(named) >= 30
    assert [path for path in named if not (ROOT / path).exists()] == []


def test_every_module_is_named():
    named = set(_named())
    unnamed = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "memlab").rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in named
        and not any(path.relative_to(ROOT).as_posix().startswith(folder) for folder in named if folder.endswith("/"))
    ]
    assert unnamed == [], f"add these to docs/reference.md's table: {unnamed}"
