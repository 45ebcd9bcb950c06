"""A store folder's agent files as opened: the schema check made once per schema per process, and how many files
the process can keep open (``open_files_allowed``, counted over its store folders by ``OPEN_FILES``).

Opening an agent file checks its schema (``SqliteStorage``'s check: the tables and triggers present, the format,
schema version, analyzer and views in ``memlab_meta``). That check is a function of two things only, the names
and types of the file's schema objects and those four meta values, so its outcome is remembered for the process
under exactly them: a file whose schema and meta read the same as one already checked passes without the
check's other queries, and anything else (a dropped trigger, a file replaced by another, an edited meta row)
reads differently and is checked in full. The schema parse SQLite makes on a connection's first statement stays
(about half a millisecond for an agent's thirty objects): a connection cannot borrow another's.

Closing a file keeps its WAL where SQLite can be told so (``keep_wal_on_close``): through ``setconfig`` on Python
3.12+, through the connection's own handle before (``_keep_wal_by_handle``: CPython's layout, then SQLite's word
for the handle, checked before the option is set), so an eviction costs no checkpoint on 3.11 either.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import sqlite3
import sys
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

_NO_CKPT_ON_CLOSE = getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", None)  # Python 3.12+
_NO_CKPT_ON_CLOSE_OPTION = 1006  # SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE in sqlite3.h (SQLite 3.16+)
# Where a ``sqlite3.Connection`` holds its ``sqlite3 *db`` right after the object header (``pysqlite_Connection`` in
# CPython 3.8 to 3.13), and where a variadic call passes its integer and pointer arguments as a plain one does.
_HANDLE_LAYOUT = (3, 8) <= sys.version_info[:2] <= (3, 13) and sys.implementation.name == "cpython"
_PLAIN_VARIADIC = sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64", "aarch64")

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


def keep_wal_on_close(conn: sqlite3.Connection, path: Path) -> bool:
    """Make closing ``conn`` (open on the file at ``path``) leave its WAL as it is
    (``SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE``); whether it could.

    A close then neither checkpoints (copies the WAL into the file and syncs both) nor deletes the WAL, and the
    next connection appends to it instead of starting a new one, whose header SQLite syncs on the first write.
    Python 3.12+ says so with ``Connection.setconfig``; before, SQLite is asked directly (``_keep_wal_by_handle``),
    and only once every check of that route passed.
    """
    setconfig = getattr(conn, "setconfig", None)
    if setconfig is not None and _NO_CKPT_ON_CLOSE is not None:
        setconfig(_NO_CKPT_ON_CLOSE, True)
        return True
    return _keep_wal_by_handle(conn, path)


class _Library:
    """The SQLite library the ``sqlite3`` module calls, reached through ``ctypes``: the three functions the handle
    route needs, typed."""

    def __init__(self, cdll: ctypes.CDLL) -> None:
        self.version = cdll.sqlite3_libversion_number
        self.version.argtypes, self.version.restype = [], ctypes.c_int
        self.filename = cdll.sqlite3_db_filename
        self.filename.argtypes, self.filename.restype = [ctypes.c_void_p, ctypes.c_char_p], ctypes.c_char_p
        self.db_config = cdll.sqlite3_db_config
        self.db_config.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
        self.db_config.restype = ctypes.c_int


_LIBRARY: list[_Library | None] = []  # resolved once: [] not yet, [None] unusable


def _library() -> _Library | None:
    """The library of the ``sqlite3`` module (its own symbols, or those of the libsqlite3 it links), when it is the
    one ``sqlite3.sqlite_version_info`` names; None otherwise."""
    if not _LIBRARY:
        library: _Library | None = None
        try:
            import _sqlite3

            library = _Library(ctypes.CDLL(_sqlite3.__file__))
            major, minor, patch = sqlite3.sqlite_version_info
            if library.version() != major * 1_000_000 + minor * 1_000 + patch or (major, minor) < (3, 16):
                library = None
        except (ImportError, OSError, AttributeError):
            library = None
        _LIBRARY.append(library)
    return _LIBRARY[0]


def _keep_wal_by_handle(conn: sqlite3.Connection, path: Path) -> bool:
    """``sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &now)`` on the connection's own ``sqlite3 *``,
    for Pythons without ``setconfig``; whether it took.

    The handle is read where CPython 3.8-3.13 keep it (``_HANDLE_LAYOUT``) and used only once SQLite itself has
    confirmed it: the library is the module's (``_library``), the handle names the file at ``path`` as its main
    database (``sqlite3_db_filename``), and the option reads back as set. Anything else (another interpreter or
    version, a library not the module's, a closed connection) returns False: the close checkpoints, as before.
    """
    if not (_HANDLE_LAYOUT and _PLAIN_VARIADIC) or not isinstance(conn, sqlite3.Connection):
        return False
    library = _library()
    if library is None:
        return False
    db = ctypes.c_void_p.from_address(id(conn) + object.__basicsize__).value
    if not db:
        return False
    named = library.filename(db, b"main")
    if not named or os.path.realpath(os.fsdecode(named)) != os.path.realpath(path):
        return False
    now = ctypes.c_int(-1)
    if library.db_config(db, _NO_CKPT_ON_CLOSE_OPTION, 1, ctypes.byref(now)) != 0:  # SQLITE_OK
        return False
    return now.value == 1


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
