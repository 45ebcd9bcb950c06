"""The audit trail: one event per call, identifiers not content, append-only in the database itself."""

import sqlite3

import pytest

from memlab import InvalidArgument, Level, MemoryStore, NotFound, tools
from memlab.storage import verify_path
from memlab.viewrules import ViewRules
from tests.backends import refused, session_sql
from tests.test_verify import _unguarded

pytestmark = pytest.mark.contract


def test_every_call_appends_one_event(store):
    session = store.session(Level.INTERNAL, session_id="s1")
    session.memory_save("user-name", "Alice", tags=["personal"])
    session.memory_get("user-name")
    session.memory_get("missing")
    session.memory_search("alice")
    session.memory_list(tag="personal")
    session.memory_delete("user-name")
    with pytest.raises(NotFound):
        session.memory_delete("user-name")
    with pytest.raises(InvalidArgument):
        session.memory_save("", "x")
    audit = store.audit()
    assert audit[["session_id", "agent", "taint", "tool", "key", "query", "outcome"]].fillna("").values.tolist() == [
        ["s1", "main", "INTERNAL", "memory_save", "user-name", "", "ok"],
        ["s1", "main", "INTERNAL", "memory_get", "user-name", "", "ok"],
        ["s1", "main", "INTERNAL", "memory_get", "missing", "", "not_found"],
        ["s1", "main", "INTERNAL", "memory_search", "", "alice", "ok"],
        ["s1", "main", "INTERNAL", "memory_list", "", "", "ok"],
        ["s1", "main", "INTERNAL", "memory_delete", "user-name", "", "ok"],
        ["s1", "main", "INTERNAL", "memory_delete", "user-name", "", "not_found"],
        ["s1", "main", "INTERNAL", "memory_save", "", "", "invalid_argument"],
    ]
    assert audit["records"].tolist()[:6] == [["user-name@INTERNAL/v1"]] * 2 + [[]] + [["user-name@INTERNAL/v1"]] * 3
    assert audit["message"].tolist()[-1] == "key must not be empty"


def test_the_audit_records_the_taint_at_each_call(store):
    session = store.session()
    session.memory_get("k")
    session.escalate(Level.RESTRICTED)
    session.memory_get("k")
    assert store.audit()["taint"].tolist() == ["PUBLIC", "RESTRICTED"]


def test_audit_rows_hold_no_memory_content(store):
    session = store.session()
    # Words no hash, id or time can hold (hex digests, ids and times once held "0000" by chance: a flaky check).
    secret = "the launch code is quokka"
    session.memory_save("code", secret, tags=["ops"])
    session.memory_get("code")
    session.memory_list()
    session.memory_delete("code")
    tools.call(session, "memory_save", {"key": "k2", "content": secret, "classification": "PUBLIC"})
    dump = "\n".join(str(row) for row in store.storage.audit_rows())
    assert "launch" not in dump and "quokka" not in dump


def test_the_database_refuses_to_change_or_remove_audit_rows(store, backend):
    store.session().memory_get("k")
    error, message = refused(backend)
    for statement in ("UPDATE audit SET outcome = 'ok'", "DELETE FROM audit"):
        with pytest.raises(error, match=message):
            session_sql(store, statement)
    assert len(store.audit()) == 1


def test_history_shows_every_version_at_every_level(store):
    store.session(Level.PUBLIC, session_id="p").memory_save("user-name", "Sam")
    internal = store.session(Level.INTERNAL, session_id="i")
    internal.memory_save("user-name", "Samantha")
    internal.memory_save("user-name", "Samantha R.")
    internal.memory_delete("user-name")
    history = store.history("user-name")
    assert history[["classification", "version", "content", "saved_by", "deleted_by"]].fillna("").values.tolist() == [
        ["PUBLIC", 1, "Sam", "p", ""],
        ["INTERNAL", 1, "Samantha", "i", ""],
        ["INTERNAL", 2, "Samantha R.", "i", "i"],
    ]
    assert store.history("user-name", agent="other").empty


