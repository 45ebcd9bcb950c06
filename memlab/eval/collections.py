"""The values of the relevance lab's collections: documents to load as memories, queries, relevance judgments.

Two loaders make them: ``memlab.eval.locomo`` (the LoCoMo benchmark bundled at ``data/locomo10.json``) and
``memlab.eval.trec`` (a TREC-style folder of ``docs.jsonl``, ``queries.jsonl`` and ``qrels``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from memlab import arguments
from memlab.errors import InvalidArgument

__all__ = ["CollectionError", "Document", "Query", "Collection", "checked_key"]


class CollectionError(InvalidArgument):
    """A collection's files are missing or malformed."""


@dataclass(frozen=True)
class Document:
    """One memory, saved before the queries run.

    Attributes:
        id: Unique within the collection; qrels name documents by it.
        agent: The memory namespace the document is loaded into.
        key: The memory key (a valid memlab key, unique within the agent).
        text: The memory's content.
        tags: The memory's tags.
        source: The message(s) the memory was taken from, if the collection has them.
        occurred_at: When what it says happened (ISO 8601), if the collection knows.
    """

    id: str
    agent: str
    key: str
    text: str
    tags: tuple[str, ...] = ()
    source: str | None = None
    occurred_at: str | None = None

    def record(self, *, context: bool = True) -> dict[str, Any]:
        """The ``memory_save`` arguments that save this document (with its context, unless ``context=False``)."""
        record: dict[str, Any] = {"key": self.key, "content": self.text, "tags": list(self.tags)}
        if context:
            record |= {
                name: value for name, value in (("source", self.source), ("occurred_at", self.occurred_at)) if value
            }
        return record


@dataclass(frozen=True)
class Query:
    """One search to run.

    Attributes:
        id: Unique within the collection; qrels name queries by it.
        agent: The memory namespace the query is run against.
        text: The query, in natural language.
        category: The kind of question, for per-category results (LoCoMo's "1" to "5"), or None.
    """

    id: str
    agent: str
    text: str
    category: str | None = None


@dataclass
class Collection:
    """Documents, queries and judgments, ready for an evaluation run.

    Attributes:
        name: What the collection is called in results.
        documents: The memories, in file order.
        queries: The queries, in file order; a query may have no relevant document (see the loaders).
        qrels: Query id -> {document id: relevance >= 1}; only queries with a relevant document have an entry.
    """

    name: str
    documents: list[Document]
    queries: list[Query]
    qrels: dict[str, dict[str, int]]

    def summary(self) -> dict[str, Any]:
        """Count what the collection holds.

        Returns:
            ``documents``, ``queries``, ``agents`` (distinct namespaces), ``queries_per_category`` (category ->
            count, uncategorised queries left out), ``judged_queries`` (queries with a relevant document) and
            ``judged_pairs`` (query-document pairs with relevance >= 1).

        Examples:
            >>> from memlab.eval import load_trec
            >>> load_trec("tests/fixtures/trec-tiny").summary()["judged_pairs"]
            6
        """
        categories = Counter(query.category for query in self.queries if query.category is not None)
        return {
            "documents": len(self.documents),
            "queries": len(self.queries),
            "agents": len({item.agent for item in [*self.documents, *self.queries]}),
            "queries_per_category": dict(sorted(categories.items())),
            "judged_queries": len(self.qrels),
            "judged_pairs": sum(len(judged) for judged in self.qrels.values()),
        }


def checked_key(key: str, where: str) -> str:
    """``key`` if it is a valid memory key; else a ``CollectionError`` naming ``where`` (file and line)."""
    try:
        return arguments.key(key)
    except InvalidArgument as error:
        raise CollectionError(f"{where}: document id is not a valid memory key: {error}") from error
