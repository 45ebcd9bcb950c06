"""What the auditor reads of a PostgreSQL store, as its owner: the agents, the audit, every version's history, the
sessions and their taint events (``AuditorStorage``'s reads; ``PostgresStorage`` is made of them)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from memlab.storage.postgres.connection import Connection
from memlab.storage.postgres.sql import AUDIT_COLUMNS, label_from

__all__ = ["AuditorReads"]


class AuditorReads(Connection):
    """The auditor's reads of a store's tables, each as the owner (no claim: sessions never read these)."""

    def agents(self) -> list[str]:
        """Every agent that has saved in this store, by name."""
        return self._as_owner(
            lambda cursor: [row[0] for row in cursor.execute("SELECT DISTINCT agent FROM memories ORDER BY agent")]
        )

    def audit_rows(self, agent: str | None = None) -> Iterator[dict[str, Any]]:
        """The audit (of ``agent`` only, when given) in the order it was written; ``seq`` numbers the events of
        one agent at one taint (each its own chain)."""
        where, parameters = ("", ()) if agent is None else ("WHERE agent = %s", (agent,))
        rows = self._rows(f"SELECT {AUDIT_COLUMNS} FROM audit {where} ORDER BY id", parameters)
        return ({**row, "records": json.loads(row["records"]), "notes": json.loads(row["notes"])} for row in rows)

    def history_rows(self, agent: str, key: str | None = None) -> Iterator[dict[str, Any]]:
        """Every version of ``key`` (of every key when None), by key, label, then version; ``distrust`` names what
        lowered the session that saved it."""
        rows = self._rows(
            "SELECT key, classification, categories, integrity, version, content, tags, source, occurred_at, "
            f"saved_at, saved_by, deleted_at, deleted_by, distrust FROM memories WHERE agent = %s "
            f"{'' if key is None else 'AND key = %s'} "
            "ORDER BY key, classification, categories, integrity DESC, version",
            (agent,) if key is None else (agent, key),
        )
        # A version's classification is its label (``CONFIDENTIAL:hr@untrusted``), exactly its level when it has no
        # categories and is trusted.
        return (
            {
                **{name: value for name, value in row.items() if name not in {"categories", "integrity"}},
                "classification": str(label_from(row["classification"], row["categories"], row["integrity"])),
                "tags": json.loads(row["tags"]),
                "distrust": tuple(row["distrust"]),
            }
            for row in rows
        )

    def session_rows(self) -> Iterator[dict[str, Any]]:
        return iter(
            self._rows("SELECT id, agent, taint AS initial_taint, created_at FROM sessions ORDER BY created_at, id")
        )

    def taint_event_rows(self) -> Iterator[dict[str, Any]]:
        return iter(self._rows("SELECT session_id, at, from_level, to_level, reason FROM taint_events ORDER BY id"))

    def _rows(self, sql: str, parameters: tuple = ()) -> list[dict[str, Any]]:
        def work(cursor):
            cursor.execute(sql, parameters)
            names = [column.name for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

        return self._as_owner(work)
