"""New versions written to one SQLite file: their ids and numbers, the text their indexes read, their seals and
vectors."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memlab.labels import Label
from memlab.records import Memory, NewVersion
from memlab.search.analyzers import Analyzer
from memlab.search.ranking import when_words
from memlab.storage.chain import json_strings
from memlab.storage.fts_tables import indexed_columns, tag_words
from memlab.storage.label_codes import stored
from memlab.storage.live import Latest
from memlab.storage.seal import seal_many

if TYPE_CHECKING:
    import numpy as np

    from memlab.search.dense import Embedder

__all__ = ["VersionWriter"]

_TAG_WORDS_KEPT = 4_096
_UNKNOWN = object()
_VERSION_COLUMNS = (
    "id, agent_id, key, content, tags, classification, version, saved_at, saved_by, source, occurred_at, index_key, "
    "index_content, index_tags, index_source, index_when, index_tag_words, salt, commitment, distrust"
).split(", ")
_INSERT_VERSION = f"INSERT INTO memories ({', '.join(_VERSION_COLUMNS)}) VALUES ({', '.join('?' * 20)})"


class VersionWriter:
    """Writes new versions' rows; with the id the next one gets, kept while the file is as the connection left it
    (``forget`` drops it), and each distinct list of tags' one-word tags.

    Args:
        conn: the store's connection.
        analyzer: the indexes' analyzer (whether the text is stemmed before it is stored).
        embedder: the model whose vectors are stored with the versions (its name); None when there is none.
        index_tag_words: store the one-word tags the tag boost looks in.
    """

    def __init__(
        self, conn: sqlite3.Connection, analyzer: Analyzer, embedder: Embedder | None, *, index_tag_words: bool
    ) -> None:
        self._conn = conn
        self._analyzer = analyzer
        self._embedder = embedder
        self._index_tag_words = index_tag_words
        # The id the next saved version gets, known after this connection's last save (None: read it). Ids only
        # grow (a version is never deleted), and once a storage has saved, this is the one writer of memories in
        # its transactions (a migration fills a new file); any other change makes the storage call forget.
        self._next_id: int | None = None
        self._tag_words_of: dict[tuple[str, ...], str | None] = {}  # tags -> their one-word tags (_tag_words)
        # Where a row holds what the FTS5 indexes read (fts_tables.indexed_columns, in their order).
        self._indexed = [_VERSION_COLUMNS.index(column) for column in indexed_columns(analyzer)]

    def forget(self) -> None:
        """Drop the next id (the storage found the file changed, or a transaction rolled back)."""
        self._next_id = None

    def insert(
        self,
        agent: str,
        agent_id: int,
        label: Label,
        versions: Sequence[NewVersion],
        latest: Latest,
        *,
        saved_by: str,
        vectors: list[np.ndarray] | None,
        distrust: tuple[str, ...] = (),
    ) -> tuple[list[Memory], list[str], dict[int, tuple[str | None, ...]]]:
        """Insert the rows of new versions at ``label``, in the caller's write transaction, each numbered after the
        newest of its key there, as saving them one by one would.

        Args:
            agent: the agent's name (sealed into each version's digest).
            agent_id: its id.
            label: the versions' classification.
            versions: what is saved, in order.
            latest: the newest version of each key at each label (``live.latest``); the new ones are entered.
            saved_by: the saving session's id.
            vectors: each version's vectors (a row each; none or several from a ``FieldEmbedder``), or None.
            distrust: the sources that lowered the saving session (``Memory.distrust``); empty when trusted.

        Returns:
            The versions saved, each one's digest for its audit row, and by id what the FTS5 indexes read of each
            (``fts_tables.indexed_columns``, the values just stored: ``IndexUpkeep.refresh``'s ``texts``).
        """
        next_id = self._next_id
        if next_id is None:
            next_id = self._conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM memories").fetchone()[0]
        level = stored(label)
        analyzer = self._analyzer
        saved, stems = [], []
        for memory_id, new in enumerate(versions, start=next_id):
            previous = latest.get((new.key, level))
            memory = Memory(
                new.key,
                new.content,
                new.tags,
                label,
                1 if previous is None else previous[1] + 1,
                new.saved_at,
                saved_by,
                new.source,
                new.occurred_at,
                distrust,
            )
            latest[new.key, level] = (memory_id, memory.version, None)
            saved.append(memory)
            when = when_words(new.occurred_at)
            if analyzer.prestemmed:
                texts = (new.key, new.content, " ".join(new.tags), new.source, when)
                stems_of = tuple(None if text is None else analyzer.index_text(text) for text in texts)
            else:
                stems_of = (None, None, None, None, when)
            stems.append((*stems_of, self._tag_words(new.tags) if self._index_tag_words else None))
        sources = json_strings(distrust) if distrust else None
        seals = seal_many(agent, versions, level, [memory.version for memory in saved], saved_by, sources)
        rows = [
            (memory_id, agent_id, new.key, new.content, sealed.tags, level, memory.version, new.saved_at)
            + (saved_by, new.source, new.occurred_at, *stems_of, sealed.salt, sealed.commitment, sources)
            for memory_id, new, memory, stems_of, sealed in zip(
                range(next_id, next_id + len(versions)), versions, saved, stems, seals, strict=True
            )
        ]
        self._conn.executemany(_INSERT_VERSION, rows)
        self._next_id = next_id + len(rows)
        if vectors is not None:
            self._conn.executemany(
                "INSERT INTO vectors (memory_id, model, vector) VALUES (?, ?, ?)",
                [(row[0], self._embedder.name, vector.tobytes()) for row, vector in zip(rows, vectors, strict=True)],
            )
        indexed = self._indexed
        texts = {row[0]: tuple([row[at] for at in indexed]) for row in rows}
        return saved, [sealed.digest for sealed in seals], texts

    def _tag_words(self, tags: tuple[str, ...]) -> str | None:
        """``fts_tables.tag_words`` of ``tags`` under this store's analyzer, each distinct list worked out once (the
        same few lists come on save after save; a bounded cache, emptied when full)."""
        if type(tags) is not tuple:
            return tag_words(self._analyzer, tags)
        words = self._tag_words_of.get(tags, _UNKNOWN)
        if words is _UNKNOWN:
            if len(self._tag_words_of) >= _TAG_WORDS_KEPT:
                self._tag_words_of.clear()
            words = self._tag_words_of[tags] = tag_words(self._analyzer, tags)
        return words
