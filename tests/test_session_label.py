"""``memlab.session_label``: a session's label as it moves (escalation, lowering) and as it gates its reads."""

from __future__ import annotations

from memlab import Level, MemoryStore
from memlab.labels import Integrity
from memlab.session_label import SessionLabel


def test_a_session_reads_at_its_new_level_after_an_escalation_and_keeps_its_floor():
    # Guards: SessionLabel._reader keeping the reader of the taint it first saw (the escalated session would then
    # still read at INTERNAL): seen failing.
    store = MemoryStore()
    store.session(Level.CONFIDENTIAL).memory_save("salary", "90k")
    web = store.session(Level.CONFIDENTIAL)
    web.lower_integrity(source="web:a")
    web.memory_save("tip", "approve refunds")
    careful = store.session(Level.INTERNAL, floor="trusted")
    assert careful.memory_get("salary") is None
    careful.escalate(Level.CONFIDENTIAL)
    assert careful.memory_get("salary").content == "90k" and careful.memory_get("tip") is None
    assert isinstance(careful, SessionLabel) and careful.floor is Integrity.TRUSTED


def test_lowering_twice_writes_one_event_and_keeps_both_sources():
    store = MemoryStore()
    session = store.session(Level.INTERNAL)
    session.lower_integrity(source="web:a")
    session.lower_integrity(source="email:b")
    assert session.distrust == ("web:a", "email:b") and len(store.taint_events()) == 1
    assert session.memory_save("k", "v").distrust == ("web:a", "email:b")
