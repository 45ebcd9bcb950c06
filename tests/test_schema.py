"""memlab.storage.schema: a SQLite store's tables and triggers, and the meta check made on open."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlab.errors import SchemaError
from memlab.storage.schema import (
    FORMAT,
    LATE_TRIGGERS,
    SCHEMA_VERSION,
    TABLES,
    TRIGGERS,
    add_late_objects,
    check_meta_values,
    ensure_schema,
    missing_objects,
)


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    with contextlib.closing(sqlite3.connect(":memory:", isolation_level=None)) as conn:
        yield conn


def test_a_new_schema_has_every_table_and_trigger_and_its_meta(db):
    meta = ensure_schema(db, "snowball", "lattice global-statistics")
    assert missing_objects(db) == []
    assert (meta["format"], meta["schema_version"], meta["analyzer"]) == (FORMAT, str(SCHEMA_VERSION), "snowball")
    assert len(meta["chain_genesis"]) == 64
    assert ensure_schema(db, "snowball", "lattice global-statistics") == meta  # reopened: checked, not made again


def test_a_new_store_has_the_schema_text_that_sqlite_utils_wrote(db):
    # A new store's tables are written out as SQL (no sqlite-utils import on a first save); a file sqlite-utils
    # created (the wave-3 fixture, from before the integrity columns) must have the same schema, byte for byte.
    # Guards: a column's type, NOT NULL, DEFAULT, REFERENCES or order, or an index, drifting from those files.
    ensure_schema(db)
    fixture = Path(__file__).parent / "fixtures" / "store-v3-wave3.db"
    with contextlib.closing(sqlite3.connect(f"file:{fixture}?mode=ro", uri=True)) as old:
        written = dict(
            old.execute("SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'fts%' AND name <> 'label_views'")
        )
    late = {"sessions": ',\n   "floor" TEXT', "memories": ',\n   "distrust" TEXT'}  # LATE_COLUMNS, as created now
    new = {name: sql for name, sql in db.execute("SELECT name, sql FROM sqlite_master")}
    assert new.keys() == written.keys()
    for name, sql in new.items():
        assert sql is None or late.get(name, "") in sql
        expected = written[name] if sql is None or name not in late else written[name][:-2] + late[name] + "\n)"
        assert sql == expected, name


def test_a_database_holding_other_tables_is_refused(db):
    db.execute("CREATE TABLE customers (id)")
    with pytest.raises(SchemaError, match=r"not a memlab store: .*\(customers\)"):
        ensure_schema(db)


def test_a_missing_table_or_trigger_is_named_on_open(db):
    # Guards: schema.missing_objects checking tables only (a dropped append-only trigger then goes unnoticed).
    ensure_schema(db)
    db.execute("DROP TRIGGER audit_no_delete")
    db.execute("DROP TABLE vectors")
    assert missing_objects(db) == ["table vectors", "trigger audit_no_delete"]
    with pytest.raises(SchemaError, match="damaged or tampered with: table vectors, trigger audit_no_delete"):
        ensure_schema(db)


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("UPDATE audit SET tool = 'x'", "append-only"),
        ("DELETE FROM audit", "append-only"),
        (
            "INSERT OR REPLACE INTO audit (seq, at, session_id, agent, taint, tool, outcome, hash) "
            "VALUES (1, 'a', 's', 'm', '0', 't', 'ok', 'h')",
            "append-only",
        ),
        ("DELETE FROM memories", "never changes"),
        ("UPDATE memories SET content = 'forged'", "never changes"),
        ("UPDATE memories SET classification = 0", "never changes"),
    ],
)
def test_the_triggers_refuse_rewriting_history(db, statement, message):
    ensure_schema(db)
    db.execute("INSERT INTO agents (id, name) VALUES (1, 'main')")
    db.execute(
        "INSERT INTO memories (id, agent_id, key, content, tags, classification, version, saved_at, saved_by) "
        "VALUES (1, 1, 'k', 'v', '[]', 2, 1, 't', 's')"
    )
    db.execute(
        "INSERT INTO audit (seq, at, session_id, agent, taint, tool, outcome, hash) "
        "VALUES (1, 'a', 's', 'm', '0', 't', 'ok', 'h')"
    )
    with pytest.raises(sqlite3.IntegrityError, match=message):
        db.execute(statement)


def test_a_deletion_is_final(db):
    ensure_schema(db)
    db.execute("INSERT INTO agents (id, name) VALUES (1, 'main')")
    db.execute(
        "INSERT INTO memories (id, agent_id, key, content, tags, classification, version, saved_at, saved_by) "
        "VALUES (1, 1, 'k', 'v', '[]', 0, 1, 't', 's')"
    )
    db.execute("UPDATE memories SET deleted_at = 'later', deleted_by = 's' WHERE id = 1")
    with pytest.raises(sqlite3.IntegrityError, match="a deletion is final"):
        db.execute("UPDATE memories SET deleted_at = NULL WHERE id = 1")


def test_late_triggers_are_added_once(db):
    ensure_schema(db)
    for name in LATE_TRIGGERS:
        db.execute(f"DROP TRIGGER {name}")
    assert missing_objects(db) == [f"trigger {name}" for name in LATE_TRIGGERS]
    assert add_late_objects(db) is True
    assert add_late_objects(db) is False
    assert missing_objects(db) == []
    assert set(LATE_TRIGGERS) <= set(TRIGGERS) and "audit" in TABLES


META = {"format": FORMAT, "schema_version": str(SCHEMA_VERSION), "analyzer": "porter", "views": "lattice"}


@pytest.mark.parametrize(
    ("changed", "message"),
    [
        ({"format": "memlab-folder"}, "format is 'memlab-folder', expected 'memlab'"),
        ({"schema_version": "three"}, "schema version 'three'"),
        ({"schema_version": str(SCHEMA_VERSION + 1)}, "written by a newer memlab"),
        ({"schema_version": "2"}, "memlab migrate OLD NEW"),
        ({"analyzer": "trigram"}, "analyzer 'trigram', not 'porter'"),
        ({"views": "lattice global-statistics"}, "open it with the policy that created it"),
    ],
)
def test_check_meta_values_names_what_differs(changed, message):
    with pytest.raises(SchemaError, match=message):
        check_meta_values(META | changed, FORMAT, SCHEMA_VERSION, "porter", "lattice")
    assert check_meta_values(dict(META), FORMAT, SCHEMA_VERSION, "porter", "lattice") == META
