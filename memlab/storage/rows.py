"""A row of ``memories`` as a ``Memory``: the columns every read selects, and the value they make."""

from __future__ import annotations

import json
from typing import Any

from memlab.levels import Level
from memlab.records import Memory

_MEMORY_COLUMNS = (
    "m.key, m.content, m.tags, m.classification, m.version, m.saved_at, m.saved_by, m.source, m.occurred_at"
)


def _memory(row: tuple[Any, ...]) -> Memory:
    key, content, tags, classification, version, saved_at, saved_by, source, occurred_at = row
    return Memory(
        key, content, tuple(json.loads(tags)), Level(classification), version, saved_at, saved_by, source, occurred_at
    )
