"""The sqlite schema: tables, the append-only audit, and the version check made on open.

Opening an existing store and creating a new one use the bare ``sqlite3`` connection: no sqlite-utils (which imports
pandas and numpy when it loads).
"""

from __future__ import annotations

import sqlite3

from memlab.errors import SchemaError
from memlab.storage.chain import genesis

__all__ = [
    "SCHEMA_VERSION",
    "FORMAT",
    "TABLES",
    "TRIGGERS",
    "missing_objects",
    "LATE_TRIGGERS",
    "add_late_objects",
    "lacks_late_objects",
    "LATE_COLUMNS",
    "check_meta",
    "check_meta_values",
    "earlier_schema",
    "ensure_schema",
    "create_vectors",
]

SCHEMA_VERSION = 3
FORMAT = "memlab"


def ensure_schema(conn: sqlite3.Connection, analyzer: str = "porter", views: str = "lattice") -> dict[str, str]:
    """Check the store's schema, creating it in an empty database; return the meta table.

    Args:
        analyzer: the name of the analyzer a new store indexes with.
        views: what the materialised views depend on (``ViewRules.signature``); a store built for
            one signature cannot be read under another.
    Raises:
        SchemaError: the database holds other tables, a memlab schema newer than this code, or views
            built under a policy with other visibility rules, or with another analyzer.
    """
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "memlab_meta" not in tables:
        if tables:
            shown = ", ".join(sorted(tables)[:5])
            raise SchemaError(f"not a memlab store: the database already holds other tables ({shown})")
        _create(conn, analyzer, views)
    meta = check_meta(conn, FORMAT, SCHEMA_VERSION, analyzer, views)
    missing = missing_objects(conn)
    if missing:
        raise SchemaError(
            f"this store has been damaged or tampered with: {', '.join(missing)} missing (`memlab verify` tells more)"
        )
    return meta


