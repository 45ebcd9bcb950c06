"""Validation of tool arguments, shared by the Python API and the LLM-facing tool layer.

Each validator takes a raw value and returns the clean one or raises ``InvalidArgument`` naming the
argument and what was wrong; ``memlab.tooldefs`` says which tool takes which, and checks a whole call.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import re
import unicodedata
from typing import Any

from memlab.errors import InvalidArgument

__all__ = [
    "agent",
    "session_id",
    "distrust_source",
    "audit_text",
    "quoted",
    "DEFAULT_MAX_RESULTS",
    "MAX_RESULTS_CAP",
    "MAX_KEY_CHARS",
    "MAX_CONTENT_CHARS",
    "MAX_TAGS",
    "MAX_TAG_CHARS",
    "MAX_QUERY_CHARS",
    "MAX_AGENT_CHARS",
    "MAX_ARGUMENT_NAME_CHARS",
]

MAX_KEY_CHARS = 256
MAX_CONTENT_CHARS = 65_536
MAX_TAGS = 32
MAX_TAG_CHARS = 64
MAX_QUERY_CHARS = 4_096
MAX_AGENT_CHARS = 256
MAX_ARGUMENT_NAME_CHARS = 64
MAX_SOURCE_CHARS = 512
DEFAULT_MAX_RESULTS = 10
MAX_RESULTS_CAP = 100

_SURROGATE = re.compile("[\ud800-\udfff]")
# In names (keys, tags, agents): controls (C0, C1), format characters (bidi controls, zero-width characters,
# the BOM, soft hyphens), surrogates and non-characters make different names look alike, so they are refused.
_REFUSED_IN_NAMES = frozenset({"Cc", "Cf", "Cs"})
_ASCII_CONTROL = re.compile("[\x00-\x1f\x7f]")


def _plain(limit: int) -> str:
    """Printable ASCII of 1 to ``limit`` characters with no space at either end: a name every rule of ``_name``
    accepts as it is (already NFC, one line, nothing refused)."""
    return f"[!-~](?:[ -~]{{0,{limit - 2}}}[!-~])?" if limit > 1 else "[!-~]"


@functools.cache
def _plain_name(limit: int) -> re.Pattern[str]:
    """One match decides the common name (``_plain``)."""
    return re.compile(_plain(limit))


_PLAIN_KEY = _plain_name(MAX_KEY_CHARS)

# A list of plain tags joined by NUL (no name holds one): one match decides the common list of tags.
_PLAIN_TAGS = re.compile(f"{_plain(MAX_TAG_CHARS)}(?:\x00{_plain(MAX_TAG_CHARS)})*")


def _unicode(name: str, value: str) -> str:
    """``value`` if it is valid Unicode text; a lone surrogate (from a lenient ``json.loads``) is refused."""
    if value.isascii():  # a flag of the string: ASCII holds no surrogate
        return value
    found = _SURROGATE.search(value)
    if found:
        raise InvalidArgument(f"{name} holds a lone surrogate at character {found.start()}: it is not valid text")
    return value


def _text(name: str, value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be a string, not {type(value).__name__}")
    if len(value) > limit:
        raise InvalidArgument(f"{name} is {len(value)} characters long; the limit is {limit}")
    if not value or value.isspace():  # what strip() would leave empty, without copying the text
        raise InvalidArgument(f"{name} must not be empty")
    return _unicode(name, value)


def _name(name: str, value: Any, limit: int) -> str:
    """A key, tag or agent name: NFC-normalised text on one line, with no character that makes look-alikes.

    Names are normalised to NFC (``cafe\u0301`` and ``café`` are one name); controls, format characters
    (bidi controls, zero-width characters, the BOM), surrogates and non-characters are refused, as is
    surrounding whitespace.
    """
    if type(value) is str and _plain_name(limit).fullmatch(value):
        return value
    value = unicodedata.normalize("NFC", _text(name, value, limit))
    if value != value.strip():
        raise InvalidArgument(f"{name} {quoted(value)} must not start or end with whitespace")
    if value.isascii() and not _ASCII_CONTROL.search(value):
        return value  # the common case, decided without a look at each character
    for position, char in enumerate(value):
        code = ord(char)
        if unicodedata.category(char) in _REFUSED_IN_NAMES or 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE:
            raise InvalidArgument(
                f"{name} {quoted(value)} must not contain U+{code:04X} ({unicodedata.name(char, 'unnamed')}) at "
                f"character {position}: names may not hold control characters, format characters or non-characters "
                "(they make look-alike names)"
            )
    return value


def distrust_source(value: Any) -> str:
    """What lowered a session (``Session.lower_integrity``): a name on one line, as keys are (a URL, ``email:<id>``,
    ``tool:<name>``), at most ``MAX_SOURCE_CHARS``.

    Examples:
        >>> distrust_source("https://example.com/page")
        'https://example.com/page'
    """
    return _name("source", value, MAX_SOURCE_CHARS)


def agent(value: Any) -> str:
    """An agent name: the rules of keys (``_name``), up to ``MAX_AGENT_CHARS``."""
    return _name("agent name", value, MAX_AGENT_CHARS)


def session_id(value: Any) -> str:
    """A session id chosen by the caller: the rules of names, up to ``MAX_KEY_CHARS``."""
    return _name("session id", value, MAX_KEY_CHARS)


def quoted(value: Any, limit: int = MAX_ARGUMENT_NAME_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters, for error messages that must stay short."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def audit_text(value: Any, limit: int) -> str | None:
    """What the audit keeps of a given argument: the text itself when valid and within ``limit``, else its
    length and a digest (never the whole of it); None when it is not text."""
    if not isinstance(value, str):
        return None
    if len(value) <= limit and (value.isascii() or not _SURROGATE.search(value)):
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"<{len(value)} chars sha256:{digest}>"


def key(value: Any) -> str:
    if type(value) is str and _PLAIN_KEY.fullmatch(value):  # the common key, as _name decides it first
        return value
    return _name("key", value, MAX_KEY_CHARS)


def content(value: Any) -> str:
    return _text("content", value, MAX_CONTENT_CHARS)


def source(value: Any) -> str | None:
    """Where a memory came from (the message or messages it was extracted from): text like content, optional."""
    return None if value is None else _text("source", value, MAX_CONTENT_CHARS)


def occurred_at(value: Any) -> str | None:
    """When what a memory says happened: an ISO 8601 date or date-time, optional, returned in ISO form.

    Examples:
        >>> occurred_at("2023-05-08T13:56")
        '2023-05-08T13:56:00'
        >>> occurred_at("2023-05-08")
        '2023-05-08'
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"occurred_at must be an ISO 8601 date or date-time string, not {type(value).__name__}")
    text = value.strip()
    try:
        if len(text) == 10:
            return datetime.date.fromisoformat(text).isoformat()
        return datetime.datetime.fromisoformat(text).isoformat()
    except ValueError:
        raise InvalidArgument(
            f"occurred_at must be an ISO 8601 date or date-time such as 2023-05-08 or 2023-05-08T13:56, "
            f"not {quoted(value)}"
        ) from None


def tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise InvalidArgument(f"tags must be a list of strings, not {type(value).__name__}")
    if not value:
        return ()
    try:
        joined = "\x00".join(value)
    except TypeError:  # a tag that is not text: the rules of names name it
        joined = ""
    # Every NUL must be a separator: a tag holding one would otherwise pass as two plain tags.
    if joined.count("\x00") == len(value) - 1 and _PLAIN_TAGS.fullmatch(joined):
        clean = tuple(dict.fromkeys(value))
    else:
        clean = tuple(dict.fromkeys(_name("each tag", tag_value, MAX_TAG_CHARS) for tag_value in value))
    if len(clean) > MAX_TAGS:
        raise InvalidArgument(f"tags has {len(clean)} distinct tags; the limit is {MAX_TAGS}")
    return clean


def tag(value: Any) -> str | None:
    return None if value is None else _name("tag", value, MAX_TAG_CHARS)


def query(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"query must be a string, not {type(value).__name__}")
    if len(value) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"query is {len(value)} characters long; the limit is {MAX_QUERY_CHARS}")
    return _unicode("query", value)


def max_results(value: Any) -> int:
    """A positive whole number; values above the cap are lowered to it (asking for many is not an error)."""
    if value is None:
        return DEFAULT_MAX_RESULTS
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"max_results must be a positive integer, not {value!r}")
    if value < 1:
        raise InvalidArgument(f"max_results must be a positive integer, not {value}")
    return min(value, MAX_RESULTS_CAP)
