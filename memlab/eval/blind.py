"""A question where one retriever is blind, and what the hybrid made of it: for notebook 04 and the lab's pages.

``blind_case`` loads one agent of a collection into a store with the packaged dense model (``memlab[dense]``), asks
its judged questions under FTS5 alone (memlab's default), the dense ranking alone and the hybrid, and returns the
first question whose judged memory the ``blind`` ranking leaves out of its top ten while the hybrid finds it,
with where each ranking put that memory and which ranking carried the hybrid's first result
(``memlab.search.fusion.carried``).

Usage (``memlab[dense]`` installed)::

    from memlab.eval import load_collection
    case = blind_case(load_collection("preferences"), "person-00", blind="lexical")
    case.ranks   # {'FTS5': None, 'dense': 2, 'hybrid': 2}: FTS5 never ranks the note the request needs
"""

from __future__ import annotations

from dataclasses import dataclass

from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection
from memlab.eval.runner import cached_embedder
from memlab.search.fusion import carried, contributions
from memlab.search.ranking import Ranking
from memlab.store import MemoryStore

__all__ = ["BlindCase", "blind_case", "RANKINGS"]

RANKINGS = {"FTS5": Ranking(), "dense": Ranking.dense_only(), "hybrid": Ranking.hybrid()}
"""The three rankings compared: memlab's lexical default, MiniLM alone, and their fusion."""
_BLIND = {"lexical": "FTS5", "dense": "dense"}


@dataclass(frozen=True)
class BlindCase:
    """One question, the memory it needs, and what each ranking did with it."""

    question: str
    needed: str
    """The content of the judged memory the hybrid found (its first in the top ten, when several are judged)."""
    ranks: dict[str, int | None]
    """Per ranking (``RANKINGS``' names): the judged memory's rank in its top ten, None when it is not there."""
    tops: dict[str, list[str]]
    """Per ranking: the contents of its first three results."""
    carried: str | None
    """Which ranking carried the hybrid's first result: ``lexical`` or ``dense``."""


def blind_case(collection: Collection, agent: str, *, blind: str, embedder: object = None) -> BlindCase | None:
    """The first judged question of ``agent`` whose memory the ``blind`` ranking (``lexical``: FTS5, or ``dense``)
    misses in its top ten and the hybrid ranks there; None when no question is such.

    ``embedder``: the dense model (None: ``memlab eval``'s, the packaged MiniLM through the embedding cache and the
    bundled LoCoMo's warm vectors, ``memlab.eval.runner.cached_embedder``).

    Raises:
        InvalidArgument: ``blind`` is neither ``lexical`` nor ``dense``, or the agent has no memory in the collection.
    """
    if blind not in _BLIND:
        raise InvalidArgument(f"blind must be 'lexical' or 'dense', not {blind!r}")
    documents = [document for document in collection.documents if document.agent == agent]
    if not documents:
        raise InvalidArgument(f"the collection {collection.name!r} has no memory of agent {agent!r}")
    texts = {document.key: document.text for document in documents}
    ids = {document.key: document.id for document in documents}
    with MemoryStore(embedder=embedder if embedder is not None else cached_embedder("minilm")) as store:
        session = store.session(agent=agent)
        session.memory_save_many([document.record() for document in documents])
        for query in collection.queries:
            judged = collection.qrels.get(query.id, {})
            if query.agent != agent or not judged:
                continue
            hits = {}
            for name, ranking in RANKINGS.items():
                store.ranking = ranking
                hits[name] = session.memory_search(query.text, max_results=100)
            ranks = {name: _rank(found, ids, judged) for name, found in hits.items()}
            if ranks[_BLIND[blind]] is not None or ranks["hybrid"] is None:
                continue
            inputs = [[(hit.memory.key, hit.score) for hit in hits[name]] for name in ("FTS5", "dense")]
            fused = contributions(*inputs, RANKINGS["hybrid"])
            return BlindCase(
                question=query.text,
                needed=texts[hits["hybrid"][ranks["hybrid"] - 1].memory.key],
                ranks=ranks,
                tops={name: [texts[hit.memory.key] for hit in found[:3]] for name, found in hits.items()},
                carried=carried(fused),
            )
    return None


def _rank(hits: list, ids: dict[str, str], judged: dict[str, int]) -> int | None:
    """The rank (from 1) of the first judged memory among the first ten hits, None when none is there."""
    return next((rank for rank, hit in enumerate(hits[:10], start=1) if ids[hit.memory.key] in judged), None)
