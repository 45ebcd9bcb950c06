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

``SqliteStorage`` holds the connection and its transactions, and composes parts that each own their state, one
module an idea: ``agents`` (ids and indexed levels), ``pending_sessions``, ``new_versions`` (a save's rows),
``indexes`` (the effective view and FTS5 upkeep), ``reads`` (what a session reads of a view), ``lexical`` (FTS5
ranking, the second gate, hits), ``vectors`` (dense search and fusion), ``erasure`` (purge) and ``audit`` (the
chained audit, the auditor's views); ``opening`` checks a file before any is made. The one state they share is
``view_changes.ViewChanges``; each one's ``forget`` drops what it keeps when the file changed (``_forget``).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.errors import SchemaError
from memlab.labels import Integrity, Label
from memlab.levels import Level
from memlab.records import AuditEvent, Hit, Memory, NewVersion, TaintEvent
from memlab.search.analyzers import Analyzer
from memlab.search.analyzers import resolve as resolve_analyzer
from memlab.search.ranking import Ranking
from memlab.storage.agents import Agents
from memlab.storage.audit import AuditLog
from memlab.storage.capabilities import BACKENDS
from memlab.storage.copy_in import AgentRows, copy_in
from memlab.storage.erasure import Erasure
from memlab.storage.indexes import IndexUpkeep, level_bit
from memlab.storage.label_codes import as_label, as_taint, stored
from memlab.storage.lexical import LexicalSearch
from memlab.storage.live import latest, live_versions
from memlab.storage.new_versions import VersionWriter
from memlab.storage.opening import check_access, check_path, check_schema
from memlab.storage.pending_sessions import PendingSessions
from memlab.storage.reads import ViewReads
from memlab.storage.rows import MEMORY_COLUMNS, memory_of
from memlab.storage.seal import deletion
from memlab.storage.snapshots import Snapshot, put_back, take
from memlab.storage.vectors import FUSION_DEPTH, VectorSearch, fuse
from memlab.storage.verify import Verification, verify_file
from memlab.storage.view_changes import ViewChanges
from memlab.viewrules import ViewRules

if TYPE_CHECKING:
    import sqlite_utils

    from memlab.search.dense import Embedder

__all__ = ["SqliteStorage", "check_access"]

_WAL_AUTOCHECKPOINT_PAGES = 10_000


class SqliteStorage:
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

    Raises:
        SchemaError: the path or the database cannot be a memlab store this code, analyzer and rules open.
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
        self.rules = rules if rules is not None else ViewRules.lattice()
        self.analyzer = resolve_analyzer(analyzer)
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
        self._lock = threading.RLock()  # one connection, possibly several threads (widgets, servers)
        try:
            # As sqlite-utils set it when it wrapped every connection: a REPLACE's implicit delete fires the
            # DELETE triggers that keep versions and the audit frozen.
            conn.execute("PRAGMA recursive_triggers=ON")
            # Every check reads only; nothing is written to a file (not even its journal mode) before it
            # is known to be this store's or empty.
            self.meta = self._check_schema()
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
        # What the parts keep between calls holds while the file is as this connection left it: SQLite's
        # data_version (which moves when another connection commits) and this connection's total_changes (which
        # moves on a write outside memlab's transactions) are as they were at the end of its last transaction.
        self._data_version = -1
        self._changes = -1
        changes = ViewChanges()
        self._sessions = PendingSessions(conn)
        self._agents = Agents(conn, self.rules, self.analyzer)
        self._indexes = IndexUpkeep(conn, self.rules, self.analyzer, changes)
        self._versions = VersionWriter(conn, self.analyzer, embedder, index_tag_words=index_tag_words)
        self._reads = ViewReads(conn, self.rules, self._indexes)
        self._lexical = LexicalSearch(conn, self.rules, self.analyzer, self._indexes, changes)
        self._vectors = VectorSearch(conn, embedder, changes)
        self._erasure = Erasure(
            conn, self.rules, self._indexes, path=self.path, busy_timeout=busy_timeout, lock=self._lock
        )
        self._audit = AuditLog(conn, self.meta["chain_genesis"])

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
                written = self._sessions.write()
                yield
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                self._forget()
                raise
            if written:
                self._sessions.written(written)
            self._changes = self.conn.total_changes

    def _revalidate(self) -> None:
        """Drop what the parts keep if anything but this connection's transactions changed the file since (read
        under the write lock, so nothing changes it until the transaction ends)."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version or self.conn.total_changes != self._changes:
            self._data_version = version
            self._forget()

    def _forget(self) -> None:
        """Drop every row the parts keep (a transaction rolled back, or the file changed under this connection):
        the chain's head, the next version id, agents' ids and indexed levels, label views, boost decisions. What
        is a function of the rules alone (refresh plans, index statements, tag words) stays; vectors' views are
        kept under their own token (``VectorSearch``)."""
        self._audit.forget()
        self._versions.forget()
        self._agents.forget()
        self._lexical.forget()
        self._indexes.forget()

    def _check_path(self) -> None:
        """Refuse, before SQLite touches it, a path that cannot be a store file memlab may write."""
        check_path(self.path)

    def _check_schema(self) -> dict[str, str]:
        """Read and check the schema; create it, under the write lock, only in a new, empty database."""
        return check_schema(self.conn, self.path, self.analyzer, self.rules)

    # -- sessions -----------------------------------------------------------------------------------

    def add_session(
        self, session_id: str, agent: str, taint: Label, created_at: str, floor: Integrity = Integrity.UNTRUSTED
    ) -> None:
        """Record a session (its starting taint, the floor it reads at): a taken id is refused now
        (``InvalidArgument``); the row is written in the next write transaction, or by ``flush_sessions``."""
        with self._lock:
            floor_text = None if floor is Integrity.UNTRUSTED else str(floor)
            self._sessions.add(session_id, agent, str(as_taint(taint)), created_at, floor_text)

    def flush_sessions(self) -> None:
        """Write the sessions recorded and not yet written (every reader of sessions here does it first)."""
        with self._lock:
            if self._sessions:
                with self._write():
                    pass

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
        classification: Label,
        versions: Sequence[NewVersion],
        *,
        saved_by: str,
        audit: Callable[[Memory], AuditEvent],
        distrust: tuple[str, ...] = (),
    ) -> list[Memory]:
        """Save new versions at ``classification`` in one transaction: rows, views, indexes, one audit row each;
        ``distrust`` (``Memory.distrust``) names what lowered the saving session.

        The result is what saving them one by one would give (versions numbered in order, the last
        version of a key effective); only the final state of each key is indexed.
        """
        if not versions:
            return []
        # Vectors are made before the write lock is taken: a model is slow, the lock is shared.
        vectors = self._vectors.stored([new.content for new in versions])
        label = as_label(classification)
        with self._write():
            agent_id, indexed = self._agents.get(agent, create=True)
            if not label.categories and not indexed & level_bit(label.level) and self.rules.lattice_visibility:
                indexed = self._start_index(agent_id, label.level, indexed)
            keys = list(dict.fromkeys(version.key for version in versions))
            newest = latest(self.conn, agent_id, keys)
            before = live_versions(newest)
            saved, digests, texts = self._versions.insert(
                agent, agent_id, label, versions, newest, saved_by=saved_by, vectors=vectors, distrust=distrust
            )
            self._indexes.refresh(agent_id, keys, before, live_versions(newest), indexed, changed=label, texts=texts)
            self._audit.append([audit(memory) for memory in saved], digests)
        return saved

    def _start_index(self, agent_id: int, level: Level, indexed: int) -> int:
        """Create and fill the FTS5 index of ``level`` at ``agent_id`` (``IndexUpkeep.start_index``) and record it.

        Returns:
            The agent's mask of indexed levels, now.
        """
        self._indexes.start_index(agent_id, level)
        return self._agents.set_indexed(agent_id, indexed | level_bit(level))

    def delete(
        self,
        agent: str,
        key: str,
        classification: Label,
        *,
        deleted_at: str,
        deleted_by: str,
        audit: Callable[[Memory | None], AuditEvent],
    ) -> Memory | None:
        with self._write():
            agent_id, indexed = self._agents.get(agent)
            row = self.conn.execute(
                f"SELECT m.id, m.deleted_at, {MEMORY_COLUMNS}, m.commitment FROM memories m "
                "WHERE agent_id = ? AND key = ? AND classification = ? ORDER BY version DESC LIMIT 1",
                (agent_id, key, stored(classification)),
            ).fetchone()
            if row is None or row[1] is not None:
                self._audit.append([audit(None)])
                return None
            *row, commitment = row
            newest = latest(self.conn, agent_id, [key])
            before = live_versions(newest)
            self.conn.execute(
                "UPDATE memories SET deleted_at = ?, deleted_by = ? WHERE id = ?", (deleted_at, deleted_by, row[0])
            )
            del newest[key, stored(classification)]
            memory = memory_of(row[2:])
            self._indexes.refresh(agent_id, [key], before, live_versions(newest), indexed, changed=classification)
            self._audit.append([audit(memory)], [deletion(agent, memory, commitment, deleted_at, deleted_by)])
        return memory

    def purge(
        self,
        agent: str,
        key: str,
        level: Label | None,
        *,
        purged_at: str,
        purged_by: str,
        audit: Callable[[list[Memory]], AuditEvent],
    ) -> list[Memory]:
        """Erase the content and tags of ``key``'s versions (at ``level``, or every level): an auditor's act.

        The versions stay, content-free; their terms leave every index, and what that frees is zeroed, the file
        rewritten and the WAL truncated (``erasure.Erasure``). Returns the versions as they were (for the audit's
        refs).

        Raises:
            PurgeIncomplete: the WAL could not be checkpointed; the purge is committed and audited.
        """
        with self._erasure.erasing(), self._write():
            agent_id, indexed = self._agents.get(agent)
            purged = self._erasure.erase(agent_id, indexed, key, level, purged_at=purged_at, purged_by=purged_by)
            self._audit.append([audit(purged)])
        return purged

    def create_agent(self, agent: str) -> None:
        """Make an agent's tables ahead of its first save (a save does it too)."""
        with self._write():
            self._agents.get(agent, create=True)

    # -- reads (each with its audit event, in one transaction) ---------------------------------------

    def effective(
        self,
        agent: str,
        taint: Label,
        key: str,
        *,
        audit: Callable[[Memory | None], AuditEvent] | None = None,
        integrity: Integrity = Integrity.TRUSTED,
    ) -> Memory | None:
        """The key's version in the effective view at ``taint``; ``audit=None`` only for policy rules. The
        session's ``integrity`` is its audit row's (``ToolStorage.effective``): one chain here, so unused.

        Raises:
            Ambiguous: the policy's shadowing rule refuses to choose among the key's maximal versions at
                ``taint`` (the message names their labels, all of which ``taint`` may read); nothing is written.
        """
        with self._write():
            memory = self._reads.memory(self._agents.id_of(agent), taint, key)
            if audit is not None:
                self._audit.append([audit(memory)])
        return memory

    def exists(self, agent: str, key: str) -> bool:
        """Whether ``key`` has a live version at any level (only the ``existence-oracle`` variant asks)."""
        return self._reads.exists(self._agents.id_of(agent), key)

    def effective_view(
        self,
        agent: str,
        taint: Label,
        *,
        tag: str | None = None,
        audit: Callable[[list[Memory]], AuditEvent] | None = None,
        integrity: Integrity = Integrity.TRUSTED,
    ) -> list[Memory]:
        """The effective view at ``taint``; ``audit=None`` only for the auditor's views (no session reads)."""
        with self._write():
            view = self._reads.memories(self._agents.id_of(agent), taint, tag)
            if audit is not None:
                self._audit.append([audit(view)])
        return view

    def search(
        self,
        agent: str,
        taint: Label,
        query: str,
        limit: int,
        *,
        audit: Callable[[list[Hit]], AuditEvent],
        integrity: Integrity = Integrity.TRUSTED,
    ) -> list[Hit]:
        # The natural-language query becomes a safe MATCH expression here, where the index's analyzer is known.
        match = self.analyzer.match_expression(query)
        ranking = self.ranking
        vector = None
        if ranking.uses_dense and match is not None:
            vector = self._vectors.query_vector(query, ranking)  # outside the write lock, like a save's vectors
            self._vectors.backfill(self._agents.id_of(agent), self._write)
        fused = ranking.uses_dense and ranking.lexical > 0
        depth = max(limit, FUSION_DEPTH) if fused or ranking.demotes_untrusted else limit
        with self._write():
            agent_id, indexed = self._agents.get(agent)
            lexical, dense = [], []
            if ranking.lexical > 0:
                lexical = self._lexical.ranked(agent_id, indexed, taint, match, depth, ranking)
            if vector is not None:
                dense = self._vectors.dense(agent_id, self._reads.view_of(agent_id, taint), vector, depth)
            self._lexical.check_in_view(agent_id, lexical + dense)
            ranked = fuse(lexical, dense, ranking) if fused else lexical or dense
            if ranking.demotes_untrusted:  # read FUSION_DEPTH deep too: the order does not depend on the limit
                ranked = self._lexical.demoted(ranked, ranking)
            hits = self._lexical.hits(ranked[:limit], match, query)
            self._audit.append([audit(hits)])
        return hits

    # -- the audit and the auditor's views -----------------------------------------------------------

    def append_audit(self, event: AuditEvent) -> None:
        with self._write():
            self._audit.append([event])

    def agents(self) -> list[str]:
        """Every agent that has saved in this store, by name."""
        return self._audit.agents()

    def audit_rows(self, agent: str | None = None) -> Iterator[dict[str, Any]]:
        """The audit, oldest first; only ``agent``'s calls when given."""
        return self._audit.audit_rows(agent)

    def history_rows(self, agent: str, key: str | None = None) -> Iterator[dict[str, Any]]:
        """Every version of ``key`` (of every key when None), by key, level, then version."""
        return self._audit.history_rows(agent, key)

    def session_rows(self) -> Iterator[dict[str, Any]]:
        self.flush_sessions()
        return self._audit.session_rows()

    def taint_event_rows(self) -> Iterator[dict[str, Any]]:
        self.flush_sessions()
        return self._audit.taint_event_rows()

    def verify(self) -> Verification:
        """Recompute the audit chain and check every version and view against it (``memlab.storage.verify``)."""
        with self._lock:
            self.flush_sessions()
            genesis = self.meta["chain_genesis"]
            return verify_file(self.conn, genesis, self.rules, label=str(self.path) if self.path else "")

    def copy(self) -> SqliteStorage:
        """A private in-memory copy of this store (cheap for small stores: experiments fork a template)."""
        with self._lock:
            self.flush_sessions()
            target = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            self.conn.backup(target)
        return SqliteStorage(
            connection=target, rules=self.rules, analyzer=self.analyzer, index_tag_words=self.index_tag_words
        )

    def copy_in(self, agent: str, rows: AgentRows) -> None:
        """Write ``agent``'s rows copied from another store (``migrate``), in one transaction (``copy_in``)."""
        with self._write():
            copy_in(self.conn, self._agents, self._indexes, self._audit, self._start_index, self.rules, agent, rows)

    def snapshot(self) -> Snapshot:
        """An in-memory image of the whole store, its recorded sessions written first (``storage.snapshots``)."""
        with self._lock:
            self.flush_sessions()
            return take(self.conn)

    def restore(self, snapshot: Snapshot) -> None:
        """Put the store back as ``snapshot`` holds it, and drop what this connection's parts cached of it."""
        with self._lock:
            put_back(snapshot, self.conn)
            self._forget()

    def close(self) -> None:
        try:
            self.flush_sessions()
        finally:
            self.conn.close()
