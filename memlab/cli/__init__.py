"""memlab: classification-gated persistent memory for LLM agents — evaluate analyzers on agent memories
(`eval`), measure memory-poisoning attacks against each defence (`poison`), look for leaks in policies (`check`),
serve memory to an agent over MCP (`serve`), load memories in bulk (`import`), check a store's tamper-evident
audit (`verify`), move a single-file store into a store folder (`migrate`), walk through sessions, shadowing and
the audit (`demo`), or serve the classroom lesson in a browser (`classroom`)."""

from __future__ import annotations

import argparse

from memlab import __version__
from memlab.cli import cache, check, classroom, demo, evaluate, poison, serve, stores
from memlab.cli_output import HelpFormatter, defaults_from_environment, exit_codes_text, quiet_on_closed_pipe

__all__ = ["main"]

# Each command's parser, in the order ``memlab --help`` lists them; each sits beside the function that runs it.
_COMMANDS = (
    demo.add_demo,
    check.add_check,
    evaluate.add_eval,
    poison.add_poison,
    serve.add_serve,
    stores.add_import,
    stores.add_migrate,
    stores.add_verify,
    classroom.add_classroom,
    cache.add_cache,
)


@quiet_on_closed_pipe
def main(argv: list[str] | None = None) -> int:
    """Run the ``memlab`` command line; returns the exit status (``cli_output.EXIT_CODES``)."""
    parser = argparse.ArgumentParser(
        prog="memlab",
        description=__doc__,
        epilog=exit_codes_text(),
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memlab {__version__}")
    commands = parser.add_subparsers(dest="command")
    for add in _COMMANDS:
        add(commands)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    defaults_from_environment(args, commands.choices[args.command].error)
    return args.run(args)
