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
    check = commands.add_parser("check", help="look for leaks in a policy (all shipped policies by default)")
    check.add_argument("--policy", help="one policy to check; exit status 1 if it leaks")
    check.add_argument("--check", default="all", help="noninterference, write_down, shadowing or all (default)")
    check.add_argument("--trials", type=int, default=300, help="random scenarios per check (default 300)")
    check.add_argument("--seed", type=int, default=0, help="seed of the scenario generator (default 0)")
    check.add_argument("--max-ops", type=int, default=8, help="operations per scenario at most (default 8)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from memlab.demo import run

        run(db=args.db, out=sys.stdout)
        return 0
    return _check(args)


def _check(args: argparse.Namespace) -> int:
    from memlab import check
    from memlab.errors import MemlabError

    checks = check.CHECKS if args.check == "all" else tuple(args.check.split(","))
    options = {"trials": args.trials, "seed": args.seed, "max_ops": args.max_ops}
    try:
        if args.policy is None:
            frame = check.table(checks=checks, **options)
            print(frame.assign(steps=frame["steps"].astype("string").fillna("-")).to_string(index=False))
            return 0
        results = check.run_all(args.policy, checks=checks, **options)
    except MemlabError as error:
        print(f"memlab check: {error}", file=sys.stderr)
        return 2
    for result in results.values():
        print(result, end="\n\n")
    return 1 if any(result.leak for result in results.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
