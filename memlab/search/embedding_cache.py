"""An embedding cache: each text's vector kept under its model and the sha256 of the exact text embedded.

``Cached`` wraps an ``Embedder`` (``memlab.search.dense``) and answers from two layers before it runs the model:
read-only warm files (``Warm``: vectors shipped with a collection, as ``data/locomo10.embeddings.npz``), then a
read-write ``EmbeddingCache`` in a folder of the user's (``MEMLAB_CACHE``, else ``$XDG_CACHE_HOME/memlab``, else
``~/.cache/memlab``; never inside the repository or the package). The model's key is its name and a digest
(``fingerprint``): of the model and tokenizer files for ``MiniLM``, of the vector of a fixed probe text for any
other embedder; so a changed model never serves stale vectors.

The cache is one SQLite file in WAL mode (two processes filling it at once each commit whole batches), each row
carrying a checksum of its vector: a row that does not check, or a file that is not a database, is recomputed
(a warning names the file), never returned. What the model returns is stored as it is, so a cached vector is
the fresh one byte for byte. Warm files hold the float32 vectors the model gave where the file was made (a
``MiniLM`` vector does not depend on the batch it is embedded in), so on that CPU they are the fresh ones too;
another CPU's int8 arithmetic may differ in the last bits, within ``WARM_TOLERANCE``.

``memlab eval`` uses the cache and the bundled warm file by default; a store uses it only when asked
(``MemoryStore(embedder=cached("minilm"))``): its vectors are of texts that may be CONFIDENTIAL, and a purge does
not reach the cache (``EmbeddingCache.clear`` does). See docs/security.md.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.errors import InvalidArgument

if TYPE_CHECKING:
    import numpy as np

    from memlab.search.dense import Embedder

__all__ = ["Cached", "EmbeddingCache", "Warm", "cached", "default_folder", "fingerprint", "digest", "WARM_TOLERANCE"]

CACHE_FILE = "embeddings.sqlite3"
PROBE = "memlab embedding cache probe: the quick brown fox jumps over the lazy dog"
WARM_TOLERANCE = 2e-3
"""How far a warm vector may be from a fresh one made on another CPU or onnxruntime build, per component of the
unit vector (int8 kernels differ in rounding; on the CPU that made the file the difference is 0)."""
_BUSY_MS = 30_000


def default_folder() -> Path:
    """The cache folder: ``MEMLAB_CACHE`` if set, else ``memlab`` under ``XDG_CACHE_HOME`` or ``~/.cache``."""
    named = os.environ.get("MEMLAB_CACHE")
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "memlab"


def digest(text: str) -> bytes:
    """The sha256 of the exact text embedded (UTF-8): what a cached vector is found by."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def fingerprint(embedder: Embedder) -> str:
    """The model's key: its name and a digest of what makes its vectors (``embedder.fingerprint`` when it has
    one, else of its vector for a fixed probe text and its dimensions)."""
    own = getattr(embedder, "fingerprint", None)
    if own is None:
        vector = embedder.embed([PROBE])
        own = hashlib.sha256(f"{embedder.dimensions}:".encode() + vector.astype("<f4").tobytes()).hexdigest()
    return f"{embedder.name}@{own}"


def _check(model: str, key: bytes, vector: bytes) -> bytes:
    return hashlib.blake2b(model.encode() + key + vector, digest_size=8).digest()


