"""Indexing cost per analyzer, relative to FTS5's built-in porter, on the LoCoMo memories.

Each analyzer indexes the 2,541 LoCoMo observations through ``Session.memory_save`` into a fresh in-memory
store, with its stem cache emptied first (a cold start, the worst case), repeated and the median taken. A
raw ``sqlite3`` FTS5 porter table loaded row by row with the same texts is the floor.

Usage::

    python benchmarks/bench_analyzers.py [--repeats 3] [--locomo data/locomo10.json]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import time

from memlab import MemoryStore
from memlab.eval import load_locomo
from memlab.search import analyzers


def index_seconds(name: str, documents) -> float:
    analyzer = analyzers.get(name)
    if analyzer.stem is not None:
        analyzer.stem.cache_clear()  # cold: every distinct word is stemmed once, in the timed part
    started = time.perf_counter()
    with MemoryStore(analyzer=name) as store:
        sessions = {}
        for document in documents:
            session = sessions.get(document.agent) or sessions.setdefault(
                document.agent, store.session(agent=document.agent)
            )
            session.memory_save(document.key, document.text, tags=list(document.tags))
    return time.perf_counter() - started


def raw_seconds(documents) -> float:
    started = time.perf_counter()
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(content, tokenize='porter unicode61')")
    for document in documents:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO f (content) VALUES (?)", (document.text,))
        conn.execute("COMMIT")
    conn.close()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--locomo", default="data/locomo10.json")
    args = parser.parse_args()
    documents = load_locomo(args.locomo).documents
    raw = statistics.median(raw_seconds(documents) for _ in range(args.repeats))
    timings = {
        name: statistics.median(index_seconds(name, documents) for _ in range(args.repeats))
        for name in analyzers.names()
    }
    porter = timings["porter"]
    print(f"{len(documents)} LoCoMo memories, median of {args.repeats} cold runs, in-memory store, one process\n")
    print(f"{'analyzer':22} {'seconds':>8} {'saves/s':>9} {'vs porter':>10} {'vs raw FTS5':>12}")
    print(f"{'raw sqlite3 FTS5 porter':22} {raw:8.3f} {len(documents) / raw:9,.0f} {raw / porter:9.2f}x {1:11.2f}x")
    for name, seconds in timings.items():
        print(
            f"{name:22} {seconds:8.3f} {len(documents) / seconds:9,.0f} {seconds / porter:9.2f}x {seconds / raw:11.2f}x"
        )


if __name__ == "__main__":
    main()
