"""The PostgreSQL storage provider: the database itself refuses to show a row above the session's taint.

Two roles share the work. The **owner** (the role in the URL) creates the schema and does what only an
auditor does: read the audit, history and sessions, purge, verify. Every session call runs as a separate
role that owns nothing (``memlab_session`` by default) in a short transaction that first sets a claim,
``memlab.claim = agent|taint|txid|mac``: an HMAC-SHA256 with a key only the owner can read (``claim_key``),
over the agent, the taint and the transaction's own id. Row-level security policies on every table it can
read compare with ``claimed_agent()`` and ``claimed_taint()``, computed once per statement by a ``SECURITY
DEFINER`` function that returns them only when the mac verifies in this very transaction: settings the role
sets itself, forged claims and claims replayed from another transaction admit nothing. The policies admit
rows of that agent at a classification <= that taint, and writes at exactly that taint; the role may INSERT
audit rows but never read, update, delete or truncate them, may not read the table-wide ``id`` (nor
``ctid`` or ``xmin``), and cannot undo a deletion (trigger ``deletions_are_final``). The SQL below also
filters by agent and level, so the policies are a second gate that a buggy query cannot pass.

There are no materialised views to maintain (a session at a low level could not update the views of the
levels above it without seeing them): each version carries ``current`` (newest at its agent, key and
level), and the effective view is computed in SQL from the live versions RLS admits, the highest level
winning per key. Search uses a ``tsvector`` (``english`` or ``simple`` configuration: the key at weight A,
content and tags B, the host's ``source`` C and ``occurred_at`` in words D) with a GIN index over
live versions, ranked by ``ts_rank``, which reads only the document and the query: no collection
statistics, so no score can depend on rows a session cannot see.

The audit is hash-chained (``memlab.storage.chain``) per agent and taint: a session appends to the chain
of its agent at its taint, locking its head row ``FOR UPDATE`` (an unforked chain), and nothing a session
can read — not even a chain's length — moves with calls made above its taint. Reads lock the head first,
so the audit's order is the order of what they saw; saves and deletes first take a transaction advisory
lock per key and level (gap-free versions, no duplicates, no retries) and lock the head last, only for
their audit rows and the commit. Other agents and levels proceed in parallel; serialisation failures and
deadlocks are retried here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from memlab.errors import Denied, InvalidArgument, SchemaError
from memlab.levels import Level
from memlab.records import AuditEvent, Hit, Memory, NewVersion, TaintEvent
from memlab.search.analyzers import Analyzer
from memlab.search.analyzers import resolve as resolve_analyzer
from memlab.search.query import query_terms
from memlab.search.ranking import Ranking, when_words
from memlab.storage import chain
from memlab.storage.schema import check_meta_values
from memlab.storage.seal import Audited, chain_rows, check_chain, check_sessions, check_versions, deletion, seal
from memlab.storage.verify import Verification, combine
from memlab.viewrules import ViewRules

__all__ = ["PostgresStorage", "TEXT_SEARCH_CONFIGS", "is_postgres_url", "verify_url"]

FORMAT = "memlab-postgres"
# 2: the context columns (source, occurred_at and its words); 3: the signed claim; 4: english without stopwords
SCHEMA_VERSION = 4
# The analyzers PostgreSQL can serve, and the text search configuration each becomes.
TEXT_SEARCH_CONFIGS = {"porter": "english", "snowball": "english", "none": "simple"}
# Rank weights {D, C, B, A}: the key (A) says twice what content and tags (B) say, as bm25's (2, 1, 1); the
# source (C) and the date in words (D) say less.
RANK_WEIGHTS = "{0.1, 0.2, 0.5, 1.0}"
# How a match is scored; each reads only the document and the query. ts_rank_cd (cover density) costs
# 100-500x ts_rank on common words (benchmarks/README.md); "-length" divides by 1 + log(document length).
RANKINGS = {
    "ts_rank": f"ts_rank('{RANK_WEIGHTS}', m.document, q)",
    "ts_rank-length": f"ts_rank('{RANK_WEIGHTS}', m.document, q, 1)",
    "ts_rank_cd": f"ts_rank_cd('{RANK_WEIGHTS}', m.document, q)",
}
_SNIPPET_TOKENS = 16
_RETRIES = 8
_LOGIN_SECONDS = 15.0  # how long a new store waits for its first session connection
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_COLUMNS = "m.key, m.content, m.tags, m.classification, m.version, m.saved_at, m.saved_by, m.source, m.occurred_at"
# What the session role may read of a version: everything but the table-wide id (which counts every agent's and
# every level's saves). A column grant also keeps it from the system columns (ctid, xmin), which move alike.
_READABLE = (
    "agent, key, content, tags, source, occurred_at, occurred_words, classification, version, saved_at, saved_by, "
    "deleted_at, deleted_by, salt, commitment, purged_at, current, document"
)
_WRITABLE = (
    "agent, key, content, tags, source, occurred_at, occurred_words, classification, version, saved_at, saved_by, "
    "salt, commitment, current"
)
_AUDIT_COLUMNS = "seq, at, session_id, agent, taint, tool, key, query, outcome, records, notes, message, digest, hash"

T = TypeVar("T")


def is_postgres_url(path: object) -> bool:
    """Whether ``path`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return isinstance(path, str) and path.startswith(("postgresql://", "postgres://"))


def _require_psycopg():
    try:
        import psycopg
        import psycopg_pool
    except ImportError as error:
        raise SchemaError(
            "the PostgreSQL backend needs psycopg 3 and psycopg-pool: pip install 'memlab[postgres]'"
        ) from error
    return psycopg, psycopg_pool


class PostgresStorage:
    """Memories in a PostgreSQL database, gated by row-level security.

    Args:
        url: a libpq URL (``postgresql://owner@host/db``) of the role that owns (or will create) the schema.
        rules: what the views follow; the database enforces the lattice, so only lattice visibility is served.
        analyzer: ``porter`` or ``snowball`` (the ``english`` configuration) or ``none`` (``simple``).
        schema: the PostgreSQL schema holding memlab's tables.
        session_role: the role sessions run as (created, without privileges of its own, if missing).
        session_url: how to log in as ``session_role`` (default: ``url`` with that user name).
        pool_size: connections kept for sessions.
        rank_function: ``ts_rank`` (the default), ``ts_rank-length`` (normalised by document length) or
            ``ts_rank_cd`` (cover density: slow on common words); see ``RANKINGS``. A ``memlab.Ranking``'s
            column weights and tag boost are FTS5's and do not apply here; a dense ranking is refused.
    """

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
    ) -> None:
        psycopg, psycopg_pool = _require_psycopg()
        self._errors = psycopg.errors
        self.rules = rules if rules is not None else ViewRules.lattice()
        if not self.rules.lattice_visibility or self.rules.global_statistics:
            raise InvalidArgument(
                "the PostgreSQL backend serves lattice visibility with per-document ranking only "
                f"(views {self.rules.signature!r} need SQLite)"
            )
        self.analyzer = resolve_analyzer(analyzer)
        if self.analyzer.name not in TEXT_SEARCH_CONFIGS:
            raise InvalidArgument(
                "the PostgreSQL backend indexes with porter or snowball (its english configuration) or none "
                f"(simple), not {self.analyzer.name!r}"
            )
        self.config = TEXT_SEARCH_CONFIGS[self.analyzer.name]
        for name in (schema, session_role):
            if not _IDENTIFIER.fullmatch(name):
                raise InvalidArgument(f"{name!r} is not a plain lower-case PostgreSQL identifier")
        if rank_function not in RANKINGS:
            raise InvalidArgument(f"rank_function must be one of {', '.join(RANKINGS)}, not {rank_function!r}")
        self.url, self.schema, self.session_role, self.rank_function = url, schema, session_role, rank_function
        self._ranking = Ranking()
        self.embedder = None  # no dense vectors in PostgreSQL
        self._lock = threading.RLock()
        try:
            self._owner = psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}")
        except psycopg.Error as error:
            raise SchemaError(f"cannot connect to {_redact(url)}: {str(error).strip()}") from error
        try:
            try:
                self.meta = self._ensure_schema()
                self._key = bytes(self._owner.execute("SELECT key FROM claim_key").fetchone()[0])
            except psycopg.Error as error:
                raise SchemaError(f"cannot open a memlab store in {_redact(url)}: {str(error).strip()}") from error
            self._pool = psycopg_pool.ConnectionPool(
                session_url or url,
                kwargs={
                    **({} if session_url else {"user": session_role}),
                    "autocommit": True,
                    "options": f"-c search_path={schema}",
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
                for statement in _upgrade_1_sql(config):
                    self._owner.execute(statement)
                meta["schema_version"] = "2"
            role = meta.get("session_role", "")
            if meta.get("format") == FORMAT and meta.get("schema_version") == "2" and _IDENTIFIER.fullmatch(role):
                for statement in _upgrade_2_sql(self.schema, role):
                    self._owner.execute(statement)
                _new_key(self._owner)
                meta["schema_version"] = "3"
            upgradable = _IDENTIFIER.fullmatch(role) and config in {"english", "simple"}
            if meta.get("format") == FORMAT and meta.get("schema_version") == "3" and upgradable:
                for statement in _upgrade_3_sql(self.schema, config, role):
                    self._owner.execute(statement)
                meta["schema_version"] = "4"
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
        for statement in _schema_sql(self.schema, self.session_role, self.config):
            self._owner.execute(statement)
        _new_key(self._owner)
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
        self, agent: str, taint: Level, work: Callable[[Any, tuple[int, str] | None], T], *, audited=True
    ) -> T:
        """Run ``work(cursor, chain head)`` as the session role at ``agent`` and ``taint`` in one transaction,
        holding the chain head of ``agent`` at ``taint`` (when ``audited``); retried on serialisation failures
        and deadlocks."""
        retryable = (self._errors.SerializationFailure, self._errors.DeadlockDetected)
        for attempt in range(_RETRIES):
            try:
                with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cursor:
                    self._claim(cursor, agent, taint)
                    return work(cursor, _lock_head(cursor, agent, taint) if audited else None)
            except retryable:
                if attempt == _RETRIES - 1:
                    raise
                time.sleep(0.01 * 2**attempt)
            except self._errors.InsufficientPrivilege as error:
                raise Denied(f"the database refused the call: {str(error).strip()}") from error
        raise AssertionError("unreachable")

    def _claim(self, cursor, agent: str, taint: Level) -> None:
        """Claim ``agent`` at ``taint`` for the transaction open on ``cursor``: the policies admit what a claim
        names only when its mac, made with the owner's key, verifies over it and this transaction's id."""
        txid = cursor.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        cursor.execute("SELECT set_config('memlab.claim', %s, true)", (claim(self._key, agent, taint, txid),))

    def _as_owner(self, work: Callable[[Any], T]) -> T:
        with self._lock, self._owner.transaction(), self._owner.cursor() as cursor:
            return work(cursor)

    # -- sessions -------------------------------------------------------------------------------------

    def add_session(self, session_id: str, agent: str, taint: Level, created_at: str) -> None:
        def work(cursor, _head):
            cursor.execute(
                "INSERT INTO sessions (id, agent, taint, created_at) VALUES (%s, %s, %s, %s)",
                (session_id, agent, taint.name, created_at),
            )

        try:
            self._session(agent, taint, work, audited=False)
        except self._errors.UniqueViolation as error:
            raise InvalidArgument(f"session id {session_id!r} is already taken in this store") from error

    def add_taint_event(self, agent: str, event: TaintEvent) -> None:
        self._session(
            agent,
            event.to_level,
            lambda cursor, _head: cursor.execute(
                "INSERT INTO taint_events (session_id, at, from_level, to_level, reason) VALUES (%s, %s, %s, %s, %s)",
                (event.session_id, event.at, event.from_level.name, event.to_level.name, _storable(event.reason)),
            ),
            audited=False,
        )

    # -- writes ---------------------------------------------------------------------------------------

    def save_many(
        self,
        agent: str,
        classification: Level,
        versions: Sequence[NewVersion],
        *,
        saved_by: str,
        audit: Callable[[Memory], AuditEvent],
    ) -> list[Memory]:
        """Save new versions at ``classification`` in one transaction, one audit row each; the last version
        of each key is current."""
        if not versions:
            return []
        for number, new in enumerate(versions, start=1):
            for name, text in (("content", new.content), ("source", new.source)):
                if text is not None and "\x00" in text:
                    raise InvalidArgument(
                        f"record {number}: {name} holds a NUL character, which PostgreSQL cannot store"
                    )
        level = int(classification)
        keys = list(dict.fromkeys(version.key for version in versions))
        last = {version.key: n for n, version in enumerate(versions)}

        def work(cursor, _head):
            # Saves of one key at one level queue on its advisory lock (so numbers have no gaps and no
            # duplicates); the chain head is locked last, for the audit rows and the commit only.
            _lock_keys(cursor, agent, [(key, level) for key in keys])
            # The previous current versions step down; their numbers continue.
            cursor.execute(
                "UPDATE memories SET current = false WHERE agent = %s AND classification = %s AND key = ANY(%s) "
                "AND current RETURNING key, version",
                (agent, level, keys),
            )
            newest = dict(cursor.fetchall())
            saved, rows, digests = [], [], []
            for n, new in enumerate(versions):
                newest[new.key] = newest.get(new.key, 0) + 1
                memory = Memory(
                    new.key,
                    new.content,
                    new.tags,
                    classification,
                    newest[new.key],
                    new.saved_at,
                    saved_by,
                    new.source,
                    new.occurred_at,
                )
                sealed = seal(agent, new, level, memory.version, saved_by)
                digests.append(sealed.digest)
                rows.append(
                    (agent, new.key, new.content, sealed.tags, new.source, new.occurred_at)
                    + (when_words(new.occurred_at), level, memory.version, new.saved_at, saved_by, sealed.salt)
                    + (sealed.commitment, last[new.key] == n)
                )
                saved.append(memory)
            cursor.executemany(
                "INSERT INTO memories (agent, key, content, tags, source, occurred_at, occurred_words, classification, "
                "version, saved_at, saved_by, salt, commitment, current) "
                f"VALUES ({', '.join(['%s'] * 14)})",
                rows,
            )
            head = _lock_head(cursor, agent, classification)
            self._append_audits(cursor, agent, head, [audit(memory) for memory in saved], digests)
            return saved

        return self._session(agent, classification, work, audited=False)

    def delete(
        self,
        agent: str,
        key: str,
        classification: Level,
        *,
        deleted_at: str,
        deleted_by: str,
        audit: Callable[[Memory | None], AuditEvent],
    ) -> Memory | None:
        def work(cursor, _head):
            _lock_keys(cursor, agent, [(key, int(classification))])
            cursor.execute(
                f"UPDATE memories m SET deleted_at = %s, deleted_by = %s WHERE agent = %s AND key = %s "
                f"AND classification = %s AND current AND deleted_at IS NULL RETURNING {_COLUMNS}, commitment",
                (deleted_at, deleted_by, agent, key, int(classification)),
            )
            row = cursor.fetchone()
            head = _lock_head(cursor, agent, classification)
            if row is None:
                self._append_audits(cursor, agent, head, [audit(None)])
                return None
            memory = _memory(row[:-1])
            self._append_audits(
                cursor, agent, head, [audit(memory)], [deletion(agent, memory, row[-1], deleted_at, deleted_by)]
            )
            return memory

        return self._session(agent, classification, work, audited=False)

    def purge(
        self,
        agent: str,
        key: str,
        level: Level | None,
        *,
        purged_at: str,
        purged_by: str,
        audit: Callable[[list[Memory]], AuditEvent],
    ) -> list[Memory]:
        """Erase the content, tags and context of ``key``'s versions (at ``level``, or every level), as the owner.

        The versions stay, content-free and no longer live (so out of the search index); ``VACUUM FULL`` then
        rewrites the table, its TOAST and every index (the search index's entries too) without the old row
        versions, and ``ANALYZE`` replaces the planner's samples. What stays is in docs/security.md: the
        write-ahead log, backups, freed disk blocks, and rows an older snapshot could still see.
        """

        def work(cursor):
            # The key at every level, then every chain of the agent in level order: locks are always taken keys
            # first, heads after, so a purge and saves cannot deadlock. Its audit row goes to the top chain.
            _lock_keys(cursor, agent, [(key, int(chained)) for chained in Level])
            head = [_lock_head(cursor, agent, chained, owner=True) for chained in Level][-1]
            cursor.execute(
                f"SELECT m.id, {_COLUMNS} FROM memories m WHERE agent = %s AND key = %s "
                f"{'' if level is None else 'AND classification = %s'} AND purged_at IS NULL "
                "ORDER BY classification, version",
                (agent, key, *(() if level is None else (int(level),))),
            )
            rows = cursor.fetchall()
            ids = [row[0] for row in rows]
            if ids:
                cursor.execute(
                    "UPDATE memories SET deleted_at = %s, deleted_by = %s WHERE id = ANY(%s) AND deleted_at IS NULL",
                    (purged_at, _storable(purged_by), ids),
                )
                cursor.execute(
                    "UPDATE memories SET content = '', tags = '[]', source = NULL, occurred_at = NULL, "
                    "occurred_words = NULL, salt = NULL, purged_at = %s WHERE id = ANY(%s)",
                    (purged_at, ids),
                )
            purged = [_memory(row[1:]) for row in rows]
            self._append_audits(cursor, agent, head, [audit(purged)])
            return purged

        purged = self._as_owner(work)
        if purged:
            with self._lock:
                self._owner.execute("VACUUM (FULL, ANALYZE) memories")
        return purged

    # -- reads (each with its audit event, in one transaction) -----------------------------------------

    def effective(
        self, agent: str, taint: Level, key: str, *, audit: Callable[[Memory | None], AuditEvent] | None = None
    ) -> Memory | None:
        """The key's version in the effective view at ``taint``; ``audit=None`` only for policy rules."""

        def work(cursor, head):
            cursor.execute(
                f"SELECT {_COLUMNS} FROM memories m WHERE agent = %s AND key = %s AND classification <= %s "
                "AND current AND deleted_at IS NULL ORDER BY classification DESC LIMIT 1",
                (agent, key, int(taint)),
            )
            row = cursor.fetchone()
            memory = None if row is None else _memory(row)
            if audit is not None:
                self._append_audits(cursor, agent, head, [audit(memory)])
            return memory

        return self._session(agent, taint, work, audited=audit is not None)

    def exists(self, agent: str, key: str) -> bool:
        """Whether ``key`` has a live version at any level (only the ``existence-oracle`` variant asks)."""

        def work(cursor, _head):
            cursor.execute(
                "SELECT 1 FROM memories WHERE agent = %s AND key = %s AND current AND deleted_at IS NULL LIMIT 1",
                (agent, key),
            )
            return cursor.fetchone() is not None

        return self._session(agent, max(Level), work, audited=False)

    def effective_view(
        self,
        agent: str,
        taint: Level,
        *,
        tag: str | None = None,
        audit: Callable[[list[Memory]], AuditEvent] | None = None,
    ) -> list[Memory]:
        """The effective view at ``taint``, by key; ``audit=None`` only for the auditor's views."""
        tagged = "" if tag is None else "AND m.tags::jsonb ? %s"
        before, after = (tagged, "") if not self.rules.shadow_before_match else ("", tagged.replace("m.", "v."))

        def work(cursor, head):
            cursor.execute(
                f"SELECT * FROM (SELECT DISTINCT ON (m.key) {_COLUMNS} FROM memories m WHERE agent = %s "
                f"AND classification <= %s AND current AND deleted_at IS NULL {before} "
                f"ORDER BY m.key, m.classification DESC) v WHERE true {after} ORDER BY v.key",
                (agent, int(taint), *(() if tag is None else (tag,))),
            )
            view = [_memory(row) for row in cursor.fetchall()]
            if audit is not None:
                self._append_audits(cursor, agent, head, [audit(view)])
            return view

        return self._session(agent, taint, work, audited=audit is not None)

    def search(
        self, agent: str, taint: Level, query: str, limit: int, *, audit: Callable[[list[Hit]], AuditEvent]
    ) -> list[Hit]:
        """Rank the effective view at ``taint`` by ``ts_rank`` (or another of ``RANKINGS``) against the
        query's words, OR-combined; ties in save order."""
        # Words are letters and digits only, so joined with | they are a valid tsquery whatever the input.
        terms = " | ".join(query_terms(query))

        def work(cursor, head):
            hits = []
            if terms:
                cursor.execute(self._search_sql, (terms, agent, int(taint), int(taint), limit))
                rows = cursor.fetchall()
                snippet_terms = self.analyzer.snippet_terms(query)
                hits = [
                    Hit(
                        _memory(row[:-1]),
                        row[-1],
                        self.analyzer.snippet(row[1], snippet_terms, tokens=_SNIPPET_TOKENS),
                    )
                    for row in rows
                ]
            self._append_audits(cursor, agent, head, [audit(hits)])
            return hits

        return self._session(agent, taint, work)

    @property
    def _search_sql(self) -> str:
        # The GIN index finds the candidates through ``matches`` (see _schema_sql); row-level security still
        # gates every row read here. Shadowing first: a match counts only if no live version of its key is
        # visible at a higher level; after the match (a policy variant): only if that version matches too.
        # Ties go in save order: ``matches`` numbers the matches it finds in that order (the session cannot read
        # the table-wide id, which counts every level's saves).
        also_matching = "" if self.rules.shadow_before_match else "AND h.document @@ q"
        return (
            f"SELECT {_COLUMNS}, {RANKINGS[self.rank_function]} AS score "
            f"FROM to_tsquery('{_indexing(self.schema, self.config)}', %s) q, "
            "matches(q) x, memories m WHERE m.agent = %s AND m.key = x.match_key "
            "AND m.classification = x.match_level AND m.version = x.match_version AND m.classification <= %s "
            "AND m.current AND m.deleted_at IS NULL AND m.document @@ q AND NOT EXISTS (SELECT 1 FROM memories h "
            "WHERE h.agent = m.agent AND h.key = m.key AND h.classification > m.classification "
            f"AND h.classification <= %s AND h.current AND h.deleted_at IS NULL {also_matching}) "
            "ORDER BY score DESC, x.saved_order LIMIT %s"
        )

    def _append_audits(
        self,
        cursor,
        agent: str,
        head: tuple[Level, int, str],
        events: Sequence[AuditEvent],
        digests: Sequence[str | None] = (),
    ) -> None:
        """Append audit rows to the chain ``head`` (``memlab.storage.seal``) and move it."""
        level, seq, previous = head
        rows = chain_rows(events, digests, seq=seq, previous=previous, text=_storable)
        seq, previous = (rows[-1][0], rows[-1][-1]) if rows else (seq, previous)
        cursor.executemany(f"INSERT INTO audit ({_AUDIT_COLUMNS}) VALUES ({', '.join(['%s'] * 14)})", rows)
        cursor.execute(
            "UPDATE chain_heads SET seq = %s, hash = %s WHERE agent = %s AND taint = %s",
            (seq, previous, agent, int(level)),
        )

    # -- audit and auditor views (as the owner) --------------------------------------------------------

    def append_audit(self, event: AuditEvent) -> None:
        """Append ``event`` to the chain of its agent at its taint."""
        self._session(
            event.agent, event.taint, lambda cursor, head: self._append_audits(cursor, event.agent, head, [event])
        )

    def agents(self) -> list[str]:
        """Every agent that has saved in this store, by name."""
        return self._as_owner(
            lambda cursor: [row[0] for row in cursor.execute("SELECT DISTINCT agent FROM memories ORDER BY agent")]
        )

    def audit_rows(self, agent: str | None = None) -> Iterator[dict[str, Any]]:
        """The audit (of ``agent`` only, when given) in the order it was written; ``seq`` numbers the events of
        one agent at one taint (each its own chain)."""
        where, parameters = ("", ()) if agent is None else ("WHERE agent = %s", (agent,))
        rows = self._rows(f"SELECT {_AUDIT_COLUMNS} FROM audit {where} ORDER BY id", parameters)
        return ({**row, "records": json.loads(row["records"]), "notes": json.loads(row["notes"])} for row in rows)

    def history_rows(self, agent: str, key: str | None = None) -> Iterator[dict[str, Any]]:
        """Every version of ``key`` (of every key when None), by key, level, then version."""
        rows = self._rows(
            "SELECT key, classification, version, content, tags, source, occurred_at, saved_at, saved_by, "
            f"deleted_at, deleted_by FROM memories WHERE agent = %s {'' if key is None else 'AND key = %s'} "
            "ORDER BY key, classification, version",
            (agent,) if key is None else (agent, key),
        )
        return (
            {**row, "classification": Level(row["classification"]).name, "tags": json.loads(row["tags"])}
            for row in rows
        )

    def session_rows(self) -> Iterator[dict[str, Any]]:
        return iter(
            self._rows("SELECT id, agent, taint AS initial_taint, created_at FROM sessions ORDER BY created_at, id")
        )

    def taint_event_rows(self) -> Iterator[dict[str, Any]]:
        return iter(self._rows("SELECT session_id, at, from_level, to_level, reason FROM taint_events ORDER BY id"))

    def _rows(self, sql: str, parameters: tuple = ()) -> list[dict[str, Any]]:
        def work(cursor):
            cursor.execute(sql, parameters)
            names = [column.name for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

        return self._as_owner(work)

    def verify(self) -> Verification:
        """Recompute every agent's audit chain and check every version against it (``memlab.storage.verify``),
        the ``current`` marks against the versions, and that the database still enforces what it should."""
        return self._as_owner(lambda cursor: _verify(cursor, self.schema, self.session_role))

    def drop(self) -> None:
        """Drop this store's schema, its memories and audit with it, and close: for throwaway stores
        (evaluations, benchmarks). Irreversible; works on a closed store too."""
        self.close()
        psycopg, _ = _require_psycopg()
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {self.schema} CASCADE")

    @property
    def ranking(self) -> Ranking:
        """A ``memlab.Ranking``, kept for the protocol: PostgreSQL ranks by ``rank_function`` (its column
        weights and tag boost are FTS5's), and refuses a dense one (no vectors here)."""
        return self._ranking

    @ranking.setter
    def ranking(self, ranking: Ranking) -> None:
        if ranking.uses_dense:
            raise InvalidArgument("the PostgreSQL backend keeps no dense vectors: its rankings are lexical")
        self._ranking = ranking

    def close(self) -> None:
        self._pool.close()
        self._owner.close()


def verify_url(url: str, *, schema: str = "memlab") -> Verification:
    """Verify the store in the database at ``url`` (as its owner) without opening it as a store: read-only,
    whatever analyzer or policy it was built with.

    Raises:
        SchemaError: the database cannot be reached or holds no memlab store.
    """
    psycopg, _ = _require_psycopg()
    if not _IDENTIFIER.fullmatch(schema):
        raise InvalidArgument(f"{schema!r} is not a plain lower-case PostgreSQL identifier")
    try:
        conn = psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}")
    except psycopg.Error as error:
        raise SchemaError(f"cannot connect to {_redact(url)}: {str(error).strip()}") from error
    with conn, conn.transaction(), conn.cursor() as cursor:
        found = cursor.execute("SELECT to_regclass(%s)", (f"{schema}.memlab_meta",)).fetchone()[0]
        if found is None:
            raise SchemaError(f"{_redact(url)} holds no memlab store (no table {schema}.memlab_meta)")
        meta = dict(cursor.execute("SELECT name, value FROM memlab_meta").fetchall())
        return _verify(cursor, schema, meta.get("session_role", ""))


def _verify(cursor, schema: str, session_role: str) -> Verification:
    """``verify`` on an owner's cursor: protections first, then each agent's chain and versions."""
    problems = _missing_protections(cursor, schema, session_role)
    if problems:
        return Verification(problems=tuple(problems))
    results = []
    heads: dict[str, list[tuple[int, str]]] = {}
    for agent, level, genesis in cursor.execute("SELECT agent, taint, genesis FROM chain_heads ORDER BY agent, taint"):
        heads.setdefault(agent, []).append((level, genesis))
    for agent, chains in heads.items():
        found: list[str] = []
        prefix = f"agent {agent!r}: "
        audited = Audited()
        for level, genesis in chains:
            one = check_chain(
                cursor.execute(
                    f"SELECT {_AUDIT_COLUMNS} FROM audit WHERE agent = %s AND taint = %s ORDER BY seq",
                    (agent, Level(level).name),
                ).fetchall(),
                genesis,
                f"{prefix}{Level(level).name} ",
                found,
            )
            audited.rows += one.rows
            audited.head = chain.audit_hash(audited.head, (one.head,))
            audited.saves |= one.saves
            audited.deletes |= one.deletes
            audited.purges |= one.purges
            for session_id, (agents, taints) in one.sessions.items():
                merged = audited.sessions.setdefault(session_id, (set(), set()))
                merged[0].update(agents)
                merged[1].update(taints)
        strays = cursor.execute(
            "SELECT count(*) FROM audit WHERE agent = %s AND taint <> ALL(%s)",
            (agent, [Level(level).name for level, _ in chains]),
        ).fetchone()[0]
        if strays:
            found.append(f"{prefix}{strays} audit rows belong to no chain (forged)")
        versions = check_versions(
            cursor.execute(
                "SELECT agent, key, content, tags, source, occurred_at, classification, version, saved_at, saved_by, "
                "deleted_at, deleted_by, salt, commitment, purged_at FROM memories WHERE agent = %s ORDER BY id",
                (agent,),
            ).fetchall(),
            audited,
            prefix,
            found,
        )
        found += check_sessions(
            cursor.execute("SELECT id, agent, taint FROM sessions WHERE agent = %s ORDER BY id", (agent,)).fetchall(),
            cursor.execute(
                "SELECT t.session_id, t.from_level, t.to_level FROM taint_events t "
                "JOIN sessions s ON s.id = t.session_id WHERE s.agent = %s ORDER BY t.id",
                (agent,),
            ).fetchall(),
            audited,
            prefix,
        )
        results.append(Verification(audited.rows, versions, audited.head, tuple(found)))
    orphans = cursor.execute(
        "SELECT DISTINCT agent FROM memories WHERE agent NOT IN (SELECT agent FROM chain_heads) ORDER BY agent"
    ).fetchall()
    stray = [f"agent {agent!r}: versions without an audit chain (forged)" for (agent,) in orphans]
    wrong = cursor.execute(
        "SELECT agent, key, classification FROM memories m WHERE current <> (version = (SELECT max(version) "
        "FROM memories n WHERE n.agent = m.agent AND n.key = m.key AND n.classification = m.classification)) "
        "ORDER BY agent, key, classification"
    ).fetchall()
    stray += [
        f"agent {agent!r}: the current version of key {key!r} at {Level(level).name} is not its newest (edited)"
        for agent, key, level in wrong
    ]
    return combine([*results, Verification(problems=tuple(stray))])


# -- SQL helpers ----------------------------------------------------------------------------------------


def _lock_keys(cursor, agent: str, places: list[tuple[str, int]]) -> None:
    """Take the transaction's advisory locks of ``places`` (key, level) of ``agent``, in one global order."""
    locks = sorted(
        {
            int.from_bytes(hashlib.sha256(f"{agent}\x1f{key}\x1f{level}".encode()).digest()[:8], "big", signed=True)
            for key, level in places
        }
    )
    cursor.execute("SELECT pg_advisory_xact_lock(k) FROM unnest(%s::bigint[]) AS k", (locks,))


def _lock_head(cursor, agent: str, level: Level, *, owner: bool = False) -> tuple[Level, int, str]:
    """Lock the head row of the chain of ``agent`` at ``level`` (created, with a random genesis, on first use:
    by ``open_chain`` for a session, which may not write a genesis, directly by the ``owner``)."""
    select = "SELECT seq, hash FROM chain_heads WHERE agent = %s AND taint = %s FOR UPDATE"
    cursor.execute(select, (agent, int(level)))
    row = cursor.fetchone()
    if row is None:
        if owner:
            start = chain.genesis()
            cursor.execute(
                "INSERT INTO chain_heads (agent, taint, genesis, seq, hash) VALUES (%s, %s, %s, 0, %s) "
                "ON CONFLICT (agent, taint) DO NOTHING",
                (agent, int(level), start, start),
            )
        else:
            cursor.execute("SELECT open_chain()")
        cursor.execute(select, (agent, int(level)))
        row = cursor.fetchone()
    return (level, *row)


# What search reads: key (A), content and tags (B), source (C) and the date in words (D); to_tsvector(NULL) is NULL,
# and so would the whole document be.
_DOCUMENT = "tsvector GENERATED ALWAYS AS ({}) STORED".format(
    " || ".join(
        f"setweight(to_tsvector('{{config}}', {column}), '{weight}')"
        for column, weight in (
            ("key", "A"),
            ("content", "B"),
            ("tags", "B"),
            ("coalesce(source, '')", "C"),
            ("coalesce(occurred_words, '')", "D"),
        )
    )
)
_SEARCH_INDEX = (
    "CREATE INDEX memories_search ON memories USING gin (document) WITH (fastupdate = off) "
    "WHERE current AND deleted_at IS NULL"
)


def _indexing(schema: str, config: str) -> str:
    """The text search configuration documents and queries go through: ``simple``, or ``english`` without its
    stopword list (memlab drops its own short list from queries, as on SQLite, and keeps a query of stopwords
    only; PostgreSQL's longer list would drop words such as "same" or "who" from documents and queries alike)."""
    return f"{schema}.memlab_english" if config == "english" else "simple"


def _configuration_sql(schema: str, config: str) -> list[str]:
    """The store's own text search configuration, where it needs one (see ``_indexing``)."""
    if config != "english":
        return []
    return [
        f"CREATE TEXT SEARCH DICTIONARY {schema}.memlab_english_stem (TEMPLATE = snowball, Language = english)",
        f"CREATE TEXT SEARCH CONFIGURATION {schema}.memlab_english (COPY = pg_catalog.english)",
        f"ALTER TEXT SEARCH CONFIGURATION {schema}.memlab_english ALTER MAPPING REPLACE english_stem "
        f"WITH {schema}.memlab_english_stem",
    ]


def _upgrade_3_sql(schema: str, config: str, role: str) -> list[str]:
    """Schema 3 to 4 (in the schema's search path): documents indexed without PostgreSQL's stopword list (the
    new column is granted to the session role as the old one was)."""
    return [
        "ALTER TABLE memories DROP COLUMN document",  # and its index with it
        f"DROP TEXT SEARCH CONFIGURATION IF EXISTS {schema}.memlab_english",
        f"DROP TEXT SEARCH DICTIONARY IF EXISTS {schema}.memlab_english_stem",
        *_configuration_sql(schema, config),
        f"ALTER TABLE memories ADD COLUMN document {_DOCUMENT.format(config=_indexing(schema, config))}",
        _SEARCH_INDEX,
        f"GRANT SELECT (document) ON memories TO {role}",
        "UPDATE memlab_meta SET value = '4' WHERE name = 'schema_version'",
    ]


def _upgrade_1_sql(config: str) -> list[str]:
    """Schema 1 to 2 (in the schema's search path): the context columns, and a document that reads them. Versions
    without context commit to content and tags alone, in both, so the chain still verifies."""
    return [
        "ALTER TABLE memories ADD COLUMN IF NOT EXISTS source text, ADD COLUMN IF NOT EXISTS occurred_at text, "
        "ADD COLUMN IF NOT EXISTS occurred_words text",
        "ALTER TABLE memories DROP COLUMN document",  # and its index with it
        f"ALTER TABLE memories ADD COLUMN document {_DOCUMENT.format(config=config)}",
        _SEARCH_INDEX,
        "UPDATE memlab_meta SET value = '2' WHERE name = 'schema_version'",
    ]


def _schema_sql(schema: str, role: str, config: str) -> list[str]:
    """The tables, indexes, row-level security policies and grants of a new store."""
    return [
        f"CREATE SCHEMA IF NOT EXISTS {schema}",
        f"SET LOCAL search_path = {schema}",
        *_configuration_sql(schema, config),
        "CREATE TABLE memlab_meta (name text PRIMARY KEY, value text NOT NULL)",
        'CREATE TABLE sessions (id text COLLATE "C" PRIMARY KEY, agent text NOT NULL, taint text NOT NULL, '
        "created_at text NOT NULL)",
        "CREATE TABLE taint_events (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, session_id text NOT NULL "
        "REFERENCES sessions (id), at text NOT NULL, from_level text NOT NULL, to_level text NOT NULL, reason text)",
        # Text sorts as SQLite sorts it (by code point), whatever the database's collation.
        'CREATE TABLE memories (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, agent text COLLATE "C" NOT NULL, '
        'key text COLLATE "C" NOT NULL, content text NOT NULL, tags text NOT NULL, '
        # The host's context: the message(s) the memory came from, when it happened (ISO 8601), and that date
        # in words (memlab.search.ranking.when_words), for the index only.
        "source text, occurred_at text, occurred_words text, "
        "classification smallint NOT NULL CHECK (classification BETWEEN 0 AND 3), version integer NOT NULL, "
        "saved_at text NOT NULL, saved_by text NOT NULL, deleted_at text, deleted_by text, salt bytea, "
        "commitment text NOT NULL, purged_at text, current boolean NOT NULL, "
        f"document {_DOCUMENT.format(config=_indexing(schema, config))}, "
        "UNIQUE (agent, key, classification, version))",
        "CREATE INDEX memories_live ON memories (agent, key, classification) WHERE current AND deleted_at IS NULL",
        _SEARCH_INDEX,
        'CREATE TABLE chain_heads (agent text COLLATE "C" NOT NULL, taint smallint NOT NULL, genesis text NOT NULL, '
        "seq bigint NOT NULL, hash text NOT NULL, PRIMARY KEY (agent, taint))",
        'CREATE TABLE audit (id bigint GENERATED ALWAYS AS IDENTITY UNIQUE, agent text COLLATE "C" NOT NULL, '
        "taint text NOT NULL, seq bigint NOT NULL, at text NOT NULL, session_id text NOT NULL, tool text NOT NULL, "
        "key text, query text, "
        "outcome text NOT NULL, "
        "records text NOT NULL, notes text NOT NULL, message text, digest text, hash text NOT NULL, "
        "PRIMARY KEY (agent, taint, seq))",
        *_gate_sql(schema, role),
    ]


# The claim a session transaction sets: agent|taint|transaction id|mac, the mac an HMAC-SHA256 (the owner's key)
# of what precedes it. The key, at the block size of SHA-256, is kept as its two pads, so that SQL's sha256()
# computes the same HMAC as Python's hmac module.


def claim(key: bytes, agent: str, taint: Level, txid: str) -> str:
    """The claim that admits ``agent`` at ``taint`` in transaction ``txid`` (what ``claimed()`` verifies)."""
    message = f"{agent}|{int(taint)}|{txid}"
    return f"{message}|{hmac.new(key, message.encode('utf-8'), hashlib.sha256).hexdigest()}"


def _new_key(cursor) -> None:
    """A fresh claim key, replacing any: claims made with the old one admit nothing from now on."""
    key = secrets.token_bytes(64)
    cursor.execute("DELETE FROM claim_key")
    cursor.execute(
        "INSERT INTO claim_key (key, inner_pad, outer_pad) VALUES (%s, %s, %s)",
        (key, bytes(b ^ 0x36 for b in key), bytes(b ^ 0x5C for b in key)),
    )


def _gate_sql(schema: str, role: str) -> list[str]:
    """The claim, the row-level security policies, the grants and the trigger that gate the session role.

    Every policy compares with ``claimed_agent()`` and ``claimed_taint()`` in a sub-select, so each is computed
    once per statement (an InitPlan), not once per row: a claim that does not verify names no agent and no taint,
    and admits nothing."""
    agent_is = f"agent = (SELECT {schema}.claimed_agent())"
    taint = f"(SELECT {schema}.claimed_taint())"
    level_name = f"(ARRAY{[level.name for level in Level]})[{taint} + 1]"
    definer = "SECURITY DEFINER SET search_path = pg_catalog, pg_temp"
    functions = ("claimed()", "claimed_agent()", "claimed_taint()", "matches(tsquery)", "open_chain()")
    return [
        # Readable by the owner alone: the session role can neither read it nor call anything that returns it.
        "CREATE TABLE claim_key (key bytea NOT NULL, inner_pad bytea NOT NULL, outer_pad bytea NOT NULL)",
        # String functions, not a regular expression: PostgreSQL's costs ~0.1 ms a match, per evaluation.
        f"CREATE FUNCTION claimed() RETURNS text[] LANGUAGE plpgsql STABLE {definer} AS $$ DECLARE "
        "claim text := current_setting('memlab.claim', true); txid text := pg_current_xact_id_if_assigned()::text; "
        "signed text; named text; pads record; BEGIN "
        "IF claim IS NULL OR txid IS NULL OR length(claim) < 69 + length(txid) THEN RETURN NULL; END IF; "
        "signed := left(claim, -65); named := left(signed, -(length(txid) + 1)); "
        "IF substr(claim, length(claim) - 64, 1) <> '|' OR right(signed, length(txid) + 1) <> '|' || txid "
        "OR substr(named, length(named) - 1, 1) <> '|' OR right(named, 1) NOT IN ('0', '1', '2', '3') "
        "THEN RETURN NULL; END IF; "
        f"SELECT inner_pad, outer_pad INTO pads FROM {schema}.claim_key; "
        "IF encode(sha256(pads.outer_pad || sha256(pads.inner_pad || convert_to(signed, 'UTF8'))), 'hex') "
        "<> right(claim, 64) THEN RETURN NULL; END IF; "
        "RETURN ARRAY[left(named, -2), right(named, 1)]; END $$",
        f"CREATE FUNCTION claimed_agent() RETURNS text LANGUAGE sql STABLE AS $$ SELECT ({schema}.claimed())[1] $$",
        "CREATE FUNCTION claimed_taint() RETURNS smallint LANGUAGE sql STABLE AS "
        f"$$ SELECT ({schema}.claimed())[2]::smallint $$",
        # Sessions see one agent's rows at or below their taint and write at exactly their taint.
        "ALTER TABLE memories ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY memories_read ON memories FOR SELECT TO {role} "
        f"USING ({agent_is} AND classification <= {taint})",
        f"CREATE POLICY memories_write ON memories FOR INSERT TO {role} "
        f"WITH CHECK ({agent_is} AND classification = {taint})",
        f"CREATE POLICY memories_mark ON memories FOR UPDATE TO {role} USING ({agent_is} AND classification = {taint}) "
        f"WITH CHECK ({agent_is} AND classification = {taint})",
        # A set deletion is final, for every role: a purge only ever sets one that is not set yet.
        "CREATE FUNCTION deletions_are_final() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp "
        "AS $$ BEGIN IF NEW.deleted_at IS DISTINCT FROM OLD.deleted_at "
        "OR NEW.deleted_by IS DISTINCT FROM OLD.deleted_by THEN "
        "RAISE EXCEPTION 'a deletion is final: version % of key % stays deleted', OLD.version, OLD.key "
        "USING ERRCODE = 'insufficient_privilege'; END IF; RETURN NEW; END $$",
        "CREATE TRIGGER deletions_are_final BEFORE UPDATE OF deleted_at, deleted_by ON memories FOR EACH ROW "
        "WHEN (OLD.deleted_at IS NOT NULL) EXECUTE FUNCTION deletions_are_final()",
        "ALTER TABLE chain_heads ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY chain_heads_read ON chain_heads FOR SELECT TO {role} USING ({agent_is} AND taint = {taint})",
        f"CREATE POLICY chain_heads_move ON chain_heads FOR UPDATE TO {role} USING ({agent_is} AND taint = {taint}) "
        f"WITH CHECK ({agent_is} AND taint = {taint})",
        # A session's first call at a taint opens its chain; the genesis is the database's random, not the session's.
        f"CREATE FUNCTION open_chain() RETURNS void LANGUAGE sql VOLATILE {definer} AS $$ "
        f"INSERT INTO {schema}.chain_heads (agent, taint, genesis, seq, hash) SELECT a, t, g, 0, g FROM (SELECT "
        f"{schema}.claimed_agent() AS a, {schema}.claimed_taint() AS t, encode(sha256(convert_to("
        "gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex') AS g) AS head WHERE a IS NOT NULL "
        "ON CONFLICT (agent, taint) DO NOTHING $$",
        "ALTER TABLE audit ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY audit_append ON audit FOR INSERT TO {role} WITH CHECK ({agent_is} AND taint = {level_name})",
        "ALTER TABLE sessions ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY sessions_add ON sessions FOR INSERT TO {role} WITH CHECK ({agent_is} AND taint = {level_name})",
        # Whether ``id`` is a session of the claimed agent (the session role cannot read the sessions).
        f"CREATE FUNCTION is_claimed_session(id text) RETURNS boolean LANGUAGE sql STABLE {definer} AS $$ "
        f"SELECT EXISTS (SELECT 1 FROM {schema}.sessions s WHERE s.id = $1 AND s.agent = {schema}.claimed_agent()) $$",
        "ALTER TABLE taint_events ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY taint_events_add ON taint_events FOR INSERT TO {role} "
        f"WITH CHECK ({schema}.is_claimed_session(session_id) AND to_level = {level_name})",
        f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM PUBLIC",
        f"GRANT USAGE ON SCHEMA {schema} TO {role}",
        f"GRANT SELECT ON memlab_meta TO {role}",
        f"GRANT SELECT ({_READABLE}), INSERT ({_WRITABLE}) ON memories TO {role}",
        f"GRANT UPDATE (current, deleted_at, deleted_by) ON memories TO {role}",
        f"GRANT SELECT (agent, taint, seq, hash), UPDATE (seq, hash) ON chain_heads TO {role}",
        f"GRANT INSERT ON audit, sessions, taint_events TO {role}",
        # Under row-level security PostgreSQL applies a query's own conditions only after the policy's unless
        # they are LEAKPROOF, and @@ is not: a session's search could not use the GIN index and would match
        # every row of its agent. This function, run as the owner, uses the index under the policy's very
        # condition and returns the matches' keys, levels and versions, numbered in save order; the rows
        # themselves are still read, and gated, as the session. ROWS 10: so the planner joins them to the table
        # through its index, not by scanning every row (4x slower at 10k).
        "CREATE FUNCTION matches(q tsquery) RETURNS TABLE (match_key text, match_level smallint, match_version "
        f"integer, saved_order bigint) LANGUAGE sql STABLE ROWS 10 {definer} AS $$ SELECT key, classification, "
        f"version, row_number() OVER (ORDER BY id) FROM {schema}.memories WHERE document @@ q AND current "
        f"AND deleted_at IS NULL AND {agent_is} AND classification <= {taint} $$",
        *(f"REVOKE ALL ON FUNCTION {function} FROM PUBLIC" for function in (*functions, "is_claimed_session(text)")),
        *(f"GRANT EXECUTE ON FUNCTION {function} TO {role}" for function in (*functions, "is_claimed_session(text)")),
    ]


def _upgrade_2_sql(schema: str, role: str) -> list[str]:
    """Schema 2 to 3 (in the schema's search path): the policies that read settings the session role could set
    itself give way to the signed claim, and its grants to the narrower ones (whatever of the gate exists is
    made anew)."""
    policies = {
        "memories": ("memories_read", "memories_write", "memories_mark"),
        "chain_heads": ("chain_heads_own", "chain_heads_read", "chain_heads_move"),
        "audit": ("audit_append",),
        "sessions": ("sessions_add",),
        "taint_events": ("taint_events_add",),
    }
    functions = ("matches(tsquery)", "open_chain()", "is_claimed_session(text)", "claimed_agent()", "claimed_taint()")
    return [
        *(f"DROP POLICY IF EXISTS {name} ON {table}" for table, names in policies.items() for name in names),
        "DROP TRIGGER IF EXISTS deletions_are_final ON memories",
        *(f"DROP FUNCTION IF EXISTS {function}" for function in (*functions, "claimed()", "deletions_are_final()")),
        "DROP TABLE IF EXISTS claim_key",
        f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role}",
        *_gate_sql(schema, role),
        "UPDATE memlab_meta SET value = '3' WHERE name = 'schema_version'",
    ]


def _missing_protections(cursor, schema: str, role: str) -> list[str]:
    """What the database no longer enforces: RLS off on a table, or the session role able to change the audit."""
    problems = []
    for table in ("memories", "chain_heads", "audit", "sessions", "taint_events"):
        row = cursor.execute(
            "SELECT relrowsecurity FROM pg_class WHERE oid = to_regclass(%s)", (f"{schema}.{table}",)
        ).fetchone()
        if row is None:
            problems.append(f"table {table} is missing")
        elif not row[0]:
            problems.append(f"row-level security is off on table {table}")
    for privilege in ("SELECT", "UPDATE", "DELETE", "TRUNCATE"):
        if cursor.execute("SELECT has_table_privilege(%s, %s, %s)", (role, f"{schema}.audit", privilege)).fetchone()[0]:
            problems.append(f"the session role {role} may {privilege} the audit")
    granted = cursor.execute(
        "SELECT has_table_privilege(%s, %s, 'SELECT'), has_column_privilege(%s, %s, 'id', 'SELECT'), "
        "has_column_privilege(%s, %s, 'genesis', 'UPDATE'), has_table_privilege(%s, %s, 'INSERT')",
        (role, f"{schema}.claim_key", role, f"{schema}.memories", role, f"{schema}.chain_heads")
        + (role, f"{schema}.chain_heads"),
    ).fetchone()
    for allowed, what in zip(
        granted,
        ("read the claim key", "read the table-wide ids", "write a chain's genesis", "open a chain of its own making"),
        strict=True,
    ):
        if allowed:
            problems.append(f"the session role {role} may {what}")
    above = cursor.execute(
        "SELECT r.rolsuper OR r.rolbypassrls OR EXISTS (SELECT 1 FROM pg_auth_members WHERE member = r.oid) "
        "FROM pg_roles r WHERE rolname = %s",
        (role,),
    ).fetchone()
    if above and above[0]:
        problems.append(f"the session role {role} is a superuser, bypasses row-level security or is a member of a role")
    trigger = cursor.execute(
        "SELECT tgenabled FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname = 'deletions_are_final'",
        (f"{schema}.memories",),
    ).fetchone()
    if trigger is None or trigger[0] == "D":
        problems.append("the trigger deletions_are_final is missing or disabled on table memories")
    return problems


def _storable(text: str | None) -> str | None:
    """``text`` as PostgreSQL can store it: NUL, which its text type cannot hold, becomes U+FFFD (for what the
    audit records of a call's input: the row is hashed as stored)."""
    return None if text is None else text.replace("\x00", "\ufffd")


def _memory(row: Sequence[Any]) -> Memory:
    key, content, tags, classification, version, saved_at, saved_by, source, occurred_at = row
    return Memory(
        key, content, tuple(json.loads(tags)), Level(classification), version, saved_at, saved_by, source, occurred_at
    )


def _redact(url: str) -> str:
    """``url`` without its password, for error messages."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)
