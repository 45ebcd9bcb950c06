"""memlab: classification-gated persistent memory for LLM agents — evaluate analyzers on agent memories
(`eval`), measure memory-poisoning attacks against each defence (`poison`), look for leaks in policies (`check`),
serve memory to an agent over MCP (`serve`), load memories in bulk (`import`), read what a store holds through a
session (`get`, `search`, `list`) or as its auditor (`history`, `audit`), check a store's tamper-evident audit
(`verify`), move a single-file store into a store folder (`migrate`), walk through sessions, shadowing and the
audit (`demo`), or serve the classroom lesson in a browser (`classroom`)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator

from memlab import __version__, cli_output
from memlab.cli import cache, check, classroom, completion, demo, evaluate, poison, reads, serve, stores
from memlab.cli.options import Parser
from memlab.cli_output import (
    HelpFormatter,
    defaults_from_environment,
    exit_codes_text,
    quiet_on_closed_pipe,
    verbosity,
)

__all__ = ["main"]

# Each command's parser, in the order ``memlab --help`` lists them; each sits beside the function that runs it.
_COMMANDS = (
    demo.add_demo,
    check.add_check,
    evaluate.add_eval,
    poison.add_poison,
    serve.add_serve,
    stores.add_import,
    reads.add_get,
    reads.add_search,
    reads.add_list,
    reads.add_history,
    reads.add_audit,
    stores.add_migrate,
    stores.add_verify,
    classroom.add_classroom,
    cache.add_cache,
)


@quiet_on_closed_pipe
def main(argv: list[str] | None = None) -> int:
    """Run the ``memlab`` command line; returns the exit status (``cli_output.EXIT_CODES``)."""
    parser = Parser(
        prog="memlab",
        description=__doc__,
        epilog=exit_codes_text(),
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memlab {__version__}")
    parser.add_argument(
        "--print-completion",
        choices=completion.SHELLS,
        metavar="{" + ",".join(completion.SHELLS) + "}",
        help="print the shell's completion script for memlab and exit (memlab.cli.completion says where it goes)",
    )
    commands = parser.add_subparsers(dest="command")
    for add in _COMMANDS:
        add(commands)
    args = parser.parse_args(argv)
    if args.print_completion is not None:
        print(completion.script(parser, commands.choices, args.print_completion), end="")
        return 0
    if args.command is None:
        parser.print_help()
        return 0
    defaults_from_environment(args, commands.choices[args.command].error)
    with _said_as_asked(args):
        return args.run(args)


@contextlib.contextmanager
def _said_as_asked(args: argparse.Namespace) -> Iterator[None]:
    """``-q``: no progress bar, no notes; ``-v``: memlab's log on standard error (INFO; ``-vv``: DEBUG), for this
    run only (``main`` may run again in the same process: a notebook, a test)."""
    said = verbosity(args)
    cli_output.QUIET = said < 0
    log = logging.getLogger("memlab")
    handler = None
    level = log.level
    if said > 0:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(f"memlab {args.command}: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO if said == 1 else logging.DEBUG)
    try:
        yield
    finally:
        cli_output.QUIET = False
        if handler is not None:
            log.removeHandler(handler)
            log.setLevel(level)
