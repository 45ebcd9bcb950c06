"""What a session reads of one SQLite file's effective views: a key's version, a whole view, whether a key is
live anywhere."""

from __future__ import annotations

import sqlite3

from memlab.labels import Ambiguous, Label
from memlab.levels import Level
from memlab.records import Memory
from memlab.storage.indexes import IndexUpkeep
from memlab.storage.label_codes import read_view, view_key
from memlab.storage.lexical import first_per_key
from memlab.storage.live import labelled, latest, live_versions
from memlab.storage.rows import MEMORY_COLUMNS, memory_of
from memlab.viewrules import AMBIGUOUS, ViewRules, maximal

__all__ = ["ViewReads"]


class ViewReads:
    """Reads of the effective views (``effective``, kept by ``IndexUpkeep``), in the caller's transaction.

    Args:
        conn: the store's connection.
        rules: what the views follow (shadowing before or after a tag filter, which labels a taint reads).
        indexes: the views' upkeep (a categorised label's view is made on its first read).
    """

    def __init__(self, conn: sqlite3.Connection, rules: ViewRules, indexes: IndexUpkeep) -> None:
        self._conn = conn
        self._rules = rules
        self._indexes = indexes

    def view_of(self, agent_id: int | None, taint: Label) -> int | str:
        """The stored form of ``taint``'s view at ``agent_id``: a level's, or a categorised label's (made on its
        first use, in the caller's write transaction).

        Args:
            agent_id: the agent (None: one that never saved, whose views are empty).
            taint: the session's taint.

        Returns:
            ``effective.taint`` of the view.
        """
        key = view_key(taint)
        if type(key) is int or agent_id is None:
            return key
        return self._indexes.label_view(agent_id, taint)

    def memory(self, agent_id: int | None, taint: Label, key: str) -> Memory | None:
        """The key's version in the effective view at ``taint``.

        Args:
            agent_id: the agent (None: one that never saved).
            taint: the session's taint.
            key: the key.

        Returns:
            The version, or None when the view has none.

        Raises:
            Ambiguous: the rules refuse to choose among the key's maximal versions at ``taint``.
        """
        view = self.view_of(agent_id, taint)
        row = self._conn.execute(
            f"SELECT e.memory_id, {MEMORY_COLUMNS} FROM effective e LEFT JOIN memories m ON m.id = e.memory_id "
            "WHERE e.agent_id = ? AND e.key = ? AND e.taint = ?",
            (agent_id, key, view),
        ).fetchone()
        if row is not None and row[0] == AMBIGUOUS:
            self._refuse_ambiguous(agent_id, key, read_view(view))
        return None if row is None else memory_of(row[1:])

    def _refuse_ambiguous(self, agent_id: int | None, key: str, taint: Label) -> None:
        """Raise ``Ambiguous`` naming the labels of ``key``'s maximal versions at ``taint``."""
        live = labelled(live_versions(latest(self._conn, agent_id, [key])).get(key, {}))
        readable = {label: memory_id for label, memory_id in live.items() if self._rules.can_read(label, taint)}
        trusted = {label: memory_id for label, memory_id in readable.items() if label.trusted}
        labels = ", ".join(sorted(str(label) for label in maximal(trusted or readable, taint)))
        raise Ambiguous(f"memory {key!r} has several versions you may read, none above the others: {labels}")

    def exists(self, agent_id: int | None, key: str) -> bool:
        """Whether ``key`` has a live version at any level or label.

        Args:
            agent_id: the agent (None: one that never saved).
            key: the key.

        Returns:
            True when some version of it is live.
        """
        row = self._conn.execute(
            "SELECT 1 FROM effective WHERE agent_id = ? AND key = ? AND taint = ?", (agent_id, key, int(max(Level)))
        ).fetchone()
        if row is None and self._indexes.label_views(agent_id or 0):
            return bool(live_versions(latest(self._conn, agent_id, [key])))
        return row is not None

    def memories(self, agent_id: int | None, taint: Label, tag: str | None) -> list[Memory]:
        """The effective view at ``taint``, by key; only the versions tagged ``tag`` when given.

        Args:
            agent_id: the agent (None: one that never saved).
            taint: the session's taint.
            tag: a tag the versions must have, or None.

        Returns:
            The view's versions, by key.
        """
        if self._rules.shadow_before_match or tag is None:
            return self._view(agent_id, self.view_of(agent_id, taint), tag)
        # Filter first, shadow among the survivors: per key, the highest readable level's view that has a tagged
        # version wins, even when a higher version without the tag is visible.
        views = (
            self._view(agent_id, int(level), tag) for level in reversed(Level) if self._rules.can_read(level, taint)
        )
        return sorted(first_per_key(views, lambda memory: memory.key), key=lambda memory: memory.key)

    def _view(self, agent_id: int | None, view: int | str, tag: str | None) -> list[Memory]:
        # The tag filter applies to the effective view, i.e. after shadowing: a lower version never
        # surfaces because the version shadowing it lacks the tag.
        tagged = "" if tag is None else "AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)"
        rows = self._conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM effective e JOIN memories m ON m.id = e.memory_id "
            f"WHERE e.agent_id = ? AND e.taint = ? {tagged} ORDER BY e.key",
            (agent_id, view, *(() if tag is None else (tag,))),
        )
        return [memory_of(row) for row in rows]
