"""memlab.eval.blind: the question where one retriever is blind, as notebook 04 shows it."""

from __future__ import annotations

import pytest

from memlab.errors import InvalidArgument
from memlab.eval import load_collection
from memlab.eval.blind import blind_case
from memlab.eval.runner import cached_embedder
from memlab.search.analyzers import get


@pytest.fixture(scope="module")
def embedder():
    return cached_embedder("minilm", cache=False)


def test_where_fts5_is_blind_the_hybrid_finds_what_the_dense_ranking_finds(embedder):
    # The preferences collection: the request shares no content word with the note it needs.
    case = blind_case(load_collection("preferences"), "aiko", blind="lexical", embedder=embedder)
    assert case.ranks["FTS5"] is None and case.ranks["dense"] is not None and case.ranks["hybrid"] is not None
    porter = get("porter")
    assert not set(porter.query_terms(case.question)) & set(porter.terms(case.needed))
    assert case.carried == "dense"
    assert all(len(top) == 3 for top in case.tops.values())


def test_where_the_dense_ranking_is_blind_fts5_carries_the_hybrid(embedder):
    case = blind_case(load_collection("locomo"), "conv-26", blind="dense", embedder=embedder)
    assert case.ranks["dense"] is None and case.ranks["FTS5"] is not None and case.ranks["hybrid"] is not None
    assert case.carried == "lexical"
    assert case.needed in case.tops["hybrid"] or case.ranks["hybrid"] > 3


def test_a_bad_choice_is_refused_with_its_name():
    collection = load_collection("preferences")
    with pytest.raises(InvalidArgument, match="blind must be"):
        blind_case(collection, "aiko", blind="both")
    with pytest.raises(InvalidArgument, match="no memory of agent 'nobody'"):
        blind_case(collection, "nobody", blind="lexical")
