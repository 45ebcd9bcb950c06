"""The storage backends every contract, model and noninterference test runs against, and what each can do.

What each backend can do is declared in the package (``memlab.storage.capabilities``), which the code reads too;
``CAPABILITIES`` and ``OPTIONAL`` here are that declaration. A contract test that needs a capability is marked
``@pytest.mark.requires("dense")`` and runs only where it is declared (tests/conftest.py, docs/testing.md).
``detect`` finds the same table from the backends' behaviour, and ``tests/test_contract.py`` checks the two
agree, so the declaration cannot drift from the code.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from memlab import InvalidArgument, MemoryStore, Ranking, SchemaError
from memlab.storage.capabilities import BACKENDS as CAPABILITIES
from memlab.storage.capabilities import CAPABILITIES as OPTIONAL
from tests.pgserver import running_server

# memory: one in-memory SQLite database; file: one SQLite file; folder: one SQLite file per agent;
# postgres: a fresh database on the test session's PostgreSQL server (tests/pgserver.py).
BACKENDS = ("memory", "file", "folder", "postgres")

REQUIRED = "every contract test without a requires mark: the semantics, the audit, verify, purge, bulk, context"
assert set(CAPABILITIES) == set(BACKENDS), "every backend the tests open is declared in the package"


def has(backend: str, capability: str) -> bool:
    """Whether ``backend`` has ``capability`` (one of ``OPTIONAL``), as ``CAPABILITIES`` declares."""
    if capability not in OPTIONAL:
        raise KeyError(f"unknown capability {capability!r}: one of {', '.join(OPTIONAL)}")
    return capability in CAPABILITIES[backend]


# Agent names that are hostile as file names, or differ only by case or LIKE wildcards: each must be its
# own exact namespace, and none may reach outside the store's folder.
HOSTILE_AGENTS = ["main", "Main", "ma_n", "m%", "..", "/", "../../etc/passwd", "CON", "nul.txt", "a" * 256, "ñame 名前"]


@contextlib.contextmanager
def open_store(backend: str, **options) -> Iterator[MemoryStore]:
    """A fresh store of ``backend`` in a temporary folder, closed and removed afterwards."""
    if backend == "memory":
        with MemoryStore(**options) as store:
            yield store
        return
    if backend == "postgres":
        server = running_server()
        url = server.fresh_database()
        try:
            with MemoryStore(url, **options) as store:
                yield store
        finally:
            server.drop_database(url)
        return
    with tempfile.TemporaryDirectory() as folder:
        with MemoryStore(Path(folder) / "store", layout=backend, **options) as store:
            yield store


@contextlib.contextmanager
def store_location(backend: str) -> Iterator[str]:
    """Where a new store of ``backend`` lives, for ``MemoryStore(location)`` and the commands' ``--db``: a new
    folder, an empty single-file store, or a fresh database; removed afterwards."""
    if backend == "memory":
        raise ValueError("an in-memory store has no location (it lacks the persistent capability)")
    if backend == "postgres":
        server = running_server()
        url = server.fresh_database()
        try:
            yield url
        finally:
            server.drop_database(url)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store"
        if backend == "file":
            MemoryStore(path, layout="file").close()  # an existing file opens as a file store
        yield str(path)


class WordsEmbedder:
    """A deterministic stand-in for a dense model: each word hashed into one of 64 dimensions, unit length.
    Texts sharing words are near; it is fast, and what the store does with vectors is all a test needs."""

    name = "test-words-64"
    dimensions = 64

    def embed(self, texts):
        import hashlib

        import numpy as np

        from memlab.search.query import words

        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in words(text):
                vectors[row, hashlib.sha256(word.encode()).digest()[0] % self.dimensions] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)


def session_sql(store: MemoryStore, statement: str, agent: str = "main") -> None:
    """Run ``statement`` on the connection ``agent``'s sessions write through: SQLite's file (the agent's own in
    a folder store), or PostgreSQL as the session role at RESTRICTED."""
    storage = store.storage
    if hasattr(storage, "_pool"):
        with storage._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT set_config('memlab.agent', %s, true), set_config('memlab.taint', '3', true)", (agent,))
            conn.execute(statement)
        return
    (storage.agent_storage(agent) if hasattr(storage, "agent_storage") else storage).db.execute(statement)


def refused(backend: str) -> tuple[type[Exception], str]:
    """The error a write the database forbids raises on ``backend``, and what its message says."""
    if backend == "postgres":
        import psycopg

        return psycopg.errors.InsufficientPrivilege, "permission denied"
    import sqlite3

    return sqlite3.IntegrityError, "append-only"


def _opens(backend: str, **options) -> bool:
    """Whether ``backend`` opens with ``options``; a clear refusal (InvalidArgument, SchemaError) is a no."""
    try:
        with open_store(backend, **options):
            return True
    except (InvalidArgument, SchemaError):
        return False


def _ranks_by_fts5(backend: str) -> bool:
    """The tag boost is FTS5's: a backend ranking by it scores a tagged match higher when the boost grows."""
    with open_store(backend) as store:
        session = store.session()
        session.memory_save("k", "coffee", tags=["coffee"])
        scores = []
        for boost in (0.0, 5.0):
            store.ranking = Ranking(tag_boost=boost)
            scores.append(session.memory_search("coffee")[0].score)
        return scores[0] != scores[1]


