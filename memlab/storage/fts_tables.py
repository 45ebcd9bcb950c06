"""The FTS5 indexes of a SQLite store: their names, the columns they read, and their creation."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from memlab.levels import Level
from memlab.search.analyzers import Analyzer

__all__ = ["fts_table", "indexed_columns", "tag_words", "create_fts_table"]


def fts_table(agent_id: int, taint: Level | None) -> str:
    """The name of the FTS5 index holding the effective view of ``agent_id`` at ``taint``.

    ``taint=None`` names the index over every current version at every level, which only the
    ``global-stats`` policy variant keeps.
    """
    return f"fts_{agent_id}_{'all' if taint is None else taint.name.lower()}"


def indexed_columns(analyzer: Analyzer) -> tuple[str, ...]:
    """The ``memories`` columns an analyzer's FTS5 indexes read: key, content, tags, source and when (or their
    stems), in the order of ``ranking.COLUMNS``, then the one-word tags the tag boost looks in."""
    if analyzer.prestemmed:
        return ("index_key", "index_content", "index_tags", "index_source", "index_when", "index_tag_words")
    return ("key", "content", "tags", "source", "index_when", "index_tag_words")


def tag_words(analyzer: Analyzer, tags: Sequence[str]) -> str | None:
    """The tags that are one word each (as ``analyzer.words`` splits), lower-cased and space-separated, stemmed
    if the analyzer pre-stems: what the tag boost matches a query's words against; None when there are none.

    Examples:
        >>> from memlab.search.analyzers import get
        >>> tag_words(get("porter"), ["Caroline", "session-1", "work"])
        'caroline work'
    """
    words = [tag.lower() for tag in tags if analyzer.words(tag) == [tag.lower()]]
    if not words:
        return None
    return analyzer.index_text(" ".join(words)) if analyzer.prestemmed else " ".join(words)


def create_fts_table(
    db: sqlite3.Connection, agent_id: int, analyzer: Analyzer, taint: object, *, name: str | None = None
) -> str:
    """Create the external-content FTS5 index of ``agent_id`` at ``taint``, ranked by bm25.

    Memory rows never change their indexed columns (a save adds a version), so ``memories`` can serve
    as the content table: the index holds only terms and statistics. Indexes are created on first use,
    so an agent's file holds only the levels it uses. ``name``: the index of a categorised label's view
    (``label_codes.view_table``).
    """
    table = name or fts_table(agent_id, taint)
    tokenize_sql = "'" + analyzer.tokenize.replace("'", "''") + "'"
    columns = ", ".join(indexed_columns(analyzer))
    db.execute(
        f'CREATE VIRTUAL TABLE IF NOT EXISTS "{table}" USING fts5('
        f"{columns}, content='memories', content_rowid='id', tokenize={tokenize_sql})"
    )
    return table
