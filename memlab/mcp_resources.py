"""The spine as an MCP prompt and the session's recalled memories as an MCP resource, for ``memlab serve``.

- Prompt ``memory-spine``: the spine (``memlab/SPINE.md``, also the server's ``instructions``) as one user
  message. Its one argument, ``budget_chars`` (optional, a positive integer as MCP's string arguments carry
  it; empty is not given), appends the session's recall in at most that many characters, read exactly as the
  resource reads it.
- Resource ``memory://recall`` and its template ``memory://recall{?budget_chars}``: ``Session.recall`` at the
  live taint, as Markdown (``DEFAULT_BUDGET_CHARS`` characters unless ``budget_chars`` says otherwise).

Each recall, through either door, is ``Session.recall``: one call of the host's tool ``memory_recall`` down the
session's one path (the store's hooks, the gates of the live taint and of the session's floor, shadowing with
trust first, one audit row naming the versions shown), the row a Python host's ``session.recall`` writes: a
server started with ``--floor trusted`` recalls no untrusted memory, and a recall that shows one lowers the
session as any read does. Whose memories, at which level and from which grade up are the server's to say
(``--agent``, ``--taint``, ``--floor``, the host's requests); no URI or argument can name them. Anything
else — another agent or a level in a URI, an unknown or repeated parameter or argument, a budget that is not a
positive integer, an unknown URI or prompt — is refused before any read with an MCP invalid-params error
naming what is wrong: nothing is read and nothing is written (no audit row: no call was made, as for an
unknown method).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl

import anyio
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from memlab.arguments import quoted
from memlab.errors import MemlabError
from memlab.recall import DEFAULT_BUDGET_CHARS
from memlab.session import Session
from memlab.tools import spine

__all__ = ["PROMPT", "RESOURCE", "TEMPLATE", "handlers", "get_prompt", "read_resource", "recall_budget"]

BUDGET = "budget_chars"
RECALL_URI = "memory://recall"
MARKDOWN = "text/markdown"
_MAX_BUDGET_DIGITS = 18  # far above any prompt, and int() of the digits stays cheap

PROMPT = types.Prompt(
    name="memory-spine",
    title="How to use memory",
    description="How to use the memory tools: what to save, under which keys, to recall before answering, never "
    f"to choose a classification. With {BUDGET}, followed by what is remembered ({RECALL_URI}).",
    arguments=[
        types.PromptArgument(
            name=BUDGET,
            description="Append the recalled memories in at most this many characters (a positive integer).",
            required=False,
        )
    ],
)
RESOURCE = types.Resource(
    name="recall",
    title="What you remember",
    uri=RECALL_URI,
    description=f"The memories this session sees, newest first, as a prompt section of at most "
    f"{DEFAULT_BUDGET_CHARS} characters. Each read is audited.",
    mime_type=MARKDOWN,
)
TEMPLATE = types.ResourceTemplate(
    name="recall",
    title="What you remember, in a budget",
    uri_template=f"{RECALL_URI}{{?{BUDGET}}}",
    description=f"{RECALL_URI} in at most {BUDGET} characters (a positive integer). Each read is audited.",
    mime_type=MARKDOWN,
)


def handlers(session: Session) -> dict[str, Any]:
    """The low-level ``Server``'s prompt and resource handlers for ``session`` (keyword arguments of ``Server``)."""

    async def list_prompts(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return types.ListPromptsResult(prompts=[PROMPT])

    async def on_get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> Any:
        # A recall may wait on another process's write lock: run it off the event loop, like a tool call.
        return await anyio.to_thread.run_sync(get_prompt, session, params.name, params.arguments)

    async def list_resources(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return types.ListResourcesResult(resources=[RESOURCE])

    async def list_templates(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return types.ListResourceTemplatesResult(resource_templates=[TEMPLATE])

    async def on_read_resource(ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams) -> Any:
        return await anyio.to_thread.run_sync(read_resource, session, params.uri)

    return {
        "on_list_prompts": list_prompts,
        "on_get_prompt": on_get_prompt,
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_templates,
        "on_read_resource": on_read_resource,
    }


def get_prompt(session: Session, name: str, arguments: Mapping[str, str] | None) -> types.GetPromptResult:
    """``prompts/get``: the spine, and with ``budget_chars`` the session's recall after it.

    Raises:
        MCPError: an unknown prompt or argument, or a bad budget (invalid params); the recall's own failure.

    Examples:
        >>> get_prompt(s, "memory-spine", None).messages[0].content.text == memlab.spine()
        True
    """
    if name != PROMPT.name:
        raise _invalid(f"unknown prompt {quoted(name)}; the prompt is {PROMPT.name}")
    given = dict(arguments or {})
    _refuse_unknown(given, f"{PROMPT.name} takes no argument")
    text = spine()
    # A host's prompt form sends every declared argument, an unfilled one as "": that is no budget given.
    if given.get(BUDGET, "") != "":
        recall = _recall(session, _budget(given[BUDGET]))
        text = f"{text}\n\n{recall}" if recall else text
    return types.GetPromptResult(
        description=PROMPT.description,
        messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
    )


def read_resource(session: Session, uri: str) -> types.ReadResourceResult:
    """``resources/read`` of ``memory://recall``: the session's recall as Markdown.

    Raises:
        MCPError: a URI this server does not serve (invalid params); the recall's own failure.

    Examples:
        >>> read_resource(s, "memory://recall").contents[0].text.splitlines()[-1]
        '- user-name: Sam (2026-01-01)'
    """
    text = _recall(session, recall_budget(uri))
    # Never cached: the next save, or the host's escalation, changes what the session remembers.
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=MARKDOWN, text=text)], ttl_ms=0, cache_scope="private"
    )


