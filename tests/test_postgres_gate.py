"""The PostgreSQL gate attacked from the session role itself: hand-written SQL on a connection as
``memlab_session``, the role every session call runs as.

Each test is an attack on one promise of docs/security.md ("Row-level security on PostgreSQL"): the role
cannot forge the claim the policies rest on (P1), nothing it can read moves with writes above its taint (P2),
a delete cannot be undone (P3), every table it writes is gated by agent and taint and no chain's genesis is
its to write (P4), and a purge leaves no content in the table's or the search index's files (P5).
"""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import psycopg
import pytest

from memlab import Level, MemoryStore
from memlab.storage import verify_path
from tests.conftest import fixed_clock
from tests.pgserver import running_server

REFUSED = psycopg.errors.InsufficientPrivilege


def _attacker(url: str) -> psycopg.Connection:
    """A connection as the session role that memlab did not open: autocommit, nothing set."""
    return psycopg.connect(
        url.replace("postgres@", "memlab_session@"), autocommit=True, options="-c search_path=memlab"
    )


def _owner(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True, options="-c search_path=memlab")


def _claim(url: str, agent: str, taint: Level, txid: str) -> str:
    """The claim memlab would set for ``agent`` at ``taint`` in transaction ``txid``, made with the owner's key
    (which the test reads as the owner: the session role cannot)."""
    with _owner(url) as owner:
        (key,) = owner.execute("SELECT key FROM claim_key").fetchone()
    message = f"{agent}|{int(taint)}|{txid}"
    return f"{message}|{hmac.new(bytes(key), message.encode(), hashlib.sha256).hexdigest()}"


def _filled(url: str) -> None:
    """Agents main and bob, a memory at every level each."""
    with MemoryStore(url, clock=fixed_clock) as store:
        for agent in ("main", "bob"):
            for level in Level:
                store.session(level, agent).memory_save(f"{agent}-{level.name.lower()}", f"{agent}'s {level.name} note")


def _seen(conn: psycopg.Connection) -> set[tuple[str, int]]:
    """Every memory the connection can read, as (agent, classification)."""
    return {tuple(row) for row in conn.execute("SELECT agent, classification FROM memories").fetchall()}


# -- P1: the claim -----------------------------------------------------------------------------------------

