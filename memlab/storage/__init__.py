"""The storage seam: a small protocol, its SQLite and PostgreSQL implementations, and ``open_storage``.

``SqliteStorage`` keeps every agent in one file (or in memory): small stores, notebooks, experiments.
``FolderStorage`` keeps one such file per agent under a folder, with a small catalogue, so the cost of
opening a store or of any call does not grow with the number of agents. Both implement ``StorageProvider``;
``PostgresStorage`` (``memlab.storage.postgres``, ``pip install 'memlab[postgres]'``) keeps a store in a
PostgreSQL database shared by many hosts, where row-level security is the gate. One contract suite
(``tests/test_contract.py``) runs against each.
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from memlab.errors import InvalidArgument
from memlab.labels import Integrity, Label
from memlab.records import AuditEvent, Hit, Memory, NewVersion, TaintEvent
from memlab.search.analyzers import Analyzer
from memlab.search.dense import Embedder
from memlab.search.ranking import Ranking
from memlab.storage.folder import FolderStorage
from memlab.storage.folder_verify import verify_folder
from memlab.storage.layout import new_layout
from memlab.storage.postgres import PostgresStorage, is_postgres_url, verify_url
from memlab.storage.schema import TRIGGERS
from memlab.storage.sqlite import SqliteStorage
from memlab.storage.verify import Verification, verify_store_file
from memlab.viewrules import ViewRules

__all__ = [
    "StorageProvider",
    "ToolStorage",
    "AuditorStorage",
    "SqliteStorage",
    "FolderStorage",
    "PostgresStorage",
    "ViewRules",
    "Verification",
    "open_storage",
    "scratch_storage",
    "verify_path",
    "LAYOUTS",
    "TRIGGERS",
]

LAYOUTS = ("folder", "file")
MEMORY = ":memory:"  # sqlite3's name for a database in memory: a private in-memory store here too


class ToolStorage(Protocol):
    """What a session needs from storage: the tools' side of the seam.

    Storage is told the rules (``ViewRules``) and the classification of every write; it never decides who
    may call it. Every tool-level call appends its audit event in the same transaction as its effect
    (``audit`` builds the event from the result), so nothing is read or written without its audit row.
    ``search`` takes the natural-language query and makes it a safe expression with the store's analyzer;
    no input can raise an SQL error.

    Every ``taint`` and ``classification`` is a ``Label`` (``memlab.labels``: a level, and categories under
    compartments, opt-in); storage writes a label without categories as its level's integer (``label_codes``). A
    version at label L is readable at taint T when ``rules.can_read(L, T)``: L's level by the rules, and L's
    categories within T's;
    a key's view at T is its maximal readable live versions (``viewrules.maximal``), one of them chosen by
    ``rules.shadowing`` (``viewrules.SHADOWING_RULES``: ``newest``, the latest saved; ``refuse``, ``effective``
    raises ``labels.Ambiguous`` and the key is left out of lists and searches). ``Memory.categories`` carries
    a version's categories, and the audit and taint events store ``str(label)``. docs/semantics.md has the rules.
    A backend declares what it can do beyond the contract in ``capabilities`` (``memlab.storage.capabilities``);
    on one without ``compartments``, ``MemoryStore`` refuses a label with categories ("compartments not
    supported"), so none ever reaches it.
    """

    rules: ViewRules
    capabilities: frozenset[str]
    """What the backend can do beyond the contract: its kind's entry of ``memlab.storage.capabilities.BACKENDS``."""
    view_table: str
    """The table the effective views are read from, as an ``IntegrityError`` names it when a read returns a version
    the session's label may not read (``Session`` checks every version a read returns)."""
    ranking: Ranking
    """How ``search`` orders matches; a query-time choice the store may change between calls."""
    embedder: Embedder | None
    """Makes the dense vectors stored per version (None: no dense retrieval)."""

    def add_session(
        self, session_id: str, agent: str, taint: Label, created_at: str, floor: Integrity = Integrity.UNTRUSTED
    ) -> None: ...

    def add_taint_event(self, agent: str, event: TaintEvent) -> None: ...

    def save_many(
        self,
        agent: str,
        classification: Label,
        versions: Sequence[NewVersion],
        *,
        saved_by: str,
        audit: Callable[[Memory], AuditEvent],
        distrust: tuple[str, ...] = (),
    ) -> list[Memory]: ...

    def delete(
        self,
        agent: str,
        key: str,
        classification: Label,
        *,
        deleted_at: str,
        deleted_by: str,
        audit: Callable[[Memory | None], AuditEvent],
    ) -> Memory | None: ...

    def effective(
        self,
        agent: str,
        taint: Label,
        key: str,
        *,
        audit: Callable[[Memory | None], AuditEvent] | None = None,
        integrity: Integrity = Integrity.TRUSTED,
    ) -> Memory | None:
        """The key's version in the view of ``taint``, the reader (``labels.reader``: a session's level and
        categories, and its floor); ``integrity`` is the session's own, the integrity of its audit row's taint (a
        backend that chains audit rows per label, PostgreSQL, needs it before it reads; effective_view and search
        take it too)."""

    def exists(self, agent: str, key: str) -> bool: ...

    def effective_view(
        self,
        agent: str,
        taint: Label,
        *,
        tag: str | None = None,
        audit: Callable[[list[Memory]], AuditEvent] | None = None,
        integrity: Integrity = Integrity.TRUSTED,
    ) -> list[Memory]: ...

    def search(
        self,
        agent: str,
        taint: Label,
        query: str,
        limit: int,
        *,
        audit: Callable[[list[Hit]], AuditEvent],
        integrity: Integrity = Integrity.TRUSTED,
    ) -> list[Hit]: ...

    def append_audit(self, event: AuditEvent) -> None: ...

    def close(self) -> None: ...


class AuditorStorage(Protocol):
    """What the store's auditor needs from storage: history, the audit, sessions, purge and verify. Nothing a
    model's call reaches."""

    def purge(
        self,
        agent: str,
        key: str,
        level: Label | None,
        *,
        purged_at: str,
        purged_by: str,
        audit: Callable[[list[Memory]], AuditEvent],
    ) -> list[Memory]: ...

    def agents(self) -> list[str]: ...

    def audit_rows(self, agent: str | None = None) -> Iterator[dict[str, Any]]: ...

    def history_rows(self, agent: str, key: str | None = None) -> Iterator[dict[str, Any]]: ...

    def session_rows(self) -> Iterator[dict[str, Any]]: ...

    def taint_event_rows(self) -> Iterator[dict[str, Any]]: ...

    def verify(self) -> Verification: ...


class StorageProvider(ToolStorage, AuditorStorage, Protocol):
    """A backend: both sides of the seam (``ToolStorage`` for sessions, ``AuditorStorage`` for the store's
    auditor). ``tests/test_contract.py`` holds every implementation to it."""


def open_storage(
    path: str | Path | None,
    *,
    rules: ViewRules,
    analyzer: Analyzer | str | None = None,
    layout: Literal["folder", "file"] | None = None,
    ranking: Ranking | None = None,
    embedder: Embedder | None = None,
) -> SqliteStorage | FolderStorage | PostgresStorage:
    """Open the store at ``path`` with the layout it has, or create one: a new path ending in ``.db``, ``.sqlite``
    or ``.sqlite3`` becomes one SQLite file, any other new path a store folder, unless ``layout`` says otherwise.

    ``path=None`` (or ``":memory:"``, as ``sqlite3`` spells it) is a private in-memory single-file store. An
    existing file is a single-file store and an
    existing folder a folder store; asking for the other layout is an error. A ``postgresql://`` (or
    ``postgres://``) URL opens, or creates, a store in that PostgreSQL database (``PostgresStorage``).

    Raises:
        InvalidArgument: an unknown layout, or one that does not match what ``path`` holds.
        SchemaError: ``path`` is not a memlab store this version can open.
    """
    if layout not in (None, *LAYOUTS):
        raise InvalidArgument(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    if path is None or os.fspath(path) == MEMORY:
        if layout == "folder":
            raise InvalidArgument("a folder store needs a path; an in-memory store is a single file")
        return SqliteStorage(rules=rules, analyzer=analyzer, ranking=ranking, embedder=embedder)
    if is_postgres_url(path):
        if layout is not None:
            raise InvalidArgument("a PostgreSQL store has no layout: it is one database")
        if embedder is not None:
            raise InvalidArgument("the PostgreSQL backend keeps no dense vectors: open it without an embedder")
        storage = PostgresStorage(str(path), rules=rules, analyzer=analyzer)
        if ranking is not None:
            storage.ranking = ranking
        return storage
    path = Path(path)
    found = _layout_found(path)
    if found is not None and layout is not None and found != layout:
        raise InvalidArgument(f"{path} is a {found} store, not a {layout} store (memlab migrate converts a file)")
    if (found or layout or new_layout(path)) == "file":
        return SqliteStorage(path, rules=rules, analyzer=analyzer, ranking=ranking, embedder=embedder)
    return FolderStorage(path, rules=rules, analyzer=analyzer, ranking=ranking, embedder=embedder)


@contextlib.contextmanager
def scratch_storage(
    url: str | None,
    *,
    rules: ViewRules,
    analyzer: Analyzer | str | None = None,
    ranking: Ranking | None = None,
    embedder: Embedder | None = None,
    index_tag_words: bool = True,
) -> Iterator[SqliteStorage | PostgresStorage]:
    """A store that lasts for a ``with`` block: in memory (``url=None``), or in a PostgreSQL schema of its own
    (``memlab_scratch_`` and a random suffix) in the database at ``url``, dropped with all it holds afterwards.
    ``index_tag_words=False``: SQLite indexes no one-word tags, so it never boosts and its bm25 is plain FTS5's
    over the text (PostgreSQL has no tag boost, so nothing changes there).

    Raises:
        InvalidArgument: ``url`` is neither None nor a PostgreSQL URL (a store on disk is not thrown away).
    """
    if url is None:
        storage: SqliteStorage | PostgresStorage = SqliteStorage(
            rules=rules, analyzer=analyzer, ranking=ranking, embedder=embedder, index_tag_words=index_tag_words
        )
        with contextlib.closing(storage):
            yield storage
        return
    if not is_postgres_url(url):
        raise InvalidArgument(f"a throwaway store lives in memory or in PostgreSQL, not at {url!r}")
    if embedder is not None:
        raise InvalidArgument("the PostgreSQL backend keeps no dense vectors: open it without an embedder")
    storage = PostgresStorage(url, rules=rules, analyzer=analyzer, schema=f"memlab_scratch_{uuid.uuid4().hex[:12]}")
    try:
        if ranking is not None:
            storage.ranking = ranking
        yield storage
    finally:
        storage.drop()


def _layout_found(path: Path) -> str | None:
    """What ``path`` holds: a folder, a file or nothing, from one look (another process may be creating it)."""
    try:
        return "folder" if stat.S_ISDIR(path.stat().st_mode) else "file"
    except FileNotFoundError:
        return None


def verify_path(path: str | Path, rules: ViewRules | None = None, *, analyzer: Analyzer | None = None) -> Verification:
    """Verify the store at ``path`` (a file, a folder or a ``postgresql://`` URL) without opening it as a
    store: read-only, and it works on a store too damaged to open.

    Raises:
        SchemaError: ``path`` holds no memlab store.
    """
    if is_postgres_url(path):
        return verify_url(str(path))
    path, rules = Path(path), rules or ViewRules.lattice()
    if path.is_dir():
        return verify_folder(path, rules, analyzer=analyzer)
    return verify_store_file(path, rules, analyzer=analyzer)