def _copies(backend: str) -> bool:
    """A fork holds the store's memories, and a restore puts back a snapshot; a backend without both refuses."""
    with open_store(backend) as store:
        store.session().memory_save("k", "v")
        try:
            image = store.snapshot()
            with store.fork() as forked:
                forked_ok = forked.session().memory_get("k").content == "v"
        except InvalidArgument:
            return False
        store.session().memory_save("k", "changed")
        store.restore(image)
        return forked_ok and store.session().memory_get("k").content == "v"


def _keeps_compartments(backend: str) -> bool:
    with open_store(backend) as store:
        try:
            session = store.session("CONFIDENTIAL:hr")
        except InvalidArgument:
            return False
        session.memory_save("k", "v")
        return store.session("CONFIDENTIAL:legal").memory_get("k") is None and session.memory_get("k") is not None


def _keeps_integrity(backend: str) -> bool:
    """An untrusted save is invisible to a session whose floor is trusted; a backend without integrity refuses."""
    with open_store(backend) as store:
        try:
            untrusted = store.session(integrity="untrusted", source="web:probe")
            trusted_only = store.session(floor="trusted")
        except InvalidArgument:
            return False
        untrusted.memory_save("k", "v")
        return trusted_only.memory_get("k") is None and store.session().memory_get("k") is not None


def _is_files(backend: str) -> bool:
    with open_store(backend) as store:
        path = getattr(store.storage, "path", None)
        return path is not None and Path(path).exists()


def _reopens(backend: str) -> bool:
    if backend == "memory":
        return False
    with store_location(backend) as location:
        with MemoryStore(location) as store:
            store.session().memory_save("k", "v")
        with MemoryStore(location) as store:
            return store.session().memory_get("k").content == "v"


_PROBES = {
    "compartments": _keeps_compartments,
    "integrity": _keeps_integrity,
    "dense": lambda backend: _opens(backend, embedder=WordsEmbedder()),
    "analyzers": lambda backend: _opens(backend, analyzer="trigram"),
    "view_rules": lambda backend: _opens(backend, policy="global-stats"),
    "fts5_ranking": _ranks_by_fts5,
    "copy": _copies,
    "files": _is_files,
    "persistent": _reopens,
}


def detect(backend: str) -> frozenset[str]:
    """The optional capabilities ``backend`` shows when each is tried."""
    return frozenset(capability for capability in OPTIONAL if _PROBES[capability](backend))
