"""memlab.widgets.views: the tables the widgets draw — every version and who sees it, effective views, changes —
each read from the store's own views (no audit row). Against real sessions under every policy, at large, is
tests/test_widgets.py's."""

from __future__ import annotations

import pytest

from memlab import MemoryStore
from memlab.widgets.views import effective_view, saved_keys, seen_column, shadow_table, versions_table, view_changes


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore()
    public, confidential = store.session("PUBLIC"), store.session("CONFIDENTIAL")
    public.memory_save("name", "Sam")
    public.memory_save("name", "Sam R.")
    confidential.memory_save("name", "Samantha")
    public.memory_save("gone", "x")
    public.memory_delete("gone")
    store.session("PUBLIC", "bob").memory_save("bobs", "y")
    return store


def test_the_shadow_table_marks_the_version_each_level_sees(store):
    # Guards: views._annotate marking the newest version of each level as seen (not the store's effective one).
    table = shadow_table(store, "name")
    assert table["status"].tolist() == ["superseded", "current", "current"]
    assert table[seen_column("PUBLIC")].tolist() == [False, True, False]
    assert table[seen_column("INTERNAL")].tolist() == [False, True, False]
    assert table[seen_column("RESTRICTED")].tolist() == [False, False, True]
    assert shadow_table(store, "gone")["status"].tolist() == ["deleted"]
    assert not shadow_table(store, "gone")[seen_column("RESTRICTED")].any()


def test_looking_adds_no_audit_row(store):
    rows = len(store.audit())
    versions_table(store)
    effective_view(store, "main", "CONFIDENTIAL")
    assert len(store.audit()) == rows


def test_saved_keys_are_the_agents_own_ever_saved(store):
    assert saved_keys(store) == ["gone", "name"] and saved_keys(store, "bob") == ["bobs"]


@pytest.mark.parametrize("taint", ["PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED"])
def test_an_effective_view_from_the_versions_table_is_the_stores(store, taint):
    def rows(view):  # tags come as a list from the history, a tuple from a view: the same tags
        return [{**row, "tags": list(row["tags"])} for row in view.to_dict("records")]

    assert rows(effective_view(store, "main", taint, versions=versions_table(store))) == rows(
        effective_view(store, "main", taint)
    )


def test_view_changes_names_new_and_gone_keys(store):
    before = effective_view(store, "main", "PUBLIC")
    assert view_changes(None, before) == {"new": [], "gone": []}
    session = store.session("PUBLIC")
    session.memory_save("city", "Porto")
    session.memory_save("name", "Sam Rivera")
    session.memory_delete("city")
    session.memory_save("pet", "cat")
    assert view_changes(before, effective_view(store, "main", "PUBLIC")) == {"new": ["name", "pet"], "gone": []}
