"""``memlab.storage.opening``: a path refused before SQLite touches it; a schema created in one committed
transaction, read again as it is, and nothing left open when a file is refused."""

from __future__ import annotations

import sqlite3

import pytest

from memlab.errors import SchemaError
from memlab.search.analyzers import get
from memlab.storage.opening import check_path, check_schema
from memlab.viewrules import ViewRules


def _connect(path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


@pytest.mark.parametrize(
    ("name", "message"),
    [(".", "is a folder, not a store file"), ("missing/store.db", "its folder .* does not exist")],
    ids=["folder", "no-folder"],
)
def test_a_path_that_cannot_be_a_store_file_is_refused(tmp_path, name, message):
    # Guards: check_path without its is_dir check (seen failing: a folder passed, for SQLite to fail on).
    with pytest.raises(SchemaError, match=message):
        check_path(tmp_path / name)


def test_a_new_file_gets_its_schema_in_one_committed_transaction(tmp_path):
    # Guards: opening._transaction without its COMMIT (seen failing: the connection left in a transaction).
    conn = _connect(tmp_path / "store.db")
    meta = check_schema(conn, tmp_path / "store.db", get("porter"), ViewRules.lattice())
    assert not conn.in_transaction
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    again = _connect(tmp_path / "store.db")
    assert check_schema(again, tmp_path / "store.db", get("porter"), ViewRules.lattice()) == meta
    assert meta["chain_genesis"]


def test_a_file_holding_no_memlab_tables_is_refused_with_nothing_left_open(tmp_path):
    # Guards: opening._transaction without its ROLLBACK (seen failing: the refused file's connection stayed in a
    # transaction, holding the write lock).
    path = tmp_path / "store.db"
    _connect(path).execute("PRAGMA user_version = 7")  # a non-empty file with no table
    conn = _connect(path)
    with pytest.raises(SchemaError, match="holds no memlab tables"):
        check_schema(conn, path, get("porter"), ViewRules.lattice())
    assert not conn.in_transaction


def test_a_file_for_other_views_is_refused(tmp_path):
    path = tmp_path / "store.db"
    check_schema(_connect(path), path, get("porter"), ViewRules.lattice())
    with pytest.raises(SchemaError):
        check_schema(_connect(path), path, get("porter"), ViewRules(global_statistics=True))
