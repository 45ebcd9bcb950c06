"""Purge against what happens around it: an outside reader holding a read transaction (a backup, the ``sqlite3``
shell) keeps the WAL from being checkpointed, so the purge says it is incomplete and a rerun finishes it; and with
nobody else reading, the store's files hold no copy of the content while the store is still open."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from memlab import Level, MemoryStore, PurgeIncomplete
from memlab.storage.folder import FolderStorage
from memlab.storage.sqlite import SqliteStorage

SECRET = "the launch code is zebra-quokka-kiwi"  # words no hex digest can contain
TAG = "quagga-tag"
FRAGMENTS = (b"zebra", b"quokka", b"kiwi", TAG.encode())


def _store_bytes(path: Path) -> bytes:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    siblings = [Path(f"{file}{suffix}") for file in files for suffix in ("-wal", "-shm")]
    return b"".join(file.read_bytes() for file in set(files + siblings) if file.exists())


def _open(path: Path, layout: str) -> MemoryStore:
    # A short busy timeout: the purge waits that long for the reader before it reports the purge incomplete.
    if layout == "file":
        return MemoryStore(storage=SqliteStorage(path, busy_timeout=0.2))
    return MemoryStore(storage=FolderStorage(path, busy_timeout=0.2))


def _fill(store: MemoryStore) -> None:
    session = store.session(Level.CONFIDENTIAL)
    for n in range(200):
        session.memory_save(f"note-{n}", f"an ordinary note number {n} about the weather", tags=["note"])
    session.memory_save("launch", SECRET, tags=[TAG], source="the ops channel", occurred_at="2024-03-01")


def _agent_file(store: MemoryStore, path: Path, layout: str) -> Path:
    return path if layout == "file" else store.storage.agent_path("main")


@contextlib.contextmanager
def _reader(file: Path):
    """An outside connection in the middle of a read transaction, as a backup or the sqlite3 shell holds one."""
    reader = sqlite3.connect(file, isolation_level=None)
    try:
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM memories").fetchone()[0] == 201
        yield reader
    finally:
        reader.close()


@pytest.mark.parametrize("layout", ["file", "folder"])
def test_a_purge_held_up_by_a_reader_says_it_is_incomplete_and_a_rerun_finishes_it(tmp_path, layout):
    path = tmp_path / "store"
    with _open(path, layout) as store:
        _fill(store)
        file = _agent_file(store, path, layout)
        with _reader(file):
            with pytest.raises(PurgeIncomplete) as incomplete:
                store.purge("main", "launch", reason="ticket SEC-12")
            message = str(incomplete.value)
            assert f"{file}-wal" in message and "read transaction" in message and "store.purge" in message
            # The purge itself is done and audited: no session finds the content, the versions are content-free.
            assert store.session(Level.RESTRICTED).memory_get("launch") is None
            assert store.history("launch")["content"].tolist() == [""]
            audit = store.audit()
            assert audit[audit["tool"] == "purge"]["records"].tolist() == [["launch@CONFIDENTIAL/v1"]]
            # But while the reader holds its snapshot, the files still hold copies: that is what the error says.
            assert all(fragment in _store_bytes(path) for fragment in FRAGMENTS)
        assert store.purge("main", "launch", reason="ticket SEC-12, finished") == []
        raw = _store_bytes(path)  # while the store is still open
        assert [fragment for fragment in FRAGMENTS if fragment in raw] == []
        assert store.verify().ok
        assert len(store.session(Level.CONFIDENTIAL).memory_list(tag="note")) == 200


@pytest.mark.parametrize("layout", ["file", "folder"])
def test_purged_content_is_in_no_byte_of_the_store_while_it_is_open(tmp_path, layout):
    # Guards: a purge without PRAGMA wal_checkpoint(TRUNCATE) (the pages it rewrote and zeroed would wait in
    # the -wal, and the old ones in the database file, until the store closed).
    path = tmp_path / "store"
    with _open(path, layout) as store:
        _fill(store)
        assert all(fragment in _store_bytes(path) for fragment in FRAGMENTS)
        assert store.purge("main", "launch", reason="ticket SEC-13") == ["launch@CONFIDENTIAL/v1"]
        raw = _store_bytes(path)
        assert [fragment for fragment in FRAGMENTS if fragment in raw] == []
        assert store.verify().ok
