"""memlab on PostgreSQL against its floor: hand-written psycopg doing the same work with the same guarantees.

For each size N one store gets ``bench_store.py``'s corpus (levels PUBLIC / INTERNAL / CONFIDENTIAL by
``i % 3``) through ``memory_save_many``, then is ``VACUUM ANALYZE``d. The floor works on that very store, as
the session role with row-level security on, through one connection of its own, in pipeline mode with every
statement prepared: per call one transaction that sets the same signed claim (its mac over the transaction's
id, so it needs the id first), locks the chain's head ``FOR UPDATE``, does the call's SQL, appends the same
audit row (same fields, same sha256 chain hash, ``memlab.storage.chain``) and moves the head. A save writes
the same version row (salt, HMAC commitment, the digest its audit row carries) under the same advisory lock.
That is three round trips a call, which is the least this design allows: the claim needs the transaction's
id, and the audit row (hashed client-side, as memlab hashes it) needs what the call read and the head.

The search's ranking SQL is memlab's own (``PostgresStorage._search_sql``: the effective view, shadowing and
``ts_rank`` under row-level security, which ``bench_postgres.py`` measures against the owner's); the floor
renders no snippets, memlab does. Measured, interleaving memlab and the floor call by call, ``--repeats``
times (the medians of the repeats are shown):

* ``memory_get`` at CONFIDENTIAL; single ``memory_save`` calls at INTERNAL (new keys, each its own
  transaction); ``memory_search`` top 10 at PUBLIC and CONFIDENTIAL;
* round trips per call (libpq's protocol trace, ``tests.pgserver.round_trips``).

Checked afterwards: the floor's gets and searches return what memlab's do, and ``store.verify()`` holds
with the floor's versions and audit rows in the chains (a floor that wrote a different row would break it).

Usage::

    python benchmarks/bench_postgres_floor.py [--sizes 10000,100000] [--repeats 3] [--db postgresql://...]

Without ``--db`` a throwaway server is started (``tests/pgserver.py``, ``fsync=off``).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import random
import secrets
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402
from bench_postgres import analyze, databases, load  # noqa: E402
from bench_store import Corpus, environment, interleaved  # noqa: E402

from memlab import Level, MemoryStore  # noqa: E402
from memlab.search.query import query_terms  # noqa: E402
from memlab.storage import chain  # noqa: E402
from memlab.storage.postgres import PostgresStorage  # noqa: E402
from tests.pgserver import round_trips  # noqa: E402

AGENT = "main"
NAMES = [level.name for level in Level]
HEAD = "SELECT seq, hash FROM chain_heads WHERE agent = %s AND taint = %s FOR UPDATE"
MOVE = "UPDATE chain_heads SET seq = %s, hash = %s WHERE agent = %s AND taint = %s"
AUDIT = (
    "INSERT INTO audit (seq, at, session_id, agent, taint, tool, key, query, outcome, records, notes, message, "
    "digest, hash) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
GET = (
    "SELECT m.key, m.content, m.tags, m.classification, m.version FROM memories m WHERE agent = %s AND key = %s "
    "AND classification <= %s AND current AND deleted_at IS NULL ORDER BY classification DESC LIMIT 1"
)
STEP_DOWN = (
    "UPDATE memories SET current = false WHERE agent = %s AND classification = %s AND key = %s AND current "
    "RETURNING version"
)
INSERT = (
    "INSERT INTO memories (agent, key, content, tags, classification, version, saved_at, saved_by, salt, "
    "commitment, current) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, true)"
)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class Floor:
    """memlab's get, save and search written minimally: one pipelined transaction of three round trips each."""

    def __init__(self, storage: PostgresStorage) -> None:
        self.conn = psycopg.connect(
            storage.url,
            autocommit=True,
            user=storage.session_role,
            options=f"-c search_path={storage.schema}",
            prepare_threshold=0,
        )
        self.key, self.search_sql = storage._key, storage._search_sql

    # Every statement on a cursor of its own (``Connection.execute``): in a pipeline a result lands on the
    # cursor that sent its statement whenever it arrives, so a cursor that sent two could be read for the first.

    def _begin(self, taint: int) -> None:
        run = self.conn.execute
        run("BEGIN")
        txid = run("SELECT pg_current_xact_id()::text").fetchone()[0]
        message = f"{AGENT}|{taint}|{txid}"
        mac = hmac.new(self.key, message.encode(), hashlib.sha256).hexdigest()
        run("SELECT set_config('memlab.claim', %s, true)", (f"{message}|{mac}",))

    def _audit(self, head, session, taint, tool, key, query, records, digest=None) -> None:
        seq, previous = head.fetchone()
        fields = (seq + 1, now(), session, AGENT, NAMES[taint], tool, key, query, "ok")
        fields += (json.dumps(records) if records else "[]", "[]", None, digest)
        hashed = chain.audit_hash(previous, fields)
        self.conn.execute(AUDIT, (*fields, hashed))
        self.conn.execute(MOVE, (seq + 1, hashed, AGENT, taint))
        self.conn.execute("COMMIT")

    def get(self, session: str, taint: int, key: str):
        with self.conn.pipeline():
            self._begin(taint)
            head = self.conn.execute(HEAD, (AGENT, taint))
            row = self.conn.execute(GET, (AGENT, key, taint)).fetchone()
            self._audit(head, session, taint, "memory_get", key, None, [f"{key}@{NAMES[row[3]]}/v{row[4]}"])
        return row

    def save(self, session: str, level: int, key: str, content: str, tags: Sequence[str]) -> int:
        saved_at, salt, tags_json = now(), secrets.token_bytes(16), json.dumps(list(tags))
        commitment = chain.commitment(salt, content, tags_json)
        lock = hashlib.sha256(f"{AGENT}\x1f{key}\x1f{level}".encode()).digest()[:8]
        with self.conn.pipeline():
            self._begin(level)
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (int.from_bytes(lock, "big", signed=True),))
            stepped = self.conn.execute(STEP_DOWN, (AGENT, level, key))
            head = self.conn.execute(HEAD, (AGENT, level))
            previous = stepped.fetchone()
            version = previous[0] + 1 if previous else 1
            digest = chain.version_digest(AGENT, key, level, version, saved_at, session, commitment)
            self.conn.execute(
                INSERT, (AGENT, key, content, tags_json, level, version, saved_at, session, salt, commitment)
            )
            ref = f"{key}@{NAMES[level]}/v{version}"
            self._audit(head, session, level, "memory_save", key, None, [ref], digest)
        return version

    def search(self, session: str, taint: int, query: str, limit: int = 10) -> list[str]:
        terms = " | ".join(query_terms(query))
        with self.conn.pipeline():
            self._begin(taint)
            head = self.conn.execute(HEAD, (AGENT, taint))
            rows = self.conn.execute(self.search_sql, (terms, AGENT, taint, taint, limit)).fetchall()
            refs = [f"{row[0]}@{NAMES[row[3]]}/v{row[4]}" for row in rows]
            self._audit(head, session, taint, "memory_search", None, query, refs)
        return [row[0] for row in rows]


