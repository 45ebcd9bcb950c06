"""What the SQLite storage reads once per connection (the audit chain's head, an agent's indexed levels): the same
file, the same chain and views as reading every time, whoever else writes the file."""

from __future__ import annotations

import pytest

from memlab import Level, MemoryStore
from memlab.records import AuditEvent
from memlab.storage.seal import AUDIT_FIELDS, chain_rows


@pytest.fixture
def path(tmp_path):
    return tmp_path / "store.db"


def _seqs(store):
    return [row[0] for row in store.storage.conn.execute("SELECT seq FROM audit ORDER BY seq")]


def test_two_connections_writing_in_turn_keep_one_chain(path):
    # Guards: no `PRAGMA data_version` check in SqliteStorage._revalidate (a stale head: seen failing, the
    # second store's row refused as a replaced seq).
    with MemoryStore(path, layout="file") as first, MemoryStore(path, layout="file") as second:
        one, two = first.session(Level.PUBLIC, "main"), second.session(Level.PUBLIC, "main")
        for turn in range(3):
            one.memory_save(f"a{turn}", "from the first")
            two.memory_save(f"b{turn}", "from the second")
            assert one.memory_get(f"b{turn}").content == "from the second"
        assert _seqs(first) == list(range(1, 10))
        assert first.verify().ok and second.verify().ok


def test_a_level_indexed_by_another_connection_is_searched(path):
    # Guards: the indexed levels cached without revalidation (no data_version check: seen failing).
    with MemoryStore(path, layout="file") as first, MemoryStore(path, layout="file") as second:
        first.session(Level.PUBLIC, "main").memory_save("trip", "lisbon in may")
        reader = first.session(Level.CONFIDENTIAL, "main")
        assert [hit.memory.key for hit in reader.memory_search("porto")] == []
        second.session(Level.CONFIDENTIAL, "main").memory_save("plan", "porto in june")
        assert [hit.memory.key for hit in reader.memory_search("porto")] == ["plan"]
        assert first.verify().ok


def test_an_audit_row_appended_through_the_same_connection_is_chained_on(path):
    # Guards: no `total_changes` check in SqliteStorage._revalidate (seen failing: the next call's row took the
    # seq of the row appended outside, and the append-only trigger refused it).
    with MemoryStore(path, layout="file") as store:
        session = store.session(Level.PUBLIC, "main")
        session.memory_save("k", "v")
        conn = store.storage.conn
        seq, head = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        event = AuditEvent(store.now(), session.id, "main", Level.PUBLIC, "memory_list", records=("k@PUBLIC/v1",))
        rows = chain_rows([event], None, seq=seq, previous=head)
        marks = ", ".join("?" * (len(AUDIT_FIELDS) + 1))
        conn.execute(f"INSERT INTO audit ({', '.join(AUDIT_FIELDS)}, hash) VALUES ({marks})", rows[0])
        assert session.memory_get("k").content == "v"
        assert _seqs(store) == [1, 2, 3]
        assert store.verify().ok
