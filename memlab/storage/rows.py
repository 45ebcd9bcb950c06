"""A row of ``memories`` as a ``Memory``: the columns every read selects, and the value they make."""

from __future__ import annotations

import json
from typing import Any

from memlab.labels import Label
from memlab.levels import Level
from memlab.records import Memory

MEMORY_COLUMNS = (
    "m.key, m.content, m.tags, m.classification, m.version, m.saved_at, m.saved_by, m.source, m.occurred_at, m.distrust"
)

_LEVELS = {int(level): Label.parse(level) for level in Level}
_scan = json.JSONDecoder().scan_once


def memory_of(row: tuple[Any, ...]) -> Memory:
    key, content, tags, classification, version, saved_at, saved_by, source, occurred_at, distrust = row
    # A label with categories is stored as its text, a level as its integer (memlab.storage.label_codes).
    label = Label.parse(classification) if type(classification) is str else _LEVELS[classification]
    sources = () if distrust is None else tuple(json.loads(distrust))
    return Memory(key, content, _tags(tags), label, version, saved_at, saved_by, source, occurred_at, sources)


def _tags(text: str) -> tuple[str, ...]:
    """A version's stored tags (a JSON array, as ``chain.json_strings`` wrote it) decoded, once per row read.

    The JSON scanner is called directly (``json.loads`` spends more on its checks than on the array); text it
    does not read whole, or cannot read, goes to ``json.loads``, which decodes it or raises its own error.
    """
    if text == "[]":
        return ()
    try:
        tags, end = _scan(text, 0)
    except (StopIteration, TypeError):
        tags, end = None, -1
    if end != len(text) or type(tags) is not list:
        tags = json.loads(text)
    return tuple(tags)