FORGERIES = {
    "SET the old settings": ["SET memlab.agent = 'bob'", "SET memlab.taint = '3'"],
    "SET LOCAL the old settings": ["BEGIN", "SET LOCAL memlab.agent = 'bob'", "SET LOCAL memlab.taint = '3'"],
    "set_config the old settings": [
        "BEGIN",
        "SELECT set_config('memlab.agent', 'bob', true), set_config('memlab.taint', '3', true)",
    ],
    "SET a claim without its mac": [
        "BEGIN",
        "SELECT set_config('memlab.claim', 'bob|3|' || pg_current_xact_id(), true)",
    ],
    "SET a claim with a made-up mac": [
        "BEGIN",
        "SELECT set_config('memlab.claim', 'bob|3|' || pg_current_xact_id() || '|' || repeat('ab', 32), true)",
    ],
    "SET a claim hashed without the key": [
        "BEGIN",
        "SELECT set_config('memlab.claim', 'bob|3|' || pg_current_xact_id() || '|' || "
        "encode(sha256(convert_to('bob|3|' || pg_current_xact_id(), 'UTF8')), 'hex'), true)",
    ],
    "RESET ALL": ["SET memlab.agent = 'bob'", "RESET ALL"],
    "RESET the claim": ["SET memlab.claim = 'x'", "RESET memlab.claim"],
    "SET ROLE NONE": ["SET ROLE NONE", "SET memlab.agent = 'bob'", "SET memlab.taint = '3'"],
    "RESET ROLE": ["RESET ROLE", "SET memlab.agent = 'bob'", "SET memlab.taint = '3'"],
    "SET ROLE to itself": ["SET ROLE memlab_session", "SET memlab.agent = 'bob'", "SET memlab.taint = '3'"],
    "RESET SESSION AUTHORIZATION": ["RESET SESSION AUTHORIZATION", "SET memlab.taint = '3'"],
    "a search_path of its own": ["SET search_path = pg_temp, memlab", "SET memlab.agent = 'bob'"],
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_the_session_role_cannot_forge_its_way_to_another_agents_or_a_higher_level(pg_url, forgery):
    """P1: the policies rest on a claim only memlab can make, not on settings the role can set itself."""
    _filled(pg_url)
    with _attacker(pg_url) as conn:
        for statement in FORGERIES[forgery]:
            conn.execute(statement)
        assert _seen(conn) == set()
        assert conn.execute("SELECT count(*) FROM chain_heads").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM matches(to_tsquery('english', 'note'))").fetchone()[0] == 0


@pytest.mark.parametrize(
    "statement", ["SET ROLE postgres", "SET SESSION AUTHORIZATION postgres", "SET ROLE pg_read_all_data"]
)
def test_the_session_role_cannot_become_another_role(pg_url, statement):
    _filled(pg_url)
    with _attacker(pg_url) as conn, pytest.raises(REFUSED):
        conn.execute(statement)


def test_the_session_role_cannot_read_the_key(pg_url):
    _filled(pg_url)
    with _attacker(pg_url) as conn, pytest.raises(REFUSED):
        conn.execute("SELECT * FROM claim_key")


def test_a_true_claim_admits_its_agent_at_its_taint_and_only_in_its_own_transaction(pg_url):
    """The claim memlab makes admits what it names; replayed in another transaction (as one seen in
    pg_stat_activity could be) it admits nothing, nor on another connection while the first is open."""
    _filled(pg_url)
    with _attacker(pg_url) as conn, _attacker(pg_url) as other:
        conn.execute("BEGIN")
        txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        claim = _claim(pg_url, "bob", Level.INTERNAL, txid)
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (claim,))
        assert _seen(conn) == {("bob", 0), ("bob", 1)}
        other.execute("BEGIN")
        other.execute("SELECT pg_current_xact_id()")
        other.execute("SELECT set_config('memlab.claim', %s, true)", (claim,))
        assert _seen(other) == set()
        other.execute("ROLLBACK")
        conn.execute("COMMIT")
        conn.execute("BEGIN")
        conn.execute("SELECT pg_current_xact_id()")
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (claim,))
        assert _seen(conn) == set()
        conn.execute("SELECT set_config('memlab.claim', %s, false)", (claim,))  # session-wide: still the old txid
        assert _seen(conn) == set()


def test_a_claim_edited_to_another_agent_or_level_admits_nothing(pg_url):
    _filled(pg_url)
    with _attacker(pg_url) as conn:
        conn.execute("BEGIN")
        txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        claim = _claim(pg_url, "main", Level.PUBLIC, txid)
        for edited in (claim.replace("main|0|", "bob|0|"), claim.replace("main|0|", "main|3|"), "x" + claim):
            conn.execute("SELECT set_config('memlab.claim', %s, true)", (edited,))
            assert _seen(conn) == set(), edited
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (claim,))
        assert _seen(conn) == {("main", 0)}


# -- P2: counters ------------------------------------------------------------------------------------------


def _observations(url: str) -> list[object]:
    """Everything a PUBLIC session of main can read through the tables (a refusal counts as what it saw)."""
    seen: list[object] = []
    with _attacker(url) as conn:
        conn.execute("BEGIN")
        txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (_claim(url, "main", Level.PUBLIC, txid),))
        for probe in (
            "SELECT id FROM memories ORDER BY key",
            "SELECT ctid FROM memories ORDER BY key",
            "SELECT xmin FROM memories ORDER BY key",
            "SELECT * FROM memories ORDER BY key",
            "SELECT key, classification, version, current FROM memories ORDER BY key",
            "SELECT agent, taint, seq FROM chain_heads",
            "SELECT ctid FROM chain_heads",
            "INSERT INTO memories (agent, key, content, tags, classification, version, saved_at, saved_by, "
            "commitment, current) VALUES ('main', 'probe', 'x', '[]', 0, 1, 'now', 's', 'c', false) RETURNING id",
            "INSERT INTO memories (agent, key, content, tags, classification, version, saved_at, saved_by, "
            "commitment, current) VALUES ('main', 'probe', 'x', '[]', 0, 1, 'now', 's', 'c', false) RETURNING *",
            "INSERT INTO taint_events (session_id, at, from_level, to_level) VALUES ('s', 'now', 'PUBLIC', 'PUBLIC') "
            "RETURNING id",
        ):
            conn.execute("SAVEPOINT probe")
            try:
                seen.append(conn.execute(probe).fetchall())
            except psycopg.Error as error:
                seen.append(type(error).__name__)
            conn.execute("ROLLBACK TO SAVEPOINT probe")
        conn.execute("ROLLBACK")
    return seen


