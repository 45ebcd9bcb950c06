"""The connections of a PostgreSQL store: the owner's, the session role's pool, the schema and transactions.

Two roles share the work. The **owner** (the role in the URL) creates the schema and does what only an
auditor does: read the audit, history and sessions, purge, verify. Every session call runs as the session
role, in a short transaction that first sets a signed claim (``memlab.storage.postgres.gate``);
serialisation failures and deadlocks are retried here.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any, TypeVar

from memlab.errors import Denied, InvalidArgument, SchemaError
from memlab.labels import Integrity, Label
from memlab.levels import Level
from memlab.search.analyzers import Analyzer
from memlab.search.analyzers import resolve as resolve_analyzer
from memlab.search.ranking import Ranking
from memlab.storage.postgres.gate import claim, new_key
from memlab.storage.postgres.role import options, record_password
from memlab.storage.postgres.schema import (
    FORMAT,
    RANKINGS,
    SCHEMA_VERSION,
    TEXT_SEARCH_CONFIGS,
    schema_sql,
    upgrade_1_sql,
    upgrade_2_sql,
    upgrade_3_sql,
    upgrade_4_sql,
    upgrade_5_sql,
    upgrade_6_sql,
)
from memlab.storage.postgres.sql import IDENTIFIER, Head, lock_head, redact, require_psycopg
from memlab.storage.schema import check_meta_values
from memlab.viewrules import ViewRules

_RETRIES = 8
# The shadowing rules (``memlab.viewrules.SHADOWING_RULES``) whose choice the search SQL makes.
_SHADOWING = ("newest", "refuse")
_LOGIN_SECONDS = 15.0  # how long a new store waits for its first session connection

T = TypeVar("T")


class _Statements:
    """A session transaction's statements, each on a cursor of its own: in a pipeline a result lands on the
    cursor that sent its statement whenever it arrives, so a cursor that sent two could be read for the first.
    Read a statement's rows from what ``execute`` returns."""

    def __init__(self, connection) -> None:
        self.connection = connection

    def execute(self, sql: str, parameters: Sequence[Any] | None = None):
        return self.connection.cursor().execute(sql, parameters)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.connection.cursor().executemany(sql, rows)


