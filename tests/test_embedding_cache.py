"""The embedding cache: vectors by model and text digest, the fresh ones exactly, in a folder of the user's;
safe with two processes filling it, robust to corrupt entries and files; LoCoMo's warm vectors."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from memlab import MemoryStore, Ranking
from memlab.eval import load_locomo, load_trec, run
from memlab.eval.runner import WARM
from memlab.search import dense
from memlab.search.embedding_cache import (
    CACHE_FILE,
    WARM_TOLERANCE,
    Cached,
    EmbeddingCache,
    Warm,
    cached,
    default_folder,
    digest,
    fingerprint,
)
from tests.backends import WordsEmbedder

TEXTS = ["the picnic plan for the team", "a kitten sat on the mat", "stock prices fell", "the picnic plan for the team"]


class Counting:
    """An embedder that counts the texts it is asked to embed (and can refuse to embed any)."""

    def __init__(self, inner, *, refuse: bool = False) -> None:
        self.inner, self.refuse, self.embedded = inner, refuse, 0
        self.name, self.dimensions = inner.name, inner.dimensions
        self.fingerprint = fingerprint(inner).split("@", 1)[1]  # the wrapped model's key, not a new one

    def embed(self, texts):
        if self.refuse and texts:
            raise AssertionError(f"embedded {len(texts)} texts: the cache should have answered")
        self.embedded += len(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def minilm():
    return dense.MiniLM()


def test_cached_vectors_are_the_fresh_ones_exactly(tmp_path, minilm):
    fresh = dense.MiniLM().embed(TEXTS)
    cold = Counting(minilm)
    assert np.array_equal(Cached(cold, EmbeddingCache(tmp_path)).embed(TEXTS), fresh)
    assert cold.embedded == 3  # a text asked twice is embedded once
    # Another process's view of the same folder: every vector from the file, byte for byte.
    again = Cached(Counting(minilm, refuse=True), EmbeddingCache(tmp_path))
    assert np.array_equal(again.embed(TEXTS), fresh)
    assert np.array_equal(again.embed([TEXTS[2]]), fresh[2:3])


def test_a_store_with_the_cache_ranks_as_one_without(tmp_path):
    def searched(embedder):
        with MemoryStore(embedder=embedder, ranking=Ranking.hybrid()) as store:
            session = store.session()
            for number, text in enumerate(TEXTS[:3]):
                session.memory_save(f"note-{number}", text)
            return [(hit.memory.key, hit.score) for hit in session.memory_search("a picnic for the kitten")]

    plain = searched(WordsEmbedder())
    assert searched(cached(WordsEmbedder(), tmp_path)) == plain  # cold: fills the cache
    assert searched(Cached(Counting(WordsEmbedder(), refuse=True), EmbeddingCache(tmp_path))) == plain  # warm


class Renamed:
    """WordsEmbedder's name on other vectors: a changed model that kept its name."""

    name, dimensions = WordsEmbedder.name, WordsEmbedder.dimensions

    def embed(self, texts):
        return WordsEmbedder().embed([text[::-1] for text in texts])


def test_a_changed_model_never_serves_stale_vectors(tmp_path):
    cached(WordsEmbedder(), tmp_path).embed(TEXTS)
    changed = Cached(Counting(Renamed()), EmbeddingCache(tmp_path))
    assert np.array_equal(changed.embed(TEXTS), Renamed().embed(TEXTS))
    assert changed.embedder.embedded == 3


def test_minilm_is_keyed_by_its_model_and_tokenizer_files(tmp_path, minilm, monkeypatch):
    assert fingerprint(minilm) == fingerprint(dense.MiniLM())  # the same files: the same key
    edited = tmp_path / "model.onnx"
    shutil.copyfile(minilm._path, edited)
    with edited.open("r+b") as file:
        file.seek(-1, os.SEEK_END)
        last = file.read(1)
        file.seek(-1, os.SEEK_END)
        file.write(bytes([last[0] ^ 1]))
    other = dense.MiniLM()
    other._path = edited
    assert fingerprint(other) != fingerprint(minilm)
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_text(dense.TOKENIZER.read_text(encoding="utf-8") + " ", encoding="utf-8")
    monkeypatch.setattr(dense, "TOKENIZER", tokenizer)
    assert fingerprint(dense.MiniLM()) != fingerprint(minilm)


