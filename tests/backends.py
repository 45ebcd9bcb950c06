"""The storage backends every contract, model and noninterference test runs against."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from memlab import MemoryStore
from tests.pgserver import running_server

# memory: one in-memory SQLite database; file: one SQLite file; folder: one SQLite file per agent;
# postgres: a fresh database on the test session's PostgreSQL server (tests/pgserver.py).
BACKENDS = ("memory", "file", "folder", "postgres")

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
