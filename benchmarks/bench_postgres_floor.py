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

The floor comes twice. ``floor`` wraps each call in BEGIN ... COMMIT sent as statements and sends each write
on its own (a get: 8 statements, a save: 10). ``lean`` is the same work in the fewest statements, as memlab
sends them: the pipeline's Sync is the transaction (PostgreSQL commits what was sent before it, or nothing if
a statement failed), and a call's writes (the version, the audit row, the head's move) go as one statement
(data-modifying ``WITH`` queries): a get 5, a save 6.

The search's ranking SQL is memlab's own (``PostgresStorage.search_statement``: the effective view, shadowing and
``ts_rank`` under row-level security, which ``bench_postgres.py`` measures against the owner's); the floor
renders no snippets, memlab does. Measured, interleaving memlab and the floor call by call, ``--repeats``
times (the medians of the repeats are shown):

* ``memory_get`` at CONFIDENTIAL; single ``memory_save`` calls at INTERNAL (new keys, each its own
  transaction); ``memory_search`` top 10 at PUBLIC and CONFIDENTIAL;
* round trips and statements per call (libpq's protocol trace).

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
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
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
    """memlab's get, save and search written minimally: one pipelined transaction of three round trips each;
    ``lean``: in the fewest statements (no BEGIN or COMMIT; the writes as one statement)."""

    def __init__(self, storage: PostgresStorage, *, lean: bool = False) -> None:
        self.conn = psycopg.connect(
            storage.url,
            autocommit=True,
            user=storage.session_role,
            options=f"-c search_path={storage.schema}",
            prepare_threshold=0,
        )
        self.key, self.search_sql, self.lean = storage._key, storage.search_statement, lean

    # Every statement on a cursor of its own (``Connection.execute``): in a pipeline a result lands on the
    # cursor that sent its statement whenever it arrives, so a cursor that sent two could be read for the first.

    def _begin(self, taint: int) -> None:
        run = self.conn.execute
        if not self.lean:
            run("BEGIN")
        txid = run("SELECT pg_current_xact_id()::text").fetchone()[0]
        message = f"{AGENT}|{taint}|{txid}"
        mac = hmac.new(self.key, message.encode(), hashlib.sha256).hexdigest()
        run("SELECT set_config('memlab.claim', %s, true)", (f"{message}|{mac}",))

    def _audit(self, head, session, taint, tool, key, query, records, digest=None, version=()) -> None:
        """Write ``version`` (the INSERT's parameters, for a save) and the audit row, move the head, commit."""
        seq, previous = head.fetchone()
        fields = (seq + 1, now(), session, AGENT, NAMES[taint], tool, key, query, "ok")
        fields += (json.dumps(records) if records else "[]", "[]", None, digest)
        hashed = chain.audit_hash(previous, fields)
        move = (seq + 1, hashed, AGENT, taint)
        if self.lean:
            writes = [f"v AS ({INSERT})"] * bool(version) + [f"a AS ({AUDIT})"]
            self.conn.execute(f"WITH {', '.join(writes)} {MOVE}", (*version, *fields, hashed, *move))
            return  # the pipeline's Sync commits
        if version:
            self.conn.execute(INSERT, version)
        self.conn.execute(AUDIT, (*fields, hashed))
        self.conn.execute(MOVE, move)
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
            row = (AGENT, key, content, tags_json, level, version, saved_at, session, salt, commitment)
            ref = f"{key}@{NAMES[level]}/v{version}"
            self._audit(head, session, level, "memory_save", key, None, [ref], digest, row)
        return version

    def search(self, session: str, taint: int, query: str, limit: int = 10) -> list[str]:
        terms = " | ".join(query_terms(query))
        with self.conn.pipeline():
            self._begin(taint)
            head = self.conn.execute(HEAD, (AGENT, taint))
            parameters = {"terms": terms, "agent": AGENT, "level": taint, "categories": [], "floor": 0, "limit": limit}
            rows = self.conn.execute(self.search_sql, parameters).fetchall()
            refs = [f"{row[0]}@{NAMES[row[3]]}/v{row[4]}" for row in rows]
            self._audit(head, session, taint, "memory_search", None, query, refs)
        return [row[0] for row in rows]


@contextmanager
def protocol(connections: Sequence) -> Iterator[list[int]]:
    """Count round trips and statements on psycopg ``connections`` inside the block (``[round trips,
    statements]`` once it ends), from libpq's trace: a round trip where the client, having sent, reads the
    server's answer; a statement per Execute message."""
    traced = [(conn, tempfile.TemporaryFile("w+")) for conn in connections]
    for conn, trace in traced:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
    counted = [0, 0]
    try:
        yield counted
    finally:
        for conn, trace in traced:
            conn.pgconn.untrace()
            trace.seek(0)
            last = ""
            for line in trace:
                sender, _length, message = line.split("\t")[:3]
                counted[0] += sender == "B" and last == "F"
                counted[1] += sender == "F" and message.strip() == "Execute"
                last = sender
            trace.close()


SIDES = ("memlab", "floor", "lean")


def repeated(calls: dict[str, Callable], items: Sequence, repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Each side's p50 (us), the median of ``repeats`` interleaved runs, and memlab's median ratio to each floor."""
    runs = [interleaved(calls, items) for _ in range(repeats)]
    p50 = {side: statistics.median(run[side].p50_us for run in runs) for side in SIDES}
    ratio = {
        side: statistics.median(run["memlab"].p50_us / run[side].p50_us for run in runs) for side in ("floor", "lean")
    }
    return p50, ratio


def bench_size(corpus: Corpus, size: int, args: argparse.Namespace, fresh: Callable[[], str]) -> list[tuple]:
    store = MemoryStore(fresh())
    load(store, list(corpus.notes(0, size)))
    analyze(store.storage)
    print(f"  loaded {size:,} memories", flush=True)
    floors = {"floor": Floor(store.storage), "lean": Floor(store.storage, lean=True)}
    lines: list[tuple] = []
    pooled = list(store.storage._pool._pool)

    def counted(calls: dict[str, Callable[[], object]]) -> dict[str, list[int]]:
        """Round trips and statements of one call of each side."""
        found = {}
        for side, call in calls.items():
            with protocol(pooled if side == "memlab" else [floors[side].conn]) as found[side]:
                call()
        return found

    rng = random.Random(size)
    reader = store.session(Level.CONFIDENTIAL)
    taint = int(Level.CONFIDENTIAL)
    keys = [f"note-{rng.randrange(size)}" for _ in range(args.gets)]
    for key in keys[:20]:  # warm: prepared statements on every side, and the same answers
        for floor in floors.values():
            assert reader.memory_get(key).content == floor.get(reader.id, taint, key)[1], key
    gets = {"memlab": reader.memory_get} | {
        side: (lambda key, f=floor: f.get(reader.id, taint, key)) for side, floor in floors.items()
    }
    lines.append(
        (
            "get, CONFIDENTIAL p50",
            *repeated(gets, keys, args.repeats),
            counted({s: partial(gets[s], keys[0]) for s in SIDES}),
        )
    )

    writer = store.session(Level.INTERNAL)
    level = int(Level.INTERNAL)
    notes = list(corpus.notes(size, args.saves * (args.repeats + 1), stream=2))
    batches = [notes[n * args.saves : (n + 1) * args.saves] for n in range(args.repeats + 1)]
    saves = {"memlab": lambda note: writer.memory_save(f"m-{note.key}", note.content, tags=list(note.tags))} | {
        side: (lambda note, f=floor, s=side: f.save(writer.id, level, f"{s}-{note.key}", note.content, note.tags))
        for side, floor in floors.items()
    }
    for note in batches[0][:20]:
        for save in saves.values():
            save(note)
    runs = [interleaved(saves, batch) for batch in batches[1:]]
    p50 = {side: statistics.median(run[side].p50_us for run in runs) for side in SIDES}
    ratio = {
        side: statistics.median(run["memlab"].p50_us / run[side].p50_us for run in runs) for side in ("floor", "lean")
    }
    again = replace(batches[0][-1], content="again", tags=("x",))
    lines.append(("single save, INTERNAL p50", p50, ratio, counted({s: partial(saves[s], again) for s in SIDES})))

    queries = corpus.queries(args.queries, stream=3)
    for searched in (Level.PUBLIC, Level.CONFIDENTIAL):
        session, taint = store.session(searched), int(searched)
        for query in queries[:20]:
            mine = [hit.memory.key for hit in session.memory_search(query, max_results=10)]
            assert all(mine == floor.search(session.id, taint, query) for floor in floors.values()), query
        searches = {"memlab": lambda query, s=session: s.memory_search(query, max_results=10)} | {
            side: (lambda query, f=floor, s=session, t=taint: f.search(s.id, t, query))
            for side, floor in floors.items()
        }
        lines.append(
            (
                f"search top 10, {searched.name} p50",
                *repeated(searches, queries, args.repeats),
                counted({s: partial(searches[s], queries[0]) for s in SIDES}),
            )
        )
    result = store.verify()
    assert result.ok, result.problems[:5]
    for floor in floors.values():
        floor.conn.close()
    store.close()
    return lines


def verifications(fresh: Callable[[], str], calls: int = 20) -> list[str]:
    """How often one call of memlab and of the lean floor verifies the claim (``claimed()``'s calls, from the
    function statistics of a small store of its own, counted once its connections have ended), and what one
    verification costs the server (the backend's CPU time in ``/proc``, where the server is on this machine)."""
    url = fresh()
    with MemoryStore(url) as store:
        store.session(Level.INTERNAL).memory_save_many(
            [{"key": f"k{i}", "content": f"note {i} about things"} for i in range(300)]
        )
        role, key = store.storage.session_role, store.storage._key
    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute(f"ALTER ROLE {role} IN DATABASE {owner.info.dbname} SET track_functions = 'all'")

        def verified() -> int:
            time.sleep(1.0)  # a backend's statistics reach the views shortly after it ends
            owner.execute("SELECT pg_stat_clear_snapshot()")
            row = owner.execute("SELECT calls FROM pg_stat_user_functions WHERE funcname = 'claimed'").fetchone()
            return row[0] if row else 0

        operations = {
            "get": (lambda s, i: s.memory_get(f"k{i}"), lambda f, sid, i: f.get(sid, 1, f"k{i}")),
            "single save": (
                lambda s, i: s.memory_save(f"k{i}", "again"),
                lambda f, sid, i: f.save(sid, 1, f"k{i}", "again", ()),
            ),
            "search": (lambda s, i: s.memory_search("note things"), lambda f, sid, i: f.search(sid, 1, "note things")),
        }
        lines = ["verifications of the claim per call (claimed() calls; memlab | lean floor):"]
        for name, (memlab_call, floor_call) in operations.items():
            counts = []
            for side in ("memlab", "lean"):
                before = verified()
                with MemoryStore(url) as counted:  # its connections end with it, and so do the floor's
                    if side == "memlab":
                        session = counted.session(Level.INTERNAL)
                        for i in range(calls):
                            memlab_call(session, i)
                    else:
                        floor = Floor(counted.storage, lean=True)
                        for i in range(calls):
                            floor_call(floor, "counted", i)
                        floor.conn.close()
                counts.append((verified() - before) / calls)
            lines.append(f"  {name:<12} {counts[0]:5.1f} | {counts[1]:5.1f}")
        with psycopg.connect(url, user=role, options="-c search_path=memlab") as conn:
            txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
            message = f"main|1|{txid}"
            mac = hmac.new(key, message.encode(), hashlib.sha256).hexdigest()
            conn.execute("SELECT set_config('memlab.claim', %s, true)", (f"{message}|{mac}",))
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            stat = Path(f"/proc/{pid}/schedstat")
            if stat.exists():
                spent = {}
                for what in ("1", "memlab.claimed()"):
                    loop = f"DO $$ BEGIN FOR i IN 1..5000 LOOP PERFORM {what}; END LOOP; END $$"
                    conn.execute(loop)
                    samples = []
                    for _ in range(5):
                        start = int(stat.read_text().split()[0])
                        conn.execute(loop)
                        samples.append((int(stat.read_text().split()[0]) - start) / 5000 / 1e3)
                    spent[what] = min(samples)
                lines.append(
                    f"one verification: {spent['memlab.claimed()'] - spent['1']:.1f} µs of the backend's CPU "
                    "(min of 5 loops of 5,000, less an empty loop's)"
                )
            conn.rollback()
    return lines


def print_lines(title: str, lines: list[tuple]) -> None:
    print(f"\n{title}")
    print(
        f"{'measure':<30} {'memlab':>10} {'floor':>10} {'lean':>10} {'/floor':>7} {'/lean':>7} "
        f"{'round trips':>12} {'statements':>11}"
    )
    for measure, p50, ratio, found in lines:
        trips = " | ".join(str(found[side][0]) for side in SIDES)
        statements = " | ".join(str(found[side][1]) for side in SIDES)
        print(
            f"{measure:<30} "
            + " ".join(f"{p50[side] / 1e3:>7.3f} ms" for side in SIDES)
            + f" {ratio['floor']:>6.2f}x {ratio['lean']:>6.2f}x {trips:>12} {statements:>11}"
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
        print("\n" + "\n".join(verifications(fresh)))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
