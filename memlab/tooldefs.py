"""The one table of tools: each tool's name, what a model is told of it, its parameters, how its result reads.

Everything that knows the tools derives from ``TOOLS``: argument validation (``bind``), the JSON Schemas a
model sees (``memlab.tools.SCHEMAS``, which MCP's ``tools/list`` serves with the entry's read-only and
destructive hints), the JSON a result becomes (``Tool.render``, what ``memlab.tools.call`` and MCP return), the
checkers' random tool calls (``memlab.check.scenarios``), and the session's dispatch.

**Adding a tool is one entry here and one ``Session`` method.** The entry's ``method`` (``_<name>``) is the
``Session`` method that implements the tool: ``Session._<name>(taint, audit, **arguments)``, called with the
taint the call acts at, the call's audit row and the validated arguments. It is the one implementation every door
reaches (``Session.call``, ``memlab.tools.call``, MCP, the checkers), and it writes the audit row in the
transaction of its storage call (``audit.through``); a method that returns without writing it fails the call. A
public typed wrapper (``Session.memory_save(key, content, ...)``) is a convenience for Python callers, one line
through ``Session.call``; a tool needs none. ``TOOLS`` is a ``memlab.registry.Registry``, so a lab can
``TOOLS.register`` a tool at run time and ``TOOLS.unregister`` it when done.

``memory_recall`` is the host's (``Session.recall``): it is in the table, but offered to no model and refused
from every door a model reaches.

Examples:
    >>> bind("memory_search", {"query": "name"})
    {'query': 'name', 'max_results': 10}
    >>> [tool.name for tool in model_tools()]
    ['memory_save', 'memory_get', 'memory_search', 'memory_list', 'memory_delete']
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from memlab import arguments
from memlab.arguments import DEFAULT_MAX_RESULTS, MAX_RESULTS_CAP, quoted
from memlab.errors import InvalidArgument
from memlab.labels import Integrity
from memlab.levels import Level
from memlab.recall import budget
from memlab.records import Hit, Memory
from memlab.registry import Registry

__all__ = ["Parameter", "Tool", "TOOLS", "ERROR_RESULT", "Render", "model_tools", "bind", "get"]

Render = Callable[[Mapping[str, Any], Any], dict[str, Any]]
"""How a tool's result becomes the JSON a model reads: ``render(arguments, result)``, the arguments validated."""


@dataclass(frozen=True)
class Parameter:
    """One argument of a tool."""

    name: str
    validate: Callable[[Any], Any]
    """Takes the raw value (None when absent) and returns the clean one, or raises ``InvalidArgument``."""
    schema: Mapping[str, Any] | None = None
    """Its JSON Schema as a model sees it; None: the host's to give (``source``), never offered to a model."""
    required: bool = False


