"""Tampering with what ``verify`` used to trust: a store folder's catalogue and files, the search indexes, the
audit's tail, sessions and escalations. Each test is the attacker's move (with file-level access), then what
memlab does: ``verify`` names the damage, and an open or a search refuses rather than serve it."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from memlab import IntegrityError, Level, MemoryStore, SchemaError, tools
from memlab.storage import verify_path
from tests.test_verify import _sql, _unguarded


def _problems(path: Path) -> str:
    result = verify_path(path)
    assert not result.ok, "verify said ok"
    return "\n".join(result.problems)


@pytest.fixture
def folder(tmp_path) -> Path:
    """A store folder with two agents, ann and bob, each with a PUBLIC and a CONFIDENTIAL memory."""
    path = tmp_path / "store"
    with MemoryStore(path, layout="folder") as store:
        for agent in ("ann", "bob"):
            store.session(Level.PUBLIC, agent=agent).memory_save("note", f"{agent}'s public note")
            store.session(Level.CONFIDENTIAL, agent=agent).memory_save("plan", f"{agent}'s secret plan")
    return path


def _file(folder: Path, agent: str) -> Path:
    with MemoryStore(folder) as store:
        return store.storage.agent_path(agent)


# -- V1: verify trusts the catalogue --------------------------------------------------------------------


def test_an_agent_removed_from_the_catalogue_is_still_verified_and_not_served(folder):
    ann = _file(folder, "ann")
    _sql(ann, *_unguarded("UPDATE memories SET content = 'forged' WHERE key = 'note'"))
    _sql(folder / "catalogue.db", "DELETE FROM agents WHERE name = 'ann'")
    problems = _problems(folder)
    assert "version note@PUBLIC/v1 of agent 'ann'" in problems
    assert f"{ann.relative_to(folder)} is not the file of any agent in the catalogue" in problems
    with MemoryStore(folder) as store, pytest.raises(SchemaError, match="ann"):
        store.session(agent="ann").memory_get("note")


def test_a_catalogue_row_pointed_at_another_agents_file_is_caught(folder):
    ann, bob = _file(folder, "ann"), _file(folder, "bob")
    _sql(ann, *_unguarded("UPDATE memories SET content = 'forged' WHERE key = 'note'"))
    _sql(folder / "catalogue.db", f"UPDATE agents SET file = '{bob.relative_to(folder)}' WHERE name = 'ann'")
    problems = _problems(folder)
    assert "version note@PUBLIC/v1 of agent 'ann'" in problems  # ann's own file is verified all the same
    assert "agent 'ann': the catalogue names the file" in problems


def test_verify_never_follows_a_catalogue_path_outside_the_folder(folder, tmp_path):
    """Guards: verify_path opening ``path / file`` from the catalogue instead of the path the name gives."""
    outside = tmp_path / "outside.db"
    shutil.copy(_file(folder, "bob"), outside)
    _sql(folder / "catalogue.db", "UPDATE agents SET file = '../outside.db' WHERE name = 'ann'")
    os.chmod(outside, 0)  # if verify opened it, it would fail to read it rather than pass
    try:
        problems = _problems(folder)
    finally:
        os.chmod(outside, 0o600)
    assert "agent 'ann': the catalogue names the file ../outside.db" in problems
    assert "outside.db:" not in problems


# -- V2: files swapped or copied ------------------------------------------------------------------------


def test_swapped_agent_files_are_caught(folder):
    ann, bob = _file(folder, "ann"), _file(folder, "bob")
    swap = ann.with_name("swap")
    ann.rename(swap)
    bob.rename(ann)
    swap.rename(bob)
    problems = _problems(folder)
    assert "holds agent 'bob', not 'ann'" in problems and "holds agent 'ann', not 'bob'" in problems


def test_a_file_copied_over_another_agents_is_caught(folder):
    shutil.copy(_file(folder, "bob"), _file(folder, "ann"))
    assert "holds agent 'bob', not 'ann'" in _problems(folder)


# -- O6: symlinks ---------------------------------------------------------------------------------------


def test_a_symlinked_agent_folder_is_refused_at_open_and_by_verify(folder, tmp_path):
    ann = _file(folder, "ann")
    elsewhere = tmp_path / "elsewhere"
    shutil.move(ann.parent, elsewhere)
    ann.parent.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(SchemaError, match="symbolic link"):
        MemoryStore(folder)
    assert "is a symbolic link" in _problems(folder)


def test_a_symlink_made_before_an_agent_exists_is_not_written_through(folder, tmp_path):
    with MemoryStore(folder) as store:
        carl = store.storage.agent_path("carl")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    carl.parent.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(SchemaError, match="symbolic link"):
        MemoryStore(folder)
    assert not any(elsewhere.iterdir())


def test_an_agent_file_replaced_by_a_symlink_is_refused_on_open_and_not_written_through(folder, tmp_path):
    """The file itself a link to a copy outside the folder: its open refuses it (one ``lstat`` per step, never
    followed), and the copy is left as it was.

    Guards: ``FolderStorage._damage`` checking the two folders but not the file (``(path.parent.parent,
    path.parent)``)."""
    ann = _file(folder, "ann")
    outside = tmp_path / "outside.db"
    shutil.move(ann, outside)
    ann.symlink_to(outside)
    before = outside.read_bytes()
    with MemoryStore(folder) as store:
        with pytest.raises(SchemaError, match="is a symbolic link"):
            store.session(agent="ann").memory_get("note")
        assert store.session(agent="bob").memory_get("note").content == "bob's public note"
    assert outside.read_bytes() == before


def test_an_agent_file_memlab_may_not_write_is_refused_on_open(folder, monkeypatch):
    """An agent's file the process may not write (its mode, say: here the answer of ``os.access``, since the tests
    may run as root, whom no mode stops) is refused before SQLite opens it read-only.

    Guards: ``AgentFile._check_path`` checking nothing (the folder's checks standing for it)."""
    ann = _file(folder, "ann")
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == ann else real(path, mode))
    with MemoryStore(folder) as store:
        with pytest.raises(SchemaError, match="is read-only"):
            store.session(agent="ann").memory_get("note")
        assert store.session(agent="bob").memory_get("note").content == "bob's public note"


