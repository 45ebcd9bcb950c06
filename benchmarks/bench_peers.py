"""Lexical peers: raw FTS5, sqlite-utils ``Table.search()``, tantivy, bm25s and memlab on the same corpus.

For each size N (``--sizes``) and engine, a fresh Python process (so peak memory is the engine's own)
loads the corpus of ``bench_store.py`` (N notes, written once per size to a pickle by the parent), builds
one index of all N documents (key, content, tags) and measures:

* build time (from the documents in memory to a searchable index, committed / checkpointed), wall and CPU (the
  process's, ``time.process_time``: what another process's load on the machine changes least);
* peak memory of the build: the process's peak RSS (``ru_maxrss``) minus its RSS just before the build
  (the corpus is already loaded);
* the index's size on disk (after a checkpoint for SQLite; bm25s is saved with ``BM25.save``);
* query p50/p95 over ``--queries`` queries of 1-3 words (OR of the words; top 10 ids and scores, then the
  key and content of the 10 winners), after a warm-up of 50;
* the same queries on one agent's partition: an index holding only 100 documents (agent 0's memories), as
  the folder store keeps each agent — what partitioning by agent buys over searching one big index.

Engines:

* ``fts5``: ``RawStore`` of ``bench_store.py`` (table + external-content FTS5, porter), ``executemany`` in
  batches of 1,000; query ``ORDER BY bm25(f, 2.0, 1.0, 1.0), rowid LIMIT 10`` then the winners' rows;
* ``sqlite-utils``: ``insert_all`` then ``enable_fts(..., tokenize="porter")``; ``Table.search(q, limit=10)``
  (ranked by FTS5 ``rank``; returns every column);
* ``tantivy``: on-disk index, ``en_stem`` tokenizer, one writer thread (SQLite is single-threaded too), 256 MB
  heap; ``parse_query`` over the three fields, ``search(q, 10)``, ``searcher.doc`` of each hit;
* ``bm25s``: ``bm25s.tokenize`` (no stemmer, English stop words), ``BM25().index``; ``retrieve(k=10)`` with
  one thread, ids mapped back to the documents in Python;
* ``langgraph``: LangGraph's ``SqliteStore`` (package ``langgraph-checkpoint-sqlite``) on a WAL file with
  ``synchronous=NORMAL``, one namespace, ``batch`` of 1,000 ``PutOp`` per call; ``search(namespace, query=q,
  limit=10)``: without an embedding index it ignores the query and returns the namespace's first 10 items, a
  filter, unranked (what the store offers for text without a model);
* ``memlab``: a folder store, one agent, every memory PUBLIC, ``memory_save_many`` (batches of 1,000, audit
  included); ``memory_search(q, max_results=10)`` at PUBLIC (rows, snippets and an audit row per call);
* ``memlabstore``: ``MemlabStore`` over a folder store at PUBLIC, loaded as ``langgraph`` is (``batch`` of
  1,000 ``PutOp``: one gated, audited ``memory_save`` each) and searched as it is (``search(namespace, query=q,
  limit=10)``, ranked): LangGraph's API over memlab against LangGraph's own ``SqliteStore``. Both builds include
  importing LangGraph's store (0.15-0.3 s, most of ``langgraph``'s build at 5,000). Their ratio is issue 37's put
  target (``PUT_TARGET``), printed after the table.

SQLite engines and memlab use the same MATCH expression (``memlab.search.match_expression``). Engines are
timed one after another in separate processes, not interleaved: the ratios are less robust than those of
``bench_store.py`` and ``bench_bulk.py``.

Usage::

    python benchmarks/bench_peers.py [--sizes 100000,1000000] [--queries 300] [--memlab-max 1000000]
                                     [--engines fts5,sqlite-utils,tantivy,bm25s,langgraph,memlab,memlabstore]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import WARMUP_CALLS, Corpus, Note, RawStore, environment  # noqa: E402

from memlab.levels import Level  # noqa: E402
from memlab.search import match_expression  # noqa: E402

ENGINES = ("fts5", "sqlite-utils", "tantivy", "bm25s", "langgraph", "memlab", "memlabstore")
PARTITION = 100


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    """The process's peak RSS (VmHWM), reset by ``reset_peak_rss``; ru_maxrss if /proc lacks it."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def reset_peak_rss() -> None:
    """Reset VmHWM to the current RSS (Linux ≥ 4.0), so the peak measured is the build's."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        pass


def disk_bytes(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def checkpoint(path: Path) -> None:
    for db in [path] if path.is_file() else sorted(path.rglob("*.db")):
        conn = sqlite3.connect(str(db))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        conn.close()


# -- engines: build(notes, where) -> search(query) -> list of (key, content) ------------------------------


def build_fts5(notes: Sequence[Note], where: Path) -> tuple[Callable[[str], list], Callable[[], None]]:
    path = where / "fts5.db"
    raw = RawStore(path)
    raw.load(notes)
    raw.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn = raw.conn

    def search(query: str) -> list:
        match = match_expression(query)
        if match is None:
            return []
        ranked = conn.execute(
            "SELECT rowid, bm25(f, 2.0, 1.0, 1.0) AS score FROM f WHERE f MATCH ? ORDER BY score, rowid LIMIT 10",
            (match,),
        ).fetchall()
        if not ranked:
            return []
        ids = [rowid for rowid, _ in ranked]
        found = dict(
            (row[0], row[1:])
            for row in conn.execute(
                f"SELECT id, key, content FROM memories WHERE id IN ({', '.join('?' * len(ids))})", ids
            )
        )
        return [found[i] for i in ids]

    return search, raw.close


def build_sqlite_utils(notes: Sequence[Note], where: Path) -> tuple[Callable[[str], list], Callable[[], None]]:
    import sqlite_utils

    db = sqlite_utils.Database(where / "sqlite-utils.db")
    db.enable_wal()
    db.execute("PRAGMA synchronous=NORMAL")
    table = db["docs"]
    table.insert_all(
        (
            {"id": n, "key": note.key, "content": note.content, "tags": " ".join(note.tags)}
            for n, note in enumerate(notes, 1)
        ),
        pk="id",
        batch_size=1_000,
    )
    table.enable_fts(["key", "content", "tags"], tokenize="porter")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def search(query: str) -> list:
        match = match_expression(query)
        if match is None:
            return []
        return [(row["key"], row["content"]) for row in table.search(match, limit=10)]

    return search, db.close


def build_tantivy(notes: Sequence[Note], where: Path) -> tuple[Callable[[str], list], Callable[[], None]]:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("key", stored=True)
    builder.add_text_field("content", stored=True, tokenizer_name="en_stem")
    builder.add_text_field("tags", stored=True)
    schema = builder.build()
    path = where / "tantivy"
    path.mkdir()
    index = tantivy.Index(schema, path=str(path))
    writer = index.writer(heap_size=256_000_000, num_threads=1)
    for note in notes:
        writer.add_document(tantivy.Document(key=note.key, content=note.content, tags=" ".join(note.tags)))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    fields = ["key", "content", "tags"]

    def search(query: str) -> list:
        words = [w for w in "".join(c if c.isalnum() else " " for c in query).split()]
        if not words:
            return []
        parsed = index.parse_query(" OR ".join(words), fields)
        hits = searcher.search(parsed, 10).hits
        return [(doc["key"][0], doc["content"][0]) for doc in (searcher.doc(address) for _, address in hits)]

    return search, lambda: None


def build_bm25s(notes: Sequence[Note], where: Path) -> tuple[Callable[[str], list], Callable[[], None]]:
    import bm25s

    texts = [f"{note.key} {note.content} {' '.join(note.tags)}" for note in notes]
    tokens = bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    retriever.save(str(where / "bm25s"))
    vocabulary = set(retriever.vocab_dict)

    def search(query: str) -> list:
        words = [
            w
            for w in bm25s.tokenize(query, stopwords="en", return_ids=False, show_progress=False)[0]
            if w in vocabulary
        ]
        if not words:
            return []
        ids, scores = retriever.retrieve([words], k=min(10, len(notes)), show_progress=False, n_threads=1)
        return [(notes[i].key, notes[i].content) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]

    return search, lambda: None


class LangGraphPeer:
    """LangGraph's ``SqliteStore`` holding the notes as items ``{"content", "tags"}`` of one namespace."""

    NAMESPACE = ("main",)

    def __init__(self, path: Path) -> None:
        from langgraph.store.sqlite import SqliteStore

        self.conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")  # memlab's persistence settings, not the store's default
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.store = SqliteStore(self.conn)
        self.store.setup()

    def load(self, notes: Sequence[Note]) -> None:
        """``batch`` of ``PutOp``, 1,000 per call."""
        from langgraph.store.base import PutOp

        for start in range(0, len(notes), 1_000):
            self.store.batch(
                [
                    PutOp(self.NAMESPACE, note.key, {"content": note.content, "tags": list(note.tags)})
                    for note in notes[start : start + 1_000]
                ]
            )

    def put(self, note: Note) -> None:
        self.store.put(self.NAMESPACE, note.key, {"content": note.content, "tags": list(note.tags)})

    def get(self, key: str) -> Any:
        return self.store.get(self.NAMESPACE, key)

    def search(self, query: str) -> list:
        return [(item.key, item.value["content"]) for item in self.store.search(self.NAMESPACE, query=query, limit=10)]

    def close(self) -> None:
        self.conn.close()


