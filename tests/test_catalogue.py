"""memlab.storage.catalogue: a store folder's catalogue — made, checked and refused; its chained log of agents;
the recorded chain heads."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from memlab.errors import SchemaError
from memlab.storage import chain
from memlab.storage.catalogue import (
    SCHEMA_VERSION,
    ensure_records,
    log_agent,
    open_catalogue,
    record_head,
)
from memlab.storage.layout import CATALOGUE, FORMAT, LOCK


def opened(path: Path, analyzer: str = "porter", views: str = "lattice") -> contextlib.closing[sqlite3.Connection]:
    return contextlib.closing(open_catalogue(path, analyzer=analyzer, views=views, busy_timeout=1.0))


def test_a_new_catalogue_is_made_in_a_new_folder(tmp_path):
    folder = tmp_path / "store"
    with opened(folder) as conn:
        meta = dict(conn.execute("SELECT name, value FROM memlab_meta"))
        assert (meta["format"], meta["schema_version"], meta["views"]) == (FORMAT, str(SCHEMA_VERSION), "lattice")
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert sorted(path.name for path in folder.iterdir() if not path.name.startswith(f"{CATALOGUE}-")) == sorted(
        [CATALOGUE, LOCK]
    )
    with opened(folder):  # reopened: checked, not made again
        pass


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda path: path.write_text("x"), "is a file, not a store folder"),
        (lambda path: (path.mkdir(), (path / "notes.txt").write_text("x")), r"holds other files \(notes.txt\)"),
    ],
)
def test_a_path_holding_something_else_is_refused(tmp_path, make, message):
    folder = tmp_path / "store"
    make(folder)
    with pytest.raises(SchemaError, match=message), opened(folder):
        pass
    assert not (folder / CATALOGUE).exists()


def test_a_folder_in_a_missing_folder_is_refused(tmp_path):
    with pytest.raises(SchemaError, match="does not exist"), opened(tmp_path / "missing" / "store"):
        pass


def test_a_linked_catalogue_is_refused(tmp_path):
    folder, elsewhere = tmp_path / "store", tmp_path / "elsewhere.db"
    with opened(folder):
        pass
    (folder / CATALOGUE).rename(elsewhere)
    (folder / CATALOGUE).symlink_to(elsewhere)
    with pytest.raises(SchemaError, match="symbolic link"), opened(folder):
        pass


@pytest.mark.parametrize(("analyzer", "views"), [("trigram", "lattice"), ("porter", "lattice global-statistics")])
def test_a_catalogue_opened_with_another_analyzer_or_views_is_refused(tmp_path, analyzer, views):
    with opened(tmp_path / "store"):
        pass
    with pytest.raises(SchemaError, match="open it with the"), opened(tmp_path / "store", analyzer, views):
        pass


def log(conn: sqlite3.Connection) -> list[tuple]:
    return conn.execute("SELECT seq, name, file, hash FROM agent_log ORDER BY seq").fetchall()


def test_the_log_of_agents_is_chained_from_the_genesis_and_append_only(tmp_path):
    # Guards: catalogue.log_agent chaining each entry from the genesis (an entry then removable unnoticed).
    with opened(tmp_path / "store") as conn:
        log_agent(conn, "main", "0d/x.db")
        log_agent(conn, "bob", "1a/y.db")
        genesis = conn.execute("SELECT value FROM memlab_meta WHERE name = 'chain_genesis'").fetchone()[0]
        first, second = log(conn)
        assert first[3] == chain.audit_hash(genesis, (1, "main", "0d/x.db"))
        assert second[3] == chain.audit_hash(first[3], (2, "bob", "1a/y.db"))
        for statement in ("UPDATE agent_log SET name = 'eve'", "DELETE FROM agent_log"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                conn.execute(statement)


def test_an_older_catalogue_gains_its_records_and_logs_its_agents(tmp_path):
    with opened(tmp_path / "store") as conn:
        conn.execute("DROP TABLE agent_log")
        conn.execute("CREATE TABLE agents_old AS SELECT name, file FROM agents")
        conn.execute("DROP TABLE agents")
        conn.execute("ALTER TABLE agents_old RENAME TO agents")
        conn.execute("INSERT INTO agents VALUES ('main', 'a.db'), ('bob', 'b.db')")
        ensure_records(conn)
        assert [row[1:3] for row in log(conn)] == [("main", "a.db"), ("bob", "b.db")]
        assert {"audit_rows", "audit_head"} <= {row[1] for row in conn.execute("PRAGMA table_info(agents)")}
        ensure_records(conn)  # once is enough
        assert len(log(conn)) == 2


def test_a_recorded_head_only_moves_forward(tmp_path):
    with opened(tmp_path / "store") as conn, contextlib.closing(sqlite3.connect(":memory:")) as agent_file:
        conn.execute("INSERT INTO agents (name, file) VALUES ('main', 'a.db')")
        agent_file.execute("CREATE TABLE audit (seq INTEGER PRIMARY KEY, hash TEXT)")
        record_head(conn, "main", agent_file)  # no audit yet: nothing recorded
        agent_file.executemany("INSERT INTO audit VALUES (?, ?)", [(1, "h1"), (2, "h2")])
        record_head(conn, "main", agent_file)
        assert conn.execute("SELECT audit_rows, audit_head FROM agents").fetchone() == (2, "h2")
        agent_file.execute("DELETE FROM audit WHERE seq = 2")  # another process is ahead of this one
        record_head(conn, "main", agent_file)
        assert conn.execute("SELECT audit_rows, audit_head FROM agents").fetchone() == (2, "h2")