class Connection:
    """The owner's connection and the session role's pool of a store, and the transactions run on them."""

    def __init__(
        self,
        url: str,
        *,
        rules: ViewRules | None = None,
        analyzer: Analyzer | str | None = None,
        schema: str = "memlab",
        session_role: str = "memlab_session",
        session_url: str | None = None,
        pool_size: int = 4,
        rank_function: str = "ts_rank",
        purge_timeout: float = 5.0,
    ) -> None:
        psycopg, psycopg_pool = require_psycopg()
        self._errors = psycopg.errors
        self._aborted = psycopg.pq.PipelineStatus.ABORTED  # a statement failed: the server rolls back at the Sync
        self.rules = rules if rules is not None else ViewRules.lattice()
        if not self.rules.lattice_visibility or self.rules.global_statistics:
            raise InvalidArgument(
                "the PostgreSQL backend serves lattice visibility with per-document ranking only "
                f"(views {self.rules.signature!r} need SQLite)"
            )
        if self.rules.shadowing not in _SHADOWING:
            raise InvalidArgument(
                f"the PostgreSQL backend shadows by {' or '.join(_SHADOWING)}, not {self.rules.shadowing!r}"
            )
        self.analyzer = resolve_analyzer(analyzer)
        if self.analyzer.name not in TEXT_SEARCH_CONFIGS:
            raise InvalidArgument(
                "the PostgreSQL backend indexes with porter or snowball (its english configuration) or none "
                f"(simple), not {self.analyzer.name!r}"
            )
        self.config = TEXT_SEARCH_CONFIGS[self.analyzer.name]
        for name in (schema, session_role):
            if not IDENTIFIER.fullmatch(name):
                raise InvalidArgument(f"{name!r} is not a plain lower-case PostgreSQL identifier")
        if rank_function not in RANKINGS:
            raise InvalidArgument(f"rank_function must be one of {', '.join(RANKINGS)}, not {rank_function!r}")
        self.url, self.schema, self.session_role, self.rank_function = url, schema, session_role, rank_function
        number = isinstance(purge_timeout, int | float) and not isinstance(purge_timeout, bool)
        if not number or not 0 < purge_timeout < math.inf:
            raise InvalidArgument(f"purge_timeout is a finite number of seconds above 0, not {purge_timeout!r}")
        self.purge_timeout = float(purge_timeout)
        self._ranking = Ranking()
        self.embedder = None  # no dense vectors in PostgreSQL
        self._lock = threading.RLock()
        try:
            self._owner = psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}")
        except psycopg.Error as error:
            raise SchemaError(f"cannot connect to {redact(url)}: {str(error).strip()}") from error
        try:
            try:
                self.meta = self._ensure_schema()
                self._key = bytes(self._owner.execute("SELECT key FROM claim_key").fetchone()[0])
            except psycopg.Error as error:
                raise SchemaError(f"cannot open a memlab store in {redact(url)}: {str(error).strip()}") from error
            self._pool = psycopg_pool.ConnectionPool(
                session_url or url,
                kwargs={
                    **({} if session_url else {"user": session_role}),
                    "autocommit": True,  # each call's transaction is its pipeline's (``_session``)
                    "options": options(schema),  # over any setting the role gives its own logins
                },
                min_size=1,
                max_size=pool_size,
                open=True,
            )
            try:
                self._pool.wait(timeout=_LOGIN_SECONDS)
            except psycopg_pool.PoolTimeout as error:
                self._pool.close()
                raise SchemaError(
                    f"cannot log in as the session role {session_role!r}: give it a password in ~/.pgpass "
                    "(or pass session_url) and allow it in pg_hba.conf"
                ) from error
            try:
                # Its password now is the one memlab logs in with: the one verify expects from here on.
                record_password(self._owner, session_role, replace=False)
            except BaseException:
                self._pool.close()
                raise
        except BaseException:
            self._owner.close()
            raise

    # -- schema ---------------------------------------------------------------------------------------

    def _ensure_schema(self) -> dict[str, str]:
        """Check the schema; create it (roles, tables, policies, grants) in a database that has none."""
        with self._lock, self._owner.transaction():
            self._owner.execute("SELECT pg_advisory_xact_lock(hashtext('memlab schema ' || %s))", (self.schema,))
            tables = [
                row[0]
                for row in self._owner.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY tablename", (self.schema,)
                )
            ]
            if "memlab_meta" not in tables:
                if tables:
                    raise SchemaError(
                        f"not a memlab store: schema {self.schema} already holds other tables ({', '.join(tables[:5])})"
                    )
                self._create()
            meta = dict(self._owner.execute("SELECT name, value FROM memlab_meta").fetchall())
            config = meta.get("text_search_config")
            if meta.get("format") == FORMAT and meta.get("schema_version") == "1" and config in {"english", "simple"}:
                for statement in upgrade_1_sql(config):
                    self._owner.execute(statement)
                meta["schema_version"] = "2"
            role = meta.get("session_role", "")
            if meta.get("format") == FORMAT and meta.get("schema_version") == "2" and IDENTIFIER.fullmatch(role):
                for statement in upgrade_2_sql(self.schema, role):
                    self._owner.execute(statement)
                meta["schema_version"] = "3"
            upgradable = IDENTIFIER.fullmatch(role) and config in {"english", "simple"}
            if meta.get("format") == FORMAT and meta.get("schema_version") == "3" and upgradable:
                for statement in upgrade_3_sql(self.schema, config, role):
                    self._owner.execute(statement)
                meta["schema_version"] = "4"
            if meta.get("format") == FORMAT and meta.get("schema_version") == "4" and IDENTIFIER.fullmatch(role):
                for statement in upgrade_4_sql(self.schema, role):
                    self._owner.execute(statement)
                new_key(self._owner)
                meta["schema_version"] = "5"
            if meta.get("format") == FORMAT and meta.get("schema_version") == "5" and IDENTIFIER.fullmatch(role):
                for statement in upgrade_5_sql():
                    self._owner.execute(statement)
                meta["schema_version"] = "6"
            if meta.get("format") == FORMAT and meta.get("schema_version") == "6" and IDENTIFIER.fullmatch(role):
                for statement in upgrade_6_sql(self.schema, role):
                    self._owner.execute(statement)
                meta["schema_version"] = "7"
        meta = check_meta_values(meta, FORMAT, SCHEMA_VERSION, self.analyzer.name, self.rules.signature)
        if meta.get("session_role") != self.session_role:
            raise SchemaError(f"this store's sessions run as {meta.get('session_role')!r}, not {self.session_role!r}")
        return meta

    def _create(self) -> None:
        exists = self._owner.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (self.session_role,)).fetchone()
        if not exists:
            try:
                with self._owner.transaction():  # a savepoint: roles are cluster-wide, another store may race
                    self._owner.execute(f"CREATE ROLE {self.session_role} LOGIN NOINHERIT")
            except (self._errors.DuplicateObject, self._errors.UniqueViolation):
                pass
        for statement in schema_sql(self.schema, self.session_role, self.config):
            self._owner.execute(statement)
        new_key(self._owner)
        self._owner.cursor().executemany(
            "INSERT INTO memlab_meta (name, value) VALUES (%s, %s)",
            [
                ("format", FORMAT),
                ("schema_version", str(SCHEMA_VERSION)),
                ("analyzer", self.analyzer.name),
                ("views", self.rules.signature),
                ("session_role", self.session_role),
                ("text_search_config", self.config),
            ],
        )

    # -- transactions ---------------------------------------------------------------------------------

    def _session(
        self,
        agent: str,
        taint: Label,
        work: Callable[[Any, Head | None], T],
        *,
        audited=True,
        floor: Integrity | None = None,
    ) -> T:
        """Run ``work(cursor, chain head)`` as the session role at ``agent`` and ``taint`` (a checked label, see
        ``label_of``; its integrity is what the call writes at) reading at ``floor`` (by default the taint's own
        integrity: a write reads nothing less trusted than it writes) in one transaction, holding the chain head
        of ``agent`` at ``taint`` (when ``audited``); retried on serialisation failures and deadlocks.

        The transaction is the pipeline's own: PostgreSQL runs what is sent before a Sync as one transaction and
        commits it at the Sync (the pipeline's end) unless a statement failed, so no BEGIN or COMMIT is sent. Each
        statement is sent as it is made and the client waits only for a result it needs. A read costs three round
        trips: the transaction's id (for the claim); the claim, the head's lock and the read; the audit row with
        the head's move, and the Sync. A statement that fails aborts the transaction and what was queued after it;
        an exception raised here while the transaction is still alive sends ROLLBACK first, or the Sync would
        commit the half of the call already sent."""
        retryable = (self._errors.SerializationFailure, self._errors.DeadlockDetected)
        for attempt in range(_RETRIES):
            try:
                with self._pool.connection() as conn, conn.pipeline():
                    cursor = _Statements(conn)
                    try:
                        self._claim(cursor, agent, taint, Label.parse(taint).integrity if floor is None else floor)
                        return work(cursor, lock_head(cursor, agent, taint) if audited else None)
                    except BaseException:
                        if conn.pgconn.pipeline_status != self._aborted:
                            # Queued before psycopg reads what has arrived; an earlier statement's error read
                            # then must not replace the exception being raised.
                            with suppress(self._errors.Error):
                                cursor.execute("ROLLBACK")
                        raise
            except retryable:
                if attempt == _RETRIES - 1:
                    raise
                time.sleep(0.01 * 2**attempt)
            except self._errors.InsufficientPrivilege as error:
                raise Denied(f"the database refused the call: {str(error).strip()}") from error
        raise AssertionError("unreachable")

    def _claim(self, cursor, agent: str, taint: Label, floor: Integrity = Integrity.UNTRUSTED) -> None:
        """Claim ``agent`` at ``taint`` (its integrity too) reading at ``floor`` for the transaction open on
        ``cursor``: the policies admit what a claim names only when its mac, made with the owner's key, verifies
        over it and this transaction's id."""
        txid = cursor.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        cursor.execute("SELECT set_config('memlab.claim', %s, true)", (claim(self._key, agent, taint, txid, floor),))

    def trust_session_password(self) -> None:
        """Record the session role's current password as the one memlab expects (after a rotation of the
        operator's own): verify reports a password changed since it was recorded. Needs an owner that may read
        ``pg_authid`` (a superuser); otherwise nothing is recorded, and verify cannot see the password."""
        self._as_owner(lambda cursor: record_password(cursor, self.session_role, replace=True))

    def _as_owner(self, work: Callable[[Any], T]) -> T:
        with self._lock, self._owner.transaction(), self._owner.cursor() as cursor:
            return work(cursor)


def label_of(value: object) -> Label:
    """``value`` (a ``Level``, a ``Label`` or its text) as a label whose every part is checked: the claim and the
    policies rest on it, so a ``Label`` made without ``Label.of`` is checked again.

    Raises:
        InvalidArgument: not a label (an unknown level, a malformed or over-long category, too many)."""
    if isinstance(value, Label):
        if (
            not isinstance(value.level, Level)
            or not isinstance(value.categories, frozenset)
            or not isinstance(value.integrity, Integrity)
        ):
            # Named by its parts: the repr of a label whose level is no Level fails.
            raise InvalidArgument(
                f"not a label: level {value.level!r}, categories {value.categories!r}, integrity {value.integrity!r}"
            )
        checked = Label.of(value.level, sorted(value.categories, key=str), value.integrity)
        if checked != value:
            raise InvalidArgument(f"label {value!r} is not as Label.of makes it: categories are lower-case names")
        return checked
    if isinstance(value, (Level, str)):
        return Label.parse(value)
    raise InvalidArgument(f"a label is a Level, a Label or text like 'CONFIDENTIAL:hr', not {value!r}")
