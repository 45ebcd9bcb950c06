"""Cold starts: what a fresh process pays before memlab answers, against the floors it builds on.

Every measure runs in fresh processes, interleaved (memlab, then its comparison, then memlab again...) so drift
hits both alike, and is the median over ``--repeats`` processes:

* ``import memlab`` against ``import sqlite_utils`` (target ≤ 1.5x) and ``import sqlite3``: the import's own
  time, measured inside the child (interpreter start-up excluded; it is the same for all);
* the first ``memory_search`` of a fresh process on an existing store of ``--memories`` memories (LoCoMo's
  observations, agent ``main`` at PUBLIC), against a warm search in the same process (the median of the next
  ``--queries`` searches; target ≤ 5x); opening the store and starting the session are shown apart;
* ``memlab serve`` (MCP over stdio) from spawn to its answer to ``initialize``, and from ``notifications/
  initialized`` to the answer to its first ``tools/call memory_search``, against the MCP SDK's own minimal
  stdio server (its low-level ``Server`` with one tool running one raw FTS5 query on the same memories),
  both driven by the same newline-delimited JSON-RPC client written here.

Usage::

    python benchmarks/bench_coldstart.py [--memories 2000] [--repeats 7] [--queries 30]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_store import Row, environment, print_table, ratio_row  # noqa: E402

from memlab import MemoryStore  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT / "data" / "locomo10.json"
REPLY_TIMEOUT = 120.0  # seconds: a loaded 2-core machine imports the MCP SDK in several

IMPORT = """
import time
started = time.perf_counter()
import {module}
print(time.perf_counter() - started)
"""

FIRST_SEARCH = """
import json, sys, time
started = time.perf_counter()
from memlab import MemoryStore
imported = time.perf_counter()
queries = json.load(open(sys.argv[2]))
store = MemoryStore(sys.argv[1])
session = store.session("PUBLIC", "main")
opened = time.perf_counter()
session.memory_search(queries[0])
first = time.perf_counter() - opened
warm = []
for query in queries[1:]:
    before = time.perf_counter()
    session.memory_search(query)
    warm.append(time.perf_counter() - before)
store.close()
print(json.dumps({"import": imported - started, "open": opened - imported, "first": first, "warm": warm}))
"""

# The MCP SDK's own minimal stdio server: one tool, one raw FTS5 query, nothing of memlab.
MINIMAL_SERVER = """
import json, re, sqlite3, sys
import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

conn = sqlite3.connect(sys.argv[1], check_same_thread=False)
TOOL = types.Tool(
    name="memory_search",
    description="Search the memories.",
    input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx, params):
    words = re.findall(r"[^\\W_]+", params.arguments["query"].lower())
    rows = conn.execute(
        "SELECT key, content FROM raw WHERE raw MATCH ? ORDER BY bm25(raw) LIMIT 10",
        (" OR ".join(f'"{word}"' for word in words),),
    ).fetchall()
    hits = [{"key": key, "content": content} for key, content in rows]
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps({"results": hits}))])


