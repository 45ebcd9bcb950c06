"""LoCoMo relevance of PostgreSQL's rankings beside FTS5's bm25, through the real stores.

Every ranking of ``memlab.storage.postgres.RANKINGS`` with the ``porter`` analyzer (PostgreSQL's ``english``
configuration) and ``ts_rank`` with ``none`` (``simple``), each in a throwaway schema, then FTS5 ``porter``
(bm25) in memory; success@1/5/10 and nDCG@10 on LoCoMo's categories 1-4, as ``memlab eval`` measures them.

Usage::

    python benchmarks/relevance_postgres.py [--db postgresql://owner@host/db]

Without ``--db`` a throwaway server is started (``tests/pgserver.py``). ``memlab eval --backend postgres
--db URL`` gives the default ranking's rows with the relevance lab's full report.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memlab import MemoryStore  # noqa: E402
from memlab.eval import load_locomo  # noqa: E402
from memlab.eval.measures import per_query  # noqa: E402
from memlab.eval.runner import load, search  # noqa: E402
from memlab.search.ranking import Ranking  # noqa: E402
from memlab.storage.postgres import RANKINGS, PostgresStorage  # noqa: E402

MEASURES = ["S@1", "S@5", "S@10", "nDCG@10"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=None, help="a postgresql:// URL of the owner (default: a throwaway server)")
    args = parser.parse_args()
    collection = load_locomo(str(ROOT / "data" / "locomo10.json"))
    server = None
    if args.db is None:
        from tests.pgserver import running_server

        server = running_server()
    url = args.db or server.fresh_database()
    runs = [(f"postgres {ranking}, english", "porter", ranking) for ranking in RANKINGS]
    runs += [("postgres ts_rank, simple", "none", "ts_rank"), ("sqlite FTS5 bm25, porter", "porter", None)]
    print(f"{'ranking':<34} " + " ".join(f"{m:>8}" for m in MEASURES) + f" {'index s':>8} {'search s':>8}")
    try:
        for label, analyzer, ranking in runs:
            storage = None
            if ranking is not None:
                schema = f"memlab_relevance_{uuid.uuid4().hex[:12]}"
                storage = PostgresStorage(url, analyzer=analyzer, schema=schema, rank_function=ranking)
            try:
                # FTS5's row is the first wave's ranking (text only, no boost): what PostgreSQL's rows match.
                with MemoryStore(analyzer=analyzer, storage=storage, ranking=Ranking.plain()) as store:
                    started = time.perf_counter()
                    sessions = load(store, collection, context=False)
                    indexed = time.perf_counter() - started
                    started = time.perf_counter()
                    run = search(store, sessions, collection, depth=100)
                    searched = time.perf_counter() - started
            finally:
                if storage is not None:
                    storage.drop()
            scores = per_query(collection.qrels, run).reindex([q.id for q in collection.queries], fill_value=0.0)
            means = scores[MEASURES].mean()  # load_locomo keeps categories 1-4
            print(
                f"{label:<34} "
                + " ".join(f"{means[m]:>8.3f}" for m in MEASURES)
                + f" {indexed:>8.1f} {searched:>8.1f}",
                flush=True,
            )
    finally:
        if server is not None:
            from tests.pgserver import stop_server

            stop_server()


if __name__ == "__main__":
    main()
