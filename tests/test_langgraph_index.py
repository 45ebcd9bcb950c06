"""LangGraph's semantic search over memlab (``memlab.integrations.langgraph_index``, ``MemlabStore(index=...)``): a
query ranks by meaning through the caller's embed function, each text at the fields chosen is embedded on its own and
an item ranks by its best, the vectors are gated like every index (two worlds), and a bad configuration is refused."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp

from memlab import InvalidArgument, MemoryStore
from memlab.integrations.langgraph import MemlabStore
from memlab.integrations.langgraph_index import IndexEmbedder, check_fields
from memlab.search.dense import DenseUnavailable, Embedder, missing
from memlab.search.ranking import Ranking

# A deterministic model of "meaning": each word counts towards its concept's axis, so "kitten" and "feline" are near
# and share no letter of a word FTS5 could match.
CONCEPTS = {
    "cat": 0, "kitten": 0, "feline": 0, "purrs": 0,
    "car": 1, "automobile": 1, "engine": 1, "sedan": 1,
    "rain": 2, "weather": 2, "storm": 2, "umbrella": 2,
    "pasta": 3, "recipe": 3, "cooking": 3, "dinner": 3,
}  # fmt: skip
DIMS = 5  # the last axis holds every other word


def meaning(texts):
    """The fake embed function LangGraph's ``index`` takes: list[str] -> list[list[float]]."""
    rows = []
    for text in texts:
        row = [0.0] * DIMS
        for word in text.lower().replace(",", " ").split():
            row[CONCEPTS.get(word.strip('."{}:'), DIMS - 1)] += 1.0
        rows.append(row)
    return rows


INDEX = {"dims": DIMS, "embed": meaning, "fields": ["text"]}


def cosine_store(index=INDEX, **options):
    """A memlab store whose search is the vectors' cosine alone, as LangGraph's semantic search ranks."""
    return MemoryStore(embedder=IndexEmbedder(index), ranking=Ranking.dense_only(), **options)


def test_a_query_ranks_items_by_meaning_through_the_callers_embed_function():
    graph_store = MemlabStore(None, taint="INTERNAL", index=INDEX)
    graph_store.put(("users", "ann"), "pet", {"text": "a small feline that purrs"})
    graph_store.put(("users", "ann"), "ride", {"text": "my sedan needs a new engine"})
    graph_store.put(("users", "bob"), "plans", {"text": "storm and rain all week"})
    found = graph_store.search(("users",), query="kitten")
    assert [item.key for item in found] == ["pet", "ride", "plans"]  # no word of the query is in any item
    assert found[0].score > found[1].score
    assert [item.key for item in graph_store.search(("users",), query="automobile", limit=1)] == ["ride"]
    assert graph_store.store.audit()["tool"].tolist()[-1] == "memory_search"  # the gated, audited search


def test_the_score_is_the_cosine_similarity_by_default_and_the_fused_score_under_a_hybrid_ranking():
    cosine = MemlabStore(None, taint="PUBLIC", index=INDEX)
    cosine.put(("a",), "pet", {"text": "kitten kitten"})
    (item,) = cosine.search(("a",), query="feline")
    assert item.score == pytest.approx(1.0)  # the same axis: cosine 1
    hybrid = MemlabStore(
        MemoryStore(embedder=IndexEmbedder(INDEX), ranking=Ranking.hybrid()), taint="PUBLIC", index=INDEX
    )
    hybrid.put(("a",), "pet", {"text": "kitten kitten"})
    hybrid.put(("a",), "ride", {"text": "sedan"})
    first, second = hybrid.search(("a",), query="feline")
    # Standardized score fusion (memlab.search.fusion): FTS5 matches nothing, the two cosines (1 and 0) are z +1 and
    # -1, each measured from the lowest (-1) and weighed by the hybrid's dense weight.
    assert (first.key, first.score, second.score) == ("pet", pytest.approx(1.2), pytest.approx(0.0))
    assert Ranking.hybrid().dense == 0.6


