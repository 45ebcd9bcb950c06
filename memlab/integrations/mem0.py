"""mem0's ``Memory`` API over memlab: the same method names, arguments and result shapes, every call a gated,
audited tool call of one session at a taint, integrity and floor the host fixed.

Code written for mem0 (``from mem0 import Memory``) runs against ``memlab.integrations.mem0.Memory`` once the
constructor names a memlab store; ``add``, ``search``, ``get``, ``get_all``, ``update``, ``delete``,
``delete_all``, ``history`` and ``reset`` keep mem0's signatures (both its 1.x and 2.x forms of scoping: a
``user_id=`` argument or ``filters={"user_id": ...}``) and return mem0's dicts (``{"results": [...]}``,
``{"message": ...}``), each memory with two more fields: its ``classification`` and ``integrity``.

- **One agent.** Every memory of a ``Memory`` lives in one memlab agent (``agent="mem0"`` unless the host names
  another); its id, a uuid, is the key, its text the content. ``user_id``, ``agent_id`` and ``run_id`` are kept
  in tags and select memories as mem0's filters do: they are not access control (mem0's are not either). The
  gate is the host's label: a ``Memory`` at ``INTERNAL`` reads nothing above it, whatever id it names. A host
  that wants users kept apart, ranking statistics included, gives each one a ``Memory`` of their own agent.
- **Metadata** is kept a field a tag (``memlab.integrations.mem0_records``) and filtered with mem0's operators
  (``memlab.integrations.mem0_filters``); a field named ``classification``, ``integrity`` or ``trusted`` is data.
- **Inference** is the caller's: ``add(..., infer=True)`` (mem0's default) calls the ``extractor`` the host
  passed (``messages -> list of facts``) and saves each fact with the messages as its ``source``; memlab bundles
  no LLM, and without an extractor it is a clear error. ``infer=False`` saves each non-system message as given.
- **Writes go where memlab puts them**: at the session's taint. ``update`` of a memory visible from a lower level
  saves a version at this one (the lower one stays for lower readers); ``delete``, ``delete_all`` and ``reset``
  soft-delete versions at exactly this taint, each one a ``memory_delete`` call, so what was written lower stays
  (and shows again once the version above it is deleted). Every version stays in memlab's history.
- **History** is read through the session's view: the saves and deletes of the versions of the id whose label
  the session may read (its taint and floor), audited as one ``memory_get`` of the id.

Examples:
    >>> m = Memory(taint="INTERNAL", extractor=lambda messages: ["Likes tennis"])
    >>> added = m.add("I like tennis", user_id="alice", metadata={"category": "hobbies"})
    >>> [(r["memory"], r["event"]) for r in added["results"]]
    [('Likes tennis', 'ADD')]
    >>> [r["metadata"] for r in m.search("tennis", filters={"user_id": "alice"})["results"]]
    [{'category': 'hobbies'}]
"""

from __future__ import annotations

import asyncio
import functools
import threading
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from memlab import arguments
from memlab.errors import InvalidArgument, NotFound
from memlab.integrations import mem0_records as records
from memlab.integrations import mem0_scope as scoping
from memlab.integrations.mem0_filters import ENTITY_IDS
from memlab.integrations.mem0_scope import CONFIG_KEYS
from memlab.labels import Integrity, Label, LabelLike, reader
from memlab.levels import Level
from memlab.records import Memory as Version
from memlab.store import MemoryStore

__all__ = ["Memory", "AsyncMemory", "MemoryNotFound", "CONFIG_KEYS"]

_UNSET: Any = object()
Extractor = Callable[..., Any]


class MemoryNotFound(NotFound, ValueError):
    """No memory with that id in the session's view (a ``ValueError``, as mem0 raises; memlab's ``NotFound``)."""


