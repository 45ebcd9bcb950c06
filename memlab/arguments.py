"""Validation of tool arguments, shared by the Python API and the LLM-facing tool layer.

Each validator takes a raw value and returns the clean one or raises ``InvalidArgument`` naming the
argument and what was wrong; ``bind`` checks a whole call (unknown and missing arguments too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from memlab.errors import InvalidArgument

__all__ = ["bind", "TOOL_PARAMETERS", "REQUIRED", "DEFAULT_MAX_RESULTS", "MAX_RESULTS_CAP"]

MAX_KEY_CHARS = 256
MAX_CONTENT_CHARS = 65_536
MAX_TAGS = 32
MAX_TAG_CHARS = 64
MAX_QUERY_CHARS = 4_096
DEFAULT_MAX_RESULTS = 10
MAX_RESULTS_CAP = 100

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _text(name: str, value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be a string, not {type(value).__name__}")
    if not value.strip():
        raise InvalidArgument(f"{name} must not be empty")
    if len(value) > limit:
        raise InvalidArgument(f"{name} is {len(value)} characters long; the limit is {limit}")
    return value


def _label(name: str, value: Any, limit: int) -> str:
    """A key or a tag: text on one line, without surrounding whitespace (it would make look-alike names)."""
    value = _text(name, value, limit)
    if value != value.strip():
        raise InvalidArgument(f"{name} {value!r} must not start or end with whitespace")
    if _CONTROL.search(value):
        raise InvalidArgument(f"{name} {value!r} must not contain control characters")
    return value


def key(value: Any) -> str:
    return _label("key", value, MAX_KEY_CHARS)


def content(value: Any) -> str:
    return _text("content", value, MAX_CONTENT_CHARS)


def tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise InvalidArgument(f"tags must be a list of strings, not {type(value).__name__}")
    clean = tuple(dict.fromkeys(_label("each tag", tag_value, MAX_TAG_CHARS) for tag_value in value))
    if len(clean) > MAX_TAGS:
        raise InvalidArgument(f"tags has {len(clean)} distinct tags; the limit is {MAX_TAGS}")
    return clean


def tag(value: Any) -> str | None:
    return None if value is None else _label("tag", value, MAX_TAG_CHARS)


def query(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"query must be a string, not {type(value).__name__}")
    if len(value) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"query is {len(value)} characters long; the limit is {MAX_QUERY_CHARS}")
    return value


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


TOOL_PARAMETERS: dict[str, dict[str, Callable[[Any], Any]]] = {
    "memory_save": {"key": key, "content": content, "tags": tags},
    "memory_get": {"key": key},
    "memory_search": {"query": query, "max_results": max_results},
    "memory_list": {"tag": tag},
    "memory_delete": {"key": key},
}
REQUIRED: dict[str, frozenset[str]] = {
    "memory_save": frozenset({"key", "content"}),
    "memory_get": frozenset({"key"}),
    "memory_search": frozenset({"query"}),
    "memory_list": frozenset(),
    "memory_delete": frozenset({"key"}),
}


def bind(tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a tool's arguments and return them cleaned, optional ones filled in.

    Raises:
        InvalidArgument: unknown tool, unknown or missing argument, or a bad value.

    >>> bind("memory_search", {"query": "name"})
    {'query': 'name', 'max_results': 10}
    """
    if tool not in TOOL_PARAMETERS:
        raise InvalidArgument(f"unknown tool {tool!r}; the tools are {', '.join(TOOL_PARAMETERS)}")
    if not isinstance(arguments, Mapping):
        raise InvalidArgument(f"arguments must be an object, not {type(arguments).__name__}")
    parameters = TOOL_PARAMETERS[tool]
    unknown = sorted(str(name) for name in arguments if name not in parameters)
    if unknown:
        raise InvalidArgument(
            f"{tool} takes no argument {', '.join(map(repr, unknown))}; it takes {', '.join(parameters)}"
        )
    missing = sorted(name for name in REQUIRED[tool] if arguments.get(name) is None)
    if missing:
        raise InvalidArgument(f"{tool} needs {', '.join(map(repr, missing))}")
    return {name: validate(arguments.get(name)) for name, validate in parameters.items()}
