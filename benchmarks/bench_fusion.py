"""What the query-adaptive hybrid costs per query: standardized score fusion (``Ranking.hybrid()``, fourth wave)
against the third wave's reciprocal rank fusion scaled by agreement (``Ranking(dense=0.75, fusion_k=1.0)``), beside
memlab's FTS5 ranking alone and raw sqlite3 on the same data in the same run.

One agent, N memories of ``bench_store``'s corpus, saved with ``memory_save_many`` into a store whose embedder
gives each text a seeded random unit vector (384 floats, derived from the text's hash: no model runs, so what is
timed is the store's search and fusion, not MiniLM's ~6 ms per question, which both rules pay alike). The same
queries are asked under each ranking, interleaved call by call; the raw row is ``MATCH ... ORDER BY bm25(f)
LIMIT 100`` over the same rows (the depth the fusion reads each ranking to).

Usage::

    python benchmarks/bench_fusion.py [--sizes 10000] [--queries 300] [--seed 0]

Target (issue 38): the hybrid's p50 ≤ 1.2x the third wave's hybrid.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from bench_store import Corpus, Row, environment, interleaved, loaded, print_table, ratio_row, searching  # noqa: E402

from memlab import Ranking  # noqa: E402

DIMENSIONS = 384
BEFORE = Ranking(dense=0.75, fusion_k=1.0)  # the third wave's hybrid


class HashedEmbedder:
    """A seeded random unit vector per text (from its SHA-256): dense search with no model to run."""

    name = "hashed-384"
    dimensions = DIMENSIONS

    def embed(self, texts):
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            vector = np.random.default_rng(seed).standard_normal(DIMENSIONS).astype(np.float32)
            rows.append(vector / np.linalg.norm(vector))
        return np.stack(rows)


def bench(corpus: Corpus, size: int, queries: list[str], workdir: Path) -> list[Row]:
    raw, store, session = loaded(corpus, size, workdir, embedder=HashedEmbedder())
    for ranking in (Ranking(), BEFORE, Ranking.hybrid()):  # the first search builds the view's matrix
        searching(store, session, ranking)(queries[0])
    timings = interleaved(
        {
            "fts5": searching(store, session, Ranking()),
            "before": searching(store, session, BEFORE),
            "now": searching(store, session, Ranking.hybrid()),
            "raw": lambda query: raw.search(query, limit=100),
        },
        queries,
    )
    store.close()
    raw.close()
    fts5, before, now, baseline = (timings[name] for name in ("fts5", "before", "now", "raw"))
    return [
        ratio_row("search p50, FTS5 alone (memlab default)", fts5.p50_us, baseline.p50_us, None),
        ratio_row("search p50, hybrid before (RRF x agreement)", before.p50_us, baseline.p50_us, None),
        ratio_row("search p50, hybrid now (standardized)", now.p50_us, baseline.p50_us, None),
        Row(
            "search p50, hybrid now ÷ before",
            now.p50_us,
            before.p50_us,
            "µs",
            "≤ 1.2x",
            now.p50_us <= 1.2 * before.p50_us,
        ),
        ratio_row("search p95, hybrid now (standardized)", now.p95_us, baseline.p95_us, None),
        Row("search p95, hybrid now ÷ before", now.p95_us, before.p95_us, "µs"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    corpus = Corpus(args.seed)
    queries = corpus.queries(args.queries, 9)
    print("\n".join(environment()))
    print(f"settings:   sizes={args.sizes} queries={args.queries} seed={args.seed}\n")
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(size) for size in args.sizes.split(",")):
            results[size] = bench(corpus, size, queries, Path(folder))
    print_table(results)


if __name__ == "__main__":
    main()