def test_nothing_the_session_role_reads_in_the_tables_moves_with_saves_above_its_taint(pg_url):
    """P2: the same PUBLIC operations, with and without five CONFIDENTIAL saves between them (no global id
    or row address in what it can read, nor in what an insert returns)."""
    worlds = []
    for hidden in (0, 5):
        url = running_server().fresh_database()
        with MemoryStore(url, clock=fixed_clock) as store:
            public, secret = store.session(Level.PUBLIC, session_id="p"), store.session(Level.CONFIDENTIAL)
            public.memory_save("a", "first")
            for n in range(hidden):
                secret.memory_save(f"s{n}", "hidden")
            public.memory_save("b", "second")
        worlds.append(_observations(url))
        running_server().drop_database(url)
    assert worlds[0] == worlds[1]
    assert worlds[0][4] == [("a", 0, 1, True), ("b", 0, 1, True)]  # what it may read, it reads


def test_the_planners_samples_are_hidden_from_the_session_role(pg_url):
    """``pg_stats`` would show sampled content and keys of every level; it hides a table under RLS."""
    _filled(pg_url)
    with _owner(pg_url) as owner:
        owner.execute("ANALYZE memories")
        assert owner.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'memories'").fetchone()[0] > 0
    with _attacker(pg_url) as conn:
        _claimed(pg_url, conn, "main", Level.RESTRICTED)
        assert conn.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'memories'").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM pg_stats_ext WHERE tablename = 'memories'").fetchone()[0] == 0


# -- P3: deletes -------------------------------------------------------------------------------------------


def test_the_session_role_cannot_undo_a_delete(pg_url):
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL)
        session.memory_save("k", "v")
        session.memory_delete("k")
    with _attacker(pg_url) as conn:
        conn.execute("BEGIN")
        txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (_claim(pg_url, "main", Level.INTERNAL, txid),))
        for undo in ("deleted_at = NULL", "deleted_at = 'later'", "deleted_by = 'someone else'"):
            conn.execute("SAVEPOINT undo")
            with pytest.raises(REFUSED, match="final"):
                conn.execute(f"UPDATE memories SET {undo} WHERE key = 'k'")
            conn.execute("ROLLBACK TO SAVEPOINT undo")
        conn.execute("COMMIT")
    with MemoryStore(pg_url) as store:
        assert store.session(Level.INTERNAL).memory_get("k") is None and store.verify().ok


