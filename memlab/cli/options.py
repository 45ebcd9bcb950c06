"""What the ``memlab`` commands' parsers share: a command's help and epilog, the ``--json``, ``--policy`` and
``--analyzer`` flags, and the allowed values read from the registries (so a new policy or analyzer shows in the
help without a copy here to update)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Protocol

from memlab import policies
from memlab.cli_output import HelpFormatter, exit_codes_text
from memlab.labels import Integrity
from memlab.levels import Level
from memlab.search import analyzers

__all__ = [
    "Parser",
    "Commands",
    "add_command",
    "json_flag",
    "policy_flag",
    "store_flags",
    "collection_flags",
    "store_path",
    "one_of",
    "positive",
    "LEVELS",
    "GRADES",
]


class Parser(argparse.ArgumentParser):
    """``memlab``'s parser, and each command's (argparse makes a command's parser of its parent's class): one that
    says which arguments it has (``actions``), for the completion scripts."""

    def actions(self) -> list[argparse.Action]:
        """Its arguments, options and positionals, in the order they were added."""
        return list(self._actions)


class Commands(Protocol):
    """What ``ArgumentParser.add_subparsers`` returns: where each command adds its parser."""

    def add_parser(self, name: str, **options: Any) -> argparse.ArgumentParser: ...


LEVELS = (
    "one of " + ", ".join(Level.__members__) + " (any case), or a label with categories such as CONFIDENTIAL:hr,legal; "
    "@untrusted after either makes it untrusted (INTERNAL@untrusted)"
)
GRADES = "{" + ",".join(str(grade) for grade in sorted(Integrity, reverse=True)) + "}"
"""The integrity grades as a flag's help names them, most trusted first: ``{trusted,untrusted}``."""


def add_command(
    commands: Commands, name: str, summary: str, run: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    """The parser of ``memlab <name>``, which ``run`` answers: ``summary`` is its line in ``memlab --help`` and
    its description; the epilog the exit codes. Every command takes ``-q`` and ``-v`` (``cli_output.verbosity``)."""
    parser = commands.add_parser(
        name,
        help=summary,
        description=f"{summary[0].upper()}{summary[1:]}.",
        epilog=exit_codes_text(),
        formatter_class=HelpFormatter,
    )
    parser.set_defaults(run=run)
    said = parser.add_mutually_exclusive_group()
    said.add_argument(
        "-q", "--quiet", action="store_true", help="errors only on standard error: no progress bar, no notes"
    )
    said.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="say on standard error how the result came about (the session read as, memlab's log; -vv: more)",
    )
    return parser


def json_flag(command: argparse.ArgumentParser, what: str) -> None:
    """``--json``: ``what`` as one JSON document, the only thing on standard output."""
    command.add_argument(
        "--json", action="store_true", help=f"print {what} as one JSON document on standard output (nothing else)"
    )


def policy_flag(command: argparse.ArgumentParser, what: str) -> None:
    """``--policy``: one of the registered policies, strict when left out."""
    command.add_argument("--policy", default=None, help=f"{what}, {one_of(policies.names())} (default strict)")


def store_flags(command: argparse.ArgumentParser) -> None:
    """``--policy`` and ``--analyzer``: how a store a command opens is read and searched."""
    policy_flag(command, "a registered policy")
    command.add_argument(
        "--analyzer", default=None, help=f"the search analyzer, {one_of(analyzers.names())} (default porter)"
    )


class _StorePath(argparse.Action):
    """The store named by ``--db`` or, where a command took it so, a positional path: the one ``args.db``; naming
    it twice, differently, is a usage error."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # type: ignore[override]
        if values is None:  # the positional left out
            return
        named = getattr(namespace, "db", None)
        if named is not None and named != values:
            parser.error(f"the store is named twice ({named} and {values}): name it once, with --db or the path alone")
        namespace.db = values


def store_path(command: argparse.ArgumentParser, what: str, *, positional: str | None = None) -> None:
    """``--db``, the store (``MEMLAB_DB`` when left out); ``positional``: the metavar of a positional path the
    command also accepts in its place (``verify PATH``, ``migrate SOURCE TARGET``)."""
    command.add_argument("--db", action=_StorePath, default=None, help=what)
    if positional is not None:
        command.add_argument(
            positional.lower(), nargs="?", action=_StorePath, default=None, metavar=positional, help="the same as --db"
        )


def collection_flags(command: argparse.ArgumentParser) -> None:
    """``--collection`` and ``--locomo``: the collection a lab runs on (``memlab.eval.load_collection``)."""
    command.add_argument(
        "--collection",
        help="a TREC-style folder (docs.jsonl, queries.jsonl, qrels) or a shipped collection: locomo (the default), "
        "locomo-topical, locomo-turns, preferences",
    )
    command.add_argument("--locomo", default=None, help="path of locomo10.json (default: data/locomo10.json)")


def one_of(names: list[str]) -> str:
    """``names`` as a help text lists allowed values."""
    return "one of " + ", ".join(names)


def positive(text: str) -> int:
    """A flag's value as a positive integer; anything else is a usage error naming the value."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {value}")
    return value
