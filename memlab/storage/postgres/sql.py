"""What the PostgreSQL modules share: the URL test, the driver, names of columns, the locks of a save, rows.

Saves and deletes first take a transaction advisory lock per key and level (gap-free versions, no duplicates,
no retries) and lock the chain's head after them, for their audit rows and the commit; reads lock the head
first, so the audit's order is the order of what they saw. Locks are always taken keys first, heads after.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from memlab.errors import SchemaError
from memlab.labels import Integrity, Label
from memlab.levels import Level
from memlab.records import Memory
from memlab.storage import chain

IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")
COLUMNS = (
    "m.key, m.content, m.tags, m.classification, m.version, m.saved_at, m.saved_by, m.source, m.occurred_at, "
    "m.categories, m.integrity, m.distrust"
)
AUDIT_COLUMNS = "seq, at, session_id, agent, taint, tool, key, query, outcome, records, notes, message, digest, hash"


def is_postgres_url(path: object) -> bool:
    """Whether ``path`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return isinstance(path, str) and path.startswith(("postgresql://", "postgres://"))


def require_psycopg():
    try:
        import psycopg
        import psycopg_pool
    except ImportError as error:
        raise SchemaError(
            "the PostgreSQL backend needs psycopg 3 and psycopg-pool: pip install 'memlab[postgres]'"
        ) from error
    return psycopg, psycopg_pool


def lock_keys(cursor, agent: str, places: list[tuple[str, int]]) -> None:
    """Take the transaction's advisory locks of ``places`` (key, level) of ``agent``, in one global order."""
    locks = sorted(
        {
            int.from_bytes(hashlib.sha256(f"{agent}\x1f{key}\x1f{level}".encode()).digest()[:8], "big", signed=True)
            for key, level in places
        }
    )
    cursor.execute("SELECT pg_advisory_xact_lock(k) FROM unnest(%s::bigint[]) AS k", (locks,))


def write_together(
    cursor, writes: Sequence[tuple[str, Sequence[Sequence[Any]]]], last: tuple[str, Sequence[Any]]
) -> None:
    """Send ``writes`` (each an INSERT without RETURNING and its rows of parameters) and then ``last`` (a statement
    and its parameters): every row but the last of each write on its own, then the last rows and ``last`` as one
    statement (data-modifying ``WITH`` queries, each run once and to completion), so that a call writing one row
    of each sends one statement, not one per write. Rows keep their order within each write."""
    together, parameters = [], []
    for n, (sql, rows) in enumerate(writes):
        if len(rows) > 1:
            cursor.executemany(sql, rows[:-1])
        if rows:
            together.append(f"written_{n} AS ({sql})")
            parameters.extend(rows[-1])
    sql, own = last
    cursor.execute(f"WITH {', '.join(together)} {sql}" if together else sql, (*parameters, *own))


Head = Callable[[], tuple[Label, int, str]]
"""A chain's locked head, read when called: its label, its last ``seq`` and its hash."""


def lock_head(cursor, agent: str, taint: Label, *, owner: bool = False) -> Head:
    """Lock the head row of the chain of ``agent`` at ``taint``, its integrity too (created, with a random genesis,
    on first use: by ``open_chain`` for a session, which may not write a genesis, directly by the ``owner``).

    The ``SELECT ... FOR UPDATE`` is sent now (in a session's pipeline, with the statements that follow it) and
    its row read when the returned function is called, so the lock costs no round trip of its own."""
    label = Label.parse(taint)
    where = (agent, int(label.level), sorted(label.categories), int(label.integrity))
    select = (
        "SELECT seq, hash FROM chain_heads WHERE agent = %s AND taint = %s AND categories = %s::text[] "
        "AND integrity = %s FOR UPDATE"
    )
    pending = cursor.connection.cursor()
    pending.execute(select, where)

    def head() -> tuple[Label, int, str]:
        row = pending.fetchone()
        if row is None:
            if owner:
                start = chain.genesis()
                cursor.execute(
                    "INSERT INTO chain_heads (agent, taint, categories, integrity, genesis, seq, hash) "
                    "VALUES (%s, %s, %s::text[], %s, %s, 0, %s) "
                    "ON CONFLICT (agent, taint, categories, integrity) DO NOTHING",
                    (*where, start, start),
                )
            else:
                cursor.execute("SELECT open_chain()")
            row = cursor.execute(select, where).fetchone()
        return (label, *row)

    return head


def storable(text: str | None) -> str | None:
    """``text`` as PostgreSQL can store it: NUL, which its text type cannot hold, becomes U+FFFD (for what the
    audit records of a call's input: the row is hashed as stored)."""
    return None if text is None else text.replace("\x00", "\ufffd")


def label_from(classification: int, categories: Sequence[str], integrity: int) -> Label:
    """The label a row's ``classification``, ``categories`` and ``integrity`` columns hold."""
    if not categories and integrity == Integrity.TRUSTED:
        return Label.parse(Level(classification))
    return Label(Level(classification), frozenset(categories), Integrity(integrity))


def memory_of(row: Sequence[Any]) -> Memory:
    key, content, tags, classification, version, saved_at, saved_by, source, occurred_at, *label = row
    categories, integrity, distrust = label
    return Memory(
        key,
        content,
        tuple(json.loads(tags)),
        label_from(classification, categories, integrity),
        version,
        saved_at,
        saved_by,
        source,
        occurred_at,
        tuple(distrust),
    )


def redact(url: str) -> str:
    """``url`` without its password, for error messages."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)