@dataclass(frozen=True)
class Tool:
    """A tool: its name, the description a model reads, its parameters, how its result reads, what it does.

    Examples:
        >>> get("memory_delete").method, get("memory_delete").destructive, get("memory_get").read_only
        ('_memory_delete', True, True)
    """

    name: str
    description: str
    parameters: tuple[Parameter, ...]
    _: KW_ONLY
    render: Render | None = None
    """The result as the model's JSON; None only for a host's tool, which no model's door returns."""
    title: str = ""
    """A short name a person reads (MCP's ``title``: a host shows it in its list of tools)."""
    result: Mapping[str, Any] | None = None
    """The JSON Schema of what ``render`` returns; ``output_schema`` adds the error result every call may give."""
    read_only: bool = False
    """True: the tool changes no memory (MCP's ``readOnlyHint``; the checkers' high sessions draw only the others)."""
    destructive: bool = True
    """For a tool that is not read-only: whether it may remove what was there (MCP's ``destructiveHint``, whose
    default this is: a tool says what it does not do)."""
    for_model: bool = True
    """False: a host's call (``memory_recall``), listed to no model and refused from the model's doors."""

    method: str = field(init=False)
    """The name of the ``Session`` method that implements the tool: ``_<name>``."""

    def __post_init__(self) -> None:
        if self.for_model and self.render is None:
            raise InvalidArgument(f"tool {self.name!r} is offered to models, so it needs a render")
        if self.for_model and (not self.title or self.result is None):
            raise InvalidArgument(f"tool {self.name!r} is offered to models, so it needs a title and a result schema")
        object.__setattr__(self, "method", f"_{self.name}")

    def schema(self) -> dict[str, Any]:
        """The tool as JSON Schema (a fresh copy): the parameters a model may give, no others."""
        offered = [parameter for parameter in self.parameters if parameter.schema is not None]
        return {
            "name": self.name,
            "description": self.description,
            "parameters": {
                "type": "object",
                "properties": {parameter.name: copy.deepcopy(dict(parameter.schema)) for parameter in offered},
                "required": [parameter.name for parameter in offered if parameter.required],
                "additionalProperties": False,
            },
        }

    def output_schema(self) -> dict[str, Any]:
        """The JSON Schema every result of the tool validates against (a fresh copy): what ``render`` returns, or
        ``{"error": {"code", "message"}}`` (``memlab.tools.call``'s answer to a call that failed). MCP's
        ``outputSchema``: an object at the root, as the protocol requires."""
        if self.result is None:
            raise InvalidArgument(f"tool {self.name!r} is the host's: it has no result schema")
        return {"type": "object", "oneOf": [copy.deepcopy(dict(self.result)), copy.deepcopy(ERROR_RESULT)]}

    def bind(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``given`` and return the arguments cleaned, optional ones filled in.

        Raises:
            InvalidArgument: an unknown or missing argument, or a bad value.
        """
        if type(given) is not dict and not isinstance(given, Mapping):
            raise InvalidArgument(f"arguments must be an object, not {type(given).__name__}")
        names, required, validators = self._shape
        if not given.keys() <= names.keys():
            self._refuse_unknown(given, names)
        missing = [name for name in required if given.get(name) is None]
        if missing:
            raise InvalidArgument(f"{self.name} needs {', '.join(map(repr, sorted(missing)))}")
        return {name: validate(given.get(name)) for name, validate in validators}

    @functools.cached_property
    def _shape(self) -> tuple[dict[str, None], tuple[str, ...], tuple[tuple[str, Callable[[Any], Any]], ...]]:
        """The parameters' names, the required ones and each name's validator, worked out once per tool (a
        bulk import binds thousands of records)."""
        names = dict.fromkeys(parameter.name for parameter in self.parameters)
        required = tuple(parameter.name for parameter in self.parameters if parameter.required)
        return names, required, tuple((parameter.name, parameter.validate) for parameter in self.parameters)

    def _refuse_unknown(self, given: Mapping[str, Any], names: Mapping[str, None]) -> None:
        unknown = sorted((name for name in given if name not in names), key=str)
        listed = ", ".join(quoted(name) for name in unknown[:3]) + (
            f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        )
        raise InvalidArgument(f"{self.name} takes no argument {listed}; it takes {', '.join(names)}")


_KEY = {"type": "string", "description": "Unique identifier of the memory, e.g. 'user-name' or 'project-deadline'."}


def _key(description: str | None = None) -> Parameter:
    schema = _KEY if description is None else {**_KEY, "description": description}
    return Parameter("key", arguments.key, schema, required=True)


def _memory(memory: Memory) -> dict[str, Any]:
    """A memory as the model sees it; ``source`` and ``occurred_at`` only when the host gave them."""
    seen = {
        "key": memory.key,
        "content": memory.content,
        "tags": list(memory.tags),
        "classification": str(memory.label),
        "integrity": str(memory.integrity),
        "saved_at": memory.saved_at,
    }
    context = {"source": memory.source, "occurred_at": memory.occurred_at}
    return seen | {name: value for name, value in context.items() if value is not None}


def _hit(hit: Hit) -> dict[str, Any]:
    memory = hit.memory
    return {
        "key": memory.key,
        "content": memory.content,
        "tags": list(memory.tags),
        "classification": str(memory.label),
        "integrity": str(memory.integrity),
        "score": hit.score,
        "snippet": hit.snippet,
    }


def _saved(given: Mapping[str, Any], memory: Memory) -> dict[str, Any]:
    return {
        "saved": True,
        "key": memory.key,
        "classification": str(memory.label),
        "integrity": str(memory.integrity),
        "version": memory.version,
    }


def _got(given: Mapping[str, Any], memory: Memory | None) -> dict[str, Any]:
    # A key hidden above the taint and a key that does not exist read the same.
    return {"found": False, "key": given["key"]} if memory is None else {"found": True, **_memory(memory)}


def _found(given: Mapping[str, Any], hits: list[Hit]) -> dict[str, Any]:
    return {"query": given["query"], "results": [_hit(hit) for hit in hits]}


def _listed(given: Mapping[str, Any], memories: list[Memory]) -> dict[str, Any]:
    return {"memories": [_memory(memory) for memory in memories]}


def _deleted(given: Mapping[str, Any], memory: Memory) -> dict[str, Any]:
    return {
        "deleted": True,
        "key": memory.key,
        "classification": str(memory.label),
        "integrity": str(memory.integrity),
    }


# What each render returns, as JSON Schema (MCP's outputSchema): a result with any other shape fails the tests that
# validate every tool's results (tests/test_mcp_server.py).


def _object(required: Mapping[str, Any], optional: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An object with exactly these fields: ``required`` always, ``optional`` when given."""
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
        "additionalProperties": False,
    }


_TEXT = {"type": "string"}
_LABEL = {"type": "string", "pattern": f"^({'|'.join(level.name for level in Level)})(:[^@]+)?(@untrusted)?$"}
"""A classification as results write it: ``LEVEL``, ``LEVEL:cat,cat``, either with ``@untrusted``."""
_WHAT = {"key": _TEXT, "classification": _LABEL, "integrity": {"enum": [str(grade) for grade in Integrity]}}
_CONTENT = {"content": _TEXT, "tags": {"type": "array", "items": _TEXT}}
_CONTEXT = {"source": _TEXT, "occurred_at": _TEXT}
_MEMORY = {**_WHAT, **_CONTENT, "saved_at": _TEXT}

