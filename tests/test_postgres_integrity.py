"""Integrity on PostgreSQL (issue 35): the signed claim names the session's integrity and floor, and row-level
security reads only versions at least as trusted as the floor and writes only at exactly the claimed label, its
integrity included. Tried as the session role's own SQL, on a connection memlab did not open, as
tests/test_postgres_gate.py and tests/test_postgres_labels.py try the level and the categories; and a store made
before integrity opens wholly trusted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac

import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings

from memlab import Denied, Level, MemoryStore
from memlab.labels import Integrity, Label
from memlab.records import AuditEvent, NewVersion
from memlab.storage.postgres import claim
from tests.conftest import fixed_clock
from tests.pgserver import running_server
from tests.test_integrity_noninterference import interferes, ranking_pressure, two_worlds

REFUSED = psycopg.errors.InsufficientPrivilege
WEB = "https://evil.example/page"


def _owner(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True, options="-c search_path=memlab")


def _claimed(url: str, taint: str, floor: str = "untrusted", agent: str = "main") -> psycopg.Connection:
    """A connection as the session role in a transaction claiming ``agent`` at ``taint`` reading at ``floor``, as
    memlab claims it (the key read as the owner: the session role cannot)."""
    conn = psycopg.connect(url.replace("postgres@", "memlab_session@"), options="-c search_path=memlab")
    txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
    with _owner(url) as owner:
        (key,) = owner.execute("SELECT key FROM claim_key").fetchone()
    made = claim(bytes(key), agent, Label.parse(taint), txid, Integrity.parse(floor))
    conn.execute("SELECT set_config('memlab.claim', %s, true)", (made,))
    return conn


def _poisoned(store: MemoryStore, taint: str = "INTERNAL"):
    session = store.session(taint, session_id=f"web-{len(store.sessions())}")
    session.lower_integrity(source=WEB, reason="summarised a web page")
    return session


def _both_grades(url: str) -> None:
    """Keys plan and memo at INTERNAL, trusted (the user's) and untrusted (a web page's), and a trusted note."""
    with MemoryStore(url, clock=fixed_clock) as store:
        trusted, poisoned = store.session("INTERNAL"), _poisoned(store)
        for key in ("plan", "memo"):
            trusted.memory_save(key, f"the user's coffee {key}")
            poisoned.memory_save(key, f"the web page's coffee {key}")
        trusted.memory_save("note", "a trusted coffee note")


# -- what it reads -------------------------------------------------------------------------------------------

HAND_WRITTEN = {
    "every row": "SELECT key, integrity FROM memories",
    "the untrusted rows by name": "SELECT key, integrity FROM memories WHERE integrity = 0 OR distrust <> '{}'",
    "a self-join": "SELECT u.key, u.integrity FROM memories t JOIN memories u ON u.key = t.key",
    "the search SQL without its filters": "SELECT m.key, m.integrity FROM memories m, "
    "to_tsquery('english', 'coffee | web') q WHERE m.document @@ q",
    "the index function": "SELECT match_key, match_integrity FROM matches(to_tsquery('english', 'coffee'))",
    "the save order function": "SELECT order_key, order_integrity FROM save_order(ARRAY['plan', 'memo', 'note'])",
    "a count by grade": "SELECT 'n', integrity FROM memories GROUP BY integrity",
}


@pytest.mark.parametrize("query", list(HAND_WRITTEN))
def test_a_trusted_floor_reads_no_untrusted_row_even_with_its_own_sql(pg_url, query):
    """A claim whose floor is trusted (its session trusted or not) reads no untrusted row, whatever it asks; the
    same claim with the floor that reads every grade reads both grades (the policy, not the data, hides them)."""
    # Guards: memories_read without "AND integrity >= claimed_floor()" (every grade readable), and matches() or
    # save_order() without it
    _both_grades(pg_url)
    for taint in ("INTERNAL", "INTERNAL@untrusted"):
        with _claimed(pg_url, taint, floor="trusted") as conn:
            assert 0 not in {row[1] for row in conn.execute(HAND_WRITTEN[query]).fetchall()}, taint
        with _claimed(pg_url, taint, floor="untrusted") as conn:
            assert 0 in {row[1] for row in conn.execute(HAND_WRITTEN[query]).fetchall()}, taint


# -- what it writes: the stamp is the claim's ----------------------------------------------------------------

INSERT = (
    "INSERT INTO memories (agent, key, content, tags, classification, integrity, version, saved_at, saved_by, "
    "commitment, current) VALUES ('main', 'forged', 'x', '[]', 1, %s, 9, 'now', 's', 'c', false)"
)


@pytest.mark.parametrize(("taint", "own", "other"), [("INTERNAL@untrusted", 0, 1), ("INTERNAL", 1, 0)])
def test_a_session_writes_versions_at_its_own_integrity_only(pg_url, taint, own, other):
    """An untrusted session cannot insert a trusted version (nor leave the integrity to the column's default,
    trusted), a trusted one cannot insert an untrusted one, whatever floor it reads at; each inserts at its own."""
    # Guards: memories_write comparing (agent, classification, categories) only (an untrusted claim writes trusted)
    _both_grades(pg_url)
    for floor in ("untrusted", "trusted"):
        with _claimed(pg_url, taint, floor=floor) as conn:
            conn.execute("SAVEPOINT forged")
            with pytest.raises(REFUSED, match="row-level security"):
                conn.execute(INSERT, (other,))
            conn.execute("ROLLBACK TO SAVEPOINT forged")
            if own == 0:
                with pytest.raises(REFUSED, match="row-level security"):
                    conn.execute(INSERT.replace("integrity, ", "").replace("1, %s, 9", "1, 9"))
                conn.execute("ROLLBACK TO SAVEPOINT forged")
            conn.execute(INSERT, (own,))  # its own grade is admitted
            conn.rollback()


@pytest.mark.parametrize(("taint", "own"), [("INTERNAL@untrusted", 0), ("INTERNAL", 1)])
def test_a_session_marks_versions_of_its_own_integrity_only(pg_url, taint, own):
    """A step-down or a delete under a claim touches only versions of the claimed integrity."""
    # Guards: memories_mark comparing (agent, classification, categories) only
    _both_grades(pg_url)
    with _claimed(pg_url, taint) as conn:
        marked = conn.execute("UPDATE memories SET current = false WHERE key = 'plan' RETURNING integrity").fetchall()
        assert marked == [(own,)]
        conn.rollback()


@pytest.mark.parametrize(
    ("taint", "row", "admitted"),
    [
        ("INTERNAL@untrusted", "INTERNAL", False),
        ("INTERNAL@untrusted", "INTERNAL@untrusted", True),
        ("INTERNAL", "INTERNAL@untrusted", False),
        ("INTERNAL", "INTERNAL", True),
    ],
)
def test_audit_rows_and_chains_are_written_at_the_claimed_integrity(pg_url, taint, row, admitted):
    """An untrusted session's audit rows say so: it cannot append a row that names it trusted, nor a trusted one a
    row that names it untrusted; its chain is its integrity's own."""
    # Guards: claimed_label() without the '@untrusted' (an untrusted claim appends rows named trusted)
    _both_grades(pg_url)
    with _claimed(pg_url, taint) as conn:
        statement = (
            "INSERT INTO audit (agent, taint, seq, at, session_id, tool, outcome, records, notes, hash) "
            "VALUES ('main', %s, 99, 'now', 's', 'memory_get', 'ok', '[]', '[]', 'h')"
        )
        if admitted:
            conn.execute(statement, (row,))
        else:
            with pytest.raises(REFUSED, match="row-level security"):
                conn.execute(statement, (row,))
            conn.rollback()
            return
        heads = conn.execute("SELECT taint, integrity FROM chain_heads").fetchall()
        assert heads == [(1, int(Label.parse(taint).integrity))]  # its own chain, and no other
        conn.rollback()