def test_verify_finds_an_audited_delete_whose_version_is_live(pg_url):
    """The owner (or anyone past the trigger) undoing a delete: the audit still records it."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL)
        session.memory_save("k", "v")
        session.memory_delete("k")
    with _owner(pg_url) as owner:
        owner.execute("ALTER TABLE memories DISABLE TRIGGER USER")
        owner.execute("UPDATE memories SET deleted_at = NULL, deleted_by = NULL WHERE key = 'k'")
        owner.execute("ALTER TABLE memories ENABLE TRIGGER USER")
    result = verify_path(pg_url)
    assert any("audited as deleted, but live" in problem for problem in result.problems), result.problems


def test_verify_finds_the_deletions_trigger_dropped(pg_url):
    MemoryStore(pg_url).close()
    with _owner(pg_url) as owner:
        owner.execute("DROP TRIGGER deletions_are_final ON memories")
    assert any("deletions_are_final" in problem for problem in verify_path(pg_url).problems)


def test_a_purge_still_erases_a_deleted_key(pg_url):
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL)
        session.memory_save("k", "v")
        session.memory_delete("k")
        assert store.purge("main", "k", reason="ticket 1") == ["k@INTERNAL/v1"]
        assert store.verify().ok


# -- P4: what else it writes -------------------------------------------------------------------------------


def _claimed(url: str, conn: psycopg.Connection, agent: str, taint: Level) -> None:
    conn.execute("BEGIN")
    txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
    conn.execute("SELECT set_config('memlab.claim', %s, true)", (_claim(url, agent, taint, txid),))


OTHER_WRITES = {
    "a taint event in another agent's session": "INSERT INTO taint_events (session_id, at, from_level, to_level) "
    "VALUES ('bobs', 'now', 'PUBLIC', 'INTERNAL')",
    "a taint event at another taint": "INSERT INTO taint_events (session_id, at, from_level, to_level) "
    "VALUES ('mains', 'now', 'INTERNAL', 'RESTRICTED')",
    "a session of another agent": "INSERT INTO sessions (id, agent, taint, created_at) VALUES ('x', 'bob', 'INTERNAL', "
    "'now')",
    "a session at another taint": "INSERT INTO sessions (id, agent, taint, created_at) VALUES ('x', 'main', "
    "'RESTRICTED', 'now')",
    # Guards: the audit_append policy without its taint clause (`WITH CHECK (agent = ...)` alone).
    "an audit row at another taint": "INSERT INTO audit (agent, taint, seq, at, session_id, tool, outcome, records, "
    "notes, hash) VALUES ('main', 'RESTRICTED', 99, 'now', 's', 'memory_get', 'ok', '[]', '[]', 'h')",
    "an audit row for another agent": "INSERT INTO audit (agent, taint, seq, at, session_id, tool, outcome, records, "
    "notes, hash) VALUES ('bob', 'INTERNAL', 99, 'now', 's', 'memory_get', 'ok', '[]', '[]', 'h')",
    "a chain's genesis": "UPDATE chain_heads SET genesis = 'mine'",
    "a chain head of its own making": "INSERT INTO chain_heads (agent, taint, genesis, seq, hash) "
    "VALUES ('main', 1, 'mine', 0, 'mine')",
}


@pytest.mark.parametrize("write", list(OTHER_WRITES))
def test_the_session_role_writes_only_its_agents_rows_at_its_taint(pg_url, write):
    """P4: every table it can write is gated by agent and taint; nothing it writes reaches a genesis."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        store.session(Level.INTERNAL, session_id="mains").memory_save("k", "v")
        store.session(Level.INTERNAL, "bob", session_id="bobs").memory_save("k", "v")
    with _attacker(pg_url) as conn:
        _claimed(pg_url, conn, "main", Level.INTERNAL)
        with pytest.raises(REFUSED):
            conn.execute(OTHER_WRITES[write])


