"""What ``memlab poison`` costs on LoCoMo from a warm cache, against raw sqlite3 doing the same searches.

Runs the poisoning lab as ``memlab poison`` does with its default flags (three rates, five defences, the lexical,
dense and hybrid rankings, the policy lab's proofs) in this process, after one run that fills the embedding cache
(the target: under 2 minutes of CPU warm, issue 36). Beside it, raw sqlite3 on the same data in the same run: the
documents in one FTS5 table per agent (porter), every question asked as many times as the lab asks it (a clean
pass per ranking and a pass per rate, defence and ranking), ``bm25`` ordered and cut at the lab's depth: what the
searches alone cost without sessions, gates, audit, poisons or measures. The ratio says what the lab's own work
multiplies that by.

Usage, from the repository's root::

    python benchmarks/record.py bench_poison -- python benchmarks/bench_poison.py
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_store import environment  # noqa: E402

from memlab.eval.locomo import load_locomo  # noqa: E402
from memlab.poison import runner  # noqa: E402
from memlab.poison.guarantees import checked, verdicts  # noqa: E402
from memlab.search.query import words  # noqa: E402

RATES = (0.001, 0.01, 0.05)
RANKINGS = ("lexical", "dense", "hybrid")


def lab(collection) -> tuple[float, float, int]:
    """CPU seconds of the run and of the proofs, and the searches the run made."""
    started = time.process_time()
    table = runner.run(collection, rate=RATES, rankings=RANKINGS)
    ran = time.process_time() - started
    started = time.process_time()
    checked(table, verdicts())
    proved = time.process_time() - started
    stores = runner.steps(RANKINGS, None, RATES)
    searches = (stores + len(runner.rankings_of(RANKINGS)[0])) * len(collection.queries)
    return ran, proved, searches


def raw(collection, searches: int, depth: int = 10) -> float:
    """CPU seconds for raw sqlite3: load every document into an FTS5 table per agent, then ``searches`` questions
    (the collection's, over and over), each bm25-ordered to ``depth``."""
    started = time.process_time()
    conn = sqlite3.connect(":memory:")
    agents = sorted({document.agent for document in collection.documents})
    for number, agent in enumerate(agents):
        conn.execute(f"CREATE VIRTUAL TABLE fts{number} USING fts5(key, content, tokenize='porter unicode61')")
        conn.executemany(
            f"INSERT INTO fts{number}(key, content) VALUES (?, ?)",
            [(d.key, d.text) for d in collection.documents if d.agent == agent],
        )
    tables = {agent: f"fts{number}" for number, agent in enumerate(agents)}
    asked = 0
    while asked < searches:
        for query in collection.queries:
            terms = " OR ".join(f'"{word}"' for word in words(query.text)) or '""'
            conn.execute(
                f"SELECT rowid, key, content FROM {tables[query.agent]} WHERE {tables[query.agent]} MATCH ? "
                "ORDER BY bm25(" + tables[query.agent] + ") LIMIT ?",
                (terms, depth),
            ).fetchall()
            asked += 1
            if asked == searches:
                break
    return time.process_time() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-warm-up", action="store_true", help="skip the run that fills the embedding cache")
    args = parser.parse_args(argv)
    print("\n".join(environment()))
    collection = load_locomo()
    print(f"settings:   rates={list(RATES)} rankings={list(RANKINGS)} defences=default k=1,5,10 seed=0")
    if not args.no_warm_up:
        cold, _, _ = lab(collection)
        print(f"\nfirst run (fills the embedding cache): {cold:.1f} s CPU")
    ran, proved, searches = lab(collection)
    baseline = raw(collection, searches)
    total = ran + proved
    print(f"\nwarm run: {ran:.1f} s CPU for the attack and its measures, {proved:.1f} s for the policy lab's proofs")
    print(f"whole memlab poison, warm: {total:.1f} s CPU (target: under 120 s)")
    print(f"raw sqlite3, the same {searches:,} searches and the loads: {baseline:.1f} s CPU")
    print(f"memlab poison / raw sqlite3: {total / baseline:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
