"""``migrate``: a single-file store (schema 1 or 2) becomes a store folder, one file per agent, nothing lost.

Every version (deleted ones too, with who and when), every session and taint event, and every audit row
move to their agent's file in their original order; the effective views and level indexes are rebuilt
from the versions. Audit rows keep every field but ``seq``, which each agent's file numbers anew (in the
original order), and are chained anew: a schema-1 file had no chain, so the chain of a migrated store
vouches for the migration onwards. Each version gets its commitment, and each save and delete in the
audit the digest of the version it wrote. The source file is only read, and the target appears only complete
(it is written under a hidden name and renamed at the end).

Examples:
    >>> migrate("tests/fixtures/store-v1.db", tmp / "memories")
    {'agents': 4, 'sessions': 8, 'taint_events': 4, 'versions': 24, 'audit_rows': 40}
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

from memlab.errors import InvalidArgument, SchemaError
from memlab.search.analyzers import Analyzer
from memlab.storage.copy_in import AUDIT_COLUMNS, VERSION_COLUMNS, AgentRows
from memlab.storage.folder import FolderStorage
from memlab.viewrules import ViewRules

__all__ = ["migrate"]

_CONTEXT_COLUMNS = ("source", "occurred_at", "index_source", "index_when")  # since schema 3
READABLE_VERSIONS = (1, 2, 3)


def migrate(
    source: str | Path,
    target: str | Path,
    *,
    rules: ViewRules | None = None,
    analyzer: Analyzer | str | None = None,
    notify: Callable[[str], object] = lambda message: None,
) -> dict[str, int]:
    """Copy the single-file store ``source`` into a new store folder ``target``.

    The folder is written under a hidden sibling name (``.NAME.migrating``) and renamed to ``target`` only
    once complete, so a migrate that is killed or fails leaves no ``target`` that would open, and verify, with
    some of the agents missing. A later migrate into the same target removes what such a run left.

    Args:
        source: a memlab store file of schema 1 (memlab 0.1), 2 or 3.
        target: a folder that does not exist yet.
        rules: the views' rules (the lattice's by default); they must be the ones ``source`` was built for.
        analyzer: the analyzer ``source`` was indexed with (read from the file when None).
        notify: told, in a sentence, of the unfinished folder of an earlier migrate being removed.
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
    rules = rules or ViewRules.lattice()
    with contextlib.closing(_open_source(source)) as old:
        meta = dict(old.execute("SELECT name, value FROM memlab_meta").fetchall())
        if meta.get("views") != rules.signature:
            raise SchemaError(f"{source} was built for views {meta.get('views')!r}, not {rules.signature!r}")
        staging = _unfinished(target)
        if staging.exists():
            shutil.rmtree(staging)
            notify(f"removed {staging}, left by an earlier migrate into {target} that did not finish")
        new = FolderStorage(staging, rules=rules, analyzer=analyzer or meta.get("analyzer"))
        counts = {"agents": 0, "sessions": 0, "taint_events": 0, "versions": 0, "audit_rows": 0}
        try:
            for agent in _agents(old):
                counts["agents"] += 1
                for name, moved in _move_agent(old, new, agent).items():
                    counts[name] += moved
        finally:
            new.close()
    if target.exists():  # made by someone else meanwhile: rename would merge into an empty folder
        raise InvalidArgument(f"{target} appeared while migrating: the migrated store is left in {staging}")
    staging.rename(target)
    return counts


def _unfinished(target: Path) -> Path:
    """Where a migrate into ``target`` writes until it is complete: a hidden folder beside it."""
    return target.with_name(f".{target.name}.migrating")


def _open_source(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        meta = dict(conn.execute("SELECT name, value FROM memlab_meta").fetchall())
    except sqlite3.DatabaseError as error:
        raise SchemaError(f"cannot read {path} as a memlab store: {error}") from error
    if meta.get("format") != "memlab" or meta.get("schema_version") not in {str(v) for v in READABLE_VERSIONS}:
        conn.close()
        raise SchemaError(f"{path} is not a memlab store file of schema {' or '.join(map(str, READABLE_VERSIONS))}")
    return conn


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
    present = {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
    columns = [f"m.{c}" if c in present or c not in _CONTEXT_COLUMNS else "NULL" for c in VERSION_COLUMNS.split(", ")]
    versions = conn.execute(
        f"SELECT {', '.join(columns)} FROM memories m "
        "JOIN agents a ON a.id = m.agent_id WHERE a.name = ? ORDER BY m.id",
        (agent,),
    ).fetchall()
    audit = conn.execute(f"SELECT {AUDIT_COLUMNS} FROM audit WHERE agent = ? ORDER BY seq", (agent,)).fetchall()
    for session_id, _agent, taint, created_at in sessions:
        new.write_catalogue(
            "INSERT INTO sessions (id, agent, taint, created_at) VALUES (?, ?, ?, ?)",
            (session_id, agent, taint, created_at),
        )
    new.agent_storage(agent).copy_in(agent, AgentRows(sessions, events, versions, audit))
    return {"sessions": len(sessions), "taint_events": len(events), "versions": len(versions), "audit_rows": len(audit)}