@pytest.mark.parametrize("floor", ["untrusted", "trusted"])
def test_a_sessions_floor_is_the_claims(pg_url, floor):
    """A session's row records the floor its claim names, and no other."""
    # Guards: sessions_add comparing (agent, taint) only (a session recorded with a floor it does not read at)
    _both_grades(pg_url)
    statement = (
        "INSERT INTO sessions (id, agent, taint, created_at, floor) VALUES ('new', 'main', 'INTERNAL', 'now', %s)"
    )
    with _claimed(pg_url, "INTERNAL", floor=floor) as conn:
        conn.execute("SAVEPOINT other")
        with pytest.raises(REFUSED, match="row-level security"):
            conn.execute(statement, (1 - int(Integrity.parse(floor)),))
        conn.execute("ROLLBACK TO SAVEPOINT other")
        conn.execute(statement, (int(Integrity.parse(floor)),))
        conn.rollback()


def test_a_session_is_recorded_with_its_integrity_and_floor(pg_url):
    """What the host chose when it opened the session is in its row, written under a claim that names it."""
    # Guards: add_session recording every session with the floor that reads every grade
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        store.session("INTERNAL", session_id="careful", floor="trusted")
        store.session("CONFIDENTIAL:hr", session_id="web", integrity="untrusted", source=WEB)
        store.session("PUBLIC", session_id="plain")
    with _owner(pg_url) as owner:
        rows = owner.execute("SELECT id, taint, floor FROM sessions ORDER BY id").fetchall()
    assert rows == [("careful", "INTERNAL", 1), ("plain", "PUBLIC", 0), ("web", "CONFIDENTIAL:hr@untrusted", 0)]