def test_the_cache_folder_is_the_users_and_can_be_named(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMLAB_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_folder() == tmp_path / "home" / ".cache" / "memlab"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_folder() == tmp_path / "xdg" / "memlab"
    monkeypatch.setenv("MEMLAB_CACHE", str(tmp_path / "named"))
    assert default_folder() == tmp_path / "named"
    cached(WordsEmbedder()).embed(TEXTS)
    folder, file = tmp_path / "named", tmp_path / "named" / CACHE_FILE
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(file.stat().st_mode) == 0o600


def test_clear_removes_the_cache(tmp_path):
    cache = EmbeddingCache(tmp_path)
    Cached(WordsEmbedder(), cache).embed(TEXTS)
    assert cache.clear() >= 1
    assert not (tmp_path / CACHE_FILE).exists()
    counting = Counting(WordsEmbedder())
    Cached(counting, EmbeddingCache(tmp_path)).embed(TEXTS)
    assert counting.embedded == 3


def test_a_corrupt_entry_is_recomputed_never_returned(tmp_path, minilm):
    fresh = minilm.embed(TEXTS[:3])
    Cached(minilm, EmbeddingCache(tmp_path)).embed(TEXTS[:3])
    with sqlite3.connect(tmp_path / CACHE_FILE) as conn:
        # One vector's bytes changed (same length), another's cut short.
        wrong = np.roll(fresh[0], 1).astype("<f4").tobytes()
        conn.execute("UPDATE vectors SET vector = ? WHERE digest = ?", (wrong, digest(TEXTS[0])))
        conn.execute("UPDATE vectors SET vector = substr(vector, 1, 100) WHERE digest = ?", (digest(TEXTS[1]),))
    counting = Counting(minilm)
    assert np.array_equal(Cached(counting, EmbeddingCache(tmp_path)).embed(TEXTS[:3]), fresh)
    assert counting.embedded == 2  # the two bad rows, recomputed
    # Guards: a get() that skips the checksum (returns the rolled vector, or fails on the short one).
    assert np.array_equal(Cached(Counting(minilm, refuse=True), EmbeddingCache(tmp_path)).embed(TEXTS[:3]), fresh)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "scribbled"])
