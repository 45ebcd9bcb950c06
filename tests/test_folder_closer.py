"""memlab.storage.folder_closer: evicted agent files closed on a background thread, their chain heads recorded.

A store folder evicting and reopening files under load is tests/test_folder_files.py's and
tests/test_folder_races.py's; here the Closer runs on stand-ins for an agent's file.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import warnings
from pathlib import Path

import pytest

from memlab.storage import folder_closer
from memlab.storage.catalogue import open_catalogue
from memlab.storage.folder_closer import Closer


class File:
    """What the closer uses of an agent's file: its connection, its path, ``close``."""

    def __init__(self, path: Path, rows: int) -> None:
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("CREATE TABLE IF NOT EXISTS audit (seq INTEGER PRIMARY KEY, hash TEXT)")
        self.conn.executemany("INSERT INTO audit VALUES (?, ?)", [(n, f"h{n}") for n in range(1, rows + 1)])
        self.closed = threading.Event()

    def close(self) -> None:
        self.conn.close()
        self.closed.set()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    with contextlib.closing(
        open_catalogue(tmp_path / "store", analyzer="porter", views="lattice", busy_timeout=1)
    ) as conn:
        conn.executemany("INSERT INTO agents (name, file) VALUES (?, ?)", [("main", "a.db"), ("bob", "b.db")])
    return tmp_path / "store"


def heads(folder: Path) -> dict[str, tuple]:
    with contextlib.closing(sqlite3.connect(folder / "catalogue.db")) as conn:
        return {
            name: (rows, head) for name, rows, head in conn.execute("SELECT name, audit_rows, audit_head FROM agents")
        }


def test_a_closed_file_has_its_head_recorded(folder):
    # Guards: Closer._close closing the file before reading its head (the catalogue then never learns it).
    closer = Closer(folder / "catalogue.db", 1.0)
    main, bob = File(folder / "a.db", 3), File(folder / "b.db", 1)
    closer.close_later("main", main)
    closer.close_later("bob", bob)
    closer.wait_for("main")
    assert main.closed.is_set()
    closer.drain()
    assert bob.closed.is_set()
    assert heads(folder) == {"main": (3, "h3"), "bob": (1, "h1")}
    closer.stop()
    with pytest.raises(sqlite3.ProgrammingError):
        main.conn.execute("SELECT 1")


def test_waiting_for_an_agent_with_nothing_to_close_returns_at_once(folder):
    closer = Closer(folder / "catalogue.db", 1.0)
    closer.wait_for("main")
    closer.drain()
    closer.stop()


def test_a_failed_close_warns_and_the_others_still_close(folder):
    closer = Closer(folder / "catalogue.db", 1.0)
    broken, bob = File(folder / "a.db", 1), File(folder / "b.db", 2)
    broken.conn.execute("DROP TABLE audit")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        closer.close_later("main", broken)
        closer.close_later("bob", bob)
        closer.stop()
    assert [
        str(warning.message) for warning in caught if "closing the file of agent 'main' failed" in str(warning.message)
    ]
    assert broken.closed.is_set() and bob.closed.is_set()
    assert heads(folder)["bob"] == (2, "h2")


def test_the_thread_ends_when_idle_and_a_later_close_starts_another(folder, monkeypatch):
    monkeypatch.setattr(folder_closer, "IDLE_SECONDS", 0.01)
    closer = Closer(folder / "catalogue.db", 1.0)
    closer.close_later("main", File(folder / "a.db", 1))
    closer.drain()
    threads = [thread for thread in threading.enumerate() if thread.name == "memlab-folder-closer"]
    for thread in threads:
        thread.join(timeout=5)
    assert not any(thread.is_alive() for thread in threads)
    later = File(folder / "b.db", 1)
    closer.close_later("bob", later)
    closer.stop()
    assert later.closed.is_set()
