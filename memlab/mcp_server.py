"""``memlab serve``: the five memory tools over the Model Context Protocol (stdio), for any MCP host.

One server process is one ``Session``: the host starts it with ``--db``, ``--agent`` and ``--taint``, and
every ``tools/call`` goes through ``memlab.tools.call`` — the store's pre-tool-call hooks (a
``classification`` argument is stripped and the attempt audited), validation, the gates and the audit are
exactly those of the Python tool layer. A result with an ``"error"`` key comes back as an MCP tool error
(``isError: true``) whose text is ``"<code>: <message>"``. The tools are listed with memlab's own JSON
Schemas (``memlab.tools.SCHEMAS``), a ``title`` and an ``outputSchema`` (``Tool.output_schema``: what the tool
returns, or the error result), which every ``structuredContent`` validates against, errors included; the server's
``instructions`` are ``memlab/SPINE.md``. A request before ``initialize`` (but ``ping``) is refused with JSON-RPC's
invalid request (``-32600``) naming the method and that ``initialize`` comes first; a request of the protocol
without a handshake (2026-07-28) is served. The spine is
also the prompt ``memory-spine``, and the session's recall the resource ``memory://recall``: each recall is
one audited ``memory_recall`` call of the session, as ``memlab.mcp_resources`` says.

**Who sets the taint.** The host fixes it at start (``--taint``). To raise it mid-conversation — the user
opened a CONFIDENTIAL document, say — the host sends the JSON-RPC request ``memlab/escalate`` with params
``{"level": "CONFIDENTIAL", "reason": "..."}``; the reply is ``{"taint": "CONFIDENTIAL"}``. A level below
the current taint is refused with a JSON-RPC error (``-32602``) and the taint stays where it was; every
escalation is recorded with its reason (``MemoryStore.taint_events()``). Under compartments ``--taint`` (or
``MEMLAB_TAINT``) and ``level`` may be labels (``CONFIDENTIAL:hr``): the taint then goes only up the lattice,
and a label incomparable with it is refused the same way. Why a custom request method:

- A model reaches a server only through the host, and a host turns a model's tool use into ``tools/call``
  for a tool that ``tools/list`` offered. ``memlab/escalate`` is neither a tool nor listed, so no model
  output can ever become one: the control is host-only by construction, with nothing for a host to filter
  and nothing to forget to filter.
- A host-only *tool* (listed, and filtered out by a careful host) was rejected: most hosts hand every
  listed tool to the model, and a model that can raise its own taint can read up — exactly the flow the
  gates exist to stop. Lowering would be refused anyway, but raising must be the host's decision too.
- A request rather than a notification: the host gets an answer (the new taint, or the refusal), and
  when that answer arrives the escalation is in force, so the next ``tools/call`` acts at the new level.

The model can never lower the taint: nothing it sends reaches ``Session.escalate``, and ``escalate``
itself refuses to go down. ``escalate(client, level)`` below is the host side in Python.

**Who lowers the integrity.** The host, and only the host: it knows what it fed the model. The session starts
trusted unless the host starts it lower (``--integrity untrusted``, ``MEMLAB_INTEGRITY``, or a taint such as
``INTERNAL@untrusted``), and it reads only versions at or above its floor (``--floor trusted``, ``MEMLAB_FLOOR``:
an untrusted version is then as invisible as one above the taint, in tools, the resource and the prompt). When
the host hands the model content no one vouches for — a web page, an e-mail, a tool's output — it sends
``memlab/lower-integrity`` with params ``{"source": "https://example.com/page", "reason": "..."}``; the reply is
``{"integrity": "untrusted", "taint": "INTERNAL@untrusted"}``, and from then on every save is classified
untrusted and names the source (``Memory.distrust``, what ``MemoryStore.purge_source`` finds). A read that returns
an untrusted version lowers the session the same way, by itself. Nothing raises the integrity again but a new
session, and no model can raise it, for the reasons the taint cannot be lowered:

- ``memlab/lower-integrity`` is, like ``memlab/escalate``, neither a tool nor listed: no model output can become
  it. It only ever lowers; a params object with any field but ``source`` and ``reason`` (``{"integrity":
  "trusted"}``, ``"floor"``, ``"taint"``) is refused with ``-32602`` naming the field, as is an empty or bad
  source, and nothing changes. There is no request that raises, so there is none to misuse; and
  ``memlab/escalate``, which keeps the integrity, refuses such a field the same way rather than ignore it.
- A tool argument that names an integrity (``integrity``, ``trusted``, ``provenance``, ...) is stripped and the
  attempt audited, as ``classification`` is; a value that *says* it is trusted is content like any other.

``lower_integrity(client, source)`` below is the host side in Python.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

import anyio
from mcp import ClientSession, types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ConfigDict

from memlab import __version__, mcp_resources, tooldefs, tools
from memlab.arguments import quoted
from memlab.errors import MemlabError
from memlab.labels import Integrity, Label, LabelLike
from memlab.session import Session

__all__ = [
    "ESCALATE_METHOD",
    "EscalateParams",
    "EscalateRequest",
    "EscalateResult",
    "LOWER_INTEGRITY_METHOD",
    "LowerIntegrityParams",
    "LowerIntegrityRequest",
    "LowerIntegrityResult",
    "build",
    "annotations",
    "tool_result",
    "serve",
    "escalate",
    "lower_integrity",
]

log = logging.getLogger(__name__)

ESCALATE_METHOD = "memlab/escalate"
LOWER_INTEGRITY_METHOD = "memlab/lower-integrity"


class EscalateParams(types.RequestParams):
    """Params of ``memlab/escalate``: the level or label to raise the taint to, and why (kept with the taint
    event). Any other field (``integrity``, ``floor``) is kept, to be refused by name rather than ignored."""

    model_config = ConfigDict(extra="allow")

    level: str
    reason: str = ""


class EscalateRequest(types.Request[EscalateParams, Literal["memlab/escalate"]]):
    """The host's request to raise the session's taint; no model can send it (see the module docstring)."""

    method: Literal["memlab/escalate"] = ESCALATE_METHOD
    params: EscalateParams


class EscalateResult(types.Result):
    """The session's taint once the request has been handled."""

    taint: str


