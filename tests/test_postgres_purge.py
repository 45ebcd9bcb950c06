"""A PostgreSQL purge against other connections: what it waits for, for how long, and what it says.

A purge commits its logical part (the versions erased, the purge audited) in one transaction, then rewrites
the table (``VACUUM FULL``) so its files keep no old row version. Another connection can hold that up two
ways: a snapshot older than the purge (the rewrite keeps what it may still see) and a lock on the table (the
rewrite waits for it). Either way the purge waits at most ``purge_timeout`` seconds, then raises
``PurgeIncomplete`` naming the connection, and the same purge run again once it has ended finishes the erasure.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

from memlab import Level, MemoryStore, PurgeIncomplete
from memlab.storage import PostgresStorage
from memlab.storage.postgres.sql import lock_keys
from tests.pgserver import running_server

SECRET = "the launch code is zebra-quokka-kiwi"
FRAGMENTS = (b"zebra", b"quokka", b"kiwi")


@contextmanager
def _store(url: str, timeout: float = 0.3) -> Iterator[MemoryStore]:
    with MemoryStore(storage=PostgresStorage(url, purge_timeout=timeout)) as store:
        session = store.session(Level.CONFIDENTIAL)
        for n in range(50):
            session.memory_save(f"note-{n}", f"an ordinary note number {n}", tags=["note"])
        session.memory_save("launch", SECRET, tags=["launch"])
        yield store


@contextmanager
def _session_role(url: str, application: str) -> Iterator[psycopg.Connection]:
    """A connection as the session role, no claim, named ``application`` in pg_stat_activity."""
    with psycopg.connect(
        url.replace("postgres@", "memlab_session@"), autocommit=True, application_name=application
    ) as conn:
        yield conn


def _on_disk(url: str) -> list[bytes]:
    raw = running_server().table_bytes(url)
    return [fragment for fragment in FRAGMENTS if fragment in raw]


def test_a_purge_names_the_connection_whose_snapshot_keeps_the_old_rows_never_the_content(pg_url):
    # Guards: PurgeIncomplete without the holder's pid, role, application and state (issue 33, finding 2).
    with _store(pg_url) as store, _session_role(pg_url, "nightly report") as holder:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT count(*) FROM memlab.memlab_meta")
        started = time.monotonic()
        with pytest.raises(PurgeIncomplete) as incomplete:
            store.purge("main", "launch", reason="ticket SEC-20")
        waited = time.monotonic() - started
        message = str(incomplete.value)
        pid = holder.info.backend_pid
        for named in (f"pid {pid}", "memlab_session", "nightly report", "idle in transaction", "0.3 s"):
            assert named in message, (named, message)
        assert not any(word in message for word in ("zebra", "quokka", "kiwi", "launch code"))
        assert 0.3 <= waited < 3, waited
        holder.execute("COMMIT")
        assert store.purge("main", "launch", reason="ticket SEC-20, finished") == []
        assert _on_disk(pg_url) == [] and store.verify().ok


def test_a_purge_gives_up_on_a_lock_held_on_the_table_within_its_timeout_and_a_rerun_finishes(pg_url):
    """Issue 33, finding 3: the session role reads the table and idles in its transaction; purge's VACUUM FULL
    waited for its lock with no end (still blocked after 35 s). Guards: the rewrite run without a lock_timeout."""
    with _store(pg_url) as store, _session_role(pg_url, "idle reader") as holder:
        holder.execute("BEGIN")
        holder.execute("SELECT count(*) FROM memlab.memories")  # no claim: it sees nothing, but holds a lock
        started = time.monotonic()
        with pytest.raises(PurgeIncomplete) as incomplete:
            store.purge("main", "launch", reason="ticket SEC-21")
        waited = time.monotonic() - started
        message = str(incomplete.value)
        assert f"pid {holder.info.backend_pid}" in message and "idle reader" in message, message
        assert "lock" in message and "store.purge" in message, message
        assert waited < 3, waited
        # The logical purge is committed and audited, consistent; the disk keeps copies until the rerun.
        assert store.history("launch")["content"].tolist() == [""]
        audit = store.audit()
        assert audit[audit["tool"] == "purge"]["records"].tolist() == [["launch@CONFIDENTIAL/v1"]]
        assert store.verify().ok
        assert _on_disk(pg_url) == list(FRAGMENTS)
        holder.execute("COMMIT")
        assert store.purge("main", "launch", reason="ticket SEC-21, finished") == []
        assert _on_disk(pg_url) == [] and store.verify().ok


def test_a_purge_held_up_before_it_erases_anything_changes_nothing_and_says_so(pg_url):
    """The session role may take any advisory lock, the key locks of saves and purges among them: a purge waiting
    for one gives up within its timeout, having erased and audited nothing. Guards: the purge's own transaction
    run without a lock_timeout (it waits as long as the lock is held)."""
    with _store(pg_url) as store, _session_role(pg_url, "key squatter") as holder:
        holder.execute("BEGIN")
        lock_keys(holder, "main", [("launch", int(Level.CONFIDENTIAL))])
        started = time.monotonic()
        with pytest.raises(PurgeIncomplete, match="nothing is erased yet") as incomplete:
            store.purge("main", "launch", reason="ticket SEC-22")
        assert time.monotonic() - started < 3
        assert f"pid {holder.info.backend_pid}" in str(incomplete.value) and "key squatter" in str(incomplete.value)
        assert store.session(Level.CONFIDENTIAL).memory_get("launch").content == SECRET
        assert "purge" not in store.audit()["tool"].tolist() and store.verify().ok
        holder.execute("COMMIT")
        assert store.purge("main", "launch", reason="ticket SEC-22") == ["launch@CONFIDENTIAL/v1"]
        assert _on_disk(pg_url) == [] and store.verify().ok


@pytest.mark.parametrize("timeout", [0, -1.0, float("nan"), "5"])
def test_a_purge_timeout_that_is_not_a_positive_number_is_refused(pg_url, timeout):
    from memlab import InvalidArgument

    with pytest.raises(InvalidArgument, match="purge_timeout"):
        PostgresStorage(pg_url, purge_timeout=timeout)
