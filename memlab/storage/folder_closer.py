"""Closing a store folder's evicted agent files off the call path.

Closing the last connection to a WAL file checkpoints it (copies the WAL into the file and syncs it): tens of
milliseconds on a busy disk, which the call that evicted the file would otherwise wait for. The closer records the
file's chain head in the catalogue (through a connection of its own, so it never needs the store's lock) and closes
the file on one background thread; ``sqlite3`` releases the GIL while it closes. A file being closed is never used
again: the store opens the agent's file anew, and waits first for the close to end (``wait_for``), so no two
connections of this process hold one agent's file. ``stop`` (from the store's ``close``) finishes every close and
joins the thread; the thread also ends by itself once idle. At most ``MAX_PENDING`` files wait to be closed (a
call evicting one more waits). An error while closing is reported as a warning.

Where Python can tell SQLite ``SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`` (``folder_files.keep_wal_on_close``: Python
3.12's ``setconfig``), a close skips the checkpoint and keeps the WAL, synced, so reopening the file writes into
the same WAL; on Python 3.11 the close checkpoints. A WAL over ``KEPT_WAL_BYTES`` is checkpointed by the close
whatever the Python, so no file's WAL grows without bound and a reopen reads little. The store checkpoints the
files closed with their WAL kept when it closes (``kept_wal``), so a closed store folder holds no WAL.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import warnings
from collections import deque
from pathlib import Path
from typing import Any

from memlab.storage.catalogue import catalogue_connection, record_head
from memlab.storage.folder_files import keep_wal_on_close, sync_wal

__all__ = ["Closer"]

IDLE_SECONDS = 1.0  # the thread ends after this long with nothing to close
MAX_PENDING = 32  # files waiting to be closed, at most: each still holds its descriptors
# A WAL kept on close is read whole by the file's next open (SQLite rebuilds its index from it: about 1.5 µs a page,
# 0.39 ms for 256 pages, measured): one larger than this is checkpointed by the close instead.
KEPT_WAL_BYTES = 256 * 1024


class Closer:
    """Records the heads of, and closes, evicted agent files on a background thread.

    Args:
        catalogue: the store folder's ``catalogue.db``.
        busy_timeout: seconds the closer's catalogue writes wait for another connection's transaction.
    """

    def __init__(self, catalogue: Path, busy_timeout: float) -> None:
        self._catalogue = catalogue
        self._busy_timeout = busy_timeout
        self._queue: deque[tuple[str, Any, threading.Event]] = deque()
        self._closing: dict[str, threading.Event] = {}  # agent -> set once its evicted file is closed
        self._busy = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._cond = threading.Condition()
        self.kept_wal: set[Path] = set()
        """The files closed with their WAL kept (``keep_wal_on_close``); the store checkpoints them when it closes."""

    def close_later(self, agent: str, storage: Any) -> None:
        """Record the head of ``agent``'s evicted file and close it, on the closer's thread; waits while
        ``MAX_PENDING`` files are already waiting (a slow disk holds the caller back rather than the descriptors
        piling up)."""
        with self._cond:
            while len(self._queue) >= MAX_PENDING and self._thread is not None:
                self._cond.wait()
            done = threading.Event()
            self._closing[agent] = done
            self._queue.append((agent, storage, done))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memlab-folder-closer")
                self._thread.start()
            self._cond.notify_all()

    def wait_for(self, agent: str) -> None:
        """Return once no file of ``agent`` is waiting to be closed or being closed."""
        with self._cond:
            done = self._closing.get(agent)
        if done is not None:
            done.wait()

    def drain(self) -> None:
        """Return once every file handed over so far is closed and its head recorded."""
        with self._cond:
            while self._queue or self._busy:
                self._cond.wait()

    def stop(self) -> None:
        """Close every file handed over, then end the thread (joined: none is left behind)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        catalogue: sqlite3.Connection | None = None
        try:
            while True:
                with self._cond:
                    while not self._queue and not self._stopping:
                        if not self._cond.wait(timeout=IDLE_SECONDS) and not self._queue:
                            break
                    if not self._queue:
                        self._thread = None  # under the condition: the next close_later starts a new thread
                        return
                    agent, storage, done = self._queue.popleft()
                    self._busy = True
                try:
                    catalogue = self._close(catalogue, agent, storage)
                finally:
                    with self._cond:
                        self._busy = False
                        if self._closing.get(agent) is done:
                            del self._closing[agent]
                        done.set()
                        self._cond.notify_all()
        finally:
            if catalogue is not None:
                catalogue.close()

    def _close(self, catalogue: sqlite3.Connection | None, agent: str, storage: Any) -> sqlite3.Connection | None:
        """Record the head and close the file; the catalogue connection, opened on first use."""
        try:
            try:
                if catalogue is None:
                    catalogue = catalogue_connection(self._catalogue, self._busy_timeout)
                record_head(catalogue, agent, storage.conn)
            finally:
                kept = _wal_bytes(storage.path) <= KEPT_WAL_BYTES and keep_wal_on_close(storage.conn)
                storage.close()
            if kept:
                # No checkpoint: the WAL stays, and its next write appends without a new header to sync. Syncing it
                # here keeps what the checkpoint gave: the file's transactions are on disk once it is closed.
                sync_wal(storage.path)
                with self._cond:
                    self.kept_wal.add(storage.path)
        except Exception as error:  # the thread goes on closing the others; the caller is told
            warnings.warn(
                f"memlab: closing the file of agent {agent!r} failed ({type(error).__name__}: {error}); its chain "
                "head may not be recorded in the catalogue until the store is verified",
                RuntimeWarning,
                stacklevel=1,
            )
        return catalogue


def _wal_bytes(path: Path) -> int:
    """The size of the WAL of the file at ``path`` (0 when it has none)."""
    try:
        return os.stat(f"{path}-wal").st_size
    except FileNotFoundError:
        return 0
