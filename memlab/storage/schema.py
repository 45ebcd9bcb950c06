"""The sqlite schema: tables, the append-only audit, and the version check made on open."""

from __future__ import annotations

import sqlite_utils

from memlab.errors import SchemaError
from memlab.levels import Level
from memlab.search.analyzers import Analyzer
from memlab.storage.chain import genesis

__all__ = [
    "SCHEMA_VERSION",
    "FORMAT",
    "TABLES",
    "TRIGGERS",
    "missing_objects",
    "check_meta",
    "check_meta_values",
    "BM25_WEIGHTS",
    "ensure_schema",
    "fts_table",
    "create_fts_table",
    "indexed_columns",
]

SCHEMA_VERSION = 2
FORMAT = "memlab"

# bm25 weights of the indexed columns (key, content, tags): a word of the key says more than one of the text.
BM25_WEIGHTS = (2.0, 1.0, 1.0)


def fts_table(agent_id: int, taint: Level | None) -> str:
    """The name of the FTS5 index holding the effective view of ``agent_id`` at ``taint``.

    ``taint=None`` names the index over every current version at every level, which only the
    ``global-stats`` policy variant keeps.
    """
    return f"fts_{agent_id}_{'all' if taint is None else taint.name.lower()}"


def ensure_schema(db: sqlite_utils.Database, analyzer: str = "porter", views: str = "lattice") -> dict[str, str]:
    """Check the store's schema, creating it in an empty database; return the meta table.

    Args:
        analyzer: the name of the analyzer a new store indexes with.
        views: what the materialised views depend on (``ViewRules.signature``); a store built for
            one signature cannot be read under another.
    Raises:
        SchemaError: the database holds other tables, a memlab schema newer than this code, or views
            built under a policy with other visibility rules, or with another analyzer.
    """
    tables = set(db.table_names())
    if "memlab_meta" not in tables:
        if tables:
            shown = ", ".join(sorted(tables)[:5])
            raise SchemaError(f"not a memlab store: the database already holds other tables ({shown})")
        _create(db, analyzer, views)
    meta = check_meta(db, FORMAT, SCHEMA_VERSION, analyzer, views)
    missing = missing_objects(db)
    if missing:
        raise SchemaError(
            f"this store has been damaged or tampered with: {', '.join(missing)} missing (`memlab verify` tells more)"
        )
    return meta


def check_meta(db: sqlite_utils.Database, form: str, schema_version: int, analyzer: str, views: str) -> dict[str, str]:
    """Read ``memlab_meta`` and check it names this format, a schema version this code reads, ``analyzer``
    and ``views``; return it.

    Raises:
        SchemaError: naming what differs and what to do about it.
    """
    return check_meta_values(
        {row["name"]: row["value"] for row in db["memlab_meta"].rows}, form, schema_version, analyzer, views
    )


def check_meta_values(
    meta: dict[str, str], form: str, schema_version: int, analyzer: str, views: str
) -> dict[str, str]:
    """``check_meta`` on a store's meta values however they were read (any backend); returns them.

    Raises:
        SchemaError: naming what differs and what to do about it.
    """
    if meta.get("format") != form:
        raise SchemaError(f"not a memlab store: format is {meta.get('format')!r}, expected {form!r}")
    version_text = meta.get("schema_version", "")
    if not version_text.isdigit():
        raise SchemaError(f"not a memlab store this version can read: schema version {version_text[:20]!r}")
    version = int(version_text)
    if version > schema_version:
        raise SchemaError(
            f"this store has schema version {version}, written by a newer memlab; "
            f"this memlab reads schema version {schema_version} — upgrade memlab to open it"
        )
    if version < schema_version:
        raise SchemaError(
            f"this store has schema version {version}, from an earlier memlab (no tamper-evident audit); "
            "`memlab migrate OLD NEW` copies it into a store folder of this version"
        )
    if meta.get("analyzer") != analyzer:
        raise SchemaError(
            f"this store is indexed with analyzer {meta.get('analyzer')!r}, not {analyzer!r}: "
            "open it with the analyzer that created it"
        )
    if meta.get("views") != views:
        raise SchemaError(
            f"this store's views were built for {meta.get('views')!r}, not {views!r}: "
            "open it with the policy that created it"
        )
    return meta


