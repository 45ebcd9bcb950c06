"""Erasure in one SQLite file: an auditor's purge of a key's content and tags, and the rewrite of the file and
its WAL that leaves no copy of them."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

from memlab.errors import PurgeIncomplete
from memlab.labels import Label
from memlab.levels import Level
from memlab.records import Memory
from memlab.storage.fts_tables import fts_table
from memlab.storage.indexes import IndexUpkeep, level_bit
from memlab.storage.label_codes import stored, view_table
from memlab.storage.live import latest, live_versions
from memlab.storage.rows import MEMORY_COLUMNS, memory_of
from memlab.viewrules import ViewRules


class Erasure:
    """An auditor's purge in one SQLite file: the content and tags of a key's versions erased, their terms out of
    every index, and the file and its WAL rewritten so no copy of them is left.

    Args:
        conn: the store's connection.
        rules: what the views follow (whether a global index is kept).
        indexes: the views' upkeep (the purged versions leave the views and their indexes).
        path: the store's file (None in memory: no WAL to truncate).
        busy_timeout: how long the checkpoint waits for other connections' readers (named when it gives up).
        lock: the storage's lock, held from the first zeroed page to the truncated WAL.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        rules: ViewRules,
        indexes: IndexUpkeep,
        *,
        path: Path | None,
        busy_timeout: float,
        lock: threading.RLock,
    ) -> None:
        self._conn = conn
        self._rules = rules
        self._indexes = indexes
        self._path = path
        self._busy_timeout = busy_timeout
        self._lock = lock

    def erase(
        self,
        agent_id: int | None,
        indexed: int,
        key: str,
        level: Label | None,
        *,
        purged_at: str,
        purged_by: str,
    ) -> list[Memory]:
        """Erase the content and tags of ``key``'s versions (at ``level``, or every level), in the caller's write
        transaction, itself inside ``erasing``.

        The versions stay, content-free (their existence, classification, history and commitments keep the
        chain verifiable); live ones stop being live. Their terms leave every index, and each index is merged
        into one segment so no old segment keeps them.

        Args:
            agent_id: the agent (None: one that never saved, which has nothing to erase).
            indexed: its mask of indexed levels.
            key: the key whose versions are erased.
            level: only the versions at this classification; None for every one.
            purged_at: when, recorded on each version.
            purged_by: who (the auditor), recorded on each live version it deletes.

        Returns:
            The versions as they were (for the audit's refs).
        """
        level_filter = "" if level is None else "AND classification = ?"
        rows = self._conn.execute(
            f"SELECT m.id, {MEMORY_COLUMNS} FROM memories m WHERE agent_id = ? AND key = ? {level_filter} "
            "AND purged_at IS NULL ORDER BY classification, version",
            (agent_id, key, *(() if level is None else (stored(level),))),
        ).fetchall()
        purged = [memory_of(row[1:]) for row in rows]
        if rows:
            ids = [row[0] for row in rows]
            newest = latest(self._conn, agent_id, [key])
            self._conn.executemany(
                "UPDATE memories SET deleted_at = ?, deleted_by = ? WHERE id = ? AND deleted_at IS NULL",
                [(purged_at, purged_by, memory_id) for memory_id in ids],
            )
            remaining = {place: version for place, version in newest.items() if version[0] not in ids}
            # The index entries leave while the content is still there to say which terms to remove.
            self._indexes.refresh(
                agent_id, [key], live_versions(newest), live_versions(remaining), indexed, changed=min(Level)
            )
            self._conn.executemany(
                "UPDATE memories SET content = '', tags = '[]', source = NULL, occurred_at = NULL, "
                "index_key = NULL, index_content = NULL, index_tags = NULL, index_source = NULL, "
                "index_when = NULL, index_tag_words = NULL, salt = NULL, purged_at = ? WHERE id = ?",
                [(purged_at, memory_id) for memory_id in ids],
            )
            self._conn.executemany("DELETE FROM vectors WHERE memory_id = ?", [(memory_id,) for memory_id in ids])
            tables = [fts_table(agent_id, lvl) for lvl in Level if indexed & level_bit(lvl)]
            tables += [view_table(agent_id, label) for label in self._indexes.label_views(agent_id).values()]
            for table in tables + ([fts_table(agent_id, None)] if self._rules.global_statistics else []):
                self._conn.execute(f'INSERT INTO "{table}" ("{table}") VALUES (\'optimize\')')
        return purged

    @contextlib.contextmanager
    def erasing(self) -> Iterator[None]:
        """Zero every page the block frees (``secure_delete=ON``), then rewrite the file (``VACUUM``: pages
        freed earlier, which may hold copies, are dropped) and checkpoint and truncate the WAL.

        Raises:
            PurgeIncomplete: the WAL could not be checkpointed (see ``_truncate_wal``); the block's changes
                are committed.
        """
        with self._lock:
            self._conn.execute("PRAGMA secure_delete=ON")
            try:
                yield
                self._conn.execute("VACUUM")
                if self._path is not None:
                    self._truncate_wal()
            finally:
                self._conn.execute("PRAGMA secure_delete=FAST")

    def _truncate_wal(self) -> None:
        """Copy the WAL into the file and empty it, or raise PurgeIncomplete.

        Until then the file keeps its old pages and the WAL the new ones. SQLite waits up to the busy timeout
        for other connections' read transactions to end; one that outlasts it (a backup, a ``sqlite3`` shell)
        leaves the checkpoint busy, and nothing short of it ending can finish the erasure.
        """
        busy, _frames, _copied = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise PurgeIncomplete(
                f"the purge is done and audited, but copies of what it erased remain in {self._path} and "
                f"{self._path}-wal: another connection holds a read transaction on it (a backup, a sqlite3 shell?), "
                f"so the WAL could not be checkpointed within {self._busy_timeout:g} s; once that connection ends "
                "its transaction, run the same store.purge again to finish the erasure"
            )