def test_only_the_fields_chosen_are_embedded_and_a_put_may_choose_its_own_or_none():
    # Guards: IndexEmbedder embedding the whole JSON (fields ignored), a put's own index ignored, index=False embedded.
    graph_store = MemlabStore(cosine_store(), taint="PUBLIC", index=INDEX)
    graph_store.put(("a",), "text-is-cars", {"text": "sedan engine", "note": "kitten kitten kitten"})
    graph_store.put(("a",), "note-chosen", {"text": "sedan engine", "note": "kitten"}, index=["note"])
    graph_store.put(("a",), "not-embedded", {"text": "kitten"}, index=False)
    found = graph_store.search(("a",), query="cat")
    assert [(item.key, item.score) for item in found] == [
        ("note-chosen", pytest.approx(1.0)),
        ("text-is-cars", pytest.approx(0.0)),  # its note is about cats, but only "text" is embedded
        ("not-embedded", None),  # no vector: no query ranks it; it comes after the ranked, unscored
    ]


def test_an_item_whose_second_field_matches_the_query_is_ranked_by_that_field():
    # Guards: the texts of an item's fields joined into one vector (the kitten diluted by the sedan: 0.32, below the
    # mixed title's 0.82), and an item scored by its mean (0.5) or its first field (0) rather than its best.
    index = {**INDEX, "fields": ["title", "body"]}
    graph_store = MemlabStore(None, taint="PUBLIC", index=index)
    graph_store.put(("users", "ann"), "garage", {"title": "sedan engine sedan", "body": "kitten"})
    graph_store.put(("users", "ann"), "mixed", {"title": "kitten feline sedan", "body": "rain"})
    graph_store.put(("users", "ann"), "dinner", {"title": "pasta recipe", "body": "cooking dinner"})
    found = graph_store.search(("users",), query="cat")
    assert [(item.key, item.score) for item in found] == [
        ("garage", pytest.approx(1.0)),  # its body alone is about cats
        ("mixed", pytest.approx(2 / 5**0.5)),
        ("dinner", pytest.approx(0.0)),
    ]
    assert [item.key for item in graph_store.search(("users",), query="automobile", limit=1)] == ["garage"]


def test_each_element_of_a_list_path_is_a_vector_of_its_own():
    graph_store = MemlabStore(None, taint="PUBLIC", index={**INDEX, "fields": ["children[*].name"]})
    graph_store.put(("a",), "family", {"children": [{"name": "kitten"}, {"name": "sedan"}], "other": "storm"})
    graph_store.put(("a",), "weather", {"children": [{"name": "storm rain"}], "other": "kitten"})
    found = graph_store.search(("a",), query="automobile")
    assert [(item.key, item.score) for item in found] == [("family", pytest.approx(1.0)), ("weather", 0.0)]
    embedder = IndexEmbedder({"dims": DIMS, "embed": meaning, "fields": ["children[*].name", "other"]})
    (rows,) = embedder.embed_fields(['{"children": [{"name": "kitten"}, {"name": "sedan"}], "other": "storm"}'])
    assert rows.dtype == np.float32 and np.allclose(rows, np.eye(DIMS)[:3])  # kitten, sedan, storm: one each


def test_content_another_door_saved_as_text_is_one_text_and_a_value_without_the_fields_has_no_vector():
    embedder = IndexEmbedder(INDEX)
    plain, empty = embedder.embed_fields(["kitten", '{"other": "kitten"}'])
    assert np.allclose(plain, np.eye(DIMS)[:1]) and empty.shape == (0, DIMS)


def test_an_unranked_item_comes_after_every_ranked_one_and_only_where_the_page_has_room():
    # Guards: unranked items sorted as a score of 0 (above a negative cosine), and a page filled past its limit.
    def signed(texts):  # "up" and "down" opposite, any other text orthogonal to both
        return [[{"up": 1.0, "down": -1.0}.get(text, 0.0), float(text not in ("up", "down"))] for text in texts]

    graph_store = MemlabStore(None, taint="PUBLIC", index={"dims": 2, "embed": signed, "fields": ["text"]})
    graph_store.put(("a",), "opposite", {"text": "down"})
    graph_store.put(("b",), "unembedded", {"text": "up"}, index=False)
    found = graph_store.search((), query="up")
    assert [(item.key, item.score) for item in found] == [("opposite", pytest.approx(-1.0)), ("unembedded", None)]
    assert [item.key for item in graph_store.search((), query="up", limit=1)] == ["opposite"]
    assert [item.key for item in graph_store.search((), query="up", offset=1)] == ["unembedded"]


