"""How a mem0 memory is kept as a memlab memory, and read back in mem0's shapes (``memlab.integrations.mem0``).

A mem0 memory is one memlab memory of the ``Memory``'s agent: its id (a uuid) is the key, its text the content,
and everything else rides in tags, each a name and a value, so every door (the tools, MCP, the widgets) shows the
memory's own text and the gate sees the fields as the data they are:

- ``user_id:<id>``, ``agent_id:<id>``, ``run_id:<id>``: the scope, from ``add``'s arguments only;
- ``role:<role>``, ``actor_id:<name>``: the message a memory stored with ``infer=False`` was;
- ``created_at:<time>``: when the memory's first version was saved (an update keeps it; the version's own
  ``saved_at`` is its ``updated_at``); ``expiration_date:<YYYY-MM-DD>``;
- ``meta:{"<field>":<value>}``: one metadata field each, as compact ASCII JSON, so any JSON value round-trips
  exactly. A field must fit memlab's tag limit (``MAX_TAG_CHARS``, 64 characters with its ``meta:``): metadata is
  what a filter selects on; long text belongs in the memory. ``user_id``, ``agent_id``, ``run_id`` and
  ``actor_id`` in metadata are dropped, as mem0 drops them: a memory's scope is never its metadata's to say.

Examples:
    >>> read(("user_id:alice", 'meta:{"category":"movies"}')).metadata
    {'category': 'movies'}
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from memlab import arguments
from memlab.errors import InvalidArgument
from memlab.integrations.mem0_filters import ENTITY_IDS
from memlab.labels import Label
from memlab.records import Memory

__all__ = [
    "Fields",
    "PROMOTED",
    "IDENTITY",
    "entity_id",
    "tags_for",
    "metadata_of",
    "read",
    "item",
    "filter_fields",
    "messages_of",
    "transcript",
    "expiration",
    "history",
    "facts_of",
    "label_of",
]

PROMOTED = ("user_id", "agent_id", "run_id", "actor_id", "role", "expiration_date")
"""The fields a result carries beside ``metadata`` when the memory has them, in mem0's order."""
IDENTITY = frozenset({"user_id", "agent_id", "run_id", "actor_id"})
"""Metadata keys dropped on the way in: the scope comes from ``add``'s arguments, never from metadata."""
_METADATA = "meta:"
_CREATED = "created_at"
_NAMED = frozenset({*PROMOTED, _CREATED})


class Fields(NamedTuple):
    """What a memory's tags say: its promoted fields (scope, role, actor, expiry), metadata and creation time."""

    promoted: dict[str, str]
    metadata: dict[str, Any]
    created_at: str | None


def entity_id(value: Any, name: str) -> str | None:
    """A ``user_id``, ``agent_id`` or ``run_id`` as mem0 takes it: None, or text (a number is written as text),
    trimmed, not empty, without whitespace, and short enough to be a tag with its name.

    Raises:
        InvalidArgument: an empty id, one with whitespace or a character memlab refuses in names, or too long.

    Examples:
        >>> entity_id(" alice ", "user_id"), entity_id(42, "run_id")
        ('alice', '42')
    """
    if value is None:
        return None
    if isinstance(value, Mapping | list | tuple):
        raise InvalidArgument(f"{name} must be an id, not {type(value).__name__} (no operators on the scope)")
    text = str(value).strip()
    if not text:
        raise InvalidArgument(f"Invalid {name}: cannot be empty or whitespace-only. Provide a valid identifier.")
    if any(char.isspace() for char in text):
        raise InvalidArgument(f"Invalid {name}: cannot contain whitespace. Provide a valid identifier without spaces.")
    _tag(name, text)
    return text


def _tag(name: str, value: str) -> str:
    """The tag ``name:value``, checked by memlab's rules for tags now, so a bad one stops a call before any save."""
    tag = f"{name}:{value}"
    if len(tag) > arguments.MAX_TAG_CHARS:
        limit = arguments.MAX_TAG_CHARS - len(name) - 1
        raise InvalidArgument(f"{name} is {len(value)} characters long; memlab keeps it in a tag: the limit is {limit}")
    arguments.tag(tag)
    return tag


def metadata_of(metadata: Any) -> dict[str, Any]:
    """``metadata`` as it is kept: a dict of JSON values, without the identity keys.

    Raises:
        InvalidArgument: not a dict, a key that is not a string, or a value that is not JSON.
    """
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidArgument(f"metadata must be a dict, not {type(metadata).__name__}")
    for key in metadata:
        if not isinstance(key, str):
            raise InvalidArgument(f"metadata keys must be strings, not {key!r}")
    return {key: value for key, value in metadata.items() if key not in IDENTITY}


