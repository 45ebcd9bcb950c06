"""Lexical search of one SQLite file: FTS5's ranking of a session's effective view, the check that what an index
returned is in that view, and the hits shown with their snippets."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, NamedTuple

from memlab.errors import IntegrityError
from memlab.labels import Integrity, Label
from memlab.levels import Level
from memlab.records import Hit
from memlab.search.analyzers import Analyzer, SnippetTerms
from memlab.search.ranking import Ranking
from memlab.storage.fts_tables import fts_table
from memlab.storage.indexes import IndexUpkeep, level_bit
from memlab.storage.label_codes import view_key, view_table
from memlab.storage.rows import MEMORY_COLUMNS, memory_of
from memlab.storage.view_changes import ViewChanges
from memlab.viewrules import ViewRules

_SNIPPET_TOKENS = 16
_BOOSTS_KEPT = 4096  # boost decisions kept between view changes: the words of a few thousand searches
_TAG_WORDS = "index_tag_words"  # the indexed column of one-word tags (memlab.storage.fts_tables.indexed_columns)


class LexicalSearch:
    """FTS5's ranking of a session's effective view in one SQLite file, the second gate on what it returns, and the
    hits shown; with the tag boost's decisions, kept while no view changes.

    Args:
        conn: the store's connection.
        rules: what the views follow (which indexes a search at a taint ranks).
        analyzer: the indexes' analyzer (snippets, and whether FTS5 makes them).
        indexes: the views' upkeep (a categorised label's view is made on its first search).
        changes: the connection's count of view changes, under which the boost's decisions are kept.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        rules: ViewRules,
        analyzer: Analyzer,
        indexes: IndexUpkeep,
        changes: ViewChanges,
    ) -> None:
        self._conn = conn
        self._rules = rules
        self._analyzer = analyzer
        self._upkeep = indexes
        self._changes = changes
        self._boosted: dict[tuple[str, str], bool] = {}
        """(index, quoted term) -> whether the term earns the tag boost there, as of ``_boosted_at``."""
        self._boosted_at = 0

    def forget(self) -> None:
        """Drop the boost's decisions (the storage found the file changed, or a transaction rolled back)."""
        self._boosted.clear()

    def check_in_view(self, agent_id: int | None, ranked: list[Ranked]) -> None:
        """Fail closed when an index returned a version outside the view it must hold: the second gate, after the
        index itself (nothing guards an FTS5 index against a database-level write, so one can be made to read up).
        A lexical ranking has checked its versions in its own statement (``Ranked.held``); the others (dense
        search's) are checked here, in one statement.

        Args:
            agent_id: the agent searched.
            ranked: what the search would show.

        Raises:
            IntegrityError: naming the index, never the version (its key may be above the session's taint).
        """
        unchecked = [item for item in ranked if item.held is None]
        if all(item.held is not False for item in ranked) and self._held(agent_id, unchecked) == len(unchecked):
            return
        for item in ranked:  # name the index that returned the stray version
            if item.held is False or (item.held is None and not self._held(agent_id, [item])):
                where = f"the search index {item.table}" if item.table else "the vectors table"
                raise IntegrityError(
                    f"{where} returned a version outside the view it holds: this store has been damaged or "
                    "tampered with (run `memlab verify`)"
                )

    def _held(self, agent_id: int | None, ranked: list[Ranked]) -> int:
        """How many of ``ranked`` the effective view at their ``view`` holds (by key, taint and version id)."""
        if not ranked:
            return 0
        # One statement for the whole ranking: 19 us for 10 hits, 92 us for a fused depth of 50 (a statement per
        # hit cost 33 and 160 us at 10k memories).
        return self._conn.execute(
            "SELECT count(*) FROM json_each(?) r CROSS JOIN effective e ON e.agent_id = ? "
            "AND e.key = r.value ->> 0 AND e.taint = r.value ->> 1 AND e.memory_id = r.value ->> 2",
            (json.dumps([[item.key, item.view, item.memory_id] for item in ranked]), agent_id),
        ).fetchone()[0]

    def ranked(
        self, agent_id: int | None, indexed: int, taint: Label, match: str | None, limit: int, ranking: Ranking
    ) -> list[Ranked]:
        """FTS5's ranking of the session's view at ``taint``, as the rules say it is searched: from the indexes
        ``_indexes`` picks, and when it picks several (match first, shadow among the matches) per key the hit from
        the first index that found one.

        Args:
            agent_id: the agent (None: one that never saved).
            indexed: its mask of indexed levels.
            taint: the session's taint, a level or a categorised label.
            match: the query as an FTS5 MATCH expression (``Analyzer.match_expression``); None matches nothing.
            limit: how many to rank.
            ranking: how matches are ordered (column weights, tag boost).

        Returns:
            The ranked versions, best first, each with its row and whether the view holds it.
        """
        indexes = [] if match is None else self._indexes(agent_id, indexed, taint)
        ranked = [
            self._rank(agent_id, index.table, match, limit, index.view, ranking, only_effective=index.filtered)
            for index in indexes
        ]
        if len(ranked) < 2:
            return ranked[0] if ranked else []
        return sorted(first_per_key(ranked, lambda item: item.key), key=lambda item: -item.score)[:limit]

    def _indexes(self, agent_id: int | None, indexed: int, taint: Label) -> list[_Index]:
        """The FTS5 indexes a search at ``taint`` ranks, in order of precedence, each with the stored form of the
        view whose versions it may return (``label_codes``): the one place a search chooses its index."""
        view = view_key(taint)
        if type(view) is not int:
            # A view that is not a level's (a categorised label's, or one whose floor is trusted) has its own index,
            # made on its first use (IndexUpkeep.label_view), which holds exactly that view, ranked by its own
            # statistics. The rules that search other indexes (global statistics, match first) refuse such views
            # (MemoryStore.check_label): a categorised version is in no level's index.
            if agent_id is None:
                return []
            if self._rules.shared_ranking and not taint.categories:
                return self._shared(agent_id, indexed, taint)
            return [_Index(view_table(agent_id, taint), self._upkeep.label_view(agent_id, taint))]
        taint = Level(view)
        used = [level for level in Level if indexed & level_bit(level) and self._rules.can_read(level, taint)]
        if not used:
            return []
        if self._rules.global_statistics:
            return [_Index(fts_table(agent_id, None), int(taint), filtered=True)]
        if self._rules.shadow_before_match:
            # The index of the highest used level <= taint holds exactly the session's effective view.
            return [_Index(fts_table(agent_id, max(used)), int(max(used)))]
        # Match first, shadow among the matches: each used level's view is searched and, per key, the hit from the
        # highest level wins, even when a higher version did not match.
        return [_Index(fts_table(agent_id, level), int(level)) for level in reversed(used)]

    def _shared(self, agent_id: int, indexed: int, taint: Label) -> list[_Index]:
        """The ``shared-ranking`` variant's index for a reader whose floor is trusted: its level's index, which
        holds every grade's versions, filtered to the reader's own view (bm25's statistics count the rest)."""
        level = taint.level
        used = [other for other in Level if indexed & level_bit(other) and self._rules.can_read(other, level)]
        view = self._upkeep.label_view(agent_id, taint)
        return [_Index(fts_table(agent_id, max(used)), view, filtered=True)] if used else []

    def _rank(
        self,
        agent_id: int | None,
        table: str,
        match: str,
        limit: int,
        view: int | str,
        ranking: Ranking,
        *,
        only_effective: bool = False,
    ) -> list[Ranked]:
        """The top ``limit`` matches of index ``table``, which holds ``agent_id``'s effective view at ``view`` (its
        stored form: a level's integer or a categorised label's text, ``label_codes``) (or, ``only_effective``,
        every live version, filtered to that view), each with its row and whether the view holds it (the second
        gate, in the same statement)."""
        # Rank by the store's Ranking: bm25(...) with its column weights, minus the tag boost, ties in rowid (save)
        # order. The boost is decided from the index's own statistics (_boosted_terms), then the
        # tagged memories are one subquery: a memory earns it when one of its one-word tags is a boosted word of
        # the query. The snippets of the hits shown are made by hits (FTS5's snippet() here would be computed for
        # every match).
        weights = ranking.weights()
        score = f'bm25("{table}", {", ".join(str(weight) for weight in (*weights, 0.0))})'
        parameters: list[Any] = []
        boosted = self._boosted_terms(table, match) if ranking.tag_boost else []
        if boosted:
            score += f' - ? * (rowid IN (SELECT rowid FROM "{table}" WHERE "{table}" MATCH ?))'
            parameters += [ranking.tag_boost, f"{_TAG_WORDS} : ({' OR '.join(boosted)})"]
        effective = ""
        if only_effective:
            effective = "AND rowid IN (SELECT memory_id FROM effective WHERE agent_id = ? AND taint = ?)"
        parameters += [match, *((agent_id, view) if only_effective else ())]
        # The rows are read, and checked against the view, in the ranking's statement (a statement for the rows
        # and one for the gate cost about as much as the ranking itself at 10k memories); the LIMIT inside leaves
        # FTS5 its own top-k plan, the LEFT JOINs keep a rowid without a version, or outside the view, to be refused.
        # The joined rows are put back in the ranking's order here: an ORDER BY outside cost a sorter, 15% of it.
        ranked = sorted(
            self._conn.execute(
                f"SELECT r.rowid, r.score, e.memory_id, {MEMORY_COLUMNS} FROM (SELECT rowid, {score} AS score "
                f'FROM "{table}" WHERE "{table}" MATCH ? {effective} ORDER BY score, rowid LIMIT ?) r '
                "LEFT JOIN memories m ON m.id = r.rowid LEFT JOIN effective e ON e.agent_id = ? AND e.key = m.key "
                "AND e.taint = ? AND e.memory_id = r.rowid",
                [*parameters, limit, agent_id, view],
            ),
            key=_ranking_order,
        )
        # A rowid without a version, or whose version the view does not hold, can only be a tampered index: it is
        # not held, and check_in_view refuses it.
        return [Ranked(row[0], row[3], -row[1], table, view, row[3:], row[2] is not None) for row in ranked]

    def _boosted_terms(self, table: str, match: str) -> list[str]:
        """The query's terms (quoted, as in ``match``) that earn the tag boost in index ``table``: one-word tags
        of a memory there that are in at least half of its rows, where FTS5 floors bm25's idf (a word in over
        half the rows weighs nothing): the name of whose memory it is, which bm25 cannot use and the tag says.
        A tag rarer than that is a topic bm25 already weighs, and boosting it too ranked worse
        (docs/relevance-lab.md). Every statistic is the index's, the one bm25 reads: the session's view.

        Each decision is kept while no view has changed (``ViewChanges``; the storage drops them all when
        another connection or a write outside its transactions changes the file): a word's statistics cost a
        scan of its rows in the index, a quarter of the ranking's own time at 10k memories.
        """
        if self._boosted_at != self._changes.count or len(self._boosted) > _BOOSTS_KEPT:
            self._boosted.clear()
            self._boosted_at = self._changes.count
        terms = match.split(" OR ")  # match_expression's quoted terms, each safe as an FTS5 phrase
        unknown = [term for term in terms if (table, term) not in self._boosted]
        if unknown:
            self._boosted |= {(table, term): False for term in unknown}
            rows = self._conn.execute(
                f'SELECT j.value, (SELECT count(*) FROM "{table}" WHERE "{table}" MATCH j.value) FROM json_each(?) j '
                f'WHERE EXISTS (SELECT 1 FROM "{table}" WHERE "{table}" MATCH \'{_TAG_WORDS} : \' || j.value)',
                (json.dumps(unknown),),
            ).fetchall()
            if rows:
                total = _row_count(self._conn, table)
                self._boosted |= {(table, term): 2 * matched >= total for term, matched in rows}
        return [term for term in terms if self._boosted[table, term]]

    def demoted(self, ranked: list[Ranked], ranking: Ranking) -> list[Ranked]:
        """``ranked`` reordered by the trust-demoted ranking (``Ranking.untrusted``): each untrusted version's score
        made ``ranking.demoted(score)``, the order otherwise kept among equals. Rows not yet read (dense search's)
        are read here and kept with their versions, for ``hits``."""
        unread = [r.memory_id for r in ranked if r.row is None]
        found = self._rows(unread) if unread else {}
        rescored = []
        for item in ranked:
            row = item.row if item.row is not None else found[item.memory_id]
            untrusted = memory_of(row).integrity is Integrity.UNTRUSTED
            rescored.append(item._replace(score=ranking.demoted(item.score) if untrusted else item.score, row=row))
        return sorted(rescored, key=lambda item: -item.score)

    def _rows(self, ids: list[int]) -> dict[int, tuple[Any, ...]]:
        """The rows (``memories`` columns, as ``memory_of`` reads them) of the versions ``ids``, by id."""
        rows = self._conn.execute(
            f"SELECT m.id, {MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({', '.join('?' * len(ids))})", ids
        )
        return {row[0]: row[1:] for row in rows}

    def hits(self, ranked: list[Ranked], match: str | None, query: str) -> list[Hit]:
        """The hits shown: each ranked version's row (read with its ranking, or here for dense search's) and a
        snippet of its content, matched words marked — made in Python when it is first read, or for trigram (whose
        matching Python cannot mirror) now, by FTS5's snippet() over the index the version was found in.

        Args:
            ranked: the versions to show, in order.
            match: the query's MATCH expression (None when it has none).
            query: the query as asked (its words are marked in the snippets).

        Returns:
            One ``Hit`` each.
        """
        if not ranked:
            return []
        unread = [r.memory_id for r in ranked if r.row is None]
        found = self._rows(unread) if unread else {}
        memories = [memory_of(r.row if r.row is not None else found[r.memory_id]) for r in ranked]
        snippets: dict[int, str] = {}
        if not self._analyzer.python_snippets and match is not None:
            for table in {r.table for r in ranked if r.table is not None}:
                ids = [r.memory_id for r in ranked if r.table == table]
                snippets |= dict(
                    self._conn.execute(
                        f"SELECT rowid, snippet(\"{table}\", 1, '**', '**', '…', {_SNIPPET_TOKENS}) FROM \"{table}\" "
                        f'WHERE "{table}" MATCH ? AND rowid IN ({", ".join("?" * len(ids))})',
                        [match, *ids],
                    )
                )
        # The query's snippet terms too are worked out when a snippet is first read, once for every hit.
        terms = lazy_terms(self._analyzer, query)
        made = partial(make_snippet, self._analyzer)
        return [
            Hit(memory, r.score, snippets.get(r.memory_id) or partial(made, memory.content, terms))
            for r, memory in zip(ranked, memories, strict=True)
        ]


