"""The tamper-evident audit: each way a database-level attacker could rewrite history, tried on a copy of a
store and caught by ``memlab verify`` (exit status 1, the first broken link named)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from memlab import Level, MemoryStore, SchemaError
from memlab.cli import main
from memlab.storage import verify_path
from memlab.storage.schema import TRIGGERS


def _build(path: Path, layout: str = "file") -> None:
    with MemoryStore(path, layout=layout) as store:
        low = store.session(Level.PUBLIC, session_id="low")
        low.memory_save("user-name", "Sam", tags=["personal"])
        high = store.session(Level.CONFIDENTIAL, session_id="high")
        high.memory_save("salary", "90k", tags=["hr"])
        high.memory_save("salary", "95k", tags=["hr"])
        high.memory_delete("salary")
        high.memory_save("plan", "acquire Initech")
        low.memory_get("salary")
        low.memory_search("name")


@pytest.fixture
def original(tmp_path) -> Path:
    path = tmp_path / "original.db"
    _build(path)
    return path


@pytest.fixture
def copy(original, tmp_path) -> Path:
    target = tmp_path / "copy.db"
    shutil.copy(original, target)
    return target


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def _unguarded(*statements: str) -> tuple[str, ...]:
    """Drop every trigger, run the statements, put the triggers back: the attacker who covers tracks."""
    drops = tuple(f"DROP TRIGGER {name}" for name in TRIGGERS)
    creates = tuple(f"CREATE TRIGGER {name} {sql}" for name, sql in TRIGGERS.items())
    return drops + statements + creates


def test_an_untouched_store_verifies(original, capsys):
    assert main(["verify", str(original)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: 7 audit rows and 4 versions verified; head ")
    with MemoryStore(original) as store:
        result = store.verify()
        assert result.ok and result.head in out


@pytest.mark.parametrize(
    "statement",
    [
        "REPLACE INTO audit (seq, at, session_id, agent, taint, tool, outcome, hash) "
        "VALUES (1, 'x', 'low', 'main', 'PUBLIC', 'memory_get', 'ok', 'x')",
        "INSERT OR REPLACE INTO audit (seq, at, session_id, agent, taint, tool, outcome, hash) "
        "VALUES (2, 'x', 'low', 'main', 'PUBLIC', 'memory_get', 'ok', 'x')",
        "UPDATE audit SET outcome = 'ok' WHERE seq = 6",
        "DELETE FROM audit WHERE seq = 3",
        "UPDATE memories SET classification = 0 WHERE key = 'plan'",
        "UPDATE memories SET content = 'nothing' WHERE key = 'plan'",
        "DELETE FROM memories WHERE key = 'plan'",
    ],
)
def test_the_database_refuses_rewrites(copy, statement):
    with pytest.raises(sqlite3.DatabaseError, match="append-only|never changes"):
        _sql(copy, statement)


TAMPERING = {
    "an audit row edited": (
        _unguarded("UPDATE audit SET outcome = 'not_found' WHERE seq = 2"),
        "audit row seq 2: its hash does not follow",
    ),
    "an audit row removed": (_unguarded("DELETE FROM audit WHERE seq = 3"), "audit seq 3 is missing"),
    "an audit row replaced": (
        _unguarded(
            "REPLACE INTO audit (seq, at, session_id, agent, taint, tool, outcome, records, notes, hash) "
            "VALUES (6, 'x', 'low', 'main', 'PUBLIC', 'memory_get', 'ok', '[]', '[]', 'forged')"
        ),
        "audit row seq 6: its hash does not follow",
    ),
    "an audit row forged at the end": (
        (
            "INSERT INTO audit (seq, at, session_id, agent, taint, tool, outcome, records, notes, hash) "
            "VALUES (8, 'x', 'low', 'main', 'PUBLIC', 'memory_save', 'ok', '[]', '[]', 'forged')",
        ),
        "audit row seq 8: its hash does not follow",
    ),
    "a classification lowered": (
        _unguarded("UPDATE memories SET classification = 0 WHERE key = 'plan'"),
        "version plan@PUBLIC/v1 of agent 'main': no audited save wrote it",
    ),
    "content edited": (
        _unguarded("UPDATE memories SET content = 'acquire nothing' WHERE key = 'plan'"),
        "version plan@CONFIDENTIAL/v1 of agent 'main': its content, tags or context do not match",
    ),
    "a source added": (
        _unguarded("UPDATE memories SET source = 'the CEO said so' WHERE key = 'plan'"),
        "version plan@CONFIDENTIAL/v1 of agent 'main': its content, tags or context do not match",
    ),
    "a date moved": (
        _unguarded("UPDATE memories SET occurred_at = '1999-01-01' WHERE key = 'plan'"),
        "version plan@CONFIDENTIAL/v1 of agent 'main': its content, tags or context do not match",
    ),
    "a version removed": (
        _unguarded("DELETE FROM memories WHERE key = 'plan'"),
        "version plan@CONFIDENTIAL/v1 of agent 'main': audited as saved, but missing",
    ),
    "a version forged": (
        _unguarded(
            "INSERT INTO memories (agent_id, key, content, tags, classification, version, saved_at, saved_by, "
            "salt, commitment) VALUES (1, 'forged', 'x', '[]', 0, 1, 'now', 'low', x'00', 'c')"
        ),
        "version forged@PUBLIC/v1 of agent 'main'",
    ),
    "a delete undone": (
        _unguarded("UPDATE memories SET deleted_at = NULL, deleted_by = NULL WHERE key = 'salary' AND version = 2"),
        "salary@CONFIDENTIAL/v2 of agent 'main': audited as deleted, but live",
    ),
    "a view pointed at a secret": (
        (
            "UPDATE effective SET memory_id = (SELECT id FROM memories WHERE key = 'plan') "
            "WHERE key = 'user-name' AND taint = 0",
        ),
        "effective view of key 'user-name' at PUBLIC",
    ),
    "a trigger dropped": (("DROP TRIGGER audit_no_update",), "trigger audit_no_update is missing"),
    "a table dropped": (("DROP TABLE effective",), "table effective is missing"),
}


@pytest.mark.parametrize("method", list(TAMPERING))
def test_verify_catches_every_tampering(copy, method, capsys):
    statements, first_problem = TAMPERING[method]
    _sql(copy, *statements)
    assert main(["verify", str(copy)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("BROKEN:")
    assert first_problem in out.splitlines()[1], out


def test_opening_a_store_with_a_missing_trigger_or_table_is_refused(copy):
    _sql(copy, "DROP TRIGGER audit_no_delete")
    with pytest.raises(SchemaError, match="trigger audit_no_delete missing"):
        MemoryStore(copy)


def test_verify_covers_every_file_of_a_folder(tmp_path, capsys):
    path = tmp_path / "store"
    _build(path, layout="folder")
    with MemoryStore(path) as store:
        store.session(agent="bob").memory_save("note", "bob's note")
        bob = store.storage.agent_path("bob")
        assert store.verify().ok
    assert main(["verify", str(path)]) == 0
    _sql(bob, *_unguarded("UPDATE memories SET content = 'forged' WHERE key = 'note'"))
    assert main(["verify", str(path)]) == 1
    assert "version note@PUBLIC/v1 of agent 'bob'" in capsys.readouterr().out
    assert not verify_path(path).ok


def test_a_broken_store_lists_all_its_problems_and_says_so(copy, capsys):
    _sql(copy, *(f"DROP TRIGGER {name}" for name in list(TRIGGERS)[:3]))
    assert main(["verify", str(copy)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "BROKEN: 3 problems:"
    assert lines[1:] == [f"  {copy}: trigger {name} is missing" for name in list(TRIGGERS)[:3]]


def test_one_problem_is_one_problem(copy, capsys):
    _sql(copy, "DROP TRIGGER audit_no_delete")
    assert main(["verify", str(copy)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["BROKEN: 1 problem:", f"  {copy}: trigger audit_no_delete is missing"]


def test_verify_of_a_first_wave_file_points_to_migrate_in_serves_words(tmp_path, capsys):
    old = tmp_path / "old.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "store-v1.db", old)
    assert main(["serve", "--db", str(old)]) == 2
    served = capsys.readouterr().err.strip().removeprefix("memlab serve: ")
    assert "memlab migrate" in served
    assert main(["verify", str(old)]) == 2
    assert capsys.readouterr().err.strip() == f"memlab verify: {old}: {served}"
