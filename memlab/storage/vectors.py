"""Dense search of one SQLite file: vectors backfilled per agent, an effective view's vectors as one matrix kept
while the view holds, cosine ranking, and its fusion with FTS5's ranking (``memlab.search.fusion``).

A version's vectors are one row of ``vectors`` (memory id, model, vector): its blob holds as many unit float32
vectors as the embedder made of it, one for most (``Embedder.embed``), none or several for a ``FieldEmbedder``
(LangGraph's fields, one per text at each). A version is ranked by its best vector; one with none is not ranked by
meaning (lexical ranking still finds it). The row lives and dies with the version (a purge deletes it), and is read
only through the effective view it belongs to."""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, NamedTuple

from memlab.errors import SchemaError
from memlab.search.dense import query_vectors, stored_vectors
from memlab.search.fusion import contributions
from memlab.search.ranking import Ranking
from memlab.storage.lexical import Ranked
from memlab.storage.view_changes import ViewChanges

if TYPE_CHECKING:
    import numpy as np

    from memlab.search.dense import Embedder

_VECTOR_VIEWS = 4  # effective views' matrices kept per connection (100k vectors of 384 floats: 154 MB)
# How deep each ranking is read when two are fused, whatever the limit: memory_search's cap on max_results
# (memlab.arguments.MAX_RESULTS_CAP), so a search's first ten are the first ten of the same search for 100.
FUSION_DEPTH = 100


