"""A class's progress records in PostgreSQL (``memlab classroom --class postgresql://...``): a row per student,
and the teacher's resets, gated by row-level security on the store's own signed claim.

Two tables sit beside the store's, in its schema: ``class_progress`` (a student's record, as JSON text) and
``class_resets`` (how many resets the teacher asked of a student; the row of student ``''`` counts the class's).
A student's kernel writes through a connection as the store's session role, each write in a transaction that
first sets the claim (``memlab.storage.postgres.gate``) naming that student as the agent: the policies let it
read and write the row of the claimed student only, and read that student's resets and the class's; it may not
delete a record nor write a reset. A claim the role makes itself admits nothing, as for memories. The teacher
(the owner) reads every record and writes the resets.
"""

from __future__ import annotations

import contextlib
import json
import threading

from memlab.errors import Denied, SchemaError
from memlab.levels import Level
from memlab.storage.postgres.gate import claim
from memlab.storage.postgres.role import options
from memlab.storage.postgres.sql import IDENTIFIER, redact, require_psycopg

__all__ = ["PostgresProgress"]

CLASS = ""
"""The student of the class-wide reset counter: no agent is named ``''``."""


def _progress_sql(schema: str, role: str) -> list[str]:
    """The progress tables and their row-level security policies."""
    claimed = f"(SELECT {schema}.claimed_agent())"
    own = f"student = {claimed}"
    return [
        'CREATE TABLE class_progress (student text COLLATE "C" PRIMARY KEY, record text NOT NULL)',
        'CREATE TABLE class_resets (student text COLLATE "C" PRIMARY KEY, resets integer NOT NULL)',
        "ALTER TABLE class_progress ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE class_resets ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY class_progress_read ON class_progress FOR SELECT TO {role} USING ({own})",
        f"CREATE POLICY class_progress_add ON class_progress FOR INSERT TO {role} WITH CHECK ({own})",
        f"CREATE POLICY class_progress_write ON class_progress FOR UPDATE TO {role} USING ({own}) WITH CHECK ({own})",
        # An unverified claim names no agent: without the IS NOT NULL it would still see the class's counter.
        f"CREATE POLICY class_resets_read ON class_resets FOR SELECT TO {role} "
        f"USING ({claimed} IS NOT NULL AND student IN ({claimed}, '{CLASS}'))",
    ]


def _grants_sql(role: str) -> list[str]:
    """The session role's grants on the progress tables, made anew at each open: a store upgrade that revokes
    the role's grants on every table of the schema takes these too."""
    return [
        "REVOKE ALL ON class_progress, class_resets FROM PUBLIC",
        f"REVOKE ALL ON class_progress, class_resets FROM {role}",
        f"GRANT SELECT, INSERT, UPDATE ON class_progress TO {role}",
        f"GRANT SELECT ON class_resets TO {role}",
    ]


