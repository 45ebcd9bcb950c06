"""The one table of tools: each tool's name, what a model is told of it, and its parameters with their validators.

Everything that knows the tools derives from ``TOOLS``: argument validation (``bind``), the JSON Schemas a
model sees (``memlab.tools.SCHEMAS``, which MCP's ``tools/list`` serves), and the session's dispatch (a tool
``name`` runs ``Session._<name>``). Adding a tool is one entry here and one ``Session._<name>`` method.
``memory_recall`` is the host's (``Session.recall``): it is in the table, but offered to no model and refused
from every door a model reaches.

Examples:
    >>> bind("memory_search", {"query": "name"})
    {'query': 'name', 'max_results': 10}
    >>> [tool.name for tool in TOOLS.values() if tool.for_model]
    ['memory_save', 'memory_get', 'memory_search', 'memory_list', 'memory_delete']
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memlab import arguments
from memlab.arguments import DEFAULT_MAX_RESULTS, MAX_RESULTS_CAP, shown
from memlab.errors import InvalidArgument
from memlab.recall import budget

__all__ = ["Parameter", "Tool", "TOOLS", "MODEL_TOOLS", "bind", "get"]


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
    """A tool: its name, the description a model reads, its parameters."""

    name: str
    description: str
    parameters: tuple[Parameter, ...]
    for_model: bool = True
    """False: a host's call (``memory_recall``), listed to no model and refused from the model's doors."""

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
        listed = ", ".join(shown(name) for name in unknown[:3]) + (
            f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        )
        raise InvalidArgument(f"{self.name} takes no argument {listed}; it takes {', '.join(names)}")


_KEY = {"type": "string", "description": "Unique identifier of the memory, e.g. 'user-name' or 'project-deadline'."}


def _key(description: str | None = None) -> Parameter:
    schema = _KEY if description is None else {**_KEY, "description": description}
    return Parameter("key", arguments.key, schema, required=True)


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
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
        ),
        Tool(
            "memory_get",
            "Retrieve one memory by key, if it exists and is accessible at the current security level. Versions at "
            "a higher classification shadow lower ones.",
            (_key("The key of the memory to retrieve."),),
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
        ),
        Tool(
            "memory_list",
            "List all accessible memories, optionally filtered by tag.",
            (Parameter("tag", arguments.tag, {"type": "string", "description": "Tag to filter by."}),),
        ),
        Tool(
            "memory_delete",
            "Delete a memory by key. Only memories at the session's current security level can be deleted; the "
            "record is hidden but kept for audit.",
            (_key("The key of the memory to delete."),),
        ),
        Tool(
            "memory_recall",
            "The effective view rendered as a system-prompt section (Session.recall): the host's, not a model's.",
            (Parameter("budget_chars", budget, required=True),),
            for_model=False,
        ),
    )
}

MODEL_TOOLS: tuple[str, ...] = tuple(name for name, tool in TOOLS.items() if tool.for_model)
"""The tools a model may call, in the order they are offered."""


def get(name: Any, *, host: bool = False) -> Tool:
    """The tool called ``name``; a host's tool only when ``host``.

    Raises:
        InvalidArgument: no such tool (the message lists the model's tools).
    """
    tool = TOOLS.get(name) if isinstance(name, str) else None
    if tool is None or not (tool.for_model or host):
        raise InvalidArgument(f"unknown tool {shown(name)}; the tools are {', '.join(MODEL_TOOLS)}")
    return tool


def bind(name: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a model tool's arguments (``Tool.bind``).

    Raises:
        InvalidArgument: an unknown tool, an unknown or missing argument, or a bad value.
    """
    return get(name).bind(given)
