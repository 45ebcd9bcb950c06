"""The audit's hash chain and the digests that tie memory versions to it.

Each audit row carries ``hash = sha256(previous hash ‖ its own fields)``, the first row chaining from the
file's random genesis value, so editing, inserting, removing or reordering a row breaks every hash after
it. A version's content is bound to the chain without keeping anything from which short content could be
recovered: the row holds a random salt and ``commitment = HMAC-SHA256(salt, content ‖ tags ‖ context)``; the save's
audit row carries the version's digest (agent, key, classification, version, who, when and the
commitment), the delete's audit row a digest of that and the deletion. A purge erases content, tags and
salt but keeps the commitment, so the chain still verifies and a guess of the content cannot be checked.

Examples:
    >>> link = audit_hash("0" * 64, (1, "2026-01-01T00:00:00+00:00", "s1", "main", "PUBLIC", "memory_get"))
    >>> len(link)
    64
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

__all__ = [
    "genesis",
    "new_salt",
    "audit_hash",
    "commitment",
    "version_digest",
    "deletion_digest",
    "json_array",
    "json_strings",
]


def json_array(parts: Sequence[Any], separator: str = ",") -> str:
    """``json.dumps(parts, ensure_ascii=False, separators=(separator, ":"))``, byte for byte: what every digest
    and commitment hashes, so the chains of files already written verify. Strings, ints and None (all that memlab
    hashes) are written by json's own C string encoder, without building an encoder per call; anything else goes
    through ``json.dumps`` itself."""
    shown = []
    for part in parts:
        kind = type(part)
        if kind is str:
            shown.append(encode_basestring(part))
        elif kind is int:
            shown.append(int.__repr__(part))
        elif part is None:
            shown.append("null")
        else:
            return json.dumps(list(parts), ensure_ascii=False, separators=(separator, ":"))
    return "[" + separator.join(shown) + "]"


def json_strings(strings: Sequence[str]) -> str:
    """``json.dumps(list(strings))`` (ASCII, ``", "`` between), byte for byte: how tags and an audit row's
    records are stored and hashed."""
    if all(type(string) is str for string in strings):
        return "[" + ", ".join(map(encode_basestring_ascii, strings)) + "]"
    return json.dumps(list(strings))


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json_array(parts).encode("utf-8")).hexdigest()


def genesis() -> str:
    """A new file's chain start: random, so rows cannot be spliced in from another file."""
    return secrets.token_hex(32)


def new_salt() -> bytes:
    """The salt of one version's commitment."""
    return secrets.token_bytes(16)


def audit_hash(previous: str, fields: tuple[Any, ...]) -> str:
    """The hash of an audit row: its fields (``seq`` first) chained to the previous row's hash."""
    return _digest(previous, *fields)


def commitment(salt: bytes, content: str, tags: str, source: str | None = None, occurred_at: str | None = None) -> str:
    """What binds a version's content, tags (``tags`` as stored, JSON) and context to the chain: HMAC with its
    salt. A version without context commits to content and tags alone, as before context existed."""
    parts = (content, tags) if source is None and occurred_at is None else (content, tags, source, occurred_at)
    message = json_array(parts, ", ").encode("utf-8")
    return hmac.new(salt, message, hashlib.sha256).hexdigest()


def version_digest(
    agent: str, key: str, classification: int, version: int, saved_at: str, saved_by: str, commitment: str
) -> str:
    """A version's identity, as the audit row of its save records it."""
    return _digest("version", agent, key, classification, version, saved_at, saved_by, commitment)


def deletion_digest(version: str, deleted_at: str, deleted_by: str) -> str:
    """A soft delete of the version whose digest is ``version``, as the delete's audit row records it."""
    return _digest("deletion", version, deleted_at, deleted_by)
