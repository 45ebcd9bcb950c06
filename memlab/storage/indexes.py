"""The effective view and the per-level FTS5 indexes of one SQLite file, kept in step with the live versions.

For every agent and every taint level T, ``effective`` holds the key -> version rows of a session at T, and
the FTS5 index of T (made on the first save at T, see ``IndexUpkeep.start_index``) exactly those versions; a save,
delete or purge writes only the differences. Under compartments the same holds for every categorised label in use
at an agent (``IndexUpkeep.label_view``, registered on its first read there): a version at a categorised label is never
readable at a plain level, so the four plain views are exactly as without compartments.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from memlab.labels import Label
from memlab.levels import Level
from memlab.search.analyzers import Analyzer
from memlab.storage.fts_tables import create_fts_table, fts_table, indexed_columns
from memlab.storage.label_codes import LABEL_VIEWS, as_label, read_view, view_key, view_table
from memlab.storage.live import labelled, live_versions
from memlab.storage.view_changes import ViewChanges
from memlab.viewrules import AMBIGUOUS, ViewRules

__all__ = ["IndexUpkeep", "ALL_LEVELS", "level_bit"]

_BATCHED_INDEX_ROWS = 16


class IndexUpkeep:
    """The effective view and the FTS5 indexes of one SQLite file, brought up to date in the caller's write
    transaction; with what it keeps for the connection's life (refresh plans, index statements) and while the
    file is as the connection left it (each agent's categorised labels' views, dropped by ``forget``).

    Args:
        conn: the store's connection.
        rules: what the views follow.
        analyzer: the indexes' analyzer (which columns they read).
        changes: counted on every view changed or made (the caches derived from views read it).
    """

    def __init__(self, conn: sqlite3.Connection, rules: ViewRules, analyzer: Analyzer, changes: ViewChanges) -> None:
        self._conn = conn
        self._rules = rules
        self._analyzer = analyzer
        self._changes = changes
        self._fts_columns = ", ".join(indexed_columns(analyzer))
        # Pure functions of the rules and their arguments, kept for the connection's life: what a change touches
        # (_refresh_plan) and the statements that index a version (_index_rows).
        self._refresh_plans: dict[tuple[int, int, Label], tuple[list[Level], dict[Level, str], str | None]] = {}
        self._index_statements: dict[tuple[str, bool], tuple[str, str, str]] = {}
        self._label_views_of: dict[int, dict[str, Label]] = {}  # agent id -> its categorised labels' views
        self._has_label_views: bool | None = None  # whether the file has the table listing them

    def forget(self) -> None:
        """Drop what was read from the file (the storage found it changed, or a transaction rolled back)."""
        self._label_views_of.clear()
        self._has_label_views = None

    def label_views(self, agent_id: int) -> dict[str, Label]:
        """The categorised labels whose views ``agent_id`` keeps, read once while the file is as the connection left it.

        Args:
            agent_id: the agent.

        Returns:
            stored form -> label.
        """
        views = self._label_views_of.get(agent_id)
        if views is None:
            if self._has_label_views is None:
                found = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
                self._has_label_views = self._conn.execute(found, (LABEL_VIEWS,)).fetchone() is not None
            views = {}
            if self._has_label_views:
                rows = self._conn.execute(f"SELECT label FROM {LABEL_VIEWS} WHERE agent_id = ?", (agent_id,))
                views = {text: read_view(text) for (text,) in rows}
            self._label_views_of[agent_id] = views
        return views

    def label_view(self, agent_id: int, label: Label) -> str:
        """The stored form of ``label``'s view at ``agent_id``: what a session at ``label`` reads.

        The view and its FTS5 index are made and filled from the live versions on the label's first use at the
        agent, in the caller's write transaction.

        Args:
            agent_id: the agent.
            label: the reader (``label_codes.reader``) of a view that is not a level's: one with categories, or one
                whose floor is trusted.

        Returns:
            The view's stored form (``effective.taint``), ``label_codes.view_key(label)``.
        """
        text = view_key(label)
        views = self.label_views(agent_id)
        if text in views:
            return text
        self._conn.execute(
            f"CREATE TABLE IF NOT EXISTS {LABEL_VIEWS} (agent_id INTEGER NOT NULL REFERENCES agents(id), "
            "label TEXT NOT NULL, PRIMARY KEY (agent_id, label)) WITHOUT ROWID"
        )
        self._has_label_views = True
        self._conn.execute(f"INSERT INTO {LABEL_VIEWS} (agent_id, label) VALUES (?, ?)", (agent_id, text))
        table = create_fts_table(self._conn, agent_id, self._analyzer, label, name=view_table(agent_id, label))
        rows = self._conn.execute(
            "SELECT m.key, m.classification, m.id, MAX(m.version), m.deleted_at FROM memories m "
            "WHERE m.agent_id = ? GROUP BY m.key, m.classification",
            (agent_id,),
        )
        latest = {(key, level): (memory_id, version, deleted) for key, level, memory_id, version, deleted in rows}
        winners = [
            (key, winner)
            for key, live in live_versions(latest).items()
            if (winner := self._rules.winner(labelled(live), label)) is not None
        ]
        self._conn.executemany(
            "INSERT INTO effective (agent_id, key, taint, memory_id) VALUES (?, ?, ?, ?)",
            [(agent_id, key, text, winner) for key, winner in winners],
        )
        self._index_rows(table, sorted(winner for _, winner in winners if winner != AMBIGUOUS), remove=False)
        views[text] = label
        self._changes.count += 1
        return text

    def _fts_columns_of(self, alias: str) -> str:
        return ", ".join(f"{alias}.{column}" for column in self._fts_columns.split(", "))

    def start_index(self, agent_id: int, level: Level) -> None:
        """Create and fill the FTS5 index of ``level``, on the first save at that level.

        Until then a session at ``level`` searches the index of the highest indexed level below, which
        holds the same effective view; keeping only used levels saves index writes on every save and
        keeps an agent's schema small. The agent's indexed levels are the caller's to record
        (``Agents.set_indexed``).
        """
        table = create_fts_table(self._conn, agent_id, self._analyzer, level)
        self._conn.execute(
            f'INSERT INTO "{table}" (rowid, {self._fts_columns}) SELECT m.id, {self._fts_columns_of("m")} '
            "FROM effective e JOIN memories m ON m.id = e.memory_id WHERE e.agent_id = ? AND e.taint = ?",
            (agent_id, int(level)),
        )

    def refresh(
        self,
        agent_id: int,
        keys: list[str],
        before: dict[str, dict[Level | Label, int]],
        after: dict[str, dict[Level | Label, int]],
        indexed: int,
        *,
        changed: Label,
        texts: Mapping[int, tuple[str | None, ...]] | None = None,
    ) -> None:
        """Bring the effective view and the FTS indexes from ``before`` to ``after`` for ``keys``.

        The effective view is a function of each key's live versions, so only the differences are written.

        Args:
            agent_id: the agent.
            keys: the keys the change touched.
            before: each key's live version ids per level or label before the change (``live.live_versions``).
            after: the same, after it.
            indexed: the agent's mask of indexed levels.
            changed: the classification the change was made at (which views it may touch).
            texts: what the indexes read of versions this transaction just wrote (``VersionWriter.insert``), by id:
                those are indexed from it rather than read back from ``memories``.
        """
        self._changes.count += 1  # what was derived from the views (boosts, vectors) is stale from here on
        upserts, removals = [], []
        reindex: dict[str, tuple[list[int], list[int]]] = {}
        rules = self._rules
        changed = as_label(changed)
        taints, tables, everything = self._refresh_plan(agent_id, indexed, changed)
        labels = self.label_views(agent_id)  # every categorised label's view the agent keeps
        if labels and rules.lattice_visibility and rules.shadowing != "newest-overall" and rules.trust_first:
            # A version a view cannot read changes nothing it may pick from (viewrules.maximal): only the views
            # ``changed`` flows to are touched, so a save in one compartment costs nothing in the others.
            labels = {text: label for text, label in labels.items() if rules.can_read(changed, label)}
        for key in keys:
            old, new = before.get(key), after.get(key)
            # A key's winners at every taint, each computed once (a bulk save's new keys have none before).
            previous_winners = rules.winners(old) if old else _NO_WINNERS
            winners = rules.winners(new) if new else _NO_WINNERS
            if winners != previous_winners:
                for taint in taints:
                    previous_winner, winner = previous_winners[taint], winners[taint]
                    if winner == previous_winner:
                        continue
                    if winner is None:
                        removals.append((agent_id, key, int(taint)))
                    else:
                        upserts.append((agent_id, key, int(taint), winner))
                    if taint in tables:
                        _note_reindex(reindex, tables[taint], previous_winner, winner)
            if everything is not None:
                # Every live version without categories, trusted or not: the global-stats variant's one index.
                old, new = old or {}, new or {}
                for label in {label for label in (*old, *new) if not as_label(label).categories}:
                    _note_reindex(reindex, everything, old.get(label), new.get(label))
            if labels:
                old_labelled, new_labelled = labelled(old or {}), labelled(new or {})
                for text, label in labels.items():
                    previous_winner = rules.winner(old_labelled, label)
                    winner = rules.winner(new_labelled, label)
                    if winner == previous_winner:
                        continue
                    if winner is None:
                        removals.append((agent_id, key, text))
                    else:
                        upserts.append((agent_id, key, text, winner))
                    _note_reindex(
                        reindex, view_table(agent_id, label), _indexed_id(previous_winner), _indexed_id(winner)
                    )
        if removals:
            self._conn.executemany("DELETE FROM effective WHERE agent_id = ? AND key = ? AND taint = ?", removals)
        if upserts:
            self._conn.executemany(
                "INSERT OR REPLACE INTO effective (agent_id, key, taint, memory_id) VALUES (?, ?, ?, ?)", upserts
            )
        for table, (gone, added) in reindex.items():
            self._index_rows(table, gone, remove=True)
            self._index_rows(table, added, remove=False, texts=texts)

    def _refresh_plan(
        self, agent_id: int, indexed: int, changed: Label
    ) -> tuple[list[Level], dict[Level, str], str | None]:
        """What a change at ``changed`` touches at ``agent_id`` with the levels ``indexed``: the plain taints whose
        views it may change, the FTS5 index of each of them that is kept, and the index over every level (the
        ``global-stats`` variant's, else None). A function of its arguments and the rules alone, so it is worked out
        once per connection (every save asks)."""
        plan = self._refresh_plans.get((agent_id, indexed, changed))
        if plan is None:
            rules = self._rules
            # A categorised version is in no plain view.
            plain = not changed.categories
            taints = [taint for taint in Level if plain and (taint >= changed.level or not rules.lattice_visibility)]
            tables = {taint: fts_table(agent_id, taint) for taint in taints if indexed & level_bit(taint)}
            everything = fts_table(agent_id, None) if rules.global_statistics else None
            plan = self._refresh_plans[agent_id, indexed, changed] = (taints, tables, everything)
        return plan

    def _index_rows(
        self, table: str, ids: list[int], *, remove: bool, texts: Mapping[int, tuple[str | None, ...]] | None = None
    ) -> None:
        """Add the versions ``ids`` to the FTS5 index ``table``, or remove them (their text says which terms).

        Versions whose text is in ``texts`` (just written, ``refresh``) are added from it, a row each: reading them
        back from ``memories`` cost a bulk save ~2.5 µs a version more. Otherwise a batch goes in one statement over
        ``json_each`` (per-row statements cost ~2x on a bulk import); a few rows go one statement each, which costs
        less than building the list (~75 vs ~115 µs a row).
        """
        if not ids:
            return
        statements = self._index_statements.get((table, remove))
        if statements is None:
            command = f'"{table}", rowid, {self._fts_columns}' if remove else f"rowid, {self._fts_columns}"
            values = f"'delete', id, {self._fts_columns}" if remove else f"id, {self._fts_columns}"
            select = f'INSERT INTO "{table}" ({command}) SELECT {values} FROM memories'
            batched = f"{select} WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id"
            given = f'INSERT INTO "{table}" ({command}) VALUES ({", ".join("?" * (command.count(",") + 1))})'
            statements = (f"{select} WHERE id = ?", batched, given)
            self._index_statements[table, remove] = statements
        if not remove and texts is not None and all(memory_id in texts for memory_id in ids):
            self._conn.executemany(statements[2], [(memory_id, *texts[memory_id]) for memory_id in sorted(ids)])
        elif len(ids) < _BATCHED_INDEX_ROWS:
            self._conn.executemany(statements[0], [(memory_id,) for memory_id in ids])
        else:
            self._conn.execute(statements[1], (json.dumps(ids),))


_NO_WINNERS = (None,) * len(Level)
ALL_LEVELS = sum(1 << int(level) for level in Level)


def _indexed_id(winner: int | None) -> int | None:
    """The version a view's index holds for a key: none for an ambiguity marker."""
    return None if winner == AMBIGUOUS else winner


def _note_reindex(
    reindex: dict[str, tuple[list[int], list[int]]], table: str, before: int | None, after: int | None
) -> None:
    """Note that ``table`` must drop ``before`` and add ``after`` (either may be None, both may be equal)."""
    if before == after:
        return
    gone, added = reindex.setdefault(table, ([], []))
    if before is not None:
        gone.append(before)
    if after is not None:
        added.append(after)


def level_bit(level: Level) -> int:
    """The bit of ``level`` in an agent's mask of indexed levels (``agents.indexed_levels``)."""
    return 1 << int(level)
