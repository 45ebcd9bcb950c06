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
from collections.abc import Callable, Sequence
from json.encoder import c_make_encoder, encode_basestring, encode_basestring_ascii
from typing import Any

__all__ = [
    "genesis",
    "new_salt",
    "new_salts",
    "audit_hash",
    "commitment",
    "version_digest",
    "version_digester",
    "deletion_digest",
    "json_array",
    "json_strings",
]


def _c_array_encoder(separator: str) -> Callable[[Any, int], Any] | None:
    """json's C encoder as ``json.dumps(..., ensure_ascii=False, separators=(separator, ":"))`` builds it, made
    once (no circular-reference markers: what memlab hashes is flat); None where the C accelerator is missing."""
    if c_make_encoder is None:
        return None
    return c_make_encoder(None, json.JSONEncoder().default, encode_basestring, None, ":", separator, False, False, True)


_ARRAY_ENCODERS = {separator: _c_array_encoder(separator) for separator in (",", ", ")}


def json_array(parts: Sequence[Any], separator: str = ",") -> str:
    """``json.dumps(list(parts), ensure_ascii=False, separators=(separator, ":"))``, byte for byte: what every
    digest and commitment hashes, so the chains of files already written verify. json's own C encoder writes it,
    built once instead of once per call."""
    encoder = _ARRAY_ENCODERS.get(separator)
    if encoder is None:
        return json.dumps(list(parts), ensure_ascii=False, separators=(separator, ":"))
    return "".join(encoder(parts, 0))


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


def new_salts(count: int) -> list[bytes]:
    """``count`` salts, as ``new_salt`` makes them, from one read of the system's random source."""
    random = secrets.token_bytes(16 * count)
    return [random[start : start + 16] for start in range(0, 16 * count, 16)]


def audit_hash(previous: str, fields: tuple[Any, ...]) -> str:
    """The hash of an audit row: its fields (``seq`` first) chained to the previous row's hash."""
    return _digest(previous, *fields)


def commitment(salt: bytes, content: str, tags: str, source: str | None = None, occurred_at: str | None = None) -> str:
    """What binds a version's content, tags (``tags`` as stored, JSON) and context to the chain: HMAC with its
    salt. A version without context commits to its content and tags alone, so it verifies whether or not its
    store keeps the context columns."""
    parts = (content, tags) if source is None and occurred_at is None else (content, tags, source, occurred_at)
    message = json_array(parts, ", ").encode("utf-8")
    # hmac.digest is HMAC-SHA256 in one call to OpenSSL, the same bytes as hmac.new(...).hexdigest() builds.
    return hmac.digest(salt, message, "sha256").hex()


def version_digest(
    agent: str,
    key: str,
    classification: int | str,
    version: int,
    saved_at: str,
    saved_by: str,
    commitment: str,
    distrust: str | None = None,
) -> str:
    """A version's identity, as the audit row of its save records it; ``classification`` is a level's integer, or
    a label's text. An untrusted version's sources of distrust (``distrust``, as stored: a JSON array) are part of
    it, so an edit of them is caught; a version without them has the identity versions had before integrity."""
    if distrust is None:
        return _digest("version", agent, key, classification, version, saved_at, saved_by, commitment)
    return _digest("version", agent, key, classification, version, saved_at, saved_by, commitment, distrust)


def version_digester(
    agent: str, saved_by: str, distrust: str | None = None
) -> Callable[[str, int | str, int, str, str], str]:
    """``version_digest`` of ``agent``'s versions saved by ``saved_by`` (with ``distrust``), as a function of (key,
    classification, version, saved_at, commitment), the constant parts encoded once: for a batch of seals.
    ``commitment`` must be a commitment (hex digits, which JSON writes as they are).

    Examples:
        >>> digest = version_digester("main", "s1")
        >>> digest("k", 0, 1, "2026-01-01", "ab") == version_digest("main", "k", 0, 1, "2026-01-01", "s1", "ab")
        True
    """
    head = '["version",' + encode_basestring(agent) + ","
    by = "," + encode_basestring(saved_by) + ',"'
    tail = '"]' if distrust is None else '",' + encode_basestring(distrust) + "]"
    sha256 = hashlib.sha256

    def digest(key: str, classification: int | str, version: int, saved_at: str, commitment: str) -> str:
        # A categorised label is its text (memlab.storage.label_codes), which JSON writes as a string.
        level = encode_basestring(classification) if type(classification) is str else int(classification)
        text = f"{head}{encode_basestring(key)},{level},{int(version)},{encode_basestring(saved_at)}"
        return sha256(f"{text}{by}{commitment}{tail}".encode()).hexdigest()

    return digest


def deletion_digest(version: str, deleted_at: str, deleted_by: str) -> str:
    """A soft delete of the version whose digest is ``version``, as the delete's audit row records it."""
    return _digest("deletion", version, deleted_at, deleted_by)