server = Server("minimal", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


def child(code: str, *args: str) -> str:
    """Run ``code`` in a fresh interpreter; its last line of output."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"a child process failed:\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1]


def interleaved(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, list]:
    """Each run ``repeats`` times, alternating the runs (the order rotates each round)."""
    names = list(runs)
    results: dict[str, list] = {name: [] for name in names}
    for round_ in range(repeats):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            results[name].append(runs[name]())
    return results


def bench_imports(repeats: int) -> list[Row]:
    modules = ("memlab", "sqlite_utils", "sqlite3")
    times = interleaved({m: lambda m=m: float(child(IMPORT.format(module=m))) for m in modules}, repeats)
    memlab, sqlite_utils, sqlite = (statistics.median(times[m]) * 1e3 for m in modules)
    return [
        ratio_row("import memlab ÷ import sqlite_utils", memlab, sqlite_utils, 1.5, "ms"),
        ratio_row("import memlab ÷ import sqlite3", memlab, sqlite, None, "ms"),
    ]


def bench_first_search(store: Path, queries: list[str], repeats: int, workdir: Path) -> list[Row]:
    asked = workdir / "queries.json"
    asked.write_text(json.dumps(queries), encoding="utf-8")
    runs = [json.loads(child(FIRST_SEARCH, str(store), str(asked))) for _ in range(repeats)]
    first = statistics.median(run["first"] for run in runs) * 1e3
    warm = statistics.median(statistics.median(run["warm"]) for run in runs) * 1e3
    opened = statistics.median(run["open"] for run in runs) * 1e3
    return [
        ratio_row("first search ÷ a warm search", first, warm, 5, "ms"),
        ratio_row("  opening the store and a session ÷ warm", opened, warm, None, "ms"),
    ]


class StdioClient:
    """A newline-delimited JSON-RPC client of one MCP server process over its stdin and stdout."""

    def __init__(self, command: list[str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._next_id = 0

    def send(self, method: str, params: dict, *, notify: bool = False) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self._next_id += 1
            message["id"] = self._next_id
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def reply(self) -> dict:
        """The answer to the last request sent (notifications and log messages on the way are skipped)."""
        deadline = time.monotonic() + REPLY_TIMEOUT
        while True:
            if not select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise SystemExit(f"no reply within {REPLY_TIMEOUT:.0f} s from {self.process.args}")
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit(f"{self.process.args} closed its output")
            message = json.loads(line)
            if message.get("id") == self._next_id:
                if "error" in message or message.get("result", {}).get("isError"):
                    raise SystemExit(f"{self.process.args} answered with an error: {message}")
                return message

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=REPLY_TIMEOUT)


def mcp_session(command: list[str], query: str, protocol: str) -> tuple[float, float]:
    """Seconds from spawn to the answer to ``initialize``, and from then to the first search's answer."""
    client = StdioClient(command)
    client.send(
        "initialize",
        {"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "bench_coldstart", "version": "1"}},
    )
    client.reply()
    initialized = time.perf_counter()
    client.send("notifications/initialized", {}, notify=True)
    client.send("tools/call", {"name": "memory_search", "arguments": {"query": query}})
    answer = client.reply()
    searched = time.perf_counter()
    if not json.loads(answer["result"]["content"][0]["text"])["results"]:
        raise SystemExit(f"{command}: the first search found nothing")
    client.close()
    return initialized - client.started, searched - initialized


def bench_mcp(store: Path, raw: Path, query: str, repeats: int, workdir: Path) -> list[Row]:
    from mcp.types import LATEST_PROTOCOL_VERSION

    minimal = workdir / "minimal_server.py"
    minimal.write_text(MINIMAL_SERVER, encoding="utf-8")
    commands = {
        "memlab": [sys.executable, "-m", "memlab.cli", "serve", "--db", str(store), "--taint", "PUBLIC"],
        "sdk": [sys.executable, str(minimal), str(raw)],
    }
    runs = interleaved(
        {n: lambda c=c: mcp_session(c, query, LATEST_PROTOCOL_VERSION) for n, c in commands.items()}, repeats
    )
    memlab_init, sdk_init = (statistics.median(t[0] for t in runs[n]) * 1e3 for n in commands)
    memlab_call, sdk_call = (statistics.median(t[1] for t in runs[n]) * 1e3 for n in commands)
    return [
        ratio_row("memlab serve: spawn to initialize ÷ SDK", memlab_init, sdk_init, None, "ms"),
        ratio_row("memlab serve: first memory_search ÷ SDK", memlab_call, sdk_call, None, "ms"),
        ratio_row("memlab serve: both ÷ SDK", memlab_init + memlab_call, sdk_init + sdk_call, None, "ms"),
    ]


def build(workdir: Path, memories: int) -> tuple[Path, Path, list[str]]:
    """A memlab store and a raw FTS5 file of the same LoCoMo observations, and LoCoMo's questions."""
    locomo = json.loads(LOCOMO.read_text(encoding="utf-8"))
    texts = [
        observation[0]
        for sample in locomo
        for session in sample["observation"].values()
        for observations in session.values()
        for observation in observations
    ][:memories]
    if len(texts) < memories:
        raise SystemExit(f"LoCoMo holds {len(texts)} observations, fewer than --memories {memories}")
    store = workdir / "store"
    with MemoryStore(store) as memlab:
        memlab.session("PUBLIC", "main").memory_save_many(
            {"key": f"observation-{n}", "content": text} for n, text in enumerate(texts)
        )
    raw = workdir / "raw.db"
    with sqlite3.connect(raw) as conn:
        conn.execute("CREATE VIRTUAL TABLE raw USING fts5(key UNINDEXED, content, tokenize = 'porter unicode61')")
        conn.executemany("INSERT INTO raw VALUES (?, ?)", ((f"observation-{n}", t) for n, t in enumerate(texts)))
    conn.close()
    return store, raw, [qa["question"] for sample in locomo for qa in sample["qa"]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=2_000, help="memories in the store (default 2000)")
    parser.add_argument("--repeats", type=int, default=7, help="fresh processes per measure (default 7)")
    parser.add_argument("--queries", type=int, default=30, help="warm searches after the first (default 30)")
    args = parser.parse_args(argv)
    print("\n".join(environment()))
    print(f"settings:   memories={args.memories} repeats={args.repeats} queries={args.queries}")
    print()
    with tempfile.TemporaryDirectory(prefix="bench-coldstart-") as tmp:
        workdir = Path(tmp)
        store, raw, questions = build(workdir, args.memories)
        print(
            f"store:      {args.memories:,} memories, {sum(p.stat().st_size for p in store.rglob('*')):,} bytes",
            file=sys.stderr,
        )
        rows = bench_imports(args.repeats)
        rows += bench_first_search(store, questions[: args.queries + 1], args.repeats, workdir)
        rows += bench_mcp(store, raw, questions[0], args.repeats, workdir)
    print_table({args.memories: rows}, widths=(6, 42, 10))
    print("(raw: what memlab is divided by, as the measure names it; medians over fresh processes, interleaved)")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
