"""A store folder: one SQLite file per agent, a small catalogue, files opened on demand behind a bounded cache.

Layout::

    memories/                     the store's folder
      catalogue.db                format, analyzer, views; agent names; session ids
      agents/3f/3f2a…c1.db        one agent: memories, views, level indexes, sessions, taint events, audit

An agent's file is an ordinary single-file store (``SqliteStorage``) holding exactly that agent, so every
call stays one transaction in one file — WAL does not make transactions across attached files atomic —
and bm25 statistics cannot cross agents or levels. SQLite parses a file's whole schema on every
connection; here each schema is a dozen objects whatever the number of agents, so opening the store and
every call cost the same for 10 agents or 10,000. A file is named by a hash of the agent's name, never by
the name itself: no path traversal, no case folding, any Unicode name.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import sqlite_utils

from memlab.errors import InvalidArgument, SchemaError
from memlab.levels import Level
from memlab.records import AuditEvent, Hit, Memory, NewVersion, TaintEvent
from memlab.search.analyzers import Analyzer
from memlab.search.analyzers import resolve as resolve_analyzer
from memlab.search.ranking import Ranking
from memlab.storage.rules import ViewRules
from memlab.storage.schema import check_meta
from memlab.storage.sqlite import SqliteStorage
from memlab.storage.verify import Verification, combine

__all__ = ["FolderStorage", "CATALOGUE", "FORMAT"]

CATALOGUE = "catalogue.db"
FORMAT = "memlab-folder"
SCHEMA_VERSION = 1
DEFAULT_CACHE_SIZE = 64  # open agent files; each holds three descriptors (file, WAL, shared memory)


class FolderStorage:
    """Memories of many agents, one SQLite file each, under one folder.

    Args:
        path: the store's folder (created if missing; its parent must exist).
        rules: what the views follow (``ViewRules``).
        analyzer: how text becomes index terms (default FTS5's porter).
        busy_timeout: seconds a writer waits for another process's transaction.
        cache_size: agent files kept open at once; the least recently used is closed beyond it.
    Raises:
        SchemaError: ``path`` is a file, a folder holding other things, or a store this memlab cannot open.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        rules: ViewRules | None = None,
        analyzer: Analyzer | str | None = None,
        busy_timeout: float = 30.0,
        cache_size: int = DEFAULT_CACHE_SIZE,
        ranking: Ranking | None = None,
    ) -> None:
        self.path = Path(path)
        self._ranking = ranking if ranking is not None else Ranking()
        self.rules = rules if rules is not None else ViewRules.lattice()
        self.analyzer = resolve_analyzer(analyzer)
        self.busy_timeout = busy_timeout
        self.cache_size = max(1, cache_size)
        self._files: OrderedDict[str, SqliteStorage] = OrderedDict()
        self._template: bytes | None = None
        # One lock for the cache and the calls through it: a file is never closed under a running call.
        self._lock = threading.RLock()
        self._catalogue = self._open_catalogue()
        self.meta = {row[0]: row[1] for row in self._catalogue.execute("SELECT name, value FROM memlab_meta")}

    # -- the catalogue ------------------------------------------------------------------------------

    def _open_catalogue(self) -> sqlite3.Connection:
        if self.path.exists() and not self.path.is_dir():
            raise SchemaError(f"{self.path} is a file, not a store folder")
        if not self.path.parent.is_dir():
            raise SchemaError(f"cannot create the store folder {self.path}: {self.path.parent} does not exist")
        catalogue = self.path / CATALOGUE
        if self.path.is_dir() and not catalogue.exists() and any(self.path.iterdir()):
            shown = ", ".join(sorted(entry.name for entry in self.path.iterdir())[:5])
            raise SchemaError(f"not a memlab store: the folder {self.path} holds other files ({shown})")
        try:
            self.path.mkdir(exist_ok=True)
            conn = sqlite3.connect(catalogue, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as error:
            raise SchemaError(f"cannot open the store folder {self.path}: {error}") from error
        try:
            db = sqlite_utils.Database(conn, execute_plugins=False)
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memlab_meta'").fetchone():
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("BEGIN IMMEDIATE")  # two processes creating one store: the second finds it made
                try:
                    _ensure_catalogue(db, self.analyzer.name, self.rules.signature)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            conn.execute("PRAGMA synchronous=NORMAL")
            _ensure_catalogue(db, self.analyzer.name, self.rules.signature)
        except sqlite3.DatabaseError as error:
            conn.close()
            raise SchemaError(f"cannot open {catalogue} as a memlab catalogue: {error}") from error
        except SchemaError:
            conn.close()
            raise
        return conn

    def _catalogue_write(self, sql: str, parameters: tuple[Any, ...]) -> None:
        with self._lock:
            self._catalogue.execute("BEGIN IMMEDIATE")
            try:
                self._catalogue.execute(sql, parameters)
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
        digest = hashlib.sha256(_encoded(agent)).hexdigest()[:32]
        return self.path / "agents" / digest[:2] / f"{digest}.db"

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

    def _file(self, agent: str, *, create: bool = True) -> SqliteStorage | None:
        """The agent's storage, opened (and created, if ``create``) on demand; None if it has no file."""
        with self._lock:
            storage = self._files.get(agent)
            if storage is not None:
                self._files.move_to_end(agent)
                return storage
            path = self.agent_path(agent)
            if not path.exists():
                if not create:
                    return None
                self._create_file(agent, path)
            storage = SqliteStorage(
                path, rules=self.rules, analyzer=self.analyzer, busy_timeout=self.busy_timeout, ranking=self.ranking
            )
            others = [name for name in storage.agents() if name != agent]
            if others:
                storage.close()
                raise SchemaError(f"{path} holds agent {others[0]!r}, not {agent!r}: the store folder is damaged")
            self._files[agent] = storage
            while len(self._files) > self.cache_size:
                _, evicted = self._files.popitem(last=False)
                evicted.close()
            return storage

    def _create_file(self, agent: str, path: Path) -> None:
        """Register the agent, then make its file from the empty template (atomically: link, never replace)."""
        relative = str(path.relative_to(self.path))
        self._catalogue_write("INSERT OR IGNORE INTO agents (name, file) VALUES (?, ?)", (agent, relative))
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

    def add_session(self, session_id: str, agent: str, taint: Level, created_at: str) -> None:
        # Session ids are unique in the whole store, as in a single file: the catalogue holds them.
        _encoded(agent)
        try:
            self._catalogue_write(
                "INSERT INTO sessions (id, agent, taint, created_at) VALUES (?, ?, ?, ?)",
                (session_id, agent, taint.name, created_at),
            )
        except sqlite3.IntegrityError as error:
            raise InvalidArgument(f"session id {session_id!r} is already taken in this store") from error
        with self._lock:
            self._file(agent).add_session(session_id, agent, taint, created_at)

    def add_taint_event(self, agent: str, event: TaintEvent) -> None:
        with self._lock:
            self._file(agent).add_taint_event(agent, event)

    # -- tool calls: each routed to its agent's file ------------------------------------------------

    def save_many(
        self,
        agent: str,
        classification: Level,
        versions: Sequence[NewVersion],
        *,
        saved_by: str,
        audit: Callable[[Memory], AuditEvent],
    ) -> list[Memory]:
        with self._lock:
            return self._file(agent).save_many(agent, classification, versions, saved_by=saved_by, audit=audit)

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
            return self._file(agent).delete(
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
            return self._file(agent).purge(agent, key, level, purged_at=purged_at, purged_by=purged_by, audit=audit)

    def effective(
        self, agent: str, taint: Level, key: str, *, audit: Callable[[Memory | None], AuditEvent] | None = None
    ) -> Memory | None:
        with self._lock:
            storage = self._file(agent, create=audit is not None)
            return None if storage is None else storage.effective(agent, taint, key, audit=audit)

    def exists(self, agent: str, key: str) -> bool:
        with self._lock:
            storage = self._file(agent, create=False)
            return storage is not None and storage.exists(agent, key)

    def effective_view(
        self,
        agent: str,
        taint: Level,
        *,
        tag: str | None = None,
        audit: Callable[[list[Memory]], AuditEvent] | None = None,
    ) -> list[Memory]:
        with self._lock:
            storage = self._file(agent, create=audit is not None)
            return [] if storage is None else storage.effective_view(agent, taint, tag=tag, audit=audit)

    def search(
        self, agent: str, taint: Level, query: str, limit: int, *, audit: Callable[[list[Hit]], AuditEvent]
    ) -> list[Hit]:
        with self._lock:
            return self._file(agent).search(agent, taint, query, limit, audit=audit)

    def append_audit(self, event: AuditEvent) -> None:
        with self._lock:
            self._file(event.agent).append_audit(event)

    # -- the auditor's views ------------------------------------------------------------------------

    def audit_rows(self, agent: str | None = None) -> Iterator[dict[str, Any]]:
        """The audit of one agent in order, or of every agent merged by time (then agent, then seq)."""
        if agent is not None:
            with self._lock:  # read whole under the lock: another thread may close the file once it is evicted
                storage = self._file(agent, create=False)
                return iter([] if storage is None else list(storage.audit_rows(agent)))
        return iter(sorted(self._every("audit_rows"), key=lambda row: (row["at"], row["agent"], row["seq"])))

    def history_rows(self, agent: str, key: str | None = None) -> Iterator[dict[str, Any]]:
        with self._lock:
            storage = self._file(agent, create=False)
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
        return iter(sorted(self._every("taint_event_rows"), key=lambda row: (row["at"], row["session_id"])))

    def _every(self, method: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for agent in self.agents():
            with self._lock:
                storage = self._file(agent, create=False)
                if storage is not None:
                    rows.extend(getattr(storage, method)())
        return rows

    def verify(self) -> Verification:
        """Verify every agent's file (``memlab.storage.verify``); problems name the file."""
        results = []
        for agent in self.agents():
            with self._lock:
                storage = self._file(agent, create=False)
                results.append(
                    storage.verify()
                    if storage is not None
                    else Verification(problems=(f"agent {agent!r}: its file is missing",))
                )
        return combine(results)

    def close(self) -> None:
        with self._lock:
            while self._files:
                self._files.popitem()[1].close()
            self._catalogue.close()


def _encoded(agent: str) -> bytes:
    try:
        return agent.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidArgument(f"agent name is not valid Unicode text (character {error.start})") from None


def _ensure_catalogue(db: sqlite_utils.Database, analyzer: str, views: str) -> None:
    """Create the catalogue in an empty file, or check the one there."""
    tables = set(db.table_names())
    if "memlab_meta" not in tables:
        if tables:
            raise SchemaError(f"not a memlab catalogue: it holds other tables ({', '.join(sorted(tables)[:5])})")
        db["memlab_meta"].create({"name": str, "value": str}, pk="name", not_null={"value"})
        db["memlab_meta"].insert_all(
            [
                {"name": "format", "value": FORMAT},
                {"name": "schema_version", "value": str(SCHEMA_VERSION)},
                {"name": "analyzer", "value": analyzer},
                {"name": "views", "value": views},
            ]
        )
        db["agents"].create({"name": str, "file": str}, pk="name", not_null={"file"})
        db["sessions"].create(
            {"id": str, "agent": str, "taint": str, "created_at": str},
            pk="id",
            not_null={"agent", "taint", "created_at"},
        )
    check_meta(db, FORMAT, SCHEMA_VERSION, analyzer, views)
