"""What is in a store, from the shell: ``memlab get``, ``search`` and ``list`` read through a real session of the
store (the gates apply, each read is one audited tool call, a read of an untrusted memory lowers that session),
``memlab history`` and ``memlab audit`` are the auditor's views (``MemoryStore.history`` and ``audit``: every
level, no session, no audit row).

Each prints a table (fitted to the terminal's width on a terminal, whole lines otherwise), or with ``--json`` one
JSON document (a read: the tool's result, as a model gets it; a view: its rows), or with ``--csv`` its rows.
Bad input (a flag, a key, a query) is refused before the store is opened: a one-line error naming it, exit 2,
nothing written; so is a store path that holds nothing (a read never creates a store).
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
from collections.abc import Callable
from typing import Any

from memlab.cli.options import GRADES, LEVELS, Commands, add_command, positive, store_flags
from memlab.cli_output import detail, from_environment, note, print_json

__all__ = ["add_get", "add_search", "add_list", "add_history", "add_audit", "UsageError"]


class UsageError(Exception):
    """A flag or value a read refuses before the store is opened: its message names the flag."""


# -- the commands ------------------------------------------------------------------------------------------------


def add_get(commands: Commands) -> None:
    get = add_command(commands, "get", "print a key's memory in a session's effective view (an audited read)", _run)
    get.add_argument("key", help="the memory's key")
    _session_flags(get)
    get.set_defaults(read="memory_get", arguments=lambda args: {"key": args.key})


def add_search(commands: Commands) -> None:
    search = add_command(
        commands, "search", "rank a session's effective view against a question (an audited read)", _run
    )
    search.add_argument("query", help="natural language; quotes, AND, * and the like are plain text")
    search.add_argument(
        "--max-results", type=positive, default=10, metavar="N", help="the most hits (default 10, at most 100)"
    )
    _session_flags(search)
    search.set_defaults(
        read="memory_search", arguments=lambda args: {"query": args.query, "max_results": args.max_results}
    )


def add_list(commands: Commands) -> None:
    listing = add_command(
        commands, "list", "list a session's effective view, by key, or the memories with a tag (an audited read)", _run
    )
    listing.add_argument("--tag", help="only the memories with this tag (checked after shadowing)")
    _session_flags(listing)
    listing.set_defaults(read="memory_list", arguments=lambda args: {} if args.tag is None else {"tag": args.tag})


def add_history(commands: Commands) -> None:
    history = add_command(
        commands, "history", "print every version of a key, every level, deleted ones too (the auditor's view)", _run
    )
    history.add_argument("key", help="the memory's key")
    _auditor_flags(history, "only the versions a session at this taint could read")
    history.set_defaults(
        read=None, view=lambda store, args: store.history(args.key, args.agent), column="classification"
    )


def add_audit(commands: Commands) -> None:
    audit = add_command(commands, "audit", "print the audit trail: every call, oldest first (the auditor's view)", _run)
    audit.add_argument("--session", help="only this session's calls")
    audit.add_argument("--tool", help="only this tool's calls (memory_get, memory_save, ...)")
    _auditor_flags(audit, "only the calls made at a taint that flows to this one")
    audit.set_defaults(read=None, view=_audit_view, column="taint")


def _audit_view(store, args: argparse.Namespace):
    frame = store.audit(args.agent)
    if args.session is not None:
        frame = frame[frame["session_id"] == args.session]
    if args.tool is not None:
        frame = frame[frame["tool"] == args.tool]
    return frame


# -- the flags they share ------------------------------------------------------------------------------------------


def _store_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--db", help="the store: a folder, a file or a postgresql:// URL; it must exist (default: $MEMLAB_DB)"
    )


def _output_flags(command: argparse.ArgumentParser) -> None:
    shape = command.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print one JSON document on standard output")
    shape.add_argument("--csv", action="store_true", help="print the rows as CSV, a header first")


def _session_flags(command: argparse.ArgumentParser) -> None:
    _store_flag(command)
    command.add_argument("--agent", help="the memory namespace (default: $MEMLAB_AGENT, else main)")
    command.add_argument("--taint", help=f"the reading session's taint, {LEVELS} (default: $MEMLAB_TAINT, else PUBLIC)")
    command.add_argument(
        "--floor",
        metavar=GRADES,
        help="the least trusted grade the session reads: trusted hides every untrusted memory (default: "
        "$MEMLAB_FLOOR, else untrusted: every grade)",
    )
    command.set_defaults(
        environment={
            "db": ("MEMLAB_DB", None),
            "agent": ("MEMLAB_AGENT", "main"),
            "taint": ("MEMLAB_TAINT", "PUBLIC"),
            "floor": ("MEMLAB_FLOOR", "untrusted"),
        }
    )
    _output_flags(command)
    store_flags(command)


def _auditor_flags(command: argparse.ArgumentParser, taint: str) -> None:
    _store_flag(command)
    command.add_argument("--agent", help="the memory namespace (default: $MEMLAB_AGENT, else main)")
    command.add_argument("--taint", help=f"{taint}, {LEVELS} (default: every level)")
    command.add_argument(
        "--floor", metavar=GRADES, help="with --taint: the least trusted grade shown (default untrusted: every grade)"
    )
    command.set_defaults(environment={"db": ("MEMLAB_DB", None), "agent": ("MEMLAB_AGENT", "main")})
    _output_flags(command)
    store_flags(command)


# -- running one ---------------------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    """Check every flag, open the store, read; 1 when ``get`` finds nothing, 2 when a flag or the store is refused."""
    from memlab.errors import MemlabError

    name = f"memlab {args.command}"
    try:
        return _read(args) if args.read is not None else _view(args)
    except (UsageError, MemlabError) as error:
        print(f"{name}: {error}", file=sys.stderr)
        return 2


def _checked(args: argparse.Namespace, flag: str, parse: Callable[[Any], Any]) -> Any:
    """``parse`` of a flag's value; a refusal names the flag (and the variable it came from)."""
    from memlab.errors import MemlabError

    try:
        return from_environment(args, flag, parse)
    except MemlabError as error:
        raise UsageError(f"--{flag}: {error}") from None


