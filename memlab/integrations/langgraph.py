"""LangGraph's long-term memory store over memlab: a namespace is an agent, an item is a memory, and every
operation is a gated, audited tool call at a taint the host fixed.

A LangGraph graph (or LangMem's memory tools) keeps long-term memory in a ``langgraph.store.base.BaseStore``;
``MemlabStore`` is one, so the graph's ``put``, ``get``, ``search``, ``delete`` and ``list_namespaces`` read
and write memlab memories through ``Session.call`` — hooks, validation, the policy's gates, shadowing and the
audit exactly as for any other door.

- A namespace tuple is an agent, its labels joined by ``/``: ``("users", "ann")`` is agent ``users/ann``. A
  label must be a non-empty string without ``/`` (nor ``.`` or NUL, as LangGraph's own stores require).
- An item is the memory under its key; its value dict is the memory's content as JSON text, so full-text
  search indexes every word of it, field names and string values alike. A memory another door saved as
  plain text (the tools, MCP) reads as ``{"content": text}``.
- The taint is the host's: fixed when the store is made, for every namespace. No operation, config or value
  can change it; a ``classification`` (or ``taint``) field in a value is data like any other.
- The taint may be a label with categories (``"CONFIDENTIAL:hr"``, a ``memlab.labels.Label``): puts are classified
  at it, and gets, searches and listings read only what flows to it in the lattice, so a store at
  ``CONFIDENTIAL:hr`` learns nothing of what one at ``CONFIDENTIAL:legal`` writes.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memlab import InvalidArgument, Memory, NotFound
from memlab.labels import Label, LabelLike

if TYPE_CHECKING:
    from memlab import MemoryStore, Session

__all__ = ["MemlabStore", "OPERATORS", "SEARCH_DEPTH"]

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
"""The comparison operators a ``search`` filter may use, as LangGraph documents them."""
_ORDERING = {"$gt": float.__gt__, "$gte": float.__ge__, "$lt": float.__lt__, "$lte": float.__le__}
SEARCH_DEPTH = 100
"""How many of a namespace's best hits a ``search`` with a query ranks (memlab's cap on ``max_results``)."""


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
    ``InMemoryStore`` stamps a put; every version stays in memlab's history). Without a query, ``search``
    returns a namespace's items by key, namespaces by name; with one, memlab's ranking (``SearchItem.score``)
    over the best ``SEARCH_DEPTH`` hits of each namespace. TTLs and per-item ``index`` fields are refused:
    memlab keeps every memory until it is deleted or purged and indexes every memory whole.

    Bad input is refused before anything of its batch runs, unaudited (no call was made): a namespace label
    that is empty, not a string, or holds ``/``, ``.`` or NUL (``InvalidNamespaceError``); a value that is not a
    JSON object, an unknown filter operator, a ``ttl`` or an ``index`` (``InvalidArgument``). What memlab's own
    validation refuses — a key, a value whose JSON is over the content limit — is refused by the call, audited,
    with nothing written; a hook's ``Denied`` likewise.

    Examples:
        >>> from memlab import MemoryStore
        >>> graph_store = MemlabStore(MemoryStore(), taint="INTERNAL")
        >>> graph_store.put(("users", "ann"), "city", {"text": "Ann moved to Lisbon"})
        >>> graph_store.get(("users", "ann"), "city").value
        {'text': 'Ann moved to Lisbon'}
        >>> [item.key for item in graph_store.search(("users",), query="where does Ann live?")]
        ['city']
    """

    __slots__ = ("_store", "_taint", "_sessions", "_lock")

    def __init__(self, store: MemoryStore, *, taint: LabelLike) -> None:
        """A LangGraph store over ``store`` at ``taint``: a level, or a label with categories.

        Raises:
            InvalidArgument: ``taint`` is not a level or a label (``"CONFIDENTIAL:"``, an unknown level, a bad
                category), or has categories that ``store``'s backend or policy cannot keep; nothing is written.
        """
        label = Label.parse(taint)
        store.check_label(label)  # refused now, not at the first operation
        self._store = store
        self._taint = label
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MemlabStore(taint={self._taint})"

    @property
    def taint(self) -> Label:
        """The label every operation acts at: the host's choice, fixed for the store's life."""
        return self._taint

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; all are checked first, so a bad one stops the batch before any runs."""
        prepared = [_prepare(op) for op in ops]
        return [run(self) for run in prepared]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread (memlab's storage is shared safely between threads)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- one session per agent, all at the host's taint ----------------------------------------------

    def _session(self, namespace: tuple[str, ...]) -> Session:
        agent = "/".join(namespace)
        with self._lock:
            session = self._sessions.get(agent)
            if session is None:
                session = self._sessions[agent] = self._store.session(self._taint, agent)
        return session

    def _namespaces(self, conditions: Iterable[MatchCondition]) -> list[tuple[str, ...]]:
        """The agents whose names are namespaces matching every condition, by name (not yet read: what the
        caller can see of each is decided by its own gated calls)."""
        found = []
        for agent in self._store.agents():
            namespace = tuple(agent.split("/"))
            if _addressable(namespace) and all(_matches(condition, namespace) for condition in conditions):
                found.append(namespace)
        return sorted(found)

    # -- the four operations -------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        memory = self._session(op.namespace).memory_get(op.key)
        if memory is None:
            return None
        at = datetime.fromisoformat(memory.saved_at)
        return Item(value=_value(memory.content), key=memory.key, namespace=op.namespace, created_at=at, updated_at=at)

    def _put(self, op: PutOp, content: str | None) -> None:
        session = self._session(op.namespace)
        if content is not None:
            session.memory_save(op.key, content)
            return
        try:
            session.memory_delete(op.key)
        except NotFound:
            pass  # LangGraph's delete of a missing item is a no-op; the audit row says not_found

    def _search(self, op: SearchOp) -> list[SearchItem]:
        found: list[SearchItem] = []
        for namespace in self._namespaces([MatchCondition("prefix", op.namespace_prefix)]):
            session = self._session(namespace)
            if op.query:
                hits = session.memory_search(op.query, max_results=SEARCH_DEPTH)
                found += [_item(namespace, hit.memory, score=hit.score) for hit in hits]
            else:
                found += [_item(namespace, memory) for memory in session.memory_list()]
        if op.filter:
            found = [item for item in found if _passes(item.value, op.filter)]
        if op.query:
            found.sort(key=lambda item: -(item.score or 0.0))
        return found[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        seen = [ns for ns in self._namespaces(op.match_conditions or ()) if self._session(ns).memory_list()]
        if op.max_depth is not None:
            seen = sorted({namespace[: op.max_depth] for namespace in seen})
        return seen[op.offset : op.offset + op.limit]


# -- checking an operation before anything of its batch runs -------------------------------------------


def _prepare(op: Op) -> Any:
    """The checked operation, as a function of the store that runs it."""
    if isinstance(op, GetOp):
        _check_labels(op.namespace, "namespace", agent=True)
        return lambda store: store._get(op)
    if isinstance(op, PutOp):
        _check_labels(op.namespace, "namespace", agent=True)
        if op.namespace[0] == "langgraph":
            raise InvalidNamespaceError(f"the namespace {op.namespace!r} must not start with 'langgraph' (LangGraph's)")
        content = _put_content(op)
        return lambda store: store._put(op, content)
    if isinstance(op, SearchOp):
        _check_labels(op.namespace_prefix, "namespace prefix")
        if op.filter is not None:
            _check_filter(op.filter)
        return lambda store: store._search(op)
    if isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            if condition.match_type not in ("prefix", "suffix"):
                raise InvalidArgument(f"match type must be 'prefix' or 'suffix', not {condition.match_type!r}")
            _check_labels(condition.path, f"{condition.match_type} path")
        return lambda store: store._list_namespaces(op)
    raise InvalidArgument(f"unknown store operation {type(op).__name__}")


def _check_labels(namespace: Any, what: str, *, agent: bool = False) -> None:
    """Refuse a namespace whose labels would not join into one agent name and split back into the same labels;
    an ``agent`` namespace (of a get, put or delete) also must not be empty."""
    if not isinstance(namespace, tuple):
        raise InvalidNamespaceError(f"the {what} must be a tuple of strings, not {type(namespace).__name__}")
    if agent and not namespace:
        raise InvalidNamespaceError(f"the {what} must not be empty: it names the agent")
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(f"label {label!r} of the {what} {namespace!r} must be a string")
        if not label:
            raise InvalidNamespaceError(f"the {what} {namespace!r} has an empty label")
        for char, name in (("/", "a slash (it joins the labels of an agent name)"), (".", "a period"), ("\x00", "NUL")):
            if char in label:
                raise InvalidNamespaceError(f"label {label!r} of the {what} {namespace!r} must not hold {name}")


def _put_content(op: PutOp) -> str | None:
    """A put's value as memory content (JSON text), or None for a delete."""
    if op.ttl is not None:
        raise InvalidArgument("ttl must be None: memlab keeps a memory until it is deleted or purged")
    if op.value is None:
        return None
    if op.index is not None:
        raise InvalidArgument(f"index must be None, not {op.index!r}: memlab indexes every memory's whole JSON")
    if not isinstance(op.value, Mapping):
        raise InvalidArgument(f"the value of {op.key!r} must be a dict, not {type(op.value).__name__}")
    try:
        return json.dumps(dict(op.value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InvalidArgument(f"the value of {op.key!r} in {op.namespace!r} is not JSON: {error}") from None


def _check_filter(where: Any, path: str = "filter") -> None:
    """Refuse a filter that is not a dict of fields, or an operator LangGraph does not document."""
    if not isinstance(where, Mapping):
        raise InvalidArgument(f"{path} must be a dict of field values, not {type(where).__name__}")
    for field, wanted in where.items():
        if isinstance(wanted, Mapping) and any(str(name).startswith("$") for name in wanted):
            for operator, operand in wanted.items():
                if operator not in OPERATORS:
                    known = ", ".join(OPERATORS)
                    raise InvalidArgument(f"{path}.{field} uses unknown operator {operator!r}; known: {known}")
                if operator in _ORDERING and not _is_number(operand):
                    raise InvalidArgument(f"{path}.{field}: {operator} compares numbers, not {operand!r}")
        elif isinstance(wanted, Mapping):
            _check_filter(wanted, f"{path}.{field}")


# -- reading memories back as items ----------------------------------------------------------------------


def _item(namespace: tuple[str, ...], memory: Memory, *, score: float | None = None) -> SearchItem:
    at = datetime.fromisoformat(memory.saved_at)
    return SearchItem(namespace, memory.key, _value(memory.content), at, at, score)


def _value(content: str) -> dict[str, Any]:
    """A memory's content as an item's value: the JSON object it holds, or plain text as ``{"content": text}``."""
    try:
        value = json.loads(content)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"content": content}


def _addressable(namespace: tuple[str, ...]) -> bool:
    """Whether an agent's name splits into labels LangGraph can address (another door may name agents freely)."""
    return all(label and "." not in label and "\x00" not in label for label in namespace)


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    ends = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(wanted in ("*", label) for wanted, label in zip(path, ends, strict=True))


def _passes(value: Any, where: Mapping[str, Any]) -> bool:
    """Whether an item's value matches a filter: equality of fields (nested dicts field by field), or the
    documented operators; an ordering never matches a value that is not a number."""
    if not isinstance(value, Mapping):
        return False
    return all(_compare(value.get(field), wanted) for field, wanted in where.items())


def _compare(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping) and any(str(name).startswith("$") for name in wanted):
        return all(_apply(value, operator, operand) for operator, operand in wanted.items())
    if isinstance(wanted, Mapping):
        return _passes(value, wanted)
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(one, other) for one, other in zip(value, wanted, strict=True))
        )
    return value == wanted


def _apply(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return value == operand
    if operator == "$ne":
        return value != operand
    return _is_number(value) and _ORDERING[operator](float(value), float(operand))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
