"""``memlab check``: the leak checkers (``memlab.check``) over one policy or every shipped one, random or
bounded-exhaustive."""

from __future__ import annotations

import argparse
import sys

from memlab import cli_output, policies
from memlab.cli.options import Commands, add_command, json_flag, one_of
from memlab.cli_output import Names, print_json, verbosity

__all__ = ["add_check"]


def add_check(commands: Commands) -> None:
    check = add_command(commands, "check", "look for leaks in a policy (all shipped policies by default)", run_check)
    check.add_argument("--policy", help=f"one policy to check, {one_of(policies.names())}; exit status 1 if it leaks")
    check.add_argument(
        "--check",
        default="all",
        type=_hyphens,
        choices=Names(_check_names),
        metavar="CHECKS",
        help="comma-separated, of %(choices)s (default all)",
    )
    check.add_argument("--trials", type=int, default=300, help="random scenarios per check (default 300)")
    check.add_argument("--seed", type=int, default=0, help="seed of the scenario generator (default 0)")
    check.add_argument("--max-ops", type=int, default=8, help="operations per scenario at most (default 8)")
    check.add_argument("--save", metavar="PATH", help="with all policies: also write the table as JSON (docs' source)")
    check.add_argument("--exhaustive", action="store_true", help="every trace up to --depth steps, not random ones")
    check.add_argument("--depth", type=int, default=3, help="with --exhaustive: steps per trace at most (default 3)")
    check.add_argument(
        "--budget", type=float, default=120.0, help="with --exhaustive: seconds it may take (default 120, estimated)"
    )
    check.add_argument(
        "--alphabet",
        default="levels",
        choices=["levels", "compartments"],
        help="with --exhaustive: the default levels PUBLIC, INTERNAL, CONFIDENTIAL, or compartments: PUBLIC and "
        "CONFIDENTIAL with every non-empty set of --categories (default levels)",
    )
    check.add_argument(
        "--categories",
        default=None,
        metavar="NAMES",
        help="with --alphabet compartments: comma-separated category names (default hr,legal)",
    )
    json_flag(check, "the table (as --save writes it), or one policy's results")


def run_check(args: argparse.Namespace) -> int:
    """Run the checks; 1 when one named policy leaks, or over every policy when strict does; 2 on a bad value."""
    from memlab import check
    from memlab.cli_output import progress
    from memlab.errors import InvalidArgument, MemlabError

    checks = check.CHECKS if args.check == "all" else tuple(name.replace("-", "_") for name in args.check.split(","))
    if args.exhaustive:
        return _check_exhaustive(args, checks)
    options = {"trials": args.trials, "seed": args.seed, "max_ops": args.max_ops}
    try:
        chosen = [args.policy] if args.policy is not None else policies.names()
        runs = _applicable(chosen, checks, named=args.check != "all")
        if args.policy is None:
            with progress(runs, "check", unit="check") as bar:
                frame = check.table(checks=checks, notify=lambda *_: bar.update(), **options)
            if args.json:
                print_json({"settings": frame.attrs, "rows": frame})  # the document --save writes
            else:
                print(check.table_text(frame))
            if args.save:
                check.save_table(frame, args.save)
                if verbosity(args) >= 0:
                    print(f"wrote {args.save}", file=sys.stderr)  # stdout stays the table
            return _expected_to_hold(frame)
        if args.save:
            raise InvalidArgument("--save writes the table over all policies: leave out --policy")
        with progress(runs, f"check {args.policy}", unit="check") as bar:
            results = check.run_all(args.policy, checks=checks, notify=lambda *_: bar.update(), **options)
    except MemlabError as error:
        print(f"memlab check: {error}", file=sys.stderr)
        return 2
    if args.json:
        print_json({"policy": args.policy, "results": list(results.values())})
    else:
        for result in results.values():
            print(result, end="\n\n")
    return 1 if any(result.leak for result in results.values()) else 0


def _applicable(chosen: list[str], checks, *, named: bool) -> int:
    """How many (policy, check) runs there are: a check that cannot examine a policy (``Check.inapplicable``) is
    left out, said on stderr; an error when the one policy asked for cannot be examined by a check named."""
    from memlab.check.checks import CHECKS
    from memlab.errors import InvalidArgument

    runs, left_out = 0, []
    for name in chosen:
        for check_name in checks:
            why = CHECKS.get(check_name).inapplicable(policies.resolve(name))
            if not why:
                runs += 1
            elif named and len(chosen) == 1:
                raise InvalidArgument(f"check {_hyphens(check_name)} cannot examine policy {name!r}: {why}")
            else:
                left_out.append(f"{_hyphens(check_name)} under {name}")
    if left_out and not cli_output.QUIET:
        print(f"memlab check: left out (no trusted floor under the policy): {', '.join(left_out)}", file=sys.stderr)
    return runs


def _expected_to_hold(frame) -> int:
    """1 when the policy expected to hold (the default, ``strict``) leaks in the table, else 0: the variants model
    mistakes, and their leaks are what the table is for."""
    sound = policies.resolve(None).name
    leaks = frame[(frame["policy"] == sound) & (frame["verdict"] == "LEAK")]
    if leaks.empty:
        return 0
    print(f"memlab check: {sound}, the policy expected to hold, leaks in {', '.join(leaks['check'])}", file=sys.stderr)
    return 1


def _check_names() -> list[str]:
    from memlab.check.checks import CHECKS

    return [*(_hyphens(name) for name in CHECKS), "all"]


def _hyphens(names: str) -> str:
    """Check names as policy names are spelled (``write-down``); ``write_down``, the checkers' own spelling, is
    accepted too."""
    return names.replace("_", "-")


def _check_exhaustive(args: argparse.Namespace, checks: tuple[str, ...]) -> int:
    from memlab import check
    from memlab.errors import InvalidArgument, MemlabError
    from memlab.policies import names

    try:
        if args.save:
            raise InvalidArgument("--save writes the random checks' table: leave out --exhaustive")
        alphabet = _alphabet(args)
        chosen = [args.policy] if args.policy else names()
        if alphabet.over_labels and not args.policy:
            left_out = [name for name in chosen if not check.keeps_compartments(name)]
            chosen = [name for name in chosen if name not in left_out]
            if left_out and not cli_output.QUIET:
                print(f"memlab check: left out (no compartments): {', '.join(left_out)}", file=sys.stderr)
        _applicable(chosen, checks, named=args.check != "all")
        results = check.exhaustive_all(chosen, checks=checks, depth=args.depth, alphabet=alphabet, budget=args.budget)
    except MemlabError as error:
        print(f"memlab check: {error}", file=sys.stderr)
        return 2
    if args.json:
        print_json([result.as_dict() for result in results])
    else:
        for result in results:
            print(result, end="\n\n")
    # As for the random checks: one named policy fails on any leak; over every policy only strict's leak fails.
    sound = policies.resolve(None).name
    return 1 if any(result.leak and (args.policy or result.policy == sound) for result in results) else 0


def _alphabet(args: argparse.Namespace):
    """The exhaustive checker's alphabet that ``--alphabet`` and ``--categories`` name."""
    from memlab import check
    from memlab.errors import InvalidArgument

    if args.alphabet == "levels":
        if args.categories is not None:
            raise InvalidArgument("--categories names the compartments alphabet's: add --alphabet compartments")
        return check.Alphabet()
    if args.categories is None:
        return check.Alphabet.compartments()
    return check.Alphabet.compartments([name.strip() for name in args.categories.split(",") if name.strip()])