def _metadata_tag(key: str, value: Any) -> str:
    try:
        text = json.dumps({key: value}, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InvalidArgument(f"metadata field {key!r} is not a JSON value: {error}") from None
    tag = _METADATA + text
    if len(tag) > arguments.MAX_TAG_CHARS:
        raise InvalidArgument(
            f"metadata field {key!r} takes {len(tag)} characters as a tag ({tag[:40]}...); memlab keeps each field "
            f"in a tag of at most {arguments.MAX_TAG_CHARS}: keep long text in the memory itself"
        )
    return tag


def tags_for(
    scope: Mapping[str, str],
    metadata: Mapping[str, Any],
    *,
    role: str | None = None,
    actor_id: str | None = None,
    created_at: str | None = None,
    expiration_date: str | None = None,
) -> list[str]:
    """The tags of a memory with these fields, checked by memlab's rules (so a save of them is not refused).

    Raises:
        InvalidArgument: a field too long for a tag, a value that is not JSON, or more tags than memlab keeps.

    Examples:
        >>> tags_for({"user_id": "alice"}, {"category": "movies"})
        ['user_id:alice', 'meta:{"category":"movies"}']
    """
    tags = [_tag(name, scope[name]) for name in ENTITY_IDS if scope.get(name)]
    named = {"role": role, "actor_id": actor_id, _CREATED: created_at, "expiration_date": expiration_date}
    tags += [_tag(name, value) for name, value in named.items() if value is not None]
    tags += [_metadata_tag(key, value) for key, value in metadata.items()]
    if len(tags) > arguments.MAX_TAGS:
        raise InvalidArgument(
            f"a memory keeps at most {arguments.MAX_TAGS} tags, its scope and role among them: "
            f"{len(metadata)} metadata fields are too many"
        )
    return tags


def read(tags: Iterable[str]) -> Fields:
    """The fields a memory's tags hold; a tag another door wrote that says none of them is left out."""
    promoted: dict[str, str] = {}
    metadata: dict[str, Any] = {}
    created_at = None
    for tag in tags:
        if tag.startswith(_METADATA):
            try:
                field = json.loads(tag[len(_METADATA) :])
            except ValueError:
                continue
            if isinstance(field, dict) and len(field) == 1:
                metadata.update(field)
            continue
        name, colon, value = tag.partition(":")
        if colon and value and name in _NAMED:
            if name == _CREATED:
                created_at = value
            else:
                promoted.setdefault(name, value)
    return Fields(promoted, metadata, created_at)


_NO_SCORE = object()


def item(memory: Memory, *, score: Any = _NO_SCORE) -> dict[str, Any]:
    """A memory in mem0's result shape: ``id``, ``memory``, ``hash``, ``metadata`` (None when it has none),
    ``score`` (when given), ``created_at``, ``updated_at``, the promoted fields it has, and memlab's
    ``classification`` and ``integrity`` — the version's label, never its metadata's to say."""
    fields = read(memory.tags)
    found: dict[str, Any] = {
        "id": memory.key,
        "memory": memory.content,
        "hash": hashlib.md5(memory.content.encode("utf-8", "surrogatepass")).hexdigest(),
        "metadata": fields.metadata or None,
    }
    if score is not _NO_SCORE:
        found["score"] = score
    found["created_at"] = fields.created_at or memory.saved_at
    found["updated_at"] = memory.saved_at
    found |= {name: fields.promoted[name] for name in PROMOTED if name in fields.promoted}
    return found | label_of(memory)


def filter_fields(memory: Memory) -> dict[str, Any]:
    """What a filter reads of a memory: its metadata, overridden by the promoted fields and its times."""
    fields = read(memory.tags)
    times = {"created_at": fields.created_at or memory.saved_at, "updated_at": memory.saved_at}
    return {**fields.metadata, **fields.promoted, **times}


def messages_of(messages: Any) -> list[dict[str, str]]:
    """mem0's ``messages``: a string (one user message), a message dict, or a list of them, each with a text
    ``role`` and ``content`` (and optionally a ``name``).

    Raises:
        InvalidArgument: anything else, naming the message (mem0 skips a malformed message; memlab refuses the
            call, so nothing is half-written).
    """
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    elif isinstance(messages, Mapping):
        messages = [messages]
    elif not isinstance(messages, list | tuple):
        raise InvalidArgument(f"messages must be a str, a dict or a list of dicts, not {type(messages).__name__}")
    checked = []
    for number, message in enumerate(messages):
        if not isinstance(message, Mapping):
            kind = type(message).__name__
            raise InvalidArgument(f"messages[{number}] must be a dict with role and content, not {kind}")
        role, content, name = message.get("role"), message.get("content"), message.get("name")
        if not isinstance(role, str) or not isinstance(content, str):
            raise InvalidArgument(f"messages[{number}] must have a text role and a text content")
        if name is not None and not isinstance(name, str):
            raise InvalidArgument(f"messages[{number}]'s name must be text, not {type(name).__name__}")
        checked.append({"role": role, "content": content} | ({"name": name} if name else {}))
    return checked


def transcript(messages: Sequence[Mapping[str, str]]) -> str:
    """The messages as the ``source`` of the facts taken from them (memlab keeps and indexes it with each fact):
    one ``role: content`` line each, the most recent ``MAX_CONTENT_CHARS`` characters."""
    text = "\n".join(f"{message.get('name') or message['role']}: {message['content']}" for message in messages)
    return text[-arguments.MAX_CONTENT_CHARS :]


def expiration(value: Any) -> str | None:
    """An ``expiration_date`` as mem0 takes it: None, a date, or ``YYYY-MM-DD`` text; returned as the text.

    Raises:
        InvalidArgument: anything else.
    """
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        return value.date().isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    raise InvalidArgument(f"expiration_date must be a date in YYYY-MM-DD format, not {value!r}")


def history(memory_id: str, versions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """mem0's history of a memory from the versions a session may read (``MemoryStore.history``'s rows): each
    save is an ``ADD`` (the first, or the first after a delete) or an ``UPDATE`` of the text before it, each
    delete a ``DELETE``, in time order. A purged version's text is gone: it reads as None.

    Each entry has mem0's fields (``id`` is the version's memlab reference, ``key@LABEL/vN``) and the version's
    ``classification`` and ``integrity``.
    """
    events = []
    for row in versions:
        events.append((row["saved_at"], 0, row))
        if isinstance(row.get("deleted_at"), str):
            events.append((row["deleted_at"], 1, row))
    events.sort(key=lambda event: (event[0], event[1]))
    created = events[0][0] if events else None
    entries, current = [], None
    for at, deleted, row in events:
        content = row["content"] or None  # memlab refuses empty content: empty is a purge's
        fields = read(row["tags"] or ())
        if deleted:
            old, new, event = content, None, "DELETE"
        else:
            old, new, event = current, content, "ADD" if current is None else "UPDATE"
        current = new
        label = Label.parse(row["classification"])
        entries.append(
            {
                "id": f"{memory_id}@{label}/v{row['version']}",
                "memory_id": memory_id,
                "old_memory": old,
                "new_memory": new,
                "event": event,
                "created_at": created,
                "updated_at": at,
                "is_deleted": bool(deleted),
                "actor_id": fields.promoted.get("actor_id"),
                "role": fields.promoted.get("role"),
                "classification": str(label),
                "integrity": str(label.integrity),
            }
        )
    return entries


def facts_of(extractor: Callable[..., Any] | None, messages: list[dict[str, str]], prompt: str | None) -> list[str]:
    """The facts ``extractor`` takes from ``messages`` (given ``prompt=`` when there is one): its list of strings,
    blank ones left out and each said once.

    Raises:
        InvalidArgument: no extractor (memlab bundles no LLM), or one that returns anything but a list of strings.
    """
    if extractor is None:
        raise InvalidArgument(
            "add(infer=True) needs the extractor the host passes (Memory(extractor=messages -> list of facts)): "
            "memlab bundles no LLM; or add(..., infer=False) saves the messages as they are"
        )
    facts = extractor(messages) if prompt is None else extractor(messages, prompt=prompt)
    if not isinstance(facts, list | tuple) or not all(isinstance(fact, str) for fact in facts):
        raise InvalidArgument(f"the extractor must return a list of strings (facts), not {facts!r:.80}")
    return list(dict.fromkeys(fact for fact in facts if fact.strip()))


def label_of(memory: Memory) -> dict[str, str]:
    """A saved version's ``classification`` and ``integrity``, as a result carries them."""
    return {"classification": str(memory.classification), "integrity": str(memory.integrity)}
