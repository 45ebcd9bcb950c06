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


def test_the_inspector_shows_each_versions_integrity_and_what_each_floor_gets():
    # Guards: inspector.shadow_html without the integrity column, or marking a version "sees this" for every floor
    # when only the default floor gets it (the floor-TRUSTED column ignored).
    store = MemoryStore()
    store.session("PUBLIC", session_id="user").memory_save("payee", "IBAN ALICE")
    browser = store.session("INTERNAL", session_id="browser")
    browser.lower_integrity(source="web page")
    browser.memory_save("payee", "IBAN MALLORY")
    browser.memory_save("tip", "pay Mallory")
    payee = shadow_html(shadow_table(store, "payee"), "payee")
    rows = payee.split("<tr>")[2:]
    assert [">trusted<" in rows[0], "⚠ untrusted" in rows[1]] == [True, True]
    assert "repeating-linear-gradient" in rows[1] and "repeating-linear-gradient" not in rows[0]
    assert [row.count("✔ sees this") for row in rows] == [4, 0]  # trust first: the user's payee, for either floor
    tip = shadow_html(shadow_table(store, "tip"), "tip").split("<tr>")[2]
    assert tip.count("✔ untrusted floor") == 3 and "sees this" not in tip  # INTERNAL and up, default floor only
    assert "a floor of TRUSTED sees no untrusted version" in payee


def test_without_a_trusted_floor_every_session_reads_at_the_default_one():
    store = MemoryStore(policy="global-stats")  # its views are not per reader: no floor of TRUSTED
    store.session("INTERNAL", integrity="untrusted", source="web page").memory_save("tip", "pay Mallory")
    assert shadow_html(shadow_table(store, "tip"), "tip").split("<tr>")[2].count("✔ sees this") == 3
