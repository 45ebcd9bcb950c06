"""memlab.storage.snapshots: an in-memory image of a SQLite database, and putting it back page for page."""

from __future__ import annotations

import contextlib
import sqlite3

from memlab.storage.snapshots import Snapshot, put_back, take


def rows(db: sqlite3.Connection) -> list[tuple]:
    return db.execute("SELECT * FROM t ORDER BY id").fetchall()


def test_put_back_restores_the_database_as_it_was_taken():
    # Guards: snapshots.take returning the live connection instead of a copy (the image then changes with it).
    with contextlib.closing(sqlite3.connect(":memory:", isolation_level=None)) as db:
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
        db.execute("INSERT INTO t (v) VALUES ('a'), ('b')")
        image = take(db)
        db.execute("INSERT INTO t (v) VALUES ('c')")
        db.execute("UPDATE t SET v = 'changed' WHERE id = 1")
        db.execute("CREATE TABLE later (x)")
        put_back(image, db)
        assert rows(db) == [(1, "a"), (2, "b")]
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'later'").fetchall() == []
        db.execute("INSERT INTO t (v) VALUES ('d')")
        assert rows(db)[-1] == (3, "d")  # the ids go on from the image's
        put_back(image, db)  # an image can be put back again
        assert len(rows(db)) == 2


def test_snapshots_compare_by_identity():
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        first, second = take(db), take(db)
        assert isinstance(first, Snapshot) and first != second and first == first
