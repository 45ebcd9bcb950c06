"""The session role attacking its own role: settings it gives its logins (``ALTER ROLE ... SET``), a password
it sets itself, and what verify reports of the role's attributes.

``ALTER ROLE <itself> SET <setting>`` and ``ALTER ROLE <itself> PASSWORD`` are open to every role, no claim
needed; a role setting reaches every later login of the role, so memlab's own. The role is cluster-wide (one
per test server), so each test puts it back as it found it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from memlab import Level, MemoryStore
from memlab.storage import verify_path
from memlab.storage.postgres.role import PINNED

ROLE = "memlab_session"


def _attacker(url: str) -> psycopg.Connection:
    """A connection as the session role that memlab did not open: autocommit, no claim."""
    return psycopg.connect(url.replace("postgres@", f"{ROLE}@"), autocommit=True)


def _owner(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True, options="-c search_path=memlab")


@pytest.fixture(autouse=True)
def _role_put_back(pg_url: str) -> Iterator[None]:
    """The session role without settings, password or memberships, and no superuser, after each test."""
    yield
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"ALTER ROLE {ROLE} RESET ALL")
        conn.execute(f"ALTER ROLE {ROLE} PASSWORD NULL NOSUPERUSER NOBYPASSRLS")
        for (other,) in conn.execute(
            "SELECT r.rolname FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid "
            "JOIN pg_roles s ON s.oid = m.member WHERE s.rolname = %s",
            (ROLE,),
        ).fetchall():
            conn.execute(f"REVOKE {other} FROM {ROLE}")


# What the role sets on itself, each breaking or bending memlab's logins were it not pinned at connect.
HOSTILE_SETTINGS = {
    "default_transaction_read_only": "on",  # every save fails (ReadOnlySqlTransaction)
    "statement_timeout": "1",  # every statement over 1 ms is cancelled
    "lock_timeout": "1",  # a save waiting for another's key lock fails
    "idle_session_timeout": "1",  # the pool's idle connections are closed under it
    "idle_in_transaction_session_timeout": "1",  # a pipeline's transaction killed between round trips
    "default_transaction_isolation": "repeatable read",  # saves numbered from a stale snapshot
    "row_security": "off",  # every read under a policy raises instead of filtering
    "gin_fuzzy_search_limit": "1",  # the search index returns a random subset of the matches
    "search_path": "pg_temp",  # the tables memlab names found elsewhere
    "client_encoding": "LATIN1",  # content outside Latin-1 cannot be sent
    "exit_on_error": "on",  # any error (a taken session id) closes the connection
}


@pytest.mark.parametrize("setting", list(HOSTILE_SETTINGS))
def test_settings_the_session_role_gives_its_own_logins_do_not_reach_memlabs(pg_url, setting):
    """Finding 1 of issue 33: with no claim at all, the role runs ``ALTER ROLE memlab_session SET ...``; every later
    memlab login inherited it (``default_transaction_read_only = on``: every save of every agent failed).
    Guards: the session pool's connections without the settings ``role.PINNED`` gives them at connect."""
    MemoryStore(pg_url).close()
    with _attacker(pg_url) as conn:
        conn.execute(
            sql.SQL("ALTER ROLE {} SET {} = {}").format(
                sql.Identifier(ROLE), sql.Identifier(setting), sql.Literal(HOSTILE_SETTINGS[setting])
            )
        )
    with MemoryStore(pg_url) as store:
        session = store.session(Level.INTERNAL)
        for n in range(3):
            assert session.memory_save(f"k{n}", f"coffee note {n}, naïve 名前").version == 1
        time.sleep(0.05)  # longer than a 1 ms idle timeout
        assert session.memory_get("k1").content == "coffee note 1, naïve 名前"
        assert sorted(hit.memory.key for hit in session.memory_search("coffee")) == ["k0", "k1", "k2"]
        pinned = {**PINNED, "search_path": "memlab"}
        with store.storage._pool.connection() as conn:
            assert {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in pinned} == pinned
        result = store.verify()
    # And verify names the setting the role gave itself.
    assert not result.ok
    assert any(f"{setting}=" in problem and "ALTER ROLE" in problem for problem in result.problems), result.problems


def test_verify_reports_a_setting_the_role_gave_itself_in_one_database(pg_url):
    # Guards: verify reading only the role's settings for every database (setdatabase = 0).
    MemoryStore(pg_url).close()
    with _attacker(pg_url) as conn:
        conn.execute(f"ALTER ROLE {ROLE} IN DATABASE {conn.info.dbname} SET work_mem = '64kB'")
    problems = verify_path(pg_url).problems
    assert any("work_mem=64kB" in problem for problem in problems), problems


def test_verify_reports_a_password_the_session_role_set_itself(pg_url):
    """Finding 1 of issue 33: ``ALTER ROLE memlab_session PASSWORD ...`` is open to the role itself, and a new
    password is a new way in (or locks memlab out). The owner, a superuser here, reads ``pg_authid``: memlab
    records a digest of the role's password verifier when it first logs in, and verify compares.
    Guards: verify not comparing the verifier with the recorded digest."""
    with MemoryStore(pg_url) as store:
        store.session().memory_save("k", "v")
    assert verify_path(pg_url).ok
    with _attacker(pg_url) as conn:
        conn.execute(f"ALTER ROLE {ROLE} PASSWORD 'chosen by the agent'")
    problems = verify_path(pg_url).problems
    assert any("password" in problem and "changed" in problem for problem in problems), problems
    with MemoryStore(pg_url) as store:  # opening again does not take the new password as the known one
        assert not store.verify().ok
        store.storage.trust_session_password()  # what the operator runs after a rotation of their own
        assert store.verify().ok


# What the owner (or a superuser) may do to the role that would put it above the gate.
ABOVE_THE_GATE = {
    "is a superuser": f"ALTER ROLE {ROLE} SUPERUSER",
    "bypasses row-level security": f"ALTER ROLE {ROLE} BYPASSRLS",
    "is a member of role memlab_helper": f"GRANT memlab_helper TO {ROLE}",
}


@pytest.mark.parametrize("change", list(ABOVE_THE_GATE))
def test_verify_reports_a_session_role_above_the_gate(pg_url, change):
    """Issue 33, finding 4a. Guards: verify's check that the session role is no superuser, has no BYPASSRLS and is
    a member of no role, disabled (a surviving mutant: no test made the role any of these)."""
    MemoryStore(pg_url).close()
    assert verify_path(pg_url).ok
    with psycopg.connect(pg_url, autocommit=True) as conn:
        if (
            "memlab_helper" in change
            and not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'memlab_helper'").fetchone()
        ):
            conn.execute("CREATE ROLE memlab_helper NOLOGIN")
        conn.execute(ABOVE_THE_GATE[change])
    problems = verify_path(pg_url).problems
    assert any(f"the session role {ROLE} {change}" in problem for problem in problems), problems
