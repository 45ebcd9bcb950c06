"""The ``memlab`` command."""

from __future__ import annotations

import argparse
import sys

from memlab import __version__

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the ``memlab`` command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="memlab", description=__doc__)
    parser.add_argument("--version", action="version", version=f"memlab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="walk through sessions at three levels, shadowing, a delete and the audit")
    demo.add_argument("--db", default=None, help="a database file to keep (default: in memory)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from memlab.demo import run

        run(db=args.db, out=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
