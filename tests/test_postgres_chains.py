"""Each PostgreSQL audit chain starts from a genesis of its own, the database's random (``open_chain()``): so a
chain's hashes are its own, and rows made in another chain do not verify in this one."""

from __future__ import annotations

import re

import psycopg

from memlab import Level, MemoryStore
from memlab.storage import verify_path
from memlab.storage.postgres.sql import AUDIT_COLUMNS
from tests.conftest import fixed_clock
from tests.pgserver import running_server


def _geneses(url: str) -> dict[tuple[str, int], str]:
    with psycopg.connect(url, options="-c search_path=memlab") as owner:
        return {
            (agent, taint): genesis
            for agent, taint, genesis in owner.execute("SELECT agent, taint, genesis FROM chain_heads")
        }


def test_every_chain_of_every_store_opens_from_a_genesis_of_its_own(pg_url):
    # Guards: open_chain()'s random genesis replaced by a constant (a surviving mutant of issue 33: no test told
    # two chains' geneses apart).
    other = running_server().fresh_database()
    try:
        for url in (pg_url, other):
            with MemoryStore(url, clock=fixed_clock) as store:
                store.session(Level.INTERNAL).memory_save("k", "v")
                store.session(Level.PUBLIC).memory_get("k")
                store.session(Level.INTERNAL, "bob").memory_get("k")
        geneses = [*_geneses(pg_url).values(), *_geneses(other).values()]
    finally:
        running_server().drop_database(other)
    assert len(geneses) == 6 and all(re.fullmatch("[0-9a-f]{64}", genesis) for genesis in geneses)
    assert len(set(geneses)) == 6, geneses


def _calls(url: str, query: str, times: int) -> None:
    with MemoryStore(url, clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL, session_id="s")
        for _ in range(times):
            session.memory_search(query)


def test_a_chain_spliced_in_from_another_store_does_not_verify(pg_url):
    """The owner (or whoever can write the tables) swaps this store's chain of main at INTERNAL for one made by
    memlab in another store, the same agent, label and session: every row's hash is right for the chain it was
    made in, and the head is moved to its end. The genesis kept in this store's head is what gives it away.
    Guards: open_chain()'s random genesis replaced by a constant (both chains would then start from it, and the
    spliced one verify here)."""
    other = running_server().fresh_database()
    try:
        _calls(pg_url, "what I asked here", 2)
        _calls(other, "what was asked elsewhere", 3)
        with psycopg.connect(other, options="-c search_path=memlab") as theirs:
            rows = theirs.execute(f"SELECT {AUDIT_COLUMNS} FROM audit ORDER BY seq").fetchall()
            head = theirs.execute("SELECT seq, hash FROM chain_heads").fetchone()
    finally:
        running_server().drop_database(other)
    assert verify_path(pg_url).ok
    with psycopg.connect(pg_url, options="-c search_path=memlab") as owner, owner.transaction():
        owner.execute("DELETE FROM audit")
        owner.cursor().executemany(
            f"INSERT INTO audit ({AUDIT_COLUMNS}) VALUES ({', '.join(['%s'] * len(rows[0]))})", rows
        )
        owner.execute("UPDATE chain_heads SET seq = %s, hash = %s", head)
    problems = verify_path(pg_url).problems
    assert any("INTERNAL" in problem and "main" in problem for problem in problems), problems