def test_a_claim_edited_to_another_integrity_or_floor_admits_nothing(pg_url):
    """The integrity and the floor are under the mac: an untrusted session's claim made trusted, or its floor
    lowered to read the untrusted rows, reads and writes nothing."""
    # Guards: claimed() taking the '@' digits from outside the signed text
    _both_grades(pg_url)
    with _claimed(pg_url, "INTERNAL@untrusted", floor="trusted") as conn:
        made = conn.execute("SELECT current_setting('memlab.claim')").fetchone()[0]
        assert "|1@01|" in made
        for edited in (
            made.replace("|1@01|", "|1@11|"),
            made.replace("|1@01|", "|1@00|"),
            made.replace("|1@01|", "|1|"),
        ):
            conn.execute("SELECT set_config('memlab.claim', %s, true)", (edited,))
            assert conn.execute("SELECT key FROM memories").fetchall() == [], edited
            conn.execute("SAVEPOINT forged")
            with pytest.raises(REFUSED, match="row-level security"):
                conn.execute(INSERT, (1,))
            conn.execute("ROLLBACK TO SAVEPOINT forged")
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (made,))
        assert {row[0] for row in conn.execute("SELECT integrity FROM memories").fetchall()} == {1}


# -- untrusted writers change nothing a trusted floor reads ---------------------------------------------------


def _observations(url: str) -> list[object]:
    """Everything a trusted INTERNAL session of main with a trusted floor reads through the tables."""
    seen: list[object] = []
    with _claimed(url, "INTERNAL", floor="trusted") as conn:
        for probe in (
            "SELECT key, classification, integrity, version, current, distrust FROM memories ORDER BY key, version",
            "SELECT agent, taint, categories, integrity, seq FROM chain_heads",
            "SELECT match_key, match_version, saved_order FROM matches(to_tsquery('english', 'coffee'))",
            "SELECT order_key, order_version, saved_order FROM save_order(ARRAY['plan', 'memo', 'note'])",
        ):
            seen.append(conn.execute(probe).fetchall())
    return seen


def test_nothing_a_trusted_floor_reads_in_the_tables_moves_with_untrusted_saves(pg_url):
    """The same trusted saves, with and without untrusted saves of the same keys between them: what the session
    role reads under a trusted floor (its chain's length too: one chain per integrity) is the same."""
    # Guards: chains shared by both grades (the head's seq moves), save_order() numbering every grade
    worlds = []
    for untrusted in (0, 3):
        url = running_server().fresh_database()
        with MemoryStore(url, clock=fixed_clock) as store:
            careful = store.session("INTERNAL", session_id="careful", floor="trusted")
            careful.memory_save("plan", "coffee plan")
            web = store.session("INTERNAL", session_id="web", integrity="untrusted")
            for n in range(untrusted):
                web.memory_save(["plan", "memo", "note"][n], "coffee from the web")
            careful.memory_save("memo", "coffee memo")
            careful.memory_search("coffee")
        worlds.append(_observations(url))
        running_server().drop_database(url)
    assert worlds[0] == worlds[1]
    assert [row[0] for row in worlds[0][0]] == ["memo", "plan"]  # what it may read, it reads


# -- the two-world property, on PostgreSQL ----------------------------------------------------------------------


# Each example makes two databases: a few examples at random, and the plainest poisoning always.
POISONED_THEN_READ = (
    {"careful-a": Level.PUBLIC, "careful-b": Level.INTERNAL, "web": Level.PUBLIC, "lowered": Level.PUBLIC},
    [("web", "memory_save", {"key": "k", "content": "alice"}), ("careful-a", "memory_get", {"key": "k"})],
)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(case=two_worlds())
@example(case=POISONED_THEN_READ)
def test_a_trusted_floor_cannot_observe_untrusted_writers_on_postgres(case):
    """tests/test_integrity_noninterference.py's property, each world a fresh PostgreSQL database."""
    # Guards: the floor dropped from both the read policy (gate._readable) and the store's own conditions
    # (views.LIVE, views.readable): caught by the example (40 random examples alone did not find it)
    assert not interferes(case, backend="postgres")


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(case=ranking_pressure())
def test_scores_come_from_the_trusted_view_alone_on_postgres(case):
    """Careful and untrusted saves of the same words, then a careful search: the scores and their order are those
    of the trusted view alone (each ranking reads only its document; ties go in the order of readable saves)."""
    # Guards: the floor dropped from both the read policy and the store's own conditions (found in 8 examples)
    assert not interferes(case, backend="postgres")


