"""docs/testing.md's "Where each behaviour is tested" is true: every module of memlab/ has a row, every test file it
names exists, every module has a unit-test file of its own (but the storage rework's, below), and every test file
is named in it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Where each behaviour is tested"

# The SQLite storage's modules whose unit tests live in the behaviour files their rows name (the storage's
# contract, caches, bulk and purge tests): each gains its own file as it is next reworked.
REWORK = frozenset(
    f"memlab/storage/{name}.py"
    for name in (
        "sqlite", "indexes", "lexical", "vectors", "erasure", "audit", "rows", "folder", "migrate", "copy_in",
        "view_changes",
    )
)  # fmt: skip


def section(text: str) -> str:
    """The map's section of docs/testing.md: from its heading to the next one."""
    start = text.index(SECTION)
    following = text.find("\n## ", start + len(SECTION))
    return text[start : following if following != -1 else len(text)]


def rows(text: str) -> dict[str, list[str]]:
    """The table: module -> the test files its row names, the module's own first."""
    return {
        module: re.findall(r"`(tests/[\w/]+\.py)`", cells)
        for module, cells in re.findall(r"^\| `(memlab/[\w/]+\.py)` \|(.*)\|$", section(text), re.MULTILINE)
    }


def named(text: str) -> set[str]:
    """Every test file the section names, in the table or in the list after it."""
    return set(re.findall(r"`(tests/[\w/]+\.py)`", section(text)))


def modules(root: Path) -> set[str]:
    return {
        path.relative_to(root).as_posix()
        for path in (root / "memlab").rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    }


def own_files(module: str) -> set[str]:
    """The names a module's own unit-test file may have."""
    path = Path(module)
    return {f"tests/test_{path.stem}.py", f"tests/test_{path.parent.name}_{path.stem}.py"}


def problems(text: str, root: Path) -> list[str]:
    """What is wrong with the map in ``text`` against the checkout at ``root``; nothing when it is true."""
    table, present = rows(text), modules(root)
    found = [f"{module}: no row in the map" for module in sorted(present - set(table))]
    found += [f"{module}: a row for no module" for module in sorted(set(table) - present - REWORK)]
    found += [
        f"{file}: named in the map, but no such file" for file in sorted(named(text)) if not (root / file).is_file()
    ]
    found += [f"{module}: a row naming no test file" for module, files in sorted(table.items()) if not files]
    found += [
        f"{module}: its first file is {files[0]}, not its own ({' or '.join(sorted(own_files(module)))})"
        for module, files in sorted(table.items())
        if module not in REWORK and files and files[0] not in own_files(module)
    ]
    tests = {path.relative_to(root).as_posix() for path in (root / "tests").glob("test_*.py")}
    found += [f"{file}: a test file the map does not name" for file in sorted(tests - named(text))]
    return found


def test_the_map_is_true():
    # Guards: a module added without a row, a row naming a file that is gone, a module without its own file.
    assert problems((ROOT / "docs" / "testing.md").read_text(encoding="utf-8"), ROOT) == []


def test_the_map_test_finds_each_kind_of_mistake():
    text = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    without_row = re.sub(r"^\| `memlab/errors\.py` .*\n", "", text, flags=re.MULTILINE)
    assert problems(without_row, ROOT) == [
        "memlab/errors.py: no row in the map",
        "tests/test_errors.py: a test file the map does not name",
    ]
    gone = text.replace("`tests/test_errors.py` |", "`tests/test_no_such_file.py` |")
    assert problems(gone, ROOT) == [
        "tests/test_no_such_file.py: named in the map, but no such file",
        "memlab/errors.py: its first file is tests/test_no_such_file.py, not its own (tests/test_errors.py or "
        "tests/test_memlab_errors.py)",
        "tests/test_errors.py: a test file the map does not name",
    ]
    borrowed = text.replace(
        "| `memlab/errors.py` | `tests/test_errors.py` |", "| `memlab/errors.py` | `tests/test_tools.py` |"
    )
    assert any(
        "memlab/errors.py: its first file is tests/test_tools.py" in problem for problem in problems(borrowed, ROOT)
    )
