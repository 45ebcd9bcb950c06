"""The LLM-facing layer: tool definitions, the system prompt that goes with them, and ``call``.

``SCHEMAS`` holds the five tools as JSON Schema; ``for_openai()`` and ``for_anthropic()`` wrap them the
way those APIs take tools; ``spine()`` is the system-prompt text (``memlab/SPINE.md``) that tells a model
what to save and when to recall. ``call(session, name, arguments)`` runs the store's pre-tool-call hooks,
then the tool, and returns plain JSON data. A key hidden above the taint and a key that does not exist get
the same answer. No definition has a classification parameter: the host sets the taint, never the model.

Examples:
    >>> call(session, "memory_save", {"key": "user-name", "content": "Alice"})  # "Sam" was version 1
    {'saved': True, 'key': 'user-name', 'classification': 'PUBLIC', 'version': 2}
"""

from __future__ import annotations

import copy
import logging
from functools import cache
from importlib.resources import files
from typing import Any, Literal

from memlab.errors import InvalidArgument, MemlabError
from memlab.records import Hit, Memory
from memlab.session import Session
from memlab.tooldefs import MODEL_TOOLS, TOOLS

__all__ = ["SCHEMAS", "TOOL_NAMES", "for_openai", "for_anthropic", "spine", "call"]

log = logging.getLogger(__name__)

SCHEMAS: list[dict[str, Any]] = [TOOLS[name].schema() for name in MODEL_TOOLS]
"""The five tools as JSON Schema, from the one table of tools (``memlab.tooldefs``)."""

TOOL_NAMES: tuple[str, ...] = MODEL_TOOLS


def for_openai(api: Literal["chat_completions", "responses"] = "chat_completions") -> list[dict[str, Any]]:
    """The five tools as OpenAI's ``tools`` request parameter takes them.

    ``api="chat_completions"`` (the default) gives the Chat Completions shape,
    ``{"type": "function", "function": {"name", "description", "parameters"}}``: it is the shape the
    OpenAI Python SDK's ``chat.completions.create`` and nearly every OpenAI-compatible server (vLLM,
    Ollama, LiteLLM, ...) accept, so it is the one most hosts can use unchanged. ``api="responses"`` gives
    the Responses API's flat shape, ``{"type": "function", "name", "description", "parameters",
    "strict"}``.

    Neither turns on strict mode. Strict mode requires every property to be listed as required, while
    ``tags``, ``max_results`` and ``tag`` are optional with defaults memlab fills in; and memlab validates
    every argument itself (``memlab.arguments``), returning an error result the model can correct. Chat
    Completions functions are not strict unless asked, so that shape carries no ``strict`` key; the
    Responses API requires the key and treats functions as strict by default, so that shape says
    ``"strict": False``.

    Args:
        api: ``"chat_completions"`` or ``"responses"``.
    Returns:
        Fresh copies: a caller may change them without touching ``SCHEMAS``.
    Raises:
        InvalidArgument: an unknown ``api``.

    Examples:
        >>> for_openai()[0]["function"]["name"], for_openai("responses")[0]["name"]
        ('memory_save', 'memory_save')
    """
    if api == "chat_completions":
        return [
            {
                "type": "function",
                "function": {
                    "name": schema["name"],
                    "description": schema["description"],
                    "parameters": copy.deepcopy(schema["parameters"]),
                },
            }
            for schema in SCHEMAS
        ]
    if api == "responses":
        return [
            {
                "type": "function",
                "name": schema["name"],
                "description": schema["description"],
                "parameters": copy.deepcopy(schema["parameters"]),
                "strict": False,
            }
            for schema in SCHEMAS
        ]
    raise InvalidArgument(f"unknown OpenAI api {api!r}; expected 'chat_completions' or 'responses'")


def for_anthropic() -> list[dict[str, Any]]:
    """The five tools as Anthropic's Messages API ``tools`` parameter takes them.

    Each is a client tool ``{"name", "description", "input_schema"}``, the input schema being the JSON
    Schema of ``SCHEMAS`` (type ``object``). The model's ``tool_use`` block carries ``name`` and
    ``input``; pass them to ``call(session, name, input)``.

    Examples:
        >>> sorted(for_anthropic()[0])
        ['description', 'input_schema', 'name']
    """
    return [
        {
            "name": schema["name"],
            "description": schema["description"],
            "input_schema": copy.deepcopy(schema["parameters"]),
        }
        for schema in SCHEMAS
    ]


@cache
def spine() -> str:
    """The system-prompt text that guides a model's use of memory (``memlab/SPINE.md``, shipped with memlab).

    It tells the model to save personal details, project context and preferences under descriptive
    kebab-case keys, to recall before answering, and never to try to choose a classification.

    Examples:
        >>> spine().startswith("# Your memory")
        True
    """
    return files("memlab").joinpath("SPINE.md").read_text(encoding="utf-8")


def call(session: Session, name: str, arguments: Any = None) -> dict[str, Any]:
    """Run tool ``name`` for ``session``; bad input gives ``{"error": {"code", "message"}}``, never an exception."""
    if arguments is None:
        arguments = {}
    try:
        result, bound = session._call(name, arguments)
    except MemlabError as error:
        return _error(error.code, str(error))
    except Exception as error:  # only if the audit itself failed; the model must never see a traceback
        log.exception("memlab tool call failed")
        return _error("internal_error", f"the call failed: {type(error).__name__}")
    return _render(name, bound, result)


def _render(tool: str, arguments: dict[str, Any], result: Any) -> dict[str, Any]:
    if tool == "memory_save":
        return {
            "saved": True,
            "key": result.key,
            "classification": str(result.label),
            "version": result.version,
        }
    if tool == "memory_get":
        if result is None:
            return {"found": False, "key": arguments["key"]}
        return {"found": True, **_memory(result)}
    if tool == "memory_search":
        return {"query": arguments["query"], "results": [_hit(hit) for hit in result]}
    if tool == "memory_list":
        return {"memories": [_memory(memory) for memory in result]}
    return {"deleted": True, "key": result.key, "classification": str(result.label)}


def _memory(memory: Memory) -> dict[str, Any]:
    """A memory as the model sees it; ``source`` and ``occurred_at`` only when the host gave them."""
    shown = {
        "key": memory.key,
        "content": memory.content,
        "tags": list(memory.tags),
        "classification": str(memory.label),
        "saved_at": memory.saved_at,
    }
    context = {"source": memory.source, "occurred_at": memory.occurred_at}
    return shown | {name: value for name, value in context.items() if value is not None}


def _hit(hit: Hit) -> dict[str, Any]:
    memory = hit.memory
    return {
        "key": memory.key,
        "content": memory.content,
        "tags": list(memory.tags),
        "classification": str(memory.label),
        "score": hit.score,
        "snippet": hit.snippet,
    }


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}
