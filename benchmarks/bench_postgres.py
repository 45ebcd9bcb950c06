"""memlab on PostgreSQL beside memlab on SQLite (a store folder), in one run, on the same data.

For each size N both stores get the same corpus as ``bench_store.py`` (levels PUBLIC / INTERNAL /
CONFIDENTIAL by ``i % 3``) through ``memory_save_many``; then, interleaving the two backends call by call:

* single ``memory_save`` calls (each its own transaction);
* ``memory_get`` at CONFIDENTIAL, p50 / p95;
* ``memory_search`` at PUBLIC and CONFIDENTIAL, p50 / p95;
* the RLS overhead: the search and get SQL memlab runs, executed by hand as the session role (row-level
  security on) and as the owner (RLS does not apply to a table's owner), same statement and parameters, each
  in a transaction that first sets memlab's signed claim, as memlab does;
* ``store.purge`` of a few keys, p50 (PostgreSQL rewrites the table and its indexes: ``VACUUM FULL``).

After each bulk load the PostgreSQL table is ``VACUUM ANALYZE``d (as autovacuum would soon do).

``--agents`` stores that many agents with 10 memories each in both backends and times gets and searches of
random agents; ``--processes`` x ``--rounds`` runs that many processes at once, each saving a shared key,
its own key and reading it back, and checks no write was lost and versions have no gaps.

Usage::

    python benchmarks/bench_postgres.py [--sizes 10000,100000] [--agents 10000] [--processes 8 --rounds 500]
        [--purges 5]
        [--db postgresql://owner@host/db]

Without ``--db`` a throwaway server is started from the machine's PostgreSQL binaries (``tests/pgserver.py``),
``fsync=off`` as in the tests: the figures are of the CPU-bound work, not of a disk's flush latency.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402
from bench_store import Corpus, Note, Timings, environment, interleaved  # noqa: E402

from memlab import Level, MemoryStore  # noqa: E402
from memlab.storage.postgres import PostgresStorage  # noqa: E402

BATCH = 1_000


@contextmanager
def databases(url: str | None) -> Iterator[Callable[[], str]]:
    """Yields a function that makes a fresh database (on ``url``'s server, or on a throwaway one)."""
    if url is not None:
        made: list[str] = []

        def fresh() -> str:
            name = f"bench_{len(made)}_{random.randrange(1 << 30)}"
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {name}")
            made.append(name)
            return url.rsplit("/", 1)[0] + "/" + name

        yield fresh
        return
    from tests.pgserver import running_server, stop_server

    server = running_server()
    try:
        yield server.fresh_database
    finally:
        stop_server()


def load(store: MemoryStore, notes: Sequence[Note], agent: str = "main") -> float:
    """Bulk-load ``notes`` (one session per level, batches of BATCH); returns memories per second."""
    started = time.perf_counter()
    sessions = {level: store.session(level, agent) for level in {note.level for note in notes}}
    for level, session in sessions.items():
        mine = [{"key": n.key, "content": n.content, "tags": list(n.tags)} for n in notes if n.level == level]
        for start in range(0, len(mine), BATCH):
            session.memory_save_many(mine[start : start + BATCH], batch_size=BATCH)
    return len(notes) / (time.perf_counter() - started)


Line = tuple[str, float, float, str]  # measure, sqlite, postgres, unit


def bench_size(corpus: Corpus, size: int, args: argparse.Namespace, fresh: Callable[[], str], tmp: Path) -> list[Line]:
    notes = list(corpus.notes(0, size))
    sqlite, postgres = MemoryStore(tmp / f"store-{size}"), MemoryStore(fresh())
    lines: list[Line] = [("bulk load (memory_save_many)", load(sqlite, notes), load(postgres, notes), "/s")]
    analyze(postgres.storage)
    print(f"  loaded {size:,} memories", flush=True)
    stores = {"sqlite": sqlite, "postgres": postgres}
    writers = {name: store.session(Level.INTERNAL) for name, store in stores.items()}
    extra = list(corpus.notes(size, args.saves, stream=2))
    saves = interleaved(
        {
            name: (lambda note, s=s: s.memory_save(note.key, note.content, tags=list(note.tags)))
            for name, s in writers.items()
        },
        extra,
    )
    lines.append(("single saves", saves["sqlite"].rate, saves["postgres"].rate, "/s"))
    rng = random.Random(size)
    readers = {name: store.session(Level.CONFIDENTIAL) for name, store in stores.items()}
    keys = [f"note-{rng.randrange(size)}" for _ in range(args.gets)]
    gets = interleaved({name: (lambda key, s=s: s.memory_get(key)) for name, s in readers.items()}, keys)
    lines += _percentiles("get, CONFIDENTIAL", gets)
    queries = corpus.queries(args.queries, stream=3)
    for level in (Level.PUBLIC, Level.CONFIDENTIAL):
        sessions = {name: store.session(level) for name, store in stores.items()}
        for name, session in sessions.items():
            for query in queries[:20]:
                assert all(hit.memory.classification <= level for hit in session.memory_search(query)), name
        searches = interleaved(
            {name: (lambda query, s=s: s.memory_search(query, max_results=10)) for name, s in sessions.items()},
            queries,
        )
        lines += _percentiles(f"search top 10, {level.name}", searches)
    lines += rls_overhead(postgres.storage, queries, keys)
    purged = [f"note-{n}" for n in rng.sample(range(size), args.purges)]
    purges = interleaved(
        {name: (lambda key, s=s: s.purge("main", key, reason="bench")) for name, s in stores.items()}, purged
    )
    lines.append(
        (
            "purge one key p50 (PostgreSQL: VACUUM FULL)",
            purges["sqlite"].p50_us / 1e3,
            purges["postgres"].p50_us / 1e3,
            "ms",
        )
    )
    sqlite.close()
    postgres.close()
    return lines


def analyze(storage: PostgresStorage) -> None:
    """What autovacuum would do soon after a bulk load, done now: planner statistics and the visibility map.
    Without them the first searches after a load plan blind (p95 above 1 s at 10k memories)."""
    with psycopg.connect(storage.url, autocommit=True) as conn:
        conn.execute(f"VACUUM ANALYZE {storage.schema}.memories")


def _percentiles(measure: str, timings: dict[str, Timings]) -> list[Line]:
    return [
        (f"{measure} p50", timings["sqlite"].p50_us / 1e3, timings["postgres"].p50_us / 1e3, "ms"),
        (f"{measure} p95", timings["sqlite"].percentile(95) * 1e3, timings["postgres"].percentile(95) * 1e3, "ms"),
    ]


def rls_overhead(storage: PostgresStorage, queries: Sequence[str], keys: Sequence[str]) -> list[Line]:
    """memlab's search and get SQL by hand, as the session role (RLS) and as the owner (no RLS), at PUBLIC.

    The table's 'sqlite' column holds the owner's time, 'postgres' the session role's."""
    options = f"-c search_path={storage.schema}"
    owner = psycopg.connect(storage.url, autocommit=True, options=options)
    session = psycopg.connect(storage.url, autocommit=True, options=options, user=storage.session_role)
    from memlab.search.query import query_terms

    def run(conn, sql: str, parameters: tuple) -> None:
        with conn.transaction(), conn.cursor() as cursor:
            storage._claim(cursor, "main", Level.PUBLIC)  # as memlab does: the owner's search needs it too
            cursor.execute(sql, parameters).fetchall()

    search = storage.search_statement
    searches = interleaved(
        {
            name: (lambda query, c=conn: run(c, search, (" | ".join(query_terms(query)), "main", 0, 0, 10)))
            for name, conn in (("sqlite", owner), ("postgres", session))
        },
        queries,
    )
    get = (
        "SELECT key, content FROM memories m WHERE agent = %s AND key = %s AND classification <= %s AND current "
        "AND deleted_at IS NULL ORDER BY classification DESC LIMIT 1"
    )
    gets = interleaved(
        {
            name: (lambda key, c=conn: run(c, get, ("main", key, 0)))
            for name, conn in (("sqlite", owner), ("postgres", session))
        },
        keys,
    )
    owner.close()
    session.close()
    return [
        (
            "RLS: search SQL p50, owner | session role",
            searches["sqlite"].p50_us / 1e3,
            searches["postgres"].p50_us / 1e3,
            "ms",
        ),
        ("RLS: get SQL p50, owner | session role", gets["sqlite"].p50_us / 1e3, gets["postgres"].p50_us / 1e3, "ms"),
    ]


def bench_agents(corpus: Corpus, agents: int, fresh: Callable[[], str], tmp: Path) -> list[Line]:
    """``agents`` agents of 10 memories each; gets and searches of random agents."""
    stores = {"sqlite": MemoryStore(tmp / "agents"), "postgres": MemoryStore(fresh())}
    rates = {}
    for name, store in stores.items():
        started = time.perf_counter()
        for n in range(agents):
            notes = [{"key": note.key, "content": note.content} for note in corpus.notes(n * 10, 10, stream=4)]
            store.session(Level.PUBLIC, f"agent-{n}").memory_save_many(notes)
        rates[name] = agents / (time.perf_counter() - started)
        if name == "postgres":
            analyze(store.storage)
        print(f"  {name}: {agents:,} agents loaded", flush=True)
    rng = random.Random(agents)
    picks = [(f"agent-{rng.randrange(agents)}", q, f"note-{rng.randrange(10)}") for q in corpus.queries(500, stream=5)]
    gets = interleaved(
        {name: (lambda pick, s=s: s.session(Level.PUBLIC, pick[0]).memory_get(pick[2])) for name, s in stores.items()},
        picks,
    )
    searches = interleaved(
        {
            name: (lambda pick, s=s: s.session(Level.PUBLIC, pick[0]).memory_search(pick[1]))
            for name, s in stores.items()
        },
        picks,
    )
    for store in stores.values():
        store.close()
    return [
        ("agents loaded (10 memories each, one batch)", rates["sqlite"], rates["postgres"], "/s"),
        *_percentiles("new session + get", gets),
        *_percentiles("new session + search", searches),
    ]


WORKER = """
import sys
from memlab import MemoryStore, Level
path, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
with MemoryStore(path) as store:
    s = store.session(Level.INTERNAL, session_id=f"{name}-{path[-6:]}")
    for n in range(rounds):
        s.memory_save("counter", f"{name} {n}")
        s.memory_save(f"{name}-{n}", f"note {n} from {name}")
        assert s.memory_get(f"{name}-{n}").content == f"note {n} from {name}"
"""


def bench_processes(processes: int, rounds: int, fresh: Callable[[], str], tmp: Path) -> list[Line]:
    """``processes`` processes at once, ``rounds`` x (2 saves + 1 get) each; then check every write is there."""
    seconds = {}
    for name, target in (("sqlite", str(tmp / "concurrent")), ("postgres", fresh())):
        MemoryStore(target).close()
        started = time.perf_counter()
        children = [
            subprocess.Popen([sys.executable, "-c", textwrap.dedent(WORKER), target, f"w{n}", str(rounds)], cwd=ROOT)
            for n in range(processes)
        ]
        if [child.wait() for child in children] != [0] * processes:
            raise SystemExit(f"{name}: a worker failed")
        seconds[name] = time.perf_counter() - started
        with MemoryStore(target) as store:
            versions = store.history("counter")["version"].tolist()
            assert versions == list(range(1, processes * rounds + 1)), f"{name}: lost or duplicated versions"
            assert len(store.session(Level.INTERNAL).memory_list()) == processes * rounds + 1, name
            assert store.verify().ok, name
        print(f"  {name}: {processes} x {rounds} done in {seconds[name]:.1f} s, every write there", flush=True)
    calls = processes * rounds * 3
    return [
        (
            f"{processes} processes x {rounds} x (2 saves + get)",
            calls / seconds["sqlite"],
            calls / seconds["postgres"],
            "/s",
        )
    ]


def print_lines(title: str, lines: list[Line]) -> None:
    print(f"\n{title}")
    print(f"{'measure':<48} {'sqlite':>12} {'postgres':>12} {'pg/sqlite':>10}")
    for measure, sqlite, postgres, unit in lines:
        fmt = (lambda v: f"{v:,.0f}/s") if unit == "/s" else (lambda v: f"{v:,.2f} ms")
        print(f"{measure:<48} {fmt(sqlite):>12} {fmt(postgres):>12} {postgres / sqlite:>9.2f}x")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--saves", type=int, default=1000, help="timed single saves per size")
    parser.add_argument("--gets", type=int, default=1000, help="timed gets per size")
    parser.add_argument("--queries", type=int, default=300, help="timed searches per size and level")
    parser.add_argument("--purges", type=int, default=5, help="timed purges per size")
    parser.add_argument("--agents", type=int, default=10_000, help="agents of 10 memories (0: skip)")
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=500, help="rounds per process (0: skip)")
    parser.add_argument("--db", default=None, help="a postgresql:// URL of a role that may create databases")
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    print("\n".join(environment()))
    print(f"postgres:   {'--db' if args.db else 'throwaway server from tests/pgserver.py (fsync=off)'}")
    corpus = Corpus(args.seed)
    started = time.perf_counter()
    with databases(args.db) as fresh, tempfile.TemporaryDirectory(prefix="memlab-bench-pg-") as tmp:
        for size in sizes:
            print(f"\nN = {size:,}", flush=True)
            print_lines(f"N = {size:,} memories, one agent", bench_size(corpus, size, args, fresh, Path(tmp)))
        if args.agents:
            print(f"\n{args.agents:,} agents", flush=True)
            print_lines(f"{args.agents:,} agents", bench_agents(corpus, args.agents, fresh, Path(tmp)))
        if args.rounds:
            print("\nconcurrent processes", flush=True)
            print_lines("one store, many processes", bench_processes(args.processes, args.rounds, fresh, Path(tmp)))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
