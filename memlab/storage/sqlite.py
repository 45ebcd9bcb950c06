"""The sqlite-utils storage provider: versioned rows, a materialised effective view, per-level FTS5.

For every agent and every taint level T the store keeps the effective view of a session at T twice:
as rows of ``effective`` (key -> version) and as an FTS5 index over exactly those versions. A search
at T is then a single ``MATCH ... ORDER BY rank`` (weighted bm25) on index T: shadowing is already
applied, and the BM25 statistics (document count, average length, term rarity) come from the visible
versions only, so nothing saved or deleted above T, or by another agent, moves a score a session at T
sees. An index is kept only for levels that have had a save; a session at a level without one searches
the index of the highest used level below it, which holds the same view.

Every tool-level call is one short ``BEGIN IMMEDIATE`` transaction that also appends its audit row, so
nothing is read or written unaudited, and concurrent processes queue on the write lock instead of failing.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import sqlite_utils

from memlab.errors import IntegrityError, InvalidArgument, PurgeIncomplete, SchemaError
from memlab.levels import Level
from memlab.records import AuditEvent, Hit, Memory, NewVersion, TaintEvent
from memlab.search.analyzers import Analyzer
from memlab.search.analyzers import resolve as resolve_analyzer
from memlab.search.dense import Embedder, matrix
from memlab.search.ranking import Ranking, when_words
from memlab.storage.schema import (
    UPGRADABLE,
    create_fts_table,
    ensure_schema,
    fts_table,
    indexed_columns,
    tag_words,
    upgrade,
)
from memlab.storage.seal import AUDIT_FIELDS, chain_rows, deletion, seal
from memlab.storage.verify import Verification, verify_file
from memlab.viewrules import ViewRules

__all__ = ["SqliteStorage"]

_MEMORY_COLUMNS = (
    "m.key, m.content, m.tags, m.classification, m.version, m.saved_at, m.saved_by, m.source, m.occurred_at"
)
_AUDIT_COLUMNS = ", ".join((*AUDIT_FIELDS, "hash"))
_SNIPPET_TOKENS = 16
_WAL_AUTOCHECKPOINT_PAGES = 10_000
_BATCHED_INDEX_ROWS = 16
_VECTOR_VIEWS = 4  # effective views' matrices kept per connection (100k vectors of 384 floats: 154 MB)
FUSION_DEPTH = 50  # how deep each ranking is read when two are fused (RRF's weight at rank 50 is ~1/50)


class SqliteStorage:
    """Memories in one SQLite file (or in memory), through sqlite-utils.

    Args:
        path: the database file; None for a private in-memory database.
        connection: an open connection to use instead of ``path`` (e.g. an in-memory copy of a template).
        rules: what the views follow (which versions a taint may read, shadow order, statistics scope).
        busy_timeout: seconds a writer waits for another process's transaction before failing.
        analyzer: how text becomes index terms (``memlab.search.analyzers``; default FTS5's porter).
        ranking: how matches are ordered (column weights, tag boost); a query-time choice that may be changed.
        embedder: turns content into dense vectors (``memlab.search.dense``), stored per version and searched
            when the ranking asks; None keeps search lexical only.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        connection: sqlite3.Connection | None = None,
        rules: ViewRules | None = None,
        busy_timeout: float = 30.0,
        analyzer: Analyzer | str | None = None,
        ranking: Ranking | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.path = None if path is None else Path(path)
        self.busy_timeout = busy_timeout
        self.ranking = ranking if ranking is not None else Ranking()
        self.embedder = embedder
        self._backfilled: set[int] = set()  # agents whose live versions all have vectors of this embedder
        # The vectors of recently searched views, as matrices: (agent id, taint, model) -> (token, view). A view
        # is valid while the token holds: this connection's count of view changes, and SQLite's data_version
        # (which moves when another connection commits).
        self._views_changed = 0
        self._vector_views: OrderedDict[tuple[int, int, str], tuple[tuple[int, int], _VectorView]] = OrderedDict()
        self.rules = rules if rules is not None else ViewRules.lattice()
        self.analyzer = resolve_analyzer(analyzer)
        columns = indexed_columns(self.analyzer)
        self._fts_columns = ", ".join(columns)
        if self.path is not None:
            _check_path(self.path)
        try:
            conn = connection or sqlite3.connect(
                ":memory:" if path is None else str(path),
                timeout=busy_timeout,
                isolation_level=None,  # transactions are explicit: BEGIN IMMEDIATE in _write()
                check_same_thread=False,
            )
        except sqlite3.Error as error:
            raise SchemaError(f"cannot open {path} as a memlab store: {error}") from error
        self.conn = conn  # statements on the hot path go straight to the connection (sqlite-utils wraps each call)
        self._agent_ids: dict[str, int] = {}  # agent ids never change once given, so found ones are cached
        self._lock = threading.RLock()  # one connection, possibly several threads (widgets, servers)
        try:
            self.db = sqlite_utils.Database(conn, execute_plugins=False)
            # Every check reads only; nothing is written to a file (not even its journal mode) before it
            # is known to be this store's or empty.
            self.meta = self._check_schema()
            self._genesis = self.meta["chain_genesis"]
            if path is not None:
                self.db.execute("PRAGMA synchronous=NORMAL")
                # Checkpoint every ~10k pages rather than SQLite's 1k: every save rewrites the same hot pages
                # (index structure records, the audit tail), which a rarer checkpoint copies once, not ten times.
                self.db.execute(f"PRAGMA wal_autocheckpoint={_WAL_AUTOCHECKPOINT_PAGES}")
            self.db.execute("PRAGMA foreign_keys=ON")
            # Freed space is zeroed where that costs no extra I/O (ON costs 10-15% of save throughput); a
            # purge zeroes everything it frees and then rewrites the file (see purge).
            self.db.execute("PRAGMA secure_delete=FAST")
        except sqlite3.DatabaseError as error:
            conn.close()
            raise SchemaError(f"cannot open {path} as a memlab store: {error}") from error
        except SchemaError:
            conn.close()
            raise

    # -- transactions -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One short write transaction, taking the write lock up front so concurrent writers queue."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def _check_schema(self) -> dict[str, str]:
        """Read and check the schema; create it, under the write lock, only in a new, empty database."""
        objects = [row[0] for row in self.conn.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")]
        if "memlab_meta" in objects:
            if self._schema_version() == UPGRADABLE:
                with self._write():
                    if self._schema_version() == UPGRADABLE:  # not upgraded meanwhile by another process
                        upgrade(self.db, self.analyzer, self.rules.signature)
            return ensure_schema(self.db, self.analyzer.name, self.rules.signature)
        if objects:
            raise SchemaError(f"not a memlab store: the database already holds other tables ({', '.join(objects[:5])})")
        if self.path is not None and self.path.stat().st_size > 0:
            # Another process may be creating this store right now: once its write lock is free, the schema
            # is there. A file that is still without it holds something else (a truncated store, say).
            with self._write():
                if not self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memlab_meta'").fetchone():
                    raise SchemaError(
                        f"not a memlab store: {self.path} is not empty but holds no memlab tables (truncated?)"
                    )
            return ensure_schema(self.db, self.analyzer.name, self.rules.signature)
        if self.path is not None:
            self.db.enable_wal()
        with self._write():
            return ensure_schema(self.db, self.analyzer.name, self.rules.signature)

    def _schema_version(self) -> int | None:
        row = self.conn.execute("SELECT value FROM memlab_meta WHERE name = 'schema_version'").fetchone()
        return int(row[0]) if row is not None and str(row[0]).isdigit() else None

    # -- sessions -----------------------------------------------------------------------------------

    def add_session(self, session_id: str, agent: str, taint: Level, created_at: str) -> None:
        try:
            with self._write():
                self.db["sessions"].insert(
                    {"id": session_id, "agent": agent, "taint": taint.name, "created_at": created_at}
                )
        except sqlite3.IntegrityError as error:
            raise InvalidArgument(f"session id {session_id!r} is already taken in this store") from error

    def add_taint_event(self, agent: str, event: TaintEvent) -> None:
        with self._write():
            self.db["taint_events"].insert(
                {
                    "session_id": event.session_id,
                    "at": event.at,
                    "from_level": event.from_level.name,
                    "to_level": event.to_level.name,
                    "reason": event.reason,
                }
            )

    # -- writes -------------------------------------------------------------------------------------

    def save_many(
        self,
        agent: str,
        classification: Level,
        versions: Sequence[NewVersion],
        *,
        saved_by: str,
        audit: Callable[[Memory], AuditEvent],
    ) -> list[Memory]:
        """Save new versions at ``classification`` in one transaction: rows, views, indexes, one audit row each.

        The result is what saving them one by one would give (versions numbered in order, the last
        version of a key effective); only the final state of each key is indexed.
        """
        if not versions:
            return []
        # Vectors are made before the write lock is taken: a model is slow, the lock is shared.
        vectors = None if self.embedder is None else self.embedder.embed([new.content for new in versions])
        with self._write():
            agent_id, indexed = self._agent(agent, create=True)
            if self.rules.lattice_visibility and not indexed & _level_bit(classification):
                indexed = self._start_index(agent_id, classification, indexed)
            keys = list(dict.fromkeys(version.key for version in versions))
            latest = self._latest(agent_id, keys)
            before = live_versions(latest)
            next_id = self.conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM memories").fetchone()[0]
            level = int(classification)
            saved, rows, digests = [], [], []
            for memory_id, new in enumerate(versions, start=next_id):
                previous = latest.get((new.key, level))
                memory = Memory(
                    new.key,
                    new.content,
                    new.tags,
                    classification,
                    1 if previous is None else previous[1] + 1,
                    new.saved_at,
                    saved_by,
                    new.source,
                    new.occurred_at,
                )
                latest[new.key, level] = (memory_id, memory.version, None)
                saved.append(memory)
                when = when_words(new.occurred_at)
                if self.analyzer.prestemmed:
                    texts = (new.key, new.content, " ".join(new.tags), new.source, when)
                    stems = tuple(None if text is None else self.analyzer.index_text(text) for text in texts)
                else:
                    stems = (None, None, None, None, when)
                stems += (tag_words(self.analyzer, new.tags),)
                sealed = seal(agent, new, level, memory.version, saved_by)
                digests.append(sealed.digest)
                rows.append(
                    (memory_id, agent_id, new.key, new.content, sealed.tags, level, memory.version, new.saved_at)
                    + (saved_by, new.source, new.occurred_at, *stems, sealed.salt, sealed.commitment)
                )
            self.conn.executemany(
                "INSERT INTO memories (id, agent_id, key, content, tags, classification, version, saved_at, saved_by, "
                "source, occurred_at, index_key, index_content, index_tags, index_source, index_when, "
                f"index_tag_words, salt, commitment) VALUES ({', '.join('?' * 19)})",
                rows,
            )
            if vectors is not None:
                self.conn.executemany(
                    "INSERT INTO vectors (memory_id, model, vector) VALUES (?, ?, ?)",
                    [(row[0], self.embedder.name, vector.tobytes()) for row, vector in zip(rows, vectors, strict=True)],
                )
            self._refresh(agent_id, keys, before, live_versions(latest), indexed, changed=classification)
            self._append_audits([audit(memory) for memory in saved], digests)
        return saved

    def delete(
        self,
        agent: str,
        key: str,
        classification: Level,
        *,
        deleted_at: str,
        deleted_by: str,
        audit: Callable[[Memory | None], AuditEvent],
    ) -> Memory | None:
        with self._write():
            agent_id, indexed = self._agent(agent)
            row = self.conn.execute(
                f"SELECT m.id, m.deleted_at, {_MEMORY_COLUMNS}, m.commitment FROM memories m "
                "WHERE agent_id = ? AND key = ? AND classification = ? ORDER BY version DESC LIMIT 1",
                (agent_id, key, int(classification)),
            ).fetchone()
            if row is None or row[1] is not None:
                self._append_audit(audit(None))
                return None
            *row, commitment = row
            latest = self._latest(agent_id, [key])
            before = live_versions(latest)
            self.conn.execute(
                "UPDATE memories SET deleted_at = ?, deleted_by = ? WHERE id = ?", (deleted_at, deleted_by, row[0])
            )
            del latest[key, int(classification)]
            memory = _memory(row[2:])
            self._refresh(agent_id, [key], before, live_versions(latest), indexed, changed=classification)
            self._append_audits([audit(memory)], [deletion(agent, memory, commitment, deleted_at, deleted_by)])
        return memory

    def purge(
        self,
        agent: str,
        key: str,
        level: Level | None,
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
                (agent_id, key, *(() if level is None else (int(level),))),
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

    def _fts_columns_of(self, alias: str) -> str:
        return ", ".join(f"{alias}.{column}" for column in self._fts_columns.split(", "))

    def create_agent(self, agent: str) -> None:
        """Make an agent's tables ahead of its first save (a save does it too)."""
        with self._write():
            self._agent(agent, create=True)

    def _agent_id(self, agent: str) -> int | None:
        """The agent's id, or None if it never saved; cheaper than ``_agent`` when levels do not matter."""
        if agent not in self._agent_ids:
            row = self.conn.execute("SELECT id FROM agents WHERE name = ?", (agent,)).fetchone()
            if row is None:
                return None
            self._agent_ids[agent] = row[0]
        return self._agent_ids[agent]

    def _agent(self, agent: str, *, create: bool = False) -> tuple[int | None, int]:
        """The agent's id (None if it never saved) and the bit mask of its indexed levels."""
        row = self.conn.execute("SELECT id, indexed_levels FROM agents WHERE name = ?", (agent,)).fetchone()
        if row is not None or not create:
            return (None, 0) if row is None else row
        # Indexes can be started lazily only when visibility follows the lattice (see _start_index).
        lazy = self.rules.lattice_visibility
        agent_id = self.conn.execute(
            "INSERT INTO agents (name, indexed_levels) VALUES (?, ?)", (agent, 0 if lazy else _ALL_LEVELS)
        ).lastrowid
        for taint in [*([] if lazy else Level), *([None] if self.rules.global_statistics else [])]:
            create_fts_table(self.db, agent_id, self.analyzer, taint)
        return agent_id, 0 if lazy else _ALL_LEVELS

    def _start_index(self, agent_id: int, level: Level, indexed: int) -> int:
        """Create and fill the FTS5 index of ``level``, on the first save at that level.

        Until then a session at ``level`` searches the index of the highest indexed level below, which
        holds the same effective view; keeping only used levels saves index writes on every save and
        keeps an agent's schema small.
        """
        table = create_fts_table(self.db, agent_id, self.analyzer, level)
        self.conn.execute(
            f'INSERT INTO "{table}" (rowid, {self._fts_columns}) SELECT m.id, {self._fts_columns_of("m")} '
            "FROM effective e JOIN memories m ON m.id = e.memory_id WHERE e.agent_id = ? AND e.taint = ?",
            (agent_id, int(level)),
        )
        indexed |= _level_bit(level)
        self.conn.execute("UPDATE agents SET indexed_levels = ? WHERE id = ?", (indexed, agent_id))
        return indexed

    def _latest(self, agent_id: int, keys: list[str]) -> dict[tuple[str, int], tuple[int, int, str | None]]:
        """(key, level) -> id, version and deleted_at of the newest version of each of ``keys`` at each level."""
        # SQLite fills the bare columns of a MAX() aggregate from the row holding the maximum.
        rows = self.conn.execute(
            "SELECT m.key, m.classification, m.id, MAX(m.version), m.deleted_at FROM memories m "
            "WHERE m.agent_id = ? AND m.key IN (SELECT value FROM json_each(?)) GROUP BY m.key, m.classification",
            (agent_id, json.dumps(keys)),
        )
        return {(key, level): (memory_id, version, deleted) for key, level, memory_id, version, deleted in rows}

    def _refresh(
        self,
        agent_id: int,
        keys: list[str],
        before: dict[str, dict[Level, int]],
        after: dict[str, dict[Level, int]],
        indexed: int,
        *,
        changed: Level,
    ) -> None:
        """Bring the effective view and the FTS indexes from ``before`` to ``after`` for ``keys``.

        ``before`` and ``after`` map each key to its live version id per level; the effective view is a
        function of that, so only the differences are written.
        """
        self._views_changed += 1  # cached vector views are stale from here on
        upserts, removals = [], []
        reindex: dict[str, tuple[list[int], list[int]]] = {}
        taints = [taint for taint in Level if taint >= changed or not self.rules.lattice_visibility]
        for key in keys:
            old, new = before.get(key, {}), after.get(key, {})
            for taint in taints:
                previous_winner, winner = self.rules.winner(old, taint), self.rules.winner(new, taint)
                if winner == previous_winner:
                    continue
                if winner is None:
                    removals.append((agent_id, key, int(taint)))
                else:
                    upserts.append((agent_id, key, int(taint), winner))
                if indexed & _level_bit(taint):
                    _note_reindex(reindex, fts_table(agent_id, taint), previous_winner, winner)
            if self.rules.global_statistics:
                for level in Level:
                    _note_reindex(reindex, fts_table(agent_id, None), old.get(level), new.get(level))
        self.conn.executemany("DELETE FROM effective WHERE agent_id = ? AND key = ? AND taint = ?", removals)
        self.conn.executemany(
            "INSERT OR REPLACE INTO effective (agent_id, key, taint, memory_id) VALUES (?, ?, ?, ?)", upserts
        )
        for table, (gone, added) in reindex.items():
            self._index_rows(table, gone, remove=True)
            self._index_rows(table, added, remove=False)

    def _index_rows(self, table: str, ids: list[int], *, remove: bool) -> None:
        """Add the versions ``ids`` to the FTS5 index ``table``, or remove them (their text says which terms).

        A batch goes in one statement over ``json_each`` (per-row statements cost ~2x on a bulk import); a
        few rows go one statement each, which costs less than building the list (~75 vs ~115 µs a row).
        """
        if not ids:
            return
        command = f'"{table}", rowid, {self._fts_columns}' if remove else f"rowid, {self._fts_columns}"
        values = f"'delete', id, {self._fts_columns}" if remove else f"id, {self._fts_columns}"
        select = f'INSERT INTO "{table}" ({command}) SELECT {values} FROM memories'
        if len(ids) < _BATCHED_INDEX_ROWS:
            self.conn.executemany(f"{select} WHERE id = ?", [(memory_id,) for memory_id in ids])
        else:
            self.conn.execute(f"{select} WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id", (json.dumps(ids),))

    # -- reads (each with its audit event, in one transaction) ---------------------------------------

    def effective(
        self, agent: str, taint: Level, key: str, *, audit: Callable[[Memory | None], AuditEvent] | None = None
    ) -> Memory | None:
        """The key's version in the effective view at ``taint``; ``audit=None`` only for policy rules."""
        with self._write():
            memory = self._effective(self._agent_id(agent), taint, key)
            if audit is not None:
                self._append_audit(audit(memory))
        return memory

    def _effective(self, agent_id: int | None, taint: Level, key: str) -> Memory | None:
        row = self.conn.execute(
            f"SELECT {_MEMORY_COLUMNS} FROM effective e JOIN memories m ON m.id = e.memory_id "
            "WHERE e.agent_id = ? AND e.key = ? AND e.taint = ?",
            (agent_id, key, int(taint)),
        ).fetchone()
        return None if row is None else _memory(row)

    def exists(self, agent: str, key: str) -> bool:
        """Whether ``key`` has a live version at any level (only the ``existence-oracle`` variant asks)."""
        row = self.conn.execute(
            "SELECT 1 FROM effective WHERE agent_id = ? AND key = ? AND taint = ?",
            (self._agent_id(agent), key, int(max(Level))),
        ).fetchone()
        return row is not None

    def effective_view(
        self,
        agent: str,
        taint: Level,
        *,
        tag: str | None = None,
        audit: Callable[[list[Memory]], AuditEvent] | None = None,
    ) -> list[Memory]:
        """The effective view at ``taint``; ``audit=None`` only for the auditor's views (no session reads)."""
        with self._write():
            agent_id = self._agent_id(agent)
            if self.rules.shadow_before_match or tag is None:
                view = self._view(agent_id, taint, tag)
            else:
                # Filter first, shadow among the survivors: per key, the highest readable level's view
                # that has a tagged version wins, even when a higher version without the tag is visible.
                views = (
                    self._view(agent_id, level, tag) for level in reversed(Level) if self.rules.can_read(level, taint)
                )
                view = sorted(_first_per_key(views, lambda memory: memory.key), key=lambda memory: memory.key)
            if audit is not None:
                self._append_audit(audit(view))
        return view

    def _view(self, agent_id: int | None, taint: Level, tag: str | None) -> list[Memory]:
        # The tag filter applies to the effective view, i.e. after shadowing: a lower version never
        # surfaces because the version shadowing it lacks the tag.
        tagged = "" if tag is None else "AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)"
        rows = self.conn.execute(
            f"SELECT {_MEMORY_COLUMNS} FROM effective e JOIN memories m ON m.id = e.memory_id "
            f"WHERE e.agent_id = ? AND e.taint = ? {tagged} ORDER BY e.key",
            (agent_id, int(taint), *(() if tag is None else (tag,))),
        )
        return [_memory(row) for row in rows]

    def search(
        self, agent: str, taint: Level, query: str, limit: int, *, audit: Callable[[list[Hit]], AuditEvent]
    ) -> list[Hit]:
        # The natural-language query becomes a safe MATCH expression here, where the index's analyzer is known.
        match = self.analyzer.match_expression(query)
        ranking = self.ranking
        vector = None
        if ranking.uses_dense and match is not None:
            vector = self._query_vector(query)  # outside the write lock, like a save's vectors
            self._backfill(agent)
        fused = ranking.uses_dense and ranking.lexical > 0
        depth = max(limit, FUSION_DEPTH) if fused else limit
        with self._write():
            agent_id, indexed = self._agent(agent)
            lexical = self._lexical(agent_id, indexed, taint, match, depth) if ranking.lexical > 0 else []
            dense = [] if vector is None else self._dense(agent_id, taint, vector, depth)
            self._check_in_view(agent_id, lexical + dense)
            ranked = _fuse(lexical, dense, ranking) if fused else lexical or dense
            hits = self._hits(ranked[:limit], match, query)
            self._append_audit(audit(hits))
        return hits

    def _check_in_view(self, agent_id: int | None, ranked: list[_Ranked]) -> None:
        """Fail closed when an index returned a version outside the view it must hold: the second gate, after the
        index itself (nothing guards an FTS5 index against a database-level write, so one can be made to read up).

        Raises:
            IntegrityError: naming the index, never the version (its key may be above the session's taint).
        """
        for item in ranked:
            row = self.conn.execute(
                "SELECT memory_id FROM effective WHERE agent_id = ? AND key = ? AND taint = ?",
                (agent_id, item.key, item.view),
            ).fetchone()
            if row is None or row[0] != item.memory_id:
                where = f"the search index {item.table}" if item.table else "the vectors table"
                raise IntegrityError(
                    f"{where} returned a version outside the view it holds: this store has been damaged or "
                    "tampered with (run `memlab verify`)"
                )

    def _lexical(
        self, agent_id: int | None, indexed: int, taint: Level, match: str | None, limit: int
    ) -> list[_Ranked]:
        """FTS5's ranking of the session's view, as the rules say it is searched."""
        used = [level for level in Level if indexed & _level_bit(level) and self.rules.can_read(level, taint)]
        if not used or match is None:
            return []
        if self.rules.global_statistics:
            return self._rank(fts_table(agent_id, None), match, limit, taint, only_effective_at=agent_id)
        if self.rules.shadow_before_match:
            # The index of the highest used level <= taint holds exactly the session's effective view.
            return self._rank(fts_table(agent_id, max(used)), match, limit, max(used))
        # Match first, shadow among the matches: each used level's view is searched and, per key,
        # the hit from the highest level wins, even when a higher version did not match.
        ranked = (self._rank(fts_table(agent_id, level), match, limit, level) for level in reversed(used))
        return sorted(_first_per_key(ranked, lambda item: item.key), key=lambda item: -item.score)[:limit]

    def _query_vector(self, query: str) -> np.ndarray:
        self.ranking.require_embedder(self.embedder)
        return self.embedder.embed([query])[0]

    def _backfill(self, agent: str) -> None:
        """Give every version in the agent's views a vector of this embedder, once per agent and connection
        (versions saved without an embedder, or under another model, have none)."""
        agent_id = self._agent_id(agent)
        if agent_id is None or agent_id in self._backfilled:
            return
        model = self.embedder.name
        missing = self.conn.execute(
            "SELECT DISTINCT m.id, m.content FROM effective e JOIN memories m ON m.id = e.memory_id "
            "LEFT JOIN vectors v ON v.memory_id = m.id AND v.model = ? WHERE e.agent_id = ? AND v.memory_id IS NULL",
            (model, agent_id),
        ).fetchall()
        if missing:
            vectors = self.embedder.embed([content for _, content in missing])
            with self._write():
                self.conn.executemany(
                    "INSERT OR REPLACE INTO vectors (memory_id, model, vector) SELECT ?, ?, ? "
                    "WHERE EXISTS (SELECT 1 FROM memories WHERE id = ? AND purged_at IS NULL)",
                    [(i, model, v.tobytes(), i) for (i, _), v in zip(missing, vectors, strict=True)],
                )
                self._views_changed += 1
        self._backfilled.add(agent_id)

    def _dense(self, agent_id: int | None, taint: Level, vector: np.ndarray, limit: int) -> list[_Ranked]:
        """The session's effective view ranked by cosine similarity to ``vector`` (ties in save order)."""
        view = self._vector_view(agent_id, taint)
        if not view.ids.size:
            return []
        scores = view.matrix @ vector
        if scores.size > limit:  # only the candidates for the top ``limit`` (ties at the edge included) are sorted
            edge = np.partition(scores, scores.size - limit)[scores.size - limit]
            chosen = np.flatnonzero(scores >= edge)
        else:
            chosen = np.arange(scores.size)
        order = chosen[np.lexsort((view.ids[chosen], -scores[chosen]))][:limit]
        return [_Ranked(int(view.ids[i]), view.keys[i], float(scores[i]), None, int(taint)) for i in order]

    def _vector_view(self, agent_id: int | None, taint: Level) -> _VectorView:
        """The vectors of the effective view at ``taint`` as one matrix, kept while nothing changes it."""
        token = (self._views_changed, self.conn.execute("PRAGMA data_version").fetchone()[0])
        place = (agent_id or 0, int(taint), self.embedder.name)
        cached = self._vector_views.get(place)
        if cached is not None and cached[0] == token:
            self._vector_views.move_to_end(place)
            return cached[1]
        rows = self.conn.execute(
            "SELECT e.memory_id, e.key, v.vector FROM effective e "
            "JOIN vectors v ON v.memory_id = e.memory_id AND v.model = ? WHERE e.agent_id = ? AND e.taint = ?",
            (self.embedder.name, agent_id, int(taint)),
        ).fetchall()
        view = _VectorView(
            np.array([row[0] for row in rows], dtype=np.int64),
            [row[1] for row in rows],
            matrix([row[2] for row in rows], self.embedder.dimensions),
        )
        self._vector_views[place] = (token, view)
        while len(self._vector_views) > _VECTOR_VIEWS:
            self._vector_views.popitem(last=False)
        return view

    def _rank(
        self, table: str, match: str, limit: int, view: Level, *, only_effective_at: int | None = None
    ) -> list[_Ranked]:
        """The top ``limit`` matches of index ``table``, which holds the effective view at ``view`` (or, with
        ``only_effective_at`` an agent id, every live version, filtered to that agent's view at ``view``)."""
        # Rank by the store's Ranking: bm25(...) with its column weights, minus the tag boost, ties in rowid (save)
        # order. A memory earns the boost when a query word is one of its one-word tags: a hit of the query in
        # the one-word-tags column (weight 0 in the ranking). A second bm25() weighing only that column is
        # below 0 exactly then (FTS5 floors every idf above 0), and it is computed in the same scan, from the
        # hits FTS5 has already read (a subquery collecting the tagged memories instead added 1.4-1.5x to a
        # search naming a tag a quarter of 100k memories carry, this adds 1.1-1.2x).
        # Only the ids, keys and scores are read here: the rows and snippets of the hits shown are made by _hits
        # (FTS5's snippet() here would be computed for every match).
        ranking = self.ranking
        weights = ranking.weights()
        score = f'bm25("{table}", {", ".join(str(weight) for weight in (*weights, 0.0))})'
        parameters: list[Any] = []
        if ranking.tag_boost:
            score += f' - ? * (bm25("{table}", {", ".join(["0"] * len(weights) + ["1"])}) < 0)'
            parameters.append(ranking.tag_boost)
        effective = ""
        if only_effective_at is not None:
            effective = "AND rowid IN (SELECT memory_id FROM effective WHERE agent_id = ? AND taint = ?)"
        parameters += [match, *(() if only_effective_at is None else (only_effective_at, int(view)))]
        ranked = self.conn.execute(
            f'SELECT rowid, {score} AS score FROM "{table}" WHERE "{table}" MATCH ? {effective} '
            "ORDER BY score, rowid LIMIT ?",
            [*parameters, limit],
        ).fetchall()
        keys = dict(
            self.conn.execute(
                f"SELECT id, key FROM memories WHERE id IN ({', '.join('?' * len(ranked))})", [i for i, _ in ranked]
            )
        )
        # A rowid without a version can only be a tampered index: its key is None, and _check_in_view refuses it.
        return [_Ranked(memory_id, keys.get(memory_id), -score, table, int(view)) for memory_id, score in ranked]

    def _hits(self, ranked: list[_Ranked], match: str | None, query: str) -> list[Hit]:
        """The hits shown: each ranked version's row and a snippet of its content, matched words marked — made
        in Python, or for trigram (whose matching Python cannot mirror) by FTS5's snippet() over the index the
        version was found in."""
        if not ranked:
            return []
        marks = ", ".join("?" * len(ranked))
        found = {
            row[0]: _memory(row[1:])
            for row in self.conn.execute(
                f"SELECT m.id, {_MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({marks})", [r.memory_id for r in ranked]
            )
        }
        snippets: dict[int, str] = {}
        if not self.analyzer.python_snippets and match is not None:
            for table in {r.table for r in ranked if r.table is not None}:
                ids = [r.memory_id for r in ranked if r.table == table]
                snippets |= dict(
                    self.conn.execute(
                        f"SELECT rowid, snippet(\"{table}\", 1, '**', '**', '…', {_SNIPPET_TOKENS}) FROM \"{table}\" "
                        f'WHERE "{table}" MATCH ? AND rowid IN ({", ".join("?" * len(ids))})',
                        [match, *ids],
                    )
                )
        terms = self.analyzer.snippet_terms(query)
        return [
            Hit(
                found[r.memory_id],
                r.score,
                snippets.get(r.memory_id)
                or self.analyzer.snippet(found[r.memory_id].content, terms, tokens=_SNIPPET_TOKENS),
            )
            for r in ranked
        ]

    # -- audit and auditor views --------------------------------------------------------------------

    def append_audit(self, event: AuditEvent) -> None:
        with self._write():
            self._append_audit(event)

    def _append_audit(self, event: AuditEvent) -> None:
        self._append_audits([event])

    def _append_audits(self, events: Sequence[AuditEvent], digests: Sequence[str | None] | None = None) -> None:
        """Append audit rows, each chained to the one before (``memlab.storage.seal``)."""
        last = self.conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        seq, previous = last if last is not None else (0, self._genesis)
        rows = chain_rows(events, digests, seq=seq, previous=previous)
        self.conn.executemany(
            f"INSERT INTO audit ({_AUDIT_COLUMNS}) VALUES ({', '.join('?' * (len(AUDIT_FIELDS) + 1))})",
            rows,
        )

    def agents(self) -> list[str]:
        """Every agent that has saved in this store, by name."""
        return [row[0] for row in self.conn.execute("SELECT name FROM agents ORDER BY name")]

    def audit_rows(self, agent: str | None = None) -> Iterator[dict[str, Any]]:
        """The audit, oldest first; only ``agent``'s calls when given."""
        where, parameters = ("", ()) if agent is None else ("WHERE agent = ?", (agent,))
        for row in self.db.query(f"SELECT * FROM audit {where} ORDER BY seq", parameters):
            yield {**row, "records": json.loads(row["records"]), "notes": json.loads(row["notes"])}

    def history_rows(self, agent: str, key: str | None = None) -> Iterator[dict[str, Any]]:
        """Every version of ``key`` (of every key when None), by key, level, then version."""
        for row in self.db.query(
            "SELECT m.key, m.classification, m.version, m.content, m.tags, m.source, m.occurred_at, m.saved_at, "
            "m.saved_by, m.deleted_at, m.deleted_by FROM memories m JOIN agents a ON a.id = m.agent_id "
            f"WHERE a.name = ? {'' if key is None else 'AND m.key = ?'} ORDER BY m.key, m.classification, m.version",
            (agent,) if key is None else (agent, key),
        ):
            yield {**row, "classification": Level(row["classification"]).name, "tags": json.loads(row["tags"])}

    def session_rows(self) -> Iterator[dict[str, Any]]:
        return self.db.query(
            "SELECT id, agent, taint AS initial_taint, created_at FROM sessions ORDER BY created_at, id"
        )

    def taint_event_rows(self) -> Iterator[dict[str, Any]]:
        return self.db.query("SELECT session_id, at, from_level, to_level, reason FROM taint_events ORDER BY id")

    def verify(self) -> Verification:
        """Recompute the audit chain and check every version and view against it (``memlab.storage.verify``)."""
        with self._lock:
            return verify_file(self.db, self._genesis, self.rules, label=str(self.path) if self.path else "")

    def copy(self) -> SqliteStorage:
        """A private in-memory copy of this store (cheap for small stores: experiments fork a template)."""
        with self._lock:
            target = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            self.conn.backup(target)
        return SqliteStorage(connection=target, rules=self.rules, analyzer=self.analyzer)

    def close(self) -> None:
        self.db.close()


def _check_path(path: Path) -> None:
    """Refuse, before SQLite touches it, a path that cannot be a store file memlab may write."""
    if path.is_dir():
        raise SchemaError(f"{path} is a folder, not a store file")
    if not path.parent.is_dir():
        raise SchemaError(f"cannot create the store {path}: its folder {path.parent} does not exist")
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        raise SchemaError(f"{path} is read-only: memlab writes an audit row for every call, so it needs write access")
    if not path.exists() and not os.access(path.parent, os.W_OK):
        raise SchemaError(f"cannot create the store {path}: its folder is read-only")


class _VectorView(NamedTuple):
    """An effective view's vectors: memory ids, keys, and one row of the matrix each."""

    ids: np.ndarray
    keys: list[str]
    matrix: np.ndarray


class _Ranked(NamedTuple):
    """A version in a ranking, before its row is read: its id, key and score, the FTS5 index that found it, and
    the taint whose effective view must hold it."""

    memory_id: int
    key: str
    score: float
    table: str | None
    view: int


def _fuse(lexical: list[_Ranked], dense: list[_Ranked], ranking: Ranking) -> list[_Ranked]:
    """Reciprocal rank fusion by memory key: ``lexical / (k + rank) + dense / (k + rank')``; a key shows the
    version FTS5 found when it found one; ties keep FTS5's order, then the dense order."""
    scores: dict[str, float] = {}
    first_found: dict[str, _Ranked] = {}
    for weight, ranked in ((ranking.lexical, lexical), (ranking.dense, dense)):
        for rank, item in enumerate(ranked, start=1):
            scores[item.key] = scores.get(item.key, 0.0) + weight / (ranking.fusion_k + rank)
            first_found.setdefault(item.key, item)
    order = sorted(scores, key=lambda key: -scores[key])  # stable: first seen first among equals
    return [first_found[key]._replace(score=scores[key]) for key in order]


def _first_per_key(groups: Iterable[list[Any]], key: Callable[[Any], str]) -> list[Any]:
    """Items from several groups, in order of precedence, keeping each key's first occurrence."""
    seen: dict[str, Any] = {}
    for group in groups:
        for item in group:
            seen.setdefault(key(item), item)
    return list(seen.values())


_ALL_LEVELS = sum(1 << int(level) for level in Level)


def live_versions(latest: dict[tuple[str, int], tuple[int, int, str | None]]) -> dict[str, dict[Level, int]]:
    """key -> {level: id} of the versions that are live (the newest at their level and not deleted)."""
    live: dict[str, dict[Level, int]] = {}
    for (key, level), (memory_id, _version, deleted_at) in latest.items():
        if deleted_at is None:
            live.setdefault(key, {})[Level(level)] = memory_id
    return live


def _note_reindex(
    reindex: dict[str, tuple[list[int], list[int]]], table: str, before: int | None, after: int | None
) -> None:
    """Note that ``table`` must drop ``before`` and add ``after`` (either may be None, both may be equal)."""
    if before == after:
        return
    gone, added = reindex.setdefault(table, ([], []))
    if before is not None:
        gone.append(before)
    if after is not None:
        added.append(after)


def _level_bit(level: Level) -> int:
    return 1 << int(level)


def _memory(row: tuple[Any, ...]) -> Memory:
    key, content, tags, classification, version, saved_at, saved_by, source, occurred_at = row
    return Memory(
        key, content, tuple(json.loads(tags)), Level(classification), version, saved_at, saved_by, source, occurred_at
    )
