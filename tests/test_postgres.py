"""What only the PostgreSQL backend has: the database as the gate (row-level security, an append-only audit
for the session role), many processes on one database, tamper detection, and its commands.

The storage contract, the model and the noninterference property run against it in their own files
(``tests/backends.py`` lists it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

from memlab import InvalidArgument, Level, MemoryStore, SchemaError, tools
from memlab.errors import Denied
from memlab.records import NewVersion
from memlab.storage import PostgresStorage, verify_path
from memlab.storage import postgres as backend
from memlab.storage.postgres import claim
from tests.conftest import fixed_clock
from tests.pgserver import protocol_trace, round_trips

REFUSED = psycopg.errors.InsufficientPrivilege


def _session_sql(url: str, agent: str | None, taint: Level | None) -> psycopg.Connection:
    """A connection as memlab's session role, in a transaction that claims ``agent`` at ``taint`` as memlab does
    (with the owner's key); missing either, its claim names nothing."""
    conn = psycopg.connect(url.replace("postgres@", "memlab_session@"), options="-c search_path=memlab")
    txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
    with psycopg.connect(url, options="-c search_path=memlab") as owner:
        (key,) = owner.execute("SELECT key FROM claim_key").fetchone()
    made = claim(bytes(key), agent or "", taint if taint is not None else Level.PUBLIC, txid)
    conn.execute("SELECT set_config('memlab.claim', %s, true)", (made if agent and taint is not None else "",))
    return conn


def _filled(url: str) -> None:
    with MemoryStore(url, clock=fixed_clock) as store:
        for level in Level:
            session = store.session(level)
            session.memory_save(
                "plan",
                f"the {level.name.lower()} plan about coffee",
                tags=["work"],
                source=f"Ann: the {level.name.lower()} coffee plan",
                occurred_at="2026-11-30",
            )
            session.memory_save(f"only-{level.name.lower()}", "coffee secrets", tags=["work"])
        store.session(Level.PUBLIC, "bob").memory_save("plan", "bob's public coffee plan")


HAND_WRITTEN = {
    "every row": "SELECT key, classification, agent FROM memories",
    "a self-join": "SELECT h.key, h.classification, h.agent FROM memories l JOIN memories h ON h.key = l.key",
    "another agent's by name": "SELECT key, classification, agent FROM memories WHERE agent = 'bob' "
    "UNION ALL SELECT key, classification, agent FROM memories WHERE agent <> claimed_agent()",
    "the higher levels by name": "SELECT key, classification, agent FROM memories WHERE classification > 0",
    "the search SQL without its filters": (
        "SELECT m.key, m.classification, m.agent FROM memories m, to_tsquery('english', 'coffee | plan') q "
        "WHERE m.document @@ q ORDER BY ts_rank(m.document, q) DESC"
    ),
    "deleted and superseded rows too": "SELECT key, classification, agent FROM memories WHERE NOT current OR true",
    "a count by level": "SELECT 'n', classification, agent FROM memories GROUP BY classification, agent",
}


@pytest.mark.parametrize("query", list(HAND_WRITTEN))
def test_hand_written_sql_as_the_session_role_sees_nothing_above_its_taint_or_of_another_agent(pg_url, query):
    _filled(pg_url)
    with _session_sql(pg_url, "main", Level.PUBLIC) as conn:
        rows = conn.execute(HAND_WRITTEN[query]).fetchall()
    assert {(level, agent) for _, level, agent in rows} <= {(int(Level.PUBLIC), "main")}
    assert rows or "by name" in query, "the query sees the PUBLIC rows of its agent"


def test_every_column_as_the_session_role_at_public(pg_url):
    """All it may read (not the table-wide id: ``SELECT *`` is refused, tests/test_postgres_gate.py says why)."""
    _filled(pg_url)
    with _session_sql(pg_url, "main", Level.PUBLIC) as conn:
        cursor = conn.execute(f"SELECT {backend.READABLE} FROM memories")
        names = [column.name for column in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        with pytest.raises(REFUSED):
            conn.execute("SELECT * FROM memories")
    assert sorted(row["key"] for row in rows) == ["only-public", "plan"]
    assert {(row["classification"], row["agent"]) for row in rows} == {(0, "main")}


def test_the_index_function_returns_only_what_the_policy_admits(pg_url):
    """``matches`` runs as the owner (so sessions' searches can use the GIN index) under the policy's condition."""
    _filled(pg_url)
    found = "SELECT count(*) FROM matches(to_tsquery('english', 'coffee | plan'))"
    for agent, taint, expected in (("main", Level.PUBLIC, 2), ("main", Level.RESTRICTED, 8), ("bob", Level.PUBLIC, 1)):
        with _session_sql(pg_url, agent, taint) as conn:
            assert conn.execute(found).fetchone()[0] == expected
    with _session_sql(pg_url, None, None) as conn:
        assert conn.execute(found).fetchone()[0] == 0


def test_without_the_settings_the_session_role_sees_nothing(pg_url):
    _filled(pg_url)
    for agent, taint in ((None, None), ("main", None), (None, Level.RESTRICTED)):
        with _session_sql(pg_url, agent, taint) as conn:
            assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM chain_heads").fetchone()[0] == 0


def test_the_session_role_cannot_read_change_or_empty_the_audit(pg_url):
    _filled(pg_url)
    for statement in (
        "SELECT * FROM audit",
        "UPDATE audit SET outcome = 'ok'",
        "DELETE FROM audit",
        "TRUNCATE audit",
        "SELECT * FROM sessions",
        "UPDATE memories SET content = 'forged'",
        "DELETE FROM memories",
        "SET ROLE postgres",
    ):
        with (
            _session_sql(pg_url, "main", Level.RESTRICTED) as conn,
            pytest.raises(psycopg.errors.InsufficientPrivilege),
        ):
            conn.execute(statement)
    with MemoryStore(pg_url) as store:
        assert store.verify().ok


def test_the_session_role_cannot_write_down_or_for_another_agent(pg_url):
    _filled(pg_url)
    insert = (
        "INSERT INTO memories (agent, key, content, tags, classification, version, saved_at, saved_by, commitment, "
        "current) VALUES (%s, 'leak', 'x', '[]', %s, 1, 'now', 's', 'c', true)"
    )
    for agent, level in (("main", Level.PUBLIC), ("bob", Level.CONFIDENTIAL)):
        with (
            _session_sql(pg_url, "main", Level.CONFIDENTIAL) as conn,
            pytest.raises(psycopg.errors.InsufficientPrivilege),
        ):
            conn.execute(insert, (agent, int(level)))
    with _session_sql(pg_url, "main", Level.CONFIDENTIAL) as conn:
        # Marking rows below its taint matches nothing: an update sees only its own level.
        assert conn.execute("UPDATE memories SET deleted_at = 'x' WHERE classification < 2").rowcount == 0


def test_a_write_down_is_refused_by_the_database(pg_url):
    with MemoryStore(pg_url) as store, pytest.raises(Denied, match="row-level security"):
        _save_at(store, Level.PUBLIC, taint=Level.CONFIDENTIAL)


def _save_at(store: MemoryStore, level: Level, *, taint: Level) -> None:
    """A buggy caller: storage asked to write at ``level`` while the transaction says ``taint``."""
    storage: PostgresStorage = store.storage

    def work(cursor, head):
        storage._claim(cursor, "main", taint)
        cursor.execute(
            "INSERT INTO memories (agent, key, content, tags, classification, version, saved_at, saved_by, "
            "commitment, current) VALUES ('main', 'k', 'x', '[]', %s, 1, 'now', 's', 'c', true)",
            (int(level),),
        )

    storage._session("main", level, work)


def test_each_call_is_one_transaction_of_three_round_trips(pg_url):
    """A call runs in pipeline mode: the transaction's id (the claim's mac covers it); the claim, the chain head's
    lock and the call's statements; its audit row with the head's move, and the Sync that commits. Guards: the
    head's row read when it is locked, before the call's statements are sent (four round trips);
    ``conn.transaction()`` around the pipeline (it waits for BEGIN and for COMMIT)."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL)
        session.memory_save("plan", "the coffee plan")  # the chain's first call also opens it
        session.memory_save("old", "an old note")
        connections = list(store.storage._pool._pool)
        calls = {
            "get": lambda: session.memory_get("plan"),
            "save": lambda: session.memory_save("plan", "the new coffee plan"),
            "search": lambda: session.memory_search("coffee"),
            "list": lambda: session.memory_list(),
            "delete": lambda: session.memory_delete("old"),
        }
        for name, call in calls.items():
            with round_trips(connections) as counted:
                call()
            assert counted == [3], name
        assert [hit.memory.content for hit in session.memory_search("coffee")] == ["the new coffee plan"]
        assert store.verify().ok


@contextmanager
def _statements(connections) -> Iterator[list[str]]:
    """The statements executed on psycopg ``connections`` inside the block (in the list once the block ends), from
    libpq's trace of the protocol: one per Execute message, each shown by its Parse or Bind message."""
    executed: list[str] = []
    with protocol_trace(connections) as traces:
        yield executed
    for messages in traces:
        shown = ""
        for sender, _length, message, *rest in messages:
            if sender == "F" and message in {"Parse", "Bind"} and not shown:
                shown = rest[0][:60]
            elif sender == "F" and message == "Execute":
                executed.append(shown)
                shown = ""


def test_each_call_sends_the_fewest_statements(pg_url):
    """The pipeline's Sync ends the call's transaction (PostgreSQL runs what is sent before a Sync as one), so no
    BEGIN or COMMIT is sent; the audit row, the head's move (and a single save's version) go as one statement. A get,
    a search or a list: the transaction's id, the claim, the head's lock, the read, the audit; a single save or a
    delete: the id, the claim, the key's lock, the step down (or the deletion), the head's lock, the writes.
    Guards: BEGIN and COMMIT sent as statements (two more); the audit row and the head's move sent apart (one more)."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL)
        session.memory_save("plan", "the coffee plan")
        session.memory_save("old", "an old note")
        connections = list(store.storage._pool._pool)
        calls = {
            "get": (lambda: session.memory_get("plan"), 5),
            "save": (lambda: session.memory_save("plan", "the new coffee plan"), 6),
            "search": (lambda: session.memory_search("coffee"), 5),
            "list": (lambda: session.memory_list(), 5),
            "delete": (lambda: session.memory_delete("old"), 6),
        }
        for name, (call, expected) in calls.items():
            with _statements(connections) as sent:
                call()
            assert len(sent) == expected, (name, sent)
        assert [hit.memory.content for hit in session.memory_search("coffee")] == ["the new coffee plan"]
        assert store.verify().ok


def test_a_python_error_in_the_middle_of_a_call_leaves_nothing_of_it(pg_url):
    """The call's transaction commits at the pipeline's Sync: an exception raised in Python after its writes were
    sent (here the audit event of a save, after the step down and the new version) must abort it first, or the
    Sync would commit half a save (a version without its audit row, the old one no longer current).
    Guards: no ROLLBACK sent before the Sync when the call raises; the pool's ``prepare_threshold=0`` (psycopg, seeing
    a ROLLBACK, deallocates every prepared statement only after preparing the next call's first one, which then
    "does not exist")."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL)
        session.memory_save("plan", "the coffee plan")

        def failing(memory):
            raise RuntimeError("the host's audit hook failed")

        new = NewVersion("plan", "the tea plan", (), "2026-01-01T00:00:00+00:00")
        with pytest.raises(RuntimeError, match="audit hook failed"):
            store.storage.save_many("main", Level.INTERNAL, [new], saved_by=session.id, audit=failing)
        connections = list(store.storage._pool._pool)
        assert {conn.info.transaction_status for conn in connections} == {psycopg.pq.TransactionStatus.IDLE}
        assert session.memory_get("plan").content == "the coffee plan"
        assert store.history("plan")["version"].tolist() == [1] and len(store.audit()) == 2
        for n in range(8):  # and the connection serves the next calls, its prepared statements intact
            session.memory_save_many([{"key": "plan", "content": f"plan {n}"}, {"key": f"k{n}", "content": "x"}])
            assert session.memory_get("plan").content == f"plan {n}"
        assert store.verify().ok


def test_a_single_save_is_not_planned_again_on_every_call(pg_url):
    """Every statement of a single save is planned once per connection and then runs from its prepared plan: a key
    lock or step down over ``key = ANY(%s)`` was planned afresh each time (its generic plan's estimate, for an
    array of unknown length, never beat the custom plans), 0.25 ms of the server's time per save.
    Guards: a single key stepped down through ``key = ANY(%s)``."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL)
        session.memory_save_many([{"key": f"note-{n}", "content": f"note {n}"} for n in range(2000)])
        store.storage._owner.execute("ANALYZE memories")  # the planner's statistics, as autovacuum keeps them
        for n in range(20):
            session.memory_save(f"note-{n}", f"note {n}, again")
        planned = [
            row
            for conn in store.storage._pool._pool
            for row in conn.execute("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
        ]
        assert planned and all(custom <= 5 for _, generic, custom in planned if generic + custom >= 10), planned


def test_a_large_batch_reads_its_own_statements_results(pg_url):
    """In a pipeline a result lands on the cursor that sent it whenever it arrives: a batch whose keys take long
    to send lets the key locks' result arrive first, and a save that read its versions from the same cursor got
    that instead (and failed). Guards: the key locks and the stepping down sent on one cursor."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL)
        records = [{"key": f"note-{n:05d}-{'x' * 40}", "content": f"note {n}"} for n in range(3000)]
        assert len(session.memory_save_many(records, batch_size=3000)) == 3000
        assert len(session.memory_save_many(records[:1500], batch_size=1500)) == 1500
        assert session.memory_get(records[0]["key"]).version == 2
        assert store.verify().ok


def test_a_refused_call_rolls_back_and_leaves_its_connection_ready(pg_url):
    """A statement the database refuses aborts what was queued after it (COMMIT too): nothing of the call stays,
    and the pooled connection serves the next call as before."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.CONFIDENTIAL)
        session.memory_save("k", "kept")
        with pytest.raises(Denied):
            _save_at(store, Level.PUBLIC, taint=Level.CONFIDENTIAL)
        connections = list(store.storage._pool._pool)
        assert {conn.info.transaction_status for conn in connections} == {psycopg.pq.TransactionStatus.IDLE}
        with round_trips(connections) as counted:
            assert session.memory_get("k").content == "kept"
        assert counted == [3]
        assert store.history("k")["version"].tolist() == [1] and len(store.audit()) == 2
        assert store.verify().ok


# -- search input and options --------------------------------------------------------------------------

HOSTILE_QUERIES = [
    "",
    "   ",
    '"unbalanced',
    "a AND b OR NOT c",
    "NEAR(a b)",
    "col:value",
    "C++ & | ! ( ) :* <-> '",
    "it's O'Brien's",
    "emoji 🎉 only",
    "🎉",
    "x" * 3000,
    "naïve café ÅNGSTRÖM",
    "名前 は",
    "a:*B & !c",
    "\\ \\\\ %s %(x)s",
    "\x00",
    "nul\x00inside",
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_no_query_raises_an_sql_error(pg_url, query):
    with MemoryStore(pg_url) as store:
        session = store.session()
        session.memory_save("user-name", "Alice O'Brien likes C++ and café crème")
        result = tools.call(session, "memory_search", {"query": query})
        assert "error" not in result or result["error"]["code"] == "invalid_argument"


def test_stemming_follows_the_analyzer(pg_url):
    with MemoryStore(pg_url) as store:
        session = store.session()
        session.memory_save("hobby", "She was running marathons")
        assert [hit.memory.key for hit in session.memory_search("runs")] == ["hobby"]
        assert session.memory_search("runs")[0].snippet == "She was **running** marathons"


def test_analyzers_postgres_cannot_serve_are_refused(pg_url):
    with pytest.raises(InvalidArgument, match="english"):
        MemoryStore(pg_url, analyzer="trigram")
    with pytest.raises(InvalidArgument, match="lattice"):
        MemoryStore(pg_url, policy="global-stats")


def test_a_store_reopens_and_refuses_another_analyzer_or_a_foreign_schema(pg_url):
    with MemoryStore(pg_url, analyzer="none") as store:
        store.session(Level.INTERNAL, session_id="a").memory_save("k", "running")
    with pytest.raises(SchemaError, match="analyzer"):
        MemoryStore(pg_url)
    with MemoryStore(pg_url, analyzer="none") as store:
        session = store.session(Level.INTERNAL)
        assert session.memory_get("k").content == "running"
        assert session.memory_search("runs") == []  # simple: no stemming
        assert store.sessions()["id"].tolist()[0] == "a"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA app; CREATE TABLE app.customers (id int)")
    with pytest.raises(SchemaError, match="customers"):
        PostgresStorage(pg_url, schema="app")


def test_an_unreachable_server_is_a_clear_error():
    with pytest.raises(SchemaError, match="cannot connect"):
        MemoryStore("postgresql://nobody:secret@/nowhere?host=/nonexistent-socket-dir")


def test_a_schema_1_store_gains_the_context_columns_in_place(pg_url):
    """A store made before context (schema 1: no source, occurred_at, nor their words in the document)."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        store.session(Level.INTERNAL).memory_save("plan", "the coffee plan", tags=["work"])
    with psycopg.connect(pg_url, autocommit=True, options="-c search_path=memlab") as conn, conn.transaction():
        for statement in (
            "ALTER TABLE memories DROP COLUMN document",
            "ALTER TABLE memories DROP COLUMN source, DROP COLUMN occurred_at, DROP COLUMN occurred_words",
            "ALTER TABLE memories ADD COLUMN document tsvector GENERATED ALWAYS AS (setweight(to_tsvector('english', "
            "key), 'A') || setweight(to_tsvector('english', content), 'B') || setweight(to_tsvector('english', "
            "tags), 'B')) STORED",
            "CREATE INDEX memories_search ON memories USING gin (document) WHERE current AND deleted_at IS NULL",
            "UPDATE memlab_meta SET value = '1' WHERE name = 'schema_version'",
        ):
            conn.execute(statement)
    with MemoryStore(pg_url) as store:
        assert store.verify().ok
        s = store.session(Level.INTERNAL)
        assert [h.memory.key for h in s.memory_search("coffee")] == ["plan"]
        s.memory_save("note", "new", source="from a chat about tea", occurred_at="2026-11-30")
        assert [h.memory.key for h in s.memory_search("tea November")] == ["note"]
        assert s.memory_get("plan").source is None and store.verify().ok
    with psycopg.connect(pg_url, autocommit=True, options="-c search_path=memlab") as conn:
        assert conn.execute("SELECT value FROM memlab_meta WHERE name = 'schema_version'").fetchone() == ("7",)


def test_a_schema_2_store_trades_its_forgeable_policies_for_the_claim(pg_url):
    """A store made before the claim (schema 2: policies on settings the session role could set itself)."""
    _filled(pg_url)
    old = "agent = current_setting('memlab.agent', true) AND classification <= current_setting('memlab.taint')::int"
    with psycopg.connect(pg_url, autocommit=True, options="-c search_path=memlab") as conn, conn.transaction():
        conn.execute("DROP POLICY memories_read ON memories")
        conn.execute(f"CREATE POLICY memories_read ON memories FOR SELECT TO memlab_session USING ({old})")
        conn.execute("GRANT SELECT ON memories TO memlab_session")
        conn.execute("UPDATE memlab_meta SET value = '2' WHERE name = 'schema_version'")

    def forged(conn):
        conn.execute("SET memlab.agent = 'bob'")
        conn.execute("SET memlab.taint = '3'")
        return conn.execute("SELECT count(*) FROM memories").fetchone()[0]

    with psycopg.connect(pg_url.replace("postgres@", "memlab_session@"), options="-c search_path=memlab") as conn:
        assert forged(conn) == 1, "the old policy admits a forged setting"
    with MemoryStore(pg_url) as store:
        assert store.verify().ok
        found = store.session(Level.PUBLIC).memory_search("coffee")
        assert sorted(hit.memory.key for hit in found) == ["only-public", "plan"]
    with psycopg.connect(pg_url.replace("postgres@", "memlab_session@"), options="-c search_path=memlab") as conn:
        assert forged(conn) == 0


# -- tampering ---------------------------------------------------------------------------------------------

TAMPERING = {
    "content edited": "UPDATE memories SET content = 'forged' WHERE key = 'plan' AND classification = 3",
    "source edited": "UPDATE memories SET source = 'forged' WHERE key = 'plan' AND classification = 2",
    "occurred_at edited": "UPDATE memories SET occurred_at = '2020-01-01' WHERE key = 'plan' AND classification = 1",
    "context added": "UPDATE memories SET source = 'forged' WHERE key = 'only-public'",
    "classification edited": "UPDATE memories SET classification = 0 WHERE key = 'only-restricted'",
    "an audit row removed": "DELETE FROM audit WHERE agent = 'main' AND taint = 'PUBLIC' AND seq = 1",
    "an audit row edited": "UPDATE audit SET outcome = 'not_found' WHERE agent = 'main' AND taint = 'INTERNAL' "
    "AND seq = 1",
    "a version removed": "DELETE FROM memories WHERE key = 'only-internal'",
    "row-level security switched off": "ALTER TABLE memories DISABLE ROW LEVEL SECURITY",
    "the audit opened to sessions": "GRANT UPDATE ON audit TO memlab_session",
}


@pytest.mark.parametrize("tampering", list(TAMPERING))
def test_verify_finds_tampering_by_the_owner(pg_url, tampering):
    _filled(pg_url)
    assert verify_path(pg_url).ok
    with psycopg.connect(pg_url, autocommit=True, options="-c search_path=memlab") as conn:
        conn.execute(TAMPERING[tampering])
    result = verify_path(pg_url)
    assert not result.ok, tampering
    with MemoryStore(pg_url) as store:
        assert not store.verify().ok


# -- many processes ------------------------------------------------------------------------------------------

WORKER = """
import sys
from memlab import MemoryStore, Level
url, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
with MemoryStore(url) as store:
    shared = store.session(Level.INTERNAL, session_id=f"{name}-shared")
    own = store.session(Level.CONFIDENTIAL, agent=name, session_id=f"{name}-own")
    for n in range(rounds):
        shared.memory_save("counter", f"{name} {n}")
        shared.memory_save(f"{name}-{n}", f"note {n} from {name}")
        own.memory_save("own", f"note {n}")
        assert shared.memory_get(f"{name}-{n}").content == f"note {n} from {name}"
        assert own.memory_search("own note")  # searchable
"""


def test_concurrent_processes_lose_nothing_and_number_versions_without_gaps(pg_url):
    """8 processes at once on one database (the full 8 x 500 runs in benchmarks/bench_postgres.py)."""
    MemoryStore(pg_url).close()
    processes, rounds = 8, 40
    children = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(WORKER), pg_url, f"w{n}", str(rounds)])
        for n in range(processes)
    ]
    assert [child.wait(timeout=300) for child in children] == [0] * processes
    with MemoryStore(pg_url) as store:
        assert store.history("counter")["version"].tolist() == list(range(1, processes * rounds + 1))
        assert len(store.session(Level.INTERNAL).memory_list()) == processes * rounds + 1
        for n in range(processes):
            assert store.history("own", agent=f"w{n}")["version"].tolist() == list(range(1, rounds + 1))
        assert len(store.audit("main")) == processes * rounds * 3 + 1  # saves, gets and the list above
        assert store.verify().ok