# -- V4: a deleted or emptied file ----------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["deleted", "emptied"])
def test_a_catalogued_agent_whose_file_is_gone_is_refused(folder, damage):
    ann = _file(folder, "ann")
    if damage == "deleted":
        ann.unlink()
    else:
        ann.write_bytes(b"")
    with MemoryStore(folder) as store:
        with pytest.raises(SchemaError, match="'ann'"):
            store.session(agent="ann").memory_get("note")
        assert store.session(agent="bob").memory_get("note").content == "bob's public note"
    assert ann.stat().st_size == 0 if damage == "emptied" else not ann.exists()  # nothing recreated
    assert "agent 'ann': its file" in _problems(folder)


# -- V3: index tampering reads up -----------------------------------------------------------------------


def _single(tmp_path: Path) -> Path:
    path = tmp_path / "one.db"
    with MemoryStore(path, layout="file") as store:
        store.session(Level.PUBLIC).memory_save("note", "lunch with the team")
        store.session(Level.CONFIDENTIAL).memory_save("plan", "acquire Initech over lunch")
    return path


def _ids(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        agent_id = conn.execute("SELECT id FROM agents").fetchone()[0]
        secret = conn.execute("SELECT id FROM memories WHERE key = 'plan'").fetchone()[0]
    finally:
        conn.close()
    return agent_id, secret


def _index_attacks(path: Path) -> dict[str, tuple[str, ...]]:
    agent_id, secret = _ids(path)
    public, confidential = f"fts_{agent_id}_public", f"fts_{agent_id}_confidential"
    columns = "key, content, tags, source, index_when, index_tag_words"
    return {
        "a secret's rowid inserted into the PUBLIC index": (
            f"INSERT INTO {public} (rowid, {columns}) SELECT id, {columns} FROM memories WHERE id = {secret}",
        ),
        "the CONFIDENTIAL index renamed to the PUBLIC one": (
            f"DROP TABLE {public}",
            f"ALTER TABLE {confidential} RENAME TO {public}",
        ),
    }


@pytest.mark.parametrize(
    "attack", ["a secret's rowid inserted into the PUBLIC index", "the CONFIDENTIAL index renamed to the PUBLIC one"]
)
def test_a_tampered_index_fails_a_search_closed_and_verify_names_it(tmp_path, attack):
    """Guards: SqliteStorage.search without its check_in_view (the search then returns the CONFIDENTIAL hit); _rank's
    ``held`` not read from its join on effective (``row[3] is not None``, or ``True``): both seen failing."""
    path = _single(tmp_path)
    agent_id, _ = _ids(path)
    _sql(path, *_index_attacks(path)[attack])
    with MemoryStore(path) as store:
        session = store.session(Level.PUBLIC)
        with pytest.raises(IntegrityError, match=f"fts_{agent_id}_public.*memlab verify"):
            session.memory_search("lunch")
        result = tools.call(session, "memory_search", {"query": "lunch"})
        assert result["error"]["code"] == "integrity_error"
        assert "Initech" not in str(result) and "plan" not in str(result)
        audit = store.audit()
        assert audit["outcome"].tolist()[-2:] == ["integrity_error", "integrity_error"]
        assert len(audit) == 2 + 2  # the two saves, then one row per search
    assert f"fts_{agent_id}_public" in _problems(path)


def test_a_blinded_index_mask_is_caught(tmp_path):
    path = _single(tmp_path)
    _sql(path, "UPDATE agents SET indexed_levels = 0")
    assert "indexed_levels" in _problems(path)


def test_an_index_with_edited_terms_is_caught(tmp_path):
    path = _single(tmp_path)
    agent_id, _ = _ids(path)
    table = f"fts_{agent_id}_public"
    columns = "key, content, tags, source, index_when, index_tag_words"
    _sql(
        path,
        f"INSERT INTO {table} ({table}, rowid, {columns}) SELECT 'delete', id, {columns} FROM memories "
        "WHERE key = 'note'",
        f"INSERT INTO {table} (rowid, {columns}) SELECT id, 'note', 'acquire Initech', '[]', NULL, NULL, NULL "
        "FROM memories WHERE key = 'note'",
    )
    assert f"{table}: its terms are not those of the versions it indexes" in _problems(path)


def test_a_stray_index_table_is_caught(tmp_path):
    path = _single(tmp_path)
    agent_id, _ = _ids(path)
    _sql(path, f"CREATE VIRTUAL TABLE fts_{agent_id}_all USING fts5(content)")
    assert f"fts_{agent_id}_all" in _problems(path)


def test_a_vector_of_a_purged_or_missing_version_is_caught(tmp_path):
    path = _single(tmp_path)
    _sql(path, "INSERT INTO vectors (memory_id, model, vector) VALUES (999, 'm', x'00000000')")
    assert "vectors" in _problems(path)


def test_untouched_indexes_verify(tmp_path):
    path = _single(tmp_path)
    with MemoryStore(path) as store:
        session = store.session(Level.INTERNAL)
        session.memory_save("note", "lunch moved")
        session.memory_delete("note")
        assert store.verify().ok, store.verify()
    assert verify_path(path).ok


# -- V5: the tail of a chain, a rolled-back file, an agent removed whole ---------------------------------


def test_the_audits_tail_removed_is_caught_against_the_catalogues_record(folder):
    _sql(_file(folder, "ann"), *_unguarded("DELETE FROM audit WHERE seq = (SELECT MAX(seq) FROM audit)"))
    assert "agent 'ann': its audit ends before seq 2, which the catalogue recorded" in _problems(folder)


def test_a_file_rolled_back_to_an_older_copy_of_itself_is_caught(folder, tmp_path):
    ann = _file(folder, "ann")
    older = tmp_path / "older.db"
    shutil.copy(ann, older)
    with MemoryStore(folder) as store:
        store.session(Level.CONFIDENTIAL, agent="ann").memory_delete("plan")
    shutil.copy(older, ann)
    assert "agent 'ann': its audit ends before seq 3, which the catalogue recorded" in _problems(folder)


def test_a_rollback_caught_up_with_forged_calls_is_caught(folder, tmp_path):
    """A rolled-back file given as many calls again as it had: the row at the recorded length is another."""
    ann = _file(folder, "ann")
    older = tmp_path / "older.db"
    shutil.copy(ann, older)
    with MemoryStore(folder) as store:
        store.session(Level.CONFIDENTIAL, agent="ann").memory_delete("plan")
    shutil.copy(older, ann)
    with MemoryStore(older, layout="file") as forked:  # the same file, another third call
        forked.session(agent="ann").memory_get("note")
    shutil.copy(older, ann)
    assert "agent 'ann': its audit row seq 3 is not the head the catalogue recorded" in _problems(folder)


def test_an_agent_removed_with_its_catalogue_row_is_caught_by_the_log(folder):
    ann = _file(folder, "ann")
    ann.unlink()
    _sql(folder / "catalogue.db", "DELETE FROM agents WHERE name = 'ann'")
    assert "agent 'ann': logged as created, but not in the catalogue (removed)" in _problems(folder)


def test_the_log_of_agents_is_append_only_and_chained(folder):
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        _sql(folder / "catalogue.db", "DELETE FROM agent_log WHERE name = 'ann'")
    _sql(
        folder / "catalogue.db",
        "DROP TRIGGER agent_log_no_delete",
        "DELETE FROM agent_log WHERE name = 'ann'",
        "DELETE FROM agents WHERE name = 'ann'",
    )
    assert "the catalogue's log of agents, entry 1: removed, edited or forged" in _problems(folder)


@pytest.mark.parametrize(
    "edit",
    ["UPDATE agent_log SET file = 'agents/00/forged.db' WHERE name = 'ann'", "UPDATE agent_log SET hash = 'x'"],
    ids=["a file edited", "a hash edited"],
)
def test_an_edited_entry_of_the_log_of_agents_is_caught(folder, edit):
    """An entry edited in place, its sequence numbers intact, triggers put back: only the entry's hash tells.

    Guards: folder_verify._check_log comparing sequence numbers only (``stored != previous`` dropped): seen
    failing."""
    assert verify_path(folder).ok
    _sql(
        folder / "catalogue.db",
        "DROP TRIGGER agent_log_no_update",
        edit,
        "CREATE TRIGGER agent_log_no_update BEFORE UPDATE ON agent_log "
        "BEGIN SELECT RAISE(ABORT, 'the log of agents is append-only'); END",
    )
    assert "the catalogue's log of agents, entry 1: removed, edited or forged" in _problems(folder)


def test_verifying_a_folder_store_records_the_heads_it_verified(folder):
    with MemoryStore(folder) as store:
        store.session(agent="ann").memory_get("note")
        assert store.verify().ok
        _sql(_file(folder, "ann"), *_unguarded("DELETE FROM audit WHERE seq = 3"))
        assert not store.verify().ok


# -- V6: sessions and escalations, against the audited calls ---------------------------------------------


@pytest.fixture
def escalated(tmp_path) -> Path:
    path = tmp_path / "sessions.db"
    with MemoryStore(path, layout="file") as store:
        session = store.session(Level.PUBLIC, session_id="chat")
        session.memory_get("note")
        session.escalate(Level.CONFIDENTIAL, reason="read the HR file")
        session.memory_save("plan", "acquire Initech")
        store.session(Level.INTERNAL, session_id="quiet")
    return path


SESSION_TAMPERING = {
    "an escalation deleted": (
        "DELETE FROM taint_events",
        "session 'chat': audited at CONFIDENTIAL, a taint it never held",
    ),
    "an escalation forged out of order": (
        "INSERT INTO taint_events (session_id, at, from_level, to_level, reason) "
        "VALUES ('quiet', 'now', 'PUBLIC', 'CONFIDENTIAL', 'forged')",
        "session 'quiet': escalation 1 starts at PUBLIC, not at INTERNAL",
    ),
    "a starting taint edited": (
        "UPDATE sessions SET taint = 'CONFIDENTIAL' WHERE id = 'chat'",
        "session 'chat': escalation 1 starts at PUBLIC, not at CONFIDENTIAL",
    ),
    "a session deleted": (
        "DELETE FROM sessions WHERE id = 'chat'",
        "session 'chat': audited, but missing",
    ),
}


@pytest.mark.parametrize("method", list(SESSION_TAMPERING))
def test_sessions_and_escalations_are_checked_against_the_audit(escalated, method):
    statement, problem = SESSION_TAMPERING[method]
    assert verify_path(escalated).ok
    _sql(escalated, "PRAGMA foreign_keys = OFF", statement)
    assert problem in _problems(escalated)


def test_a_folder_agents_sessions_are_checked_too(folder):
    _sql(_file(folder, "ann"), "DELETE FROM sessions")
    assert "audited, but missing" in _problems(folder)


# -- a deletion is final (P3, SQLite) ------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["file", "folder"])
def test_a_delete_cannot_be_undone_in_the_database(tmp_path, layout):
    """Guards: no trigger on deleted_at (the attacker sets it back to NULL, repairs the view and the index, and
    the key is live again without a trigger dropped)."""
    path = tmp_path / "store"
    with MemoryStore(path, layout=layout) as store:
        session = store.session(Level.PUBLIC)
        session.memory_save("k", "v")
        session.memory_delete("k")
        file = path if layout == "file" else store.storage.agent_path("main")
    for statement in (
        "UPDATE memories SET deleted_at = NULL, deleted_by = NULL WHERE key = 'k'",
        "UPDATE memories SET deleted_at = '2020-01-01T00:00:00+00:00' WHERE key = 'k'",
        "UPDATE memories SET deleted_by = 'someone else' WHERE key = 'k'",
    ):
        with pytest.raises(sqlite3.IntegrityError, match="a deletion is final"):
            _sql(file, statement)
    with MemoryStore(path, layout=layout) as store:
        assert store.session(Level.PUBLIC).memory_get("k") is None
        assert store.purge("main", "k", reason="request #1")  # a purge of a deleted key still works
        assert store.verify().ok


def test_a_file_from_before_the_deletion_trigger_gains_it_when_opened(tmp_path):
    path = tmp_path / "store.db"
    with MemoryStore(path, layout="file") as store:
        store.session().memory_save("k", "v")
    _sql(path, "DROP TRIGGER memories_deletion_final")  # as a schema-3 file written before the trigger existed
    assert "trigger memories_deletion_final is missing" in str(verify_path(path))
    with MemoryStore(path) as store:
        assert store.verify().ok
    assert verify_path(path).ok


# -- a tampered view: every read checks what it returns against the session's label (issue 33) ------------


def _tampered(tmp_path: Path, layout: str, *, label: bool = False) -> tuple[Path, Path]:
    """A store whose ``effective`` table was given one forged row: the PUBLIC view (or, with ``label``, the
    ``CONFIDENTIAL:legal`` view) of key ``plan`` points at the CONFIDENTIAL (or ``CONFIDENTIAL:hr``) version that
    says "acquire Initech", and the PUBLIC index holds it too (so a search finds it). Returns the store's path and
    the file that was edited."""
    path = tmp_path / "store"
    secret, reader = ("CONFIDENTIAL:hr", "CONFIDENTIAL:legal") if label else ("CONFIDENTIAL", "PUBLIC")
    with MemoryStore(path, layout=layout) as store:
        reading = store.session(reader)
        reading.memory_save("note", "lunch with the team")
        reading.memory_search("lunch")  # a categorised label's index is made on its first search
        store.session(secret).memory_save("plan", "acquire Initech over lunch")
        file = path if layout == "file" else store.storage.agent_path("main")
    agent_id, memory_id = _ids(file)
    view = "'CONFIDENTIAL:legal'" if label else "0"
    columns = "key, content, tags, source, index_when, index_tag_words"
    index = f"fts_{agent_id}_{'confidential:legal' if label else 'public'}"
    _sql(
        file,
        f"INSERT INTO effective (agent_id, key, taint, memory_id) VALUES ({agent_id}, 'plan', {view}, {memory_id})",
        f'INSERT INTO "{index}" (rowid, {columns}) SELECT id, {columns} FROM memories WHERE id = {memory_id}',
    )
    return path, file


def _reads(session) -> dict[str, object]:
    """Every door through which a session reads memories, each as a call to make."""
    from memlab import mcp_resources
    from memlab.integrations.langgraph import MemlabStore

    graph = MemlabStore(session.store, taint=session.taint)
    return {
        "get": lambda: session.memory_get("plan"),
        "list": lambda: session.memory_list(),
        "search": lambda: session.memory_search("lunch"),
        "recall": lambda: session.recall(),
        "tool get": lambda: tools.call(session, "memory_get", {"key": "plan"}),
        "tool list": lambda: tools.call(session, "memory_list", {}),
        "tool search": lambda: tools.call(session, "memory_search", {"query": "lunch"}),
        "langgraph get": lambda: graph.get(("main",), "plan"),
        "langgraph search": lambda: graph.search(("main",)),
        "langgraph query": lambda: graph.search(("main",), query="lunch"),
        "mcp recall": lambda: mcp_resources.read_resource(session, "memory://recall"),
    }


@pytest.mark.parametrize("label", [False, True], ids=["level", "label"])
@pytest.mark.parametrize("layout", ["file", "folder"])
def test_a_tampered_view_fails_every_read_closed_and_audits_it(tmp_path, layout, label):
    """An ``INSERT INTO effective`` pointing a PUBLIC (or ``CONFIDENTIAL:legal``) view at a CONFIDENTIAL (``:hr``)
    version: every read door fails closed with ``integrity_error``, the message naming the table and never the
    key, one audit row each, and nothing of the secret reaches the caller.

    Guards: Session reading a storage's result without ``_check_readable`` (get, list and recall then hand
    "acquire Initech" to a PUBLIC session; search does too once the index holds the forged row): seen failing."""
    from mcp.shared.exceptions import MCPError

    path, _ = _tampered(tmp_path, layout, label=label)
    with MemoryStore(path) as store:
        session = store.session("CONFIDENTIAL:legal" if label else "PUBLIC")
        before = len(store.audit())
        for door, read in _reads(session).items():
            try:
                result = read()
            except (IntegrityError, MCPError) as error:
                result = str(error)
                assert "effective" in result and "memlab verify" in result, (door, result)
            else:
                assert isinstance(result, dict) and result["error"]["code"] == "integrity_error", (door, result)
            assert "Initech" not in str(result) and "plan" not in str(result).replace("memory_", ""), (door, result)
        audit = store.audit().iloc[before:]
        failed = audit[audit["outcome"] == "integrity_error"]
        assert len(failed) == len(_reads(session)), audit[["tool", "outcome"]]
        assert all("effective" in message and "plan" not in message for message in failed["message"])
        assert not any("Initech" in str(value) for value in audit.to_numpy().ravel())
