"""Lexical search of one SQLite file: FTS5's ranking of a session's effective view, the check that what an index
returned is in that view, and the hits shown with their snippets."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from memlab.errors import IntegrityError
from memlab.levels import Level
from memlab.records import Hit
from memlab.search.analyzers import Analyzer
from memlab.search.ranking import Ranking
from memlab.storage.fts_tables import fts_table
from memlab.storage.indexes import _level_bit
from memlab.storage.rows import _MEMORY_COLUMNS, _memory
from memlab.viewrules import ViewRules

_SNIPPET_TOKENS = 16
_TAG_WORDS = "index_tag_words"  # the indexed column of one-word tags (memlab.storage.fts_tables.indexed_columns)


class LexicalSearch:
    """``SqliteStorage``'s FTS5 ranking, second gate and hits (a mixin over these attributes)."""

    conn: sqlite3.Connection
    rules: ViewRules
    analyzer: Analyzer
    ranking: Ranking

    def _check_in_view(self, agent_id: int | None, ranked: list[_Ranked]) -> None:
        """Fail closed when an index returned a version outside the view it must hold: the second gate, after the
        index itself (nothing guards an FTS5 index against a database-level write, so one can be made to read up).

        Raises:
            IntegrityError: naming the index, never the version (its key may be above the session's taint).
        """
        if not ranked:
            return
        # One statement for the whole ranking: 19 us for 10 hits, 92 us for a fused depth of 50 (a statement per
        # hit cost 33 and 160 us at 10k memories).
        held = self.conn.execute(
            "SELECT count(*) FROM json_each(?) r CROSS JOIN effective e ON e.agent_id = ? "
            "AND e.key = r.value ->> 0 AND e.taint = r.value ->> 1 AND e.memory_id = r.value ->> 2",
            (json.dumps([[item.key, item.view, item.memory_id] for item in ranked]), agent_id),
        ).fetchone()[0]
        if held == len(ranked):
            return
        for item in ranked:  # name the index that returned the stray version
            row = self.conn.execute(
                "SELECT memory_id FROM effective WHERE agent_id = ? AND key = ? AND taint = ?",
                (agent_id, item.key, item.view),
            ).fetchone()
            if row is None or row[0] != item.memory_id:
                where = f"the search index {item.table}" if item.table else "the vectors table"
                raise IntegrityError(
                    f"{where} returned a version outside the view it holds: this store has been damaged or "
                    "tampered with (run `memlab verify`)"
                )

    def _lexical(
        self, agent_id: int | None, indexed: int, taint: Level, match: str | None, limit: int
    ) -> list[_Ranked]:
        """FTS5's ranking of the session's view, as the rules say it is searched."""
        used = [level for level in Level if indexed & _level_bit(level) and self.rules.can_read(level, taint)]
        if not used or match is None:
            return []
        if self.rules.global_statistics:
            return self._rank(fts_table(agent_id, None), match, limit, taint, only_effective_at=agent_id)
        if self.rules.shadow_before_match:
            # The index of the highest used level <= taint holds exactly the session's effective view.
            return self._rank(fts_table(agent_id, max(used)), match, limit, max(used))
        # Match first, shadow among the matches: each used level's view is searched and, per key,
        # the hit from the highest level wins, even when a higher version did not match.
        ranked = (self._rank(fts_table(agent_id, level), match, limit, level) for level in reversed(used))
        return sorted(_first_per_key(ranked, lambda item: item.key), key=lambda item: -item.score)[:limit]

    def _rank(
        self, table: str, match: str, limit: int, view: Level, *, only_effective_at: int | None = None
    ) -> list[_Ranked]:
        """The top ``limit`` matches of index ``table``, which holds the effective view at ``view`` (or, with
        ``only_effective_at`` an agent id, every live version, filtered to that agent's view at ``view``)."""
        # Rank by the store's Ranking: bm25(...) with its column weights, minus the tag boost, ties in rowid (save)
        # order. The boost is decided once per search from the index's own statistics (_boosted_terms), then the
        # tagged memories are one subquery: a memory earns it when one of its one-word tags is a boosted word of
        # the query. Only the ids, keys and scores are read here: the rows and snippets of the hits shown are
        # made by _hits (FTS5's snippet() here would be computed for every match).
        ranking = self.ranking
        weights = ranking.weights()
        score = f'bm25("{table}", {", ".join(str(weight) for weight in (*weights, 0.0))})'
        parameters: list[Any] = []
        boosted = self._boosted_terms(table, match) if ranking.tag_boost else []
        if boosted:
            score += f' - ? * (rowid IN (SELECT rowid FROM "{table}" WHERE "{table}" MATCH ?))'
            parameters += [ranking.tag_boost, f"{_TAG_WORDS} : ({' OR '.join(boosted)})"]
        effective = ""
        if only_effective_at is not None:
            effective = "AND rowid IN (SELECT memory_id FROM effective WHERE agent_id = ? AND taint = ?)"
        parameters += [match, *(() if only_effective_at is None else (only_effective_at, int(view)))]
        # The key is read in the same statement (a second SELECT on memories cost one more statement per index
        # searched); the LIMIT inside keeps FTS5's plan as it was, the LEFT JOIN keeps a rowid without a version.
        ranked = self.conn.execute(
            f'SELECT r.rowid, r.score, m.key FROM (SELECT rowid, {score} AS score FROM "{table}" '
            f'WHERE "{table}" MATCH ? {effective} ORDER BY score, rowid LIMIT ?) r '
            "LEFT JOIN memories m ON m.id = r.rowid ORDER BY r.score, r.rowid",
            [*parameters, limit],
        ).fetchall()
        # A rowid without a version can only be a tampered index: its key is None, and _check_in_view refuses it.
        held_at = int(view)
        return [_Ranked(memory_id, key, -score, table, held_at) for memory_id, score, key in ranked]

    def _boosted_terms(self, table: str, match: str) -> list[str]:
        """The query's terms (quoted, as in ``match``) that earn the tag boost in index ``table``: one-word tags
        of a memory there that are in at least half of its rows, where FTS5 floors bm25's idf (a word in over
        half the rows weighs nothing): the name of whose memory it is, which bm25 cannot use and the tag says.
        A tag rarer than that is a topic bm25 already weighs, and boosting it too ranked worse
        (docs/relevance-lab.md). Every statistic is the index's, the one bm25 reads: the session's view."""
        terms = match.split(" OR ")  # match_expression's quoted terms, each safe as an FTS5 phrase
        rows = self.conn.execute(
            f'SELECT j.value, (SELECT count(*) FROM "{table}" WHERE "{table}" MATCH j.value) FROM json_each(?) j '
            f'WHERE EXISTS (SELECT 1 FROM "{table}" WHERE "{table}" MATCH \'{_TAG_WORDS} : \' || j.value)',
            (json.dumps(terms),),
        ).fetchall()
        if not rows:
            return []
        total = _row_count(self.conn, table)
        return [term for term, matched in rows if 2 * matched >= total]

    def _hits(self, ranked: list[_Ranked], match: str | None, query: str) -> list[Hit]:
        """The hits shown: each ranked version's row and a snippet of its content, matched words marked — made
        in Python, or for trigram (whose matching Python cannot mirror) by FTS5's snippet() over the index the
        version was found in."""
        if not ranked:
            return []
        marks = ", ".join("?" * len(ranked))
        found = {
            row[0]: _memory(row[1:])
            for row in self.conn.execute(
                f"SELECT m.id, {_MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({marks})", [r.memory_id for r in ranked]
            )
        }
        snippets: dict[int, str] = {}
        if not self.analyzer.python_snippets and match is not None:
            for table in {r.table for r in ranked if r.table is not None}:
                ids = [r.memory_id for r in ranked if r.table == table]
                snippets |= dict(
                    self.conn.execute(
                        f"SELECT rowid, snippet(\"{table}\", 1, '**', '**', '…', {_SNIPPET_TOKENS}) FROM \"{table}\" "
                        f'WHERE "{table}" MATCH ? AND rowid IN ({", ".join("?" * len(ids))})',
                        [match, *ids],
                    )
                )
        terms, snippet = self.analyzer.snippet_terms(query), self.analyzer.snippet
        return [
            Hit(memory, r.score, snippets.get(r.memory_id) or snippet(memory.content, terms, tokens=_SNIPPET_TOKENS))
            for r, memory in ((r, found[r.memory_id]) for r in ranked)
        ]


def _row_count(conn: sqlite3.Connection, table: str) -> int:
    """How many rows FTS5 index ``table`` holds, as bm25 counts them: the first varint of its averages record
    (row 1 of its ``_data`` table), read in one look-up where ``count(*)`` would scan the index."""
    row = conn.execute(f'SELECT block FROM "{table}_data" WHERE id = 1').fetchone()
    total = 0
    for byte in row[0] if row is not None else b"":
        total = (total << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return total


class _Ranked(NamedTuple):
    """A version in a ranking, before its row is read: its id, key and score, the FTS5 index that found it, and
    the taint whose effective view must hold it."""

    memory_id: int
    key: str
    score: float
    table: str | None
    view: int


def _first_per_key(groups: Iterable[list[Any]], key: Callable[[Any], str]) -> list[Any]:
    """Items from several groups, in order of precedence, keeping each key's first occurrence."""
    seen: dict[str, Any] = {}
    for group in groups:
        for item in group:
            seen.setdefault(key(item), item)
    return list(seen.values())
