"""LangGraph's items as memlab reads them back (``MemlabStore``): a memory version is an ``Item`` whose value is the
JSON object its content holds, with the version's classification and integrity beside LangGraph's fields.

Examples:
    >>> from memlab import MemoryStore
    >>> memory = MemoryStore().session("INTERNAL", "users/ann").memory_save("city", '{"text": "Lisbon"}')
    >>> item(("users", "ann"), memory).dict()["classification"], value_of("plain words")
    ('INTERNAL', {'content': 'plain words'})
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from langgraph.store.base import Item, SearchItem

from memlab import Memory
from memlab.labels import Integrity, Label

__all__ = ["MemlabItem", "MemlabSearchItem", "item", "search_item", "value_of"]


class _Labelled:
    """What memlab adds to LangGraph's items: the version's ``classification`` (set by each item's ``__init__``), its
    ``integrity``, and both as text in ``dict()``."""

    __slots__ = ()
    classification: Label

    @property
    def integrity(self) -> Integrity:
        """Whether a trusted decision may rest on this item: the integrity of the session that saved it."""
        return self.classification.integrity

    def dict(self) -> dict:
        return super().dict() | _label_fields(self.classification)  # type: ignore[misc]


class MemlabItem(_Labelled, Item):
    """LangGraph's ``Item``, with the memory's ``classification`` (a ``memlab.labels.Label``) and ``integrity``:
    what it is, as the store says it, never the value's to say. ``dict()`` carries both as text, as tool results
    do; equality is LangGraph's (value, key, namespace and times)."""

    __slots__ = ("classification",)

    def __init__(self, *, classification: Label, **fields: Any) -> None:
        super().__init__(**fields)
        self.classification = classification


class MemlabSearchItem(_Labelled, SearchItem):
    """LangGraph's ``SearchItem``, with the memory's ``classification`` and ``integrity`` (as ``MemlabItem``)."""

    __slots__ = ("classification",)

    def __init__(self, *args: Any, classification: Label, **fields: Any) -> None:
        super().__init__(*args, **fields)
        self.classification = classification


def _label_fields(classification: Label) -> dict[str, str]:
    return {"classification": str(classification), "integrity": str(classification.integrity)}


def item(namespace: tuple[str, ...], memory: Memory) -> MemlabItem:
    """``memory`` as the item a ``get`` returns: its ``saved_at`` as both ``created_at`` and ``updated_at``."""
    at = datetime.fromisoformat(memory.saved_at)
    return MemlabItem(
        value=value_of(memory.content),
        key=memory.key,
        namespace=namespace,
        created_at=at,
        updated_at=at,
        classification=memory.classification,
    )


def search_item(namespace: tuple[str, ...], memory: Memory, *, score: float | None = None) -> MemlabSearchItem:
    """``memory`` as a ``search`` hit, with memlab's ``score`` (None without a query)."""
    at = datetime.fromisoformat(memory.saved_at)
    return MemlabSearchItem(
        namespace, memory.key, value_of(memory.content), at, at, score, classification=memory.classification
    )


def value_of(content: str) -> dict[str, Any]:
    """A memory's content as an item's value: the JSON object it holds, or plain text as ``{"content": text}``."""
    try:
        value = json.loads(content)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"content": content}
