"""What the second wave's ranking costs: memlab's default ``Ranking`` (five weighted columns and the tag boost)
against the first wave's (``Ranking.plain()``: three columns, no boost), and dense retrieval's two storage
options, each beside raw sqlite3 on the same data in the same run.

Part 1, search latency. One agent, N memories of ``bench_store``'s corpus (PUBLIC, one or two tags each from
``bench_store.TAGS``), loaded with ``memory_save_many``; the same queries asked under both rankings,
interleaved call by call, plus the raw ``MATCH ... ORDER BY bm25(f)`` over the same rows. Half the queries
carry a tag word (``travel``, ...), so the boost's subquery has tagged memories to find.

Part 2, dense vectors (384-d float32, unit length, seeded random) for N memories, top 10 by cosine:

* memlab: a store whose embedder hands out these vectors, searched with ``Ranking.dense_only()`` through
  ``memory_search`` (vectors as BLOBs beside the memories; the effective view's matrix built once and kept
  until a write changes the view; the audit row written as for every search);
* sqlite-vec: a ``vec0`` virtual table, ``WHERE embedding MATCH ? AND k = 10`` (through apsw: Python's own
  sqlite3 here cannot load extensions);
* raw: the same matrix already in memory, one numpy product (the floor).

Usage::

    python benchmarks/bench_ranking.py [--sizes 10000,100000] [--queries 300] [--seed 0]

Needs ``pip install -e '.[bench]'`` for part 2's sqlite-vec and apsw; without them part 2 is skipped, saying so.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from bench_store import (  # noqa: E402
    TAGS,
    Corpus,
    Row,
    environment,
    interleaved,
    loaded,
    print_table,
    ratio_row,
    searching,
)

from memlab import MemoryStore, Ranking  # noqa: E402

DIMENSIONS = 384


def bench_search(corpus: Corpus, size: int, queries: list[str], workdir: Path) -> list[Row]:
    raw, store, session = loaded(corpus, size, workdir)
    timings = interleaved(
        {
            "plain": searching(store, session, Ranking.plain()),
            "default": searching(store, session, Ranking()),
            "raw": raw.search,
        },
        queries,
    )
    store.close()
    raw.close()
    plain, default, baseline = timings["plain"], timings["default"], timings["raw"]
    split = []
    for label, parity in (("naming no tag", 0), ("naming a tag", 1)):  # odd queries carry a tag word
        mine = statistics.median(default.samples[parity::2]) * 1e6
        before = statistics.median(plain.samples[parity::2]) * 1e6
        split.append(Row(f"  queries {label}: default ÷ first", mine, before, "µs", "≤ 1.2x", mine <= 1.2 * before))
    return [
        ratio_row("search p50, first-wave ranking", plain.p50_us, baseline.p50_us, None),
        ratio_row("search p50, default ranking", default.p50_us, baseline.p50_us, None),
        Row(
            "search p50, default ÷ first-wave",
            default.p50_us,
            plain.p50_us,
            "µs",
            "≤ 1.2x",
            default.p50_us <= 1.2 * plain.p50_us,
        ),
        *split,
        ratio_row("search p95, default ranking", default.p95_us, baseline.p95_us, None),
    ]


class PresetEmbedder:
    """Hands out the benchmark's vectors: ``doc-{i}`` gets row i of the memories' matrix, ``query {j}`` row j of
    the questions' (the store under test does everything else as with a real model)."""

    name = "preset-384"
    dimensions = DIMENSIONS

    def __init__(self, memories: np.ndarray, questions: np.ndarray) -> None:
        self.memories, self.questions = memories, questions

    def embed(self, texts):
        return np.stack(
            [self.memories[int(t[4:])] if t.startswith("doc-") else self.questions[int(t.split()[1])] for t in texts]
        )


def bench_vectors(size: int, count: int, seed: int, workdir: Path) -> list[Row]:
    import apsw
    import sqlite_vec

    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((size, DIMENSIONS)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    questions = rng.standard_normal((count, DIMENSIONS)).astype(np.float32)
    questions /= np.linalg.norm(questions, axis=1, keepdims=True)

    store = MemoryStore(
        workdir / f"dense-{size}", embedder=PresetEmbedder(matrix, questions), ranking=Ranking.dense_only()
    )
    session = store.session()
    session.memory_save_many({"key": f"k{i}", "content": f"doc-{i}"} for i in range(size))
    vec = apsw.Connection(str(workdir / f"vec-{size}.db"))
    vec.enable_load_extension(True)
    vec.load_extension(sqlite_vec.loadable_path())
    vec.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{DIMENSIONS}] distance_metric=cosine)")
    with vec:
        vec.executemany(
            "INSERT INTO v (rowid, embedding) VALUES (?, ?)", ((i, v.tobytes()) for i, v in enumerate(matrix))
        )

    def memlab_search(j: int) -> list[int]:
        return [int(hit.memory.key[1:]) for hit in session.memory_search(f"query {j}")]

    def sqlite_vec_knn(j: int) -> list[int]:
        knn = "SELECT rowid FROM v WHERE embedding MATCH ? AND k = 10"
        return [row[0] for row in vec.execute(knn, (questions[j].tobytes(),))]

    def in_memory(j: int) -> list[int]:
        return [int(i) for i in np.argsort(-(matrix @ questions[j]))[:10]]

    for j in range(5):  # the three agree on the top result
        assert memlab_search(j)[0] == sqlite_vec_knn(j)[0] == in_memory(j)[0]
    memlab_search(0)  # the first search after a write builds the view's matrix; later ones reuse it
    timings = interleaved({"memlab": memlab_search, "vec": sqlite_vec_knn, "raw": in_memory}, list(range(count)))
    store.close()
    vec.close()
    mine, theirs, floor = timings["memlab"], timings["vec"], timings["raw"]
    return [
        ratio_row("dense search p50, memlab (BLOBs)", mine.p50_us, floor.p50_us, None),
        ratio_row("dense top-10 p50, sqlite-vec vec0", theirs.p50_us, floor.p50_us, None),
        Row("dense p50, memlab ÷ sqlite-vec", mine.p50_us, theirs.p50_us, "µs"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    corpus = Corpus(args.seed)
    rng = random.Random(args.seed)
    queries = [
        f"{query} {rng.choice(TAGS)}" if n % 2 else query for n, query in enumerate(corpus.queries(args.queries, 9))
    ]
    print("\n".join(environment()))
    print(f"settings:   sizes={sizes} queries={args.queries} seed={args.seed}; every other query names a tag\n")
    results: dict[int, list[Row]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            started = time.perf_counter()
            results[size] = bench_search(corpus, size, queries, Path(folder))
            if importlib.util.find_spec("sqlite_vec") and importlib.util.find_spec("apsw"):
                results[size] += bench_vectors(size, args.queries, args.seed, Path(folder))
            else:
                print("part 2 skipped: sqlite-vec and apsw are not installed (pip install -e '.[bench]')")
            print(f"N={size:,}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    print_table(results, widths=(7, 41, 8))
    print("\n(raw: sqlite3 FTS5 bm25 over the same rows; for dense, the same matrix already in memory)")


if __name__ == "__main__":
    main()
