"""A PostgreSQL purge: a key's versions erased and audited in one transaction as the owner, then the table
rewritten on disk without their old row versions, or ``PurgeIncomplete`` naming what holds that up.

Two things keep old row versions on disk past a purge: a snapshot older than the purge (another connection's
transaction that may still see them: ``VACUUM FULL`` keeps what it sees) and a lock on the table (``VACUUM
FULL`` needs the table to itself and waits for every lock, with no timeout of its own). The session role can
hold either, and the advisory lock of any key (what saves and purges queue on). So every wait of a purge is
bounded by the store's ``purge_timeout``: past it the purge raises ``PurgeIncomplete``, either before it has
erased anything or with the erasure done and audited and only the rewrite left, which the same purge run again
does once the other connection is gone. The message names connections (pid, role, application, state), never
what they read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from memlab.errors import PurgeIncomplete
from memlab.labels import Label
from memlab.levels import Level
from memlab.records import AuditEvent, Memory
from memlab.storage.postgres.sql import COLUMNS, lock_head, lock_keys, memory_of, storable

_POLL = 0.05  # seconds between two looks at the snapshots a purge waits for

# Other connections to this database, as the owner sees them in pg_stat_activity (state is hidden from an owner
# that is neither a superuser nor in pg_read_all_stats, for connections of other roles).
_OTHERS = (
    "SELECT a.pid, a.usename, a.application_name, a.state FROM pg_stat_activity a WHERE a.pid <> pg_backend_pid() "
    "AND a.datname = current_database() AND a.backend_type <> 'autovacuum worker'"
)
# Of them, those whose snapshot or transaction is not newer than transaction %(xid)s: they may see the row
# versions it replaced, so VACUUM FULL keeps them.
_OLDER = f"{_OTHERS} AND (age(a.backend_xmin) >= age(%(xid)s::xid) OR age(a.backend_xid) >= age(%(xid)s::xid))"
_KEEPING = (
    "SELECT 'prepared transaction ' || quote_literal(gid) FROM pg_prepared_xacts WHERE database = current_database() "
    "AND age(transaction) >= age(%(xid)s::xid) UNION ALL SELECT 'replication slot ' || quote_literal(slot_name) "
    "FROM pg_replication_slots WHERE age(xmin) >= age(%(xid)s::xid)"
)
# Of them, those holding a lock a purge may wait for: on the memories or the chain heads, or an advisory one.
_LOCKING = (
    f"{_OTHERS} AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.granted AND (l.locktype = 'advisory' "
    "OR l.relation IN ('memories'::regclass, 'chain_heads'::regclass))) ORDER BY a.pid"
)


class Owner(NamedTuple):
    """What a purge needs of the storage: its owner's access and the purge's bound."""

    run: Callable[[Callable[[Any], Any]], Any]
    """Runs ``work(cursor)`` as the table's owner in one transaction, and returns what it returns."""
    connection: Any
    """The owner's own connection, in autocommit: ``VACUUM FULL`` and the look at other connections."""
    lock: threading.RLock
    """The storage's lock, held while the table is rewritten."""
    append_audits: Callable[..., None]
    """Appends audit rows to a chain in the open transaction (``PostgresStorage``'s)."""
    errors: Any
    """psycopg's ``errors`` module (a lock timeout is ``LockNotAvailable``)."""
    timeout: float
    """Seconds the purge waits for another connection's lock or older snapshot (``purge_timeout``)."""