Line = tuple[str, float, float, str]  # measure, memlab, floor, unit ("us" or "rt")


def repeated(calls: dict[str, Callable], items: Sequence, repeats: int) -> tuple[float, float, float]:
    """memlab's and the floor's p50 (us), each the median of ``repeats`` interleaved runs, and the median ratio."""
    runs = [interleaved(calls, items) for _ in range(repeats)]
    memlab = [run["memlab"].p50_us for run in runs]
    floor = [run["floor"].p50_us for run in runs]
    ratio = statistics.median(m / f for m, f in zip(memlab, floor, strict=True))
    return statistics.median(memlab), statistics.median(floor), ratio


def bench_size(corpus: Corpus, size: int, args: argparse.Namespace, fresh: Callable[[], str]) -> list[tuple]:
    store = MemoryStore(fresh())
    load(store, list(corpus.notes(0, size)))
    analyze(store.storage)
    print(f"  loaded {size:,} memories", flush=True)
    floor = Floor(store.storage)
    lines: list[tuple] = []
    pooled = list(store.storage._pool._pool)

    def trips(memlab_call: Callable[[], object], floor_call: Callable[[], object]) -> tuple[int, int]:
        with round_trips(pooled) as m:
            memlab_call()
        with round_trips([floor.conn]) as f:
            floor_call()
        return m[0], f[0]

    rng = random.Random(size)
    reader = store.session(Level.CONFIDENTIAL)
    taint = int(Level.CONFIDENTIAL)
    keys = [f"note-{rng.randrange(size)}" for _ in range(args.gets)]
    for key in keys[:20]:  # warm: prepared statements on both sides, and the same answers
        assert reader.memory_get(key).content == floor.get(reader.id, taint, key)[1], key
    get = repeated(
        {"memlab": reader.memory_get, "floor": lambda key: floor.get(reader.id, taint, key)}, keys, args.repeats
    )
    lines.append(
        (
            "get, CONFIDENTIAL p50",
            *get,
            trips(lambda: reader.memory_get(keys[0]), lambda: floor.get(reader.id, taint, keys[0])),
        )
    )

    writer = store.session(Level.INTERNAL)
    level = int(Level.INTERNAL)
    notes = list(corpus.notes(size, args.saves * (args.repeats + 1), stream=2))
    batches = [notes[n * args.saves : (n + 1) * args.saves] for n in range(args.repeats + 1)]
    for note in batches[0][:20]:
        writer.memory_save(f"m-{note.key}", note.content, tags=list(note.tags))
        floor.save(writer.id, level, f"f-{note.key}", note.content, note.tags)
    runs = []
    for batch in batches[1:]:
        runs.append(
            interleaved(
                {
                    "memlab": lambda note: writer.memory_save(f"m-{note.key}", note.content, tags=list(note.tags)),
                    "floor": lambda note: floor.save(writer.id, level, f"f-{note.key}", note.content, note.tags),
                },
                batch,
            )
        )
    memlab_p50 = statistics.median(run["memlab"].p50_us for run in runs)
    floor_p50 = statistics.median(run["floor"].p50_us for run in runs)
    ratio = statistics.median(run["memlab"].p50_us / run["floor"].p50_us for run in runs)
    extra = batches[0][-1]
    lines.append(
        (
            "single save, INTERNAL p50",
            memlab_p50,
            floor_p50,
            ratio,
            trips(
                lambda: writer.memory_save(f"m-{extra.key}", "again", tags=["x"]),
                lambda: floor.save(writer.id, level, f"f-{extra.key}", "again", ["x"]),
            ),
        )
    )

    queries = corpus.queries(args.queries, stream=3)
    for searched in (Level.PUBLIC, Level.CONFIDENTIAL):
        session, taint = store.session(searched), int(searched)
        for query in queries[:20]:
            mine = [hit.memory.key for hit in session.memory_search(query, max_results=10)]
            assert mine == floor.search(session.id, taint, query), query
        search = repeated(
            {
                "memlab": lambda query, s=session: s.memory_search(query, max_results=10),
                "floor": lambda query, s=session, t=taint: floor.search(s.id, t, query),
            },
            queries,
            args.repeats,
        )
        lines.append(
            (
                f"search top 10, {searched.name} p50",
                *search,
                trips(
                    lambda s=session: s.memory_search(queries[0]),
                    lambda s=session, t=taint: floor.search(s.id, t, queries[0]),
                ),
            )
        )
    result = store.verify()
    assert result.ok, result.problems[:5]
    floor.conn.close()
    store.close()
    return lines


