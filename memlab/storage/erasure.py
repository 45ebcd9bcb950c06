"""Erasure in one SQLite file: an auditor's purge of a key's content and tags, and the rewrite of the file and
its WAL that leaves no copy of them."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from memlab.errors import PurgeIncomplete
from memlab.labels import Label
from memlab.levels import Level
from memlab.records import AuditEvent, Memory
from memlab.storage.fts_tables import fts_table
from memlab.storage.indexes import _level_bit, live_versions
from memlab.storage.label_codes import stored, view_table
from memlab.storage.rows import _MEMORY_COLUMNS, _memory
from memlab.viewrules import ViewRules


class Erasure:
    """``SqliteStorage``'s purge (a mixin over these attributes and the storage's ``_write``, ``_agent``,
    ``_latest``, ``_refresh`` and ``_append_audit``)."""

    conn: sqlite3.Connection
    rules: ViewRules
    path: Path | None
    busy_timeout: float
    _lock: threading.RLock

    def purge(
        self,
        agent: str,
        key: str,
        level: Level | Label | None,
        *,
        purged_at: str,
        purged_by: str,
        audit: Callable[[list[Memory]], AuditEvent],
    ) -> list[Memory]:
        """Erase the content and tags of ``key``'s versions (at ``level``, or every level): an auditor's act.

        The versions stay, content-free (their existence, classification, history and commitments keep the
        chain verifiable); live ones stop being live. Their terms leave every index (each index is merged
        into one segment so no old segment keeps them), and ``_erasing`` zeroes what that frees, rewrites the
        file and truncates the WAL. Returns the versions as they were (for the audit's refs).
        """
        with self._erasing(), self._write():
            agent_id, indexed = self._agent(agent)
            level_filter = "" if level is None else "AND classification = ?"
            rows = self.conn.execute(
                f"SELECT m.id, {_MEMORY_COLUMNS} FROM memories m WHERE agent_id = ? AND key = ? {level_filter} "
                "AND purged_at IS NULL ORDER BY classification, version",
                (agent_id, key, *(() if level is None else (stored(level),))),
            ).fetchall()
            purged = [_memory(row[1:]) for row in rows]
            if rows:
                ids = [row[0] for row in rows]
                latest = self._latest(agent_id, [key])
                self.conn.executemany(
                    "UPDATE memories SET deleted_at = ?, deleted_by = ? WHERE id = ? AND deleted_at IS NULL",
                    [(purged_at, purged_by, memory_id) for memory_id in ids],
                )
                remaining = {place: newest for place, newest in latest.items() if newest[0] not in ids}
                # The index entries leave while the content is still there to say which terms to remove.
                self._refresh(
                    agent_id, [key], live_versions(latest), live_versions(remaining), indexed, changed=min(Level)
                )
                self.conn.executemany(
                    "UPDATE memories SET content = '', tags = '[]', source = NULL, occurred_at = NULL, "
                    "index_key = NULL, index_content = NULL, index_tags = NULL, index_source = NULL, "
                    "index_when = NULL, index_tag_words = NULL, salt = NULL, purged_at = ? WHERE id = ?",
                    [(purged_at, memory_id) for memory_id in ids],
                )
                self.conn.executemany("DELETE FROM vectors WHERE memory_id = ?", [(memory_id,) for memory_id in ids])
                tables = [fts_table(agent_id, lvl) for lvl in Level if indexed & _level_bit(lvl)]
                tables += [view_table(agent_id, label) for label in self._label_views(agent_id).values()]
                for table in tables + ([fts_table(agent_id, None)] if self.rules.global_statistics else []):
                    self.conn.execute(f'INSERT INTO "{table}" ("{table}") VALUES (\'optimize\')')
            self._append_audit(audit(purged))
        return purged

    @contextlib.contextmanager
    def _erasing(self) -> Iterator[None]:
        """Zero every page the block frees (``secure_delete=ON``), then rewrite the file (``VACUUM``: pages
        freed earlier, which may hold copies, are dropped) and checkpoint and truncate the WAL.

        Raises:
            PurgeIncomplete: the WAL could not be checkpointed (see ``_truncate_wal``); the block's changes
                are committed.
        """
        with self._lock:
            self.conn.execute("PRAGMA secure_delete=ON")
            try:
                yield
                self.conn.execute("VACUUM")
                if self.path is not None:
                    self._truncate_wal()
            finally:
                self.conn.execute("PRAGMA secure_delete=FAST")

    def _truncate_wal(self) -> None:
        """Copy the WAL into the file and empty it, or raise PurgeIncomplete.

        Until then the file keeps its old pages and the WAL the new ones. SQLite waits up to the busy timeout
        for other connections' read transactions to end; one that outlasts it (a backup, a ``sqlite3`` shell)
        leaves the checkpoint busy, and nothing short of it ending can finish the erasure.
        """
        busy, _frames, _copied = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise PurgeIncomplete(
                f"the purge is done and audited, but copies of what it erased remain in {self.path} and "
                f"{self.path}-wal: another connection holds a read transaction on it (a backup, a sqlite3 shell?), "
                f"so the WAL could not be checkpointed within {self.busy_timeout:g} s; once that connection ends "
                "its transaction, run the same store.purge again to finish the erasure"
            )
