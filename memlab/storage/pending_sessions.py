"""The sessions a SQLite storage has recorded and not yet written: each row goes in its next write transaction.

Every call writes its audit row, so a session's first call carries the session's row too: starting a session
costs no transaction of its own.
"""

from __future__ import annotations

import sqlite3

from memlab.errors import InvalidArgument

__all__ = ["PendingSessions"]


class PendingSessions:
    """Session rows recorded and not yet written, in the order recorded.

    Args:
        conn: the store's connection.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._rows: dict[str, tuple[str, str, str, str, str | None]] = {}  # session id -> its row

    def __bool__(self) -> bool:
        return bool(self._rows)

    def add(self, session_id: str, agent: str, taint: str, created_at: str, floor: str | None = None) -> None:
        """Record a session whose row the next write transaction writes.

        Args:
            session_id: its id.
            agent: the agent it works for.
            taint: its initial taint, as stored (``str`` of the level or label).
            created_at: when it started.
            floor: the least trusted grade it reads, as text (None: every grade).

        Raises:
            InvalidArgument: the id is taken in this file (written, or recorded and pending).
        """
        taken = (
            session_id in self._rows
            or self._conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        )
        if taken:
            raise InvalidArgument(f"session id {session_id!r} is already taken in this store")
        self._rows[session_id] = (session_id, agent, taint, created_at, floor)

    def write(self) -> list[str]:
        """Insert the pending rows in the transaction just begun; they stay pending until ``written``.

        Returns:
            The ids written.

        Raises:
            InvalidArgument: another connection took one of their ids since ``add`` checked it (that session's
                row is dropped: its id belongs to the other).
        """
        if not self._rows:
            return []
        rows = list(self._rows.values())
        try:
            self._conn.executemany(
                "INSERT INTO sessions (id, agent, taint, created_at, floor) VALUES (?, ?, ?, ?, ?)", rows
            )
        except sqlite3.IntegrityError as error:
            for session_id, *_ in rows:
                if self._conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                    del self._rows[session_id]
                    raise InvalidArgument(f"session id {session_id!r} is already taken in this store") from error
            raise
        return [row[0] for row in rows]

    def written(self, session_ids: list[str]) -> None:
        """Drop the rows ``write`` inserted, once their transaction has committed.

        Args:
            session_ids: what ``write`` returned.
        """
        for session_id in session_ids:
            del self._rows[session_id]