class VectorSearch:
    """Dense search of one SQLite file: every version in an agent's views given a vector of the embedder, and an
    effective view's vectors ranked by cosine similarity; with the matrices of the views last searched, each kept
    while nothing changes its view, and the agents already backfilled.

    Args:
        conn: the store's connection.
        embedder: turns text into vectors (None: no dense search; ``Ranking.require_embedder`` says so).
        changes: the connection's count of view changes, under which a view's matrix is kept (a backfill counts).
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        embedder: Embedder | None,
        changes: ViewChanges,
    ) -> None:
        self._conn = conn
        self._embedder = embedder
        self._changes = changes
        self._backfilled: set[int] = set()  # agents whose live versions all have vectors of this embedder
        # The vectors of recently searched views, as matrices: (agent id, taint, model) -> (token, view). A view
        # is valid while the token holds: this connection's count of view changes, and SQLite's data_version
        # (which moves when another connection commits).
        self._vector_views: OrderedDict[tuple[int, int | str, str], tuple[tuple[int, int], _VectorView]] = OrderedDict()

    def query_vector(self, query: str, ranking: Ranking) -> np.ndarray:
        """The vector of ``query``.

        Args:
            query: the query as asked.
            ranking: the ranking that asks for it.

        Returns:
            The embedder's vector of it, embedded as a query (``memlab.search.dense.query_vectors``).

        Raises:
            InvalidArgument: the store has no embedder (``Ranking.require_embedder``).
        """
        ranking.require_embedder(self._embedder)
        return query_vectors(self._embedder, [query])[0]

    def stored(self, contents: list[str]) -> list[np.ndarray] | None:
        """The vectors each of ``contents`` is saved with (``dense.stored_vectors``); None without an embedder."""
        return None if self._embedder is None else stored_vectors(self._embedder, contents)

    def backfill(self, agent_id: int | None, write: Callable[[], AbstractContextManager[None]]) -> None:
        """Give every version in the agent's views a vector of this embedder, once per agent and connection
        (versions saved without an embedder, or under another model, have none).

        Args:
            agent_id: the agent (None: one that never saved, which has nothing to backfill).
            write: the storage's write transaction, entered once the vectors are made (a model is slow, the
                write lock is shared).
        """
        if agent_id is None or agent_id in self._backfilled:
            return
        model = self._embedder.name
        missing = self._conn.execute(
            "SELECT DISTINCT m.id, m.content FROM effective e JOIN memories m ON m.id = e.memory_id "
            "LEFT JOIN vectors v ON v.memory_id = m.id AND v.model = ? WHERE e.agent_id = ? AND v.memory_id IS NULL",
            (model, agent_id),
        ).fetchall()
        if missing:
            vectors = self.stored([content for _, content in missing])
            with write():
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors (memory_id, model, vector) SELECT ?, ?, ? "
                    "WHERE EXISTS (SELECT 1 FROM memories WHERE id = ? AND purged_at IS NULL)",
                    [(i, model, v.tobytes(), i) for (i, _), v in zip(missing, vectors, strict=True)],
                )
                self._changes.count += 1
        self._backfilled.add(agent_id)

    def dense(self, agent_id: int | None, taint: int | str, vector: np.ndarray, limit: int) -> list[Ranked]:
        """The session's effective view ranked by cosine similarity to ``vector``, ties in save order.

        Args:
            agent_id: the agent (None: one that never saved).
            taint: the view's stored form (a level's integer, a categorised label's text: ``label_codes.stored``).
            vector: the query's vector.
            limit: how many to rank.

        Returns:
            The ranked versions, best first, to be checked against the view (``LexicalSearch.check_in_view``).
        """
        import numpy as np  # only dense search needs it: opening a store and lexical calls never load it

        view = self._vector_view(agent_id, taint)
        if not view.ids.size:
            return []
        scores = view.matrix @ vector
        if len(scores) > len(view.ids):  # some version has several vectors: each scores its best
            scores = np.maximum.reduceat(scores, view.starts)
        if scores.size > limit:  # only the candidates for the top ``limit`` (ties at the edge included) are sorted
            edge = np.partition(scores, scores.size - limit)[scores.size - limit]
            chosen = np.flatnonzero(scores >= edge)
        else:
            chosen = np.arange(scores.size)
        order = chosen[np.lexsort((view.ids[chosen], -scores[chosen]))][:limit]
        return [Ranked(int(view.ids[i]), view.keys[i], float(scores[i]), None, taint) for i in order]

    def _vector_view(self, agent_id: int | None, taint: int | str) -> _VectorView:
        """The vectors of the effective view at ``taint`` as one matrix, kept while nothing changes it."""
        import numpy as np

        from memlab.search.dense import matrix

        token = (self._changes.count, self._conn.execute("PRAGMA data_version").fetchone()[0])
        place = (agent_id or 0, taint, self._embedder.name)
        cached = self._vector_views.get(place)
        if cached is not None and cached[0] == token:
            self._vector_views.move_to_end(place)
            return cached[1]
        rows = self._conn.execute(
            "SELECT e.memory_id, e.key, v.vector FROM effective e "
            "JOIN vectors v ON v.memory_id = e.memory_id AND v.model = ? WHERE e.agent_id = ? AND e.taint = ?",
            (self._embedder.name, agent_id, taint),
        ).fetchall()
        width = 4 * self._embedder.dimensions  # bytes of one float32 vector
        if any(len(row[2]) % width for row in rows):
            raise SchemaError(f"a vector row of {self._embedder.name!r} is not whole {width}-byte vectors: edited")
        rows = [row for row in rows if row[2]]  # a version with no vector is not ranked by meaning
        counts = np.array([len(row[2]) // width for row in rows], dtype=np.int64)
        view = _VectorView(
            np.array([row[0] for row in rows], dtype=np.int64),
            [row[1] for row in rows],
            matrix([row[2] for row in rows], self._embedder.dimensions),
            np.cumsum(counts) - counts,
        )
        self._vector_views[place] = (token, view)
        while len(self._vector_views) > _VECTOR_VIEWS:
            self._vector_views.popitem(last=False)
        return view


class _VectorView(NamedTuple):
    """An effective view's vectors: the ids and keys of the versions that have any, their vectors as the rows of one
    matrix, and where each version's rows start (a version's rows are consecutive)."""

    ids: np.ndarray
    keys: list[str]
    matrix: np.ndarray
    starts: np.ndarray


def fuse(lexical: list[Ranked], dense: list[Ranked], ranking: Ranking) -> list[Ranked]:
    """The two rankings fused by memory key, as ``memlab.search.fusion.contributions`` scores them (standardized
    scores by default; reciprocal rank fusion scaled by agreement when ``ranking.fusion_k > 0``); a key shows the
    version FTS5 found when it found one. Both rankings are read ``FUSION_DEPTH`` deep, so the order does not
    depend on how many results are asked."""
    first_found: dict[str, Ranked] = {}
    for item in (*lexical, *dense):
        first_found.setdefault(item.key, item)
    fused = contributions([(i.key, i.score) for i in lexical], [(i.key, i.score) for i in dense], ranking)
    return [first_found[key]._replace(score=sum(parts)) for key, parts in fused.items()]