def _create(db: sqlite_utils.Database, analyzer: str, views: str) -> None:
    db["memlab_meta"].create({"name": str, "value": str}, pk="name", not_null={"value"})
    db["memlab_meta"].insert_all(
        [
            {"name": "format", "value": FORMAT},
            {"name": "schema_version", "value": str(SCHEMA_VERSION)},
            {"name": "analyzer", "value": analyzer},
            {"name": "views", "value": views},
            {"name": "chain_genesis", "value": genesis()},
        ]
    )
    # indexed_levels: bit mask of the levels whose FTS5 index is kept (those that ever had a save).
    db["agents"].create(
        {"id": int, "name": str, "indexed_levels": int}, pk="id", not_null={"name"}, defaults={"indexed_levels": 0}
    )
    db["agents"].create_index(["name"], unique=True)
    db["sessions"].create(
        {"id": str, "agent": str, "taint": str, "created_at": str},
        pk="id",
        not_null={"agent", "taint", "created_at"},
    )
    db["taint_events"].create(
        {"id": int, "session_id": str, "at": str, "from_level": str, "to_level": str, "reason": str},
        pk="id",
        not_null={"session_id", "at", "from_level", "to_level"},
        foreign_keys=[("session_id", "sessions", "id")],
    )
    db["memories"].create(
        {
            "id": int,
            "agent_id": int,
            "key": str,
            "content": str,
            "tags": str,
            "classification": int,
            "version": int,
            "saved_at": str,
            "saved_by": str,
            "deleted_at": str,
            "deleted_by": str,
            # What a pre-stemmed analyzer indexes instead of key, content and tags (NULL otherwise).
            "index_key": str,
            "index_content": str,
            "index_tags": str,
            # HMAC-SHA256(salt, content, tags): binds the content to the audit chain (memlab.storage.chain).
            "salt": bytes,
            "commitment": str,
            "purged_at": str,
        },
        pk="id",
        not_null={"agent_id", "key", "content", "tags", "classification", "version", "saved_at", "saved_by"},
        foreign_keys=[("agent_id", "agents", "id")],
    )
    db["memories"].create_index(["agent_id", "key", "classification", "version"], unique=True)
    # The effective view, materialised: for each agent and taint T, the version a session at T sees.
    # A key's rows for the four taints share one page: a save touches them together.
    db.execute(
        "CREATE TABLE effective (agent_id INTEGER NOT NULL, key TEXT NOT NULL, taint INTEGER NOT NULL, "
        "memory_id INTEGER NOT NULL, PRIMARY KEY (agent_id, key, taint)) WITHOUT ROWID"
    )
    db["audit"].create(
        {
            "seq": int,
            "at": str,
            "session_id": str,
            "agent": str,
            "taint": str,
            "tool": str,
            "key": str,
            "query": str,
            "outcome": str,
            "records": str,
            "notes": str,
            "message": str,
            "digest": str,
            "hash": str,
        },
        pk="seq",
        not_null={"at", "session_id", "agent", "taint", "tool", "outcome", "hash"},
    )
    for name, sql in TRIGGERS.items():
        db.execute(f"CREATE TRIGGER {name} {sql}")


_APPEND_ONLY = "BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END"
_FROZEN = "BEGIN SELECT RAISE(ABORT, 'a memory version never changes; only a delete or a purge marks it'); END"
# What the database itself refuses. REPLACE's implicit delete fires no DELETE trigger (recursive_triggers is
# off), so an insert over an existing seq is refused before it happens.
TRIGGERS = {
    "audit_no_update": f"BEFORE UPDATE ON audit {_APPEND_ONLY}",
    "audit_no_delete": f"BEFORE DELETE ON audit {_APPEND_ONLY}",
    "audit_no_replace": f"BEFORE INSERT ON audit WHEN EXISTS (SELECT 1 FROM audit WHERE seq = NEW.seq) {_APPEND_ONLY}",
    "memories_no_delete": f"BEFORE DELETE ON memories {_FROZEN}",
    "memories_frozen": (
        "BEFORE UPDATE OF id, agent_id, key, classification, version, saved_at, saved_by, commitment ON memories "
        + _FROZEN
    ),
    "memories_content_frozen": (
        "BEFORE UPDATE OF content, tags, index_key, index_content, index_tags, salt ON memories "
        f"WHEN NEW.purged_at IS NULL {_FROZEN}"
    ),
}
TABLES = ("memlab_meta", "agents", "sessions", "taint_events", "memories", "effective", "audit")


def missing_objects(db: sqlite_utils.Database) -> list[str]:
    """The tables and triggers of the schema that are not in ``db`` (the cheap check made on every open)."""
    present = {(row[0], row[1]) for row in db.execute("SELECT type, name FROM sqlite_master")}
    return [f"table {name}" for name in TABLES if ("table", name) not in present] + [
        f"trigger {name}" for name in TRIGGERS if ("trigger", name) not in present
    ]


def indexed_columns(analyzer: Analyzer) -> tuple[str, str, str]:
    """The ``memories`` columns an analyzer's FTS5 indexes read: key, content and tags, or their stems."""
    return ("index_key", "index_content", "index_tags") if analyzer.prestemmed else ("key", "content", "tags")


def create_fts_table(db: sqlite_utils.Database, agent_id: int, analyzer: Analyzer, taint: Level | None) -> str:
    """Create the external-content FTS5 index of ``agent_id`` at ``taint``, ranked by weighted bm25.

    Memory rows never change their indexed columns (a save adds a version), so ``memories`` can serve
    as the content table: the index holds only terms and statistics. Indexes are created on first use,
    so an agent's file holds only the levels it uses.
    """
    table = fts_table(agent_id, taint)
    tokenize_sql = "'" + analyzer.tokenize.replace("'", "''") + "'"
    columns = ", ".join(indexed_columns(analyzer))
    rank = "bm25(" + ", ".join(str(weight) for weight in BM25_WEIGHTS) + ")"
    db.execute(
        f'CREATE VIRTUAL TABLE IF NOT EXISTS "{table}" USING fts5('
        f"{columns}, content='memories', content_rowid='id', tokenize={tokenize_sql})"
    )
    db.execute(f'INSERT INTO "{table}" ("{table}", rank) VALUES (\'rank\', ?)', (rank,))
    return table
