"""The in-place upgrade of a schema-2 SQLite store file to this memlab's schema."""

from __future__ import annotations

import json
import sqlite3

from memlab.levels import Level
from memlab.search.analyzers import Analyzer
from memlab.storage.fts_tables import create_fts_table, indexed_columns, tag_words
from memlab.storage.schema import FORMAT, SCHEMA_VERSION, TRIGGERS, check_meta, create_vectors

__all__ = ["UPGRADABLE", "upgrade"]

UPGRADABLE = 2  # the schema version ``upgrade`` brings to this one in place


def upgrade(db: sqlite3.Connection, analyzer: Analyzer, views: str) -> None:
    """Bring a schema-2 file to this version, in the caller's transaction.

    Schema 3 adds the context columns (``source``, ``occurred_at`` and what the index reads of them) and the dense
    vectors' table; every FTS5 index is rebuilt with its five columns from the view it holds. Versions, views and
    the audit chain are untouched (a version without context has the commitment it had).

    Raises:
        SchemaError: the file is not a schema-2 memlab store for this analyzer and these views.
    """
    check_meta(db, FORMAT, UPGRADABLE, analyzer.name, views)
    for column in ("source", "occurred_at", "index_source", "index_when", "index_tag_words"):
        db.execute(f"ALTER TABLE memories ADD COLUMN {column} TEXT")
    create_vectors(db)
    db.execute("DROP TRIGGER memories_content_frozen")
    rows = db.execute("SELECT id, tags FROM memories WHERE purged_at IS NULL").fetchall()
    db.executemany(
        "UPDATE memories SET index_tag_words = ? WHERE id = ?",
        [(tag_words(analyzer, json.loads(tags)), memory_id) for memory_id, tags in rows],
    )
    db.execute(f"CREATE TRIGGER memories_content_frozen {TRIGGERS['memories_content_frozen']}")
    virtual = "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'"
    indexes = [row[0] for row in db.execute(virtual)]
    columns = ", ".join(indexed_columns(analyzer))
    for table in indexes:
        _, agent_id, taint = table.split("_")
        db.execute(f'DROP TABLE "{table}"')
        level = None if taint == "all" else Level[taint.upper()]
        create_fts_table(db, int(agent_id), analyzer, level)
        if level is None:  # every live version at every level
            rows = (
                "SELECT m.id FROM memories m WHERE m.agent_id = ? AND m.deleted_at IS NULL AND m.version = "
                "(SELECT MAX(version) FROM memories o WHERE o.agent_id = m.agent_id AND o.key = m.key "
                "AND o.classification = m.classification)"
            )
            parameters: tuple[int, ...] = (int(agent_id),)
        else:
            rows = "SELECT memory_id FROM effective WHERE agent_id = ? AND taint = ?"
            parameters = (int(agent_id), int(level))
        db.execute(
            f'INSERT INTO "{table}" (rowid, {columns}) SELECT id, {columns} FROM memories '
            f"WHERE id IN ({rows}) ORDER BY id",
            parameters,
        )
    db.execute("UPDATE memlab_meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION),))
