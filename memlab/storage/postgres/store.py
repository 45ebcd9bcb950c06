"""``PostgresStorage``: the tool operations and the auditor's reads, each in one transaction.

There are no materialised views to maintain (a session at a low level could not update the views of the
levels above it without seeing them): each version carries ``current`` (newest at its agent, key and
level), and the effective view is computed in SQL from the live versions RLS admits, the highest level
winning per key.

The audit is hash-chained (``memlab.storage.chain``) per agent and taint: a session appends to the chain
of its agent at its taint, locking its head row ``FOR UPDATE`` (an unforked chain), and nothing a session
can read — not even a chain's length — moves with calls made above its taint. Other agents and levels
proceed in parallel.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from memlab.errors import InvalidArgument
from memlab.levels import Level
from memlab.records import AuditEvent, Hit, Memory, NewVersion, TaintEvent
from memlab.search.query import query_terms
from memlab.search.ranking import Ranking, when_words
from memlab.storage.postgres.connection import Connection
from memlab.storage.postgres.schema import RANKINGS, _indexing
from memlab.storage.postgres.sql import (
    _AUDIT_COLUMNS,
    _COLUMNS,
    Head,
    _lock_head,
    _lock_keys,
    _memory,
    _require_psycopg,
    _storable,
    _write_together,
)
from memlab.storage.postgres.verify import _verify
from memlab.storage.seal import chain_rows, deletion, seal
from memlab.storage.verify import Verification

_SNIPPET_TOKENS = 16


class PostgresStorage(Connection):
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
            # duplicates); the chain head is locked after the keys, in the same round trip, for the audit rows.
            _lock_keys(cursor, agent, [(key, level) for key in keys])
            # The previous current versions step down; their numbers continue.
            # One key as ``key = %s``: over ``ANY(%s)`` PostgreSQL plans the statement afresh on every call.
            stepped = cursor.execute(
                "UPDATE memories SET current = false WHERE agent = %s AND classification = %s AND "
                f"{'key = %s' if len(keys) == 1 else 'key = ANY(%s)'} AND current RETURNING key, version",
                (agent, level, keys[0] if len(keys) == 1 else keys),
            )
            head = _lock_head(cursor, agent, classification)
            newest = dict(stepped.fetchall())
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
            insert = (
                "INSERT INTO memories (agent, key, content, tags, source, occurred_at, occurred_words, classification, "
                "version, saved_at, saved_by, salt, commitment, current) "
                f"VALUES ({', '.join(['%s'] * 14)})"
            )
            self._append_audits(
                cursor, agent, head, [audit(memory) for memory in saved], digests, versions=(insert, rows)
            )
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
            deleted = cursor.execute(
                f"UPDATE memories m SET deleted_at = %s, deleted_by = %s WHERE agent = %s AND key = %s "
                f"AND classification = %s AND current AND deleted_at IS NULL RETURNING {_COLUMNS}, commitment",
                (deleted_at, deleted_by, agent, key, int(classification)),
            )
            head = _lock_head(cursor, agent, classification)
            row = deleted.fetchone()
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
            head = [_lock_head(cursor, agent, chained, owner=True)() for chained in Level][-1]
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
            row = cursor.execute(
                f"SELECT {_COLUMNS} FROM memories m WHERE agent = %s AND key = %s AND classification <= %s "
                "AND current AND deleted_at IS NULL ORDER BY classification DESC LIMIT 1",
                (agent, key, int(taint)),
            ).fetchone()
            memory = None if row is None else _memory(row)
            if audit is not None:
                self._append_audits(cursor, agent, head, [audit(memory)])
            return memory

        return self._session(agent, taint, work, audited=audit is not None)

    def exists(self, agent: str, key: str) -> bool:
        """Whether ``key`` has a live version at any level (only the ``existence-oracle`` variant asks)."""

        def work(cursor, _head):
            found = cursor.execute(
                "SELECT 1 FROM memories WHERE agent = %s AND key = %s AND current AND deleted_at IS NULL LIMIT 1",
                (agent, key),
            )
            return found.fetchone() is not None

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
            found = cursor.execute(
                f"SELECT * FROM (SELECT DISTINCT ON (m.key) {_COLUMNS} FROM memories m WHERE agent = %s "
                f"AND classification <= %s AND current AND deleted_at IS NULL {before} "
                f"ORDER BY m.key, m.classification DESC) v WHERE true {after} ORDER BY v.key",
                (agent, int(taint), *(() if tag is None else (tag,))),
            )
            view = [_memory(row) for row in found.fetchall()]
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
                rows = cursor.execute(self._search_sql, (terms, agent, int(taint), int(taint), limit)).fetchall()
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
        # The GIN index finds the candidates through ``matches`` (see ``gate._gate_sql``); row-level security still
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
        head: Head | tuple[Level, int, str],
        events: Sequence[AuditEvent],
        digests: Sequence[str | None] = (),
        *,
        versions: tuple[str, Sequence[Sequence[Any]]] | None = None,
    ) -> None:
        """Append audit rows to the chain ``head`` (``memlab.storage.seal``) and move it, after writing ``versions``
        (their INSERT and rows), if given: a call's writes go together, in one statement when each is one row."""
        level, seq, previous = head if isinstance(head, tuple) else head()
        rows = chain_rows(events, digests, seq=seq, previous=previous, text=_storable)
        seq, previous = (rows[-1][0], rows[-1][-1]) if rows else (seq, previous)
        audit = f"INSERT INTO audit ({_AUDIT_COLUMNS}) VALUES ({', '.join(['%s'] * 14)})"
        _write_together(
            cursor,
            [*([versions] if versions else []), (audit, rows)],
            (
                "UPDATE chain_heads SET seq = %s, hash = %s WHERE agent = %s AND taint = %s",
                (seq, previous, agent, int(level)),
            ),
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
