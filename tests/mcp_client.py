"""Drive ``memlab serve`` in a real subprocess with the MCP SDK's own stdio client (shared by the agent tests)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0
"""Seconds for a whole scenario, and for any one reply; generous for a loaded 2-core CI machine."""


def serve_args(db: Path, taint: str, agent: str = "main") -> list[str]:
    return ["serve", "--db", str(db), "--taint", taint, "--agent", agent]


@asynccontextmanager
async def connect(
    db: Path, taint: str, agent: str = "main", *, log: Path, command: list[str] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised client of a fresh ``memlab serve`` process; its stderr goes to ``log``."""
    async with connect_all([command or default_command(db, taint, agent)], log=log) as (client,):
        yield client


@asynccontextmanager
async def connect_all(commands: list[list[str]], *, log: Path) -> AsyncIterator[list[ClientSession]]:
    """Clients of several server processes, spawned together and initialised concurrently (they start faster)."""
    async with AsyncExitStack() as stack:
        errlog = stack.enter_context(log.open("a"))
        clients = []
        for command in commands:
            params = StdioServerParameters(command=command[0], args=command[1:], cwd=ROOT)
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            clients.append(await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=TIMEOUT)))
        async with anyio.create_task_group() as group:
            for client in clients:
                group.start_soon(client.initialize)
        yield clients


def default_command(db: Path, taint: str, agent: str = "main") -> list[str]:
    return [sys.executable, "-m", "memlab.cli", *serve_args(db, taint, agent)]


def run(scenario: Callable[[], Awaitable[Any]], log: Path) -> Any:
    """Run an async scenario with a deadline; on failure, show what the servers wrote to stderr."""

    async def bounded() -> Any:
        with anyio.fail_after(TIMEOUT):
            return await scenario()

    try:
        result = anyio.run(bounded)
    except BaseException:
        if log.exists():
            print(f"--- server stderr ({log}) ---\n{log.read_text()}", file=sys.stderr)
        raise
    assert "Traceback" not in (log.read_text() if log.exists() else ""), log.read_text()
    return result


async def call(client: ClientSession, name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any], str]:
    """One ``tools/call``: (is_error, structured result, text content)."""
    result = await client.call_tool(name, arguments)
    (content,) = result.content
    return result.is_error, result.structured_content, content.text


def parsed(text: str) -> dict[str, Any]:
    return json.loads(text)
