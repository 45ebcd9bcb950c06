"""memlab.widgets.inspector: the shadow inspector — a key's versions and who sees which, following the store."""

from __future__ import annotations

from memlab import MemoryStore
from memlab.widgets.inspector import ShadowInspector, shadow_html
from memlab.widgets.views import shadow_table


def test_shadow_html_strikes_deletes_and_ticks_who_sees_each_version():
    store = MemoryStore()
    store.session("PUBLIC").memory_save("name", "Sam")
    internal = store.session("INTERNAL")
    internal.memory_save("name", "Samantha")
    internal.memory_delete("name")
    shown = shadow_html(shadow_table(store, "name"), "name")
    assert shown.startswith("<b>name</b>: 2 versions")
    rows = shown.split("<tr>")[2:]  # after the header
    assert ["line-through" in row for row in rows] == [False, True]  # INTERNAL's version, deleted
    assert [row.count("✔ sees this") for row in rows] == [4, 0]  # PUBLIC's version, at every level
    assert shadow_html(shadow_table(store, "never"), "<never>").startswith("<p>No version of <code>&lt;never&gt;")


def test_the_inspector_follows_the_store_until_closed():
    # Guards: ShadowInspector not listening to its store (a save elsewhere then never shown).
    store = MemoryStore()
    inspector = ShadowInspector(store, key="name")
    assert "No version" in inspector.table.value
    store.session("PUBLIC").memory_save("name", "Sam")
    assert "1 version" in inspector.table.value and inspector.key.options == ("name",)
    inspector.close()
    store.session("PUBLIC").memory_save("name", "Sam R.")
    assert "1 version" in inspector.table.value
    inspector.key.value = ""
    inspector.refresh()
    assert "Type or pick a key" in inspector.table.value


def test_the_inspector_reads_the_agent_typed():
    store = MemoryStore()
    store.session("PUBLIC", "bob").memory_save("bobs-key", "x")
    inspector = ShadowInspector(store, key="bobs-key")
    assert "No version" in inspector.table.value
    inspector.agent.value = "bob"
    inspector.show_button.click()
    assert "1 version" in inspector.table.value
