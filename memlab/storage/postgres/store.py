"""``PostgresStorage``: the tool operations and the auditor's reads, each in one transaction.

There are no materialised views to maintain (a session at a low level could not update the views of the
levels above it without seeing them): each version carries ``current`` (newest at its agent, key and
label), and the effective view is computed in SQL from the live versions RLS admits: per key, the maximal
ones (no readable version above them; under the four-level order the one at the highest level), the
policy's shadowing rule choosing among several (``memlab.labels``; only under compartments).

The audit is hash-chained (``memlab.storage.chain``) per agent and taint: a session appends to the chain
of its agent at its label, locking its head row ``FOR UPDATE`` (an unforked chain), and nothing a session
can read — not even a chain's length — moves with calls made above its taint. Other agents and labels
proceed in parallel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from memlab.errors import InvalidArgument
from memlab.labels import Ambiguous, Integrity, Label
from memlab.levels import Level
from memlab.records import AuditEvent, Hit, Memory, NewVersion, TaintEvent
from memlab.search.query import query_terms
from memlab.search.ranking import Ranking, when_words
from memlab.storage.capabilities import BACKENDS
from memlab.storage.chain import json_strings
from memlab.storage.label_codes import stored
from memlab.storage.lexical import lazy_terms, make_snippet
from memlab.storage.postgres.auditor import AuditorReads
from memlab.storage.postgres.connection import label_of
from memlab.storage.postgres.purge import Owner, purge_key
from memlab.storage.postgres.schema import RANKINGS, indexing_config
from memlab.storage.postgres.sql import (
    AUDIT_COLUMNS,
    COLUMNS,
    Head,
    lock_head,
    lock_keys,
    memory_of,
    require_psycopg,
    storable,
    write_together,
)
from memlab.storage.postgres.verify import verify_database
from memlab.storage.postgres.views import LIVE, chosen, save_order, search_sql
from memlab.storage.seal import chain_rows, deletion, seal
from memlab.storage.verify import Verification


class PostgresStorage(AuditorReads):
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
        purge_timeout: seconds a purge waits for another connection's lock or older snapshot before it raises
            ``PurgeIncomplete`` (5 by default; sessions queue behind the purge's rewrite as long).
    """

    capabilities = BACKENDS["postgres"]
    """What this backend can do beyond the contract (``memlab.storage.capabilities``); labels with categories and
    integrity are kept under row-level security over level, categories, integrity and floor (docs/security.md)."""
    view_table = "memories"

    # -- sessions -------------------------------------------------------------------------------------

    def add_session(
        self, session_id: str, agent: str, taint: Label, created_at: str, floor: Integrity = Integrity.UNTRUSTED
    ) -> None:
        """Record a session, its starting taint (its integrity too) and the floor it reads at, as the claim says."""
        label, floor = label_of(taint), Integrity.parse(floor)

        def work(cursor, _head):
            cursor.execute(
                "INSERT INTO sessions (id, agent, taint, created_at, floor) VALUES (%s, %s, %s, %s, %s)",
                (session_id, agent, str(label), created_at, int(floor)),
            )

        try:
            self._session(agent, label, work, audited=False, floor=floor)
        except self._errors.UniqueViolation as error:
            raise InvalidArgument(f"session id {session_id!r} is already taken in this store") from error

    def add_taint_event(self, agent: str, event: TaintEvent) -> None:
        start, end = label_of(event.from_level), label_of(event.to_level)
        self._session(
            agent,
            end,
            lambda cursor, _head: cursor.execute(
                "INSERT INTO taint_events (session_id, at, from_level, to_level, reason) VALUES (%s, %s, %s, %s, %s)",
                (event.session_id, event.at, str(start), str(end), storable(event.reason)),
            ),
            audited=False,
        )

    # -- writes ---------------------------------------------------------------------------------------

    def save_many(
        self,
        agent: str,
        classification: Label,
        versions: Sequence[NewVersion],
        *,
        saved_by: str,
        audit: Callable[[Memory], AuditEvent],
        distrust: tuple[str, ...] = (),
    ) -> list[Memory]:
        """Save new versions at ``classification`` (its level, categories and integrity) in one transaction, one
        audit row each, ``distrust`` (``Memory.distrust``) naming what lowered the saving session; the last version
        of each key is current. Versions are numbered per agent, key and label.

        The audit rows go to the chain of their events' taint: a session's is the versions' label; an
        endorsement's (``MemoryStore.endorse``, an auditor's act) is the top label's, as a purge's."""
        label = label_of(classification)
        distrust = tuple(distrust)
        sealed_distrust = json_strings(distrust) if distrust else None  # the sources are part of the digest
        if not versions:
            return []
        for number, new in enumerate(versions, start=1):
            for name, text in (("content", new.content), ("source", new.source)):
                if text is not None and "\x00" in text:
                    raise InvalidArgument(
                        f"record {number}: {name} holds a NUL character, which PostgreSQL cannot store"
                    )
        level, categories, integrity = int(label.level), sorted(label.categories), int(label.integrity)
        keys = list(dict.fromkeys(version.key for version in versions))
        last = {version.key: n for n, version in enumerate(versions)}

        def work(cursor, _head):
            # Saves of one key at one level (whatever their categories: a purge locks a key's levels) queue on
            # its advisory lock (so numbers have no gaps and no duplicates); the chain head is locked after the
            # keys, in the same round trip, for the audit rows.
            lock_keys(cursor, agent, [(key, level) for key in keys])
            # The previous current versions at this label step down; their numbers continue.
            # One key as ``key = %s``: over ``ANY(%s)`` PostgreSQL plans the statement afresh on every call.
            stepped = cursor.execute(
                "UPDATE memories SET current = false WHERE agent = %s AND classification = %s "
                "AND categories = %s::text[] AND integrity = %s "
                f"AND {'key = %s' if len(keys) == 1 else 'key = ANY(%s)'} AND current RETURNING key, version",
                (agent, level, categories, integrity, keys[0] if len(keys) == 1 else keys),
            )
            head = lock_head(cursor, agent, label)
            newest = dict(stepped.fetchall())
            saved, rows, digests = [], [], []
            for n, new in enumerate(versions):
                newest[new.key] = newest.get(new.key, 0) + 1
                memory = Memory(
                    new.key,
                    new.content,
                    new.tags,
                    label,
                    newest[new.key],
                    new.saved_at,
                    saved_by,
                    new.source,
                    new.occurred_at,
                    distrust,
                )
                # The digest covers the label as SQLite stores it (label_codes.stored): one rule for both backends.
                sealed = seal(agent, new, stored(label), memory.version, saved_by, sealed_distrust)
                digests.append(sealed.digest)
                rows.append(
                    (agent, new.key, new.content, sealed.tags, new.source, new.occurred_at)
                    + (when_words(new.occurred_at), level, categories, integrity, list(distrust), memory.version)
                    + (new.saved_at, saved_by)
                    + (sealed.salt, sealed.commitment, last[new.key] == n)
                )
                saved.append(memory)
            insert = (
                "INSERT INTO memories (agent, key, content, tags, source, occurred_at, occurred_words, classification, "
                "categories, integrity, distrust, version, saved_at, saved_by, salt, commitment, current) "
                f"VALUES ({', '.join(['%s'] * 8)}, %s::text[], %s, %s::text[], {', '.join(['%s'] * 6)})"
            )
            events = [audit(memory) for memory in saved]
            if not _endorsements(events, label):
                self._append_audits(cursor, agent, head, events, digests, versions=(insert, rows))
                return saved
            # An auditor's act: the versions written under the claim of their label, the audit rows under the
            # claim of the top label, in its chain (locked after the keys, as every chain is).
            cursor.executemany(insert, rows)
            self._claim(cursor, agent, _AUDITORS, _AUDITORS.integrity)
            self._append_audits(cursor, agent, lock_head(cursor, agent, _AUDITORS), events, digests)
            return saved

        return self._session(agent, label, work, audited=False)

    def delete(
        self,
        agent: str,
        key: str,
        classification: Label,
        *,
        deleted_at: str,
        deleted_by: str,
        audit: Callable[[Memory | None], AuditEvent],
    ) -> Memory | None:
        """Soft-delete the live version of ``key`` at exactly ``classification`` (its level, categories and
        integrity)."""
        label = label_of(classification)

        def work(cursor, _head):
            lock_keys(cursor, agent, [(key, int(label.level))])
            deleted = cursor.execute(
                f"UPDATE memories m SET deleted_at = %s, deleted_by = %s WHERE agent = %s AND key = %s "
                "AND classification = %s AND categories = %s::text[] AND integrity = %s AND current "
                f"AND deleted_at IS NULL RETURNING {COLUMNS}, commitment",
                (deleted_at, deleted_by, agent, key, int(label.level), sorted(label.categories), int(label.integrity)),
            )
            head = lock_head(cursor, agent, label)
            row = deleted.fetchone()
            if row is None:
                self._append_audits(cursor, agent, head, [audit(None)])
                return None
            memory = memory_of(row[:-1])
            self._append_audits(
                cursor, agent, head, [audit(memory)], [deletion(agent, memory, row[-1], deleted_at, deleted_by)]
            )
            return memory

        return self._session(agent, label, work, audited=False)

    def purge(
        self,
        agent: str,
        key: str,
        level: Label | None,
        *,
        purged_at: str,
        purged_by: str,
        audit: Callable[[list[Memory]], AuditEvent],
    ) -> list[Memory]:
        """Erase the content, tags and context of ``key``'s versions (at exactly the label ``level``: its level,
        categories and integrity; or at every label), as the owner.

        The versions stay, content-free and no longer live (so out of the search index); ``VACUUM FULL`` then
        rewrites the table, its TOAST and every index without the old row versions (``purge.purge_key``). What
        stays is in docs/security.md: the write-ahead log, backups, freed disk blocks.

        Raises:
            PurgeIncomplete: another connection's lock or older snapshot held it up past ``purge_timeout``.
        """
        owner = Owner(self._as_owner, self._owner, self._lock, self._append_audits, self._errors, self.purge_timeout)
        level = None if level is None else label_of(level)
        return purge_key(owner, agent, key, level, purged_at=purged_at, purged_by=purged_by, audit=audit)

    # -- reads (each with its audit event, in one transaction) -----------------------------------------

    def effective(
        self,
        agent: str,
        taint: Label,
        key: str,
        *,
        audit: Callable[[Memory | None], AuditEvent] | None = None,
        integrity: Integrity = Integrity.TRUSTED,
    ) -> Memory | None:
        """The key's version in the effective view at ``taint`` (the reader: its level, categories and floor);
        ``audit=None`` only for policy rules. The audit row is written at the session's own ``integrity``.

        Raises:
            Ambiguous: the key has several maximal versions at ``taint`` and the policy's shadowing is
                ``refuse`` (nothing is audited here: the caller audits the error).
        """
        label = label_of(taint)

        def work(cursor, head):
            rows = cursor.execute(
                f"SELECT DISTINCT ON (m.integrity, m.categories) {COLUMNS} FROM memories m WHERE {LIVE} "
                "AND m.key = %(key)s ORDER BY m.integrity, m.categories, m.classification DESC",
                {"agent": agent, "key": key, **_claimed(label)},
            ).fetchall()
            memory = chosen(cursor, self.rules.shadowing, label, [memory_of(row) for row in rows])
            if audit is not None:
                self._append_audits(cursor, agent, head, [audit(memory)])
            return memory

        return self._read(agent, label, integrity, work, audited=audit is not None)

    def exists(self, agent: str, key: str) -> bool:
        """Whether ``key`` has a live version at any label (only the ``existence-oracle`` variant asks): read as
        the owner, since no session's label reads every compartment."""

        def work(cursor):
            found = cursor.execute(
                "SELECT 1 FROM memories WHERE agent = %s AND key = %s AND current AND deleted_at IS NULL LIMIT 1",
                (agent, key),
            )
            return found.fetchone() is not None

        return self._as_owner(work)

    def effective_view(
        self,
        agent: str,
        taint: Label,
        *,
        tag: str | None = None,
        audit: Callable[[list[Memory]], AuditEvent] | None = None,
        integrity: Integrity = Integrity.TRUSTED,
    ) -> list[Memory]:
        """The effective view at ``taint`` (the reader), by key; ``audit=None`` only for the auditor's views. A key
        whose maximal versions the shadowing rule refuses to choose among is left out. The audit row is written
        at the session's own ``integrity``."""
        label = label_of(taint)
        tagged = "" if tag is None else "AND m.tags::jsonb ? %(tag)s"
        # A policy variant filters by tag first, and shadows only among the tagged versions; the design filters
        # the chosen version: here a key's only candidate, and the others once the rule has chosen (below).
        filtered_after = tag is not None and self.rules.shadow_before_match
        before = "" if self.rules.shadow_before_match else tagged
        after = "AND (v.tags::jsonb ? %(tag)s OR v.candidates > 1)" if filtered_after else ""

        def work(cursor, head):
            # Per key, the highest version of each grade and set of categories (no other can be maximal); trust
            # first, which of them are maximal, and the rule's choice, are decided here, not in a self-join that
            # RLS makes scan.
            found = cursor.execute(
                "SELECT * FROM (SELECT d.*, count(*) OVER (PARTITION BY d.key) AS candidates FROM ("
                f"SELECT DISTINCT ON (m.key, m.integrity, m.categories) {COLUMNS} FROM memories m WHERE {LIVE} "
                f"{before} ORDER BY m.key, m.integrity, m.categories, m.classification DESC) d) v WHERE true {after} "
                "ORDER BY v.key",
                {"agent": agent, "tag": tag, **_claimed(label)},
            )
            by_key: dict[str, list[Memory]] = {}
            for row in found.fetchall():
                memory = memory_of(row[:-1])
                by_key.setdefault(memory.key, []).append(memory)
            order = save_order(cursor, [key for key, versions in by_key.items() if len(versions) > 1])
            view = []
            for versions in by_key.values():
                try:
                    memory = chosen(cursor, self.rules.shadowing, label, versions, order)
                except Ambiguous:
                    continue
                if tag is None or tag in memory.tags:
                    view.append(memory)
            if audit is not None:
                self._append_audits(cursor, agent, head, [audit(view)])
            return view

        return self._read(agent, label, integrity, work, audited=audit is not None)

    def search(
        self,
        agent: str,
        taint: Label,
        query: str,
        limit: int,
        *,
        audit: Callable[[list[Hit]], AuditEvent],
        integrity: Integrity = Integrity.TRUSTED,
    ) -> list[Hit]:
        """Rank the effective view at ``taint`` (the reader) by ``ts_rank`` (or another of ``RANKINGS``) against
        the query's words, OR-combined; ties in save order. A key the shadowing rule refuses is left out. Every
        ranking reads only the document and the query, so no score moves with a version the reader cannot read
        (above its taint, or below its floor)."""
        label = label_of(taint)
        # Words are letters and digits only, so joined with | they are a valid tsquery whatever the input.
        terms = " | ".join(query_terms(query))

        def work(cursor, head):
            hits = []
            if terms:
                parameters = {"terms": terms, "agent": agent, "limit": limit, **_claimed(label)}
                rows = cursor.execute(self.search_statement, parameters).fetchall()
                # A hit's snippet is made when it is first read, the query's snippet terms once for every hit
                # (as on SQLite): a caller that reads no snippet pays nothing for them.
                snippet_terms = lazy_terms(self.analyzer, query)
                hits = [
                    Hit(memory_of(row[:-1]), row[-1], partial(make_snippet, self.analyzer, row[1], snippet_terms))
                    for row in rows
                ]
            self._append_audits(cursor, agent, head, [audit(hits)])
            return hits

        return self._read(agent, label, integrity, work)

    def _read(
        self, agent: str, reader: Label, integrity: Integrity, work: Callable[[Any, Head | None], Any], audited=True
    ) -> Any:
        """``_session`` for a read by ``reader`` (``labels.reader``: the floor is its integrity) made by a session
        whose own integrity is ``integrity``: its claim and its audit chain are at the reader's level and
        categories and that integrity."""
        taint = Label(reader.level, reader.categories, Integrity.parse(integrity))
        return self._session(agent, taint, work, audited=audited, floor=reader.integrity)

    @property
    def search_statement(self) -> str:
        """The SQL of a search at this store's rules and ranking (``views.search_sql``; benchmarks run it raw)."""
        return search_sql(self.rules, indexing_config(self.schema, self.config), RANKINGS[self.rank_function])

    def _append_audits(
        self,
        cursor,
        agent: str,
        head: Head | tuple[Label, int, str],
        events: Sequence[AuditEvent],
        digests: Sequence[str | None] = (),
        *,
        versions: tuple[str, Sequence[Sequence[Any]]] | None = None,
    ) -> None:
        """Append audit rows to the chain ``head`` (``memlab.storage.seal``) and move it, after writing ``versions``
        (their INSERT and rows), if given: a call's writes go together, in one statement when each is one row."""
        label, seq, previous = head if isinstance(head, tuple) else head()
        rows = chain_rows(events, digests, seq=seq, previous=previous, text=storable)
        seq, previous = (rows[-1][0], rows[-1][-1]) if rows else (seq, previous)
        audit = f"INSERT INTO audit ({AUDIT_COLUMNS}) VALUES ({', '.join(['%s'] * 14)})"
        write_together(
            cursor,
            [*([versions] if versions else []), (audit, rows)],
            (
                "UPDATE chain_heads SET seq = %s, hash = %s WHERE agent = %s AND taint = %s "
                "AND categories = %s::text[] AND integrity = %s",
                (seq, previous, agent, int(label.level), sorted(label.categories), int(label.integrity)),
            ),
        )

    # -- audit and auditor views (as the owner) --------------------------------------------------------

    def append_audit(self, event: AuditEvent) -> None:
        """Append ``event`` to the chain of its agent at its taint."""
        self._session(
            event.agent,
            label_of(event.taint),
            lambda cursor, head: self._append_audits(cursor, event.agent, head, [event]),
        )

    def verify(self) -> Verification:
        """Recompute every agent's audit chain and check every version against it (``memlab.storage.verify``),
        the ``current`` marks against the versions, and that the database still enforces what it should."""
        return self._as_owner(lambda cursor: verify_database(cursor, self.schema, self.session_role))

    def drop(self) -> None:
        """Drop this store's schema, its memories and audit with it, and close: for throwaway stores
        (evaluations, benchmarks). Irreversible; works on a closed store too."""
        self.close()
        psycopg, _ = require_psycopg()
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
        if ranking.demotes_untrusted:
            raise InvalidArgument(
                "the PostgreSQL backend ranks by ts_rank: trust demotion (Ranking.untrusted) is FTS5's"
            )
        self._ranking = ranking

    def close(self) -> None:
        self._pool.close()
        self._owner.close()


_AUDITORS = Label.parse(max(Level))
"""The chain of the auditor's acts (purges, endorsements): the top label's, trusted."""


def _endorsements(events: Sequence[AuditEvent], label: Label) -> bool:
    """Whether a save's audit ``events`` are an auditor's endorsement (``MemoryStore.endorse``), whose rows go to
    the auditor's chain; any other save is audited at its versions' label, and the database refuses a row at
    another (a write-down is refused so)."""
    return label != _AUDITORS and all(event.tool == "endorse" and event.taint == _AUDITORS for event in events)


def _claimed(label: Label) -> dict[str, Any]:
    """The query parameters that name what a session reading as ``label`` (``labels.reader``) may read: its
    level, its categories and its floor."""
    return {"level": int(label.level), "categories": sorted(label.categories), "floor": int(label.integrity)}