def test_the_index_embedder_is_memlabs_embedder_and_its_name_says_model_length_and_fields():
    embedder = IndexEmbedder(INDEX)
    assert isinstance(embedder, Embedder)
    assert embedder.name == "langgraph:meaning:5:text" and embedder.dimensions == DIMS
    assert embedder == IndexEmbedder(dict(INDEX)) and embedder != IndexEmbedder({**INDEX, "fields": ["$"]})


def test_a_langchain_embeddings_object_and_an_async_function_embed_as_a_function_does():
    class Meaning(Embeddings):
        def embed_documents(self, texts):
            return meaning(texts)

        def embed_query(self, text):
            return meaning([text])[0]

    async def ameaning(texts):
        await asyncio.sleep(0)
        return meaning(texts)

    for embed in (Meaning(), ameaning):
        graph_store = MemlabStore(None, taint="PUBLIC", index={**INDEX, "embed": embed})
        graph_store.put(("a",), "pet", {"text": "feline"})
        graph_store.put(("a",), "ride", {"text": "sedan"})
        assert [item.key for item in graph_store.search(("a",), query="kitten")] == ["pet", "ride"]


def test_an_embeddings_object_embeds_each_field_text_as_a_document_and_the_query_as_a_query():
    # Guards: a query embedded with embed_documents (asymmetric models such as E5 embed the two differently), and
    # the field texts joined before they are embedded.
    calls = []

    class Recording(Embeddings):
        def embed_documents(self, texts):
            calls.append(("documents", list(texts)))
            return meaning(texts)

        def embed_query(self, text):
            calls.append(("query", text))
            return meaning([text])[0]

    graph_store = MemlabStore(None, taint="PUBLIC", index={**INDEX, "embed": Recording(), "fields": ["a", "b"]})
    graph_store.put(("n",), "k", {"a": "feline", "b": "sedan engine", "c": "storm"})
    graph_store.search(("n",), query="kitten")
    assert calls == [("documents", ["feline", "sedan engine"]), ("query", "kitten")]


def test_the_async_operations_search_by_meaning_too():
    graph_store = MemlabStore(None, taint="PUBLIC", index=INDEX)

    async def run():
        await graph_store.aput(("a",), "pet", {"text": "feline"})
        await graph_store.aput(("a",), "ride", {"text": "sedan"})
        return [item.key for item in await graph_store.asearch(("a",), query="kitten")]

    assert asyncio.run(run()) == ["pet", "ride"]


def world(extra):
    """A PUBLIC graph's semantic search after PUBLIC puts, and whatever ``extra`` does on the same memlab store."""
    store = cosine_store()
    public = MemlabStore(store, taint="PUBLIC", index=INDEX)
    public.put(("users", "ann"), "pet", {"text": "kitten dinner"})
    public.put(("users", "ann"), "ride", {"text": "sedan rain"})
    extra(store)
    return [
        (item.namespace, item.key, item.value, item.score)
        for query in ("kitten", "sedan", "cooking", "weather storm")
        for item in public.search(("users",), query=query)
    ]


def test_a_confidential_items_vector_never_moves_a_public_search():
    # Guards: a dense ranking over every level's vectors (the view's own only: memlab.storage.vectors.dense).
    def confidential(store):
        secret = MemlabStore(store, taint="CONFIDENTIAL", index=INDEX)
        secret.put(("users", "ann"), "pet", {"text": "storm storm"})  # shadows the key at CONFIDENTIAL
        for n in range(5):
            secret.put(("users", "ann"), f"secret-{n}", {"text": "kitten sedan cooking weather"})
        secret.put(("users", "eve"), "hidden", {"text": "kitten"})

    assert world(confidential) == world(lambda store: None)


