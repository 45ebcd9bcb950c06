"""The SQLite storage provider: versioned rows, a materialised effective view, per-level FTS5.

For every agent and every taint level T the store keeps the effective view of a session at T twice:
as rows of ``effective`` (key -> version) and as an FTS5 index over exactly those versions. A search
at T is then a single ``MATCH ... ORDER BY rank`` (weighted bm25) on index T: shadowing is already
applied, and the BM25 statistics (document count, average length, term rarity) come from the visible
versions only, so nothing saved or deleted above T, or by another agent, moves a score a session at T
sees. An index is kept only for levels that have had a save; a session at a level without one searches
the index of the highest used level below it, which holds the same view.

Every tool-level call is one short ``BEGIN IMMEDIATE`` transaction that also appends its audit row, so
nothing is read or written unaudited, and concurrent processes queue on the write lock instead of failing.

This module holds the connection, transactions, sessions, writes and reads; the rest of ``SqliteStorage``
comes from one module an idea: ``indexes`` (the effective view and FTS5 upkeep), ``lexical`` (FTS5 ranking,
the second gate, hits), ``vectors`` (dense search and fusion), ``erasure`` (purge) and ``audit`` (the chained
audit and the auditor's views); ``rows`` turns a row of ``memories`` into a ``Memory``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memlab.errors import InvalidArgument, SchemaError
from memlab.labels import Ambiguous, Label
from memlab.levels import Level
from memlab.records import AuditEvent, Hit, Memory, NewVersion, TaintEvent
from memlab.search.analyzers import Analyzer
from memlab.search.analyzers import resolve as resolve_analyzer
from memlab.search.ranking import Ranking, when_words
from memlab.storage.audit import Audit
from memlab.storage.capabilities import BACKENDS
from memlab.storage.erasure import Erasure
from memlab.storage.fts_tables import create_fts_table, indexed_columns, tag_words
from memlab.storage.indexes import _ALL_LEVELS, IndexUpkeep, _labelled, _level_bit, live_versions
from memlab.storage.label_codes import as_label, as_taint, stored
from memlab.storage.lexical import LexicalSearch, _first_per_key
from memlab.storage.rows import _MEMORY_COLUMNS, _memory
from memlab.storage.schema import FORMAT, LATE_TRIGGERS, SCHEMA_VERSION, add_late_triggers, check_meta, ensure_schema
from memlab.storage.seal import deletion, seal_many
from memlab.storage.snapshots import Snapshot, put_back, take
from memlab.storage.upgrade import UPGRADABLE, upgrade
from memlab.storage.vectors import FUSION_DEPTH, VectorSearch, _fuse, _VectorView
from memlab.storage.verify import Verification, verify_file
from memlab.viewrules import AMBIGUOUS, ViewRules, maximal

if TYPE_CHECKING:
    import sqlite_utils

    from memlab.search.dense import Embedder

__all__ = ["SqliteStorage"]

_WAL_AUTOCHECKPOINT_PAGES = 10_000

_TAG_WORDS_KEPT = 4_096
_UNKNOWN = object()
_INSERT_VERSION = (
    "INSERT INTO memories (id, agent_id, key, content, tags, classification, version, saved_at, saved_by, source, "
    "occurred_at, index_key, index_content, index_tags, index_source, index_when, index_tag_words, salt, commitment) "
    f"VALUES ({', '.join('?' * 19)})"
)
_LATEST = "SELECT m.key, m.classification, m.id, MAX(m.version), m.deleted_at FROM memories m WHERE m.agent_id = ? AND "
_LATEST_OF_KEY = _LATEST + "m.key = ? GROUP BY m.classification"
_LATEST_OF_KEYS = _LATEST + "m.key IN (SELECT value FROM json_each(?)) GROUP BY m.key, m.classification"


class SqliteStorage(IndexUpkeep, LexicalSearch, VectorSearch, Erasure, Audit):
    """Memories in one SQLite file (or in memory).

    Args:
        path: the database file; None for a private in-memory database.
        connection: an open connection to use instead of ``path`` (e.g. an in-memory copy of a template).
        rules: what the views follow (which versions a taint may read, shadow order, statistics scope).
        busy_timeout: seconds a writer waits for another process's transaction before failing.
        analyzer: how text becomes index terms (``memlab.search.analyzers``; default FTS5's porter).
        ranking: how matches are ordered (column weights, tag boost); a query-time choice that may be changed.
        embedder: turns content into dense vectors (``memlab.search.dense``), stored per version and searched
            when the ranking asks; None keeps search lexical only.
        index_tag_words: index the one-word tags the tag boost looks in. False makes bm25 (which counts every
            indexed column in a row's length, weighed or not) FTS5's over the text alone: the relevance lab's
            plain rows; such a store boosts nothing.
    """

    view_table = "effective"

    @property
    def capabilities(self) -> frozenset[str]:
        """What this backend can do beyond the contract (``memlab.storage.capabilities``)."""
        return BACKENDS["memory" if self.path is None else "file"]

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
        index_tag_words: bool = True,
    ) -> None:
        self.path = None if path is None else Path(path)
        self.index_tag_words = index_tag_words
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
            self._check_path()
        try:
            conn = connection or sqlite3.connect(
                ":memory:" if path is None else str(path),
                timeout=busy_timeout,
                isolation_level=None,  # transactions are explicit: BEGIN IMMEDIATE in _write()
                check_same_thread=False,
            )
        except sqlite3.Error as error:
            raise SchemaError(f"cannot open {path} as a memlab store: {error}") from error
        # Every statement goes straight to the connection: sqlite-utils (whose import loads pandas and numpy)
        # only creates a new store's tables (memlab.storage.schema).
        self.conn = conn
        self._agent_ids: dict[str, int] = {}  # agent ids never change once given, so found ones are cached
        self._lock = threading.RLock()  # one connection, possibly several threads (widgets, servers)
        # What every call would otherwise read again: the audit chain's head (seq, hash) and each agent's indexed
        # levels (by agent id). They hold while the file is as this connection left it: SQLite's data_version
        # (which moves when another connection commits) and this connection's total_changes (which moves on a
        # write outside memlab's transactions) are as they were at the end of its last transaction.
        self._head: tuple[int, str] | None = None
        self._indexed: dict[int, int] = {}
        # The id the next saved version gets, known after this connection's last save (None: read it). Ids only
        # grow (a version is never deleted), and once a storage has saved, save_many is the one writer of memories
        # in its transactions (a migration fills a new file); any other change is caught by _revalidate.
        self._next_id: int | None = None
        # Pure functions of the rules and their arguments, kept for the connection's life: what a change touches
        # (IndexUpkeep._refresh_plan) and the statements that index a version (IndexUpkeep._index_rows).
        self._refresh_plans: dict[tuple[int, int, Label], tuple[list[Level], dict[Level, str], str | None]] = {}
        self._index_statements: dict[tuple[str, bool], tuple[str, str]] = {}
        self._tag_words_of: dict[tuple[str, ...], str | None] = {}  # tags -> their one-word tags (_tag_words)
        self._boosted: dict[tuple[str, str], bool] = {}  # the tag boost's decisions (LexicalSearch._boosted_terms)
        self._boosted_at = 0
        self._label_views_of: dict[int, dict[str, Label]] = {}  # agent id -> its categorised labels' views
        self._has_label_views: bool | None = None  # whether the file has the table listing them
        self._data_version = -1
        self._changes = -1
        # Sessions recorded but not yet written: each row goes in the next write transaction (the first call's).
        self._pending_sessions: dict[str, tuple[str, str, str, str]] = {}
        try:
            # As sqlite-utils set it when it wrapped every connection: a REPLACE's implicit delete fires the
            # DELETE triggers that keep versions and the audit frozen.
            conn.execute("PRAGMA recursive_triggers=ON")
            # Every check reads only; nothing is written to a file (not even its journal mode) before it
            # is known to be this store's or empty.
            self.meta = self._check_schema()
            self._genesis = self.meta["chain_genesis"]
            if path is not None:
                conn.execute("PRAGMA synchronous=NORMAL")
                # Checkpoint every ~10k pages rather than SQLite's 1k: every save rewrites the same hot pages
                # (index structure records, the audit tail), which a rarer checkpoint copies once, not ten times.
                conn.execute(f"PRAGMA wal_autocheckpoint={_WAL_AUTOCHECKPOINT_PAGES}")
            conn.execute("PRAGMA foreign_keys=ON")
            # Freed space is zeroed where that costs no extra I/O (ON costs 10-15% of save throughput); a
            # purge zeroes everything it frees and then rewrites the file (see purge).
            conn.execute("PRAGMA secure_delete=FAST")
        except sqlite3.DatabaseError as error:
            conn.close()
            raise SchemaError(f"cannot open {path} as a memlab store: {error}") from error
        except SchemaError:
            conn.close()
            raise

    @property
    def db(self) -> sqlite_utils.Database:
        """The connection as a sqlite-utils ``Database``, for tools and tests (memlab's own calls never use it)."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn, execute_plugins=False)

    # -- transactions -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One short write transaction, taking the write lock up front so concurrent writers queue."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self._revalidate()
                written = self._write_pending_sessions()
                yield
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                self._forget()
                raise
            for session_id in written:
                del self._pending_sessions[session_id]
            self._changes = self.conn.total_changes

    def _revalidate(self) -> None:
        """Drop the cached chain head and indexed levels if anything but this connection's transactions changed
        the file since (read under the write lock, so nothing changes it until the transaction ends)."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version or self.conn.total_changes != self._changes:
            self._data_version = version
            self._forget()

    def _forget(self) -> None:
        """Drop every cached row (a transaction rolled back, or the file changed under this connection)."""
        self._head = None
        self._next_id = None
        self._indexed.clear()
        self._boosted.clear()
        self._agent_ids.clear()
        self._label_views_of.clear()
        self._has_label_views = None

    def _check_path(self) -> None:
        """Refuse, before SQLite touches it, a path that cannot be a store file memlab may write."""
        _check_path(self.path)

    def _check_schema(self) -> dict[str, str]:
        """Read and check the schema; create it, under the write lock, only in a new, empty database."""
        objects = [row[0] for row in self.conn.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")]
        if "memlab_meta" in objects:
            if self._schema_version() == UPGRADABLE:
                with self._write():
                    if self._schema_version() == UPGRADABLE:  # not upgraded meanwhile by another process
                        upgrade(self.conn, self.analyzer, self.rules.signature)
            if self._schema_version() == SCHEMA_VERSION and self._lacks_late_triggers():
                # Only a file known to be this store's, for this analyzer and these views, is written to.
                check_meta(self.conn, FORMAT, SCHEMA_VERSION, self.analyzer.name, self.rules.signature)
                with self._write():
                    add_late_triggers(self.conn)
            return ensure_schema(self.conn, self.analyzer.name, self.rules.signature)
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
            return ensure_schema(self.conn, self.analyzer.name, self.rules.signature)
        if self.path is not None:
            self.conn.execute("PRAGMA journal_mode=wal")
        with self._write():
            return ensure_schema(self.conn, self.analyzer.name, self.rules.signature)

    def _lacks_late_triggers(self) -> bool:
        names = ", ".join("?" * len(LATE_TRIGGERS))
        query = f"SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ({names})"
        return self.conn.execute(query, LATE_TRIGGERS).fetchone()[0] < len(LATE_TRIGGERS)

    def _schema_version(self) -> int | None:
        row = self.conn.execute("SELECT value FROM memlab_meta WHERE name = 'schema_version'").fetchone()
        return int(row[0]) if row is not None and str(row[0]).isdigit() else None

    # -- sessions -----------------------------------------------------------------------------------

    def add_session(self, session_id: str, agent: str, taint: Level | Label, created_at: str) -> None:
        """Record a session: a taken id is refused now; the row is written in this storage's next write
        transaction (every call writes its audit row, so the first call carries it), or by ``flush_sessions``.

        Raises:
            InvalidArgument: the id is taken in this file (written, or recorded and pending).
        """
        with self._lock:
            taken = (
                session_id in self._pending_sessions
                or self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            )
            if taken:
                raise InvalidArgument(f"session id {session_id!r} is already taken in this store")
            self._pending_sessions[session_id] = (session_id, agent, str(as_taint(taint)), created_at)

    def flush_sessions(self) -> None:
        """Write the sessions recorded and not yet written (every reader of sessions here does it first)."""
        with self._lock:
            if self._pending_sessions:
                with self._write():
                    pass

    def _write_pending_sessions(self) -> list[str]:
        """Insert the pending sessions in the transaction just begun; return their ids.

        Raises:
            InvalidArgument: another connection took one of their ids since ``add_session`` checked it (that
                session's row is dropped: its id belongs to the other).
        """
        if not self._pending_sessions:
            return []
        rows = list(self._pending_sessions.values())
        try:
            self.conn.executemany("INSERT INTO sessions (id, agent, taint, created_at) VALUES (?, ?, ?, ?)", rows)
        except sqlite3.IntegrityError as error:
            for session_id, *_ in rows:
                if self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                    del self._pending_sessions[session_id]
                    raise InvalidArgument(f"session id {session_id!r} is already taken in this store") from error
            raise
        return [row[0] for row in rows]

    def add_taint_event(self, agent: str, event: TaintEvent) -> None:
        with self._write():
            self.conn.execute(
                "INSERT INTO taint_events (session_id, at, from_level, to_level, reason) VALUES (?, ?, ?, ?, ?)",
                (event.session_id, event.at, str(event.from_level), str(event.to_level), event.reason),
            )

    # -- writes -------------------------------------------------------------------------------------

    def save_many(
        self,
        agent: str,
        classification: Level | Label,
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
        label = as_label(classification)
        classification = as_taint(classification)
        with self._write():
            agent_id, indexed = self._agent(agent, create=True)
            plain = not label.categories
            if plain and not indexed & _level_bit(label.level) and self.rules.lattice_visibility:
                indexed = self._start_index(agent_id, label.level, indexed)
            keys = list(dict.fromkeys(version.key for version in versions))
            latest = self._latest(agent_id, keys)
            before = live_versions(latest)
            next_id = self._next_id
            if next_id is None:
                next_id = self.conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM memories").fetchone()[0]
            level = stored(classification)
            saved, stems = [], []
            for memory_id, new in enumerate(versions, start=next_id):
                previous = latest.get((new.key, level))
                memory = Memory(
                    new.key,
                    new.content,
                    new.tags,
                    label,
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
                    stems_of = tuple(None if text is None else self.analyzer.index_text(text) for text in texts)
                else:
                    stems_of = (None, None, None, None, when)
                stems.append((*stems_of, self._tag_words(new.tags) if self.index_tag_words else None))
            seals = seal_many(agent, versions, level, [memory.version for memory in saved], saved_by)
            digests = [sealed.digest for sealed in seals]
            rows = [
                (memory_id, agent_id, new.key, new.content, sealed.tags, level, memory.version, new.saved_at)
                + (saved_by, new.source, new.occurred_at, *stems_of, sealed.salt, sealed.commitment)
                for memory_id, new, memory, stems_of, sealed in zip(
                    range(next_id, next_id + len(versions)), versions, saved, stems, seals, strict=True
                )
            ]
            self.conn.executemany(_INSERT_VERSION, rows)
            self._next_id = next_id + len(rows)
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
        classification: Level | Label,
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
                (agent_id, key, stored(classification)),
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
            del latest[key, stored(classification)]
            memory = _memory(row[2:])
            self._refresh(agent_id, [key], before, live_versions(latest), indexed, changed=classification)
            self._append_audits([audit(memory)], [deletion(agent, memory, commitment, deleted_at, deleted_by)])
        return memory

    def create_agent(self, agent: str) -> None:
        """Make an agent's tables ahead of its first save (a save does it too)."""
        with self._write():
            self._agent(agent, create=True)

    def _tag_words(self, tags: tuple[str, ...]) -> str | None:
        """``fts_tables.tag_words`` of ``tags`` under this store's analyzer, each distinct list worked out once (the
        same few lists come on save after save; a bounded cache, emptied when full)."""
        if type(tags) is not tuple:
            return tag_words(self.analyzer, tags)
        words = self._tag_words_of.get(tags, _UNKNOWN)
        if words is _UNKNOWN:
            if len(self._tag_words_of) >= _TAG_WORDS_KEPT:
                self._tag_words_of.clear()
            words = self._tag_words_of[tags] = tag_words(self.analyzer, tags)
        return words

    def _agent_id(self, agent: str) -> int | None:
        """The agent's id, or None if it never saved; cheaper than ``_agent`` when levels do not matter."""
        if agent not in self._agent_ids:
            row = self.conn.execute("SELECT id FROM agents WHERE name = ?", (agent,)).fetchone()
            if row is None:
                return None
            self._agent_ids[agent] = row[0]
        return self._agent_ids[agent]

    def _agent(self, agent: str, *, create: bool = False) -> tuple[int | None, int]:
        """The agent's id (None if it never saved) and the bit mask of its indexed levels; in a write transaction
        (the cached levels are revalidated when one begins)."""
        agent_id = self._agent_ids.get(agent)
        if agent_id is not None and agent_id in self._indexed:
            return agent_id, self._indexed[agent_id]
        row = self.conn.execute("SELECT id, indexed_levels FROM agents WHERE name = ?", (agent,)).fetchone()
        if row is not None:
            self._agent_ids[agent], self._indexed[row[0]] = row
        if row is not None or not create:
            return (None, 0) if row is None else row
        # Indexes can be started lazily only when visibility follows the lattice (see _start_index).
        lazy = self.rules.lattice_visibility
        agent_id = self.conn.execute(
            "INSERT INTO agents (name, indexed_levels) VALUES (?, ?)", (agent, 0 if lazy else _ALL_LEVELS)
        ).lastrowid
        for taint in [*([] if lazy else Level), *([None] if self.rules.global_statistics else [])]:
            create_fts_table(self.conn, agent_id, self.analyzer, taint)
        self._agent_ids[agent], self._indexed[agent_id] = agent_id, 0 if lazy else _ALL_LEVELS
        return agent_id, self._indexed[agent_id]

    def _latest(self, agent_id: int, keys: list[str]) -> dict[tuple[str, int], tuple[int, int, str | None]]:
        """(key, level) -> id, version and deleted_at of the newest version of each of ``keys`` at each level."""
        # SQLite fills the bare columns of a MAX() aggregate from the row holding the maximum. One key (every single
        # save) is looked up as itself: no JSON to write, no json_each to scan.
        if len(keys) == 1:
            rows = self.conn.execute(_LATEST_OF_KEY, (agent_id, keys[0]))
        else:
            rows = self.conn.execute(_LATEST_OF_KEYS, (agent_id, json.dumps(keys)))
        return {(key, level): (memory_id, version, deleted) for key, level, memory_id, version, deleted in rows}

    # -- reads (each with its audit event, in one transaction) ---------------------------------------

    def effective(
        self,
        agent: str,
        taint: Level | Label,
        key: str,
        *,
        audit: Callable[[Memory | None], AuditEvent] | None = None,
    ) -> Memory | None:
        """The key's version in the effective view at ``taint``; ``audit=None`` only for policy rules.

        Raises:
            Ambiguous: the policy's shadowing rule refuses to choose among the key's maximal versions at
                ``taint`` (the message names their labels, all of which ``taint`` may read); nothing is written.
        """
        with self._write():
            agent_id = self._agent_id(agent)
            memory = self._effective(agent_id, self._view_of(agent_id, taint), key)
            if audit is not None:
                self._append_audit(audit(memory))
        return memory

    def _effective(self, agent_id: int | None, view: int | str, key: str) -> Memory | None:
        row = self.conn.execute(
            f"SELECT e.memory_id, {_MEMORY_COLUMNS} FROM effective e LEFT JOIN memories m ON m.id = e.memory_id "
            "WHERE e.agent_id = ? AND e.key = ? AND e.taint = ?",
            (agent_id, key, view),
        ).fetchone()
        if row is not None and row[0] == AMBIGUOUS:
            self._refuse_ambiguous(agent_id, key, Label.parse(view))
        return None if row is None else _memory(row[1:])

    def _refuse_ambiguous(self, agent_id: int | None, key: str, taint: Label) -> None:
        """Raise ``Ambiguous`` naming the labels of ``key``'s maximal versions at ``taint``."""
        live = _labelled(live_versions(self._latest(agent_id, [key])).get(key, {}))
        readable = {label: memory_id for label, memory_id in live.items() if self.rules.can_read(label, taint)}
        labels = ", ".join(sorted(str(label) for label in maximal(readable, taint)))
        raise Ambiguous(f"memory {key!r} has several versions you may read, none above the others: {labels}")

    def _view_of(self, agent_id: int | None, taint: Level | Label) -> int | str:
        """The stored form of ``taint``'s view at ``agent_id``: a level's, or a categorised label's (made on its
        first use, in the caller's write transaction)."""
        taint = as_taint(taint)
        if type(taint) is not Label:
            return int(taint)
        return str(taint) if agent_id is None else self._label_view(agent_id, taint)

    def exists(self, agent: str, key: str) -> bool:
        """Whether ``key`` has a live version at any level (only the ``existence-oracle`` variant asks)."""
        agent_id = self._agent_id(agent)
        row = self.conn.execute(
            "SELECT 1 FROM effective WHERE agent_id = ? AND key = ? AND taint = ?", (agent_id, key, int(max(Level)))
        ).fetchone()
        if row is None and self._label_views(agent_id or 0):
            return bool(live_versions(self._latest(agent_id, [key])))
        return row is not None

    def effective_view(
        self,
        agent: str,
        taint: Level | Label,
        *,
        tag: str | None = None,
        audit: Callable[[list[Memory]], AuditEvent] | None = None,
    ) -> list[Memory]:
        """The effective view at ``taint``; ``audit=None`` only for the auditor's views (no session reads)."""
        with self._write():
            agent_id = self._agent_id(agent)
            if self.rules.shadow_before_match or tag is None:
                view = self._view(agent_id, self._view_of(agent_id, taint), tag)
            else:
                # Filter first, shadow among the survivors: per key, the highest readable level's view
                # that has a tagged version wins, even when a higher version without the tag is visible.
                views = (
                    self._view(agent_id, int(level), tag)
                    for level in reversed(Level)
                    if self.rules.can_read(level, taint)
                )
                view = sorted(_first_per_key(views, lambda memory: memory.key), key=lambda memory: memory.key)
            if audit is not None:
                self._append_audit(audit(view))
        return view

    def _view(self, agent_id: int | None, view: int | str, tag: str | None) -> list[Memory]:
        # The tag filter applies to the effective view, i.e. after shadowing: a lower version never
        # surfaces because the version shadowing it lacks the tag.
        tagged = "" if tag is None else "AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)"
        rows = self.conn.execute(
            f"SELECT {_MEMORY_COLUMNS} FROM effective e JOIN memories m ON m.id = e.memory_id "
            f"WHERE e.agent_id = ? AND e.taint = ? {tagged} ORDER BY e.key",
            (agent_id, view, *(() if tag is None else (tag,))),
        )
        return [_memory(row) for row in rows]

    def search(
        self, agent: str, taint: Level | Label, query: str, limit: int, *, audit: Callable[[list[Hit]], AuditEvent]
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
            taint = as_taint(taint)
            lexical = self._lexical(agent_id, indexed, taint, match, depth) if ranking.lexical > 0 else []
            dense = [] if vector is None else self._dense(agent_id, self._view_of(agent_id, taint), vector, depth)
            self._check_in_view(agent_id, lexical + dense)
            ranked = _fuse(lexical, dense, ranking) if fused else lexical or dense
            hits = self._hits(ranked[:limit], match, query)
            self._append_audit(audit(hits))
        return hits

    def verify(self) -> Verification:
        """Recompute the audit chain and check every version and view against it (``memlab.storage.verify``)."""
        with self._lock:
            self.flush_sessions()
            return verify_file(self.conn, self._genesis, self.rules, label=str(self.path) if self.path else "")

    def copy(self) -> SqliteStorage:
        """A private in-memory copy of this store (cheap for small stores: experiments fork a template)."""
        with self._lock:
            self.flush_sessions()
            target = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            self.conn.backup(target)
        return SqliteStorage(
            connection=target, rules=self.rules, analyzer=self.analyzer, index_tag_words=self.index_tag_words
        )

    def snapshot(self) -> Snapshot:
        """An in-memory image of the whole store, its recorded sessions written first (``storage.snapshots``)."""
        with self._lock:
            self.flush_sessions()
            return take(self.conn)

    def restore(self, snapshot: Snapshot) -> None:
        """Put the store back as ``snapshot`` holds it, and drop what this connection cached of the database."""
        with self._lock:
            put_back(snapshot, self.conn)
            self._forget()

    def close(self) -> None:
        try:
            self.flush_sessions()
        finally:
            self.conn.close()


def check_access(path: Path) -> None:
    """Refuse an existing store file memlab may not read and write."""
    if not os.access(path, os.R_OK | os.W_OK):
        raise SchemaError(f"{path} is read-only: memlab writes an audit row for every call, so it needs write access")


def _check_path(path: Path) -> None:
    """Refuse, before SQLite touches it, a path that cannot be a store file memlab may write."""
    if path.is_dir():
        raise SchemaError(f"{path} is a folder, not a store file")
    if not path.parent.is_dir():
        raise SchemaError(f"cannot create the store {path}: its folder {path.parent} does not exist")
    if path.exists():
        check_access(path)
    elif not os.access(path.parent, os.W_OK):
        raise SchemaError(f"cannot create the store {path}: its folder is read-only")
