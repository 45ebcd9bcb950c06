"""``memlab demo``: the walk-through of sessions, shadowing, a delete, the audit and memory poisoning."""

from __future__ import annotations

import argparse
import io
import sys

from memlab.cli.options import Commands, add_command, json_flag

__all__ = ["add_demo"]


def add_demo(commands: Commands) -> None:
    demo = add_command(
        commands,
        "demo",
        "walk through sessions at three levels, shadowing, a delete, the audit and memory poisoning",
        run_demo,
    )
    demo.add_argument(
        "--db",
        default=None,
        help="keep the demo's store at a new or empty path (default: in memory); one holding anything is refused",
    )
    json_flag(demo, "the store's audit trail and taint events")


def run_demo(args: argparse.Namespace) -> int:
    """Print the walk-through (or, with ``--json``, the audit and taint events); 2 when ``--db`` is refused."""
    import shutil

    from memlab.cli_output import print_json
    from memlab.demo import run
    from memlab.errors import MemlabError

    try:
        store = run(
            db=args.db,
            out=io.StringIO() if args.json else sys.stdout,
            width=shutil.get_terminal_size().columns,
        )
    except MemlabError as error:
        print(f"memlab demo: {error}", file=sys.stderr)
        return 2
    if args.json:
        print_json({"audit": store.audit(), "taint_events": store.taint_events()})
    return 0