def build_langgraph(notes: Sequence[Note], where: Path) -> tuple[Callable[[str], list], Callable[[], None]]:
    peer = LangGraphPeer(where / "langgraph.db")
    peer.load(notes)
    peer.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return peer.search, peer.close


def build_memlab(notes: Sequence[Note], where: Path) -> tuple[Callable[[str], list], Callable[[], None]]:
    from memlab import MemoryStore

    store = MemoryStore(where / "memlab")
    session = store.session(taint=Level.PUBLIC, agent="main")
    session.memory_save_many(
        ({"key": n.key, "content": n.content, "tags": list(n.tags)} for n in notes), batch_size=1_000
    )
    store.storage.agent_storage("main").conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]

    def search(query: str) -> list:
        return [(hit.memory.key, hit.memory.content) for hit in session.memory_search(query, max_results=10)]

    return search, store.close


def build_memlab_langgraph(notes: Sequence[Note], where: Path) -> tuple[Callable[[str], list], Callable[[], None]]:
    from langgraph.store.base import PutOp

    from memlab import MemoryStore
    from memlab.integrations.langgraph import MemlabStore

    store = MemoryStore(where / "memlab")
    graph_store = MemlabStore(store, taint=Level.PUBLIC)
    namespace = LangGraphPeer.NAMESPACE
    for start in range(0, len(notes), 1_000):
        graph_store.batch(
            [
                PutOp(namespace, note.key, {"content": note.content, "tags": list(note.tags)})
                for note in notes[start : start + 1_000]
            ]
        )
    store.storage.agent_storage("main").conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]

    def search(query: str) -> list:
        return [(item.key, item.value["content"]) for item in graph_store.search(namespace, query=query, limit=10)]

    return search, store.close


