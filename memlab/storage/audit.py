"""The audit of one SQLite file: rows appended, each chained to the one before, in the caller's transaction;
and the auditor's views (the audit, every version's history, the sessions and their taint events)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from memlab.records import AuditEvent
from memlab.storage.label_codes import read_label
from memlab.storage.seal import AUDIT_FIELDS, chain_rows

_AUDIT_COLUMNS = ", ".join((*AUDIT_FIELDS, "hash"))
_INSERT_AUDIT = f"INSERT INTO audit ({_AUDIT_COLUMNS}) VALUES ({', '.join('?' * (len(AUDIT_FIELDS) + 1))})"


class AuditLog:
    """The audit of one SQLite file: rows appended in the caller's transaction, each chained to the one before;
    and the auditor's views. The chain's head is kept while the file is as the connection left it (``forget``
    drops it).

    Args:
        conn: the store's connection.
        genesis: the hash the chain starts from (``memlab_meta.chain_genesis``).
    """

    def __init__(self, conn: sqlite3.Connection, genesis: str) -> None:
        self._conn = conn
        self._genesis = genesis
        self._head: tuple[int, str] | None = None  # the last row's seq and hash

    def forget(self) -> None:
        """Drop the chain's head (the storage found the file changed, or a transaction rolled back)."""
        self._head = None

    def append(self, events: Sequence[AuditEvent], digests: Sequence[str | None] | None = None) -> None:
        """Append audit rows, each chained to the one before (``memlab.storage.seal``), in the caller's write
        transaction.

        Args:
            events: the calls to record, in order.
            digests: each event's version digest (a save's or delete's), None where it has none.
        """
        head = self._head
        if head is None:
            head = self._conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
            head = (0, self._genesis) if head is None else head
        rows = chain_rows(events, digests, seq=head[0], previous=head[1])
        self._conn.executemany(_INSERT_AUDIT, rows)
        if rows:
            self._head = (rows[-1][0], rows[-1][-1])

    def agents(self) -> list[str]:
        """Every agent that has saved in this store, by name."""
        return [row[0] for row in self._conn.execute("SELECT name FROM agents ORDER BY name")]

    def audit_rows(self, agent: str | None = None) -> Iterator[dict[str, Any]]:
        """The audit, oldest first; only ``agent``'s calls when given."""
        where, parameters = ("", ()) if agent is None else ("WHERE agent = ?", (agent,))
        for row in self._query(f"SELECT * FROM audit {where} ORDER BY seq", parameters):
            yield {**row, "records": json.loads(row["records"]), "notes": json.loads(row["notes"])}

    def history_rows(self, agent: str, key: str | None = None) -> Iterator[dict[str, Any]]:
        """Every version of ``key`` (of every key when None), by key, level, then version."""
        for row in self._query(
            "SELECT m.key, m.classification, m.version, m.content, m.tags, m.source, m.occurred_at, m.saved_at, "
            "m.saved_by, m.deleted_at, m.deleted_by, m.distrust FROM memories m JOIN agents a ON a.id = m.agent_id "
            f"WHERE a.name = ? {'' if key is None else 'AND m.key = ?'} ORDER BY m.key, m.classification, m.version",
            (agent,) if key is None else (agent, key),
        ):
            distrust = () if row["distrust"] is None else tuple(json.loads(row["distrust"]))
            yield {
                **row,
                "classification": str(read_label(row["classification"])),
                "tags": json.loads(row["tags"]),
                "distrust": distrust,
            }

    def session_rows(self) -> Iterator[dict[str, Any]]:
        """The sessions written, oldest first (the storage writes the pending ones first)."""
        return self._query("SELECT id, agent, taint AS initial_taint, created_at FROM sessions ORDER BY created_at, id")

    def taint_event_rows(self) -> Iterator[dict[str, Any]]:
        """The taint events written, oldest first."""
        return self._query("SELECT session_id, at, from_level, to_level, reason FROM taint_events ORDER BY id")

    def _query(self, sql: str, parameters: Sequence[Any] = ()) -> Iterator[dict[str, Any]]:
        """The rows of a query as dicts of column name to value."""
        cursor = self._conn.execute(sql, parameters)
        names = [column[0] for column in cursor.description]
        for row in cursor:
            yield dict(zip(names, row, strict=True))
