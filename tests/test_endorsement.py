"""``memlab.endorsement``: the auditor's integrity acts on a store's storage."""

from __future__ import annotations

import pytest

from memlab import MemoryStore, NotFound
from memlab.endorsement import endorse, written_under


def _lowered(store: MemoryStore, source: str, taint: str = "INTERNAL"):
    session = store.session(taint)
    session.lower_integrity(source=source)
    return session


def test_written_under_names_each_version_once_and_only_the_sources():
    # Guards: written_under matching any untrusted version, whatever its sources (a purge would then erase others').
    store = MemoryStore()
    web = _lowered(store, "web:a")
    web.memory_save("tip", "one")
    web.memory_save("tip", "two")  # a second version at the same label: one entry
    _lowered(store, "email:b").memory_save("other", "three")
    store.session("INTERNAL").memory_save("name", "Sam")
    assert written_under(store.storage, "web:a") == [("main", "tip", "INTERNAL@untrusted")]
    assert written_under(store.storage, "nowhere") == []


def test_an_endorsement_of_a_deleted_version_is_refused_and_audited():
    store = MemoryStore()
    web = _lowered(store, "web:a")
    web.memory_save("tip", "one")
    web.memory_delete("tip")
    with pytest.raises(NotFound):
        endorse(store.storage, "main", "tip", None, reason="ticket", by="auditor", at=store.now())
    assert store.audit()["outcome"].tolist()[-1] == "not_found"
