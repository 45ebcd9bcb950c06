"""A store folder's catalogue: its format, the agents and their files, session ids, the chained log of agent
creations and each agent's last recorded chain; opened, created and checked under the folder's lock.

Plain ``sqlite3`` throughout (no sqlite-utils): opening a store folder loads nothing it does not need.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from memlab.errors import SchemaError
from memlab.storage import chain
from memlab.storage.layout import CATALOGUE, FORMAT, LOCK
from memlab.storage.schema import check_meta_values

__all__ = [
    "SCHEMA_VERSION",
    "open_catalogue",
    "catalogue_connection",
    "ensure_catalogue",
    "log_agent",
    "record_head",
    "folder_lock",
]

SCHEMA_VERSION = 1


def open_catalogue(path: Path, *, analyzer: str, views: str, busy_timeout: float) -> sqlite3.Connection:
    """Open the catalogue of the store folder ``path``, creating the folder and the catalogue if new (under the
    folder's lock); refuse a folder holding other things, a symbolic link, or a catalogue this memlab cannot read.

    Raises:
        SchemaError: naming what is wrong.
    """
    if path.exists() and not path.is_dir():
        raise SchemaError(f"{path} is a file, not a store folder")
    if not path.parent.is_dir():
        raise SchemaError(f"cannot create the store folder {path}: {path.parent} does not exist")
    catalogue = path / CATALOGUE
    if path.is_dir():
        refuse_other_files(path)  # before a lock file is made in a folder that is not a store
    try:
        path.mkdir(exist_ok=True)
        # Three processes opening one new folder at once: the check, the catalogue's creation and its switch to
        # WAL are one step (a journal-mode change racing another connection fails at once, busy timeout or not).
        with folder_lock(path):
            refuse_other_files(path)
            refuse_links(path)
            conn = sqlite3.connect(catalogue, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
            try:
                if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memlab_meta'").fetchone():
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        ensure_catalogue(conn, analyzer, views)
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                    conn.execute("COMMIT")
            except BaseException:
                conn.close()
                raise
    except SchemaError:
        raise
    except sqlite3.DatabaseError as error:
        raise SchemaError(f"cannot open {catalogue} as a memlab catalogue: {error}") from error
    except (OSError, sqlite3.Error) as error:
        raise SchemaError(f"cannot open the store folder {path}: {error}") from error
    try:
        conn.execute("PRAGMA synchronous=NORMAL")
        ensure_catalogue(conn, analyzer, views)
    except sqlite3.DatabaseError as error:
        conn.close()
        raise SchemaError(f"cannot open {catalogue} as a memlab catalogue: {error}") from error
    except SchemaError:
        conn.close()
        raise
    return conn


def catalogue_connection(catalogue: Path, busy_timeout: float) -> sqlite3.Connection:
    """Another connection to an existing catalogue (the closer's): autocommit, and, as the store's own, committing
    at ``synchronous=NORMAL``: in WAL a commit then waits for no sync of its own (at FULL every head recorded on an
    eviction waited for one, holding the catalogue's write lock meanwhile), and is on disk by the next checkpoint."""
    conn = sqlite3.connect(catalogue, timeout=busy_timeout, isolation_level=None)
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def ensure_catalogue(conn: sqlite3.Connection, analyzer: str, views: str) -> None:
    """Create the catalogue in an empty file (in the caller's transaction), or check the one there."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "memlab_meta" not in tables:
        if tables:
            raise SchemaError(f"not a memlab catalogue: it holds other tables ({', '.join(sorted(tables)[:5])})")
        conn.execute('CREATE TABLE "memlab_meta" ("name" TEXT PRIMARY KEY, "value" TEXT NOT NULL)')
        conn.executemany(
            "INSERT INTO memlab_meta (name, value) VALUES (?, ?)",
            [("format", FORMAT), ("schema_version", str(SCHEMA_VERSION)), ("analyzer", analyzer), ("views", views)],
        )
        conn.execute('CREATE TABLE "agents" ("name" TEXT PRIMARY KEY, "file" TEXT NOT NULL)')
        conn.execute(
            'CREATE TABLE "sessions" ("id" TEXT PRIMARY KEY, "agent" TEXT NOT NULL, "taint" TEXT NOT NULL, '
            '"created_at" TEXT NOT NULL)'
        )
    meta = dict(conn.execute("SELECT name, value FROM memlab_meta").fetchall())
    check_meta_values(meta, FORMAT, SCHEMA_VERSION, analyzer, views)
    ensure_records(conn)


def ensure_records(conn: sqlite3.Connection) -> None:
    """Give a catalogue what it records of its agents (added in place to a catalogue made before them): each
    agent's audit length and head, and the append-only, chained log of agent creations."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(agents)")}
    if {"audit_rows", "audit_head"} <= columns and conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agent_log'"
    ).fetchone():
        return
    began = not conn.in_transaction  # a new catalogue is made in its creator's transaction
    if began:
        conn.execute("BEGIN IMMEDIATE")
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(agents)")}
        if "audit_rows" not in columns:
            conn.execute("ALTER TABLE agents ADD COLUMN audit_rows INTEGER")
            conn.execute("ALTER TABLE agents ADD COLUMN audit_head TEXT")
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'agent_log'").fetchone():
            conn.execute(
                "INSERT OR IGNORE INTO memlab_meta (name, value) VALUES ('chain_genesis', ?)", (chain.genesis(),)
            )
            conn.execute(
                "CREATE TABLE agent_log (seq INTEGER PRIMARY KEY, name TEXT NOT NULL, file TEXT NOT NULL, "
                "hash TEXT NOT NULL)"
            )
            for name, sql in _LOG_TRIGGERS.items():
                conn.execute(f"CREATE TRIGGER {name} {sql}")
            for name, file in conn.execute("SELECT name, file FROM agents ORDER BY rowid").fetchall():
                log_agent(conn, name, file)
    except BaseException:
        if began:
            conn.execute("ROLLBACK")
        raise
    if began:
        conn.execute("COMMIT")


_APPEND_ONLY = "BEGIN SELECT RAISE(ABORT, 'the log of agents is append-only'); END"
_LOG_TRIGGERS = {
    "agent_log_no_update": f"BEFORE UPDATE ON agent_log {_APPEND_ONLY}",
    "agent_log_no_delete": f"BEFORE DELETE ON agent_log {_APPEND_ONLY}",
}


def log_agent(conn: sqlite3.Connection, agent: str, file: str) -> None:
    """Append an agent's creation to the catalogue's log, chained to the entry before."""
    last = conn.execute("SELECT seq, hash FROM agent_log ORDER BY seq DESC LIMIT 1").fetchone()
    if last is None:
        genesis = conn.execute("SELECT value FROM memlab_meta WHERE name = 'chain_genesis'").fetchone()[0]
        last = (0, genesis)
    seq = last[0] + 1
    conn.execute(
        "INSERT INTO agent_log (seq, name, file, hash) VALUES (?, ?, ?, ?)",
        (seq, agent, file, chain.audit_hash(last[1], (seq, agent, file))),
    )


def record_head(catalogue: sqlite3.Connection, agent: str, conn: sqlite3.Connection) -> None:
    """Record the agent's audit length and head, read from its file's connection ``conn``, in the catalogue (one
    autocommit statement); a record only moves forward (another process may be ahead)."""
    last = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    if last is not None:
        catalogue.execute(
            "UPDATE agents SET audit_rows = ?, audit_head = ? WHERE name = ? AND COALESCE(audit_rows, 0) < ?",
            (last[0], last[1], agent, last[0]),
        )


@contextlib.contextmanager
def folder_lock(path: Path) -> Iterator[None]:
    """Hold the store folder's lock (between processes, and between stores opened in one process)."""
    with open(path / LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def refuse_other_files(path: Path) -> None:
    """Refuse a folder holding files but no catalogue. One listing, so a catalogue being made is seen whole."""
    entries = set(os.listdir(path))
    if CATALOGUE not in entries and entries - {LOCK}:
        shown = ", ".join(sorted(entries - {LOCK})[:5])
        raise SchemaError(f"not a memlab store: the folder {path} holds other files ({shown})")


def refuse_links(path: Path) -> None:
    """Refuse a symbolic link where the store writes: the catalogue, ``agents`` and its fan-out folders (an agent's
    own file is checked when it is opened)."""
    agents = path / "agents"
    places = [path / name for name in (CATALOGUE, f"{CATALOGUE}-wal", f"{CATALOGUE}-shm", LOCK)] + [agents]
    if agents.is_dir() and not agents.is_symlink():
        places += [Path(entry.path) for entry in os.scandir(agents)]
    for place in places:
        if place.is_symlink():
            raise SchemaError(f"{place} is a symbolic link: the store folder is damaged or tampered with")