def test_the_session_role_may_write_what_memlab_writes(pg_url):
    """The control of the test above: the same rows at its own agent and taint are accepted."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        store.session(Level.INTERNAL, session_id="mains").memory_save("k", "v")
    with _attacker(pg_url) as conn:
        _claimed(pg_url, conn, "main", Level.INTERNAL)
        conn.execute(
            "INSERT INTO taint_events (session_id, at, from_level, to_level) VALUES ('mains', 'now', 'PUBLIC', "
            "'INTERNAL')"
        )
        conn.execute("INSERT INTO sessions (id, agent, taint, created_at) VALUES ('y', 'main', 'INTERNAL', 'now')")
        conn.execute(
            "INSERT INTO audit (agent, taint, seq, at, session_id, tool, outcome, records, notes, hash) "
            "VALUES ('main', 'INTERNAL', 99, 'now', 's', 'memory_get', 'ok', '[]', '[]', 'h')"
        )
        assert conn.execute("UPDATE chain_heads SET seq = seq").rowcount == 1
        conn.execute("ROLLBACK")


# Each write of the control above, as the session role, in a transaction whose claim does not verify.
OWN_WRITES = {
    "a version": "INSERT INTO memories (agent, key, content, tags, classification, version, saved_at, saved_by, "
    "commitment, current) VALUES ('main', 'new', 'v', '[]', 1, 1, 'now', 's', 'c', true)",
    "a version's mark": "UPDATE memories SET current = current",
    "an audit row": "INSERT INTO audit (agent, taint, seq, at, session_id, tool, outcome, records, notes, hash) "
    "VALUES ('main', 'INTERNAL', 99, 'now', 's', 'memory_get', 'ok', '[]', '[]', 'h')",
    "a session": "INSERT INTO sessions (id, agent, taint, created_at) VALUES ('y', 'main', 'INTERNAL', 'now')",
    "a move of the head": "UPDATE chain_heads SET seq = seq",
}
UNVERIFIED = {
    "no claim": lambda url, txid: None,
    "a made-up mac": lambda url, txid: f"main|1|{txid}|{'ab' * 32}",
    "the mac of another transaction": lambda url, txid: _claim(url, "main", Level.INTERNAL, str(int(txid) - 1)),
}


@pytest.mark.parametrize("write", list(OWN_WRITES))
@pytest.mark.parametrize("claim", list(UNVERIFIED))
def test_a_claim_that_does_not_verify_writes_nothing_even_at_the_agent_and_taint_it_names(pg_url, write, claim):
    """P4: the policies that admit a row only at exactly the claim compare it with the claim ``claimed()``
    verified, not with the text of the setting: a claim naming main at INTERNAL, as the role's own SQL sets it
    with no mac, a made-up one, or the mac of an earlier transaction, admits none of the writes the true
    claim admits (``test_the_session_role_may_write_what_memlab_writes``).

    Guards: ``gate.equality_policies`` comparing with the setting's own parts
    (the agent and level split from ``current_setting('memlab.claim', true)`` in place of ``claimed()``): seen
    failing, the made-up mac and the replayed one wrote the version, the audit row, the session and the head's
    move (the mark stayed refused by the reads' policy)."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        store.session(Level.INTERNAL, session_id="mains").memory_save("k", "v")
    with _attacker(pg_url) as conn:
        conn.execute("BEGIN")
        txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        forged = UNVERIFIED[claim](pg_url, txid)
        if forged is not None:
            conn.execute("SELECT set_config('memlab.claim', %s, true)", (forged,))
        try:
            changed = conn.execute(OWN_WRITES[write]).rowcount
        except REFUSED:
            changed = 0
        assert changed == 0
        conn.execute("ROLLBACK")


def _verifications(conn: psycopg.Connection, statement: str) -> int:
    """How often ``statement`` called ``claimed()`` (this transaction's function statistics)."""
    count = "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions WHERE funcname = 'claimed'"
    before = conn.execute(count).fetchone()[0]
    conn.execute(statement)
    return conn.execute(count).fetchone()[0] - before


def test_a_policy_that_admits_exactly_the_claim_verifies_it_once(pg_url):
    """Every call locks its chain's head, appends an audit row and moves the head, each through policies that
    admit a row only at exactly the claim: each comparison verifies the claim once (the MAC over the claim costs
    ~8 µs of server CPU per verification), where a sub-select per column verified it three times, six for the
    move's USING and WITH CHECK. The reads' policy, which compares by ``<=``, ``<@`` and ``>=``, still verifies
    per column (four: agent, level, categories, floor): a row comparison has one operator for all of its columns.

    Guards: the chain_heads and audit policies with a sub-select per column (``agent = (SELECT
    claimed_agent()) AND taint = (SELECT claimed_taint()) AND ...``): seen 3 for the head's lock."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        store.session(Level.INTERNAL).memory_save("k", "v")
    _assert_verified_once(pg_url)


def _assert_verified_once(pg_url: str) -> None:
    with _owner(pg_url) as owner:
        (key,) = owner.execute("SELECT key FROM claim_key").fetchone()
    with psycopg.connect(pg_url, options="-c search_path=memlab") as conn:
        conn.execute("SET track_functions = 'all'")  # a superuser's setting, then the session role
        conn.execute("SET ROLE memlab_session")
        txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        message = f"main|1|{txid}"
        claim = f"{message}|{hmac.new(bytes(key), message.encode(), hashlib.sha256).hexdigest()}"
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (claim,))
        head = "chain_heads WHERE agent = 'main' AND taint = 1 AND categories = '{}'"
        assert _verifications(conn, f"SELECT seq, hash FROM {head} FOR UPDATE") == 1
        (seq,) = conn.execute(f"SELECT seq FROM {head}").fetchone()
        assert _verifications(conn, OWN_WRITES["an audit row"]) == 1
        assert _verifications(conn, f"UPDATE {head.replace(' WHERE', ' SET seq = seq + 1 WHERE')}") == 2
        assert _verifications(conn, "SELECT key FROM memories WHERE agent = 'main' AND key = 'k'") == 4
        assert conn.execute(f"SELECT seq FROM {head}").fetchone() == (seq + 1,)  # the move was admitted
        conn.rollback()


def test_a_schema_5_store_gets_the_policies_that_verify_once_and_admits_what_it_admitted(pg_url):
    """A store made before (schema 5: a sub-select per column in every policy) opens as schema 6 with the
    equality policies made anew; its sessions read and write as before, and its chain verifies.

    Guards: ``_upgrade_5_sql`` not run on open (the old policies kept: seen 4 verifications for the head's lock)."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        store.session(Level.INTERNAL).memory_save("k", "v")
    agent_is, taint = "agent = (SELECT claimed_agent())", "(SELECT claimed_taint())"
    at_chain = f"{agent_is} AND taint = {taint} AND categories = (SELECT claimed_categories())"
    with _owner(pg_url) as owner, owner.transaction():
        for statement in (
            "DROP POLICY chain_heads_read ON chain_heads",
            "DROP POLICY audit_append ON audit",
            f"CREATE POLICY chain_heads_read ON chain_heads FOR SELECT TO memlab_session USING ({at_chain})",
            "CREATE POLICY audit_append ON audit FOR INSERT TO memlab_session WITH CHECK "
            f"({agent_is} AND taint = (SELECT claimed_label()))",
            "UPDATE memlab_meta SET value = '5' WHERE name = 'schema_version'",
        ):
            owner.execute(statement)
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL)
        assert session.memory_get("k").content == "v"
        assert session.memory_save("k", "w").version == 2
        assert store.verify().ok
    with _owner(pg_url) as owner:
        assert owner.execute("SELECT value FROM memlab_meta WHERE name = 'schema_version'").fetchone() == ("7",)
    _assert_verified_once(pg_url)


# -- P5: purge and the files on disk -----------------------------------------------------------------------

SECRET = b"xylophonequartz"


def _files_holding(url: str, needle: bytes) -> list[str]:
    """The files of the memories table (heap, TOAST) and of its indexes that hold ``needle``, after a checkpoint."""
    data = running_server().data
    with _owner(url) as owner:
        owner.execute("CHECKPOINT")
        paths = [
            row[0]
            for row in owner.execute(
                "SELECT pg_relation_filepath(c.oid) FROM pg_class c WHERE c.oid = 'memories'::regclass "
                "OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'memories'::regclass) "
                "OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN ('memories'::regclass, "
                "(SELECT reltoastrelid FROM pg_class WHERE oid = 'memories'::regclass)))"
            )
        ]
    holding = []
    for path in paths:
        for file in sorted(Path(data).glob(f"{path}*")):
            if needle in file.read_bytes():
                holding.append(file.name)
    return holding


def test_a_purge_leaves_no_content_or_tags_in_the_table_or_index_files(pg_url):
    """P5. Guards: purge without its VACUUM (FULL): the old row versions and the GIN entries stay in the files."""
    with MemoryStore(pg_url, clock=fixed_clock) as store:
        session = store.session(Level.CONFIDENTIAL)
        for n in range(50):
            session.memory_save(f"other-{n}", f"an ordinary note number {n}", tags=["routine"])
        session.memory_save("salary", f"Sam earns {SECRET.decode()} a year", tags=[f"{SECRET.decode()}tag"])
        session.memory_save("salary", f"Sam now earns {SECRET.decode()}", tags=["pay"])
        assert _files_holding(pg_url, SECRET), "the content is in the files before the purge"
        assert store.purge("main", "salary", reason="ticket 7") == ["salary@CONFIDENTIAL/v1", "salary@CONFIDENTIAL/v2"]
        assert _files_holding(pg_url, SECRET) == []
        assert [hit.memory.key for hit in session.memory_search("ordinary note 7")][:1] == ["other-7"]
        assert store.verify().ok
