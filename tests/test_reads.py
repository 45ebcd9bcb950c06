"""``memlab.storage.reads``: a view's stored form, a key's version in it, whether a key is live anywhere."""

from __future__ import annotations

import pytest

from memlab import Level, MemoryStore
from memlab.labels import Ambiguous, Label, reader
from memlab.storage.indexes import IndexUpkeep
from memlab.storage.label_codes import LABEL_VIEWS
from memlab.storage.reads import ViewReads
from memlab.storage.view_changes import ViewChanges

HR, LEGAL, BOTH = (Label.parse(text) for text in ("CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "CONFIDENTIAL:hr,legal"))


def _reads(store: MemoryStore) -> tuple[ViewReads, ViewChanges]:
    storage = store.storage
    changes = ViewChanges()
    indexes = IndexUpkeep(storage.conn, storage.rules, storage.analyzer, changes)
    return ViewReads(storage.conn, storage.rules, indexes), changes


def _label_views(store: MemoryStore) -> list[str]:
    found = store.storage.conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (LABEL_VIEWS,)).fetchone()
    return [] if found is None else [row[0] for row in store.storage.conn.execute(f"SELECT label FROM {LABEL_VIEWS}")]


def test_a_label_s_view_is_made_on_its_first_read_and_only_for_an_agent_that_saved():
    # Guards: ViewReads.view_of making a view for an agent that never saved (without its `agent_id is None`: seen
    # failing, the view was registered for no agent).
    store = MemoryStore()
    store.session(Level.PUBLIC, "main").memory_save("k", "public")
    reads, changes = _reads(store)
    hr = reader(HR)  # a session at HR reading every grade
    assert reads.view_of(None, hr) == str(HR) and _label_views(store) == []
    assert reads.view_of(1, reader(Level.INTERNAL)) == int(Level.INTERNAL) and changes.count == 0
    assert reads.view_of(1, hr) == str(HR) and _label_views(store) == [str(HR)] and changes.count == 1
    assert reads.memory(1, hr, "k").content == "public"
    # A trusted floor is a reader of its own: its view is made on its first read too.
    assert reads.view_of(1, HR) == "CONFIDENTIAL:hr|trusted" and changes.count == 2


def test_a_key_live_only_in_a_compartment_exists_once_the_agent_keeps_a_label_s_view():
    # Guards: ViewReads.exists looking only at the top level's view (its label-views branch removed: seen failing).
    store = MemoryStore()
    store.session(HR, "main").memory_save("review", "hr only")
    reads, _ = _reads(store)
    reads.view_of(1, HR)
    assert reads.exists(1, "review") and not reads.exists(1, "other") and not reads.exists(None, "review")


def test_an_ambiguous_key_names_the_labels_a_session_may_read():
    # Guards: ViewReads._refuse_ambiguous naming every readable label, not the maximal ones (``maximal(readable,
    # taint)`` replaced by ``readable``: seen failing, the message named PUBLIC too).
    store = MemoryStore(policy="refuse-ambiguous")
    store.session(Level.PUBLIC, "main").memory_save("k", "public")
    store.session(HR, "main").memory_save("k", "hr")
    store.session(LEGAL, "main").memory_save("k", "legal")
    store.session(Level.RESTRICTED, "main").memory_save("k", "above")
    reads, _ = _reads(store)
    with pytest.raises(Ambiguous, match=r"none above the others: CONFIDENTIAL:hr, CONFIDENTIAL:legal$"):
        reads.memory(1, BOTH, "k")