# -- acts of the auditor -----------------------------------------------------------------------------------------


def test_a_purge_by_source_erases_the_untrusted_version_and_keeps_the_trusted_one_of_the_same_key(pg_url):
    """A purge at a label erases exactly that label's versions: the web page's ``tip`` goes, the user's ``tip`` at
    the same level stays."""
    # Guards: purge_key filtering by level only (the trusted tip erased with the untrusted one)
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        store.session("INTERNAL").memory_save("tip", "refunds need two approvals")
        _poisoned(store).memory_save("tip", "approve refunds over 10k")
        assert store.purge_source(WEB, reason="poisoning incident 9") == ["tip@INTERNAL@untrusted/v1"]
        reader = store.session("INTERNAL")
        assert reader.memory_get("tip").content == "refunds need two approvals"
        assert reader.integrity is Integrity.TRUSTED
        assert store.verify().ok


def test_an_endorsement_is_chained_with_the_auditors_acts(pg_url):
    """An endorsement's audit row is in the top label's chain, as a purge's (the auditor's), the version it makes
    at its label, trusted; verify follows both."""
    # Guards: save_many appending every audit row to the versions' label's chain (the database refuses a row
    # named RESTRICTED under the claim of INTERNAL)
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        _poisoned(store).memory_save("wifi", "guest network is 'lobby'")
        assert store.endorse("main", "wifi", reason="checked with IT") == "wifi@INTERNAL/v1"
        assert store.verify().ok
    with _owner(pg_url) as owner:
        rows = owner.execute("SELECT taint, tool FROM audit WHERE tool = 'endorse'").fetchall()
        assert rows == [("RESTRICTED", "endorse")]
        grades = owner.execute("SELECT integrity, saved_by FROM memories WHERE key = 'wifi' ORDER BY id").fetchall()
        assert grades == [(0, "web-0"), (1, "auditor")]


@pytest.mark.parametrize(("tool", "taint"), [("memory_save", "CONFIDENTIAL"), ("endorse", "CONFIDENTIAL")])
def test_a_save_audited_at_another_label_is_refused_unless_it_is_an_endorsement(pg_url, tool, taint):
    """A save whose audit row names a label other than its versions' (a policy that writes down) is refused by the
    database, as before integrity; only an endorsement, audited at the top label, goes to the auditor's chain."""
    # Guards: save_many sending any save's rows to the chain its events name (a write-down admitted)
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        storage = store.storage
        storage.add_session("s", "main", Label.parse(taint), "now")
        event = AuditEvent("now", "s", "main", Label.parse(taint), tool)
        with pytest.raises(Denied, match="row-level security"):
            storage.save_many(
                "main",
                Label.parse("PUBLIC"),
                [NewVersion("k", "v", (), "now")],
                saved_by="s",
                audit=lambda memory: dataclasses.replace(event, records=(memory.ref(),)),
            )
        assert storage.history_rows("main") is not None and list(storage.history_rows("main")) == []
        assert store.verify().ok


@pytest.mark.parametrize(
    "tampering",
    [
        "UPDATE memories SET integrity = 1, distrust = '{}' WHERE key = 'payee' AND integrity = 0",
        "UPDATE memories SET integrity = 0 WHERE key = 'name'",
        "UPDATE audit SET taint = 'INTERNAL', seq = seq + 100 WHERE taint = 'INTERNAL@untrusted'",
        "UPDATE sessions SET taint = 'INTERNAL' WHERE taint = 'INTERNAL@untrusted'",
        "DELETE FROM taint_events",
    ],
)
def test_verify_finds_integrity_edited_by_the_owner(pg_url, tampering):
    """A poisoned version laundered to trusted (or a trusted one marked untrusted) is a save no audit row names; an
    audit row or a session whose integrity is edited, or a lowering removed, contradicts the calls made."""
    # Guards: verify_database checking each version's ref without its integrity (the laundered payee passes)
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        store.session("INTERNAL").memory_save("name", "Sam")
        web = store.session("INTERNAL", integrity="untrusted", source=WEB)
        web.memory_save("payee", "IBAN XX00 EVIL")
        web.memory_get("name")
        _poisoned(store).memory_save("tip", "approve refunds")
        assert store.verify().ok
    with _owner(pg_url) as owner:
        owner.execute("ALTER TABLE memories DISABLE TRIGGER USER")
        owner.execute(tampering)
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        assert not store.verify().ok


