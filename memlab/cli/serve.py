"""``memlab serve``: the five memory tools served to an MCP host over stdio (``memlab.mcp_server``), on a store
named by a flag or ``MEMLAB_DB``, at a taint, agent, integrity and floor named by a flag or ``MEMLAB_TAINT``,
``MEMLAB_AGENT``, ``MEMLAB_INTEGRITY`` and ``MEMLAB_FLOOR``."""

from __future__ import annotations

import argparse
import sys

from memlab.cli.options import GRADES, LEVELS, Commands, add_command, store_flags
from memlab.cli_output import from_environment
from memlab.labels import Integrity, Label

__all__ = ["add_serve"]


def add_serve(commands: Commands) -> None:
    serve = add_command(commands, "serve", "serve the five memory tools to an MCP host over stdio", run_serve)
    serve.add_argument(
        "--db",
        help="the store: a path (if new, a file when it ends in .db, .sqlite or .sqlite3, else a folder) or a "
        "postgresql:// URL; shared between processes (default: $MEMLAB_DB)",
    )
    serve.add_argument("--taint", help=f"the session's starting taint, {LEVELS} (default: $MEMLAB_TAINT, else PUBLIC)")
    serve.add_argument("--agent", help="the memory namespace (default: $MEMLAB_AGENT, else main)")
    serve.add_argument(
        "--integrity",
        metavar=GRADES,
        help="the session's starting integrity: untrusted when it starts on content no one vouches for; only the "
        "host lowers it later, with memlab/lower-integrity (default: $MEMLAB_INTEGRITY, else trusted)",
    )
    serve.add_argument(
        "--floor",
        metavar=GRADES,
        help="the least trusted grade the session reads: trusted hides every untrusted memory from the tools, the "
        "resource and the prompt (default: $MEMLAB_FLOOR, else untrusted: every grade)",
    )
    serve.set_defaults(
        environment={
            "db": ("MEMLAB_DB", None),
            "taint": ("MEMLAB_TAINT", "PUBLIC"),
            "agent": ("MEMLAB_AGENT", "main"),
            "integrity": ("MEMLAB_INTEGRITY", "trusted"),
            "floor": ("MEMLAB_FLOOR", "untrusted"),
        }
    )
    store_flags(serve)
    serve.add_argument(
        "--ranking", metavar="FILE", help="order results by a ranking file (memlab eval --tune --save FILE.json)"
    )


def run_serve(args: argparse.Namespace) -> int:
    """Serve until the host closes standard input; 2 when the store, taint, agent, integrity, floor or ranking is
    refused."""
    # stdout carries the protocol: everything else goes to stderr.
    import anyio

    from memlab import arguments
    from memlab.errors import MemlabError
    from memlab.mcp_server import serve

    try:
        taint = from_environment(args, "taint", Label.parse)
        agent = from_environment(args, "agent", arguments.agent)
        integrity = from_environment(args, "integrity", Integrity.parse)
        floor = from_environment(args, "floor", Integrity.parse)
        store = serving_store(args)
    except MemlabError as error:
        print(f"memlab serve: {error}", file=sys.stderr)
        return 2
    with store:
        try:
            session = store.session(taint, agent, integrity=integrity, floor=floor)
        except MemlabError as error:
            print(f"memlab serve: {error}", file=sys.stderr)
            return 2
        if sys.stderr.isatty():  # a person ran it by hand: say it is waiting, not hung (a host's log stays empty)
            print(
                f"memlab serve: serving agent {session.agent!r} at {session.taint} in {shown(args.db)} over stdio; "
                "waiting for a host (it speaks MCP on stdin; Ctrl-C stops)",
                file=sys.stderr,
                flush=True,
            )
        anyio.run(serve, session)
    return 0


def shown(db: str) -> str:
    """The store as a person reads it: a path as given, a URL without its user and password."""
    from urllib.parse import urlsplit

    if "://" not in db:
        return db
    url = urlsplit(db)
    host = url.hostname or ""
    return f"{url.scheme}://{host}{f':{url.port}' if url.port else ''}{url.path}"


def serving_store(args: argparse.Namespace):
    """The store ``memlab serve`` serves: ``--db`` under ``--policy`` and ``--analyzer``, ordered by ``--ranking``."""
    from pathlib import Path

    from memlab.search.ranking import Ranking, RankingFileError
    from memlab.store import MemoryStore

    ranking = None
    if args.ranking:
        ranking = Ranking.load(args.ranking)
        if ranking.uses_dense:  # refused before the store is opened: nothing is touched
            raise RankingFileError(
                Path(args.ranking),
                "ranking.dense" if ranking.dense > 0 else "ranking.lexical",
                "this ranking uses dense retrieval and memlab serve has no embedder: "
                "save a lexical one (memlab eval --tune --rows memlab --save FILE.json)",
            )
    return from_environment(
        args, "db", lambda db: MemoryStore(db, policy=args.policy, analyzer=args.analyzer, ranking=ranking)
    )
