"""A store folder: one SQLite file per agent, a small catalogue, files opened on demand behind a bounded cache.

Layout::

    memories/                     the store's folder
      .lock                       held while the store or an agent's file is created (fcntl.flock)
      catalogue.db                format, analyzer, views; agent names, the chained log of their creation,
                                  each agent's audit length and head as last recorded; session ids
      agents/3f/3f2a…c1.db        one agent: memories, views, level indexes, sessions, taint events, audit

An agent's file is an ordinary single-file store (``SqliteStorage``) holding exactly that agent, so every
call stays one transaction in one file — WAL does not make transactions across attached files atomic —
and bm25 statistics cannot cross agents or levels. SQLite parses a file's whole schema on every
connection; here each schema is a dozen objects whatever the number of agents, so opening the store and
every call cost the same for 10 agents or 10,000. A file is named by a hash of the agent's name, never by
the name itself: no path traversal, no case folding, any Unicode name. Symbolic links inside the folder are
refused: a file written through one would leave the store.

Opening a file is the costly step, so the store keeps as many open as the process's descriptors allow
(``memlab.storage.folder_files``: the limit raised toward its hard maximum, all of it but a headroom used, at most
``MAX_OPEN_FILES``, shared by the process's store folders), checks each distinct schema once per process, and
closes the least recently used file on a background thread (``memlab.storage.folder_closer``), keeping its WAL where
SQLite can be told so, which no call waits for; the store checkpoints those files when it closes.

The catalogue is checked against the files: an agent it lists must have its non-empty file, holding that agent
only, and a file must belong to an agent it lists; anything else is refused on open (``SchemaError``) rather
than recreated or served. What it records of each agent's chain (length and head, when a file is closed or
the store verified) lets ``verify`` see an audit's tail removed or a file rolled back
(``memlab.storage.folder_verify``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from memlab.errors import InvalidArgument, SchemaError
from memlab.labels import Integrity, Label
from memlab.levels import Level
from memlab.records import AuditEvent, Hit, Memory, NewVersion, TaintEvent
from memlab.search.analyzers import Analyzer
from memlab.search.analyzers import resolve as resolve_analyzer
from memlab.search.dense import Embedder
from memlab.search.ranking import Ranking
from memlab.storage.capabilities import BACKENDS
from memlab.storage.catalogue import folder_lock, log_agent, open_catalogue, record_head
from memlab.storage.folder_closer import Closer
from memlab.storage.folder_files import OPEN_FILES, AgentFile, checkpoint, open_files_allowed
from memlab.storage.folder_verify import verify_folder
from memlab.storage.layout import CATALOGUE, agent_file
from memlab.storage.sqlite import SqliteStorage
from memlab.storage.verify import Verification, read_only
from memlab.viewrules import ViewRules

__all__ = ["FolderStorage"]

CLOSE_CHECKPOINTS = 8  # files checkpointed at once when the store closes (each holds a connection meanwhile)


class FolderStorage:
    """Memories of many agents, one SQLite file each, under one folder.

    Args:
        path: the store's folder (created if missing; its parent must exist).
        rules: what the views follow (``ViewRules``).
        analyzer: how text becomes index terms (default FTS5's porter).
        busy_timeout: seconds a writer waits for another process's transaction.
        cache_size: agent files kept open at once; the least recently used is closed beyond it. By default as
            many as the process's limit on open descriptors allows (``folder_files.open_files_allowed``, which
            raises the soft limit toward the hard one), counted with the files of every other store folder of the
            process that is sized so (``folder_files.OPEN_FILES``); a number given here leaves the limit alone
            and is this store's alone.
    Raises:
        SchemaError: ``path`` is a file, a folder holding other things, or a store this memlab cannot open.
    """

    capabilities = BACKENDS["folder"]
    """What this backend can do beyond the contract (``memlab.storage.capabilities``); labels with categories are
    kept in each agent's file as ``SqliteStorage`` keeps them."""
    view_table = "effective"

    def __init__(
        self,
        path: str | Path,
        *,
        rules: ViewRules | None = None,
        analyzer: Analyzer | str | None = None,
        busy_timeout: float = 30.0,
        cache_size: int | None = None,
        ranking: Ranking | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.path = Path(path)
        self._ranking = ranking if ranking is not None else Ranking()
        self.embedder = embedder
        self.rules = rules if rules is not None else ViewRules.lattice()
        self.analyzer = resolve_analyzer(analyzer)
        self.busy_timeout = busy_timeout
        # The process's budget, shared with its other store folders sized by it; None when cache_size was given.
        self._shared_budget = open_files_allowed() if cache_size is None else None
        self.cache_size = self._shared_budget if cache_size is None else max(1, cache_size)
        self._files: OrderedDict[str, SqliteStorage] = OrderedDict()
        self._template: bytes | None = None
        # One lock for the cache and the calls through it: a file is never closed under a running call.
        self._lock = threading.RLock()
        self._catalogue = open_catalogue(
            self.path, analyzer=self.analyzer.name, views=self.rules.signature, busy_timeout=self.busy_timeout
        )
        self.meta = {row[0]: row[1] for row in self._catalogue.execute("SELECT name, value FROM memlab_meta")}
        self._closer = Closer(self.path / CATALOGUE, busy_timeout)

    # -- the catalogue ------------------------------------------------------------------------------

    def write_catalogue(self, sql: str, parameters: tuple[Any, ...]) -> None:
        """Run one statement on the catalogue in its own transaction, under the folder's lock."""
        with self._catalogue_transaction() as conn:
            conn.execute(sql, parameters)

    @contextlib.contextmanager
    def _catalogue_transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._catalogue.execute("BEGIN IMMEDIATE")
            try:
                yield self._catalogue
            except BaseException:
                self._catalogue.execute("ROLLBACK")
                raise
            self._catalogue.execute("COMMIT")

    def agents(self) -> list[str]:
        """Every agent with a file in this store, by name."""
        with self._lock:
            return [row[0] for row in self._catalogue.execute("SELECT name FROM agents ORDER BY name")]

    # -- agent files --------------------------------------------------------------------------------

    def agent_path(self, agent: str) -> Path:
        """The file that holds ``agent``: named by a hash of the name, two hex digits of fan-out."""
        _encoded(agent)
        return self.path / "agents" / agent_file(agent)

    @property
    def ranking(self) -> Ranking:
        """How searches order matches (a query-time choice: changing it changes no file)."""
        return self._ranking

    @ranking.setter
    def ranking(self, ranking: Ranking) -> None:
        with self._lock:
            self._ranking = ranking
            for storage in self._files.values():
                storage.ranking = ranking

    def agent_storage(self, agent: str, *, create: bool = True) -> SqliteStorage | None:
        """The agent's storage, the one place a call is routed to its file: opened (and created, if ``create``) on
        demand; None if it has no file."""
        with self._lock:
            storage = self._files.get(agent)
            if storage is not None:
                self._files.move_to_end(agent)
                return storage
            path = self.agent_path(agent)
            self._closer.wait_for(agent)  # its evicted file is closed before it is opened again
            if self._damage(agent, path) is not None:
                # Being made by another process, new, or damaged: under the folder's lock it is one of the three.
                with folder_lock(self.path):
                    damage = self._damage(agent, path)
                    if damage == "":
                        if not create:
                            return None
                        self._create_file(agent, path)
                    elif damage is not None:
                        raise SchemaError(f"{damage}: the store folder is damaged or tampered with (`memlab verify`)")
            storage = AgentFile(
                path,
                rules=self.rules,
                analyzer=self.analyzer,
                busy_timeout=self.busy_timeout,
                ranking=self.ranking,
                embedder=self.embedder,
            )
            others = [name for name in storage.agents() if name != agent]
            if others:
                storage.close()
                raise SchemaError(f"{path} holds agent {others[0]!r}, not {agent!r}: the store folder is damaged")
            self._files[agent] = storage
            OPEN_FILES.add(1)
            while len(self._files) > 1 and (len(self._files) > self.cache_size or self._over_shared_budget()):
                self._closer.close_later(*self._files.popitem(last=False))
                OPEN_FILES.add(-1)
            return storage

    def _over_shared_budget(self) -> bool:
        """Whether the store folders of this process sized by its budget hold more files open than it allows."""
        return self._shared_budget is not None and OPEN_FILES.count > self._shared_budget

    def _damage(self, agent: str, path: Path) -> str | None:
        """None when the agent's file is in place; "" when the agent is new (neither catalogued nor on disk);
        otherwise what is wrong."""
        relative = _relative(agent)
        # One lstat per step (this runs on every open of a file): a link is seen as itself, never followed, and the
        # file's kind and size come with its own.
        status: os.stat_result | None = None
        for link in (path.parent.parent, path.parent, path):
            try:
                status = os.lstat(link)
            except FileNotFoundError:
                status = None
                break  # nor is anything under it there
            if stat.S_ISLNK(status.st_mode):
                return f"{link} is a symbolic link"
        row = self._catalogue.execute("SELECT file FROM agents WHERE name = ?", (agent,)).fetchone()
        if row is None:
            return "" if status is None else f"{relative} holds agent {agent!r}, whom the catalogue does not list"
        if row[0] != relative:
            return f"the catalogue names the file {row[0]} for agent {agent!r}, not {relative}"
        if status is None or not stat.S_ISREG(status.st_mode):
            return f"agent {agent!r} is in the catalogue, but its file {relative} is missing"
        if status.st_size == 0:
            return f"agent {agent!r} is in the catalogue, but its file {relative} is empty"
        return None

    def _close_file(self, agent: str, storage: SqliteStorage) -> None:
        """Close an agent's file, recording its chain's length and head in the catalogue first."""
        try:
            self._record_head(agent, storage.conn)
        finally:
            storage.close()

    def _record_head(self, agent: str, conn: sqlite3.Connection) -> None:
        """Record the agent's audit length and head; a record only moves forward (another process may be ahead)."""
        with self._catalogue_transaction() as catalogue:
            record_head(catalogue, agent, conn)

    def _create_file(self, agent: str, path: Path) -> None:
        """Register the agent (and log its creation, chained), then make its file from the empty template
        (atomically: link, never replace). The caller holds the folder's lock."""
        relative = _relative(agent)
        with self._catalogue_transaction() as conn:
            if conn.execute("INSERT OR IGNORE INTO agents (name, file) VALUES (?, ?)", (agent, relative)).rowcount:
                log_agent(conn, agent, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{uuid.uuid4().hex}.tmp")
        draft.write_bytes(self._empty_file())
        try:
            os.link(draft, path)  # another process may have made it first: theirs stands
        except FileExistsError:
            pass
        finally:
            draft.unlink()

    def _empty_file(self) -> bytes:
        """The bytes of an empty agent file (schema only, WAL mode), made once: copying beats creating."""
        if self._template is None:
            draft = self.path / f".template-{uuid.uuid4().hex}.db"
            try:
                SqliteStorage(draft, rules=self.rules, analyzer=self.analyzer).close()
                self._template = draft.read_bytes()
            finally:
                for leftover in (draft, Path(f"{draft}-wal"), Path(f"{draft}-shm")):
                    leftover.unlink(missing_ok=True)
        return self._template

    # -- sessions -----------------------------------------------------------------------------------

    def add_session(
        self, session_id: str, agent: str, taint: Label, created_at: str, floor: Integrity = Integrity.UNTRUSTED
    ) -> None:
        """Record a session: in the catalogue, which holds every session id of the store (ids are unique in the
        whole store, as in a single file, whoever chose them: one short catalogue transaction), then in the agent's
        file, where its audit is checked against it (``SqliteStorage.add_session``, which may hold the row for
        the agent's next write transaction)."""
        _encoded(agent)
        with self._lock:
            # A taken id is refused before anything is written (the insert below still settles a race).
            if self._catalogue.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise InvalidArgument(f"session id {session_id!r} is already taken in this store")
            storage = self.agent_storage(agent)  # a damaged agent is refused before the session is recorded
            try:
                self.write_catalogue(
                    "INSERT INTO sessions (id, agent, taint, created_at) VALUES (?, ?, ?, ?)",
                    (session_id, agent, str(taint), created_at),
                )
            except sqlite3.IntegrityError as error:
                raise InvalidArgument(f"session id {session_id!r} is already taken in this store") from error
            storage.add_session(session_id, agent, taint, created_at, floor)

    def add_taint_event(self, agent: str, event: TaintEvent) -> None:
        with self._lock:
            self.agent_storage(agent).add_taint_event(agent, event)

    # -- tool calls: each routed to its agent's file ------------------------------------------------

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
        with self._lock:
            return self.agent_storage(agent).save_many(
                agent, classification, versions, saved_by=saved_by, audit=audit, distrust=distrust
            )

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
        with self._lock:
            return self.agent_storage(agent).delete(
                agent, key, classification, deleted_at=deleted_at, deleted_by=deleted_by, audit=audit
            )

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
        with self._lock:
            return self.agent_storage(agent).purge(
                agent, key, level, purged_at=purged_at, purged_by=purged_by, audit=audit
            )

    def effective(
        self,
        agent: str,
        taint: Label,
        key: str,
        *,
        audit: Callable[[Memory | None], AuditEvent] | None = None,
        integrity: Integrity = Integrity.TRUSTED,
    ) -> Memory | None:
        with self._lock:
            storage = self.agent_storage(agent, create=audit is not None)
            return None if storage is None else storage.effective(agent, taint, key, audit=audit, integrity=integrity)

    def exists(self, agent: str, key: str) -> bool:
        with self._lock:
            storage = self.agent_storage(agent, create=False)
            return storage is not None and storage.exists(agent, key)

    def effective_view(
        self,
        agent: str,
        taint: Label,
        *,
        tag: str | None = None,
        audit: Callable[[list[Memory]], AuditEvent] | None = None,
        integrity: Integrity = Integrity.TRUSTED,
    ) -> list[Memory]:
        with self._lock:
            storage = self.agent_storage(agent, create=audit is not None)
            return (
                []
                if storage is None
                else storage.effective_view(agent, taint, tag=tag, audit=audit, integrity=integrity)
            )

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
        with self._lock:
            return self.agent_storage(agent).search(agent, taint, query, limit, audit=audit, integrity=integrity)

    def append_audit(self, event: AuditEvent) -> None:
        with self._lock:
            self.agent_storage(event.agent).append_audit(event)

    # -- the auditor's views ------------------------------------------------------------------------

    def audit_rows(self, agent: str | None = None) -> Iterator[dict[str, Any]]:
        """The audit of one agent in order, or of every agent merged by time (then agent, then seq)."""
        if agent is not None:
            with self._lock:  # read whole under the lock: another thread may close the file once it is evicted
                storage = self.agent_storage(agent, create=False)
                return iter([] if storage is None else list(storage.audit_rows(agent)))
        return iter(sorted(self._from_every_agent("audit_rows"), key=lambda row: (row["at"], row["agent"], row["seq"])))

    def history_rows(self, agent: str, key: str | None = None) -> Iterator[dict[str, Any]]:
        with self._lock:
            storage = self.agent_storage(agent, create=False)
            return iter([] if storage is None else list(storage.history_rows(agent, key)))

    def session_rows(self) -> Iterator[dict[str, Any]]:
        with self._lock:
            rows = self._catalogue.execute(
                "SELECT id, agent, taint, created_at FROM sessions ORDER BY created_at, id"
            ).fetchall()
        return (
            {"id": id_, "agent": agent, "initial_taint": taint, "created_at": created}
            for id_, agent, taint, created in rows
        )

    def taint_event_rows(self) -> Iterator[dict[str, Any]]:
        return iter(sorted(self._from_every_agent("taint_event_rows"), key=lambda row: (row["at"], row["session_id"])))

    def _from_every_agent(self, method: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for agent in self.agents():
            with self._lock:
                storage = self.agent_storage(agent, create=False)
                if storage is not None:
                    rows.extend(getattr(storage, method)())
        return rows

    def verify(self) -> Verification:
        """Verify the folder (``memlab.storage.folder_verify``); when it is intact, record every agent's chain as
        it stands, so a later removal of its tail or a rollback of its file is seen."""
        with self._lock:
            self._closer.drain()  # the heads of files being closed are recorded first
            result = verify_folder(self.path, self.rules, analyzer=self.analyzer)
            if result.ok:
                for agent in self.agents():
                    with read_only(self.agent_path(agent)) as conn:
                        self._record_head(agent, conn)
            return result

    def close(self) -> None:
        with self._lock:
            try:
                self._closer.stop()
                while self._files:
                    OPEN_FILES.add(-1)
                    self._close_file(*self._files.popitem())
                # Closed without one while the store ran (Closer): each checkpoint waits on the disk with the GIL
                # released, and several at once share the file system's journal commits.
                from concurrent.futures import ThreadPoolExecutor  # here: importing memlab stays light

                with ThreadPoolExecutor(max_workers=CLOSE_CHECKPOINTS, thread_name_prefix="memlab-checkpoint") as pool:
                    list(pool.map(checkpoint, sorted(self._closer.kept_wal)))
                self._closer.kept_wal.clear()
            finally:
                self._catalogue.close()


def _relative(agent: str) -> str:
    """The agent's file as the catalogue names it, relative to the store's folder."""
    return f"agents/{agent_file(agent)}"


def _encoded(agent: str) -> bytes:
    try:
        return agent.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidArgument(f"agent name is not valid Unicode text (character {error.start})") from None