class LowerIntegrityParams(types.RequestParams):
    """Params of ``memlab/lower-integrity``: what the host fed the model (a URL, ``email:<id>``, ``tool:<name>``)
    and why. Every other field is kept, to be refused by name; the values are checked by memlab, so a bad one is
    refused naming what is wrong rather than with the SDK's bare "Invalid request parameters"."""

    model_config = ConfigDict(extra="allow")

    source: Any = None
    reason: Any = ""


class LowerIntegrityRequest(types.Request[LowerIntegrityParams, Literal["memlab/lower-integrity"]]):
    """The host's request to lower the session's integrity; no model can send it (see the module docstring)."""

    method: Literal["memlab/lower-integrity"] = LOWER_INTEGRITY_METHOD
    params: LowerIntegrityParams


class LowerIntegrityResult(types.Result):
    """The session's integrity and taint once the request has been handled."""

    integrity: str
    taint: str


def build(session: Session) -> Server:
    """An MCP server (the SDK's low-level ``Server``) for ``session``: the five tools, the prompt, the resource.

    The prompt (the spine) and the resource (the recall) are ``memlab.mcp_resources``'s.

    The low-level server rather than ``MCPServer``: ``MCPServer`` derives each tool's schema from a
    Python signature and validates arguments with pydantic before the tool runs, which would drop a
    ``classification`` argument before memlab's hook could strip and audit it, and answer bad input with
    pydantic's messages instead of memlab's. Here ``tools/list`` serves ``SCHEMAS`` verbatim and
    ``tools/call`` hands the raw arguments to ``tools.call``.

    Examples:
        >>> server = build(store.session("internal", "main"))
        >>> server.name
        'memlab'
    """

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name,
                    title=tool.title,
                    description=tool.description,
                    input_schema=tool.schema()["parameters"],
                    output_schema=tool.output_schema(),
                    annotations=annotations(tool),
                )
                for tool in tooldefs.model_tools()
            ]
        )

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        # SQLite may wait on another process's write lock: run the call off the event loop.
        result = await anyio.to_thread.run_sync(tools.call, session, params.name, params.arguments or {})
        return tool_result(result)

    async def escalate_taint(ctx: ServerRequestContext[Any], params: EscalateParams) -> EscalateResult:
        _refuse_extra(ESCALATE_METHOD, params, "level and reason (it raises the taint and keeps the integrity)")
        reason = params.reason or "raised by the MCP host"
        try:
            level = await anyio.to_thread.run_sync(lambda: session.escalate(params.level, reason=reason))
        except MemlabError as error:
            raise MCPError(code=types.INVALID_PARAMS, message=str(error)) from None
        log.info("taint of session %s raised to %s: %s", session.id, level, reason)
        return EscalateResult(taint=str(level))

    async def lower_integrity_of_session(
        ctx: ServerRequestContext[Any], params: LowerIntegrityParams
    ) -> LowerIntegrityResult:
        _refuse_extra(
            LOWER_INTEGRITY_METHOD,
            params,
            "source and reason (it only lowers the integrity, and nothing raises it but a new session)",
        )
        if params.source is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"{LOWER_INTEGRITY_METHOD} needs 'source'")
        try:
            integrity = await anyio.to_thread.run_sync(
                lambda: session.lower_integrity(source=params.source, reason=params.reason)
            )
        except MemlabError as error:
            raise MCPError(code=types.INVALID_PARAMS, message=str(error)) from None
        log.info("integrity of session %s lowered by %s", session.id, params.source)
        return LowerIntegrityResult(integrity=str(integrity), taint=str(session.taint))

    async def refuse_before_initialize(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        # MCP's lifecycle has a client send initialize first and nothing but ping until it is answered, and names no
        # error for a client that does not. The SDK answers invalid params (-32602) with empty data, which reads as a
        # fault in the params; this is JSON-RPC's invalid request (-32600): not a request the server takes now,
        # naming the method and what comes first. A method the server does not serve keeps the SDK's -32601, and a
        # request of the protocol without a handshake (2026-07-28: its envelope says who the client is) passes.
        if (
            ctx.request_id is not None
            and ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            and ctx.method not in ("initialize", "ping")
            and ctx.session.client_params is None
            and server.get_request_handler(ctx.method) is not None
        ):
            raise MCPError(
                code=types.INVALID_REQUEST,
                message=f"{ctx.method!r} came before 'initialize': an MCP client sends 'initialize' first and waits "
                "for its answer (only 'ping' may come earlier)",
                data={"method": ctx.method, "expected": "initialize"},
            )
        return await call_next(ctx)

    server: Server[Any] = Server(
        "memlab",
        version=__version__,
        instructions=tools.spine(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        **mcp_resources.handlers(session),
    )
    server.add_request_handler(ESCALATE_METHOD, EscalateParams, escalate_taint)
    server.add_request_handler(LOWER_INTEGRITY_METHOD, LowerIntegrityParams, lower_integrity_of_session)
    server.middleware.append(refuse_before_initialize)
    return server


def _refuse_extra(method: str, params: types.RequestParams, takes: str) -> None:
    """Refuse a host request with a field it does not take, naming it, before anything changes: a field that asks
    for more trust (``{"integrity": "trusted"}``) must not be answered as if it had been obeyed."""
    extra = sorted(params.model_extra or {})
    if extra:
        named = ", ".join(quoted(name) for name in extra[:3]) + (f" and {len(extra) - 3} more" if extra[3:] else "")
        raise MCPError(code=types.INVALID_PARAMS, message=f"{method} takes no parameter {named}; it takes {takes}")


def annotations(tool: tooldefs.Tool) -> types.ToolAnnotations:
    """MCP's hints for a tool, from its table entry: read-only, or whether it destroys.

    None of memlab's tools reaches outside the store (not open-world), and no write is idempotent: a second save
    makes another version, a second delete finds nothing.

    Examples:
        >>> annotations(tooldefs.get("memory_get")).read_only_hint
        True
        >>> annotations(tooldefs.get("memory_delete")).destructive_hint
        True
    """
    if tool.read_only:
        return types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return types.ToolAnnotations(
        read_only_hint=False, destructive_hint=tool.destructive, idempotent_hint=False, open_world_hint=False
    )


def tool_result(result: dict[str, Any]) -> types.CallToolResult:
    """A ``tools.call`` result as an MCP tool result: JSON text and structured content; errors as ``isError``.

    Examples:
        >>> tool_result({"error": {"code": "not_found", "message": "no memory"}}).is_error
        True
    """
    error = result.get("error")
    if isinstance(error, dict):
        text = f"{error.get('code')}: {error.get('message')}"
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=result, is_error=True
        )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
        structured_content=result,
    )


