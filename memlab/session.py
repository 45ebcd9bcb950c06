"""A session: an agent's conversation at a live, monotonic taint, and the five memory tools."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any, NamedTuple

from memlab import arguments, tooldefs
from memlab.call_audit import CallAudit, batches, failed, in_order, new_version
from memlab.errors import Denied, InternalError, InvalidArgument, MemlabError, NotFound, TaintError
from memlab.labels import Integrity, Label, reader
from memlab.levels import Level
from memlab.policy import ToolCall, run_hooks
from memlab.recall import DEFAULT_BUDGET_CHARS
from memlab.recall import render as render_recall
from memlab.records import AuditEvent, Hit, Memory
from memlab.session_label import Host, SessionLabel

__all__ = ["Session", "Host", "Dispatched"]


class Dispatched(NamedTuple):
    """A tool call's result and the arguments it ran with, validated (``Session.dispatch``)."""

    result: Any
    arguments: dict[str, Any]


class Session(SessionLabel):
    """One conversation of one agent. Create it with ``MemoryStore.session``.

    Every tool works on the session's **effective view** at its **live** taint: for each key, the newest
    live version at the highest classification the taint can read. Every call, failed ones included,
    appends one audit event. Under compartments the taint is a ``Label`` (``memlab.labels``): reads follow
    the lattice of levels and categories, and the policy's shadowing rule picks among incomparable versions.
    """

    def __init__(
        self,
        store: Host,
        session_id: str,
        agent: str,
        taint: Label | Level | str,
        *,
        floor: Integrity = Integrity.UNTRUSTED,
        distrust: tuple[str, ...] = (),
    ) -> None:
        self.store = store
        self.id = session_id
        self.agent = agent
        taint = Label.parse(taint)
        self.initial_taint = taint
        """The taint the session started at (the ``frozen-taint`` variant wrongly saves at it)."""
        self._taint = taint
        self._floor = Integrity.parse(floor)
        self._distrust = tuple(distrust)
        self._read_at = (taint, reader(taint, self._floor))  # a taint and the label it reads as (labels.reader)
        self._untrusted_read: list[Memory] = []  # untrusted versions the running call returned (they lower it)

    def __repr__(self) -> str:
        return f"Session(id={self.id!r}, agent={self.agent!r}, taint={self._taint})"

    @property
    def taint(self) -> Label:
        """The session's current taint: the label of everything it has been exposed to — its level and categories
        only ever raised, its integrity only ever lowered (a trusted label without categories equals its
        ``Level``). Saves are classified at it.

        Examples:
            >>> str(store.session(taint="CONFIDENTIAL:hr").taint), store.session().taint == Level.PUBLIC
            ('CONFIDENTIAL:hr', True)
        """
        return self._taint

    @property
    def label(self) -> Label:
        """The session's current taint (another name for ``taint``, for code that reads it as a label)."""
        return self._taint

    def escalate(self, level: Label | Level | str, *, reason: str = "") -> Label:
        """Raise the taint to ``level`` (a no-op when already there) and record a taint event: only up the
        lattice, to a label the current taint flows to (``Label.can_flow_to``).

        Raises:
            TaintError: ``level`` is below the current taint or incomparable with it (``CONFIDENTIAL:hr`` to
                ``CONFIDENTIAL:legal``); only a new session starts elsewhere. Or ``level`` is untrusted while the
                session is trusted (``lower_integrity`` lowers it, naming its source). Nothing is recorded.
            InvalidArgument: ``level`` is not a label, or has categories this store or policy cannot keep.

        Examples:
            >>> s.escalate(Level.CONFIDENTIAL, reason="read payroll")
            Label('CONFIDENTIAL')
        """
        target = Label.parse(level)
        current = self._taint
        if target.integrity < current.integrity:
            raise TaintError(
                f"escalate raises the level and categories of session {self.id}, not its integrity: the host lowers "
                "that with lower_integrity(source=...), naming what it fed the model"
            )
        # A taint names a level and categories; its integrity stays what it is (only lower_integrity lowers it).
        target = Label(target.level, target.categories, current.integrity)
        if target.can_flow_to(current) and target != current:
            raise TaintError(
                f"cannot lower the taint of session {self.id} from {current} to {target}; start a new session instead"
            )
        if not current.can_flow_to(target):
            raise TaintError(
                f"cannot move the taint of session {self.id} from {current} to {target}: they are incomparable "
                "(a taint only goes up the lattice); start a new session instead"
            )
        if target != current:
            self.store.check_label(target)
            self._move(target, reason)
        return self._taint

    # -- the five tools -----------------------------------------------------------------------------

    def memory_save(
        self,
        key: str,
        content: str,
        tags: list[str] | tuple[str, ...] | None = None,
        *,
        source: str | None = None,
        occurred_at: str | None = None,
    ) -> Memory:
        """Save a new version of ``key`` at the session's current taint.

        A key that exists only above the taint gets a new version at the taint (polyinstantiation);
        the caller learns nothing about the higher one. ``source`` (the message(s) the memory was taken
        from) and ``occurred_at`` (when it happened, ISO 8601) are context the host knows: stored, classified,
        indexed and purged with the version, never copied into the audit.

        Examples:
            >>> s.memory_save("user-name", "Alice", tags=["personal"]).classification
            Label('PUBLIC')
            >>> trip = s.memory_save("trip", "Went to Lisbon", source="Alice: back from Lisbon!",
            ...                      occurred_at="2023-05-08")
            >>> trip.source, trip.occurred_at
            ('Alice: back from Lisbon!', '2023-05-08')
        """
        arguments = {"key": key, "content": content, "tags": tags}
        if source is not None or occurred_at is not None:
            arguments |= {"source": source, "occurred_at": occurred_at}
        return self.call("memory_save", arguments)

    def memory_save_many(self, records: Iterable[Mapping[str, Any]], *, batch_size: int = 1_000) -> list[Memory]:
        """Save many memories at the session's current taint: bulk import, one transaction per batch.

        Each record is an object with ``key``, ``content`` and optional ``tags``, ``source`` and
        ``occurred_at``, validated like a single
        save; every saved version is versioned, indexed and audited (one ``memory_save`` row each) exactly
        as ``memory_save`` one at a time would. A bad record stops the import before its batch is written:
        the error names the record's number (1-based), the batches before it stay saved, and the refusal
        is audited as one ``memory_save_many`` row.

        Raises:
            InvalidArgument: a bad record (``error.record`` is its number) or a batch size below 1.

        Examples:
            >>> [m.version for m in s.memory_save_many([{"key": "k", "content": "a"}, {"key": "k", "content": "b"}])]
            [1, 2]
        """
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise InvalidArgument(f"batch_size must be a positive integer, not {batch_size!r}")
        taint = self._taint  # the whole import acts at one level, as a single call would
        level = self.store.policy.save_level(taint, initial_taint=self.initial_taint)
        bulk = self._tool_call_of("memory_save_many", {}, taint)  # what a refused or failed import is audited as
        try:
            return self._save_many(records, batch_size, taint, level, bulk)
        finally:
            self.store.notify()

    def _save_many(
        self, records: Iterable[Mapping[str, Any]], batch_size: int, taint: Label, level: Label, bulk: ToolCall
    ) -> list[Memory]:
        saved: list[Memory] = []
        save = tooldefs.get("memory_save")
        for first, batch in enumerate(batches(records, batch_size)):
            versions, events = [], []
            for number, record in enumerate(batch, start=first * batch_size + 1):
                call = self._tool_call_of(save.name, record, taint)
                try:
                    if not isinstance(record, Mapping):
                        kind = type(record).__name__
                        raise InvalidArgument(f"must be an object with key, content and tags, not {kind}")
                    call = run_hooks(self.store.hooks, call)  # hooks apply to every door, a record at a time
                    args = save.bind(call.arguments)
                except MemlabError as error:
                    refusal = type(error)(f"record {number}: {error} ({len(saved)} records saved before it)")
                    refusal.record = number
                    raise self._failure(taint, bulk, refusal) from None
                event = self._event(taint, call, args)
                versions.append(new_version(args, event.keywords["at"]))
                events.append(event)
            try:
                saved += self.store.storage.save_many(
                    self.agent, level, versions, saved_by=self.id, audit=in_order(events), **self._stamp(level)
                )
            except Exception as error:  # the batch's transaction rolled back: no row of it was written
                raise self._failure(taint, bulk, error) from error
        return saved

    def memory_get(self, key: str) -> Memory | None:
        """The key's entry in the effective view, or None (also when only a hidden version exists)."""
        return self.call("memory_get", {"key": key})

    def memory_search(self, query: str, max_results: int = arguments.DEFAULT_MAX_RESULTS) -> list[Hit]:
        """Rank the effective view against a natural-language query (never FTS5 syntax).

        Examples:
            >>> [hit.memory.key for hit in s.memory_search("what is my name?")]
            ['user-name']
        """
        return self.call("memory_search", {"query": query, "max_results": max_results})

    def memory_list(self, tag: str | None = None) -> list[Memory]:
        """The effective view ordered by key, filtered by ``tag`` after shadowing."""
        return self.call("memory_list", {"tag": tag})

    def memory_delete(self, key: str) -> Memory:
        """Soft-delete the key's current version at exactly the session's taint.

        Raises:
            NotFound: no live version at this taint (whatever exists at other levels).
        """
        return self.call("memory_delete", {"key": key})

    # -- for hosts ----------------------------------------------------------------------------------

    def recall(self, budget_chars: int = DEFAULT_BUDGET_CHARS) -> str:
        """The effective view as a system-prompt section of at most ``budget_chars`` characters.

        Grouped by each memory's first tag, newest first; when the view does not fit, the newest
        memories are kept and a closing line counts the rest. It reads the effective view at the live
        taint like ``memory_list`` and is audited as tool ``memory_recall`` (the versions shown).
        It is for the host that builds the prompt, not a tool for the model.

        Raises:
            InvalidArgument: ``budget_chars`` is not a positive integer.

        Examples:
            >>> print(s.recall(budget_chars=4000))  # doctest: +ELLIPSIS
            ## What you remember
            ...
            ### personal
            - user-name: Sam (2026-01-01)
        """
        return self._run("memory_recall", {"budget_chars": budget_chars}, host=True)[0]

    # -- one path for every call --------------------------------------------------------------------

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Run one tool call: the one path every door takes (the methods above, ``memlab.tools.call``, MCP,
        the checkers and the widgets).

        The call reads the live taint once, and that snapshot is what the policy, the storage and the audit
        use; then the store's pre-tool-call hooks run, the arguments are validated, the policy and storage
        act, and exactly one audit row is appended — for a refused, invalid or failed call too (an internal
        error is audited with its class name only, and raised as ``InternalError``).

        Returns:
            The tool's result: a ``Memory``, ``None``, a list of ``Hit`` or of ``Memory``.
        Raises:
            MemlabError: the call was invalid, refused by a hook or the policy, found nothing to delete, or
                failed inside (``InternalError``).

        Examples:
            >>> s.call("memory_save", {"key": "user-city", "content": "Lisbon"}).version
            1
        """
        return self._run(tool, {} if arguments is None else arguments)[0]

    def dispatch(self, tool: Any, raw: Any, *, host: bool = False) -> Dispatched:
        """``call``, also returning the validated arguments (the tool layer renders results with them).

        Examples:
            >>> s.dispatch("memory_get", {"key": "user-city"}).arguments
            {'key': 'user-city'}
        """
        return Dispatched(*self._run(tool, raw, host=host))

    def _run(self, tool: Any, raw: Any, *, host: bool = False) -> tuple[Any, dict[str, Any]]:
        """``dispatch``'s work, as a plain pair.

        The tool comes from the one table of tools (``memlab.tooldefs``) and runs ``Session._<tool>``; a host's
        tool (``memory_recall``) only when ``host``. This is the one place that guarantees one audit row per
        call: the tool's storage call writes it in the transaction of its effect (``CallAudit.written_with``), and when
        none did — the call was refused or invalid before it, or its transaction rolled back — it is written
        here, once, with the failure.
        """
        call = self._tool_call_of(tool, raw, self._taint)
        taint = call.taint = self.store.policy.call_taint(call)  # read once: the whole call acts at one label
        audit: CallAudit | None = None
        self._untrusted_read.clear()
        try:
            if type(raw) is not dict and not isinstance(raw, Mapping):
                raise InvalidArgument(f"arguments must be an object, not {type(raw).__name__}")
            call = run_hooks(self.store.hooks, call)
            definition = tooldefs.get(call.tool, host=host)
            args = definition.bind(call.arguments)
            audit = CallAudit(self._event(taint, call, args))
            result = getattr(self, definition.method)(taint, audit, **args)
            if not audit.written:  # a tool's method writes its row with its effect; one that did not fails here
                raise InternalError(f"{definition.method} wrote no audit row")
            if self._untrusted_read and self.store.policy.reads_lower:
                # What it returned lowers the session, so it cannot be saved as trusted.
                self._lower_for_reads()
            return result, args
        except Exception as error:
            failure = self._failure(taint, call, error, write=audit is None or not audit.written)
            if failure is error:
                raise
            raise failure from error
        finally:
            self.store.notify()  # every call appended an audit row, whatever its outcome

    def _tool_call_of(self, tool: Any, raw: Any, taint: Label) -> ToolCall:
        given = dict(raw) if type(raw) is dict or isinstance(raw, Mapping) else {}
        return ToolCall(tool, given, taint=taint, agent=self.agent, session_id=self.id)

    def _failure(self, taint: Label, call: ToolCall, error: Exception, *, write: bool = True) -> MemlabError:
        """What the caller of a failed call gets: a ``MemlabError`` as it is, anything else as an
        ``InternalError`` (audited with its class name only); its audit row is written here when ``write`` (no
        storage call wrote one)."""
        if isinstance(error, MemlabError):
            failure, outcome, message = error, error.code, str(error)
        else:
            failure = InternalError(f"{arguments.audit_text(call.tool, 64)} failed: {type(error).__name__}")
            outcome, message = failure.code, type(error).__name__
        if write:
            self.store.storage.append_audit(self._event(taint, call)(outcome=outcome, message=message))
        return failure

    def _event(self, taint: Label, call: ToolCall, args: Mapping[str, Any] | None = None) -> partial[AuditEvent]:
        """The call's audit event, to be completed with its outcome and records once they are known.

        It holds identifiers, never content: the validated key and query, or for a rejected call the given
        ones when short and valid, else their length and a digest; hook notes name arguments, not values.
        """
        given = args if args is not None else call.arguments
        return partial(
            AuditEvent,
            at=self.store.now(),
            session_id=self.id,
            agent=self.agent,
            taint=taint,
            tool=arguments.audit_text(call.tool, arguments.MAX_ARGUMENT_NAME_CHARS) or arguments.quoted(call.tool),
            key=arguments.audit_text(given.get("key"), arguments.MAX_KEY_CHARS),
            query=arguments.audit_text(given.get("query"), arguments.MAX_QUERY_CHARS),
            notes=tuple(call.notes),
        )

    def _memory_save(self, taint: Label, audit: CallAudit, **args: Any) -> Memory:
        level = self.store.policy.save_level(taint, initial_taint=self.initial_taint)
        (memory,) = audit.written_with(
            self.store.storage.save_many,
            self.agent,
            level,
            [new_version(args, audit.at)],
            saved_by=self.id,
            audit=lambda memory: audit.event(records=(memory.ref(),)),
            **self._stamp(level),
        )
        return memory

    def _memory_get(self, taint: Label, audit: CallAudit, *, key: str) -> Memory | None:
        refusal: list[Denied] = []

        def complete(memory: Memory | None) -> AuditEvent:
            if memory is not None:
                return audit.event(records=self._readable_refs(taint, (memory,)))
            if self.store.policy.reveal_hidden and self.store.storage.exists(self.agent, key):
                # The existence-oracle variant: the audit records the answer the caller gets.
                refusal.append(Denied(f"memory {key!r} exists but is classified above this session's level"))
                return failed(audit.event, refusal[0])
            return audit.event(outcome="not_found")

        memory = audit.written_with(
            self.store.storage.effective,
            self.agent,
            self._reader(taint),
            key,
            audit=complete,
            integrity=taint.integrity,
        )
        if refusal:
            raise refusal[0]
        return memory

    def _memory_search(self, taint: Label, audit: CallAudit, *, query: str, max_results: int) -> list[Hit]:
        return audit.written_with(
            self.store.storage.search,
            self.agent,
            self._reader(taint),
            query,
            max_results,
            audit=lambda hits: audit.event(records=self._readable_refs(taint, [hit.memory for hit in hits])),
            integrity=taint.integrity,
        )

    def _memory_list(self, taint: Label, audit: CallAudit, *, tag: str | None) -> list[Memory]:
        return audit.written_with(
            self.store.storage.effective_view,
            self.agent,
            self._reader(taint),
            tag=tag,
            audit=lambda view: audit.event(records=self._readable_refs(taint, view)),
            integrity=taint.integrity,
        )

    def _memory_recall(self, taint: Label, audit: CallAudit, *, budget_chars: int) -> str:
        shown: list[str] = []

        def complete(view: list[Memory]) -> AuditEvent:
            # Rendered inside the read's transaction so the audit names exactly the versions shown.
            self._check_readable(taint, view)
            text, memories = render_recall(view, budget_chars)
            shown.append(text)
            return audit.event(records=self._readable_refs(taint, memories))

        audit.written_with(
            self.store.storage.effective_view,
            self.agent,
            self._reader(taint),
            audit=complete,
            integrity=taint.integrity,
        )
        return shown[0]

    def _memory_delete(self, taint: Label, audit: CallAudit, *, key: str) -> Memory:
        deleted = audit.written_with(
            self.store.storage.delete,
            self.agent,
            key,
            self.store.policy.delete_level(key, taint, visible=partial(self._visible, taint)),
            deleted_at=audit.at,
            deleted_by=self.id,
            audit=lambda memory: (
                audit.event(records=(memory.ref(),)) if memory is not None else failed(audit.event, _not_found(key))
            ),
        )
        if deleted is None:
            raise _not_found(key)
        return deleted

    def _visible(self, taint: Label, key: str) -> Label | None:
        """The classification of ``key``'s version in this session's effective view at ``taint`` (unaudited:
        the policy reads it while deciding a call whose own audit row says what was done)."""
        memory = self.store.storage.effective(self.agent, self._reader(taint), key)
        if memory is None:
            return None
        self._check_readable(taint, (memory,))
        return memory.label


def _not_found(key: str) -> NotFound:
    # The message depends on the key alone: a hidden version and no version at all read the same.
    return NotFound(f"no memory with key {key!r} at this session's level")