ERROR_RESULT: dict[str, Any] = _object(
    {"error": _object({"code": {"type": "string", "pattern": "^[a-z_]+$"}, "message": _TEXT})}
)
"""A failed call's result (``memlab.tools.call``): the error's code and memlab's message."""

_SAVED = _object({"saved": {"const": True}, **_WHAT, "version": {"type": "integer", "minimum": 1}})
_GOT = {
    "oneOf": [
        _object({"found": {"const": True}, **_MEMORY}, _CONTEXT),
        _object({"found": {"const": False}, "key": _TEXT}),
    ]
}
_FOUND = _object(
    {
        "query": _TEXT,
        "results": {
            "type": "array",
            "items": _object({**_WHAT, **_CONTENT, "score": {"type": "number"}, "snippet": _TEXT}),
        },
    }
)
_LISTED = _object({"memories": {"type": "array", "items": _object(_MEMORY, _CONTEXT)}})
_DELETED = _object({"deleted": {"const": True}, **_WHAT})


TOOLS: Registry[Tool] = Registry("tool", Tool)
"""Every tool, the host's included, in the order a model is offered them."""

for _tool in (
    Tool(
        "memory_save",
        "Save a fact or piece of information to durable memory. The classification is set automatically to "
        "the session's current security level; it cannot be chosen.",
        (
            _key(),
            Parameter(
                "content", arguments.content, {"type": "string", "description": "The content to remember."}, True
            ),
            Parameter(
                "tags",
                arguments.tags,
                {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Tags for grouping, e.g. ['personal', 'preference'].",
                },
            ),
            # Context is what the host knows (the Python API, or a hook on the model's calls): a model could
            # invent it, so no schema offers it.
            Parameter("source", arguments.source),
            Parameter("occurred_at", arguments.occurred_at),
        ),
        render=_saved,
        title="Save a memory",
        result=_SAVED,
        destructive=False,  # a save adds a version; the older ones stay
    ),
    Tool(
        "memory_get",
        "Retrieve one memory by key, if it exists and is accessible at the current security level. Versions at "
        "a higher classification shadow lower ones.",
        (_key("The key of the memory to retrieve."),),
        render=_got,
        title="Get a memory",
        result=_GOT,
        read_only=True,
    ),
    Tool(
        "memory_search",
        "Search all accessible memories with natural language (full-text search with stemming).",
        (
            Parameter(
                "query",
                arguments.query,
                {"type": "string", "description": "Natural-language search query."},
                required=True,
            ),
            Parameter(
                "max_results",
                arguments.max_results,
                {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RESULTS_CAP,
                    "default": DEFAULT_MAX_RESULTS,
                    "description": f"Maximum number of results (default {DEFAULT_MAX_RESULTS}).",
                },
            ),
        ),
        render=_found,
        title="Search memories",
        result=_FOUND,
        read_only=True,
    ),
    Tool(
        "memory_list",
        "List all accessible memories, optionally filtered by tag.",
        (Parameter("tag", arguments.tag, {"type": "string", "description": "Tag to filter by."}),),
        render=_listed,
        title="List memories",
        result=_LISTED,
        read_only=True,
    ),
    Tool(
        "memory_delete",
        "Delete a memory by key. Only memories at the session's current security level can be deleted; the "
        "record is hidden but kept for audit.",
        (_key("The key of the memory to delete."),),
        render=_deleted,
        title="Delete a memory",
        result=_DELETED,
    ),
    Tool(
        "memory_recall",
        "The effective view rendered as a system-prompt section (Session.recall): the host's, not a model's.",
        (Parameter("budget_chars", budget, required=True),),
        title="Recall the effective view",
        read_only=True,
        for_model=False,
    ),
):
    TOOLS.register(_tool)


def model_tools() -> list[Tool]:
    """The tools a model may call, in the order they are offered: the table as it stands now.

    Examples:
        >>> model_tools()[0].name
        'memory_save'
    """
    return [tool for tool in TOOLS.values() if tool.for_model]


def get(name: Any, *, host: bool = False) -> Tool:
    """The tool called ``name``; a host's tool only when ``host``.

    Raises:
        InvalidArgument: no such tool (the message lists the model's tools).

    Examples:
        >>> get("memory_recall")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        memlab.errors.InvalidArgument: unknown tool 'memory_recall'; known tools: memory_save, ..., memory_delete
    """
    tool = TOOLS.find(name)
    if tool is None or not (tool.for_model or host):
        offered = [tool.name for tool in model_tools()]
        raise InvalidArgument(TOOLS.unknown(name, offered, limit=arguments.MAX_ARGUMENT_NAME_CHARS))
    return tool


def bind(name: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a model tool's arguments (``Tool.bind``).

    Raises:
        InvalidArgument: an unknown tool, an unknown or missing argument, or a bad value.
    """
    return get(name).bind(given)
