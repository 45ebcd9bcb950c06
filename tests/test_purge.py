"""Erasure for real: after ``store.purge`` the content is in no byte of the store's files, the versions'
existence and the audit stay, and the chain still verifies."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlab import InvalidArgument, Level, MemoryStore
from tests.backends import open_store

pytestmark = pytest.mark.contract

SECRET = "the launch code is zebra-quokka-kiwi"  # words no hex digest can contain
TAG = "quagga-tag"


def _store_bytes(path: Path) -> bytes:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    siblings = [Path(f"{file}{suffix}") for file in files for suffix in ("-wal", "-shm")]
    return b"".join(file.read_bytes() for file in files + siblings if file.exists())


@pytest.mark.requires("files")
def test_purged_content_is_in_no_byte_of_the_store(tmp_path, backend):
    path = tmp_path / "store"
    with MemoryStore(path, layout=backend) as store:
        session = store.session(Level.CONFIDENTIAL)
        for n in range(300):  # enough rows for several index segments and pages
            session.memory_save(f"note-{n}", f"an ordinary note number {n} about the weather", tags=["note"])
        session.memory_save("launch", SECRET, tags=[TAG])
        session.memory_save("launch", SECRET + " (rotated)", tags=[TAG])
        assert [hit.memory.key for hit in session.memory_search("launch code")][:1] == ["launch"]
        assert b"quokka" in _store_bytes(path) and TAG.encode() in _store_bytes(path)

        refs = store.purge("main", "launch", reason="ticket SEC-12")

        assert refs == ["launch@CONFIDENTIAL/v1", "launch@CONFIDENTIAL/v2"]
        assert session.memory_get("launch") is None
        assert session.memory_search("launch code") == []  # (a query naming the words would be audited)
        history = store.history("launch")
        assert history["classification"].tolist() == ["CONFIDENTIAL", "CONFIDENTIAL"]
        assert history["content"].tolist() == ["", ""] and history["deleted_by"].tolist() == ["auditor", "auditor"]
        audit = store.audit()
        (purge,) = audit[audit["tool"] == "purge"].to_dict("records")
        assert (purge["tool"], purge["records"], purge["message"]) == ("purge", refs, "ticket SEC-12")
        assert store.verify().ok
        assert len(session.memory_list(tag="note")) == 300  # nothing else was touched
    raw = _store_bytes(path)
    for fragment in (b"zebra", b"quokka", b"kiwi", TAG.encode(), b"quagga"):
        assert fragment not in raw, fragment


@pytest.mark.requires("files")
def test_copies_in_pages_freed_before_the_purge_are_erased_too(tmp_path, backend):
    """A delete rewrites a version's row: the old copy of a long content stays in the overflow pages SQLite freed
    (``secure_delete=FAST`` zeroes only what stays in a page), which a purge's own statements do not touch.

    Guards: erasure's ``VACUUM`` removed (the freed pages keep "quokka" after the purge): seen failing."""
    path = tmp_path / "store"
    long_secret = " ".join(f"{SECRET} {n}" for n in range(1_500))  # ~56 kB: a chain of overflow pages
    with MemoryStore(path, layout=backend) as store:
        session = store.session(Level.CONFIDENTIAL)
        session.memory_save("launch", long_secret, tags=[TAG])
        session.memory_delete("launch")
        for n in range(50):
            session.memory_save(f"note-{n}", f"an ordinary note number {n} about the weather")
        assert store.purge("main", "launch", reason="ticket SEC-13") == ["launch@CONFIDENTIAL/v1"]
        assert store.verify().ok
        raw = _store_bytes(path)
        for fragment in (b"zebra", b"quokka", b"kiwi", TAG.encode()):
            assert fragment not in raw, fragment


def test_purging_one_level_uncovers_the_version_below(backend):
    with open_store(backend) as store:
        store.session(Level.PUBLIC).memory_save("user-name", "Sam")
        store.session(Level.CONFIDENTIAL).memory_save("user-name", "Samantha Rivera, badge 0042")
        assert store.purge("main", "user-name", Level.CONFIDENTIAL, reason="request 7") == ["user-name@CONFIDENTIAL/v1"]
        reader = store.session(Level.RESTRICTED)
        assert reader.memory_get("user-name").content == "Sam"
        assert [hit.memory.content for hit in reader.memory_search("Samantha badge Sam")] == ["Sam"]
        assert store.verify().ok


def test_a_purge_needs_a_reason_and_a_valid_key(store):
    with pytest.raises(InvalidArgument, match="reason"):
        store.purge("main", "k", reason=" ")
    with pytest.raises(InvalidArgument, match="key"):
        store.purge("main", "bad\nkey", reason="x")


def test_purging_nothing_is_audited_and_harmless(store):
    assert store.purge("main", "never-saved", reason="request 8") == []
    assert store.audit()["tool"].tolist() == ["purge"] and store.verify().ok