def recall_budget(uri: str) -> int:
    """The budget a ``memory://recall`` URI asks for; a URI that is not one is refused.

    Raises:
        MCPError: an unknown URI, a parameter other than ``budget_chars`` (``agent``, ``taint``: whose memories
            and at which level are never the URI's to say), a repeated one, or a bad budget (invalid params).

    Examples:
        >>> recall_budget("memory://recall"), recall_budget("memory://recall?budget_chars=500")
        (4000, 500)
        >>> recall_budget("memory://recall?agent=bob")
        Traceback (most recent call last):
        mcp.shared.exceptions.MCPError: memory://recall takes no parameter 'agent'; it takes budget_chars
    """
    base, _, query = uri.partition("?")
    if base != RECALL_URI:
        raise _invalid(f"unknown resource {quoted(uri)}; the resource is {RECALL_URI} ({TEMPLATE.uri_template})")
    pairs = parse_qsl(query, keep_blank_values=True)
    _refuse_unknown((name for name, _ in pairs), f"{RECALL_URI} takes no parameter")
    if len(pairs) > 1:
        raise _invalid(f"{BUDGET} is given {len(pairs)} times in {quoted(uri)}; give it once")
    return _budget(pairs[0][1]) if pairs else DEFAULT_BUDGET_CHARS


def _refuse_unknown(names: Iterable[str], refusal: str) -> None:
    unknown = sorted({name for name in names if name != BUDGET})
    if unknown:
        listed = ", ".join(quoted(name) for name in unknown[:3])
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        raise _invalid(f"{refusal} {listed}{more}; it takes {BUDGET}")


def _budget(value: object) -> int:
    digits = isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= _MAX_BUDGET_DIGITS
    if digits and int(value) > 0:
        return int(value)
    raise _invalid(f"{BUDGET} must be a positive integer, not {quoted(value)}")


def _recall(session: Session, budget: int) -> str:
    try:
        return session.recall(budget_chars=budget)
    except MemlabError as error:  # refused by a hook, or failed inside: the audit row is written already
        code = types.INTERNAL_ERROR if error.code in ("internal_error", "integrity_error") else types.INVALID_PARAMS
        raise MCPError(code=code, message=f"{error.code}: {error}") from None


def _invalid(message: str) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=message)