def check_meta(db: sqlite3.Connection, form: str, schema_version: int, analyzer: str, views: str) -> dict[str, str]:
    """Read ``memlab_meta`` and check it names this format, a schema version this code reads, ``analyzer``
    and ``views``; return it. ``db`` is anything with sqlite3's ``execute`` (a connection, a sqlite-utils
    ``Database``).

    Raises:
        SchemaError: naming what differs and what to do about it.
    """
    return check_meta_values(
        dict(db.execute("SELECT name, value FROM memlab_meta").fetchall()), form, schema_version, analyzer, views
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
        raise SchemaError(earlier_schema(version))
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


def earlier_schema(version: int) -> str:
    """What opening (``serve``) and ``verify`` say of a store from before the audit chain, and the way forward."""
    return (
        f"this store has schema version {version}, from an earlier memlab (no tamper-evident audit); "
        "`memlab migrate OLD NEW` copies it into a store folder of this version"
    )


def _create(conn: sqlite3.Connection, analyzer: str, views: str) -> None:
    """Create a new store's tables, indexes and triggers (``CREATE_TABLES`` then ``TRIGGERS``) and its meta rows."""
    for sql in CREATE_TABLES:
        conn.execute(sql)
    conn.executemany(
        "INSERT INTO memlab_meta (name, value) VALUES (?, ?)",
        [
            ("format", FORMAT),
            ("schema_version", str(SCHEMA_VERSION)),
            ("analyzer", analyzer),
            ("views", views),
            ("chain_genesis", genesis()),
        ],
    )
    create_vectors(conn)
    for name, sql in TRIGGERS.items():
        conn.execute(f"CREATE TRIGGER {name} {sql}")


def _table(name: str, columns: str) -> str:
    """``CREATE TABLE`` written as sqlite-utils wrote it when it created memlab's tables: files created before and
    after keep one schema text (``sqlite_master``), byte for byte."""
    return f'CREATE TABLE "{name}" (\n' + ",\n".join(f"   {column}" for column in columns.split("; ")) + "\n)"


# Written out as SQL: sqlite-utils, which created them until a new store's first save had to import it (and pandas
# and numpy with it, a quarter of a second), wrote exactly this text.
CREATE_TABLES = (
    _table("memlab_meta", '"name" TEXT PRIMARY KEY; "value" TEXT NOT NULL'),
    # indexed_levels: bit mask of the levels whose FTS5 index is kept (those that ever had a save).
    _table("agents", '"id" INTEGER PRIMARY KEY; "name" TEXT NOT NULL; "indexed_levels" INTEGER DEFAULT 0'),
    'CREATE UNIQUE INDEX "idx_agents_name"\n    ON "agents" ("name")',
    # floor: the least trusted grade the session reads (NULL: every grade).
    _table(
        "sessions",
        '"id" TEXT PRIMARY KEY; "agent" TEXT NOT NULL; "taint" TEXT NOT NULL; "created_at" TEXT NOT NULL; "floor" TEXT',
    ),
    _table(
        "taint_events",
        '"id" INTEGER PRIMARY KEY; "session_id" TEXT NOT NULL REFERENCES "sessions"("id"); "at" TEXT NOT NULL; '
        '"from_level" TEXT NOT NULL; "to_level" TEXT NOT NULL; "reason" TEXT',
    ),
    _table(
        "memories",
        '"id" INTEGER PRIMARY KEY; "agent_id" INTEGER NOT NULL REFERENCES "agents"("id"); "key" TEXT NOT NULL; '
        '"content" TEXT NOT NULL; "tags" TEXT NOT NULL; "classification" INTEGER NOT NULL; "version" INTEGER NOT NULL; '
        '"saved_at" TEXT NOT NULL; "saved_by" TEXT NOT NULL; "deleted_at" TEXT; "deleted_by" TEXT; '
        # Context the host gave: the message(s) the memory came from, and when it happened (ISO 8601).
        '"source" TEXT; "occurred_at" TEXT; '
        # What a pre-stemmed analyzer indexes instead of key, content, tags and source (NULL otherwise);
        # occurred_at written out as words (memlab.search.ranking.when_words; pre-stemmed if the analyzer is);
        # the tags that are one word each, lower-cased (pre-stemmed if the analyzer is): the tag boost's column.
        '"index_key" TEXT; "index_content" TEXT; "index_tags" TEXT; "index_source" TEXT; "index_when" TEXT; '
        '"index_tag_words" TEXT; '
        # HMAC-SHA256(salt, content ‖ tags ‖ context): binds a version to the audit chain (memlab.storage.seal).
        '"salt" BLOB; "commitment" TEXT; "purged_at" TEXT; '
        # The sources the host named when it lowered the saving session (a JSON array; NULL when trusted).
        '"distrust" TEXT',
    ),
    'CREATE UNIQUE INDEX "idx_memories_agent_id_key_classification_version"\n'
    '    ON "memories" ("agent_id", "key", "classification", "version")',
    # The effective view, materialised: for each agent and taint T, the version a session at T sees.
    # A key's rows for the four taints share one page: a save touches them together.
    "CREATE TABLE effective (agent_id INTEGER NOT NULL, key TEXT NOT NULL, taint INTEGER NOT NULL, "
    "memory_id INTEGER NOT NULL, PRIMARY KEY (agent_id, key, taint)) WITHOUT ROWID",
    _table(
        "audit",
        '"seq" INTEGER PRIMARY KEY; "at" TEXT NOT NULL; "session_id" TEXT NOT NULL; "agent" TEXT NOT NULL; '
        '"taint" TEXT NOT NULL; "tool" TEXT NOT NULL; "key" TEXT; "query" TEXT; "outcome" TEXT NOT NULL; '
        '"records" TEXT; "notes" TEXT; "message" TEXT; "digest" TEXT; "hash" TEXT NOT NULL',
    ),
)
"""The tables and indexes of a new store but ``vectors`` (``create_vectors``, which an upgrade adds too)."""


def create_vectors(db: sqlite3.Connection) -> None:
    """Create the dense vectors' table (one row per saved version with vectors)."""
    # A version's dense vectors (float32, unit length; one, or as many as a FieldEmbedder made, none included) in one
    # blob, under the model that made them: memlab.search.dense, memlab.storage.vectors.
    db.execute(
        "CREATE TABLE vectors (memory_id INTEGER PRIMARY KEY REFERENCES memories(id), model TEXT NOT NULL, "
        "vector BLOB NOT NULL)"
    )


_APPEND_ONLY = "BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END"
_FROZEN = "BEGIN SELECT RAISE(ABORT, 'a memory version never changes; only a delete or a purge marks it'); END"
_FINAL = "BEGIN SELECT RAISE(ABORT, 'a deletion is final: deleted_at and deleted_by never change once set'); END"
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
        "BEFORE UPDATE OF content, tags, source, occurred_at, index_key, index_content, index_tags, index_source, "
        "index_when, index_tag_words, salt ON memories "
        f"WHEN NEW.purged_at IS NULL {_FROZEN}"
    ),
    # A purge marks only versions not yet deleted, so nothing memlab does ever changes a set deletion.
    "memories_deletion_final": (
        "BEFORE UPDATE OF deleted_at, deleted_by ON memories WHEN OLD.deleted_at IS NOT NULL "
        f"AND (NEW.deleted_at IS NOT OLD.deleted_at OR NEW.deleted_by IS NOT OLD.deleted_by) {_FINAL}"
    ),
}
LATE_TRIGGERS = ("memories_deletion_final",)
"""Triggers schema 3 gained after its first files were written: such a file gains them when this memlab opens it
(``add_late_objects``); until then ``verify`` reports them missing, as it would a dropped one."""
LATE_COLUMNS = {"memories": ("distrust", "TEXT"), "sessions": ("floor", "TEXT")}
"""Columns schema 3 gained with integrity (table -> column, type): a file written before gains them, empty (every
version trusted, every session reading every grade), when this memlab opens it (``add_late_objects``)."""
TABLES = ("memlab_meta", "agents", "sessions", "taint_events", "memories", "effective", "audit", "vectors")


