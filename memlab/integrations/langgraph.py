"""LangGraph's long-term memory store over memlab: a namespace is an agent, an item is a memory, and every
operation is a gated, audited tool call at a taint the host fixed.

A LangGraph graph (or LangMem's memory tools) keeps long-term memory in a ``langgraph.store.base.BaseStore``;
``MemlabStore`` is one, so the graph's ``put``, ``get``, ``search``, ``delete`` and ``list_namespaces`` read
and write memlab memories through ``Session.call`` — hooks, validation, the policy's gates, shadowing and the
audit exactly as for any other door.

- A namespace tuple is an agent, its labels joined by ``/``: ``("users", "ann")`` is agent ``users/ann``. A
  label must be a non-empty string without ``/`` (nor ``.`` or NUL, as LangGraph's own stores require), and a
  name memlab keeps as given (``memlab.integrations.langgraph_names``: in NFC, so two look-alikes are refused, not
  merged).
- An item is the memory under its key; its value dict is the memory's content as JSON text, so full-text
  search indexes every word of it, field names and string values alike. A memory another door saved as
  plain text (the tools, MCP) reads as ``{"content": text}``.
- The taint is the host's: fixed when the store is made, for every namespace. No operation, config or value
  can change it; a ``classification`` (or ``taint``) field in a value is data like any other.
- The taint may be a label with categories (``"CONFIDENTIAL:hr"``, a ``memlab.labels.Label``): puts are classified
  at it, and gets, searches and listings read only what flows to it in the lattice, so a store at
  ``CONFIDENTIAL:hr`` learns nothing of what one at ``CONFIDENTIAL:legal`` writes.
- Integrity is the host's too (``integrity=``, ``floor=``, ``lower_integrity``), and one for the whole store: a
  graph that read an untrusted memory in one namespace, or was fed a web page, cannot save what it learnt as
  trusted in another. A floor of TRUSTED makes every untrusted memory invisible to the graph. Each item says
  what it is (``MemlabItem.classification``, ``.integrity``); an ``integrity`` field in a value is data.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memlab import InvalidArgument, Memory, MemoryStore, NotFound, arguments
from memlab.integrations import langgraph_ttl as ttls
from memlab.integrations.langgraph_filter import OPERATORS, check_filter, passes
from memlab.integrations.langgraph_index import IndexEmbedder, check_fields
from memlab.integrations.langgraph_items import MemlabItem, MemlabSearchItem, item, search_item
from memlab.integrations.langgraph_names import addressable, check_key, check_namespace, path
from memlab.labels import Integrity, Label, LabelLike
from memlab.search.ranking import Ranking

if TYPE_CHECKING:
    from memlab import Session

__all__ = ["MemlabStore", "MemlabItem", "MemlabSearchItem", "OPERATORS", "SEARCH_DEPTH"]

SEARCH_DEPTH = 100
"""The most hits of a namespace a ``search`` with a query ranks (memlab's cap on ``max_results``): as many as its
``offset + limit`` asks, or all of these when a filter may drop some."""


class MemlabStore(BaseStore):
    """A LangGraph ``BaseStore`` whose namespaces are the agents of a memlab store, read and written at ``taint``.

    Each operation runs as memlab tool calls of the namespace's agent, in one session per agent at ``taint``:
    ``get`` is one ``memory_get``, ``put`` one ``memory_save``, ``delete`` (or ``put`` of ``None``) one
    ``memory_delete`` (a key with no version at the taint is left as it is, as LangGraph's stores do), and
    ``search`` and ``list_namespaces`` one ``memory_search`` (with a query) or ``memory_list`` per agent under
    the prefix they read. Every call appends its audit row. A namespace whose memories are all above the taint
    is not listed, and nothing above the taint is ever returned. At a label with categories "above" is the
    lattice's: nothing is returned that does not flow to it (``Label.can_flow_to``).

    Items carry the version's ``saved_at`` as both ``created_at`` and ``updated_at`` (as LangGraph's
    ``InMemoryStore`` stamps a put; every version stays in memlab's history), and its classification and integrity
    (``MemlabItem``, ``MemlabSearchItem``: LangGraph's items with two more fields, in ``dict()`` too). Without a
    query, ``search`` returns a namespace's items by key, namespaces by name; with one, memlab's ranking
    (``SearchItem.score``) over the best ``offset + limit`` hits of each namespace (all of ``SEARCH_DEPTH`` with a
    filter, which may drop any). A prefix or suffix may be a list, as LangGraph takes it; a filter is
    ``memlab.integrations.langgraph_filter``'s (dotted paths, infinite bounds).

    ``index`` turns on semantic search: the store's vectors are made by ``langgraph_index.IndexEmbedder`` (LangGraph's
    ``dims``, ``embed`` and ``fields``) and a query is ranked by the memlab store's ranking, which must use them:
    ``Ranking.dense_only()`` when this store opens the memlab store itself (the cosine similarity, as in LangGraph; a
    fused score is standardized within one namespace, docs/agents-and-mcp.md). An item ranks by its best field's
    vector; one without a vector (``index=False``) comes after the ranked ones, unscored, where the page has room.
    ``ttl`` and ``put(..., ttl=)`` are LangGraph's, in minutes, by the memlab store's clock (``langgraph_ttl``): an
    expired item leaves every view at once, a read refreshes it where asked, and ``sweep_ttl`` purges as the auditor.

    Integrity is one low-water mark for the whole store, as the taint is one label: it starts at ``integrity``
    (and ``taint``'s ``@untrusted``), and goes down when the host says the graph was fed untrusted content
    (``lower_integrity``) or when any namespace's read returns an untrusted memory; every session the store has
    opened is lowered with it before its next operation (a taint event each), and every one it opens later starts
    untrusted, so no put anywhere after that is trusted. Nothing raises it. ``list_namespaces`` reads each
    namespace, so one holding an untrusted memory lowers the store too (its name is an untrusted writer's). A
    ``floor`` of TRUSTED hides every untrusted memory from every operation, as a memory above the taint is hidden.

    Bad input is refused before anything of its batch runs, unaudited (no call was made): a namespace memlab would
    not keep as the agent name given — a label empty, not a string, holding ``/``, ``.``, NUL, surrounding
    whitespace, a control or zero-width character, not in Unicode NFC, or a joined name over ``MAX_AGENT_CHARS``
    (``InvalidNamespaceError``, ``memlab.integrations.langgraph_names``); a key memlab would refuse or keep
    otherwise (NFC), a value that is not a JSON object or whose JSON is over the content limit, a query over its
    limit, an unknown filter operator, a ``ttl`` that is not minutes above 0 or an ``index`` that is not fields
    (``InvalidArgument``). Only a hook's ``Denied`` comes from the call itself, audited, with nothing written.

    Examples:
        >>> from memlab import MemoryStore
        >>> graph_store = MemlabStore(MemoryStore(), taint="INTERNAL")
        >>> graph_store.put(("users", "ann"), "city", {"text": "Ann moved to Lisbon"})
        >>> graph_store.get(("users", "ann"), "city").value
        {'text': 'Ann moved to Lisbon'}
        >>> [item.key for item in graph_store.search(("users",), query="where does Ann live?")]
        ['city']
    """

    supports_ttl = True
    __slots__ = ("_store", "_taint", "_floor", "_distrust", "_reasons", "_sessions", "_lock", "_index", "_sweeper")
    __slots__ += ("ttl_config", "index_config")

    def __init__(
        self,
        store: MemoryStore | str | Path | None,
        *,
        taint: LabelLike,
        integrity: Integrity | str = Integrity.TRUSTED,
        floor: Integrity | str = Integrity.UNTRUSTED,
        index: Mapping[str, Any] | None = None,
        ttl: Mapping[str, Any] | None = None,
    ) -> None:
        """A LangGraph store over ``store`` at ``taint``: a level, or a label with categories.

        Args:
            store: the memlab store; or a path (None: in memory) for this store to open one, with ``index``'s
                embedder and ``Ranking.dense_only()`` when ``index`` is given (``MemlabStore.store`` is it).
            taint: the label every operation acts at (``"INTERNAL"``, ``"CONFIDENTIAL:hr"``,
                ``"INTERNAL@untrusted"``).
            integrity: the starting integrity (TRUSTED, unless the graph starts on content no one vouches for).
            floor: the least trusted grade the graph reads (UNTRUSTED: every grade; TRUSTED hides untrusted memories).
            index: LangGraph's ``{"dims", "embed", "fields"}`` (``langgraph_index``): semantic search. A memlab store
                given must have been opened with ``embedder=IndexEmbedder(index)`` and a ranking that uses it.
            ttl: LangGraph's ``{"default_ttl", "refresh_on_read", "sweep_interval_minutes"}`` (``langgraph_ttl``).

        Raises:
            InvalidArgument: ``taint`` is not a level or a label (``"CONFIDENTIAL:"``, an unknown level, a bad
                category), an unknown integrity or floor, a label or floor that ``store``'s backend or policy
                cannot keep, a bad ``index`` or ``ttl``, or a memlab store whose embedder or ranking is not
                ``index``'s; nothing is written.
        """
        label = Label.parse(taint)
        integrity, floor = Integrity.parse(integrity), Integrity.parse(floor)
        self.ttl_config = ttls.check_config(ttl)
        self._index = None if index is None else IndexEmbedder(index)
        self.index_config = None if index is None else dict(index)
        """LangGraph's ``index`` as given (``IndexConfig``), or None: the store has no semantic search."""
        if not isinstance(store, MemoryStore):
            ranking = None if self._index is None else Ranking.dense_only()  # cosine: comparable across namespaces
            store = MemoryStore(store, embedder=self._index, ranking=ranking)
        elif self._index is not None and store.embedder != self._index:
            raise InvalidArgument(
                "index needs the memlab store's vectors made by it: open MemoryStore(embedder=IndexEmbedder(index), "
                "ranking=Ranking.dense_only()), or pass a path and let MemlabStore open it"
            )
        if self._index is not None and not store.ranking.uses_dense:
            raise InvalidArgument("index needs a ranking that uses the vectors: store.ranking = Ranking.dense_only()")
        self._sweeper = ttls.Sweeper(self.sweep_ttl)
        label = Label(label.level, label.categories, min(label.integrity, integrity))
        store.check_label(label)  # refused now, not at the first operation
        if floor is not Integrity.UNTRUSTED:
            store.check_label(Label(label.level, label.categories, Integrity.UNTRUSTED), floor=floor)
        self._store = store
        self._taint = label
        self._floor = floor
        self._distrust: tuple[str, ...] = ()
        self._reasons: dict[str, str] = {}
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        floor = "" if self._floor is Integrity.UNTRUSTED else f", floor={self._floor}"
        return f"MemlabStore(taint={self.taint}{floor})"

    @property
    def store(self) -> MemoryStore:
        """The memlab store: its audit, history and purge are the auditor's."""
        return self._store

    @property
    def taint(self) -> Label:
        """The label every operation acts at: the host's level and categories, fixed for the store's life, and the
        store's integrity now (``@untrusted`` once lowered)."""
        return self._taint

    @property
    def integrity(self) -> Integrity:
        """The store's integrity: TRUSTED until the host lowers it or a read returns an untrusted memory."""
        return self._taint.integrity

    @property
    def floor(self) -> Integrity:
        """The least trusted grade the store reads, fixed when it was made."""
        return self._floor

    @property
    def distrust(self) -> tuple[str, ...]:
        """What lowered the store since it was made, oldest first (the host's sources, the untrusted memories it
        read): every session it uses carries them, so every put after them does (``Memory.distrust``)."""
        return self._distrust

    def lower_integrity(self, *, source: str, reason: str = "") -> Integrity:
        """Lower the store's integrity, because the host fed the graph ``source`` (a URL, ``email:<id>``,
        ``tool:<name>``): the host's call, never a graph's. Each session the store has opened is lowered
        (``Session.lower_integrity``, a taint event) before its next operation; each one it opens later starts so.

        Raises:
            InvalidArgument: an empty or bad source, a reason that is not text, or a store whose backend cannot keep
                untrusted memories; nothing is recorded.

        Examples:
            >>> graph_store = MemlabStore(store, taint="INTERNAL")
            >>> graph_store.lower_integrity(source="https://example.com/page", reason="summarised a web page")
            <Integrity.UNTRUSTED: 0>
        """
        source = arguments.distrust_source(source)
        if not isinstance(reason, str):
            raise InvalidArgument(f"reason must be a string, not {type(reason).__name__}")
        self._store.check_label(Label(self._taint.level, self._taint.categories, Integrity.UNTRUSTED))
        with self._lock:
            self._learn((source,), reason)
        return self.integrity

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; all are checked first, so a bad one stops the batch before any runs. Consecutive
        puts to one namespace (with one ``index``) are saved in one transaction (``Session.memory_save_many``: a
        ``memory_save`` audit row each, as one by one; a hook's ``Denied`` refuses that run of puts whole)."""
        results: list[Result] = []
        run: list[_Saving] = []
        checked: set[tuple[str, ...]] = set()  # the namespaces of this batch checked so far
        for prepared in [*(_prepare(op, checked) for op in ops), None]:
            if run and not (isinstance(prepared, _Saving) and prepared.joins(run[0])):
                self._save(run)
                results += [None] * len(run)
                run = []
            if isinstance(prepared, _Saving):
                run.append(prepared)
            elif prepared is not None:
                results.append(prepared(self))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread (memlab's storage is shared safely between threads)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- TTL: the sweep is the auditor's -----------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Purge every expired item of every namespace, at every label (``langgraph_ttl.sweep``): the auditor's act
        on the memlab store, audited as ``purge`` with the reason ``LangGraph TTL expired``; the host's call, not a
        graph's. Returns how many items were purged."""
        return ttls.sweep(self._store, ["/".join(namespace) for namespace in self._namespaces(())])

    def start_ttl_sweeper(self, sweep_interval_minutes: int | None = None) -> Future:
        """Sweep (``sweep_ttl``) every ``sweep_interval_minutes`` (the ttl config's, else 5) in a thread, until
        ``stop_ttl_sweeper``; the future completes when it stops."""
        configured = (self.ttl_config or {}).get("sweep_interval_minutes")
        minutes = ttls.check_minutes(sweep_interval_minutes or configured or 5, "sweep_interval_minutes")
        return self._sweeper.start(minutes)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper; whether it stopped within ``timeout`` seconds."""
        return self._sweeper.stop(timeout)

    # -- one session per agent, all at the host's taint and the store's integrity ----------------------

    def _session(self, namespace: tuple[str, ...]) -> Session:
        """The agent's session, lowered by everything that lowered the store so far."""
        agent = "/".join(namespace)
        with self._lock:
            session = self._sessions.get(agent)
            if session is None:
                first = self._distrust[0] if self._distrust else None
                session = self._store.session(self._taint, agent, floor=self._floor, source=first)
                self._sessions[agent] = session
            self._bring(session)
        return session

    def _reading(self, namespace: tuple[str, ...], read: Any) -> Any:
        """``read(session)`` of the namespace's session; what lowered that session as it read lowers the store."""
        session = self._session(namespace)
        before = len(session.distrust)
        try:
            return read(session)
        finally:
            with self._lock:
                self._learn(session.distrust[before:], f"read by namespace {namespace!r}")

    def _learn(self, sources: Iterable[str], reason: str) -> None:
        """Note ``sources`` among the store's distrust (the caller holds the lock)."""
        for source in sources:
            if source not in self._distrust:
                self._distrust = (*self._distrust, source)
                self._reasons[source] = reason
        if self._distrust:
            self._taint = Label(self._taint.level, self._taint.categories, Integrity.UNTRUSTED)

    def _bring(self, session: Session) -> None:
        """Lower ``session`` by each of the store's sources it does not carry yet (the caller holds the lock)."""
        for source in self._distrust:
            if source not in session.distrust:
                session.lower_integrity(source=source, reason=self._reasons.get(source, ""))

    def _namespaces(self, conditions: Iterable[MatchCondition]) -> list[tuple[str, ...]]:
        """The agents whose names are namespaces matching every condition, by name (not yet read: what the
        caller can see of each is decided by its own gated calls)."""
        found = []
        for agent in self._store.agents():
            namespace = tuple(agent.split("/"))
            if addressable(namespace) and all(_matches(condition, namespace) for condition in conditions):
                found.append(namespace)
        return sorted(found)

    # -- the four operations -------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        memory = self._reading(op.namespace, lambda session: session.memory_get(op.key))
        if memory is None or ttls.expired(memory, self._store.clock()):
            return None
        if op.refresh_ttl:
            self._refresh(op.namespace, [memory])
        return item(op.namespace, memory)

    def _save(self, run: list[_Saving]) -> None:
        """Save a run of puts to one namespace: one ``memory_save``, or one ``memory_save_many`` for several."""
        first = run[0].op
        session = self._session(first.namespace)
        records = [
            {
                "key": put.op.key,
                "content": put.content,
                "tags": [] if put.op.ttl is None else [ttls.ttl_tag(put.op.ttl)],
            }
            for put in run
        ]
        with contextlib.nullcontext() if self._index is None else self._index.saving(first.index):
            if len(records) == 1:
                session.memory_save(**records[0])
            else:
                session.memory_save_many(records, batch_size=len(records))

    def _delete(self, op: PutOp) -> None:
        try:
            self._session(op.namespace).memory_delete(op.key)
        except NotFound:
            pass  # LangGraph's delete of a missing item is a no-op; the audit row says not_found

    def _search(self, op: SearchOp) -> list[SearchItem]:
        # The best offset + limit of each namespace hold the best offset + limit of all; a filter may drop any, and
        # expired items dropped from a namespace's first ranks send it deeper.
        depth = SEARCH_DEPTH if op.filter else max(1, min(op.offset + op.limit, SEARCH_DEPTH))
        found, short = self._found(op, depth)
        if short and depth < SEARCH_DEPTH:
            found, _ = self._found(op, SEARCH_DEPTH)
        if op.filter:
            found = [(item, memory) for item, memory in found if passes(item.value, op.filter)]
        if op.query:  # best first; an item no query ranks (no vector) after every ranked one
            found.sort(key=lambda pair: (pair[0].score is None, -(pair[0].score or 0.0)))
        found = found[op.offset : op.offset + op.limit]
        if op.refresh_ttl:
            for namespace in dict.fromkeys(item.namespace for item, _ in found):
                self._refresh(namespace, [memory for item, memory in found if item.namespace == namespace])
        return [item for item, _ in found]

    def _found(self, op: SearchOp, depth: int) -> tuple[list[tuple[MemlabSearchItem, Memory]], bool]:
        """Each namespace's unexpired hits (or listing), and whether one's were cut at ``depth`` after some expired.
        With an index, a namespace ranked short of ``depth`` adds its items no query ranks (no vector), unscored, as
        LangGraph's ``InMemoryStore`` fills a page."""
        found, short = [], False
        for namespace in self._namespaces([MatchCondition("prefix", op.namespace_prefix)]):
            if op.query:
                hits = self._reading(namespace, lambda session: session.memory_search(op.query, max_results=depth))
                now = self._store.clock()
                live = [hit for hit in hits if not ttls.expired(hit.memory, now)]
                short |= len(hits) == depth and len(live) < len(hits)
                found += [(search_item(namespace, hit.memory, score=hit.score), hit.memory) for hit in live]
                if self._index is not None and len(hits) < depth:
                    ranked = {hit.memory.key for hit in hits}
                    unranked = [m for m in self._reading(namespace, self._listed) if m.key not in ranked]
                    found += [(search_item(namespace, memory), memory) for memory in unranked]
            else:
                found += [(search_item(namespace, memory), memory) for memory in self._reading(namespace, self._listed)]
        return found, short

    def _listed(self, session: Session) -> list[Memory]:
        return self._live(session.memory_list())

    def _live(self, memories: list[Memory]) -> list[Memory]:
        """``memories`` without the expired ones, by the memlab store's clock."""
        now = self._store.clock()
        return [memory for memory in memories if not ttls.expired(memory, now)]

    def _refresh(self, namespace: tuple[str, ...], memories: list[Memory]) -> None:
        """Save again each of ``memories`` that has a TTL and was saved at exactly the store's label (a lower one's
        refresh would be a write down): its expiry starts again now (``langgraph_ttl``)."""
        due = [m for m in memories if m.classification == self._taint and ttls.minutes_of(m.tags) is not None]
        if due:
            session = self._session(namespace)
            for memory in due:
                session.memory_save(memory.key, memory.content, list(memory.tags))

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        seen = [ns for ns in self._namespaces(op.match_conditions or ()) if self._reading(ns, self._listed)]
        if op.max_depth is not None:
            seen = sorted({namespace[: op.max_depth] for namespace in seen})
        return seen[op.offset : op.offset + op.limit]


# -- checking an operation before anything of its batch runs -------------------------------------------


def _prepare(op: Op, checked: set[tuple[str, ...]] | None = None) -> Any:
    """The checked operation, as a function of the store that runs it: everything memlab would refuse of it (its
    namespace, key, value, query and filter) is refused here, before anything of its batch runs. ``checked``: the
    namespaces already checked in this batch (``check_namespace``)."""
    if isinstance(op, GetOp):
        check_namespace(op.namespace)
        check_key(op.key)
        return lambda store: store._get(op)
    if isinstance(op, PutOp):
        check_namespace(op.namespace, checked)  # a "langgraph" root is BaseStore.put's refusal; a batch may write it
        check_key(op.key)
        content = _put_content(op)
        if op.ttl is not None:
            op = op._replace(ttl=ttls.check_minutes(op.ttl))
        if op.index is not None and op.index is not False:
            op = op._replace(index=check_fields(op.index, "index"))
        return (lambda store: store._delete(op)) if content is None else _Saving(op, content)
    if isinstance(op, SearchOp):
        op = op._replace(namespace_prefix=path(op.namespace_prefix, "namespace prefix"))
        if op.query:
            arguments.query(op.query)
        if op.filter is not None:
            check_filter(op.filter)
        return lambda store: store._search(op)
    if isinstance(op, ListNamespacesOp):
        conditions = []
        for condition in op.match_conditions or ():
            if condition.match_type not in ("prefix", "suffix"):
                raise InvalidArgument(f"match type must be 'prefix' or 'suffix', not {condition.match_type!r}")
            conditions.append(condition._replace(path=path(condition.path, f"{condition.match_type} path")))
        op = op._replace(match_conditions=tuple(conditions))
        return lambda store: store._list_namespaces(op)
    raise InvalidArgument(f"unknown store operation {type(op).__name__}")


class _Saving(NamedTuple):
    """A checked put of a value: saved with the puts next to it in its batch (``MemlabStore.batch``)."""

    op: PutOp
    content: str

    def joins(self, first: _Saving) -> bool:
        """Whether this put can be saved in one transaction with the run that ``first`` opened."""
        return self.op.namespace == first.op.namespace and self.op.index == first.op.index


# json.dumps(value, ensure_ascii=False, allow_nan=False), the encoder made once rather than on every put.
_VALUE_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _put_content(op: PutOp) -> str | None:
    """A put's value as memory content (JSON text), or None for a delete."""
    value = op.value
    if value is None:
        return None
    if type(value) is not dict:
        if not isinstance(value, Mapping):
            raise InvalidArgument(f"the value of {op.key!r} must be a dict, not {type(value).__name__}")
        value = dict(value)
    try:
        content = _VALUE_JSON.encode(value)
    except (TypeError, ValueError) as error:
        raise InvalidArgument(f"the value of {op.key!r} in {op.namespace!r} is not JSON: {error}") from None
    try:
        return arguments.content(content)
    except InvalidArgument as error:
        raise InvalidArgument(f"the value of {op.key!r} in {op.namespace!r} as JSON: {error}") from None


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    ends = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(wanted in ("*", label) for wanted, label in zip(path, ends, strict=True))