class Memory:
    """mem0's ``Memory`` over a memlab store, at the host's label.

    Args:
        store: a ``MemoryStore``, or a path or URL to open one at (closed by ``close``), or None: a store in
            memory, gone with the object (mem0's ``Memory()`` with no arguments; memlab reads no environment
            variable here: a library call writes where its caller says).
        taint: the label every call acts at (``"INTERNAL"``, ``"CONFIDENTIAL:hr"``): the host's, fixed.
        agent: the memlab agent whose memories these are.
        integrity: the starting integrity (TRUSTED unless the session starts on content no one vouches for).
        floor: the least trusted grade it reads (UNTRUSTED: every grade; TRUSTED hides untrusted memories).
        extractor: ``add(infer=True)``'s fact extraction: called with the messages (a list of ``{"role",
            "content"}`` dicts) and, when ``add`` is given a ``prompt``, ``prompt=``; returns a list of strings.

    Raises:
        InvalidArgument: a store that is none of those, a bad label, agent, integrity or floor, or an extractor
            that is not callable; nothing is written.
    """

    def __init__(
        self,
        store: MemoryStore | str | Path | None = None,
        *,
        taint: LabelLike = Level.PUBLIC,
        agent: str = "mem0",
        integrity: Integrity | str = Integrity.TRUSTED,
        floor: Integrity | str = Integrity.UNTRUSTED,
        extractor: Extractor | None = None,
    ) -> None:
        if extractor is not None and not callable(extractor):
            raise InvalidArgument(f"extractor must be callable (messages -> list of facts), not {extractor!r}")
        if store is None or isinstance(store, str | Path):
            owned = MemoryStore(store)
        elif isinstance(store, MemoryStore):
            owned = None
        else:
            raise InvalidArgument(
                f"store must be a memlab MemoryStore, a path or None, not {type(store).__name__} (mem0's configuration "
                f"has no meaning here; Memory.from_config takes {', '.join(CONFIG_KEYS)})"
            )
        self._store = store if owned is None else owned
        try:
            self._session = self._store.session(taint, agent, integrity=integrity, floor=floor)
        except Exception:
            if owned is not None:
                owned.close()
            raise
        self._owned = owned
        self._extractor = extractor
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """A ``Memory`` from a dict of its arguments (``CONFIG_KEYS``), as mem0's ``Memory.from_config``.

        Raises:
            InvalidArgument: a key memlab does not take (mem0's ``llm``, ``embedder``, ``vector_store``: memlab
                bundles none of them), naming the ones it does.

        Examples:
            >>> Memory.from_config({"taint": "INTERNAL"}).taint
            Label('INTERNAL')
        """
        return cls(**scoping.config_of(config_dict))

    def __repr__(self) -> str:
        return f"Memory(agent={self.agent!r}, taint={self.taint})"

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store, when this object opened it (mem0's ``close``)."""
        if self._owned is not None:
            self._owned.close()

    @property
    def store(self) -> MemoryStore:
        """The memlab store: the auditor's view of what this object did (``store.audit()``)."""
        return self._store

    @property
    def agent(self) -> str:
        """The memlab agent whose memories these are."""
        return self._session.agent

    @property
    def taint(self) -> Label:
        """The session's label: the host's level and categories, and its integrity now."""
        return self._session.taint

    @property
    def integrity(self) -> Integrity:
        """TRUSTED until the host lowers it or a read returns an untrusted memory."""
        return self._session.integrity

    @property
    def floor(self) -> Integrity:
        """The least trusted grade this object reads, fixed when it was made."""
        return self._session.floor

    def lower_integrity(self, *, source: str, reason: str = "") -> Integrity:
        """Lower the integrity because the host fed the model ``source``: the host's call, never a caller's
        argument (``Session.lower_integrity``)."""
        with self._lock:
            return self._session.lower_integrity(source=source, reason=reason)

    # -- writing ---------------------------------------------------------------------------------------

    def add(
        self,
        messages: Any,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """Save memories scoped by at least one of ``user_id``, ``agent_id``, ``run_id`` (mem0's ``add``).

        With ``infer`` (the default) the extractor's facts are saved, each with the messages as its ``source``
        (a fact said twice in one call is saved once); without it every non-system message is saved as it is,
        with its ``role`` (and its ``name`` as ``actor_id``). All of them in one transaction, each one audited
        ``memory_save`` at the session's taint.

        Returns:
            ``{"results": [{"id", "memory", "event": "ADD", ...}]}``; ``infer=False`` adds ``actor_id`` and ``role``.
        Raises:
            InvalidArgument: no scope, a bad id, message or metadata, ``infer`` without an extractor or with one
                that returns something other than a list of strings, ``timestamp`` (mem0's Platform only) or a
                ``memory_type`` (procedural memories need an LLM's summary); nothing is written.
        """
        if timestamp is not None:
            raise InvalidArgument("timestamp is a mem0 Platform parameter; the open-source Memory does not take it")
        if memory_type is not None:
            raise InvalidArgument(
                f"memory_type {memory_type!r}: a procedural memory needs an LLM's summary (none bundled)"
            )
        scope = scoping.scope_of(user_id=user_id, agent_id=agent_id, run_id=run_id)
        metadata = records.metadata_of(metadata)
        expires = records.expiration(expiration_date)
        chat = records.messages_of(messages)
        if not infer:
            saves = [
                (message["content"], {"role": message["role"], "actor_id": message.get("name")}, None)
                for message in chat
                if message["role"] != "system"
            ]
        else:  # the extractor (an LLM call, mostly) runs outside the lock: other calls need not wait for it
            source = records.transcript(chat)
            saves = [(fact, {}, source) for fact in records.facts_of(self._extractor, chat, prompt)]
        pending = [
            {
                "key": str(uuid.uuid4()),
                "content": text,
                "tags": records.tags_for(scope, metadata, expiration_date=expires, **named),
                "source": source,
            }
            for text, named, source in saves
        ]
        with self._lock:
            saved = self._session.memory_save_many(pending, batch_size=max(len(pending), 1)) if pending else []
        results = []
        for version, (_, named, _) in zip(saved, saves, strict=True):
            result = {"id": version.key, "memory": version.content, "event": "ADD"}
            if not infer:
                result |= {"actor_id": named["actor_id"], "role": named["role"]}
            results.append(result | records.label_of(version))
        return {"results": results}

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        expiration_date: Any = _UNSET,
        data: str | None = None,
    ) -> dict[str, str]:
        """Save a new version of ``memory_id`` at the session's taint (mem0's ``update``): the new text (or the
        old), the metadata merged into the old, the scope, role and creation time kept.

        Raises:
            MemoryNotFound: no memory with that id in the session's view (as mem0 raises for a missing id); nothing
                is written, and the answer is the same whether or not a version exists above the taint.
            InvalidArgument: none of text, metadata and expiration_date given, or a bad one.

        Examples:
            >>> m = Memory()
            >>> memory_id = m.add("Likes tennis", user_id="alice", infer=False)["results"][0]["id"]
            >>> m.update(memory_id, text="Likes to play tennis on weekends")
            {'message': 'Memory updated successfully!'}
        """
        text = data if text is None else text
        if text is None and metadata is None and expiration_date is _UNSET:
            raise InvalidArgument("At least one of text, metadata, or expiration_date must be provided.")
        changes = records.metadata_of(metadata)
        expires = _UNSET if expiration_date is _UNSET else records.expiration(expiration_date)
        with self._lock:
            current = self._session.memory_get(memory_id)
            if current is None:
                raise MemoryNotFound(f"Memory with id {memory_id} not found. Please provide a valid 'memory_id'")
            fields = records.read(current.tags)
            named = {name: fields.promoted.get(name) for name in ("role", "actor_id")}
            tags = records.tags_for(
                fields.promoted,
                {**fields.metadata, **changes},
                created_at=fields.created_at or current.saved_at,
                expiration_date=fields.promoted.get("expiration_date") if expires is _UNSET else expires,
                **named,
            )
            content = current.content if text is None else text
            self._session.memory_save(memory_id, content, tags, source=current.source, occurred_at=current.occurred_at)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, str]:
        """Soft-delete ``memory_id``'s version at exactly the session's taint (mem0's ``delete``).

        Raises:
            MemoryNotFound: no version of it at this taint (also when one exists at another level).
        """
        with self._lock:
            try:
                self._session.memory_delete(memory_id)
            except NotFound:
                raise MemoryNotFound(f"Memory with id {memory_id} not found at this session's level") from None
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> dict[str, str]:
        """Soft-delete every memory of the scope that has a version at the session's taint: one ``memory_list`` and
        one ``memory_delete`` a memory, each audited; what is visible from a lower level stays.

        Raises:
            InvalidArgument: no scope (``reset`` deletes everything).
        """
        if user_id is None and agent_id is None and run_id is None:
            raise InvalidArgument(
                "At least one of user_id, agent_id or run_id is required to delete all memories. If you want to "
                "delete all memories, use the `reset()` method."
            )
        scope = scoping.scope_of(user_id=user_id, agent_id=agent_id, run_id=run_id)
        with self._lock:
            self._delete_each(self._listed(scope, scope))
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Soft-delete every memory of the agent that has a version at the session's taint, whoever wrote it
        (mem0's ``reset`` drops its collection; a gated session deletes what it can): each delete audited, every
        version kept in memlab's history, what lower levels wrote left as it is."""
        with self._lock:
            self._delete_each(self._session.memory_list())

    def _delete_each(self, memories: list[Version]) -> None:
        for memory in memories:
            try:
                self._session.memory_delete(memory.key)
            except NotFound:
                pass  # visible from a lower level: not this taint's to delete (the audit row says not_found)

    # -- reading ---------------------------------------------------------------------------------------

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory in the session's view, in mem0's shape, or None (mem0's ``get``): one ``memory_get``."""
        with self._lock:
            memory = self._session.memory_get(memory_id)
        return None if memory is None else records.item(memory, score=None)

    def get_all(
        self,
        *,
        filters: Mapping[str, Any] | None = None,
        top_k: int | None = None,
        limit: int | None = None,
        show_expired: bool = False,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """The scope's memories, oldest first, at most ``top_k`` (mem0's ``get_all``; ``limit`` and top-level ids
        are its 1.x spelling): one ``memory_list`` of the scope's first id, then the filters.

        Raises:
            InvalidArgument: no scope, a bad filter or an id that contradicts ``filters``.
        """
        scope, where = scoping.where_of(filters, user_id=user_id, agent_id=agent_id, run_id=run_id)
        count = scoping.count_of(top_k, limit)
        with self._lock:
            found = self._listed(scope, where, show_expired=show_expired)
        found.sort(key=lambda memory: (records.filter_fields(memory)["created_at"], memory.key))
        return {"results": [records.item(memory) for memory in found[:count]]}

    def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        threshold: float | None = None,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
        show_expired: bool = False,
        limit: int | None = None,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """The scope's memories that match ``query``, best first (mem0's ``search``): one ``memory_search`` of the
        agent's best ``MAX_RESULTS_CAP`` hits, then the scope and filters, then ``threshold`` and ``top_k``.

        ``score`` is memlab's ranking (bm25 over what the session may read, higher is better, not bounded by 1):
        a ``threshold`` tuned on mem0's similarity does not carry over. ``rerank`` asks for a reranker none is
        configured for, and is a no-op, as in mem0 without one.

        Raises:
            InvalidArgument: an empty query, no scope, a bad filter, a negative threshold, ``explain`` or
                ``reference_date`` (not offered).
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidArgument("Invalid query: must be a non-empty string.")
        if explain or reference_date is not None:
            raise InvalidArgument("explain and reference_date are not offered: memlab's score is one bm25 ranking")
        if threshold is not None and not (isinstance(threshold, int | float) and threshold >= 0):
            raise InvalidArgument(f"threshold must be a number at least 0, not {threshold!r}")
        scope, where = scoping.where_of(filters, user_id=user_id, agent_id=agent_id, run_id=run_id)
        count = scoping.count_of(top_k, limit)
        with self._lock:
            hits = self._session.memory_search(query.strip(), max_results=arguments.MAX_RESULTS_CAP)
        today = self._store.now()[:10]
        found = [
            records.item(hit.memory, score=hit.score)
            for hit in hits
            if scoping.selected(hit.memory, where, None if show_expired else today)
            and (threshold is None or hit.score >= threshold)
        ]
        return {"results": found[:count]}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The saves and deletes of ``memory_id`` the session may read, oldest first, in mem0's shape (mem0's
        ``history``): the versions at labels its taint and floor admit, at every such level, deleted and
        superseded ones included; audited as one ``memory_get`` of the id. An untrusted version among them lowers
        the session, as any read of one does.
        """
        with self._lock:
            self._session.memory_get(memory_id)  # the gated, audited read; it also checks the id as a key
            reading = reader(self._session.taint, self._session.floor)
            rows = self._store.history(memory_id, self.agent).to_dict("records")
            readable = [row for row in rows if self._store.policy.readable(Label.parse(row["classification"]), reading)]
            entries = records.history(memory_id, readable)
            for entry in entries:
                if entry["integrity"] != str(Integrity.TRUSTED):
                    self._session.lower_integrity(source=f"memory {entry['id']}", reason="read in mem0 history")
        return entries

    def _listed(
        self, scope: Mapping[str, str], where: Mapping[str, Any], *, show_expired: bool = True
    ) -> list[Version]:
        """The scope's memories that pass ``where``: one ``memory_list`` of the first id's tag (the caller holds the
        lock)."""
        name = next(name for name in ENTITY_IDS if name in scope)
        today = None if show_expired else self._store.now()[:10]
        listed = self._session.memory_list(tag=f"{name}:{scope[name]}")
        return [memory for memory in listed if scoping.selected(memory, where, today)]


def _in_a_thread(name: str) -> Any:
    """``Memory``'s method ``name`` as a coroutine that runs it in a worker thread."""
    method = getattr(Memory, name)

    @functools.wraps(method)
    async def run(self: AsyncMemory, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self.sync, name), *args, **kwargs)

    return run


class AsyncMemory:
    """mem0's ``AsyncMemory``: ``Memory``'s methods as coroutines, each run in a worker thread; calls on one object
    run one at a time (its session's order is the audit's). The arguments are ``Memory``'s; the extractor is a plain
    function too, run in the worker thread.

    Examples:
        >>> memory = AsyncMemory(extractor=lambda messages: ["Travels to SF"])
        >>> asyncio.run(memory.add("I'm travelling to SF", user_id="alice"))["results"][0]["memory"]
        'Travels to SF'
    """

    def __init__(self, store: MemoryStore | str | Path | None = None, **options: Any) -> None:
        self.sync = Memory(store, **options)
        """The ``Memory`` the coroutines run."""

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> AsyncMemory:
        """An ``AsyncMemory`` from a dict of its arguments, as ``Memory.from_config``."""
        memory = cls.__new__(cls)
        memory.sync = Memory.from_config(config_dict)
        return memory

    def __repr__(self) -> str:
        return f"Async{self.sync!r}"

    def close(self) -> None:
        """Close the store, when this object opened it."""
        self.sync.close()

    store = property(lambda self: self.sync.store, doc="The memlab store.")
    taint = property(lambda self: self.sync.taint, doc="The session's label.")
    integrity = property(lambda self: self.sync.integrity, doc="The session's integrity now.")

    add = _in_a_thread("add")
    get = _in_a_thread("get")
    get_all = _in_a_thread("get_all")
    search = _in_a_thread("search")
    update = _in_a_thread("update")
    delete = _in_a_thread("delete")
    delete_all = _in_a_thread("delete_all")
    history = _in_a_thread("history")
    reset = _in_a_thread("reset")
    lower_integrity = _in_a_thread("lower_integrity")
