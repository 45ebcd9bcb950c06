"""memlab.cli.options: what the commands' parsers share — a command's parser, the shared flags, positive values."""

from __future__ import annotations

import argparse

import pytest

from memlab import policies
from memlab.cli.options import LEVELS, add_command, json_flag, one_of, positive, store_flags
from memlab.cli_output import EXIT_CODES
from memlab.search import analyzers


def parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """``memlab`` with one command, ``thing``: the top parser and the command's."""
    top = argparse.ArgumentParser(prog="memlab")
    command = add_command(top.add_subparsers(dest="command"), "thing", "do a thing to a store", lambda args: 7)
    return top, command


def test_a_command_runs_its_function_and_its_help_says_what_it_does():
    top, command = parser()
    json_flag(command, "the result")
    args = top.parse_args(["thing", "--json"])
    assert args.run(args) == 7 and args.json is True
    help_text = command.format_help()
    assert "Do a thing to a store." in help_text
    assert all(f"  {code}" in help_text for code in EXIT_CODES)


def test_the_store_flags_list_the_registered_names():
    # Guards: cli.options.store_flags writing a fixed list (a newly registered policy then missing from the help).
    top, command = parser()
    store_flags(command)
    help_text = " ".join(command.format_help().split())
    assert all(name in help_text for name in policies.names())
    assert all(name in help_text for name in analyzers.names())
    assert top.parse_args(["thing"]).policy is None


@pytest.mark.parametrize(("text", "value"), [("1", 1), ("1000", 1000)])
def test_positive_takes_a_positive_integer(text, value):
    assert positive(text) == value


@pytest.mark.parametrize("text", ["0", "-3"])
def test_positive_refuses_anything_else(text):
    with pytest.raises(argparse.ArgumentTypeError, match=f"not {text}"):
        positive(text)


def test_one_of_and_the_levels():
    assert one_of(["a", "b"]) == "one of a, b"
    assert LEVELS.startswith("one of PUBLIC, INTERNAL, CONFIDENTIAL, RESTRICTED")
