"""``MemlabStore.search`` (LangGraph's store over memlab) against memlab's own search at the same depth, and both
against raw sqlite3 FTS5 on the same texts, in the same run (issue 37's target: at most 1.1x memlab's own).

One namespace of ``--items`` items (a dozen words each, from a small seeded vocabulary), ``--queries`` queries of
three words, ``limit=10``; each of the three runs all the queries, interleaved, ``--repeats`` times; the CPU time
(process time) of the best and the median round is printed, and the ratios.

Usage, from the repository's root::

    python benchmarks/record.py bench_langgraph_search -- python benchmarks/bench_langgraph_search.py
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_store import environment  # noqa: E402

from memlab import MemoryStore  # noqa: E402
from memlab.integrations.langgraph import MemlabStore  # noqa: E402

WORDS = (
    "apple berry cherry grape lemon mango melon olive peach pear plum kiwi lime fig date nut oat rye corn bean "
    "river stone cloud paper glass metal wood sand"
).split()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    print("\n".join(environment()))
    print(f"settings:   items={args.items} queries={args.queries} repeats={args.repeats} limit=10 seed=0")
    rng = random.Random(0)
    texts = [" ".join(rng.choices(WORDS, k=12)) for _ in range(args.items)]
    queries = [" ".join(rng.choices(WORDS, k=3)) for _ in range(args.queries)]
    store = MemoryStore()
    graph = MemlabStore(store, taint="PUBLIC")
    namespace = ("users", "alice")
    for number, text in enumerate(texts):
        graph.put(namespace, f"k{number}", {"text": text})
    session = store.session(agent="users/alice")
    raw = sqlite3.connect(":memory:")
    raw.execute("CREATE VIRTUAL TABLE t USING fts5(key, content, tokenize='porter unicode61')")
    raw.executemany("INSERT INTO t VALUES (?, ?)", [(f"k{n}", text) for n, text in enumerate(texts)])

    def timed(search) -> float:
        started = time.process_time()
        for query in queries:
            search(query)
        return time.process_time() - started

    runs = {
        "MemlabStore.search": lambda q: graph.search(namespace, query=q, limit=10),
        "memlab memory_search": lambda q: session.memory_search(q, max_results=10),
        "raw FTS5": lambda q: raw.execute(
            "SELECT key, content FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10",
            (" OR ".join(f'"{word}"' for word in q.split()),),
        ).fetchall(),
    }
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, search in runs.items():
            seconds[name].append(timed(search))
    print(f"\n{'search':24} {'best ms/q':>10} {'median ms/q':>12}")
    for name, values in seconds.items():
        per_query = [value / args.queries * 1000 for value in (min(values), statistics.median(values))]
        print(f"{name:24} {per_query[0]:10.3f} {per_query[1]:12.3f}")
    best = {name: min(values) for name, values in seconds.items()}
    median = {name: statistics.median(values) for name, values in seconds.items()}
    for name in ("MemlabStore.search", "memlab memory_search"):
        fastest, typical = best[name] / best["raw FTS5"], median[name] / median["raw FTS5"]
        print(f"{name} / raw FTS5: {fastest:.2f}x best, {typical:.2f}x median")
    ratio = best["MemlabStore.search"] / best["memlab memory_search"]
    print(
        f"MemlabStore.search / memlab memory_search: {ratio:.2f}x best, "
        f"{median['MemlabStore.search'] / median['memlab memory_search']:.2f}x median (target: 1.1x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
