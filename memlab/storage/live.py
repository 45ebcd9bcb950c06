"""The live versions of a key in one SQLite file: the newest version at each label, unless it is deleted.

Every change of the effective view starts from them: a view is a function of each key's live versions
(``ViewRules.winners``), so a save, delete or purge reads them before and after and writes the differences.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from memlab.labels import Label
from memlab.levels import Level
from memlab.storage.label_codes import as_label

__all__ = ["Latest", "latest", "live_versions", "labelled"]

Latest = dict[tuple[str, int | str], tuple[int, int, str | None]]
"""(key, stored label) -> id, version and deleted_at of the newest version of the key at that label."""

_LATEST = "SELECT m.key, m.classification, m.id, MAX(m.version), m.deleted_at FROM memories m WHERE m.agent_id = ? AND "
_LATEST_OF_KEY = _LATEST + "m.key = ? GROUP BY m.classification"
_LATEST_OF_KEYS = _LATEST + "m.key IN (SELECT value FROM json_each(?)) GROUP BY m.key, m.classification"


def latest(conn: sqlite3.Connection, agent_id: int | None, keys: list[str]) -> Latest:
    """The newest version of each of ``keys`` at each label where it has one.

    Args:
        conn: the store's connection.
        agent_id: whose keys; None (an agent that never saved) finds nothing.
        keys: the keys to look up.

    Returns:
        (key, stored label) -> id, version and deleted_at.
    """
    # SQLite fills the bare columns of a MAX() aggregate from the row holding the maximum. One key (every single
    # save) is looked up as itself: no JSON to write, no json_each to scan.
    if len(keys) == 1:
        rows = conn.execute(_LATEST_OF_KEY, (agent_id, keys[0]))
    else:
        rows = conn.execute(_LATEST_OF_KEYS, (agent_id, json.dumps(keys)))
    return {(key, level): (memory_id, version, deleted) for key, level, memory_id, version, deleted in rows}


def live_versions(latest: Latest) -> dict[str, dict[Level | Label, int]]:
    """The live versions among the newest: those not deleted.

    Args:
        latest: what ``latest`` read.

    Returns:
        key -> {level or label: id}; a categorised label (stored as text) as a ``Label``, a level as a ``Level``.
    """
    live: dict[str, dict[Level | Label, int]] = {}
    for (key, level), (memory_id, _version, deleted_at) in latest.items():
        if deleted_at is None:
            live.setdefault(key, {})[Level(level) if type(level) is int else Label.parse(level)] = memory_id
    return live


def labelled(live: Mapping[Level | Label, int]) -> dict[Label, int]:
    """A key's live versions keyed by label (levels as labels without categories)."""
    return {as_label(label): memory_id for label, memory_id in live.items()}
