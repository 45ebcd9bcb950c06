"""A store folder's agent files as opened: the schema check made once per schema per process, and how many files
the process can keep open (``open_files_allowed``, counted over its store folders by ``OPEN_FILES``).

Opening an agent file checks its schema (``SqliteStorage``'s check: the tables and triggers present, the format,
schema version, analyzer and views in ``memlab_meta``). That check is a function of two things only, the names
and types of the file's schema objects and those four meta values, so its outcome is remembered for the process
under exactly them: a file whose schema and meta read the same as one already checked passes without the
check's other queries, and anything else (a dropped trigger, a file replaced by another, an edited meta row)
reads differently and is checked in full. The schema parse SQLite makes on a connection's first statement stays
(about half a millisecond for an agent's thirty objects): a connection cannot borrow another's.

Closing a file keeps its WAL where Python can tell SQLite so (``keep_wal_on_close``): ``Connection.setconfig``,
Python 3.12+. Python 3.11's ``sqlite3`` has no way to set the option, so there the close checkpoints.
"""

from __future__ import annotations

import os
import resource
import sqlite3
import threading
from pathlib import Path

from memlab.storage.sqlite import SqliteStorage, check_access

__all__ = [
    "AgentFile",
    "checkpoint",
    "keep_wal_on_close",
    "sync_wal",
    "open_files_allowed",
    "OpenFiles",
    "OPEN_FILES",
    "DESCRIPTORS_PER_FILE",
    "MAX_OPEN_FILES",
    "MIN_OPEN_FILES",
]

DESCRIPTORS_PER_FILE = 3  # an open WAL file holds three: the file, its WAL, its shared memory
MIN_OPEN_FILES = 64
# Each open file holds its parsed schema and the pages it read: measured at 100 memories, 33 KB after a get and 58 KB
# after a search too (300 agents), and 1.0 GB for a process holding 5,833 files of 10,000 agents (~175 KB each;
# benchmarks/README.md); SQLite's page cache bounds a connection's pages at 2 MB.
MAX_OPEN_FILES = 8192
_HEADROOM = 1024  # descriptors always left to the rest of the process (its sockets, files, pipes)
_HEADROOM_SHARE = 8  # and at least this share of its limit
_DESCRIPTOR_CEILING = 65_536  # raised no further, even when the hard limit is unlimited

# The option and ``Connection.setconfig``, which sets it, come together in Python 3.12's ``sqlite3``; 3.11 has neither.
_NO_CKPT_ON_CLOSE: int | None = getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", None)

_CHECKED: dict[tuple[object, ...], None] = {}  # schema keys whose check passed, in this process
_CHECKED_LOCK = threading.Lock()


def open_files_allowed() -> int:
    """How many agent files this process's store folders keep open, together, by default: the soft limit on
    descriptors is raised toward the hard one first; then every descriptor but a headroom (``_HEADROOM``, at least
    an eighth of the limit) may hold a file's three, between ``MIN_OPEN_FILES`` and ``MAX_OPEN_FILES`` files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = _DESCRIPTOR_CEILING if hard == resource.RLIM_INFINITY else min(hard, _DESCRIPTOR_CEILING)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass  # a sandbox may refuse: the limit as it is
    if soft == resource.RLIM_INFINITY:
        soft = _DESCRIPTOR_CEILING
    spare = soft - max(_HEADROOM, soft // _HEADROOM_SHARE)
    return max(MIN_OPEN_FILES, min(MAX_OPEN_FILES, spare // DESCRIPTORS_PER_FILE))


class OpenFiles:
    """The agent files held open by every store folder of this process, counted against the budget they share
    (``open_files_allowed``): two stores sized alone would each take the descriptors meant for both."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    def add(self, files: int) -> None:
        """Count ``files`` more (opened, or, negative, handed to be closed)."""
        with self._lock:
            self.count += files


OPEN_FILES = OpenFiles()


def keep_wal_on_close(conn: sqlite3.Connection) -> bool:
    """Make closing ``conn`` leave its WAL as it is (``SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE``); whether it could.

    A close then neither checkpoints (copies the WAL into the file and syncs both) nor deletes the WAL, and the
    next connection appends to it instead of starting a new one, whose header SQLite syncs on the first write.
    Python 3.12+ sets the option with ``Connection.setconfig``; Python 3.11 has no way to, so there this returns
    False and the close checkpoints.
    """
    if _NO_CKPT_ON_CLOSE is None:
        return False
    conn.setconfig(_NO_CKPT_ON_CLOSE, True)
    return True


def checkpoint(path: Path) -> None:
    """Copy a file's WAL into it and remove the WAL (what closing its last connection does by default)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def sync_wal(path: Path) -> None:
    """Sync the WAL of the file at ``path`` to disk, if it has one: what its checkpoint on close made durable."""
    try:
        descriptor = os.open(f"{path}-wal", os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class AgentFile(SqliteStorage):
    """One agent's file of a store folder: a ``SqliteStorage`` whose schema check is remembered per schema."""

    def _check_path(self) -> None:
        # The store folder has just found a regular, non-empty file here, reached through no link
        # (``FolderStorage._damage``): what is left to refuse is a file memlab may not write.
        check_access(self.path)

    def _check_schema(self) -> dict[str, str]:
        read = self._schema_key()
        if read is None:  # not a memlab file as far as a read can tell: the full check says what it is
            return super()._check_schema()
        key, meta = read
        if key in _CHECKED:
            return meta
        meta = super()._check_schema()
        after = self._schema_key()
        if after is not None and after[0] == key:  # unchanged while checked (nothing upgraded it meanwhile)
            with _CHECKED_LOCK:
                _CHECKED[key] = None
        return meta

    def _schema_key(self) -> tuple[tuple[object, ...], dict[str, str]] | None:
        """What the schema check reads: the schema's objects and the checked meta values (and what they are
        checked against); with the meta as read."""
        try:
            objects = self.conn.execute("SELECT type, name FROM sqlite_master ORDER BY type, name").fetchall()
            meta = dict(self.conn.execute("SELECT name, value FROM memlab_meta").fetchall())
        except sqlite3.Error:
            return None
        checked = tuple(meta.get(name) for name in ("format", "schema_version", "analyzer", "views"))
        return (self.analyzer.name, self.rules.signature, checked, tuple(objects)), meta
