"""docs/security.md is what the tests show: every promise in its table names the tests that back it, each of
those tests exists, and every non-promise says why it is not one."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "security.md"
TEST_ID = re.compile(r"`(tests/[\w/]+\.py)::([\w]+)`")


def _section(title: str) -> list[list[str]]:
    """The rows (cells) of the first table under the heading ``title``, header and rule left out."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    rows = [line for line in text[start : end if end != -1 else None].splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


@cache
def _tests_in(path: str) -> frozenset[str]:
    """The names of the test functions a test file defines (module level and in classes)."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return frozenset(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    )


def _promises() -> list[list[str]]:
    return _section("What backs each promise")


def test_the_page_has_a_table_of_promises_and_one_of_non_promises():
    assert len(_promises()) >= 10
    assert len(_section("What is not promised, and why")) >= 5


@pytest.mark.parametrize("row", _promises(), ids=lambda row: row[0][:40])
def test_every_promise_names_tests_that_exist(row):
    promise, backed_by = row
    ids = TEST_ID.findall(backed_by)
    assert ids, f"the promise {promise!r} names no test (write them as `tests/test_x.py::test_name`)"
    for path, name in ids:
        assert (ROOT / path).is_file(), f"{promise!r}: {path} does not exist"
        assert name in _tests_in(path), f"{promise!r}: {path} has no test named {name}"


@pytest.mark.parametrize("row", _section("What is not promised, and why"), ids=lambda row: row[0][:40])
def test_every_non_promise_says_why(row):
    what, why = row
    assert what and len(why.split()) >= 8, f"the non-promise {what!r} does not say why"


def test_a_missing_test_id_is_caught():
    assert TEST_ID.findall("`tests/test_verify.py::test_nothing_like_this`") == [
        ("tests/test_verify.py", "test_nothing_like_this")
    ]
    assert "test_nothing_like_this" not in _tests_in("tests/test_verify.py")
