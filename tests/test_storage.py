"""The sqlite storage: schema checks on open, files shared between processes, concurrent writers."""

import sqlite3
import subprocess
import sys
import textwrap

import pytest

from memlab import Level, MemoryStore, SchemaError
from memlab.storage import SqliteStorage, StorageProvider
from memlab.storage.schema import SCHEMA_VERSION


def test_sqlite_storage_satisfies_the_protocol():
    for name in [n for n in dir(StorageProvider) if not n.startswith("_")]:
        assert callable(getattr(SqliteStorage, name)), name


def test_a_file_store_uses_wal_and_reopens(db_path):
    with MemoryStore(db_path) as store:
        store.session(Level.INTERNAL, session_id="a").memory_save("k", "v")
        assert store.storage.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with MemoryStore(db_path) as store:
        assert store.session(Level.INTERNAL).memory_get("k").content == "v"
        assert store.sessions()["id"].tolist()[0] == "a"


def test_a_newer_schema_is_refused(db_path):
    MemoryStore(db_path).close()
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE memlab_meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(SchemaError, match="newer memlab"):
        MemoryStore(db_path)


def test_a_foreign_database_is_refused_and_left_alone(db_path):
    with sqlite3.connect(db_path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    with pytest.raises(SchemaError, match=r"not a memlab store.*customers"):
        MemoryStore(db_path)
    with sqlite3.connect(db_path) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert tables == ["customers"]


def test_a_file_that_is_not_sqlite_is_refused(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("this is not a database, just some text that is long enough to matter" * 20)
    with pytest.raises(SchemaError, match="cannot open"):
        MemoryStore(path)


def test_a_write_that_fails_leaves_nothing_behind(store, monkeypatch):
    session = store.session()
    session.memory_save("k", "one")

    def explode(*args):
        raise RuntimeError("crash mid-save")

    monkeypatch.setattr(store.storage, "_append_audit", explode)
    with pytest.raises(RuntimeError):
        session.memory_save("k", "two")
    monkeypatch.undo()
    assert session.memory_get("k").content == "one"
    assert [h.memory.content for h in session.memory_search("one two")] == ["one"]
    assert store.history("k")["version"].tolist() == [1]


def _python(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args])


def test_a_second_process_sees_everything(db_path):
    with MemoryStore(db_path) as store:
        store.session(Level.CONFIDENTIAL, session_id="first").memory_save("plan", "acquire Initech", tags=["m&a"])
    child = _python(
        """
        import sys
        from memlab import MemoryStore, Level
        store = MemoryStore(sys.argv[1])
        s = store.session(Level.CONFIDENTIAL, session_id="second")
        assert s.memory_get("plan").content == "acquire Initech"
        assert [h.memory.key for h in s.memory_search("Initech")] == ["plan"]
        assert store.session(Level.PUBLIC).memory_get("plan") is None
        s.memory_save("plan", "acquire Initech and Globex")
        """,
        str(db_path),
    )
    assert child.wait(timeout=60) == 0
    with MemoryStore(db_path) as store:
        session = store.session(Level.CONFIDENTIAL)
        assert session.memory_get("plan").content == "acquire Initech and Globex"
        assert set(store.sessions()["id"]) >= {"first", "second"}
        assert store.audit()["tool"].tolist() == [
            "memory_save",
            "memory_get",
            "memory_search",
            "memory_get",
            "memory_save",
            "memory_get",
        ]


def test_concurrent_writers_lose_nothing(db_path):
    MemoryStore(db_path).close()
    writer = """
        import sys
        from memlab import MemoryStore, Level
        store = MemoryStore(sys.argv[1])
        name = sys.argv[2]
        s = store.session(Level.INTERNAL, session_id=name)
        for n in range(200):
            s.memory_save(f"{name}-{n}", f"note {n} from {name}")
            s.memory_save("shared", f"{name} {n}")
        """
    children = [_python(writer, str(db_path), name) for name in ("alpha", "beta")]
    assert [child.wait(timeout=120) for child in children] == [0, 0]
    with MemoryStore(db_path) as store:
        session = store.session(Level.INTERNAL)
        assert len(session.memory_list()) == 401
        assert store.history("shared")["version"].tolist() == list(range(1, 401))
        assert len(session.memory_search("note", max_results=100)) == 100
        assert len(store.audit()) == 800 + 2  # the list and search above are audited too