async def serve(session: Session) -> None:
    """Serve ``session`` over stdio until the host closes the connection (what ``memlab serve`` runs).

    It blocks on stdin, so it is shown rather than run here::

        anyio.run(serve, MemoryStore("memories").session("internal", "main"))
    """
    server = build(session)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def escalate(client: ClientSession, level: LabelLike, reason: str = "") -> Label:
    """Host side: raise the taint of the session behind ``client`` (a connected ``mcp.ClientSession``) to a level
    or a label (``"CONFIDENTIAL:hr"``); the answer is the new taint.

    Raises:
        mcp.MCPError: the level is unknown, below the current taint or incomparable with it (unchanged).

    Inside the host's async code, with a connected client (shown rather than run here)::

        await escalate(client, "confidential", reason="user opened payroll.xlsx")  # -> Level.CONFIDENTIAL
    """
    request = EscalateRequest(params=EscalateParams(level=str(level), reason=reason))
    result = await client.send_request(request, EscalateResult)
    return Label.parse(result.taint)


async def lower_integrity(client: ClientSession, source: str, reason: str = "") -> Integrity:
    """Host side: lower the integrity of the session behind ``client`` (a connected ``mcp.ClientSession``), because
    the host fed the model ``source`` (a URL, ``email:<id>``, ``tool:<name>``); the answer is the integrity now.

    Raises:
        mcp.MCPError: the source is empty or not a name on one line (nothing changes).

    Inside the host's async code, with a connected client (shown rather than run here)::

        await lower_integrity(client, "https://example.com/page", reason="summarised a web page")
    """
    request = LowerIntegrityRequest(params=LowerIntegrityParams(source=source, reason=reason))
    result = await client.send_request(request, LowerIntegrityResult)
    return Integrity.parse(result.integrity)