class EmbeddingCache:
    """The read-write layer: one SQLite file in ``folder`` (created 0700, the file 0600), vectors per model and
    text digest.

    Examples:
        >>> import numpy as np, tempfile
        >>> cache = EmbeddingCache(tempfile.mkdtemp())
        >>> cache.put("model@1", [digest("hello")], np.ones((1, 3), np.float32))
        >>> cache.get("model@1", [digest("hello"), digest("other")], 3)
        {0: array([1., 1., 1.], dtype=float32)}
    """

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder).expanduser() if folder is not None else default_folder()
        self.path = self.folder / CACHE_FILE
        self._conn: sqlite3.Connection | None = None
        self._broken = False
        self._lock = threading.Lock()

    def get(self, model: str, keys: Sequence[bytes], dimensions: int) -> dict[int, np.ndarray]:
        """The vectors found, by position in ``keys``; a row that fails its checksum is left out."""
        import numpy as np

        found: dict[int, np.ndarray] = {}
        positions: dict[bytes, list[int]] = {}
        for position, key in enumerate(keys):
            positions.setdefault(key, []).append(position)
        wanted = list(positions)
        for start in range(0, len(wanted), 500):  # SQLite's bound on a statement's parameters
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._query(
                f"SELECT digest, vector, checksum FROM vectors WHERE model = ? AND digest IN ({marks})", (model, *chunk)
            )
            for key, vector, checksum in rows:
                if checksum != _check(model, key, vector):
                    continue  # corrupt (or cut short): recomputed and written again by the caller
                for position in positions[key]:
                    found[position] = np.frombuffer(vector, dtype="<f4").astype(np.float32)
        return found

    def put(self, model: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Keep ``vectors`` (a row per key) in one transaction; a broken cache keeps nothing."""
        rows = []
        for key, vector in zip(keys, vectors, strict=True):
            data = vector.astype("<f4").tobytes()
            rows.append((model, key, data, _check(model, key, data)))
        conn = self._connection()
        if conn is None or not rows:
            return
        try:
            with self._lock, conn:
                conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
        except sqlite3.Error as error:
            self._give_up(error)

    def clear(self) -> int:
        """Remove the cache file (and its WAL): the number of files removed."""
        self.close()
        removed = 0
        for suffix in ("", "-wal", "-shm"):
            path = self.path.with_name(self.path.name + suffix)
            if path.exists():
                path.unlink()
                removed += 1
        self._broken = False
        return removed

    def close(self) -> None:
        """Close the file (it is opened again when next used)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _query(self, sql: str, parameters: Iterable[Any]) -> list[tuple]:
        conn = self._connection()
        if conn is None:
            return []
        try:
            with self._lock:
                return conn.execute(sql, tuple(parameters)).fetchall()
        except sqlite3.Error as error:
            self._give_up(error)
            return []

    def _warn(self, error: Exception) -> None:
        warnings.warn(
            f"embedding cache {self.path} unusable ({error}): embedding without it (memlab cache clear removes it)",
            stacklevel=5,
        )

    def _connection(self) -> sqlite3.Connection | None:
        with self._lock:
            if self._conn is not None or self._broken:
                return self._conn
            try:
                self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)  # the file is the user's alone
                os.close(descriptor)
                conn = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000, check_same_thread=False)
                conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, digest BLOB NOT NULL, "
                    "vector BLOB NOT NULL, checksum BLOB NOT NULL, PRIMARY KEY (model, digest)) WITHOUT ROWID"
                )
                conn.commit()
            except (OSError, sqlite3.Error) as error:
                self._broken = True
                self._warn(error)
                return None
            self._conn = conn
            return conn

    def _give_up(self, error: Exception) -> None:
        self._warn(error)
        with self._lock:
            self._broken = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class Warm:
    """A read-only layer: a ``.npz`` file of float32 unit vectors by text digest, made by one model
    (``tools/embed_locomo.py``); a file of another model, or not of this layout, is ignored with a warning."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._loaded: tuple[str, dict[bytes, int], np.ndarray] | None = None

    def vectors(self, model: str) -> tuple[dict[bytes, int], np.ndarray] | None:
        """Row by digest and the matrix, when the file exists and was made by ``model``; else None."""
        if self._loaded is None:
            self._loaded = self._load()
        made_by, rows, matrix = self._loaded
        if not rows:
            return None
        if made_by != model:
            warnings.warn(f"{self.path} was made by {made_by}, not {model}: not used", stacklevel=3)
            self._loaded = ("", {}, matrix)  # warned once
            return None
        return rows, matrix

    def _load(self) -> tuple[str, dict[bytes, int], np.ndarray]:
        import numpy as np

        empty = ("", {}, np.zeros((0, 0), np.float32))
        if not self.path.exists():
            return empty
        try:
            with np.load(self.path, allow_pickle=False) as data:
                model = str(data["model"])
                digests = data["digests"]
                vectors = data["vectors"]
            if digests.dtype != np.uint8 or digests.ndim != 2 or digests.shape[1] != 32:
                raise ValueError("digests are not sha256s")
            if vectors.dtype != np.float32 or vectors.ndim != 2 or len(vectors) != len(digests):
                raise ValueError("not a float32 vector per digest")
        except (OSError, ValueError, KeyError) as error:
            warnings.warn(f"{self.path} is not a warm embeddings file ({error}): not used", stacklevel=4)
            return empty
        return model, {row.tobytes(): index for index, row in enumerate(digests)}, vectors


class Cached:
    """An ``Embedder`` that answers from warm files, then the cache, and runs ``embedder`` only for the rest
    (whose vectors it keeps); same ``name`` and ``dimensions``, so the stores it fills are the same."""

    def __init__(
        self, embedder: Embedder, cache: EmbeddingCache | None = None, *, warm: Sequence[Warm | str | Path] = ()
    ) -> None:
        self.embedder = embedder
        self.name = embedder.name
        self.dimensions = embedder.dimensions
        self.cache = cache
        self.warm = [layer if isinstance(layer, Warm) else Warm(layer) for layer in warm]
        self._model: str | None = None

    @property
    def model(self) -> str:
        """The model's key in the cache (``fingerprint``), computed once."""
        if self._model is None:
            self._model = fingerprint(self.embedder)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text, as ``embedder`` gives it."""
        return self._answer(texts, self.model, self.embedder.embed)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text embedded as a query (``memlab.search.dense.query_vectors``): kept apart from the
        same text's stored vector when the embedder gives queries a role of their own, the same vector otherwise."""
        asked = getattr(self.embedder, "embed_query", None)
        if asked is None:
            return self.embed(texts)
        return self._answer(texts, f"{self.model}#query", asked)

    def _answer(self, texts: Sequence[str], model: str, run: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
        """``texts``' vectors under the key ``model``: from the warm files, then the cache, then ``run``."""
        import numpy as np

        if not texts:
            return run(texts)
        keys = [digest(text) for text in texts]
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        left = list(range(len(texts)))
        for layer in self.warm:
            found = layer.vectors(model)
            if found is None:
                continue
            rows, matrix = found
            still = []
            for position in left:
                row = rows.get(keys[position])
                if row is None:
                    still.append(position)
                else:
                    vectors[position] = matrix[row]
            left = still
        if left and self.cache is not None:
            hits = self.cache.get(model, [keys[position] for position in left], self.dimensions)
            for index, vector in hits.items():
                vectors[left[index]] = vector
            left = [position for index, position in enumerate(left) if index not in hits]
        if left:
            first = {keys[position]: position for position in reversed(left)}  # a text asked twice is embedded once
            fresh = run([texts[position] for position in first.values()])
            row = {key: index for index, key in enumerate(first)}
            vectors[left] = fresh[[row[keys[position]] for position in left]]
            if self.cache is not None:
                self.cache.put(model, list(first), fresh)
        return vectors

    def forget(self) -> None:
        """Forget the wrapped embedder's remembered queries (the cache stays)."""
        forget = getattr(self.embedder, "forget", None)
        if forget is not None:
            forget()


def cached(
    embedder: Embedder | str = "minilm",
    folder: str | Path | None = None,
    *,
    warm: Sequence[Warm | str | Path] = (),
) -> Cached:
    """``embedder`` (an ``Embedder`` or a name for ``dense.get``) through the cache in ``folder`` (default
    ``default_folder()``) and the ``warm`` files.

    Raises:
        DenseUnavailable: a name whose packages are missing.
        InvalidArgument: an unknown name, or an embedder that is already cached.
    """
    from memlab.search import dense

    embedder = dense.get(embedder)
    if isinstance(embedder, Cached):
        raise InvalidArgument("this embedder is already cached")
    return Cached(embedder, EmbeddingCache(folder), warm=warm)