def test_auditor_views_of_all_versions_and_of_a_taint_add_no_audit_rows(store):
    store.session(Level.PUBLIC).memory_save("user-name", "Sam")
    store.session(Level.INTERNAL).memory_save("user-name", "Samantha")
    store.session(Level.CONFIDENTIAL).memory_save("salary", "90k")
    calls = len(store.audit())
    assert store.versions()[["key", "classification", "version"]].values.tolist() == [
        ["salary", "CONFIDENTIAL", 1],
        ["user-name", "PUBLIC", 1],
        ["user-name", "INTERNAL", 1],
    ]
    for level in Level:
        session_view = [(m.key, m.content) for m in store.session(level).memory_list()]
        assert list(zip(store.view(level)["key"], store.view(level)["content"], strict=True)) == session_view
    assert len(store.audit()) == calls + len(Level)  # only the sessions' memory_list calls
    assert store.view(Level.PUBLIC, agent="nobody").empty and store.versions("nobody").empty


# Every field the audit hash covers (memlab.storage.chain.audit_hash over AuditLog.append's fields),
# and a value for it other than the one the first row holds: a save at INTERNAL by session "s1".
HASHED_AUDIT_COLUMNS = {
    "seq": "0",
    "at": "'2000-01-01T00:00:00+00:00'",
    "session_id": "'forged'",
    "agent": "'someone-else'",
    "taint": "'PUBLIC'",
    "tool": "'memory_get'",
    "key": "'other'",
    "query": "'what the agent never asked'",
    "outcome": "'denied'",
    "records": "'[\"other@INTERNAL/v1\"]'",
    "notes": "'[\"a note never made\"]'",
    "message": "'a message never given'",
    "digest": "'" + "0" * 64 + "'",
}


@pytest.mark.parametrize("layout", ["file", "folder"])
@pytest.mark.parametrize("column", HASHED_AUDIT_COLUMNS)
def test_editing_any_hashed_audit_column_breaks_the_chain(tmp_path, layout, column):
    # Guards: the audit hash computed without one of its fields on both sides, e.g. `notes` dropped from the
    # fields in AuditLog.append and from verify.py's SELECT that feeds check_chain: every store
    # would still verify, and a row's notes could be rewritten unseen.
    path = tmp_path / "store"
    with MemoryStore(path, layout=layout) as store:
        session = store.session(Level.INTERNAL, session_id="s1")
        session.memory_save("plan", "acquire Initech", tags=["work"])
        session.memory_search("plan")
        file = path if layout == "file" else store.storage.agent_path("main")
    assert verify_path(path, ViewRules.lattice()).ok
    conn = sqlite3.connect(file)
    try:
        for statement in _unguarded(f"UPDATE audit SET {column} = {HASHED_AUDIT_COLUMNS[column]} WHERE seq = 1"):
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()
    problems = verify_path(path, ViewRules.lattice()).problems
    assert any("its hash does not follow" in problem for problem in problems), problems


@pytest.mark.parametrize("column", HASHED_AUDIT_COLUMNS)
def test_editing_any_hashed_audit_column_breaks_the_chain_in_postgres(pg_url, column):
    # Guards: as above, for PostgresStorage's audit fields and its verify (the owner can edit the audit).
    import psycopg

    with MemoryStore(pg_url) as store:
        session = store.session(Level.INTERNAL, session_id="s1")
        session.memory_save("plan", "acquire Initech", tags=["work"])
        session.memory_search("plan")
    assert verify_path(pg_url).ok
    with psycopg.connect(pg_url, autocommit=True, options="-c search_path=memlab") as conn:
        conn.execute(
            f"UPDATE audit SET {column} = {HASHED_AUDIT_COLUMNS[column]} "
            "WHERE agent = 'main' AND taint = 'INTERNAL' AND seq = 1"
        )
    problems = verify_path(pg_url).problems
    assert any("its hash does not follow" in problem for problem in problems), problems
