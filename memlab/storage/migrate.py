"""``migrate``: a single-file store becomes a store folder, one file per agent, nothing lost.

Every version (deleted ones too, with who and when), every session and taint event, and every audit row
move to their agent's file in their original order; the effective views and level indexes are rebuilt
from the versions. Audit rows keep every field but ``seq``, which each agent's file numbers anew (in the
original order). The source file is only read.

>>> summary = migrate("old.db", "memories")  # doctest: +SKIP
>>> summary["agents"], summary["versions"], summary["audit_rows"]
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from memlab.errors import InvalidArgument, SchemaError
from memlab.levels import Level
from memlab.search.analyzers import Analyzer
from memlab.storage.folder import FolderStorage
from memlab.storage.rules import ViewRules
from memlab.storage.sqlite import SqliteStorage, live_versions

__all__ = ["migrate"]

_VERSION_COLUMNS = (
    "key, content, tags, classification, version, saved_at, saved_by, deleted_at, deleted_by, "
    "index_key, index_content, index_tags"
)
_AUDIT_COLUMNS = "at, session_id, agent, taint, tool, key, query, outcome, records, notes, message"


def migrate(
    source: str | Path, target: str | Path, *, rules: ViewRules | None = None, analyzer: Analyzer | str | None = None
) -> dict[str, Any]:
    """Copy the single-file store ``source`` into a new store folder ``target``.

    Args:
        source: a memlab store file of the current schema.
        target: a folder that does not exist yet.
        rules: the views' rules (the lattice's by default); they must be the ones ``source`` was built for.
        analyzer: the analyzer ``source`` was indexed with (read from the file when None).
    Returns:
        Counts of what moved: agents, sessions, taint events, versions, audit rows.
    Raises:
        SchemaError: ``source`` is not a memlab store file this version can read.
        InvalidArgument: ``target`` exists already.
    """
    source, target = Path(source), Path(target)
    if not source.is_file():
        raise SchemaError(f"{source} is not a memlab store file")
    if target.exists():
        raise InvalidArgument(f"{target} exists already: migrate writes a new store folder")
    if analyzer is None:
        analyzer = _stored_analyzer(source)
    old = SqliteStorage(source, rules=rules, analyzer=analyzer)
    new = FolderStorage(target, rules=old.rules, analyzer=old.analyzer)
    counts = {"agents": 0, "sessions": 0, "taint_events": 0, "versions": 0, "audit_rows": 0}
    try:
        for agent in _agents(old.conn):
            counts["agents"] += 1
            for name, moved in _move_agent(old.conn, new, agent).items():
                counts[name] += moved
    finally:
        old.close()
        new.close()
    return counts


def _stored_analyzer(path: Path) -> str:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            row = conn.execute("SELECT value FROM memlab_meta WHERE name = 'analyzer'").fetchone()
    except sqlite3.DatabaseError as error:
        raise SchemaError(f"cannot open {path} as a memlab store: {error}") from error
    if row is None:
        raise SchemaError(f"{path} is not a memlab store: it names no analyzer")
    return row[0]


def _agents(conn: sqlite3.Connection) -> list[str]:
    """Every agent the file mentions: those that saved, started a session, or were audited."""
    rows = conn.execute("SELECT name FROM agents UNION SELECT agent FROM sessions UNION SELECT agent FROM audit")
    return sorted(row[0] for row in rows)


def _move_agent(conn: sqlite3.Connection, new: FolderStorage, agent: str) -> dict[str, int]:
    sessions = conn.execute(
        "SELECT id, agent, taint, created_at FROM sessions WHERE agent = ? ORDER BY created_at, id", (agent,)
    ).fetchall()
    events = conn.execute(
        "SELECT t.session_id, t.at, t.from_level, t.to_level, t.reason FROM taint_events t "
        "JOIN sessions s ON s.id = t.session_id WHERE s.agent = ? ORDER BY t.id",
        (agent,),
    ).fetchall()
    versions = conn.execute(
        f"SELECT {', '.join('m.' + c for c in _VERSION_COLUMNS.split(', '))} FROM memories m "
        "JOIN agents a ON a.id = m.agent_id WHERE a.name = ? ORDER BY m.id",
        (agent,),
    ).fetchall()
    audit = conn.execute(f"SELECT {_AUDIT_COLUMNS} FROM audit WHERE agent = ? ORDER BY seq", (agent,)).fetchall()
    for session_id, _agent, taint, created_at in sessions:
        new._catalogue_write(
            "INSERT INTO sessions (id, agent, taint, created_at) VALUES (?, ?, ?, ?)",
            (session_id, agent, taint, created_at),
        )
    storage = new._file(agent)
    with storage._write():
        storage.conn.executemany("INSERT INTO sessions (id, agent, taint, created_at) VALUES (?, ?, ?, ?)", sessions)
        storage.conn.executemany(
            "INSERT INTO taint_events (session_id, at, from_level, to_level, reason) VALUES (?, ?, ?, ?, ?)", events
        )
        if versions:
            agent_id, indexed = storage._agent(agent, create=True)
            storage.conn.executemany(
                f"INSERT INTO memories (agent_id, {_VERSION_COLUMNS}) VALUES (?, {', '.join('?' * 12)})",
                [(agent_id, *row) for row in versions],
            )
            keys = sorted({row[0] for row in versions})
            live = live_versions(storage._latest(agent_id, keys))
            storage._refresh(agent_id, keys, {}, live, indexed, changed=min(Level))
            if storage.rules.lattice_visibility:  # indexes for the levels in use, filled from the views
                for level in sorted({Level(row[3]) for row in versions}):
                    indexed = storage._start_index(agent_id, level, indexed)
        storage.conn.executemany(f"INSERT INTO audit ({_AUDIT_COLUMNS}) VALUES ({', '.join('?' * 11)})", audit)
    return {"sessions": len(sessions), "taint_events": len(events), "versions": len(versions), "audit_rows": len(audit)}