BUILDERS = {
    "fts5": build_fts5,
    "sqlite-utils": build_sqlite_utils,
    "tantivy": build_tantivy,
    "bm25s": build_bm25s,
    "langgraph": build_langgraph,
    "memlab": build_memlab,
    "memlabstore": build_memlab_langgraph,
}


def time_queries(
    search: Callable[[str], list], queries: Sequence[str], warmup: Sequence[str]
) -> tuple[float, float, int]:
    for q in warmup:
        search(q)
    samples, hits = [], 0
    for q in queries:
        start = time.perf_counter()
        found = search(q)
        samples.append(time.perf_counter() - start)
        hits += bool(found)
    ordered = sorted(samples)
    return statistics.median(samples) * 1e6, ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)] * 1e6, hits


def worker(engine: str, data: Path, where: Path, queries_n: int, seed: int) -> dict[str, Any]:
    with open(data, "rb") as f:
        notes = [Note(key, content, tuple(tags), Level.PUBLIC) for key, content, tags in pickle.load(f)]
    corpus = Corpus(seed)
    queries = corpus.queries(queries_n, stream=2)
    warmup = corpus.queries(WARMUP_CALLS, stream=3)
    gc.collect()
    before = rss_bytes()
    reset_peak_rss()
    start, start_cpu = time.perf_counter(), time.process_time()
    full = where / "full"
    full.mkdir()
    search, close = BUILDERS[engine](notes, full)
    build_s, build_cpu_s = time.perf_counter() - start, time.process_time() - start_cpu
    peak = peak_rss_bytes() - before
    after = rss_bytes() - before
    p50, p95, hits = time_queries(search, queries, warmup)
    close()
    checkpoint_targets = [p for p in full.iterdir() if p.suffix == ".db" or p.is_dir()]
    for target in checkpoint_targets:
        if engine in ("fts5", "sqlite-utils", "langgraph", "memlab", "memlabstore"):
            checkpoint(target)
    size = sum(disk_bytes(p) for p in full.iterdir() if not p.name.endswith(("-wal", "-shm")))
    size += sum(p.stat().st_size for p in full.glob("*-wal")) + sum(p.stat().st_size for p in full.glob("*-shm"))

    part = where / "partition"
    part.mkdir()
    part_search, part_close = BUILDERS[engine](notes[:PARTITION], part)
    part_p50, part_p95, part_hits = time_queries(part_search, queries, warmup)
    part_close()
    return {
        "engine": engine,
        "size": len(notes),
        "build_s": build_s,
        "build_cpu_s": build_cpu_s,
        "peak_mb": peak / 1e6,
        "resident_after_mb": after / 1e6,
        "disk_mb": size / 1e6,
        "p50_us": p50,
        "p95_us": p95,
        "hits": hits,
        "part_p50_us": part_p50,
        "part_p95_us": part_p95,
        "part_hits": part_hits,
        "queries": len(queries),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated corpus sizes (default: %(default)s)")
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated (default: %(default)s)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--memlab-max", type=int, default=1_000_000, help="skip memlab above this size")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--where", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, Path(args.data), Path(args.where), args.queries, args.seed)))
        return
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    print("\n".join(environment()))
    versions = []
    for package in ("tantivy", "bm25s", "langgraph-checkpoint-sqlite", "numpy", "scipy"):
        try:
            from importlib.metadata import version

            versions.append(f"{package} {version(package)}")
        except Exception:  # noqa: BLE001
            versions.append(f"{package} ?")
    print(f"peers:      {', '.join(versions)}")
    print(f"settings:   sizes={sizes} engines={engines} queries={args.queries} partition={PARTITION} seed={args.seed}")
    corpus = Corpus(args.seed)
    results: list[dict[str, Any]] = []
    skipped: list[tuple[str, int]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memlab-peers-", dir=os.environ.get("BENCH_TMP")) as tmp:
        workdir = Path(tmp)
        for size in sizes:
            data = workdir / f"corpus-{size}.pickle"
            with open(data, "wb") as f:
                pickle.dump([(n.key, n.content, list(n.tags)) for n in corpus.notes(0, size)], f)
            for engine in engines:
                if engine.startswith("memlab") and size > args.memlab_max:
                    skipped.append((engine, size))
                    continue
                where = workdir / f"{engine}-{size}"
                where.mkdir()
                print(f"  {engine} at {size:,} ...", end=" ", flush=True)
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--worker",
                        engine,
                        "--data",
                        str(data),
                        "--where",
                        str(where),
                        "--queries",
                        str(args.queries),
                        "--seed",
                        str(args.seed),
                    ],
                    capture_output=True,
                    text=True,
                )
                if out.returncode != 0:
                    print(f"failed:\n{out.stderr[-2000:]}")
                    continue
                result = json.loads(out.stdout.strip().splitlines()[-1])
                build = f"build {result['build_s']:.2f} s ({result['build_cpu_s']:.2f} s CPU)"
                print(f"{build}, p50 {result['p50_us']:,.0f} µs", flush=True)
                results.append(result)
                shutil.rmtree(where)
            data.unlink()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\ntotal run time {time.perf_counter() - started:.0f} s; load average {load} at the end\n")
    header = (
        f"{'engine':<13} {'N':>9} {'build s':>8} {'CPU s':>6} {'docs/s':>9} {'peak MB':>8} {'disk MB':>8} "
        f"{'p50 µs':>9} {'p95 µs':>9} {'hits':>7} | {'100-doc partition p50':>21} {'p95':>8} {'speed-up p50':>12}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r['engine']:<13} {r['size']:>9,} {r['build_s']:>8.2f} {r['build_cpu_s']:>6.2f} "
            f"{r['size'] / r['build_s']:>9,.0f} "
            f"{r['peak_mb']:>8.0f} "
            f"{r['disk_mb']:>8.1f} {r['p50_us']:>9,.0f} {r['p95_us']:>9,.0f} {r['hits']:>3}/{r['queries']:<3} | "
            f"{r['part_p50_us']:>18,.0f} µs {r['part_p95_us']:>8,.0f} {r['p50_us'] / r['part_p50_us']:>11.1f}x"
        )
    for engine, size in skipped:
        print(f"{engine:<13} {size:>9,}  skipped (--memlab-max)")
    print()
    print(
        "peak MB = peak RSS (VmHWM, reset before the build) minus RSS before the build (corpus already loaded);\n"
        "disk MB after a checkpoint."
    )
    print("query = top 10 of an OR of the query's words, with the winners' key and content; memlab also makes snippets")
    print("and commits one audit row per search. hits = queries with at least one result.")
    put_target(results)


PUT_TARGET = 3.0
"""Issue 37: ``MemlabStore``'s build (``batch`` of ``PutOp``, every put a gated, audited save) at most this many times
LangGraph's ``SqliteStore``'s (which audits nothing)."""


def put_target(results: Sequence[dict[str, Any]]) -> None:
    """The build of ``memlabstore`` against ``langgraph``'s at each size both ran, wall and CPU, and the target."""
    builds = {(r["engine"], r["size"]): r for r in results}
    ratios = []
    for size in sorted({r["size"] for r in results}):
        ours, theirs = builds.get(("memlabstore", size)), builds.get(("langgraph", size))
        if ours and theirs:
            wall, cpu = ours["build_s"] / theirs["build_s"], ours["build_cpu_s"] / theirs["build_cpu_s"]
            ratios.append(wall)
            print(f"memlabstore build / langgraph build at {size:,}: {wall:.2f}x wall, {cpu:.2f}x CPU")
    if ratios:
        verdict = "met" if max(ratios) <= PUT_TARGET else "not met"
        print(f"target: memlabstore build <= {PUT_TARGET:g}x langgraph's (wall) at every size: {verdict}")


if __name__ == "__main__":
    main()
