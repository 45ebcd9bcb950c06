"""The agents of one SQLite file: each one's id, and the levels whose FTS5 index it keeps."""

from __future__ import annotations

import sqlite3

from memlab.levels import Level
from memlab.search.analyzers import Analyzer
from memlab.storage.fts_tables import create_fts_table
from memlab.storage.indexes import ALL_LEVELS
from memlab.viewrules import ViewRules

__all__ = ["Agents"]


class Agents:
    """An agent's id and mask of indexed levels (``indexes.level_bit``), read once and kept while the file is as
    the connection left it (``forget`` drops them).

    Args:
        conn: the store's connection.
        rules: what the views follow (whether an agent's indexes may be started lazily, whether it has a global one).
        analyzer: the analyzer of the indexes a new agent is given.
    """

    def __init__(self, conn: sqlite3.Connection, rules: ViewRules, analyzer: Analyzer) -> None:
        self._conn = conn
        self._rules = rules
        self._analyzer = analyzer
        self._ids: dict[str, int] = {}  # an agent's id never changes once given
        self._indexed: dict[int, int] = {}  # agent id -> its mask of indexed levels

    def forget(self) -> None:
        """Drop what was read from the file (the storage found it changed, or a transaction rolled back)."""
        self._indexed.clear()
        self._ids.clear()

    def id_of(self, agent: str) -> int | None:
        """The agent's id; cheaper than ``get`` when the indexed levels do not matter.

        Args:
            agent: the agent's name.

        Returns:
            Its id, or None if it never saved.
        """
        if agent not in self._ids:
            row = self._conn.execute("SELECT id FROM agents WHERE name = ?", (agent,)).fetchone()
            if row is None:
                return None
            self._ids[agent] = row[0]
        return self._ids[agent]

    def get(self, agent: str, *, create: bool = False) -> tuple[int | None, int]:
        """The agent's id and mask of indexed levels, in a write transaction (the storage revalidates what is
        kept when one begins).

        Args:
            agent: the agent's name.
            create: make the agent (its row, and the indexes the rules keep from the start) if it never saved.

        Returns:
            Its id (None if it never saved and ``create`` is False) and its mask of indexed levels.
        """
        agent_id = self._ids.get(agent)
        if agent_id is not None and agent_id in self._indexed:
            return agent_id, self._indexed[agent_id]
        row = self._conn.execute("SELECT id, indexed_levels FROM agents WHERE name = ?", (agent,)).fetchone()
        if row is not None:
            self._ids[agent], self._indexed[row[0]] = row
        if row is not None or not create:
            return (None, 0) if row is None else row
        # Indexes can be started lazily only when visibility follows the lattice (IndexUpkeep.start_index).
        lazy = self._rules.lattice_visibility
        agent_id = self._conn.execute(
            "INSERT INTO agents (name, indexed_levels) VALUES (?, ?)", (agent, 0 if lazy else ALL_LEVELS)
        ).lastrowid
        for taint in [*([] if lazy else Level), *([None] if self._rules.global_statistics else [])]:
            create_fts_table(self._conn, agent_id, self._analyzer, taint)
        self._ids[agent], self._indexed[agent_id] = agent_id, 0 if lazy else ALL_LEVELS
        return agent_id, self._indexed[agent_id]

    def set_indexed(self, agent_id: int, indexed: int) -> int:
        """Record the agent's mask of indexed levels, in the caller's write transaction.

        Args:
            agent_id: the agent.
            indexed: its mask of indexed levels, now.

        Returns:
            ``indexed``.
        """
        self._conn.execute("UPDATE agents SET indexed_levels = ? WHERE id = ?", (indexed, agent_id))
        self._indexed[agent_id] = indexed
        return indexed