# -- commands -----------------------------------------------------------------------------------------------


def test_import_and_verify_commands_work_against_postgres(pg_url, tmp_path):
    records = tmp_path / "notes.jsonl"
    records.write_text("\n".join(json.dumps({"key": f"k{n}", "content": f"note {n} about tea"}) for n in range(30)))
    run = [sys.executable, "-m", "memlab.cli"]
    done = subprocess.run([*run, "import", str(records), "--db", pg_url, "--taint", "internal"], capture_output=True)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*run, "verify", pg_url], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("ok: 30 audit rows and 30 versions"), done.stdout
    with MemoryStore(pg_url) as store:
        assert len(store.session(Level.INTERNAL).memory_search("tea", max_results=100)) == 30
        assert store.session(Level.PUBLIC).memory_search("tea") == []


def test_eval_runs_against_postgres(pg_url):
    from memlab.eval import load_trec
    from memlab.eval.runner import run

    results = run(
        load_trec("tests/fixtures/trec-tiny"), analyzers=["porter"], progress=False, workers=1, postgres=pg_url
    )
    assert 0 < results.summary.loc["porter", "S@10"] <= 1
    assert _scratch_schemas(pg_url) == []  # the throwaway schema is gone


def _scratch_schemas(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'memlab_scratch_%'")
        return [row[0] for row in rows]


def test_a_throwaway_store_is_dropped_with_what_it_holds_even_when_the_block_fails(pg_url):
    # Guards: scratch_storage without its `finally: storage.drop()` (the schema would stay behind).
    with pytest.raises(RuntimeError, match="the experiment failed"):
        with MemoryStore.throwaway(pg_url) as scratch:
            scratch.session(Level.INTERNAL).memory_save("draft", "a note for one experiment")
            assert len(_scratch_schemas(pg_url)) == 1
            assert scratch.session(Level.INTERNAL).memory_get("draft").content == "a note for one experiment"
            raise RuntimeError("the experiment failed")
    assert _scratch_schemas(pg_url) == []


def test_two_serve_processes_on_one_database_keep_their_levels_apart(pg_url, tmp_path):
    from tests.mcp_client import call, connect_all, default_command
    from tests.mcp_client import run as run_scenario

    log = tmp_path / "server.log"
    servers = [default_command(pg_url, "CONFIDENTIAL"), default_command(pg_url, "PUBLIC")]

    async def scenario():
        async with connect_all(servers, log=log) as (secret, public):
            assert not (await call(secret, "memory_save", {"key": "salary", "content": "Sam earns 90k"}))[0]
            assert not (await call(public, "memory_save", {"key": "user-name", "content": "Sam"}))[0]
            assert (await call(public, "memory_get", {"key": "salary"}))[1] == {"found": False, "key": "salary"}
            found = (await call(public, "memory_search", {"query": "Sam salary"}))[1]
            assert [hit["key"] for hit in found["results"]] == ["user-name"]
            found = (await call(secret, "memory_search", {"query": "Sam salary"}))[1]
            assert sorted(hit["key"] for hit in found["results"]) == ["salary", "user-name"]

    run_scenario(scenario, log)
    with MemoryStore(pg_url) as store:
        assert sorted(store.sessions()["initial_taint"]) == ["CONFIDENTIAL", "PUBLIC"]
        assert store.verify().ok


def test_serialization_failures_are_retried_inside_memlab(pg_url, monkeypatch):
    import memlab.storage.postgres.store as backend  # where saves look up lock_head

    real, failures = backend.lock_head, []

    def flaky(cursor, agent, level):
        if len(failures) < 2:
            failures.append(agent)
            raise psycopg.errors.SerializationFailure("could not serialize access")
        return real(cursor, agent, level)

    with MemoryStore(pg_url) as store:
        session = store.session()
        monkeypatch.setattr(backend, "lock_head", flaky)
        assert session.memory_save("k", "v").version == 1
        monkeypatch.undo()
        assert failures == ["main", "main"]
        assert store.history("k")["version"].tolist() == [1] and len(store.audit()) == 1
        assert store.verify().ok


def test_memlab_eval_backend_postgres(pg_url):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memlab.cli",
            "eval",
            "--collection",
            "tests/fixtures/trec-tiny",
            "--backend",
            "postgres",
        ]
        + ["--db", pg_url, "--analyzers", "porter,none", "--workers", "1"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "porter" in done.stdout and "none" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "memlab.cli", "eval", "--backend", "postgres"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "needs --db postgresql://" in done.stderr


def test_nul_characters_never_reach_postgresql_as_an_error(pg_url):
    """PostgreSQL text cannot hold NUL: in what the audit records it becomes U+FFFD; content with one is refused
    before anything is written (SQLite stores it)."""
    with MemoryStore(pg_url) as store:
        session = store.session()
        session.memory_save("k", "fine")
        assert tools.call(session, "memory_search", {"query": "fine\x00"})["results"][0]["key"] == "k"
        result = tools.call(session, "memory_save", {"key": "j", "content": "a\x00b"})
        assert result["error"]["code"] == "invalid_argument" and "NUL" in result["error"]["message"]
        with pytest.raises(InvalidArgument, match="source holds a NUL"):
            session.memory_save("j", "fine", source="a\x00b")
        session.escalate(Level.INTERNAL, reason="why\x00not")
        assert store.audit()["query"].tolist()[1] == "fine\ufffd"
        assert store.taint_events()["reason"].tolist() == ["why\ufffdnot"]
        assert store.history("j").empty and store.verify().ok
        assert store.purge("main", "k", reason="request\x00 7", by="dpo\x00") == ["k@PUBLIC/v1"]
        assert store.history("k")["deleted_by"].tolist() == ["dpo\ufffd"] and store.verify().ok


def test_a_session_role_that_cannot_log_in_is_a_clear_error(pg_url, monkeypatch):
    monkeypatch.setattr("memlab.storage.postgres.connection._LOGIN_SECONDS", 1.0)
    with pytest.raises(SchemaError, match="cannot log in as the session role"):
        PostgresStorage(pg_url, session_url=pg_url.replace("postgres@", "no_such_role@"))


def test_a_search_makes_a_snippet_only_when_it_is_read_and_then_the_same_one(pg_url, monkeypatch):
    """As on SQLite (tests/test_snippets.py): a hit makes its snippet when it is first read, once, from the
    version's content and the search's terms alone; a caller that reads none pays nothing for them.

    Guards: PostgresStorage.search calling analyzer.snippet for every hit before it returns (eager snippets, as
    before): seen failing, two snippets made before any was read."""
    from memlab.search.analyzers import Analyzer

    made: list[str] = []
    snippet = Analyzer.snippet

    def counted(self, text, terms, *, tokens=16):
        made.append(text)
        return snippet(self, text, terms, tokens=tokens)

    with MemoryStore(pg_url) as store:
        session = store.session()
        session.memory_save("run", "She loves running marathons in the rain")
        session.memory_save("walk", "He walks and runs to work, " + "then more words " * 10 + "and runs home")
        monkeypatch.setattr(Analyzer, "snippet", counted)
        hits = session.memory_search("runs")
        assert len(hits) == 2 and made == []
        terms = store.storage.analyzer.snippet_terms("runs")
        expected = [snippet(store.storage.analyzer, hit.memory.content, terms, tokens=16) for hit in hits]
        assert [hit.snippet for hit in hits] == expected and len(made) == 2
        assert [hit.snippet for hit in hits] == expected and len(made) == 2  # made once
        assert "**running**" in hits[[hit.memory.key for hit in hits].index("run")].snippet


def test_a_search_finds_its_matches_once_whatever_the_store_s_size(pg_url):
    """A session's search looks its query up in the index once (``matches``, which verifies the claim too), not
    once per version of the agent: with ``matches`` joined in place, the plan PostgreSQL makes for any parameters
    (a prepared statement's, from its sixth execution) rescanned it for every version the session may read (200
    look-ups and 606 verifications of the claim for 200 such memories, about ten times the search's time).

    Guards: ``views.search_sql`` joining ``matches(q)`` in its FROM list instead of a materialized query of its own:
    seen 200 calls from the sixth execution."""
    import hashlib
    import hmac

    with MemoryStore(pg_url) as store:
        for level in (Level.PUBLIC, Level.INTERNAL, Level.CONFIDENTIAL):
            store.session(level).memory_save_many(
                [{"key": f"k{i}", "content": f"note {i} about things"} for i in range(int(level), 300, 3)]
            )
        sql, key = store.storage.search_statement, store.storage._key
    with psycopg.connect(pg_url, options="-c search_path=memlab") as conn:
        conn.execute("SET track_functions = 'all'")  # a superuser's setting, then the session role
        conn.execute("SET ROLE memlab_session")
        txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        message = f"main|1|{txid}"
        mac = hmac.new(key, message.encode(), hashlib.sha256).hexdigest()
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (f"{message}|{mac}",))
        calls = "SELECT funcname, calls FROM pg_stat_xact_user_functions"
        for _ in range(8):  # and so again, prepared: PostgreSQL plans the sixth execution on for any parameters
            before = dict(conn.execute(calls).fetchall())
            parameters = {
                "terms": "note | thing",
                "agent": "main",
                "level": 1,
                "categories": [],
                "floor": 0,
                "limit": 10,
            }
            rows = conn.execute(sql, parameters, prepare=True).fetchall()
            made = {name: count - before.get(name, 0) for name, count in conn.execute(calls).fetchall()}
            assert len(rows) == 10 and made["matches"] == 1, made
        conn.rollback()
