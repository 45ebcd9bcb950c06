"""``memlab.storage.postgres.auditor``: the auditor's reads of a PostgreSQL store, as its owner."""

from __future__ import annotations

from memlab import MemoryStore


def test_the_history_names_each_versions_label_and_sources_and_the_sessions_their_start(pg_url):
    # Guards: history_rows writing a version's classification without its integrity (an untrusted version would
    # then read as trusted to the auditor and to purge_source): seen failing.
    with MemoryStore(pg_url) as store:
        store.session("INTERNAL", session_id="user").memory_save("payee", "ACME")
        web = store.session("INTERNAL", session_id="web")
        web.lower_integrity(source="web:a")
        web.memory_save("payee", "EVIL")
        rows = [(row["classification"], row["content"], row["distrust"]) for row in store.storage.history_rows("main")]
        assert rows == [("INTERNAL", "ACME", ()), ("INTERNAL@untrusted", "EVIL", ("web:a",))]
        assert [row["id"] for row in store.storage.session_rows()] == ["user", "web"]
        assert store.storage.agents() == ["main"]
        assert [row["to_level"] for row in store.storage.taint_event_rows()] == ["INTERNAL@untrusted"]
