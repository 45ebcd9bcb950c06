"""One agent, many memories: bulk import, search per taint, get and file size, memlab vs raw sqlite3.

For each size N (``--sizes``) the script builds, in a temporary directory, from the corpus of
``bench_store.py`` (keys ``note-{i}``, level PUBLIC / INTERNAL / CONFIDENTIAL by ``i % 3``):

* memlab: a folder store (``MemoryStore(path)``), one agent, loaded with ``memory_save_many`` (batches of
  1,000, one transaction each; every record versioned, indexed and audited) from three sessions, one per
  level, PUBLIC first;
* raw: ``RawStore`` of ``bench_store.py`` (one ``memories`` table, index on ``key``, one FTS5 table over
  every row, porter), loaded with ``executemany`` in batches of 1,000 (``RawStore.load``);
* raw-visible: for PUBLIC and INTERNAL taint, a RawStore holding only the rows a session at that taint
  may read (at CONFIDENTIAL that is every row: raw itself). memlab searches, at each taint, an index of
  exactly the visible rows, so this is the like-for-like baseline; raw over every row is the one asked for.

It then measures, interleaving memlab and raw call by call after a warm-up:

* bulk import time (memlab ÷ raw, target ≤ 2x);
* ``memory_search(q, max_results=10)`` p50/p95 at PUBLIC, INTERNAL and CONFIDENTIAL taint against
  ``SELECT rowid, bm25(f, 2.0, 1.0, 1.0) AS score FROM f WHERE f MATCH ? ORDER BY score, rowid LIMIT 10``
  (the same weights and order as memlab) on raw and on raw-visible; and, at CONFIDENTIAL, against raw
  returning what memlab returns too ("raw+rows": the 10 winners' rows, and FTS5 ``snippet()`` from a second
  MATCH restricted to their rowids; memlab makes its snippets in Python). Targets ≤ 1.5x at 10k, ≤ 1.1x at
  100k and above;
* ``memory_get`` at CONFIDENTIAL (every key visible) against a raw indexed lookup that also appends and
  commits one audit row (``RawStore.get_audited``; target ≤ 1.5x), and against the bare lookup;
* the size of every file, both sides, after ``PRAGMA wal_checkpoint(TRUNCATE)`` on every database, WAL
  included (target ≤ 1.5x).

Usage::

    python benchmarks/bench_bulk.py [--sizes 10000,100000] [--seed 0] [--queries 300] [--gets 1000]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import (  # noqa: E402
    LEVELS,
    RAW_BATCH,
    WARMUP_CALLS,
    Corpus,
    RawStore,
    Row,
    environment,
    interleaved,
    print_table,
)

from memlab import Level, MemoryStore  # noqa: E402
from memlab.search import match_expression  # noqa: E402

BULK_RATIO_TARGET = 2.0
GET_RATIO_TARGET = 1.5
SIZE_RATIO_TARGET = 1.5
BATCH = 1_000


def search_ratio_target(size: int) -> float:
    return 1.1 if size >= 100_000 else 1.5


def raw_search(raw: RawStore, query: str, limit: int = 10) -> list[tuple]:
    """Rank as memlab does: the same MATCH expression, bm25 weights and tie order; rowids and scores only."""
    match = match_expression(query)
    if match is None:
        return []
    return raw.conn.execute(
        "SELECT rowid, bm25(f, 2.0, 1.0, 1.0) AS score FROM f WHERE f MATCH ? ORDER BY score, rowid LIMIT ?",
        (match, limit),
    ).fetchall()


def raw_search_rows(raw: RawStore, query: str, limit: int = 10) -> list[tuple]:
    """``raw_search``, then the rows and snippets of the winners, as memlab returns them."""
    match = match_expression(query)
    if match is None:
        return []
    ranked = raw_search(raw, query, limit)
    if not ranked:
        return []
    ids = [rowid for rowid, _ in ranked]
    rows = raw.conn.execute(
        "SELECT m.id, m.key, m.content, m.tags, m.level, m.saved_at, snippet(f, 1, '**', '**', '…', 16) "
        f"FROM f JOIN memories m ON m.id = f.rowid WHERE f MATCH ? AND f.rowid IN ({', '.join('?' * len(ids))})",
        (match, *ids),
    )
    found = {row[0]: row for row in rows}
    return [found[rowid] for rowid in ids]


def checkpoint_and_size(paths: Sequence[Path]) -> int:
    """Checkpoint every database (TRUNCATE) and return the bytes of every file, WAL and shm included."""
    total = 0
    for path in paths:
        for db in [path] if path.is_file() else sorted(path.rglob("*.db")):
            conn = sqlite3.connect(str(db))
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            conn.close()
        files = path.rglob("*") if path.is_dir() else path.parent.glob(path.name + "*")
        total += sum(p.stat().st_size for p in files if p.is_file())
    return total


def bench_size(corpus: Corpus, size: int, args: argparse.Namespace, workdir: Path) -> list[Row]:
    notes = list(corpus.notes(0, size))
    queries = corpus.queries(args.queries, stream=2)
    warmup_queries = corpus.queries(WARMUP_CALLS, stream=3)
    rng = random.Random(corpus.seed * 31 + size)
    get_keys = [f"note-{rng.randrange(size)}" for _ in range(args.gets + WARMUP_CALLS)]

    raw_path = workdir / f"raw-{size}.db"
    raw = RawStore(raw_path)
    start = time.perf_counter()
    raw.load(notes)
    raw_load = time.perf_counter() - start
    print(f"  raw:    loaded {size:,} via executemany ×{RAW_BATCH} in {raw_load:.1f} s ({size / raw_load:,.0f} rows/s)")

    memlab_path = workdir / f"memlab-{size}"
    store = MemoryStore(memlab_path)
    sessions = {level: store.session(taint=level, agent="main") for level in LEVELS}
    start = time.perf_counter()
    for level in LEVELS:
        sessions[level].memory_save_many(
            ({"key": n.key, "content": n.content, "tags": list(n.tags)} for n in notes if n.level == level),
            batch_size=BATCH,
        )
    memlab_load = time.perf_counter() - start
    print(
        f"  memlab: loaded {size:,} via memory_save_many ×{BATCH} in {memlab_load:.1f} s "
        f"({size / memlab_load:,.0f} memories/s, {memlab_load / raw_load:.2f}x raw)",
        flush=True,
    )

    visible: dict[Level, RawStore] = {Level.CONFIDENTIAL: raw}
    for taint in (Level.PUBLIC, Level.INTERNAL):
        visible[taint] = RawStore(workdir / f"raw-{size}-{taint.name}.db")
        visible[taint].load([n for n in notes if n.level <= taint])

    # Same work on both sides: as many hits at every taint as raw over the visible rows, none above the taint.
    for q in queries[:50]:
        for taint, session in sessions.items():
            hits = session.memory_search(q, max_results=10)
            if len(hits) != len(raw_search(visible[taint], q)):
                raise SystemExit(f"search {q!r} at {taint.name}: {len(hits)} hits, raw-visible has a different count")
            if any(hit.memory.classification > taint for hit in hits):
                raise SystemExit(f"search {q!r} at {taint.name} returned a memory above it")

    def memlab_search(taint: Level) -> Callable[[str], object]:
        return lambda q: sessions[taint].memory_search(q, max_results=10)

    def on(target: RawStore) -> Callable[[str], object]:
        return lambda q: raw_search(target, q)

    search_calls: dict[str, Callable[[Any], object]] = {
        "PUBLIC": memlab_search(Level.PUBLIC),
        "INTERNAL": memlab_search(Level.INTERNAL),
        "CONFIDENTIAL": memlab_search(Level.CONFIDENTIAL),
        "raw": on(raw),
        "raw PUBLIC": on(visible[Level.PUBLIC]),
        "raw INTERNAL": on(visible[Level.INTERNAL]),
        "raw+rows": lambda q: raw_search_rows(raw, q),
    }
    interleaved(search_calls, warmup_queries)
    searches = interleaved(search_calls, queries)

    reader = sessions[Level.CONFIDENTIAL]
    for key in get_keys[:100]:
        memory, row = reader.memory_get(key), raw.get(key)
        if memory is None or row is None or memory.content != row[2]:
            raise SystemExit(f"memory_get({key!r}) disagrees with the raw lookup")
    get_calls: dict[str, Callable[[Any], object]] = {
        "memlab": reader.memory_get,
        "raw+audit": raw.get_audited,
        "raw": raw.get,
    }
    interleaved(get_calls, get_keys[:WARMUP_CALLS])
    gets = interleaved(get_calls, get_keys[WARMUP_CALLS:])

    store.close()
    for r in visible.values():
        r.close()
    memlab_bytes = checkpoint_and_size([memlab_path])
    raw_bytes = checkpoint_and_size([raw_path])
    print(f"  sizes after checkpoint: memlab {memlab_bytes / 1e6:.1f} MB, raw {raw_bytes / 1e6:.1f} MB")

    target = search_ratio_target(size)
    rows = [
        Row(
            "bulk import (s)",
            memlab_load,
            raw_load,
            "s",
            f"ratio ≤ {BULK_RATIO_TARGET:g}x",
            memlab_load / raw_load <= BULK_RATIO_TARGET,
        ),
        Row("bulk import rate (memories/s)", size / memlab_load, size / raw_load, "/s"),
    ]
    for taint in (Level.PUBLIC, Level.INTERNAL, Level.CONFIDENTIAL):
        mine = searches[taint.name]
        for stat in ("p50", "p95"):
            m = getattr(mine, f"{stat}_us")
            r_all = getattr(searches["raw"], f"{stat}_us")
            rows.append(
                Row(
                    f"search {taint.name} {stat} vs raw (all rows)",
                    m,
                    r_all,
                    "µs",
                    f"ratio ≤ {target:g}x",
                    m / r_all <= target,
                )
            )
            if taint != Level.CONFIDENTIAL:
                r_vis = getattr(searches[f"raw {taint.name}"], f"{stat}_us")
                rows.append(
                    Row(
                        f"search {taint.name} {stat} vs raw-visible",
                        m,
                        r_vis,
                        "µs",
                        f"ratio ≤ {target:g}x",
                        m / r_vis <= target,
                    )
                )
    for stat in ("p50", "p95"):
        m = getattr(searches["CONFIDENTIAL"], f"{stat}_us")
        rows.append(
            Row(f"search CONFIDENTIAL {stat} vs raw+rows", m, getattr(searches["raw+rows"], f"{stat}_us"), "µs")
        )
    for stat in ("p50", "p95"):
        m = getattr(gets["memlab"], f"{stat}_us")
        rows.append(
            Row(
                f"get {stat} vs lookup+audit commit",
                m,
                getattr(gets["raw+audit"], f"{stat}_us"),
                "µs",
                f"ratio ≤ {GET_RATIO_TARGET:g}x",
                m / getattr(gets["raw+audit"], f"{stat}_us") <= GET_RATIO_TARGET,
            )
        )
        rows.append(Row(f"get {stat} vs indexed lookup", m, getattr(gets["raw"], f"{stat}_us"), "µs"))
    rows.append(
        Row(
            "size after checkpoint, WAL incl. (MB)",
            memlab_bytes / 1e6,
            raw_bytes / 1e6,
            "MB",
            f"ratio ≤ {SIZE_RATIO_TARGET:g}x",
            memlab_bytes / raw_bytes <= SIZE_RATIO_TARGET,
        )
    )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--queries", type=int, default=300, help="timed searches per size (default: %(default)s)")
    parser.add_argument("--gets", type=int, default=1000, help="timed gets per size (default: %(default)s)")
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]

    print("\n".join(environment()))
    print(f"settings:   sizes={sizes} seed={args.seed} queries={args.queries} gets={args.gets}; batches of {BATCH:,}")
    corpus = Corpus(args.seed)
    results: dict[int, list[Row]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memlab-bulk-", dir=os.environ.get("BENCH_TMP")) as tmp:
        workdir = Path(tmp)
        for size in sizes:
            print(f"\nN = {size:,}", flush=True)
            results[size] = bench_size(corpus, size, args, workdir)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\ntotal run time {time.perf_counter() - started:.0f} s; load average {load} at the end\n")
    print_table(results, widths=(9, 42, 12))
    print("latencies per call (perf_counter), interleaved call by call after a warm-up of 50; search = max_results 10;")
    print(
        "raw ranks with the same MATCH expression, bm25(f, 2.0, 1.0, 1.0) and rowid tie order, and returns rowids and"
    )
    print("scores; raw+rows also fetches the winners' rows and snippets, as memlab does.")
    met = [row.met for rows in results.values() for row in rows if row.met is not None]
    print(f"targets met: {sum(met)}/{len(met)}")


if __name__ == "__main__":
    main()