def test_an_untrusted_items_vector_never_moves_a_search_whose_floor_is_trusted():
    def floor_world(extra):
        store = cosine_store()
        MemlabStore(store, taint="PUBLIC", index=INDEX).put(("a",), "pet", {"text": "kitten"})
        extra(store)
        trusted = MemlabStore(store, taint="PUBLIC", index=INDEX, floor="trusted")
        return [(item.key, item.score) for query in ("kitten", "sedan") for item in trusted.search(("a",), query=query)]

    def untrusted(store):
        web = MemlabStore(store, taint="PUBLIC", index=INDEX, integrity="untrusted")
        web.put(("a",), "pet", {"text": "sedan"})
        web.put(("a",), "poison", {"text": "kitten sedan"})

    assert floor_world(untrusted) == floor_world(lambda store: None)


FIELDS = {**INDEX, "fields": ["title", "body"]}


def fields_world(extra, **reader):
    """What a PUBLIC graph (``reader``'s options) finds by meaning, items indexed by two fields, after PUBLIC puts and
    whatever ``extra`` does on the same memlab store."""
    store = cosine_store(FIELDS)
    public = MemlabStore(store, taint="PUBLIC", index=FIELDS)
    public.put(("users", "ann"), "pet", {"title": "my pet", "body": "a kitten"})
    public.put(("users", "ann"), "ride", {"title": "sedan", "body": "rain tires"})
    public.put(("users", "ann"), "note", {"title": "unindexed"}, index=False)
    extra(store)
    graph = MemlabStore(store, taint="PUBLIC", index=FIELDS, **reader)
    return [
        (item.namespace, item.key, item.value, item.score)
        for query in ("kitten", "sedan", "cooking", "weather storm")
        for item in graph.search(("users",), query=query)
    ]


def test_a_confidential_items_field_vectors_never_move_a_public_search():
    # Guards: the view's matrix read from every level's vectors, and the unranked items of a public page listed from
    # more than the public view.
    def confidential(store):
        secret = MemlabStore(store, taint="CONFIDENTIAL", index=FIELDS)
        secret.put(("users", "ann"), "pet", {"title": "my pet", "body": "storm cooking"})  # shadows it above
        secret.put(("users", "ann"), "ride", {"title": "sedan"}, index=False)
        for n in range(5):
            secret.put(("users", "ann"), f"secret-{n}", {"title": "plans", "body": "kitten sedan cooking weather"})
            secret.put(("users", "ann"), f"bare-{n}", {"title": "kitten"}, index=False)
        secret.put(("users", "eve"), "hidden", {"title": "kitten", "body": "sedan"})

    assert fields_world(confidential) == fields_world(lambda store: None)


def test_an_untrusted_items_field_vectors_never_move_a_search_whose_floor_is_trusted():
    def untrusted(store):
        web = MemlabStore(store, taint="PUBLIC", index=FIELDS, integrity="untrusted")
        web.put(("users", "ann"), "pet", {"title": "sedan", "body": "storm"})
        web.put(("users", "ann"), "poison", {"title": "kitten", "body": "sedan cooking weather"})
        web.put(("users", "ann"), "bare", {"title": "kitten"}, index=False)

    assert fields_world(untrusted, floor="trusted") == fields_world(lambda store: None, floor="trusted")


@pytest.mark.parametrize(
    "index, message",
    [
        ({"dims": DIMS, "embed": meaning, "field": ["text"]}, "unknown keys \\['field'\\]"),
        ({"embed": meaning}, "dims'\\] must be a positive integer"),
        ({"dims": 0, "embed": meaning}, "positive integer"),
        ({"dims": "5", "embed": meaning}, "positive integer"),
        ({"dims": DIMS, "embed": "openai:text-embedding-3-small"}, "cannot run offline"),
        ({"dims": DIMS, "embed": 42}, "must be a function"),
        ({"dims": DIMS, "embed": meaning, "fields": "text"}, "non-empty list"),
        ({"dims": DIMS, "embed": meaning, "fields": []}, "non-empty list"),
        ({"dims": DIMS, "embed": meaning, "fields": ["text", ""]}, "non-empty strings"),
        (["dims", 5], "must be a dict"),
    ],
)
def test_a_bad_index_is_refused_when_the_store_is_made(index, message):
    # Guards: each check of IndexEmbedder (LangGraph's own stores fail later, at the first put, or not at all). The
    # error is a ValueError, the type LangGraph's ensure_embeddings raises for an embed it cannot use.
    with pytest.raises(InvalidArgument, match=message) as refused:
        MemlabStore(None, taint="PUBLIC", index=index)
    assert isinstance(refused.value, ValueError)