class PostgresProgress:
    """The progress records of the class whose store is the PostgreSQL database at ``url`` (owner's URL).

    Args:
        url: the store's owner's URL; the store must exist (``MemoryStore(url)`` creates it).
        student: None for the teacher (the owner's connection: every record, the resets); a student's id for
            that student's kernel, which works as the session role under a claim naming ``student``.
        schema: the store's schema.

    Raises:
        SchemaError: the database cannot be reached or holds no memlab store.
    """

    def __init__(self, url: str, *, student: str | None = None, schema: str = "memlab") -> None:
        psycopg, _ = require_psycopg()
        self._errors = psycopg.errors
        if not IDENTIFIER.fullmatch(schema):
            raise SchemaError(f"{schema!r} is not a plain lower-case PostgreSQL identifier")
        self.student, self._lock = student, threading.Lock()
        try:
            owner = psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}")
        except psycopg.Error as error:
            raise SchemaError(f"cannot connect to {redact(url)}: {str(error).strip()}") from error
        try:
            role = self._ensure_tables(owner, schema, url)
            if student is None:
                self._conn = owner
                return
            self._key = bytes(owner.execute("SELECT key FROM claim_key").fetchone()[0])
        except psycopg.Error as error:
            owner.close()
            raise SchemaError(f"cannot open the class's progress in {redact(url)}: {str(error).strip()}") from error
        except BaseException:
            owner.close()
            raise
        owner.close()  # a student's kernel keeps no owner's connection for its records
        try:
            self._conn = psycopg.connect(url, user=role, autocommit=True, options=options(schema))
        except psycopg.Error as error:
            raise SchemaError(f"cannot log in as the session role {role!r}: {str(error).strip()}") from error

    @staticmethod
    def _ensure_tables(owner, schema: str, url: str) -> str:
        """Create the progress tables where they are missing and grant the session role its part; return the role."""
        with owner.transaction():
            owner.execute("SELECT pg_advisory_xact_lock(hashtext('memlab class progress ' || %s))", (schema,))
            if owner.execute("SELECT to_regclass(%s)", (f"{schema}.memlab_meta",)).fetchone()[0] is None:
                raise SchemaError(f"{redact(url)} holds no memlab store (no table {schema}.memlab_meta)")
            (role,) = owner.execute("SELECT value FROM memlab_meta WHERE name = 'session_role'").fetchone()
            if not IDENTIFIER.fullmatch(role):  # it goes into the SQL below as a name
                raise SchemaError(f"this store's session role {role!r} is not a plain lower-case identifier")
            made = owner.execute("SELECT to_regclass(%s)", (f"{schema}.class_progress",)).fetchone()[0] is not None
            for statement in ([] if made else _progress_sql(schema, role)) + _grants_sql(role):
                owner.execute(statement)
        return role

    def take_seat(self, *, reserved: int, each: int) -> int | None:
        """Take one of the class's seats for this student's connection, or return None when every one is taken.

        The seats are the server's connections left to ordinary roles (``max_connections`` less
        ``superuser_reserved_connections``) less ``reserved`` (the teacher's), ``each`` a page: a seat is a
        session-level advisory lock, held until this connection closes (the page's kernel stops).

        Returns:
            How many seats the class has, once one is taken; None when none was free (nothing is held then).
        """
        with self._lock:
            room = "current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int"
            (room,) = self._conn.execute(f"SELECT {room}").fetchone()
            seats = max(0, (room - reserved) // each)
            for seat in range(seats):
                taken = "SELECT pg_try_advisory_lock(hashtext('memlab class seat'), %s)"
                if self._conn.execute(taken, (seat,)).fetchone()[0]:
                    return seats
        return None

    def _as_student(self, work):
        """Run ``work(connection)`` in a transaction claiming this kernel's student (PUBLIC: the level is unused)."""
        with self._lock, self._conn.transaction():
            txid = self._conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
            signed = claim(self._key, self.student, Level.PUBLIC, txid)
            self._conn.execute("SELECT set_config('memlab.claim', %s, true)", (signed,))
            try:
                return work(self._conn)
            except self._errors.InsufficientPrivilege as error:
                raise Denied(f"the database refused the class's records: {str(error).strip()}") from error

    def record(self, student: str, progress: dict) -> None:
        """Write ``student``'s progress record (a student's kernel: its own only)."""
        statement = (
            "INSERT INTO class_progress (student, record) VALUES (%s, %s) "
            "ON CONFLICT (student) DO UPDATE SET record = EXCLUDED.record"
        )
        parameters = (student, json.dumps(progress))
        if self.student is None:
            with self._lock:
                self._conn.execute(statement, parameters)
            return
        self._as_student(lambda conn: conn.execute(statement, parameters))

    def records(self) -> list[tuple[str, dict]]:
        """Every record this connection may read, as ``(student, record)``."""

        def read(conn):
            return conn.execute("SELECT student, record FROM class_progress").fetchall()

        if self.student is None:
            with self._lock:
                rows = read(self._conn)
        else:
            rows = self._as_student(read)
        return [(student, json.loads(record)) for student, record in rows]

    def resets(self, student: str) -> int:
        """How many resets the teacher asked of ``student``, theirs and the class's."""
        statement = "SELECT coalesce(sum(resets), 0) FROM class_resets WHERE student IN (%s, %s)"

        def read(conn):
            return conn.execute(statement, (student, CLASS)).fetchone()[0]

        if self.student is None:
            with self._lock:
                return int(read(self._conn))
        return int(self._as_student(read))

    def reset(self, student: str | None = None) -> None:
        """Ask ``student`` (None: every student) to start the lesson again (the teacher's connection only)."""
        statement = (
            "INSERT INTO class_resets (student, resets) VALUES (%s, 1) "
            "ON CONFLICT (student) DO UPDATE SET resets = class_resets.resets + 1"
        )
        if self.student is None:
            with self._lock:
                self._conn.execute(statement, (CLASS if student is None else student,))
            return
        self._as_student(lambda conn: conn.execute(statement, (CLASS if student is None else student,)))

    def close(self) -> None:
        """Give the seat back, then close the connection. The server frees a closed connection's advisory locks
        only once its backend has exited, a moment after the client closes: unlocking first frees the seat before
        ``close`` returns, so the next page finds it."""
        with self._lock:
            if not self._conn.closed:
                with contextlib.suppress(self._errors.Error):
                    self._conn.execute("SELECT pg_advisory_unlock_all()")
            self._conn.close()
