"""The LLM-facing layer: tool definitions, the system prompt that goes with them, and ``call``.

``SCHEMAS`` holds the five tools as JSON Schema and ``TOOL_NAMES`` their names, both read from the one table of
tools (``memlab.tooldefs``) on each access, so a tool registered there is offered at once; ``for_openai()`` and
``for_anthropic()`` wrap them the way those APIs take tools; ``spine()`` is the system-prompt text
(``memlab/SPINE.md``) that tells a model what to save and when to recall. ``call(session, name, arguments)``
runs the store's pre-tool-call hooks, then the tool, and returns plain JSON data (the tool's ``render``). A key
hidden above the taint and a key that does not exist get the same answer. No definition has a classification
parameter: the host sets the taint, never the model.

Examples:
    >>> call(session, "memory_save", {"key": "user-name", "content": "Alice"})  # "Sam" was version 1
    {'saved': True, 'key': 'user-name', 'classification': 'PUBLIC', 'integrity': 'trusted', 'version': 2}
"""

from __future__ import annotations

import logging
from functools import cache
from importlib.resources import files
from typing import Any, Literal

from memlab.errors import InvalidArgument, MemlabError
from memlab.session import Session
from memlab.tooldefs import get, model_tools

__all__ = ["SCHEMAS", "TOOL_NAMES", "for_openai", "for_anthropic", "spine", "call"]

log = logging.getLogger(__name__)


SCHEMAS: list[dict[str, Any]]
"""The tools a model may call as JSON Schema, read from the table on each access (fresh copies)."""
TOOL_NAMES: tuple[str, ...]
"""The names of the tools a model may call, in the order they are offered."""


def __getattr__(name: str) -> Any:
    # Read from the table on each access (fresh copies): a tool registered at run time is offered at once.
    if name == "SCHEMAS":
        return _schemas()
    if name == "TOOL_NAMES":
        return tuple(tool.name for tool in model_tools())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
                    "parameters": schema["parameters"],
                },
            }
            for schema in _schemas()
        ]
    if api == "responses":
        return [
            {
                "type": "function",
                "name": schema["name"],
                "description": schema["description"],
                "parameters": schema["parameters"],
                "strict": False,
            }
            for schema in _schemas()
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
            "input_schema": schema["parameters"],
        }
        for schema in _schemas()
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
    """Run tool ``name`` for ``session`` and return its result as JSON data (``Tool.render``).

    Bad input gives ``{"error": {"code", "message"}}``, never an exception; so does a call that failed inside
    memlab, with its class name only.

    Examples:
        >>> call(session, "memory_forget", {})["error"]["code"]
        'invalid_argument'
    """
    if arguments is None:
        arguments = {}
    try:
        result, bound = session.dispatch(name, arguments)
        return get(name).render(bound, result)
    except MemlabError as error:
        return _error(error.code, str(error))
    except Exception as error:  # the audit itself or a render failed; the model must never see a traceback
        log.exception("memlab tool call failed")
        return _error("internal_error", f"the call failed: {type(error).__name__}")


def _schemas() -> list[dict[str, Any]]:
    return [tool.schema() for tool in model_tools()]


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}
