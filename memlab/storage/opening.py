"""Opening a SQLite file as a memlab store: a path refused before SQLite touches it, and the schema read,
upgraded, completed or created, each write only to a file known to be this store's or empty."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from memlab.errors import SchemaError
from memlab.search.analyzers import Analyzer
from memlab.storage.schema import (
    FORMAT,
    SCHEMA_VERSION,
    add_late_objects,
    check_meta,
    ensure_schema,
    lacks_late_objects,
)
from memlab.storage.upgrade import UPGRADABLE, upgrade
from memlab.viewrules import ViewRules

__all__ = ["check_access", "check_path", "check_schema"]


def check_access(path: Path) -> None:
    """Refuse an existing store file memlab may not read and write.

    Raises:
        SchemaError: the file is read-only to this process.
    """
    if not os.access(path, os.R_OK | os.W_OK):
        raise SchemaError(f"{path} is read-only: memlab writes an audit row for every call, so it needs write access")


def check_path(path: Path) -> None:
    """Refuse, before SQLite touches it, a path that cannot be a store file memlab may write.

    Raises:
        SchemaError: the path is a folder, its folder is missing or read-only, or the file is read-only.
    """
    if path.is_dir():
        raise SchemaError(f"{path} is a folder, not a store file")
    if not path.parent.is_dir():
        raise SchemaError(f"cannot create the store {path}: its folder {path.parent} does not exist")
    if path.exists():
        check_access(path)
    elif not os.access(path.parent, os.W_OK):
        raise SchemaError(f"cannot create the store {path}: its folder is read-only")


def check_schema(conn: sqlite3.Connection, path: Path | None, analyzer: Analyzer, rules: ViewRules) -> dict[str, str]:
    """Read and check the schema; create it, under the write lock, only in a new, empty database.

    Args:
        conn: the connection to the file (or the in-memory database), not yet written to.
        path: the file (None in memory).
        analyzer: the analyzer the store's indexes must have.
        rules: the rules its views must follow.

    Returns:
        ``memlab_meta`` as name -> value.

    Raises:
        SchemaError: the database is not a memlab store, or one this code, analyzer or rules cannot open.
    """
    objects = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")]
    if "memlab_meta" in objects:
        if _schema_version(conn) == UPGRADABLE:
            with _transaction(conn):
                if _schema_version(conn) == UPGRADABLE:  # not upgraded meanwhile by another process
                    upgrade(conn, analyzer, rules.signature)
        if _schema_version(conn) == SCHEMA_VERSION and lacks_late_objects(conn):
            # Only a file known to be this store's, for this analyzer and these views, is written to.
            check_meta(conn, FORMAT, SCHEMA_VERSION, analyzer.name, rules.signature)
            with _transaction(conn):
                add_late_objects(conn)
        return ensure_schema(conn, analyzer.name, rules.signature)
    if objects:
        raise SchemaError(f"not a memlab store: the database already holds other tables ({', '.join(objects[:5])})")
    if path is not None and path.stat().st_size > 0:
        # Another process may be creating this store right now: once its write lock is free, the schema
        # is there. A file that is still without it holds something else (a truncated store, say).
        with _transaction(conn):
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memlab_meta'").fetchone():
                raise SchemaError(f"not a memlab store: {path} is not empty but holds no memlab tables (truncated?)")
        return ensure_schema(conn, analyzer.name, rules.signature)
    if path is not None:
        conn.execute("PRAGMA journal_mode=wal")
    with _transaction(conn):
        return ensure_schema(conn, analyzer.name, rules.signature)


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taking the write lock up front so a concurrent opener waits for this one's schema.

    The storage's own transactions (``SqliteStorage._write``) also revalidate its caches and write its pending
    sessions; an opening storage has neither yet.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _schema_version(conn: sqlite3.Connection) -> int | None:
    row = conn.execute("SELECT value FROM memlab_meta WHERE name = 'schema_version'").fetchone()
    return int(row[0]) if row is not None and str(row[0]).isdigit() else None