def _open(args: argparse.Namespace):
    """The store ``--db`` names, under ``--policy`` and ``--analyzer``; a path that holds nothing is refused (a read
    must not leave a new store behind)."""
    from memlab import policies
    from memlab.search import analyzers
    from memlab.storage.postgres import is_postgres_url
    from memlab.store import MemoryStore

    policy = _checked(args, "policy", policies.resolve)
    analyzer = None if args.analyzer is None else _checked(args, "analyzer", analyzers.resolve)
    where = "MEMLAB_DB" if args.origins.get("db") else "--db"
    if not is_postgres_url(args.db) and not os.path.exists(args.db):
        raise UsageError(f"{where}: no store at {args.db}")
    return _checked(args, "db", lambda db: MemoryStore(db, policy=policy, analyzer=analyzer))


def _read(args: argparse.Namespace) -> int:
    from memlab import arguments, tooldefs, tools
    from memlab.errors import InvalidArgument
    from memlab.labels import Integrity, Label

    taint = _checked(args, "taint", Label.parse)
    floor = _checked(args, "floor", Integrity.parse)
    agent = _checked(args, "agent", arguments.agent)
    try:
        call = tooldefs.bind(args.read, args.arguments(args))
    except InvalidArgument as error:
        raise UsageError(f"{_argument_name(args)}: {error}") from None
    with _open(args) as store:
        session = store.session(taint, agent, floor=floor)
        result = tools.call(session, args.read, call)
        detail(args, f"read as session {session.id} of agent {agent!r}, now at {session.taint}")
    if "error" in result:
        print(f"memlab {args.command}: {result['error']['message']}", file=sys.stderr)
        return 2
    rows = _rows(args.read, result)
    if args.json:
        print_json(result)
    else:
        _print_rows(args, rows, _COLUMNS[args.read])
    if args.read == "memory_get" and not result["found"]:
        print(f"memlab get: {args.key!r} not found", file=sys.stderr)
        return 1
    return 0


def _argument_name(args: argparse.Namespace) -> str:
    """What names a tool argument on the command line: the positional's name or the flag."""
    return {"memory_get": "KEY", "memory_search": "QUERY", "memory_list": "--tag"}[args.read]


_COLUMNS = {
    "memory_get": ["key", "content", "tags", "classification", "integrity", "saved_at"],
    "memory_search": ["key", "score", "snippet", "classification", "integrity", "content"],
    "memory_list": ["key", "content", "tags", "classification", "integrity", "saved_at"],
}


def _rows(tool: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    if tool == "memory_get":
        return [result] if result["found"] else []
    return result["results" if tool == "memory_search" else "memories"]


def _view(args: argparse.Namespace) -> int:
    from memlab import arguments
    from memlab.errors import InvalidArgument
    from memlab.labels import Integrity, Label, reader

    agent = _checked(args, "agent", arguments.agent)
    if args.command == "history":
        try:
            arguments.key(args.key)
        except InvalidArgument as error:
            raise UsageError(f"KEY: {error}") from None
    allowed = None
    if args.taint is not None:
        floor = Integrity.UNTRUSTED if args.floor is None else _checked(args, "floor", Integrity.parse)
        allowed = reader(_checked(args, "taint", Label.parse), floor)
    elif args.floor is not None:
        raise UsageError("--floor: needs --taint (the auditor sees every grade)")
    args.agent = agent
    with _open(args) as store:
        frame = args.view(store, args)
    if allowed is not None:
        frame = frame[[Label.parse(label).can_flow_to(allowed) for label in frame[args.column]]]
    rows = frame.to_dict("records")
    if args.json:
        print_json(frame)
    else:
        _print_rows(args, rows, [str(column) for column in frame.columns])
    return 0


def _print_rows(args: argparse.Namespace, rows: list[dict[str, Any]], columns: list[str]) -> None:
    """The rows as CSV (``--csv``) or a plain-text table: fitted to the terminal on one, whole lines otherwise."""
    import pandas as pd

    from memlab import plaintext

    if args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(_csv_cell(row.get(column)) for column in columns)
        return
    if not rows:
        if args.command != "get":  # get says "not found" itself
            note(args, "nothing to show")
        return
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    print(plaintext.table(pd.DataFrame(rows, columns=columns), width, dates=True))


def _csv_cell(value: Any) -> str:
    """A value as a CSV cell: a list as JSON (``["personal", "work"]``), a missing value empty, others as text."""
    import json

    from memlab.cli_output import jsonable

    value = jsonable(value)
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)