def purge_key(
    storage: Owner,
    agent: str,
    key: str,
    level: Label | None,
    *,
    purged_at: str,
    purged_by: str,
    audit: Callable[[list[Memory]], AuditEvent],
) -> list[Memory]:
    """``PostgresStorage.purge``: erase and audit, then rewrite the table (see the module's docstring).

    Raises:
        PurgeIncomplete: another connection held a lock or an older snapshot past ``storage.purge_timeout``.
    """
    timeout = storage.timeout

    def work(cursor):
        # The session role can hold any key's advisory lock, and rows of its own label: wait a bounded time.
        cursor.execute("SELECT set_config('lock_timeout', %s, true)", (_milliseconds(timeout),))
        # The key at every level, then every chain of the agent in level order: locks are always taken keys
        # first, heads after, so a purge and saves cannot deadlock. Its audit row goes to the top chain.
        lock_keys(cursor, agent, [(key, int(chained)) for chained in Level])
        head = [lock_head(cursor, agent, chained, owner=True)() for chained in Level][-1]
        at_level = "" if level is None else "AND classification = %s AND categories = %s::text[] AND integrity = %s"
        exactly = () if level is None else (int(level.level), sorted(level.categories), int(level.integrity))
        where = (agent, key, *exactly)
        cursor.execute(
            f"SELECT m.id, {COLUMNS} FROM memories m WHERE agent = %s AND key = %s {at_level} AND purged_at IS NULL "
            "ORDER BY classification, categories, integrity DESC, version",
            where,
        )
        rows = cursor.fetchall()
        ids = [row[0] for row in rows]
        if ids:
            cursor.execute(
                "UPDATE memories SET deleted_at = %s, deleted_by = %s WHERE id = ANY(%s) AND deleted_at IS NULL",
                (purged_at, storable(purged_by), ids),
            )
            cursor.execute(
                "UPDATE memories SET content = '', tags = '[]', source = NULL, occurred_at = NULL, "
                "occurred_words = NULL, salt = NULL, purged_at = %s WHERE id = ANY(%s)",
                (purged_at, ids),
            )
        purged = [memory_of(row[1:]) for row in rows]
        storage.append_audits(cursor, agent, head, [audit(purged)])
        # Versions erased now or by an earlier run: a run again after PurgeIncomplete rewrites the table too.
        erased = cursor.execute(
            f"SELECT EXISTS (SELECT 1 FROM memories WHERE agent = %s AND key = %s {at_level} "
            "AND purged_at IS NOT NULL)",
            where,
        ).fetchone()[0]
        return purged, erased, cursor.execute("SELECT pg_current_xact_id()::text").fetchone()[0]

    try:
        purged, erased, xid = storage.run(work)
    except storage.errors.LockNotAvailable as error:
        raise PurgeIncomplete(
            f"nothing is erased yet: the purge waited {timeout:g} s for a lock held by "
            f"{_joined(_named(storage, _LOCKING, {}))}; once it is released, run the same store.purge again"
        ) from error
    if erased:
        with storage.lock:
            _rewrite(storage, xid, timeout)
    return purged


def _rewrite(storage: Owner, xid: str, timeout: float) -> None:
    """``VACUUM (FULL, ANALYZE) memories`` once no snapshot older than transaction ``xid`` (the purge's) is left,
    waiting at most ``timeout`` seconds for them and again for the table's lock: the table, its TOAST table and
    every index (the search index's entries too) written anew without the old row versions, and the planner's
    samples replaced."""
    owner = storage.connection
    # Transaction ids as xid (what pg_stat_activity shows) are the low 32 bits of the xid8 the purge had.
    holding = {"xid": str(int(xid) % 2**32)}
    deadline = time.monotonic() + timeout
    while owner.execute(f"SELECT EXISTS ({_OLDER}) OR EXISTS ({_KEEPING})", holding).fetchone()[0]:
        if time.monotonic() >= deadline:
            kept = [row[0] for row in owner.execute(_KEEPING, holding).fetchall()]
            raise PurgeIncomplete(
                "the purge is done and audited, but copies of what it erased remain in the table's files: "
                f"{_joined([*_named(storage, f'{_OLDER} ORDER BY a.pid', holding), *kept])} still held a snapshot "
                "older than the purge "
                f"after {timeout:g} s; once it ends, run the same store.purge again to finish the erasure"
            )
        time.sleep(_POLL)
    owner.execute("SELECT set_config('lock_timeout', %s, false)", (_milliseconds(timeout),))
    try:
        owner.execute("VACUUM (FULL, ANALYZE) memories")
    except storage.errors.LockNotAvailable as error:
        raise PurgeIncomplete(
            "the purge is done and audited, but copies of what it erased remain in the table's files: rewriting "
            f"them needs the table to itself, and after {timeout:g} s a lock on it was still held by "
            f"{_joined(_named(storage, _LOCKING, {}))}; once it is released, run the same store.purge again"
        ) from error
    finally:
        owner.execute("RESET lock_timeout")


def _named(storage: Owner, sql: str, parameters: dict[str, str]) -> list[str]:
    """The connections ``sql`` finds, each as pid, role, application and state (never its statements)."""
    return [
        f"pid {pid} (role {role}, application {application or 'unnamed'!r}, "
        f"{state or 'state not visible to the owner'})"
        for pid, role, application, state in storage.connection.execute(sql, parameters).fetchall()
    ]


def _joined(holders: list[str]) -> str:
    return ", ".join(holders) or "a connection that has since ended"


def _milliseconds(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"