def lacks_late_objects(db: sqlite3.Connection) -> bool:
    """Whether a file lacks one of the ``LATE_TRIGGERS`` or ``LATE_COLUMNS`` (a cheap check made on every open)."""
    names = ", ".join("?" * len(LATE_TRIGGERS))
    query = f"SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ({names})"
    if db.execute(query, LATE_TRIGGERS).fetchone()[0] < len(LATE_TRIGGERS):
        return True
    return any(
        not db.execute("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", (table, column)).fetchone()
        for table, (column, _) in LATE_COLUMNS.items()
    )


def add_late_objects(db: sqlite3.Connection) -> bool:
    """Create the ``LATE_TRIGGERS`` and ``LATE_COLUMNS`` a file lacks, in the caller's write transaction; True if
    it lacked any."""
    present = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    missing = [name for name in LATE_TRIGGERS if name not in present]
    for name in missing:
        db.execute(f"CREATE TRIGGER {name} {TRIGGERS[name]}")
    for table, (column, kind) in LATE_COLUMNS.items():
        if not db.execute("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", (table, column)).fetchone():
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            missing.append(column)
    return bool(missing)


def missing_objects(db: sqlite3.Connection) -> list[str]:
    """The tables and triggers of the schema that are not in ``db`` (the cheap check made on every open)."""
    present = {(row[0], row[1]) for row in db.execute("SELECT type, name FROM sqlite_master")}
    return [f"table {name}" for name in TABLES if ("table", name) not in present] + [
        f"trigger {name}" for name in TRIGGERS if ("trigger", name) not in present
    ]
