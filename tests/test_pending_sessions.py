"""``memlab.storage.pending_sessions``: a session's row waits for the next write transaction, and stays pending
until that transaction commits."""

from __future__ import annotations

import sqlite3

import pytest

from memlab.errors import InvalidArgument
from memlab.storage.pending_sessions import PendingSessions


@pytest.fixture
def conn():
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, agent TEXT, taint TEXT, created_at TEXT, floor TEXT)")
    return conn


def _ids(conn) -> list[str]:
    return [row[0] for row in conn.execute("SELECT id FROM sessions ORDER BY id")]


def test_a_row_stays_pending_until_its_transaction_commits(conn):
    # Guards: PendingSessions.write emptying the pending rows itself (seen failing: after a rollback the session's
    # row was lost).
    sessions = PendingSessions(conn)
    assert not sessions and sessions.write() == []
    sessions.add("s1", "main", "PUBLIC", "2026-01-01")
    conn.execute("BEGIN")
    assert sessions.write() == ["s1"]
    conn.execute("ROLLBACK")
    assert sessions and _ids(conn) == []
    conn.execute("BEGIN")
    written = sessions.write()
    conn.execute("COMMIT")
    sessions.written(written)
    assert not sessions and _ids(conn) == ["s1"]


@pytest.mark.parametrize("written", [True, False], ids=["written", "pending"])
def test_a_taken_id_is_refused_at_once(conn, written):
    # Guards: PendingSessions.add not looking at the pending rows (seen failing: "pending" accepted twice).
    sessions = PendingSessions(conn)
    sessions.add("s1", "main", "PUBLIC", "2026-01-01")
    if written:
        sessions.written(sessions.write())
    with pytest.raises(InvalidArgument, match="'s1' is already taken"):
        sessions.add("s1", "other", "INTERNAL", "2026-01-02")


def test_an_id_another_connection_took_meanwhile_is_dropped(conn):
    # Guards: PendingSessions.write keeping the row whose id another connection took (seen failing: the next write
    # failed again, with an IntegrityError).
    sessions = PendingSessions(conn)
    sessions.add("s1", "main", "PUBLIC", "2026-01-01")
    conn.execute("INSERT INTO sessions VALUES ('s1', 'other', 'PUBLIC', '2026-01-01', NULL)")
    with pytest.raises(InvalidArgument, match="'s1' is already taken"):
        sessions.write()
    assert not sessions and sessions.write() == []