def print_lines(title: str, lines: list[tuple]) -> None:
    print(f"\n{title}")
    print(f"{'measure':<30} {'memlab':>10} {'floor':>10} {'memlab/floor':>13} {'round trips':>12}")
    for measure, memlab, floor, ratio, (memlab_trips, floor_trips) in lines:
        print(
            f"{measure:<30} {memlab / 1e3:>7.3f} ms {floor / 1e3:>7.3f} ms {ratio:>12.2f}x "
            f"{f'{memlab_trips} | {floor_trips}':>12}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per measure (medians shown)")
    parser.add_argument("--gets", type=int, default=500, help="timed gets per run")
    parser.add_argument("--saves", type=int, default=300, help="timed single saves per run")
    parser.add_argument("--queries", type=int, default=200, help="timed searches per run and level")
    parser.add_argument("--db", default=None, help="a postgresql:// URL of a role that may create databases")
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    print("\n".join(environment()))
    print(f"postgres:   {'--db' if args.db else 'throwaway server from tests/pgserver.py (fsync=off)'}")
    print(f"psycopg:    {psycopg.__version__} (libpq {psycopg.pq.version()}), {args.repeats} repeats")
    corpus = Corpus(args.seed)
    started = time.perf_counter()
    with databases(args.db) as fresh:
        for size in sizes:
            print(f"\nN = {size:,}", flush=True)
            print_lines(
                f"N = {size:,} memories, one agent (p50, medians of {args.repeats} runs)",
                bench_size(corpus, size, args, fresh),
            )
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
