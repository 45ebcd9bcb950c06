"""A dense or hybrid search of an empty effective view finds nothing; it is not a failure inside memlab."""

from __future__ import annotations

import pytest

from memlab import Level, Ranking, tools
from tests.backends import WordsEmbedder, open_store

RANKINGS = pytest.mark.parametrize("ranking", [Ranking.dense_only(), Ranking.hybrid()], ids=["dense", "hybrid"])
LAYOUTS = pytest.mark.parametrize("backend", ["memory", "file", "folder"])


@RANKINGS
@LAYOUTS
def test_an_agent_with_no_memories_searches_to_no_hits(backend, ranking):
    with open_store(backend, embedder=WordsEmbedder(), ranking=ranking) as store:
        session = store.session(Level.PUBLIC, "nobody-yet")
        assert tools.call(session, "memory_search", {"query": "alice deadline"}) == {
            "query": "alice deadline",
            "results": [],
        }
        assert store.audit()["outcome"].tolist() == ["ok"]


@RANKINGS
@LAYOUTS
def test_a_view_emptied_by_deletes_searches_to_no_hits(backend, ranking):
    with open_store(backend, embedder=WordsEmbedder(), ranking=ranking) as store:
        session = store.session(Level.INTERNAL)
        session.memory_save("deadline", "alice ships in march")
        assert [hit["key"] for hit in tools.call(session, "memory_search", {"query": "alice"})["results"]] == [
            "deadline"
        ]
        session.memory_delete("deadline")
        assert tools.call(session, "memory_search", {"query": "alice"}) == {"query": "alice", "results": []}
        # The view above holds the same (empty) set; a session there finds nothing either.
        assert tools.call(store.session(Level.RESTRICTED), "memory_search", {"query": "alice"})["results"] == []
        assert set(store.audit()["outcome"]) == {"ok"}
