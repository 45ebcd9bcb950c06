"""An agent's rows copied into its file from another store (``migrate``): its sessions, taint events, versions
(each with a new commitment) and audit rows (chained anew, each save and delete with the digest of the version it
wrote), in one transaction, the effective views and level indexes rebuilt from the versions."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memlab.levels import Level
from memlab.records import AuditEvent
from memlab.storage import chain
from memlab.storage.agents import Agents
from memlab.storage.audit import AuditLog
from memlab.storage.indexes import IndexUpkeep
from memlab.storage.live import latest, live_versions
from memlab.viewrules import ViewRules

__all__ = ["AgentRows", "VERSION_COLUMNS", "AUDIT_COLUMNS", "copy_in"]

VERSION_COLUMNS = (
    "key, content, tags, classification, version, saved_at, saved_by, deleted_at, deleted_by, "
    "index_key, index_content, index_tags, source, occurred_at, index_source, index_when"
)
"""A version's columns as another store's file holds them (the context ones NULL where it has none)."""
AUDIT_COLUMNS = "at, session_id, agent, taint, tool, key, query, outcome, records, notes, message"
"""An audit row's columns as another store's file holds them (its seq and hash are this file's own)."""


@dataclass(frozen=True)
class AgentRows:
    """One agent's rows as another store holds them, each list in its original order."""

    sessions: list[tuple[Any, ...]]
    """(id, agent, taint, created_at)"""
    events: list[tuple[Any, ...]]
    """(session_id, at, from_level, to_level, reason)"""
    versions: list[tuple[Any, ...]]
    """``VERSION_COLUMNS``"""
    audit: list[tuple[Any, ...]]
    """``AUDIT_COLUMNS``"""


def copy_in(
    conn: sqlite3.Connection,
    agents: Agents,
    indexes: IndexUpkeep,
    audit_log: AuditLog,
    start_index: Callable[[int, Level, int], int],
    rules: ViewRules,
    agent: str,
    rows: AgentRows,
) -> None:
    """Write ``rows`` of ``agent`` in the caller's write transaction (``SqliteStorage.copy_in``)."""
    conn.executemany("INSERT INTO sessions (id, agent, taint, created_at) VALUES (?, ?, ?, ?)", rows.sessions)
    conn.executemany(
        "INSERT INTO taint_events (session_id, at, from_level, to_level, reason) VALUES (?, ?, ?, ?, ?)", rows.events
    )
    digests = _copy_versions(conn, agents, indexes, start_index, rules, agent, rows.versions) if rows.versions else {}
    audit_log.append(
        [_event(row) for row in rows.audit],
        [digests.get((row[4], _single_ref(row[8]))) if row[7] == "ok" else None for row in rows.audit],
    )


def _copy_versions(
    conn: sqlite3.Connection,
    agents: Agents,
    indexes: IndexUpkeep,
    start_index: Callable[[int, Level, int], int],
    rules: ViewRules,
    agent: str,
    versions: list[tuple[Any, ...]],
) -> dict[tuple[str, str], str]:
    """Insert the versions with their commitments, rebuild views and indexes; return the audit digests."""
    agent_id, indexed = agents.get(agent, create=True)
    rows, digests = [], {}
    for key, content, tags, level, version, saved_at, saved_by, deleted_at, deleted_by, *stems in versions:
        source, occurred_at = stems[3], stems[4]
        salt = chain.new_salt()
        bound = chain.commitment(salt, content, tags, source, occurred_at)
        ref = f"{key}@{Level(level).name}/v{version}"
        digests["memory_save", ref] = chain.version_digest(agent, key, level, version, saved_at, saved_by, bound)
        if deleted_at is not None:
            digests["memory_delete", ref] = chain.deletion_digest(digests["memory_save", ref], deleted_at, deleted_by)
        rows.append((agent_id, key, content, tags, level, version, saved_at, saved_by, deleted_at, deleted_by))
        rows[-1] += (*stems, salt, bound)
    conn.executemany(
        f"INSERT INTO memories (agent_id, {VERSION_COLUMNS}, salt, commitment) VALUES ({', '.join('?' * 19)})", rows
    )
    keys = sorted({row[1] for row in rows})
    after = live_versions(latest(conn, agent_id, keys))
    indexes.refresh(agent_id, keys, {}, after, indexed, changed=min(Level))
    if rules.lattice_visibility:  # indexes for the levels in use, filled from the views
        for level in sorted({Level(row[4]) for row in rows}):
            indexed = start_index(agent_id, level, indexed)
    return digests


def _single_ref(records: str) -> str | None:
    refs = json.loads(records or "[]")
    return refs[0] if len(refs) == 1 else None


def _event(row: tuple[Any, ...]) -> AuditEvent:
    at, session_id, agent, taint, tool, key, query, outcome, records, notes, message = row
    return AuditEvent(
        at=at,
        session_id=session_id,
        agent=agent,
        taint=Level[taint],
        tool=tool,
        outcome=outcome,
        key=key,
        query=query,
        records=tuple(json.loads(records or "[]")),
        notes=tuple(json.loads(notes or "[]")),
        message=message,
    )