def test_memlabs_packaged_model_by_name_needs_its_packages_and_its_length():
    if missing():
        with pytest.raises(DenseUnavailable, match="pip install 'memlab\\[dense\\]'"):
            IndexEmbedder({"dims": 384, "embed": "minilm"})
    else:
        with pytest.raises(InvalidArgument, match="makes 384"):
            IndexEmbedder({"dims": 5, "embed": "huggingface:sentence-transformers/all-MiniLM-L6-v2"})
        assert IndexEmbedder({"dims": 384}).name == "langgraph:minilm:384:$"


def test_a_memlab_store_without_the_index_embedder_or_a_ranking_that_uses_it_is_refused():
    with pytest.raises(InvalidArgument, match="embedder=IndexEmbedder\\(index\\)"):
        MemlabStore(MemoryStore(), taint="PUBLIC", index=INDEX)
    with pytest.raises(InvalidArgument, match="ranking that uses the vectors"):
        MemlabStore(MemoryStore(embedder=IndexEmbedder(INDEX)), taint="PUBLIC", index=INDEX)


def test_an_index_over_a_postgresql_store_is_refused_when_the_store_is_made(pg_url):
    with MemoryStore(pg_url) as store, pytest.raises(InvalidArgument, match="embedder=IndexEmbedder"):
        MemlabStore(store, taint="PUBLIC", index=INDEX)
    with pytest.raises(InvalidArgument, match="PostgreSQL backend keeps no dense vectors"):
        MemlabStore(pg_url, taint="PUBLIC", index=INDEX)


def test_an_embed_function_giving_vectors_of_another_length_refuses_the_put_and_writes_nothing():
    graph_store = MemlabStore(None, taint="PUBLIC", index={**INDEX, "dims": 3})
    with pytest.raises(InvalidArgument, match="not \\(1, 3\\)"):
        graph_store.put(("a",), "k", {"text": "kitten"})
    assert graph_store.store.agents() == []


def test_a_bad_index_on_a_put_refuses_its_whole_batch():
    graph_store = MemlabStore(None, taint="PUBLIC", index=INDEX)
    with pytest.raises(InvalidArgument, match="index must hold field paths"):
        graph_store.batch([PutOp(("a",), "k1", {"text": "x"}), PutOp(("a",), "k2", {"text": "x"}, index=[3])])
    assert graph_store.store.agents() == []


def test_without_an_index_a_puts_fields_are_checked_and_otherwise_ignored_as_langgraph_does():
    graph_store = MemlabStore(MemoryStore(), taint="PUBLIC")
    graph_store.put(("a",), "k", {"text": "kitten"}, index=["text"])
    assert graph_store.get(("a",), "k").value == {"text": "kitten"}
    assert check_fields(("text",)) == ("text",)


def test_the_store_keeps_langgraphs_index_config_as_given():
    assert MemlabStore(None, taint="PUBLIC", index=INDEX).index_config == INDEX
    assert MemlabStore(None, taint="PUBLIC").index_config is None


def test_puts_of_one_batch_each_embed_their_own_fields():
    # Guards: MemlabStore.batch saving a run of puts under the first one's index.
    graph_store = MemlabStore(None, taint="PUBLIC", index=INDEX)
    graph_store.batch(
        [
            PutOp(("a",), "hidden", {"text": "kitten"}, index=False),
            PutOp(("a",), "shown", {"text": "kitten"}),
            PutOp(("a",), "noted", {"text": "sedan", "note": "kitten"}, index=["note"]),
        ]
    )
    scores = {item.key: item.score for item in graph_store.search(("a",), query="cat")}
    assert scores == {"hidden": None, "shown": pytest.approx(1.0), "noted": pytest.approx(1.0)}


def test_a_bad_taint_with_a_path_opens_no_store(tmp_path):
    with pytest.raises(InvalidArgument, match="CONFIDENTIAL:"):
        MemlabStore(tmp_path / "memories.db", taint="CONFIDENTIAL:", index=INDEX)
    assert not (tmp_path / "memories.db").exists()