def _ranking_order(row: tuple[Any, ...]) -> tuple[float, int]:
    """A ranked row's place: by score (bm25's, lower is better), ties in rowid (save) order."""
    return row[1], row[0]


def lazy_terms(analyzer: Analyzer, query: str) -> Callable[[], SnippetTerms]:
    """``analyzer.snippet_terms(query)``, worked out on the first call (``functools.cache`` costs more to make)."""
    made: list[SnippetTerms] = []

    def terms() -> SnippetTerms:
        if not made:
            made.append(analyzer.snippet_terms(query))
        return made[0]

    return terms


def make_snippet(analyzer: Analyzer, content: str, terms: Callable[[], SnippetTerms]) -> str:
    """A hit's snippet, when it is first read."""
    return analyzer.snippet(content, terms(), tokens=_SNIPPET_TOKENS)


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


class _Index(NamedTuple):
    """An FTS5 index a search ranks, and the stored form of the view whose versions it may return (a level's
    integer or a categorised label's text); ``filtered`` when it holds more than that view (the global index of
    the ``global-stats`` variant) and its matches are filtered to the view."""

    table: str
    view: int | str
    filtered: bool = False


class Ranked(NamedTuple):
    """A version in a ranking: its id, key and score, the FTS5 index that found it, the taint whose effective view
    must hold it; a lexical ranking's also its row (``memories`` columns, as ``memory_of`` reads them) and whether
    that view holds it."""

    memory_id: int
    key: str
    score: float
    table: str | None
    view: int | str
    row: tuple[Any, ...] | None = None
    held: bool | None = None
    """True or False when the ranking's statement checked it against the view, None when it is still to check."""


def first_per_key(groups: Iterable[list[Any]], key: Callable[[Any], str]) -> list[Any]:
    """Items from several groups, in order of precedence, keeping each key's first occurrence."""
    seen: dict[str, Any] = {}
    for group in groups:
        for item in group:
            seen.setdefault(key(item), item)
    return list(seen.values())