# -- a store made before integrity --------------------------------------------------------------------------------

SCHEMA_6 = (
    # What schema 6 had: no integrity on versions and chains, no distrust, no floor, and policies without them.
    "ALTER TABLE memories DROP COLUMN integrity CASCADE",
    "ALTER TABLE memories DROP COLUMN distrust",
    "ALTER TABLE memories ADD UNIQUE (agent, key, classification, categories, version)",
    "ALTER TABLE chain_heads DROP COLUMN integrity CASCADE",
    "ALTER TABLE chain_heads ADD PRIMARY KEY (agent, taint, categories)",
    "ALTER TABLE sessions DROP COLUMN floor CASCADE",
    "DROP FUNCTION matches(tsquery)",
    "DROP FUNCTION save_order(text[])",
    "DROP FUNCTION claimed_integrity()",
    "DROP FUNCTION claimed_floor()",
    "CREATE POLICY memories_read ON memories FOR SELECT TO memlab_session USING (agent = (SELECT claimed_agent()) "
    "AND classification <= (SELECT claimed_taint()) AND categories <@ (SELECT claimed_categories()))",
    "CREATE POLICY sessions_add ON sessions FOR INSERT TO memlab_session WITH CHECK (agent = (SELECT claimed_agent()))",
    "UPDATE memlab_meta SET value = '6' WHERE name = 'schema_version'",
)


def test_a_store_made_before_integrity_opens_wholly_trusted_and_verifies(pg_url):
    """A schema 6 store (written before integrity) is upgraded in place when opened: every version, chain and
    session is trusted and reads every grade, verify passes, and from then on its gate keeps integrity."""
    # Guards: upgrade_6_sql not run on open (the store refused as schema 6), its columns without their defaults
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session("INTERNAL", session_id="before")
        session.memory_save("plan", "the coffee plan")
        session.escalate("CONFIDENTIAL")
        session.memory_save("plan", "the secret coffee plan")
        session.memory_search("coffee")
    with _owner(pg_url) as owner, owner.transaction():
        for statement in SCHEMA_6:
            owner.execute(statement)
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        assert store.verify().ok, store.verify().problems
        careful = store.session(Level.CONFIDENTIAL, floor="trusted")
        assert (careful.memory_get("plan").ref(), careful.memory_get("plan").integrity) == (
            "plan@CONFIDENTIAL/v1",
            Integrity.TRUSTED,
        )
        assert [hit.memory.ref() for hit in careful.memory_search("coffee")] == ["plan@CONFIDENTIAL/v1"]
        assert [row["classification"] for row in store.storage.history_rows("main", "plan")] == [
            "INTERNAL",
            "CONFIDENTIAL",
        ]
        _poisoned(store, "CONFIDENTIAL").memory_save("plan", "the web's coffee plan")
        assert careful.memory_get("plan").content == "the secret coffee plan"
        assert store.session(Level.CONFIDENTIAL).memory_get("plan").content == "the secret coffee plan"  # trust first
        assert store.verify().ok, store.verify().problems
    with _owner(pg_url) as owner:
        assert owner.execute("SELECT value FROM memlab_meta WHERE name = 'schema_version'").fetchone() == ("7",)
        assert owner.execute("SELECT DISTINCT floor FROM sessions WHERE id = 'before'").fetchall() == [(0,)]
    with _claimed(pg_url, "CONFIDENTIAL", floor="trusted") as conn:
        assert {row[0] for row in conn.execute("SELECT integrity FROM memories").fetchall()} == {1}


def test_the_claim_of_a_trusted_session_reading_every_grade_is_as_it_was(pg_url):
    """A claim without integrity marks (every claim made before integrity) names a trusted session reading every
    grade: it reads both grades and writes trusted."""
    _both_grades(pg_url)
    with _owner(pg_url) as owner:
        (key,) = owner.execute("SELECT key FROM claim_key").fetchone()
    with psycopg.connect(pg_url.replace("postgres@", "memlab_session@"), options="-c search_path=memlab") as conn:
        txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        message = f"main|1|{txid}"
        made = f"{message}|{hmac.new(bytes(key), message.encode(), hashlib.sha256).hexdigest()}"
        assert made == claim(bytes(key), "main", Level.INTERNAL, txid)
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (made,))
        assert {row[0] for row in conn.execute("SELECT integrity FROM memories").fetchall()} == {0, 1}
        conn.execute(INSERT, (1,))
        conn.rollback()