def test_a_broken_cache_file_is_bypassed_with_a_warning(tmp_path, damage):
    """Garbage and a cut-off file fail as the file is opened; pages scribbled over, as a lookup reads them.
    Guards: _query or _connection without its except (the error reaches the caller)."""
    fresh = WordsEmbedder().embed(TEXTS)
    many = [f"note {number} about gardening" for number in range(2_000)]
    filled = EmbeddingCache(tmp_path)
    Cached(WordsEmbedder(), filled).embed(TEXTS + many)
    filled.close()  # the last connection: the log is written back into the file, which is whole on disk
    path = tmp_path / CACHE_FILE
    size = path.stat().st_size
    if damage == "garbage":
        path.write_bytes(b"not a database at all" * 100)
    with path.open("r+b") as file:
        if damage == "truncated":
            file.truncate(size // 2)
        elif damage == "scribbled":
            file.seek(2 * 4096)  # the schema's pages kept: the file opens, the vectors' pages are garbage
            file.write(b"\xff" * (size - 2 * 4096))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = Cached(WordsEmbedder(), EmbeddingCache(tmp_path)).embed(TEXTS)
    assert np.array_equal(got, fresh)
    assert any("embedding cache" in str(warning.message) for warning in caught)


def _fill(folder: str, start: int, barrier) -> None:
    """One process's share of a concurrent fill: overlapping texts, a transaction each, every warning an error."""
    warnings.simplefilter("error")
    embedder = Cached(WordsEmbedder(), EmbeddingCache(folder))
    embedder.embed(["opened"])  # the file made before both start
    barrier.wait()
    for number in range(start, start + 300):
        embedder.embed([f"memory number {number} of the shared cache"])


def test_two_processes_fill_the_cache_at_once(tmp_path):
    """Guards: a connection without its busy timeout (a writer meets the other's lock: the cache gives up)."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    fillers = [context.Process(target=_fill, args=(str(tmp_path), start, barrier)) for start in (0, 150)]
    for filler in fillers:
        filler.start()
    for filler in fillers:
        filler.join()
    assert [filler.exitcode for filler in fillers] == [0, 0]
    texts = [f"memory number {number} of the shared cache" for number in range(450)]
    reader = Cached(Counting(WordsEmbedder(), refuse=True), EmbeddingCache(tmp_path))
    assert np.array_equal(reader.embed(texts), WordsEmbedder().embed(texts))


def _warm_file(path: Path, model: str, texts: list[str], vectors: np.ndarray) -> Path:
    keys = np.frombuffer(b"".join(digest(text) for text in texts), dtype=np.uint8).reshape(len(texts), 32)
    np.savez_compressed(path, model=np.array(model), digests=keys, vectors=vectors.astype(np.float32))
    return path


def test_a_warm_file_serves_its_texts(tmp_path):
    embedder = WordsEmbedder()
    warm = _warm_file(tmp_path / "warm.npz", fingerprint(embedder), TEXTS[:2], embedder.embed(TEXTS[:2]))
    counting = Counting(embedder)
    got = Cached(counting, EmbeddingCache(tmp_path / "cache"), warm=[warm]).embed(TEXTS)
    assert counting.embedded == 1  # the one text the file lacks (TEXTS[3] is TEXTS[0])
    assert np.array_equal(got, embedder.embed(TEXTS))


def test_a_stale_warm_file_is_ignored(tmp_path):
    embedder = WordsEmbedder()
    wrong = np.flip(embedder.embed(TEXTS), axis=1)  # another model's vectors for the same texts
    stale = _warm_file(tmp_path / "stale.npz", f"{embedder.name}@0123456789abcdef", TEXTS, wrong)
    with pytest.warns(UserWarning, match="not used"):
        got = Cached(embedder, EmbeddingCache(tmp_path / "cache"), warm=[stale]).embed(TEXTS)
    assert np.array_equal(got, embedder.embed(TEXTS))
    # Guards: Warm.vectors without its model check (serves the flipped vectors).


def test_locomos_warm_vectors_are_minilms_within_tolerance(minilm):
    """Every LoCoMo document has a warm vector, of this model; a sample of them is a fresh embedding's."""
    (path,) = WARM
    warm = Warm(path).vectors(fingerprint(minilm))
    assert warm is not None, f"{path} is missing or of another model: python tools/embed_locomo.py"
    rows, matrix = warm
    texts = [document.text for document in load_locomo().documents]
    assert {digest(text) for text in texts} <= set(rows)
    sample = texts[::50]
    fresh = minilm.embed(sample)
    stored = matrix[[rows[digest(text)] for text in sample]]
    assert np.abs(stored - fresh).max() <= WARM_TOLERANCE
    assert (stored * fresh).sum(axis=1).min() >= 0.9999


def test_a_second_eval_embeds_nothing(tmp_path, monkeypatch):
    collection = load_trec("tests/fixtures/trec-tiny")
    first = run(collection, rows=["dense", "hybrid"], progress=False, workers=1, cache=tmp_path)

    def refuse(self, texts):
        raise AssertionError("the second run embedded")

    monkeypatch.setattr(dense.MiniLM, "_model", refuse)
    second = run(collection, rows=["dense", "hybrid"], progress=False, workers=1, cache=tmp_path)
    assert second.per_query.equals(first.per_query)


def test_memlab_cache_shows_and_clears_the_named_folder(tmp_path, monkeypatch, capsys):
    from memlab.cli import main

    monkeypatch.setenv("MEMLAB_CACHE", str(tmp_path))
    assert main(["cache"]) == 0
    assert capsys.readouterr().out == f"{tmp_path / CACHE_FILE}: empty\n"
    cached(WordsEmbedder()).embed(TEXTS)
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == f"{tmp_path / CACHE_FILE}: removed\n"
    assert not (tmp_path / CACHE_FILE).exists()


def test_a_warm_file_not_of_the_layout_is_ignored(tmp_path):
    embedder = WordsEmbedder()
    keys = np.frombuffer(b"".join(digest(text) for text in TEXTS), dtype=np.uint8).reshape(len(TEXTS), 32)
    rounded = tmp_path / "float16.npz"  # what float16 would store: not the model's vectors
    np.savez(rounded, model=np.array(fingerprint(embedder)), digests=keys, vectors=embedder.embed(TEXTS).astype("f2"))
    (tmp_path / "text.npz").write_text("not a zip", encoding="utf-8")
    for path in (rounded, tmp_path / "text.npz"):
        with pytest.warns(UserWarning, match="not a warm embeddings file"):
            got = Cached(embedder, EmbeddingCache(tmp_path / "cache"), warm=[path]).embed(TEXTS)
        assert np.array_equal(got, embedder.embed(TEXTS))


def test_tuning_the_hybrid_row_a_second_time_embeds_nothing(tmp_path, monkeypatch):
    # Guards: tuning's coordinate ascent loading its stores with the bare embedder (every tune embedded again).
    from memlab.eval.tuning import tune
    from tests.test_tuning import _collection

    monkeypatch.setenv("MEMLAB_CACHE", str(tmp_path))
    grid = {"hybrid": {"dense": (0.5, 1.0)}}
    first = tune(_collection(), rows=["hybrid"], grids=grid, progress=False, workers=1)

    def refuse(self, texts):
        raise AssertionError("the second tuning embedded")

    monkeypatch.setattr(dense.MiniLM, "_model", refuse)  # the tuning's worker processes are forked: they see it
    second = tune(_collection(), rows=["hybrid"], grids=grid, progress=False, workers=1)
    assert second.chosen == first.chosen


def test_a_second_eval_never_loads_the_model(tmp_path):
    # Guards: the onnxruntime session made in MiniLM's constructor (half a second of CPU in each run whose
    # texts are all cached, a tenth of a second `memlab eval`'s CPU beyond its searches).
    run(load_trec("tests/fixtures/trec-tiny"), rows=["dense"], progress=False, workers=1, cache=tmp_path)
    code = f"""
import json, sys
from memlab.eval import load_trec, run
run(load_trec("tests/fixtures/trec-tiny"), rows=["dense", "hybrid"], progress=False, workers=1, cache={str(tmp_path)!r})
print(json.dumps("onnxruntime" in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) is False
    assert dense.MiniLM().embed(["a cat sat"]).shape == (1, 384)  # and a text not cached loads it


class Roles(WordsEmbedder):
    """A model with a query role: a query's vector is another than the same text's stored vector."""

    name = "test-roles"

    def embed_query(self, texts):
        return np.ascontiguousarray(np.flip(self.embed(texts), axis=1))


class Refusing(Roles):
    fingerprint = fingerprint(Roles()).split("@", 1)[1]

    def embed(self, texts):
        raise AssertionError("the cache should have answered")

    embed_query = embed


def test_queries_are_cached_apart_from_memories_when_the_model_has_roles(tmp_path):
    first = cached(Roles(), tmp_path)
    stored, asked = first.embed(TEXTS), first.embed_query(TEXTS)
    assert np.array_equal(stored, Roles().embed(TEXTS)) and np.array_equal(asked, Roles().embed_query(TEXTS))
    again = Cached(Refusing(), EmbeddingCache(tmp_path))
    assert np.array_equal(again.embed(TEXTS), stored) and np.array_equal(again.embed_query(TEXTS), asked)
    # Guards: one key for both roles (a query served the stored vector of the same text, or the reverse).


def test_a_model_without_roles_embeds_a_query_once_for_both(tmp_path):
    counting = Counting(WordsEmbedder())
    both = Cached(counting, EmbeddingCache(tmp_path))
    assert np.array_equal(both.embed_query(TEXTS), both.embed(TEXTS))
    assert counting.embedded == 3


def test_only_minilm_reads_the_shipped_warm_vectors(tmp_path):
    """LoCoMo's warm file is MiniLM's: another model's rows do not open it (nor warn that it is another's)."""
    from memlab.eval.runner import cached_embedder

    assert [layer.path for layer in cached_embedder("minilm", tmp_path).warm] == list(WARM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e5 = cached_embedder("e5-small", tmp_path)
        assert e5.warm == [] and e5.embed(["a cat sat"]).shape == (1, 384)


def test_a_second_eval_of_the_e5_rows_embeds_nothing(tmp_path, monkeypatch):
    """The optional rows through the cache: memories and queries (each in its role) embedded once."""
    collection = load_trec("tests/fixtures/trec-tiny")
    first = run(collection, rows=["dense-e5", "hybrid-e5"], progress=False, workers=1, cache=tmp_path)

    def refuse(self, texts, *, query):
        raise AssertionError("the second run embedded")

    monkeypatch.setattr(dense.E5Small, "_model", refuse)
    second = run(collection, rows=["dense-e5", "hybrid-e5"], progress=False, workers=1, cache=tmp_path)
    assert second.per_query.equals(first.per_query)
    assert first.summary.loc["dense-e5", "S@10"] > 0
