"""The commands on a store named by its path: ``memlab import`` loads memories into it (``memlab.bulk``),
``memlab migrate`` copies a single-file store into a new folder, ``memlab verify`` recomputes its audit chain."""

from __future__ import annotations

import argparse
import sys

from memlab.cli.options import (
    LEVELS,
    Commands,
    add_command,
    json_flag,
    policy_flag,
    positive,
    store_flags,
    store_path,
)
from memlab.cli_output import from_environment, jsonable, note, print_json

__all__ = ["add_import", "add_migrate", "add_verify"]


def add_import(commands: Commands) -> None:
    load = add_command(
        commands, "import", "bulk-load memories from a JSON Lines file into one agent at one taint", run_import
    )
    load.add_argument(
        "file", help='a .jsonl file, or - for standard input: one {"key": ..., "content": ..., "tags": [...]} per line'
    )
    load.add_argument(
        "--db",
        help="the store: a path (if new, a file when it ends in .db, .sqlite or .sqlite3, else a folder) or a "
        "postgresql:// URL (default: $MEMLAB_DB)",
    )
    load.set_defaults(environment={"db": ("MEMLAB_DB", None)})
    json_flag(load, "what was imported, or the report of the bad records")
    load.add_argument("--agent", default="main", help="the memory namespace (default main)")
    load.add_argument(
        "--taint",
        required=True,
        help=f"the importing session's taint: every memory's level, {LEVELS} (no default: say PUBLIC)",
    )
    load.add_argument("--batch-size", type=positive, default=1_000, help="records per transaction (default 1000)")
    again = load.add_mutually_exclusive_group()
    again.add_argument(
        "--replace",
        dest="mode",
        action="store_const",
        const="replace",
        help="a key already in the view gets a new version only where the record differs (content or tags)",
    )
    again.add_argument(
        "--ignore",
        dest="mode",
        action="store_const",
        const="ignore",
        help="skip every key already in the view (default without either: refuse the import, nothing written)",
    )
    store_flags(load)


def run_import(args: argparse.Namespace) -> int:
    """Check the file whole, then load it in batches; 1 when a record is bad (nothing written), 2 when refused."""
    from memlab import bulk

    return bulk.run_import(args)


def add_migrate(commands: Commands) -> None:
    move = add_command(
        commands, "migrate", "copy a single-file store into a new store folder (one file per agent)", run_migrate
    )
    store_path(move, "the store file to copy", positional="SOURCE")
    move.add_argument("target", metavar="TARGET", help="the new store folder (must not exist)")
    policy_flag(move, "the policy the store was built under")


def run_migrate(args: argparse.Namespace) -> int:
    """Copy the file into the new folder, renamed into place only once complete; 2 when either is refused."""
    from memlab.errors import InvalidArgument, MemlabError
    from memlab.policies import resolve
    from memlab.storage.migrate import migrate

    try:
        if args.db is None or args.target is None:
            raise InvalidArgument("name the store file (--db SOURCE, or SOURCE) and the new folder (TARGET)")
        counts = migrate(
            args.db,
            args.target,
            rules=resolve(args.policy).view_rules(),
            notify=lambda message: note(args, message),  # -q: not said
        )
    except MemlabError as error:
        print(f"memlab migrate: {error}", file=sys.stderr)
        return 2
    print(f"migrated {args.db} to {args.target}: " + ", ".join(f"{n:,} {name}" for name, n in counts.items()))
    return 0


def add_verify(commands: Commands) -> None:
    check_chain = add_command(
        commands, "verify", "recompute a store's audit chain; exit status 1 if broken", run_verify
    )
    store_path(
        check_chain,
        "the store (folder, file or postgresql:// URL of its owner; default: $MEMLAB_DB); it is only read",
        positional="PATH",
    )
    check_chain.set_defaults(environment={"db": ("MEMLAB_DB", None)})
    json_flag(check_chain, "the verification: ok, audit rows, versions, head, problems")
    policy_flag(check_chain, "the policy the store was built under")


def run_verify(args: argparse.Namespace) -> int:
    """Print the verification; 1 when the store is broken, 2 when it cannot be read as a store."""
    from memlab.errors import MemlabError
    from memlab.policies import resolve
    from memlab.storage import verify_path

    try:
        result = from_environment(args, "db", lambda path: verify_path(path, resolve(args.policy).view_rules()))
    except MemlabError as error:
        print(f"memlab verify: {error}", file=sys.stderr)
        return 2
    if args.json:
        print_json({"ok": result.ok, **jsonable(result)})
    else:
        print(result)
    return 0 if result.ok else 1
