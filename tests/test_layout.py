"""memlab.storage.layout: what a new path becomes, and each agent's file name in a store folder."""

from __future__ import annotations

import re

import pytest

from memlab.storage.layout import agent_file, new_layout


@pytest.mark.parametrize(
    ("path", "layout"),
    [
        ("notes.db", "file"),
        ("NOTES.SQLITE", "file"),
        ("x/y/notes.sqlite3", "file"),
        ("memories", "folder"),
        ("notes.db.d", "folder"),
        ("archive.tar", "folder"),
        (".db", "folder"),  # a hidden name, no suffix
    ],
)
def test_new_layout_goes_by_the_suffix_in_any_case(path, layout):
    assert new_layout(path) == layout


@pytest.mark.parametrize("agent", ["main", "../../etc/passwd", "Main", "社員", "a/b", ""])
def test_an_agent_file_is_a_hash_under_two_hex_digits_of_fan_out(agent):
    # Guards: layout.agent_file using the agent's name in the path (a name with `/` or `..` escaping agents/).
    name = agent_file(agent)
    assert re.fullmatch(r"([0-9a-f]{2})/\1[0-9a-f]{30}\.db", name)


def test_agent_files_are_stable_and_tell_case_apart():
    assert agent_file("main") == "0d/0d6e4079e36703ebd37c00722f5891d2.db"
    assert agent_file("Main") != agent_file("main")
